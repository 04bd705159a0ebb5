/*
** prof_procs.c — the processes of a session side by side, for `inspect
** report` and `inspect analyse`: a run of make, a shell script or a server
** with workers is many processes, and the one the user cares about is
** seldom the first (a shell's 3 KiB and no samples).
**
** For each process of session_process: its peak of live bytes (the
** highest max-ever total of its snapshots, exact), its snapshots, and,
** read from its stored trace, its samples (timer and allocation) and
** exact calls.  The heaviest by memory is the one with the highest peak,
** the heaviest by time the one with the most samples, else calls; ties go
** to the lower pid, so the choice is stable.
*/
#include "prof_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The trace figures of one process: samples and calls, read quietly (a
** damaged trace is said when that process is read for itself). */
static bool procs_trace(const char *path, const struct rd_opts *o, struct prof_proc *p)
{
	struct rd_opts quiet = *o;
	quiet.err = fopen("/dev/null", "w");
	if (!quiet.err)
		return false;
	struct prof_trace tr;
	struct prof_samples *s = prof_samples_new();
	int64_t image = rd_strace_want_image(-1); /* each weighed by its default image */
	int r = prof_source_read(path, p->pid, &quiet, &tr, NULL, NULL, NULL, s);
	rd_strace_want_image(image);
	if (!r) {
		p->samples = prof_samples_count(s);
		p->calls = prof_trace_calls(&tr);
		/* the other programs it ran (exec), each read once, for the listing */
		prof_images_read(&p->images, path, &quiet, &tr, p->samples);
	}
	prof_trace_free(&tr);
	prof_samples_free(s);
	fclose(quiet.err);
	return r == 0;
}

int prof_procs_read(const char *path, const struct rd_opts *o, struct prof_procs *ps)
{
	memset(ps, 0, sizeof *ps);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = rd_sqlite_open(o, path, &db);
	if (rc)
		return rc;
	rc = sqlite3_prepare_v2(db,
		    "SELECT p.pid, p.ppid, CASE WHEN p.cmdline <> '' THEN p.cmdline ELSE p.exe END, p.snapshots, "
		    " p.traced, (SELECT max(u.sizes_max_ever) FROM status u JOIN snapshot v ON v.id = u.snapshot "
		    "  WHERE v.pid = p.pid AND u.kind = 'total') "
		    "FROM session_process p ORDER BY p.pid", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		rd_errf(o->err, "inspect: %s: %s\n", path, rd_sql_msg(db));
		sqlite3_finalize(st);
		sqlite3_close(db);
		return RD_EXIT_DB;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ps->p = rd_xrealloc(ps->p, (ps->n + 1) * sizeof *ps->p);
		struct prof_proc *p = &ps->p[ps->n++];
		memset(p, 0, sizeof *p);
		p->pid = sqlite3_column_int64(st, 0);
		p->ppid = sqlite3_column_int64(st, 1);
		const unsigned char *cmd = sqlite3_column_text(st, 2);
		p->command = rd_xstrdup(cmd ? (const char *)cmd : "");
		p->snapshots = sqlite3_column_int64(st, 3);
		p->traced = sqlite3_column_int(st, 4) != 0;
		p->peak_bytes = (uint64_t)sqlite3_column_int64(st, 5);
	}
	if (rc != SQLITE_DONE)
		rd_errf(o->err, "inspect: %s: %s\n", path, rd_sql_msg(db));
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (rc != SQLITE_DONE) {
		prof_procs_free(ps);
		return RD_EXIT_DB;
	}
	for (size_t i = 0; i < ps->n; i++)
		if (ps->p[i].traced)
			ps->p[i].trace_read = procs_trace(path, o, &ps->p[i]);
	return 0;
}

void prof_procs_free(struct prof_procs *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].command);
		prof_images_free(&ps->p[i].images);
	}
	free(ps->p);
	memset(ps, 0, sizeof *ps);
}

/* The weight of a process for time: samples, else exact calls. */
static uint64_t procs_time(const struct prof_proc *p) { return p->samples ? p->samples : p->calls; }

