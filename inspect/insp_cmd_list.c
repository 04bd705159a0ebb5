/*
** insp_cmd_list.c — `inspect list` (the snapshots in a file) and
** `inspect header-size` (Erlang's block_header_size).
*/
#include "insp_int.h"

#include <stdlib.h>

/* ----------------------------------------------------------------- list -- */

static const struct rd_option list_options[] = {
	RD_OPTION_SNAPSHOT("only snapshot N"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec list_spec = {
	"list", "[options] DB",
	"List the snapshots stored in DB, oldest first: number, content ('map': the\n"
	"live blocks and the status; 'status': the status only), what triggered it,\n"
	"the process, when it was taken, and how many blocks and bytes were live.\n"
	"With --snapshot N, only that one.\n",
	list_options, 1, 1,
};

static const struct rd_col list_cols[] = {
	{"id", "no", RD_K_INT, 0},
	{"content", "content", RD_K_STR, 0},
	{"trigger", "trigger", RD_K_STR, 0},
	{"pid", "pid", RD_K_INT, 0},
	{"ppid", "ppid", RD_K_INT, RD_C_DATA_ONLY},
	{"mode", "mode", RD_K_STR, 0},
	{"backend", "backend", RD_K_STR, RD_C_DATA_ONLY},
	{"header_bytes", "header", RD_K_INT, RD_C_DATA_ONLY},
	{"time_ms", "time", RD_K_TIME, 0},
	{"elapsed_ms", "elapsed", RD_K_DUR, 0},
	{"seq", "allocations", RD_K_INT, RD_C_DATA_ONLY},
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"exe", "exe", RD_K_STR, 0},
	{"cmdline", "command line", RD_K_STR, RD_C_DATA_ONLY},
};

static void list_row(rd_table_t *t, const struct rd_snap *s)
{
	rd_row(t);
	rd_put_int(t, s->id);
	rd_put_str(t, s->content);
	rd_put_str(t, s->trigger);
	rd_put_int(t, s->pid);
	rd_put_int(t, s->ppid);
	rd_put_str(t, s->mode);
	rd_put_str(t, s->backend);
	rd_put_int(t, s->header_size);
	rd_put_int(t, s->time_ns);
	rd_put_int(t, s->elapsed_ns);
	rd_put_int(t, s->seq);
	rd_put_int(t, s->blocks);
	rd_put_uint(t, (uint64_t)s->bytes);
	rd_put_str(t, s->exe);
	rd_put_str(t, s->cmdline);
}

int insp_cmd_list(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&list_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	rd_db_t *db;
	if ((r = rd_db_open(a.pos[0], o, &db)))
		return r;
	if (a.snapshot && (r = rd_db_select(db, a.snapshot, RD_NEED_ANY))) {
		rd_db_close(db);
		return r;
	}
	struct rd_snap *v;
	size_t n;
	if (!(r = rd_db_list(db, &v, &n))) {
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_table_t *t = rd_doc_table(d, "snapshots", list_cols,
						 sizeof list_cols / sizeof list_cols[0], 0);
		rd_table_title(t, "%s: %zu snapshot%s", a.pos[0], n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			if (!a.snapshot || v[i].id == a.snapshot)
				list_row(t, &v[i]);
		r = rd_doc_print(d);
		rd_doc_free(d);
		free(v);
	}
	rd_db_close(db);
	return r;
}

/* ---------------------------------------------------------- header-size -- */

static const struct rd_option header_options[] = {
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec header_spec = {
	"header-size", "[options] DB",
	"Print the size in bytes of the header libmeminst put in front of every\n"
	"block in the process that wrote the snapshot (16 in mis mode, 32 in mim\n"
	"mode in this version).  Sizes in snapshots never include it.\n",
	header_options, 1, 1,
};

static const struct rd_col header_cols[] = {
	{"header_bytes", "header size", RD_K_INT, 0},
	{"mode", "mode", RD_K_STR, 0},
};

int insp_cmd_header_size(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&header_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	if (!(r = rd_session_open(&s, o, &a, a.pos[0], RD_NEED_ANY))) {
		const struct rd_snap *snap = rd_db_snap(s.db);
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], snap);
		rd_table_t *t = rd_doc_table(d, "header", header_cols, 2, RD_T_SINGLE);
		rd_row(t);
		rd_put_int(t, snap->header_size);
		rd_put_str(t, snap->mode);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}
