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
#include <fcntl.h>
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

const void *insp_find_id(const void *v, size_t n, size_t size, int64_t id)
{
	const char *base = v;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (*(const int64_t *)(base + mid * size) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && *(const int64_t *)(base + lo * size) == id ? base + lo * size : NULL;
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
	insp_errf(o->err, "inspect: %s: is the file being read; give another -o FILE\n", out);
	return true;
}

/* ------------------------------------------------------------- output -- */

static bool outfile_holds_data(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* Writes go through here so that the first failure's errno is kept for
** the message (stdio keeps only that one happened). */
static ssize_t outfile_write(void *cookie, const char *buf, size_t n)
{
	struct insp_outfile *of = cookie;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(of->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!of->err)
				of->err = w < 0 ? errno : ENOSPC;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int outfile_close(void *cookie)
{
	struct insp_outfile *of = cookie;
	int r = close(of->fd);
	if (r && !of->err)
		of->err = errno;
	return r;
}

/* The new file beside target, mode 0666 less the umask as fopen's; or
** target itself (a device, a FIFO; append). */
static FILE *outfile_fopen(struct insp_outfile *of, bool in_place, bool append)
{
	if (in_place) {
		of->fd = open(of->target, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
	} else {
		size_t len = strlen(of->target) + 16;
		of->tmp = insp_xmalloc(len);
		snprintf(of->tmp, len, "%s.XXXXXX", of->target);
		of->fd = mkostemp(of->tmp, O_CLOEXEC);
		if (of->fd >= 0) {
			mode_t mask = umask(0);
			umask(mask);
			fchmod(of->fd, 0666 & ~mask);
		}
	}
	if (of->fd < 0)
		return NULL;
	FILE *f = fopencookie(of, "w", (cookie_io_functions_t){.write = outfile_write, .close = outfile_close});
	if (!f) {
		close(of->fd);
		if (of->tmp)
			unlink(of->tmp);
	}
	return f;
}

int insp_outfile_refused(const struct insp_opts *o, const char *out, bool force, bool append,
			 const char *const *ins, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (insp_out_is_input(o, out, ins[i]))
			return INSP_EXIT_USAGE;
	if (!out || !strcmp(out, "-") || force || append || !outfile_holds_data(out))
		return 0;
	insp_errf(o->err, "inspect: %s exists; give another -o FILE, or -f to replace it\n", out);
	return INSP_EXIT_USAGE;
}

int insp_outfile_open(const struct insp_opts *o, struct insp_outfile *of, const char *out, bool force,
		      bool append, const char *const *ins, size_t n)
{
	*of = (struct insp_outfile){.path = out && strcmp(out, "-") ? out : NULL};
	if (!of->path) {
		of->f = o->out;
		return 0;
	}
	int r = insp_outfile_refused(o, out, force, append, ins, n);
	if (r)
		return r;
	struct stat st;
	char *real = realpath(out, NULL); /* a symbolic link: what it points to */
	of->target = real ? real : insp_xstrdup(out);
	of->f = outfile_fopen(of, append || (stat(of->target, &st) == 0 && !S_ISREG(st.st_mode)), append);
	if (!of->f) {
		insp_errf(o->err, "inspect: %s: %s\n", out, strerror(errno));
		free(of->tmp);
		free(of->target);
		of->tmp = of->target = NULL;
		return INSP_EXIT_USAGE;
	}
	return 0;
}

int insp_outfile_close(const struct insp_opts *o, struct insp_outfile *of, bool keep)
{
	int r = 0;
	if (!of->f)
		return 0;
	if (of->f == o->out) {
		r = fflush(of->f) || ferror(of->f) ? INSP_EXIT_DB : 0;
	} else {
		bool bad = fflush(of->f) != 0 || ferror(of->f);
		bad |= fclose(of->f) != 0;
		if (bad) {
			insp_errf(o->err, "inspect: %s: cannot write: %s\n", of->path,
				strerror(of->err ? of->err : EIO));
			r = INSP_EXIT_DB;
		}
		if (of->tmp && keep && !bad && rename(of->tmp, of->target) != 0) {
			insp_errf(o->err, "inspect: %s: %s\n", of->path, strerror(errno));
			r = INSP_EXIT_DB;
		}
		if (of->tmp && (r || !keep))
			unlink(of->tmp);
	}
	free(of->tmp);
	free(of->target);
	of->f = NULL, of->tmp = of->target = NULL;
	return r;
}
