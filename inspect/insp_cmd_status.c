/*
** insp_cmd_status.c — `inspect status` (Erlang's memory_status and
** read_memory_status): for total, allocators, classes, types and threads,
** current, max since last read and max ever, of sizes and of blocks, as
** stored in a snapshot or, with --pid, asked of a live process.
**
** For a live process the status goes through a private temporary database
** (mkstemp, so mode 0600 in $TMPDIR or /tmp): the process writes a 'status'
** snapshot into it, we print it and remove the file.
*/
#include "insp_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static const char *const status_kinds[] = {"total", "allocators", "classes", "types", "threads"};

static const struct rd_option status_options[] = {
	{"total", 0, RD_OT_FLAG, NULL, "the totals", RD_ID_KIND + RD_KIND_TOTAL, 0, 0, NULL},
	{"allocators", 0, RD_OT_FLAG, NULL, "per allocator", RD_ID_KIND + RD_KIND_ALLOCATORS, 0, 0, NULL},
	{"classes", 0, RD_OT_FLAG, NULL, "per class", RD_ID_KIND + RD_KIND_CLASSES, 0, 0, NULL},
	{"types", 0, RD_OT_FLAG, NULL, "per type", RD_ID_KIND + RD_KIND_TYPES, 0, 0, NULL},
	{"threads", 0, RD_OT_FLAG, NULL, "per thread", RD_ID_KIND + RD_KIND_THREADS, 0, 0, NULL},
	RD_OPTION_PID("ask the live process PID (started with\n"
			"MEMINST=mim,control=on) instead of reading a file;\n"
			"this counts as a read: it resets max-since-last"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec status_spec = {
	"status", "[options] DB | --pid PID",
	"The status counters: for each entry, sizes (bytes asked for, headers not\n"
	"counted) and blocks, each as current, the maximum since the last read of\n"
	"that kind, and the maximum ever, of the latest snapshot that has them;\n"
	"then the events since the start: calls (blocks allocated), bytes\n"
	"allocated, frees, temporary blocks and reallocs.\n"
	"All kinds unless some are chosen.\n",
	status_options, 0, 1,
};

/* The types' table has two more columns: where each automatic type's site
** is, as top has it; the other kinds stop before them.  Narrow text leaves
** out the maxima since the last read and the rarer events first (SPARE),
** so that the location still fits 100 columns. */
static const struct rd_col status_cols[] = {
	{"id", "no", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"bytes_current", "size", RD_K_SIZE, 0},
	{"bytes_max_since_last", "max-since", RD_K_SIZE, RD_C_SPARE},
	{"bytes_max_ever", "max-ever", RD_K_SIZE, 0},
	{"blocks_current", "blocks", RD_K_INT, 0},
	{"blocks_max_since_last", "max-since", RD_K_INT, RD_C_SPARE},
	{"blocks_max_ever", "max-ever", RD_K_INT, 0},
	/* events (null in files from before them: the columns then go) */
	{"calls", "calls", RD_K_INT, RD_C_OPTIONAL},
	{"allocated_bytes", "allocated", RD_K_SIZE, RD_C_OPTIONAL},
	{"frees", "frees", RD_K_INT, RD_C_OPTIONAL | RD_C_SPARE},
	{"temporary", "temporary", RD_K_INT, RD_C_OPTIONAL | RD_C_SPARE},
	{"reallocs", "reallocs", RD_K_INT, RD_C_OPTIONAL | RD_C_SPARE},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "inlined", RD_K_STR, RD_C_DATA_ONLY},
};
#define STATUS_TYPE_COLS 2

static const char *status_name(struct rd_session *s, int kind, int64_t id, const char **where)
{
	switch (kind) {
	case RD_KIND_TOTAL: return "total";
	case RD_KIND_ALLOCATORS: return rd_tag_name(s->db, &s->tags, RD_TAG_ALLOCATOR, id);
	case RD_KIND_CLASSES: return rd_tag_name(s->db, &s->tags, RD_TAG_CLASS, id);
	case RD_KIND_TYPES: return rd_type_label(s->db, &s->tags, id, where);
	default: return rd_tag_name(s->db, &s->tags, RD_TAG_THREAD, id);
	}
}

static int status_kind(rd_doc_t *d, struct rd_session *s, int kind)
{
	bool events = rd_events_stored(s->db);
	sqlite3_stmt *st = rd_db_prepare(s->db, events ?
		"SELECT s.id, sizes_current, sizes_max_since_last, sizes_max_ever, blocks_current, "
		"blocks_max_since_last, blocks_max_ever, coalesce(e.calls, 0), coalesce(e.allocated, 0), "
		"coalesce(e.frees, 0), coalesce(e.temporary, 0), coalesce(e.reallocs, 0), "
		"(SELECT count(*) FROM status_event WHERE snapshot = ?1) "
		"FROM status s LEFT JOIN status_event e ON e.snapshot = ?1 AND e.kind = s.kind "
		"AND e.id = s.id WHERE s.snapshot = ?1 AND s.kind = ?2 ORDER BY s.id" :
		"SELECT id, sizes_current, sizes_max_since_last, sizes_max_ever, blocks_current, "
		"blocks_max_since_last, blocks_max_ever, 0, 0, 0, 0, 0, 0 FROM status WHERE snapshot = ?1 "
		"AND kind = ?2 ORDER BY id");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(s->db)->id);
	sqlite3_bind_text(st, 2, status_kinds[kind], -1, SQLITE_STATIC);
	bool types = kind == RD_KIND_TYPES;
	rd_table_t *t = rd_doc_table(d, status_kinds[kind], status_cols,
					 NCOLS(status_cols) - (types ? 0 : STATUS_TYPE_COLS), 0);
	rd_table_title(t, "status: %s", status_kinds[kind]);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *where = NULL;
		rd_row(t);
		rd_put_int(t, id);
		rd_put_str(t, status_name(s, kind, id, &where));
		for (int c = 1; c <= 6; c++)
			rd_put_int(t, sqlite3_column_int64(st, c));
		/* a snapshot without event rows (an older writer's, in a file
		** that has them since): no event cells */
		bool has = sqlite3_column_int64(st, 12) > 0;
		for (int c = 7; c <= 11; c++)
			if (has)
				rd_put_int(t, sqlite3_column_int64(st, c));
			else
				rd_put_null(t);
		if (types) {
			rd_put_str(t, where);
			rd_put_str(t, rd_type_chain(s->db, &s->tags, id));
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(s->db, "cannot read the status table");
}

/* Print the status of snapshot `snap` (0: the latest) of the file. */
static int status_show(const struct rd_opts *o, struct rd_args *a, const char *path,
		       const char *label)
{
	struct rd_session s;
	int r = rd_session_open(&s, o, a, path, RD_NEED_STATUS);
	if (!r)
		r = rd_session_tags(&s, a);
	if (!r) {
		rd_doc_t *d = rd_doc_new(o, a);
		rd_doc_snapshot(d, "snapshot", label, rd_db_snap(s.db));
		unsigned kinds = a->kinds ? a->kinds : (1u << RD_KIND_COUNT) - 1;
		for (int k = 0; k < RD_KIND_COUNT && !r; k++)
			if (kinds & (1u << k))
				r = status_kind(d, &s, k);
		if (!r && !a->pid) /* a file: how its process ended, if it did */
			r = rd_end_table(d, s.db, rd_db_snap(s.db)->pid);
		if (!r)
			r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}

static int status_live(const struct rd_opts *o, struct rd_args *a)
{
	char path[PATH_MAX];
	int r = insp_control_tempfile(o, path, sizeof path);
	if (r)
		return r;
	int64_t id = 0;
	r = insp_control_snapshot(o, a->pid, path, "status", &id);
	if (!r) {
		char label[64];
		snprintf(label, sizeof label, "process %lld", (long long)a->pid);
		a->snapshot = id;
		r = status_show(o, a, path, label);
	}
	insp_control_tempfile_remove(path);
	return r;
}

int insp_cmd_status(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&status_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	if (a.pid && a.npos)
		return rd_usage_error(o, "status", "give a database or --pid, not both");
	if (a.pid && a.snapshot)
		return rd_usage_error(o, "status", "--snapshot does not apply to --pid");
	if (a.pid)
		return status_live(o, &a);
	if (!a.npos)
		return rd_usage_error(o, "status", "missing argument: a database or --pid PID");
	return status_show(o, &a, a.pos[0], a.pos[0]);
}
