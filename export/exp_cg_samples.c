/*
** exp_cg_samples.c — the samples of a trace in the Callgrind format, with
** line-level costs, for KCachegrind's source view and
** `callgrind_annotate --auto=yes` (the writer: exp_callgrind.c).
**
** From the address tree of the samples (prof_samples.c), as the displays
** see it (meminst's own frames are one <meminst> frame):
**   - a sample's own cost goes to its innermost frame at the source line of
**     that address: the interrupted pc of a timer sample, the call into the
**     allocator of an allocation sample;
**   - every other frame is a call: the caller, at the line of its call
**     site, calls the next frame inward; the call's inclusive cost is the
**     sample's, counted once per sample when recursion repeats the same
**     call in one stack; calls= is the number of samples through the call
**     (samples do not count calls).
** Events: Time (ns of the sampling clock) and Samples for timer samples,
** Bytes and Allocs (the estimates of `inspect analyse`) for allocation
** samples.  A sampled address inside inlined code is the chain of
** functions inlined there (prof_inline.c), each a function of its own
** called at the line of the call into it, as perf and pprof show them; a
** line in a file other than its function's is given with fi=.
*/
#include "exp_int.h"

#include <stdlib.h>

struct cs_frame {
	uint32_t fn;
	struct exp_cg_pos pos;
};

static bool cs_same_pos(struct exp_cg_pos a, struct exp_cg_pos b)
{
	return a.file == b.file && a.line == b.line;
}

/* One node of the address tree with samples: its own cost and its calls. */
static void cs_sample(struct exp_cg *c, struct prof_inline *x, const struct prof_smodel *m, uint32_t i,
		      struct cs_frame **fr, size_t *cap)
{
	const struct eng_cct *at = prof_samples_tree(m->s);
	const struct eng_cct_node *nd = &at->nodes[i];
	double v[EXP_CG_N] = {nd->self[ENG_M_TICKS] * m->ns_per_tick, nd->self[ENG_M_SAMPLES],
			      nd->self[ENG_M_BYTES], nd->self[ENG_M_ALLOCS]};
	size_t n = 0;
	for (uint32_t j = i; at->nodes[j].parent != ENG_CCT_NONE; j = at->nodes[j].parent) {
		const struct prof_inl_frame *in;
		size_t k = prof_inline_frames(x, j, &in); /* outermost first: taken backwards */
		if (n + k > *cap) {
			*cap = 2 * (n + k) + 64;
			*fr = rd_xrealloc(*fr, *cap * sizeof **fr);
		}
		while (k-- > 0)
			(*fr)[n++] = (struct cs_frame){in[k].fn, {exp_cg_file(c, in[k].file), in[k].line > 0 ? in[k].line : 0}};
	}
	if (!n)
		return;
	exp_cg_own(c, (*fr)[0].fn, (*fr)[0].pos, v);
	for (size_t k = 1; k < n; k++) {
		const struct cs_frame *from = &(*fr)[k], *to = &(*fr)[k - 1];
		bool seen = false; /* the same call further in: counted once */
		for (size_t q = 1; q < k && !seen; q++)
			seen = (*fr)[q].fn == from->fn && (*fr)[q - 1].fn == to->fn && cs_same_pos((*fr)[q].pos, from->pos);
		if (!seen) /* the samples through the call */
			exp_cg_call(c, from->fn, from->pos, to->fn, v, nd->self[ENG_M_SAMPLES] + nd->self[ENG_M_ASAMPLES]);
	}
}

void exp_callgrind_samples(const struct prof_smodel *m, const char *note, FILE *f)
{
	struct exp_cg c;
	struct prof_inline x;
	exp_cg_init(&c);
	prof_inline_init(&x, m);
	c.has[EXP_CG_TIME] = c.has[EXP_CG_SAMPLES] = m->total[ENG_M_SAMPLES] > 0;
	c.has[EXP_CG_BYTES] = c.has[EXP_CG_ALLOCS] = m->total[ENG_M_ASAMPLES] > 0;
	const struct eng_cct *at = prof_samples_tree(m->s);
	struct cs_frame *fr = NULL;
	size_t cap = 0;
	for (uint32_t i = 0; i < at->n; i++)
		if (at->nodes[i].parent != ENG_CCT_NONE &&
		    (at->nodes[i].self[ENG_M_SAMPLES] > 0 || at->nodes[i].self[ENG_M_ASAMPLES] > 0))
			cs_sample(&c, &x, m, i, &fr, &cap);
	free(fr);
	char events[400] = "";
	const char *clock = m->sample_clock == MEMINST_TRACE_SAMPLE_WALL ? "wall" : "cpu";
	size_t n = 0;
	if (c.has[EXP_CG_TIME])
		n += (size_t)snprintf(events, sizeof events,
				      "event: Time : time (ns, %s clock samples at %u Hz)\nevent: Samples : timer samples\n",
				      clock, m->sample_hz);
	if (c.has[EXP_CG_BYTES] && n < sizeof events)
		snprintf(events + n, sizeof events - n, "event: Bytes : bytes allocated (estimate from allocation "
			 "samples)\nevent: Allocs : allocations (estimate from allocation samples)\n");
	struct exp_cg_head h = {x.funcs, x.nfuncs, m->pid, m->exe, events, note && *note ? note : NULL};
	exp_cg_write(&c, &h, f);
	prof_inline_free(&x);
	exp_cg_free(&c);
}
