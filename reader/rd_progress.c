/*
** rd_progress.c — a progress bar on stderr for long work.
**
** Only when stderr is a terminal (main decides, with isatty) and only once
** the work has run for a second: short commands and redirected output
** never see it.  The bar is redrawn at most ten times a second and erased
** at the end, so it never mixes with the result on stdout.
*/
#include "rd_int.h"

void rd_progress_start(struct rd_progress *p, const struct rd_opts *o,
			 const char *what, uint64_t total)
{
	*p = (struct rd_progress){.err = o->err, .on = o->progress, .what = what, .total = total};
	if (p->on)
		p->t0 = p->last = rd_now();
}

static void progress_draw(struct rd_progress *p, uint64_t done)
{
	enum { WIDTH = 30 };
	unsigned fill = p->total ? (unsigned)(done >= p->total ? WIDTH : done * WIDTH / p->total) : 0;
	char bar[WIDTH + 1];
	for (unsigned i = 0; i < WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[WIDTH] = 0;
	if (p->total)
		fprintf(p->err, "\r%s [%s] %3u%%", p->what, bar,
			(unsigned)(done >= p->total ? 100 : done * 100 / p->total));
	else
		fprintf(p->err, "\r%s: %llu rows", p->what, (unsigned long long)done);
	fflush(p->err);
	p->shown = true;
}

void rd_progress_step(struct rd_progress *p, uint64_t done)
{
	if (!p || !p->on || (done & 0xffff))
		return;
	double now = rd_now();
	if (now - p->t0 < 1.0 || now - p->last < 0.1)
		return;
	p->last = now;
	progress_draw(p, done);
}

void rd_progress_end(struct rd_progress *p)
{
	if (p && p->shown) {
		fprintf(p->err, "\r%*s\r", 60, "");
		fflush(p->err);
	}
	if (p)
		p->shown = false;
}
