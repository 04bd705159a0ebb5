/*
** sess_storer.c — the launcher runs the processes' snapshot stores
** (<meminst-store.h>: why, and the requests; libmeminst's side is
** alloc/alloc_sqlite_link.c).
**
** A socket in the private parts directory (0700: only the launcher's user
** reaches it) is listened on while the program runs; each connection gets
** a thread of its own, with one SQLite connection, that runs the requests
** as they come, in order, and ends when the process closes the socket or
** ends (an open transaction is rolled back, as the journal would have done
** for a process killed in the middle of a store in itself).  Nothing here
** judges the file: libmeminst has already made it or checked it (owner,
** type, no link) and checks again that its name leads to the file opened.
** The threads block every signal: the main thread forwards signals to the
** program, and a store past ulimit -f gets EFBIG (the store fails and is
** rolled back, as in the process) instead of SIGXFSZ killing the launcher.
** Requests that do not parse end the connection: libmeminst then stores
** in the process.
*/
#include "sess_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "meminst-store.h"

#define STORER_STACK (512 * 1024)
#define STORER_REQ_MAX (512u << 20) /* a request's bytes, at most (a block chunk is < 1 MiB) */

static int storer_fd = -1;
static char storer_path[sizeof ((struct sockaddr_un *)0)->sun_path];

/* One connection: its SQLite connection and statements, and the first
** row's failure not reported yet. */
struct storer_conn {
	int fd;
	sqlite3 *db;
	sqlite3_stmt **st;
	uint32_t nst;
	bool held;
	struct meminst_store_reply held_reply;
	char held_msg[MEMINST_STORE_TEXT_MAX];
	/* what was read and not used yet: in[at, len); a store's rows come
	** many to a send, and are read many to a read(2) */
	unsigned char *in;
	size_t at, len, cap;
};

#define STORER_IN_MIN (64u << 10)

/* n bytes of input in c->in + c->at, reading as needed: false at the end
** of the connection (or without memory for a request that large). */
static bool storer_fill(struct storer_conn *c, size_t n)
{
	if (c->len - c->at >= n)
		return true;
	if (c->at) { /* what is left to the front */
		memmove(c->in, c->in + c->at, c->len - c->at);
		c->len -= c->at, c->at = 0;
	}
	if (n > c->cap) {
		size_t cap = n > STORER_IN_MIN ? n : STORER_IN_MIN;
		unsigned char *b = realloc(c->in, cap);
		if (!b)
			return false;
		c->in = b, c->cap = cap;
	}
	while (c->len < n) {
		ssize_t r = read(c->fd, c->in + c->len, c->cap - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c->len += (size_t)r;
	}
	return true;
}

static bool storer_write(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w, n -= (size_t)w;
	}
	return true;
}

static bool storer_reply(struct storer_conn *c, int rc, int64_t value, const char *text)
{
	struct meminst_store_reply r = {.rc = rc, .value = value};
	size_t n = text ? strnlen(text, MEMINST_STORE_TEXT_MAX - 1) : 0;
	if (c->held) { /* an earlier row failed: that is the answer */
		r = c->held_reply;
		text = c->held_msg;
		n = strlen(text);
		c->held = false;
	} else if (c->db && rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
		r.ext = sqlite3_extended_errcode(c->db);
	}
	r.len = (uint32_t)n;
	return storer_write(c->fd, &r, sizeof r) && storer_write(c->fd, text, n);
}

/* The statement numbered n (1, 2, ...), or NULL. */
static sqlite3_stmt *storer_stmt(struct storer_conn *c, uint32_t n)
{
	return n >= 1 && n <= c->nst ? c->st[n - 1] : NULL;
}

static bool storer_prepare(struct storer_conn *c, uint32_t n, const char *sql)
{
	if (n < 1 || n > (1u << 20))
		return false;
	if (n > c->nst) {
		sqlite3_stmt **st = realloc(c->st, n * 2 * sizeof *st);
		if (!st)
			return false;
		memset(st + c->nst, 0, (n * 2 - c->nst) * sizeof *st);
		c->st = st, c->nst = n * 2;
	}
	sqlite3_finalize(c->st[n - 1]);
	c->st[n - 1] = NULL;
	int rc = sqlite3_prepare_v2(c->db, sql, -1, &c->st[n - 1], NULL);
	return storer_reply(c, rc, 0, rc == SQLITE_OK ? NULL : sqlite3_errmsg(c->db));
}

/* Bind a row's values (p, n bytes) to st: false when they do not parse. */
static bool storer_bind(sqlite3_stmt *st, const unsigned char *p, size_t n)
{
	int col = 1;
	for (size_t at = 0; at < n; col++) {
		unsigned char kind = p[at++];
		uint32_t len = 0;
		int64_t v;
		if (kind == 'n') {
			sqlite3_bind_null(st, col);
			continue;
		}
		if (kind == 'i') {
			if (n - at < 8)
				return false;
			memcpy(&v, p + at, 8);
			sqlite3_bind_int64(st, col, v);
			at += 8;
			continue;
		}
		if ((kind != 's' && kind != 'b') || n - at < 4)
			return false;
		memcpy(&len, p + at, 4);
		at += 4;
		if (n - at < len)
			return false;
		if (kind == 's')
			sqlite3_bind_text(st, col, (const char *)p + at, (int)len, SQLITE_STATIC);
		else
			sqlite3_bind_blob(st, col, p + at, (int)len, SQLITE_STATIC);
		at += len;
	}
	return true;
}

