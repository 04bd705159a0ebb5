/*
** prof_input.c — what `inspect export`, `inspect html` and `inspect report`
** read: a session, a trace or a profile database, and from it the exact
** profile (prof_model), the whole stacks (prof_stacks.c) and the samples'
** model, each only when the caller asks for it and the input has it.
*/
#include "prof_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t prof_trace_calls(const struct prof_trace *tr)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tr->sim.nthreads; i++)
		n += tr->sim.threads[i]->calls;
	return n;
}

FILE *prof_input_reopen(void *ctx, uint64_t *size)
{
	const struct prof_input *in = ctx;
	int code;
	return prof_source_open(in->path, in->pid, in->o, size, &code);
}

/* Between two readings of the trace (the samples need a second): the
** stacks start afresh. */
static void prof_stacks_restart(void *ctx)
{
	prof_stacks_free(ctx);
	prof_stacks_init(ctx);
}

static int prof_read_trace(struct prof_input *in, const struct rd_opts *o, unsigned want)
{
	bool stacks = want & PROF_IN_STACKS;
	if (stacks)
		prof_stacks_init(&in->stacks);
	in->have_tr = true;
	return prof_source_read_live(in->path, in->pid, o, &in->tr, stacks ? prof_stacks_record : NULL, &in->stacks,
				     stacks ? prof_stacks_restart : NULL, in->samples, in->live);
}

int prof_input_read(struct prof_input *in, const struct rd_opts *o, unsigned want)
{
	in->o = o;
	int r = rd_input_check(o, in->path);
	if (r)
		return r;
	in->session = rd_is_session(in->path);
	int is_trace = prof_is_trace(in->path);
	if (!in->session && is_trace != 1) {
		if (is_trace < 0) {
			rd_errf(o->err, "inspect: %s: %s\n", in->path, strerror(errno));
			return RD_EXIT_DB;
		}
		if (!(want & PROF_IN_MODEL))
			return prof_input_fail(o, in->path, "not a session or a trace file (a profile database has "
					       "no stacks: give the trace)");
		if (in->pid)
			return rd_usage_error(o, "export", "--pid is for session databases");
		r = prof_db_read(in->path, o, &in->model);
		in->have_model = true; /* freed even when half read */
		return r;
	}
	if (!in->session && in->pid)
		return rd_usage_error(o, "export", "--pid is for session databases");
	if (want & PROF_IN_SAMPLES)
		in->samples = prof_samples_new();
	r = prof_read_trace(in, o, want);
	if (r)
		return r;
	in->tr.raw_times = in->raw_times;
	if (in->session && (want & PROF_IN_IMAGES) &&
	    (r = prof_images_read(&in->images, in->path, o, &in->tr,
				  in->samples ? prof_samples_count(in->samples) : 0)))
		return r;
	bool calls = prof_trace_calls(&in->tr) > 0;
	if ((want & PROF_IN_STACKS) && calls) {
		prof_stacks_finish(&in->stacks, &in->tr, o, in->no_files);
		in->have_stacks = true;
	}
	if ((want & PROF_IN_SAMPLES) && prof_samples_count(in->samples)) {
		struct prof_sopts so = {.style = PROF_ST_FLAT, .cutoff = 0.5};
		if ((r = prof_smodel_build(&in->sm, in->samples, &in->tr, o, in->no_files, &so)))
			return r;
		in->have_sm = true;
	}
	bool rows = false; /* an in-process profile: PROF_PAIR rows, no calls */
	for (size_t i = 0; i < in->tr.sim.nthreads; i++)
		rows |= in->tr.sim.threads[i]->has_profile;
	if ((want & PROF_IN_MODEL) && (calls || rows)) {
		prof_model_from_trace(&in->model, &in->tr, o, in->no_files);
		in->have_model = true;
	}
	return 0;
}

void prof_input_free(struct prof_input *in)
{
	if (in->have_model)
		prof_model_free(&in->model);
	if (in->have_sm)
		prof_smodel_free(&in->sm);
	prof_samples_free(in->samples);
	prof_stacks_free(&in->stacks);
	prof_images_free(&in->images);
	if (in->have_tr)
		prof_trace_free(&in->tr);
	memset(in, 0, sizeof *in);
}
