/*
** exp_html_rss.c — the HTML report's resident set explained: the parts of
** the kernel's RSS at the process's map snapshot with the highest resident
** set (rd_rss_last; live heap blocks, meminst's headers, the allocator's overhead
** and free memory, other anonymous regions, thread stacks, file-backed
** data, code) and the other anonymous regions by the function that mapped
** them, in bytes and share, as `inspect rss` and `inspect report` give
** them (reader/rd_rss.c, rd_rss_sites.c).
*/
#include "exp_int.h"

#define HTML_RSS_SITES 20

static void html_share(FILE *f, int64_t part, double whole)
{
	fprintf(f, "</td><td class=\"num\">%.1f%%</td></tr>\n", whole > 0 ? 100.0 * (double)part / whole : 0.0);
}

static void html_rss_parts(FILE *f, const struct rd_rss *r, double whole)
{
	fputs("<table class=\"rss-parts\"><thead><tr><th>part</th><th>resident</th><th>share</th></tr></thead>"
	      "<tbody>\n", f);
	for (int p = 0; p < RD_RSS_DIFF; p++) {
		fputs("<tr><td>", f);
		exp_html_text(f, rd_rss_part_labels[p]);
		fputs("</td><td class=\"num\">", f);
		exp_html_size(f, (uint64_t)(r->part[p] > 0 ? r->part[p] : 0));
		html_share(f, r->part[p], whole);
	}
	fputs("</tbody></table>\n", f);
}

static void html_rss_sites(FILE *f, const struct rd_vec *sites, double whole)
{
	const struct rd_rss_site *s = sites->v;
	fputs("<p>The other anonymous regions and the thread stacks by the function that mapped them (the "
	      "program's arenas and pools, the calls of pthread_create):</p>\n<table class=\"sortable "
	      "rss-sites\"><thead><tr><th>part</th><th>mapped by</th><th>regions</th>"
	      "<th>mapped</th><th>resident</th><th>share</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < sites->n && i < HTML_RSS_SITES; i++) {
		fputs("<tr><td>", f);
		exp_html_text(f, rd_rss_part_keys[s[i].part]);
		fputs("</td><td class=\"name\">", f);
		exp_html_text(f, s[i].name);
		fprintf(f, "</td><td class=\"num\">%llu</td><td class=\"num\">", (unsigned long long)s[i].regions);
		exp_html_size(f, s[i].mapped);
		fputs("</td><td class=\"num\">", f);
		exp_html_size(f, (uint64_t)s[i].resident);
		html_share(f, s[i].resident, whole);
	}
	fputs("</tbody></table>\n", f);
}

int exp_html_rss(FILE *f, const char *path, const struct rd_opts *o, int64_t pid)
{
	rd_db_t *db = NULL;
	struct rd_rss_last l = {0};
	fputs("<section id=\"rss\"><h2>Resident set explained</h2>\n", f);
	int r = rd_db_open(path, o, &db);
	if (!r)
		r = rd_rss_last(db, o, pid, &l);
	if (!r && l.r.snap) {
		double whole = l.r.kernel > 0 ? (double)l.r.kernel : (double)l.r.sum[RD_SEG_RSS];
		fprintf(f, "<p>Snapshot %lld (", (long long)l.r.snap);
		exp_html_text(f, l.trigger);
		fputs("): the kernel counted ", f);
		exp_html_size(f, (uint64_t)whole);
		fputs(" resident; what holds it:</p>\n", f);
		html_rss_parts(f, &l.r, whole);
		if (l.sites.n)
			html_rss_sites(f, &l.sites, whole);
	} else if (!r) {
		fputs("<p class=\"none\">No snapshot of this process has the kernel's figures of its mappings "
		      "(a libmeminst from before them).</p>\n", f);
	}
	fputs("</section>\n", f);
	rd_rss_last_free(&l);
	if (db)
		rd_db_close(db);
	return r;
}
