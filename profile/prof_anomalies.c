/*
** prof_anomalies.c — the anomalies style of `inspect analyse`: shares of
** self samples that differ between threads or between two runs by more
** than their sampling error, and estimates resting on too few samples.
**
** Apart from the other displays (prof_display.c) because it is the one
** that judges rather than shows: a statistical rule (binomial shares, their
** standard error) and its statement in the output, which inspect(1)
** repeats.  It writes through the displays' vocabulary (struct prof_disp:
** names, JSON functions, the header, the order by self).
*/
#include "prof_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The anomaly rule (stated in the output and in inspect(1)). */
#define ANOM_SIGMAS 3.0
#define ANOM_MIN_POINTS 2.0
#define ANOM_MIN_SAMPLES 10.0
#define ANOM_MAX_REL 0.30

#define ANOM_RULE                                                                              \
	"a share p (of self samples) differs when |p1 - p2| > 3 * sqrt(p1(1-p1)/n1 + p2(1-p2)/n2) " \
	"and by at least 2 points; an estimate is uncertain with fewer than 10 samples or a "   \
	"relative standard error sqrt((1-p)/(n*p)) above 30%"

/* Is the difference of two binomial shares (k of n each) an anomaly?
** *diff and *lim in points. */
static bool anom_differs(double k1, double n1, double k2, double n2, double *diff, double *lim)
{
	double p1 = n1 > 0 ? k1 / n1 : 0, p2 = n2 > 0 ? k2 / n2 : 0;
	double v = (n1 > 0 ? p1 * (1 - p1) / n1 : 0) + (n2 > 0 ? p2 * (1 - p2) / n2 : 0);
	*diff = 100 * (p1 - p2);
	*lim = 100 * ANOM_SIGMAS * sqrt(v);
	return n1 > 0 && n2 > 0 && fabs(*diff) > *lim && fabs(*diff) >= ANOM_MIN_POINTS;
}

struct anom_out {
	const struct prof_disp *d;
	bool json;
	size_t count;
};

static void anom_section(struct anom_out *a, const char *key, const char *title)
{
	if (a->json)
		fprintf(a->d->f, "%s\"%s\":[", key[0] == 't' ? "" : "],", key);
	else
		fprintf(a->d->f, "\n%s\n", title);
	a->count = 0;
}

static void anom_threads(struct anom_out *a)
{
	const struct prof_disp *d = a->d;
	const struct prof_smodel *m = d->m;
	int cm = d->cm;
	anom_section(a, "threads", "Between threads (a thread's share against the other threads'):");
	size_t nt = 0;
	for (size_t t = 0; t < m->nthreads; t++)
		nt += m->threads[t].total[cm] > 0;
	for (size_t t = 0; t < m->nthreads && nt >= 2 && !m->thread; t++) {
		const struct prof_sthread *th = &m->threads[t];
		if (th->total[cm] <= 0)
			continue;
		struct eng_fsum *fs = prof_smodel_thread_sums(m, th->thread);
		double n1 = th->total[cm], n2 = m->total[cm] - n1;
		for (size_t i = 0; i < m->nfuncs; i++) {
			double k1 = fs[i].self[cm], k2 = m->fs[i].self[cm] - k1, diff, lim;
			if ((k1 <= 0 && k2 <= 0) || !anom_differs(k1, n1, k2, n2, &diff, &lim))
				continue;
			if (a->json) {
				fprintf(d->f, "%s{\"thread\":%u,", a->count++ ? "," : "", th->thread);
				prof_disp_json_func(d, (uint32_t)i, d->f);
				fprintf(d->f, ",\"share\":%.4f,\"samples\":%.0f,\"other_share\":%.4f,\"other_samples\":%.0f,"
					"\"difference\":%.4f,\"limit\":%.4f}",
					100 * k1 / n1, k1, 100 * k2 / n2, k2, diff, lim);
			} else {
				a->count++;
				fprintf(d->f, "  thread %u: ", th->thread);
				prof_disp_name(d, (uint32_t)i, d->f);
				fprintf(d->f, ": %.2f%% of %.0f samples, other threads %.2f%% of %.0f "
					"(difference %+.2f points, limit %.2f)\n", 100 * k1 / n1, n1, 100 * k2 / n2, n2, diff, lim);
			}
		}
		free(fs);
	}
	if (!a->json && !a->count)
		fprintf(d->f, "  none%s\n", nt < 2 || m->thread ? " (one thread sampled)" : "");
}