const struct prof_proc *prof_procs_heaviest(const struct prof_procs *ps, bool by_time)
{
	const struct prof_proc *best = NULL;
	for (size_t i = 0; i < ps->n; i++) {
		const struct prof_proc *p = &ps->p[i];
		uint64_t w = by_time ? procs_time(p) : p->peak_bytes;
		if (w && (!best || w > (by_time ? procs_time(best) : best->peak_bytes)))
			best = p;
	}
	return best;
}

const struct prof_proc *prof_procs_find(const struct prof_procs *ps, int64_t pid)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->p[i].pid == pid)
			return &ps->p[i];
	return NULL;
}

static const struct rd_col procs_cols[] = {
	{"pid", "pid", RD_K_INT, 0},
	{"ppid", "parent", RD_K_INT, 0},
	{"max_ever_bytes", "peak live bytes", RD_K_SIZE, RD_C_OPTIONAL},
	{"snapshots", "snapshots", RD_K_INT, 0},
	{"samples", "samples", RD_K_INT, RD_C_OPTIONAL},
	{"calls", "calls", RD_K_INT, RD_C_OPTIONAL},
	{"command", "command", RD_K_STR, 0},
};

/* Heaviest first: by peak, or by samples (calls) when by_time. */
static int procs_cmp_mem(const void *a, const void *b)
{
	const struct prof_proc *x = *(const struct prof_proc *const *)a, *y = *(const struct prof_proc *const *)b;
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int procs_cmp_time(const void *a, const void *b)
{
	const struct prof_proc *x = *(const struct prof_proc *const *)a, *y = *(const struct prof_proc *const *)b;
	if (procs_time(x) != procs_time(y))
		return procs_time(x) > procs_time(y) ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

rd_table_t *prof_procs_table(rd_doc_t *d, const struct prof_procs *ps, bool by_time, size_t limit)
{
	const struct prof_proc **order = rd_xcalloc(ps->n ? ps->n : 1, sizeof *order);
	bool memory = false, samples = false, calls = false;
	for (size_t i = 0; i < ps->n; i++) {
		order[i] = &ps->p[i];
		memory |= ps->p[i].snapshots > 0;
		samples |= ps->p[i].samples > 0;
		calls |= ps->p[i].calls > 0;
	}
	qsort(order, ps->n, sizeof *order, by_time ? procs_cmp_time : procs_cmp_mem);
	size_t shown = limit && limit < ps->n ? limit : ps->n;
	rd_table_t *t = rd_doc_table(d, "processes", procs_cols, (int)(sizeof procs_cols / sizeof procs_cols[0]), 0);
	rd_table_title(t, "processes (%zu%s), by %s:", ps->n, shown < ps->n ? ", the heaviest" : "",
			 by_time ? (samples ? "samples" : "calls") : "peak live bytes");
	for (size_t i = 0; i < shown; i++) {
		const struct prof_proc *p = order[i];
		rd_row(t);
		rd_put_int(t, p->pid);
		rd_put_int(t, p->ppid);
		if (memory && p->snapshots)
			rd_put_uint(t, p->peak_bytes);
		else
			rd_put_null(t);
		rd_put_int(t, p->snapshots);
		if (samples && p->trace_read)
			rd_put_uint(t, p->samples);
		else
			rd_put_null(t);
		if (calls && p->trace_read)
			rd_put_uint(t, p->calls);
		else
			rd_put_null(t);
		rd_put_str(t, p->command);
	}
	free(order);
	return t;
}

/* A process's programs go in one table with those of the process the
** answer is of, in which --image is honoured (its line as the title). */
void prof_procs_images(rd_doc_t *d, const struct prof_images *is, const struct prof_procs *ps)
{
	rd_table_t *t = is->n ? prof_images_table(d, is) : NULL;
	for (size_t i = 0; ps && i < ps->n; i++) {
		const struct prof_images *other = &ps->p[i].images;
		if (!other->n || (is->n && other->pid == is->pid))
			continue;
		if (!t) {
			t = prof_images_table(d, is);
			rd_table_title(t, "programs of the processes that exec'd (--pid PID --image K reads one):");
		}
		prof_images_rows(t, other);
	}
}
