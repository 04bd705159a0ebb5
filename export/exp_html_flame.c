/*
** exp_html_flame.c — the HTML report's two flame graphs of the profile:
** own time per stack (exact trace, else timer samples) and bytes allocated
** per stack (<alloc> events, else allocation samples).  Written as JSON in
** a script element (the tree of function ids and values, the names apart,
** a group per thread for the thread filter) that exp_html_ui.c's script
** draws; stacks below 0.1% of the total are left out, which bounds the
** file whatever the trace's size.
**
** Apart from exp_html.c because it is one job with its own data (the
** calling-context tree of profile/prof_stacks.c, walked recursively) that
** the rest of the report does not touch; the report's other flame graph,
** by site and heaptrack's metrics, is exp_html_sites.c's.
*/
#include "exp_int.h"

#include <stdlib.h>
#include <string.h>

#define HTML_PRUNE 0.001         /* flame graph nodes below this share go */
#define HTML_MAX_DEPTH 400

/* The children of node i, with the nodes that are no function (the
** unknown caller) replaced by their own children; a caller at the line of
** an allocator call (PROF_STK_AT) is a frame "FUNCTION at FILE:LINE" below
** the function, holding the call's bytes and its <alloc>. */
static bool html_node(FILE *f, const struct prof_stacks *s, uint32_t i, int metric, double min, int depth,
		      bool first);

static bool html_children(FILE *f, const struct prof_stacks *s, uint32_t i, int metric, double min, int depth,
			  bool first)
{
	for (uint32_t c = s->t.nodes[i].child; c != ENG_CCT_NONE; c = s->t.nodes[c].next) {
		if (s->t.nodes[c].total[metric] < min || s->t.nodes[c].total[metric] <= 0)
			continue;
		if (!prof_stacks_label(s, c) && !prof_stacks_at(s, c))
			first = html_children(f, s, c, metric, min, depth, first);
		else
			first = html_node(f, s, c, metric, min, depth, first);
	}
	return first;
}

static bool html_node(FILE *f, const struct prof_stacks *s, uint32_t i, int metric, double min, int depth,
		      bool first)
{
	if (!first)
		fputc(',', f);
	const struct prof_stk_at *at = prof_stacks_at(s, i); /* named after the functions */
	fprintf(f, "[%zu,%.0f", at ? s->nfuncs + (size_t)(at - s->at) : (size_t)s->fid[i], s->t.nodes[i].total[metric]);
	if (depth < HTML_MAX_DEPTH && s->t.nodes[i].child != ENG_CCT_NONE) {
		fputs(",[", f);
		html_children(f, s, i, metric, min, depth + 1, true);
		fputc(']', f);
	}
	fputc(']', f);
	return false;
}

/* The root's children: an exact trace's stacks start at one unknown caller
** per thread and stretch (a node with no function); each becomes a group
** [-2 - k, value, [children]] of thread k of the "threads" list, for the
** thread filter.  Samples have their threads merged: no groups. */
static void html_root(FILE *f, const struct prof_stacks *s, const struct prof_trace *tr, int metric, double min)
{
	uint32_t *thr = NULL; /* the threads, by number */
	size_t nthr = 0;
	for (uint32_t c = s->t.nodes[0].child; c != ENG_CCT_NONE; c = s->t.nodes[c].next) {
		uint32_t t = prof_stacks_thread(s, c);
		size_t k = 0;
		while (k < nthr && thr[k] < t)
			k++;
		if (prof_stacks_label(s, c) || !t || (k < nthr && thr[k] == t))
			continue;
		thr = rd_xrealloc(thr, (nthr + 1) * sizeof *thr);
		memmove(thr + k + 1, thr + k, (nthr++ - k) * sizeof *thr);
		thr[k] = t;
	}
	bool first = true;
	for (uint32_t c = s->t.nodes[0].child; c != ENG_CCT_NONE; c = s->t.nodes[c].next) {
		uint32_t t = prof_stacks_thread(s, c);
		if (s->t.nodes[c].total[metric] < min || s->t.nodes[c].total[metric] <= 0)
			continue;
		if (prof_stacks_label(s, c) || !t) {
			first = prof_stacks_label(s, c) ? html_node(f, s, c, metric, min, 1, first)
						       : html_children(f, s, c, metric, min, 1, first);
			continue;
		}
		size_t k = 0;
		while (thr[k] != t)
			k++;
		fprintf(f, "%s[%lld,%.0f,[", first ? "" : ",", -2 - (long long)k, s->t.nodes[c].total[metric]);
		html_children(f, s, c, metric, min, 1, true);
		fputs("]]", f);
		first = false;
	}
	fputs("]],\"threads\":[", f);
	for (size_t k = 0; k < nthr; k++) {
		const struct eng_thread *pt = NULL;
		for (size_t j = 0; j < tr->sim.nthreads && !pt; j++)
			if (tr->sim.threads[j]->thread == thr[k])
				pt = tr->sim.threads[j];
		char name[80];
		if (pt && pt->name[0])
			snprintf(name, sizeof name, "%s (thread %u, tid %llu)", pt->name, thr[k],
				 (unsigned long long)pt->tid);
		else
			snprintf(name, sizeof name, "thread %u", thr[k]);
		fprintf(f, "%s", k ? "," : "");
		exp_html_json(f, name);
	}
	free(thr);
}