static void anom_runs(struct anom_out *a, const struct prof_smodel *m2)
{
	const struct prof_disp *d = a->d;
	const struct prof_smodel *m = d->m;
	int cm = d->cm;
	anom_section(a, "runs", "Between runs (first trace against the second):");
	double n1 = m->total[cm], n2 = m2 ? m2->total[cm] : 0;
	for (size_t i = 0; m2 && i < m->nfuncs; i++) {
		double k1 = m->fs[i].self[cm], k2 = 0, diff, lim;
		for (size_t j = 0; j < m2->nfuncs; j++)
			if (!strcmp(m2->funcs[j].name, m->funcs[i].name))
				k2 += m2->fs[j].self[cm];
		if ((k1 <= 0 && k2 <= 0) || !anom_differs(k1, n1, k2, n2, &diff, &lim))
			continue;
		if (a->json) {
			fputs(a->count++ ? ",{" : "{", d->f);
			prof_disp_json_func(d, (uint32_t)i, d->f);
			fprintf(d->f, ",\"share\":%.4f,\"samples\":%.0f,\"other_share\":%.4f,\"other_samples\":%.0f,"
				"\"difference\":%.4f,\"limit\":%.4f}", 100 * k1 / n1, k1, 100 * k2 / n2, k2, diff, lim);
		} else {
			a->count++;
			fputs("  ", d->f);
			prof_disp_name(d, (uint32_t)i, d->f);
			fprintf(d->f, ": %.2f%% of %.0f samples, then %.2f%% of %.0f (difference %+.2f points, limit %.2f)\n",
				100 * k1 / n1, n1, 100 * k2 / n2, n2, diff, lim);
		}
	}
	/* functions only the second run has */
	for (size_t j = 0; m2 && j < m2->nfuncs; j++) {
		double k2 = m2->fs[j].self[cm], diff, lim;
		bool known = false;
		for (size_t i = 0; i < m->nfuncs && !known; i++)
			known = !strcmp(m2->funcs[j].name, m->funcs[i].name);
		if (known || k2 <= 0 || !anom_differs(0, n1, k2, n2, &diff, &lim))
			continue;
		if (a->json)
			fprintf(d->f, "%s{\"name\":", a->count++ ? "," : ""), rd_json_str(d->f, m2->funcs[j].name),
				fprintf(d->f, ",\"file\":null,\"line\":null,\"module\":null,\"share\":0,\"samples\":0,"
					"\"other_share\":%.4f,\"other_samples\":%.0f,\"difference\":%.4f,\"limit\":%.4f}",
					100 * k2 / n2, k2, diff, lim);
		else
			a->count++, fprintf(d->f, "  %s: 0%%, then %.2f%% of %.0f (difference %+.2f points, limit %.2f)\n",
					    m2->funcs[j].name, 100 * k2 / n2, n2, diff, lim);
	}
	if (!a->json && !a->count)
		fprintf(d->f, "  %s\n", m2 ? "none" : "(give a second trace to compare: A B)");
}

static void anom_uncertain(struct anom_out *a)
{
	const struct prof_disp *d = a->d;
	const struct prof_smodel *m = d->m;
	int cm = d->cm;
	anom_section(a, "uncertain", "Uncertain (too few samples for the share shown):");
	size_t n;
	uint32_t *order = prof_disp_order(d, &n);
	double tot = m->total[cm];
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < n; i++) {
		double k = m->fs[order[i]].self[cm];
		double p = tot > 0 ? k / tot : 0, rel = k > 0 ? sqrt((1 - p) / (tot * p)) : INFINITY;
		if (k <= 0 || (k >= ANOM_MIN_SAMPLES && rel <= ANOM_MAX_REL))
			continue;
		if (d->so->top > 0 && shown >= (size_t)d->so->top) {
			more++;
			continue;
		}
		shown++;
		if (a->json) {
			fputs(a->count++ ? ",{" : "{", d->f);
			prof_disp_json_func(d, order[i], d->f);
			fprintf(d->f, ",\"samples\":%.0f,\"share\":%.4f,\"relative_error\":%.4f}", k, 100 * p, rel);
		} else {
			a->count++;
			fputs("  ", d->f);
			prof_disp_name(d, order[i], d->f);
			fprintf(d->f, ": %.0f sample%s, %.2f%% +/- %.0f%%\n", k, k == 1 ? "" : "s", 100 * p, 100 * rel);
		}
	}
	if (!a->json && more)
		fprintf(d->f, "  (%zu more)\n", more);
	if (!a->json && !a->count)
		fputs("  none\n", d->f);
	free(order);
}

void prof_disp_anomalies(const struct prof_disp *d, const struct prof_smodel *m2, bool json)
{
	struct anom_out a = {d, json, 0};
	if (json) {
		prof_disp_header_json(d, "anomalies");
		fputs(",\"rule\":", d->f);
		rd_json_str(d->f, ANOM_RULE);
		fputs(",\"second\":", d->f);
		prof_disp_json_opt_str(d->f, m2 ? m2->source : NULL);
		fputc(',', d->f);
	} else {
		prof_disp_header_text(d);
		fprintf(d->f, "\nRule: %s.\n", ANOM_RULE);
	}
	anom_threads(&a);
	anom_runs(&a, m2);
	anom_uncertain(&a);
	if (json)
		fputs("]}\n", d->f);
}

/* ------------------------------------------------------------- entry -- */