/* A row: a failure is kept for the next reply; the rows after it are not run. */
static bool storer_row(struct storer_conn *c, sqlite3_stmt *st, const unsigned char *p, size_t n)
{
	if (!st || !storer_bind(st, p, n))
		return false;
	int rc = c->held ? SQLITE_DONE : sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		c->held = true;
		c->held_reply = (struct meminst_store_reply){.rc = rc, .ext = sqlite3_extended_errcode(c->db),
							     .flags = MEMINST_STORE_HELD};
		snprintf(c->held_msg, sizeof c->held_msg, "%s", sqlite3_errmsg(c->db));
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st); /* bound in place: the input buffer moves */
	return true;
}

static bool storer_query(struct storer_conn *c, sqlite3_stmt *st)
{
	if (!st)
		return false;
	int rc = c->held ? SQLITE_OK : sqlite3_step(st);
	int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	const char *msg = rc == SQLITE_ROW || rc == SQLITE_DONE ? NULL : sqlite3_errmsg(c->db);
	bool ok = storer_reply(c, rc, v, msg);
	sqlite3_reset(st);
	return ok;
}

static bool storer_open(struct storer_conn *c, const char *path)
{
	if (c->db)
		return false;
	int rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	return storer_reply(c, rc, 0, rc == SQLITE_OK ? NULL : c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
}

static bool storer_journal(struct storer_conn *c)
{
	const char *j = sqlite3_filename_journal(sqlite3_db_filename(c->db, "main"));
	bool held = c->held; /* a name, not an answer: the failure waits for one */
	c->held = false;
	bool ok = storer_reply(c, SQLITE_OK, 0, j ? j : "");
	c->held = held;
	return ok;
}

/* One request, its bytes at p: false ends the connection. */
static bool storer_request(struct storer_conn *c, const struct meminst_store_req *h, const unsigned char *p)
{
	const char *text = (const char *)p;
	bool is_text = h->len && p[h->len - 1] == 0;
	if (h->op == MEMINST_STORE_OPEN)
		return is_text && storer_open(c, text);
	if (!c->db)
		return false;
	sqlite3_stmt *st = storer_stmt(c, h->stmt);
	int rc;
	switch (h->op) {
	case MEMINST_STORE_EXEC:
		if (!is_text)
			return false;
		rc = c->held ? SQLITE_OK : sqlite3_exec(c->db, text, NULL, NULL, NULL);
		return storer_reply(c, rc, 0, rc == SQLITE_OK ? NULL : sqlite3_errmsg(c->db));
	case MEMINST_STORE_PREPARE:
		if (!is_text)
			return false;
		return c->held ? storer_reply(c, SQLITE_OK, 0, NULL) : storer_prepare(c, h->stmt, text);
	case MEMINST_STORE_ROW:
		return storer_row(c, st, p, h->len);
	case MEMINST_STORE_QUERY:
		return storer_query(c, st);
	case MEMINST_STORE_RESET:
		if (st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
		}
		return st != NULL;
	case MEMINST_STORE_FINALIZE:
		if (st) {
			sqlite3_finalize(st);
			c->st[h->stmt - 1] = NULL;
		}
		return st != NULL;
	case MEMINST_STORE_BUSY:
		sqlite3_busy_timeout(c->db, (int)h->stmt);
		return true;
	case MEMINST_STORE_JOURNAL:
		return storer_journal(c);
	default:
		return false;
	}
}

static void *storer_serve(void *arg)
{
	struct storer_conn c = {.fd = (int)(intptr_t)arg};
	struct meminst_store_req h;
	while (storer_fill(&c, sizeof h)) {
		memcpy(&h, c.in + c.at, sizeof h);
		if (h.len > STORER_REQ_MAX || !storer_fill(&c, sizeof h + h.len))
			break;
		c.at += sizeof h + h.len; /* the request's bytes stay until the next fill */
		if (!storer_request(&c, &h, c.in + c.at - h.len))
			break;
	}
	for (uint32_t i = 0; i < c.nst; i++)
		sqlite3_finalize(c.st[i]);
	sqlite3_close(c.db); /* an open transaction is rolled back */
	close(c.fd);
	free(c.st);
	free(c.in);
	return NULL;
}

static void *storer_accept(void *arg)
{
	(void)arg;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, STORER_STACK);
	for (;;) {
		int fd = accept4(storer_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS)) {
			usleep(10000); /* the process waiting stores in itself when refused */
			continue;
		}
		if (fd < 0)
			break; /* shut down: sess_storer_stop */
		pthread_t t;
		if (pthread_create(&t, &attr, storer_serve, (void *)(intptr_t)fd) != 0)
			close(fd); /* that process stores in itself */
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

/* Listen in the parts directory.  Without it (a path too long for a
** socket's name, no socket, no thread) the processes store in themselves,
** as they would without the launcher: nothing is said. */
void sess_storer_start(const char *parts)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if ((size_t)snprintf(a.sun_path, sizeof a.sun_path, "%s/%s", parts, MEMINST_STORE_SOCKET) >=
	    sizeof a.sun_path)
		return;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* a connection is one thread's: no mutex of SQLite's around each call,
	** no global count of its memory (before SQLite's first use; refused,
	** harmlessly, after it) */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 128) < 0) {
		close(fd);
		unlink(a.sun_path);
		return;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* its threads inherit the mask */
	storer_fd = fd;
	pthread_t t;
	if (pthread_create(&t, NULL, storer_accept, NULL) != 0) {
		close(fd);
		unlink(a.sun_path);
		storer_fd = -1;
	} else {
		pthread_detach(t);
		memcpy(storer_path, a.sun_path, sizeof storer_path);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The program has ended: no new connection (a process still running, a
** daemon, stores in itself from its next connection on); the ones open go
** on while the launcher lives. */
void sess_storer_stop(void)
{
	if (storer_fd < 0)
		return;
	unlink(storer_path);
	shutdown(storer_fd, SHUT_RDWR); /* wakes accept */
}
