/*
** exp_sites.c — the flame graphs of heaptrack's metrics, from the event
** counters and snapshots of any session or snapshot database (not only
** from allocation samples): per type (an automatic type is its allocation
** site, with its site_depth stack), the calls, bytes allocated and
** temporary allocations of the counts snapshot, the live bytes at the peak
** and at exit.  The figures are those of `inspect top --by METRIC`
** (rd_events_sites); the stacks those top prints (rd_type_stack).
**
** A stack's frames are its addresses, each with the inline chain there
** (innermost first, as rd_type_stack gives them); a registered type is one
** frame of its name.  exp_pprof.c makes its locations from the same
** frames.
*/
#include "exp_int.h"

#include <stdlib.h>
#include <string.h>

int exp_sites_read(struct exp_sites *es, const char *path, int64_t pid, int64_t want, int metric,
		   const struct rd_opts *o)
{
	*es = (struct exp_sites){.metric = metric};
	int r = rd_events_open(&es->s, o, path, pid, want, o->no_symbols, &es->p);
	if (!r && metric == RD_EV_LEAKED && !es->p.exit) {
		rd_errf(o->err, "inspect: %s: process %lld stored no exit snapshot: nothing says what leaked\n", path,
			(long long)es->p.pid);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r)
		r = rd_events_summary(es->s.db, &es->p, &es->sum);
	if (!r)
		r = rd_events_sites(es->s.db, &es->p, metric, &es->v, &es->n);
	if (!r && metric >= 0 && rd_events_total(&es->sum, metric) == 0) { /* no empty file that looks like a success */
		rd_errf(o->err, "inspect: %s: process %lld has no %s to show (snapshot %lld)\n", path,
			(long long)es->p.pid, rd_event_metrics[metric], (long long)es->p.counts);
		r = RD_EXIT_NOTFOUND;
	}
	return r;
}

void exp_sites_free(struct exp_sites *es)
{
	free(es->v);
	rd_session_close(&es->s);
	*es = (struct exp_sites){0};
}

size_t exp_sites_frames(struct exp_sites *es, int64_t type, struct exp_site_frame **out)
{
	struct rd_tags *t = &es->s.tags;
	const char *stack = rd_type_stack(es->s.db, t, type);
	const struct rd_name *ty = rd_name_find(&t->types, type);
	size_t n = 0, cap = 0, group = 0;
	*out = NULL;
	struct rd_stack_frame fr;
	while (rd_stack_next(&stack, &fr)) {
		if (n == cap)
			*out = rd_xrealloc(*out, (cap = cap ? 2 * cap : 16) * sizeof **out);
		struct exp_site_frame *f = &(*out)[n++];
		f->fr = fr;
		/* the address of the group: frames[k] (a depth-1 type: its site) */
		f->addr = !ty ? 0 : group < ty->nframes ? ty->frames[group] : group == 0 ? ty->site : 0;
		if (!fr.inlined)
			group++;
	}
	if (!n) { /* a registered type: its name */
		*out = rd_xcalloc(1, sizeof **out);
		snprintf((*out)[0].fr.func, sizeof (*out)[0].fr.func, "%s", rd_type_label(es->s.db, t, type, NULL));
		n = 1;
	}
	return n;
}

/* ---------------------------------------------------------- folded -- */

static int stack_cmp(const void *a, const void *b)
{
	return strcmp(((const struct exp_sites_stack *)a)->text, ((const struct exp_sites_stack *)b)->text);
}

size_t exp_frame_func_len(const struct rd_stack_frame *fr)
{
	const char *func = fr->func, *plus = strstr(func, "+0x");
	bool by_entry = plus && fr->module[0] && strlen(fr->module) == (size_t)(plus - func) &&
			!strncmp(func, fr->module, strlen(fr->module));
	return plus && !by_entry && plus[3] && strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3)
		       ? (size_t)(plus - func) : strlen(func);
}

/* A frame's name in a folded line: its function (exp_frame_func_len), ';'
** and line ends made '_' (they would split frames or lines). */
static void fold_name(FILE *m, const struct rd_stack_frame *fr)
{
	const char *func = fr->func;
	size_t n = exp_frame_func_len(fr);
	if (!n)
		func = "??", n = 2;
	for (size_t i = 0; i < n; i++)
		putc(func[i] == ';' || func[i] == '\n' || func[i] == '\r' ? '_' : func[i], m);
}

size_t exp_sites_stacks(struct exp_sites *es, int metric, struct exp_sites_stack **out)
{
	struct exp_sites_stack *v = rd_xcalloc(es->n + 1, sizeof *v);
	size_t nl = 0;
	for (size_t i = 0; i < es->n; i++) {
		bool any = false;
		for (int m = 0; m < RD_EV_N; m++)
			any = any || ((metric < 0 || m == metric) && es->v[i].v[m]);
		if (!any)
			continue;
		struct exp_site_frame *fr;
		size_t n = exp_sites_frames(es, es->v[i].type, &fr);
		size_t len = 0;
		FILE *m = open_memstream(&v[nl].text, &len);
		if (!m)
			abort();
		for (size_t k = n; k-- > 0;) { /* outermost first */
			fold_name(m, &fr[k].fr);
			if (k)
				putc(';', m);
		}
		fclose(m);
		free(fr);
		memcpy(v[nl++].v, es->v[i].v, sizeof v->v);
	}
	/* sites whose stacks name the same functions are one stack */
	qsort(v, nl, sizeof *v, stack_cmp);
	size_t k = 0;
	for (size_t i = 0; i < nl; i++) {
		if (k && !strcmp(v[k - 1].text, v[i].text)) {
			for (int m = 0; m < RD_EV_N; m++)
				v[k - 1].v[m] += v[i].v[m];
			free(v[i].text);
			continue;
		}
		v[k++] = v[i];
	}
	*out = v;
	return k;
}

void exp_sites_stacks_free(struct exp_sites_stack *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

void exp_sites_folded(struct exp_sites *es, FILE *f)
{
	struct exp_sites_stack *v;
	size_t n = exp_sites_stacks(es, es->metric, &v);
	for (size_t i = 0; i < n; i++)
		if (v[i].v[es->metric])
			fprintf(f, "%s %llu\n", v[i].text, (unsigned long long)v[i].v[es->metric]);
	exp_sites_stacks_free(v, n);
}
