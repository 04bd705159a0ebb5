/*
** rd_util.c — small services every part of inspect uses: allocation
** that reports running out of memory instead of returning NULL, a growable
** vector, a string pool freed all at once, a monotonic clock, and the width
** of the text output.
**
** inspect is a command-line reader; on out of memory the only sensible
** thing is to stop with one line, so callers never check for NULL.
*/
#include "rd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void rd_oom(void)
{
	fputs("inspect: out of memory\n", stderr);
	exit(RD_EXIT_DB);
}

void *rd_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		rd_oom();
	return p;
}

void *rd_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		rd_oom();
	return p;
}

void *rd_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		rd_oom();
	return p;
}

char *rd_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(rd_xmalloc(n), s, n);
}

/* --------------------------------------------------------------- vector -- */

void rd_vec_init(struct rd_vec *vec, size_t elem)
{
	*vec = (struct rd_vec){.elem = elem};
}

void *rd_vec_push(struct rd_vec *vec)
{
	if (vec->n == vec->cap) {
		vec->cap = vec->cap ? vec->cap * 2 : 16;
		if (vec->cap > SIZE_MAX / vec->elem)
			rd_oom();
		vec->v = rd_xrealloc(vec->v, vec->cap * vec->elem);
	}
	void *e = (char *)vec->v + vec->n++ * vec->elem;
	memset(e, 0, vec->elem);
	return e;
}

void rd_vec_free(struct rd_vec *vec)
{
	free(vec->v);
	rd_vec_init(vec, vec->elem);
}

const void *rd_find_id(const void *v, size_t n, size_t size, int64_t id)
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

size_t rd_count_upto(const void *v, size_t n, size_t size, uint64_t key)
{
	const char *base = v;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (*(const uint64_t *)(base + mid * size) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ----------------------------------------------------------------- pool -- */

/* Strings are packed into chunks of at least 64 KiB; a longer string gets
** a chunk of its own. */
struct rd_pool_chunk {
	struct rd_pool_chunk *next;
	size_t used, cap;
	char data[];
};

static char *rd_pool_alloc(struct rd_pool *p, size_t n)
{
	struct rd_pool_chunk *c = p->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = rd_xmalloc(sizeof *c + cap);
		c->used = 0;
		c->cap = cap;
		c->next = p->head;
		p->head = c;
	}
	char *s = c->data + c->used;
	c->used += n;
	return s;
}

const char *rd_pool_str(struct rd_pool *p, const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(rd_pool_alloc(p, n), s, n);
}

const char *rd_pool_fmt(struct rd_pool *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "";
	char *s = rd_pool_alloc(p, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void rd_pool_free(struct rd_pool *p)
{
	while (p->head) {
		struct rd_pool_chunk *next = p->head->next;
		free(p->head);
		p->head = next;
	}
}

double rd_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int rd_text_columns(FILE *out)
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

bool rd_out_is_input(const struct rd_opts *o, const char *out, const char *in)
{
	struct stat so, si;
	if (!out || !in || !strcmp(out, "-") || stat(out, &so) != 0 || stat(in, &si) != 0 ||
	    so.st_dev != si.st_dev || so.st_ino != si.st_ino)
		return false;
	rd_errf(o->err, "inspect: %s: is the file being read; give another -o FILE\n", out);
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
	struct rd_outfile *of = cookie;
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
	struct rd_outfile *of = cookie;
	int r = close(of->fd);
	if (r && !of->err)
		of->err = errno;
	return r;
}

/* The new file beside target, mode 0666 less the umask as fopen's; or
** target itself (a device, a FIFO; append). */
static FILE *outfile_fopen(struct rd_outfile *of, bool in_place, bool append)
{
	if (in_place) {
		of->fd = open(of->target, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
	} else {
		size_t len = strlen(of->target) + 16;
		of->tmp = rd_xmalloc(len);
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

int rd_outfile_refused(const struct rd_opts *o, const char *out, bool force, bool append,
			 const char *const *ins, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rd_out_is_input(o, out, ins[i]))
			return RD_EXIT_USAGE;
	if (!out || !strcmp(out, "-") || force || append || !outfile_holds_data(out))
		return 0;
	rd_errf(o->err, "inspect: %s exists; give another -o FILE, or -f to replace it\n", out);
	return RD_EXIT_USAGE;
}

int rd_outfile_open(const struct rd_opts *o, struct rd_outfile *of, const char *out, bool force,
		      bool append, const char *const *ins, size_t n)
{
	*of = (struct rd_outfile){.path = out && strcmp(out, "-") ? out : NULL};
	if (!of->path) {
		of->f = o->out;
		return 0;
	}
	int r = rd_outfile_refused(o, out, force, append, ins, n);
	if (r)
		return r;
	struct stat st;
	char *real = realpath(out, NULL); /* a symbolic link: what it points to */
	of->target = real ? real : rd_xstrdup(out);
	of->f = outfile_fopen(of, append || (stat(of->target, &st) == 0 && !S_ISREG(st.st_mode)), append);
	if (!of->f) {
		rd_errf(o->err, "inspect: %s: %s\n", out, strerror(errno));
		free(of->tmp);
		free(of->target);
		of->tmp = of->target = NULL;
		return RD_EXIT_USAGE;
	}
	return 0;
}

int rd_outfile_close(const struct rd_opts *o, struct rd_outfile *of, bool keep)
{
	int r = 0;
	if (!of->f)
		return 0;
	if (of->f == o->out) {
		r = fflush(of->f) || ferror(of->f) ? RD_EXIT_DB : 0;
	} else {
		bool bad = fflush(of->f) != 0 || ferror(of->f);
		bad |= fclose(of->f) != 0;
		if (bad) {
			rd_errf(o->err, "inspect: %s: cannot write: %s\n", of->path,
				strerror(of->err ? of->err : EIO));
			r = RD_EXIT_DB;
		}
		if (of->tmp && keep && !bad && rename(of->tmp, of->target) != 0) {
			rd_errf(o->err, "inspect: %s: %s\n", of->path, strerror(errno));
			r = RD_EXIT_DB;
		}
		if (of->tmp && (r || !keep))
			unlink(of->tmp);
	}
	free(of->tmp);
	free(of->target);
	of->f = NULL, of->tmp = of->target = NULL;
	return r;
}
