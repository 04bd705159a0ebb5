/*
** exp_html_leaks.c — the leak check in the HTML report: memcheck's
** classes (definitely, indirectly, possibly lost, still reachable, and
** what the default suppressions hide: glibc's and the loader's own
** blocks) in bytes and blocks, and the definitely lost sites with the
** indirectly lost bytes hanging from them, biggest first.  The reader
** reads and adds up (rd_leak.c), as for inspect leaks and report.
*/
#include "exp_int.h"

#include <stdlib.h>

#define HTML_LEAK_SITES 20

static const char *const html_leak_names[] = {MEMINST_LEAK_CLASS_NAMES};

static void html_leak_sum(FILE *f, const struct rd_leak_sum *m, int64_t snap)
{
	static const int order[] = {RD_LEAK_DEFINITE, RD_LEAK_INDIRECT, RD_LEAK_POSSIBLE, RD_LEAK_REACHABLE,
				    RD_LEAK_SUPPRESSED};
	fprintf(f, "<h3>Leak check (snapshot %lld): memcheck's classes</h3>\n<table class=\"leak-classes\">"
		   "<thead><tr><th>class</th><th>bytes</th><th>blocks</th></tr></thead><tbody>\n", (long long)snap);
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		int c = order[i];
		fputs("<tr><td>", f);
		exp_html_text(f, c < RD_LEAK_CLASSES ? html_leak_names[c] : "suppressed");
		fputs("</td><td class=\"num\">", f);
		exp_html_size(f, m->bytes[c]);
		fprintf(f, "</td><td class=\"num\">%llu</td></tr>\n", (unsigned long long)m->blocks[c]);
	}
	fputs("</tbody></table>\n", f);
}

static void html_leak_sites(FILE *f, struct rd_session *s, const struct rd_leak_sum *m)
{
	size_t n;
	struct rd_leak_site *v = rd_leak_sites(m, RD_LEAK_DEFINITE, &n);
	if (!n) {
		fputs("<p class=\"none\">Nothing definitely lost.</p>\n", f);
		free(v);
		return;
	}
	fputs("<p>Definitely lost, by allocation site (direct bytes, and the indirectly lost bytes that only "
	      "they reach):</p>\n<table class=\"sortable leak-sites\"><thead><tr><th>direct</th><th>indirect</th>"
	      "<th>blocks</th><th>allocated at</th><th>location</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < n && i < HTML_LEAK_SITES; i++) {
		const char *where = NULL;
		const char *label = rd_type_label(s->db, &s->tags, v[i].type, &where);
		fputs("<tr><td class=\"num\">", f);
		exp_html_size(f, v[i].bytes);
		fputs("</td><td class=\"num\">", f);
		exp_html_size(f, v[i].ind_bytes);
		fprintf(f, "</td><td class=\"num\">%llu</td><td class=\"name\">", (unsigned long long)v[i].blocks);
		exp_html_text(f, label);
		fputs("</td><td>", f);
		exp_html_text(f, where ? where : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(v);
}

int exp_html_leak_classes(FILE *f, const char *path, const struct rd_opts *o, int64_t pid)
{
	struct rd_session s = {0};
	struct rd_args a = {0};
	int64_t snap = 0;
	int r = rd_db_open(path, o, &s.db);
	if (!r)
		r = rd_leak_latest(s.db, pid, &snap);
	if (!r && snap) {
		struct rd_leak_check c;
		struct rd_leak_sum m;
		struct rd_leak_suppress sup = {NULL, 0, false};
		a.limit = -1;
		if (!(r = rd_leak_read(&s, o, &a, snap, &sup, &c, &m))) {
			html_leak_sum(f, &m, snap);
			html_leak_sites(f, &s, &m);
		}
		rd_leak_sum_free(&m);
		rd_leak_free(&c);
	}
	rd_session_close(&s);
	return r;
}
