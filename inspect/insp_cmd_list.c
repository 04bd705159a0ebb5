/*
** insp_cmd_list.c — `inspect list` (the snapshots in a file) and
** `inspect header-size` (Erlang's block_header_size).
*/
#include "insp_int.h"

#include <stdlib.h>

/* ----------------------------------------------------------------- list -- */

static const struct insp_option list_options[] = {
	INSP_OPTION_SNAPSHOT("only snapshot N"),
	INSP_OPTIONS_FORMAT,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec list_spec = {
	"list", "[options] DB",
	"List the snapshots stored in DB, oldest first: number, content ('map': the\n"
	"live blocks and the status; 'status': the status only), what triggered it,\n"
	"the process, when it was taken, and how many blocks and bytes were live.\n"
	"With --snapshot N, only that one.\n",
	list_options, 1, 1,
};

static const struct insp_col list_cols[] = {
	{"id", "no", INSP_K_INT, 0},
	{"content", "content", INSP_K_STR, 0},
	{"trigger", "trigger", INSP_K_STR, 0},
	{"pid", "pid", INSP_K_INT, 0},
	{"ppid", "ppid", INSP_K_INT, INSP_C_DATA_ONLY},
	{"mode", "mode", INSP_K_STR, 0},
	{"backend", "backend", INSP_K_STR, INSP_C_DATA_ONLY},
	{"header_bytes", "header", INSP_K_INT, INSP_C_DATA_ONLY},
	{"time_ms", "time", INSP_K_TIME, 0},
	{"elapsed_ms", "elapsed", INSP_K_DUR, 0},
	{"seq", "allocations", INSP_K_INT, INSP_C_DATA_ONLY},
	{"blocks", "blocks", INSP_K_INT, 0},
	{"bytes", "bytes", INSP_K_SIZE, 0},
	{"exe", "exe", INSP_K_STR, 0},
	{"cmdline", "command line", INSP_K_STR, INSP_C_DATA_ONLY},
};

static void list_row(insp_table_t *t, const struct insp_snap *s)
{
	insp_row(t);
	insp_put_int(t, s->id);
	insp_put_str(t, s->content);
	insp_put_str(t, s->trigger);
	insp_put_int(t, s->pid);
	insp_put_int(t, s->ppid);
	insp_put_str(t, s->mode);
	insp_put_str(t, s->backend);
	insp_put_int(t, s->header_size);
	insp_put_int(t, s->time_ns);
	insp_put_int(t, s->elapsed_ns);
	insp_put_int(t, s->seq);
	insp_put_int(t, s->blocks);
	insp_put_uint(t, (uint64_t)s->bytes);
	insp_put_str(t, s->exe);
	insp_put_str(t, s->cmdline);
}

int insp_cmd_list(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&list_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	insp_db_t *db;
	if ((r = insp_db_open(a.pos[0], o, &db)))
		return r;
	if (a.snapshot && (r = insp_db_select(db, a.snapshot, INSP_NEED_ANY))) {
		insp_db_close(db);
		return r;
	}
	struct insp_snap *v;
	size_t n;
	if (!(r = insp_db_list(db, &v, &n))) {
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_table_t *t = insp_doc_table(d, "snapshots", list_cols,
						 sizeof list_cols / sizeof list_cols[0], 0);
		insp_table_title(t, "%s: %zu snapshot%s", a.pos[0], n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			if (!a.snapshot || v[i].id == a.snapshot)
				list_row(t, &v[i]);
		r = insp_doc_print(d);
		insp_doc_free(d);
		free(v);
	}
	insp_db_close(db);
	return r;
}

/* ---------------------------------------------------------- header-size -- */

static const struct insp_option header_options[] = {
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FORMAT,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec header_spec = {
	"header-size", "[options] DB",
	"Print the size in bytes of the header libmeminst put in front of every\n"
	"block in the process that wrote the snapshot (16 in mis mode, 32 in mim\n"
	"mode in this version).  Sizes in snapshots never include it.\n",
	header_options, 1, 1,
};

static const struct insp_col header_cols[] = {
	{"header_bytes", "header size", INSP_K_INT, 0},
	{"mode", "mode", INSP_K_STR, 0},
};

int insp_cmd_header_size(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&header_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_session s;
	if (!(r = insp_session_open(&s, o, &a, a.pos[0], INSP_NEED_ANY))) {
		const struct insp_snap *snap = insp_db_snap(s.db);
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_doc_snapshot(d, "snapshot", a.pos[0], snap);
		insp_table_t *t = insp_doc_table(d, "header", header_cols, 2, INSP_T_SINGLE);
		insp_row(t);
		insp_put_int(t, snap->header_size);
		insp_put_str(t, snap->mode);
		r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}
