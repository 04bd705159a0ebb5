/*
** insp_util.c — small services every part of inspect uses: allocation
** that reports running out of memory instead of returning NULL, a growable
** vector, a string pool freed all at once, a monotonic clock, and the width
** of the text output.
**
** inspect is a command-line reader; on out of memory the only sensible
** thing is to stop with one line, so callers never check for NULL.
*/
#include "reader_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void insp_oom(void)
{
	fputs("inspect: out of memory\n", stderr);
	exit(INSP_EXIT_DB);
}

void *insp_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		insp_oom();
	return p;
}

void *insp_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		insp_oom();
	return p;
}

void *insp_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		insp_oom();
	return p;
}

char *insp_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(insp_xmalloc(n), s, n);
}

/* --------------------------------------------------------------- vector -- */

void insp_vec_init(struct insp_vec *vec, size_t elem)
{
	*vec = (struct insp_vec){.elem = elem};
}

void *insp_vec_push(struct insp_vec *vec)
{
	if (vec->n == vec->cap) {
		vec->cap = vec->cap ? vec->cap * 2 : 16;
		if (vec->cap > SIZE_MAX / vec->elem)
			insp_oom();
		vec->v = insp_xrealloc(vec->v, vec->cap * vec->elem);
	}
	void *e = (char *)vec->v + vec->n++ * vec->elem;
	memset(e, 0, vec->elem);
	return e;
}

void insp_vec_free(struct insp_vec *vec)
{
	free(vec->v);
	insp_vec_init(vec, vec->elem);
}

/* ----------------------------------------------------------------- pool -- */

/* Strings are packed into chunks of at least 64 KiB; a longer string gets
** a chunk of its own. */
struct insp_pool_chunk {
	struct insp_pool_chunk *next;
	size_t used, cap;
	char data[];
};

static char *insp_pool_alloc(struct insp_pool *p, size_t n)
{
	struct insp_pool_chunk *c = p->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = insp_xmalloc(sizeof *c + cap);
		c->used = 0;
		c->cap = cap;
		c->next = p->head;
		p->head = c;
	}
	char *s = c->data + c->used;
	c->used += n;
	return s;
}

const char *insp_pool_str(struct insp_pool *p, const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(insp_pool_alloc(p, n), s, n);
}

const char *insp_pool_fmt(struct insp_pool *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "";
	char *s = insp_pool_alloc(p, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void insp_pool_free(struct insp_pool *p)
{
	while (p->head) {
		struct insp_pool_chunk *next = p->head->next;
		free(p->head);
		p->head = next;
	}
}

double insp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int insp_text_columns(FILE *out)
{
	const char *env = getenv("COLUMNS");
	if (env && *env) {
		char *end;
		errno = 0;
		long n = strtol(env, &end, 10);
		if (!*end && !errno && n > 0 && n <= 100000)
			return (int)n;
	}
	struct winsize ws;
	int fd = fileno(out);
	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

bool insp_out_is_input(const struct insp_opts *o, const char *out, const char *in)
{
	struct stat so, si;
	if (!out || !in || !strcmp(out, "-") || stat(out, &so) != 0 || stat(in, &si) != 0 ||
	    so.st_dev != si.st_dev || so.st_ino != si.st_ino)
		return false;
	fprintf(o->err, "inspect: %s: is the file being read; give another -o FILE\n", out);
	return true;
}