static void html_flame_data(FILE *f, const char *id, const struct prof_stacks *s, const struct prof_trace *tr,
			    int metric)
{
	fprintf(f, "<script type=\"application/json\" id=\"%s\">{\"unit\":\"%s\",\"names\":[", id,
		metric == PROF_STK_TIME ? "ns" : "bytes");
	/* the names of the functions in the tree only (others in the table,
	** such as meminst's own folded into <meminst>, are never drawn) */
	bool *used = rd_xcalloc(s->nfuncs + 1, sizeof *used);
	for (size_t k = 0; s->fid && k < s->t.n; k++)
		if (s->fid[k] < s->nfuncs)
			used[s->fid[k]] = true;
	for (size_t i = 0; i < s->nfuncs; i++) {
		if (i)
			fputc(',', f);
		exp_html_json(f, used[i] ? s->funcs[i].name : "");
	}
	free(used);
	for (size_t i = 0; i < s->nat; i++) {
		fputc(',', f);
		exp_html_json(f, s->at[i].name);
	}
	fprintf(f, "],\"tree\":[-1,%.0f,[", s->total[metric]);
	html_root(f, s, tr, metric, s->total[metric] * HTML_PRUNE);
	fputs("]}</script>\n", f);
}

void exp_html_flame(FILE *f, const struct prof_stacks *s, const struct prof_trace *tr, int metric,
		    const char *source)
{
	const char *id = metric == PROF_STK_TIME ? "flame-time" : "flame-bytes";
	fprintf(f, "<section id=\"%s-section\"><h2>%s</h2>\n", id,
		metric == PROF_STK_TIME ? "Where the time goes" : "Where the memory is allocated");
	if (!s || s->total[metric] <= 0) {
		fprintf(f, "<p class=\"none\">%s</p>\n</section>\n",
			metric == PROF_STK_TIME ? "No time profile in this session (run meminst with --trace and code built "
					     "with -finstrument-functions, or with --sample)."
					   : "No allocations in the profile (they come from an exact trace's &lt;alloc&gt; "
					     "events with --mis or --mim, or from --alloc-sample).");
		return;
	}
	fprintf(f, "<p>%s per call stack, from %s; the root is at the bottom. Hover for figures, click a frame "
		   "to zoom, <button type=\"button\" class=\"reset\" data-for=\"%s\">reset zoom</button> "
		   "<button type=\"button\" class=\"invert\" data-for=\"%s\">bottom-up</button> (the functions "
		   "where it is spent at the root, their callers above). Stacks below 0.1%% of the total are left "
		   "out.</p>\n<p class=\"found\" id=\"%s-found\"></p>\n",
		metric == PROF_STK_TIME ? "Own time" : "Bytes allocated", source, id, id, id);
	fprintf(f, "<div class=\"flame\" id=\"%s-view\" data-src=\"%s\"></div>\n", id, id);
	html_flame_data(f, id, s, tr, metric);
	fputs("</section>\n", f);
}

