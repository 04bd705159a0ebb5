/*
** prof_leaks.c — the leak check in `inspect report`: memcheck's LEAK
** SUMMARY lines ("definitely lost: N bytes in M blocks", …, suppressed)
** and the definitely lost sites with the indirectly lost bytes hanging
** from them, read and added up by the reader (rd_leak.c) with its default
** suppressions, from the process's latest checked snapshot (in mim: the
** exit one).  Nothing when the process has no leak check.
*/
#include "prof_int.h"

#include <stdlib.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static const char *const leak_names[] = {MEMINST_LEAK_CLASS_NAMES};

static const struct rd_col leak_sum_cols[] = {
	{"kind", "", RD_K_STR, RD_C_DATA_ONLY},
	{"bytes", "", RD_K_INT, RD_C_DATA_ONLY},
	{"blocks", "", RD_K_INT, RD_C_DATA_ONLY},
	{"line", "", RD_K_STR, RD_C_TEXT_ONLY},
};

static const struct rd_col leak_site_cols[] = {
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"indirect_bytes", "+ indirect", RD_K_SIZE, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"type", "", RD_K_INT, RD_C_DATA_ONLY},
	{"site", "allocated at", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
};

static void leak_summary_rows(rd_doc_t *d, const struct rd_leak_sum *m, int64_t snap)
{
	static const int order[] = {RD_LEAK_DEFINITE, RD_LEAK_INDIRECT, RD_LEAK_POSSIBLE, RD_LEAK_REACHABLE,
				    RD_LEAK_SUPPRESSED};
	rd_table_t *t = rd_doc_table(d, "leaks", leak_sum_cols, NCOLS(leak_sum_cols), 0);
	rd_table_title(t, "leak summary (memcheck's classes, snapshot %lld):", (long long)snap);
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		int c = order[i];
		const char *kind = c < RD_LEAK_CLASSES ? leak_names[c] : "suppressed";
		char line[160];
		snprintf(line, sizeof line, "%15s: %llu bytes in %llu blocks", kind, (unsigned long long)m->bytes[c],
			 (unsigned long long)m->blocks[c]);
		rd_row(t);
		rd_put_const(t, kind);
		rd_put_uint(t, m->bytes[c]);
		rd_put_uint(t, m->blocks[c]);
		rd_put_str(t, line);
	}
}

int prof_report_leaks(rd_doc_t *d, struct rd_session *s, const struct rd_args *a, int64_t pid, size_t limit)
{
	int64_t snap;
	int r = rd_leak_latest(s->db, pid, &snap);
	if (r || !snap)
		return r;
	struct rd_leak_check c;
	struct rd_leak_sum m;
	struct rd_leak_suppress sup = {NULL, 0, false};
	if (!(r = rd_leak_read(s, rd_db_opts(s->db), a, snap, &sup, &c, &m))) {
		leak_summary_rows(d, &m, snap);
		size_t n;
		struct rd_leak_site *v = rd_leak_sites(&m, RD_LEAK_DEFINITE, &n);
		rd_table_t *t = rd_doc_table(d, "leak_sites", leak_site_cols, NCOLS(leak_site_cols), 0);
		rd_table_title(t, "definitely lost, by site (inspect leaks lists every class):");
		for (size_t i = 0; i < n && i < limit; i++) {
			const char *where = NULL;
			rd_row(t);
			rd_put_uint(t, v[i].bytes);
			rd_put_uint(t, v[i].ind_bytes);
			rd_put_uint(t, v[i].blocks);
			rd_put_int(t, v[i].type);
			rd_put_str(t, rd_type_label(s->db, &s->tags, v[i].type, &where));
			rd_put_str(t, where);
		}
		if (n > limit)
			rd_table_note(t, "(%zu more sites)", n - limit);
		if (!n)
			rd_table_note(t, "(none)");
		free(v);
	}
	rd_leak_sum_free(&m);
	rd_leak_free(&c);
	return r;
}
