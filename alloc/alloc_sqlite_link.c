/*
** alloc_sqlite_link.c — a store's statements run by the launcher
** (<meminst-store.h> says why and how; the launcher's side is
** session/sess_storer.c).
**
** alloc_sqlite.c writes through a link when the launcher listens on
** RUN_DIR/store.sock, and through its own SQLite otherwise (no launcher, an
** older one, a program that switched users or left the launcher's mount
** namespace, a seccomp filter that refuses sockets): the rows and their
** order are the same either way.  A link is one connection: the service
** thread keeps its own from store to store (in its descriptor table, as it
** kept its SQLite connection), any other store connects for itself and
** closes at the end.  Every call here is made under alloc_sqlite.c's store
** lock, so one buffer serves every link of the process.
**
** Rows are not answered (a store of 10 M blocks is ~100 k rows): they are
** gathered in the buffer and sent when it is full or a request needs its
** reply.  A row that fails is reported by the next reply
** (MEMINST_STORE_HELD), so the store fails there, as the row would have in
** the process; what the store then does (ROLLBACK, its clean-up) runs as
** before.  The system calls are raw (syscall(2)): no wrapper of the
** program's sees them, SIGPIPE is not raised (MSG_NOSIGNAL).
*/
#include "alloc_int.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "meminst-store.h"
#include "alloc_sqlite_int.h"

/* The requests not sent yet (under the store lock: one store at a time),
** and the link they are for.  A link's last requests may wait here after
** its store (resets and finalizations, none of which matters to the
** launcher but in order): another link's first request drops them rather
** than send them to the wrong connection. */
static unsigned char link_out[16384];
static size_t link_n;
static const sq_link_t *link_owner;

/* The requests waiting for l, if any, dropped. */
static void link_forget(const sq_link_t *l)
{
	if (link_owner == l)
		link_n = 0, link_owner = NULL;
}

/* The launcher is gone or cannot be reached: no store of this process
** tries it again (each would pay a failed connect). */
static bool link_off;
static bool link_lost; /* ... since the last alloc_sqlite_link_lost */

/* Did a connection fail since the last call?  (The store is then made
** again, in the process.) */
bool alloc_sqlite_link_lost(void)
{
	bool lost = link_lost;
	link_lost = false;
	return lost;
}

/* Connect to the launcher: 0, or -1 (the store runs in the process). */
int alloc_sqlite_link_connect(sq_link_t *l)
{
	*l = (sq_link_t){.fd = -1};
	link_forget(l); /* a new connection: nothing of the old one */
	if (link_off || !alloc_opts.run_dir || alloc_seccomp_refuses(ALLOC_SC_STORE_LINK | ALLOC_SC_FILES))
		return -1;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (alloc_opts.run_dir_len + sizeof "/" MEMINST_STORE_SOCKET > sizeof a.sun_path) {
		link_off = true;
		return -1;
	}
	memcpy(a.sun_path, alloc_opts.run_dir, alloc_opts.run_dir_len);
	memcpy(a.sun_path + alloc_opts.run_dir_len, "/" MEMINST_STORE_SOCKET, sizeof "/" MEMINST_STORE_SOCKET);
	int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		link_off = true;
		return -1;
	}
	fd = alloc_sys_fd_high(fd); /* out of the way of the program's next open */
	long rc;
	do
		rc = syscall(SYS_connect, fd, &a, sizeof a);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		/* none listens (ENOENT, ECONNREFUSED: no launcher, or it has
		** ended), or not for us (EACCES: another user's directory) */
		link_off = errno != EAGAIN;
		syscall(SYS_close, fd);
		return -1;
	}
	l->fd = fd;
	return 0;
}

void alloc_sqlite_link_close(sq_link_t *l)
{
	if (l->fd >= 0)
		syscall(SYS_close, l->fd);
	l->fd = -1;
	link_forget(l);
}

/* The connection failed (the launcher ended, or was killed): this request
** and every later one of the store fail; later stores run in the process. */
static int link_broken(sq_link_t *l)
{
	if (!l->broken) {
		l->broken = true;
		l->rc = 10 /* SQLITE_IOERR */, l->ext = 10;
		alloc_fmt(l->msg, sizeof l->msg, "the launcher's store service ended");
		link_off = true;
		link_lost = true;
	}
	return -1;
}

static int link_send(sq_link_t *l, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		long w = syscall(SYS_sendto, l->fd, c, n, MSG_NOSIGNAL, NULL, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return link_broken(l);
		c += w, n -= (size_t)w;
	}
	return 0;
}

static int link_flush(sq_link_t *l)
{
	size_t n = link_owner == l ? link_n : 0;
	link_n = 0;
	return l->broken ? -1 : n ? link_send(l, link_out, n) : 0;
}

static int link_recv(sq_link_t *l, void *p, size_t n)
{
	char *c = p;
	while (n) {
		long r = syscall(SYS_recvfrom, l->fd, c, n, 0, NULL, NULL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return link_broken(l);
		c += r, n -= (size_t)r;
	}
	return 0;
}

/* The buffer is l's from now on. */
static void link_take(const sq_link_t *l)
{
	if (link_owner != l)
		link_n = 0, link_owner = l;
}

/* Room for n bytes of a request in the buffer (sending what is there). */
static int link_room(sq_link_t *l, size_t n)
{
	return link_n + n > sizeof link_out ? link_flush(l) : l->broken ? -1 : 0;
}

static void link_put(const void *p, size_t n)
{
	memcpy(link_out + link_n, p, n);
	link_n += n;
}

/* A request of `len` bytes after its header: the header, then the bytes of
** p (a request larger than the buffer goes out straight from p). */
static int link_request(sq_link_t *l, uint32_t op, uint32_t stmt, const void *p, size_t len)
{
	struct meminst_store_req h = {.len = (uint32_t)len, .op = op, .stmt = stmt};
	link_take(l);
	if (link_room(l, sizeof h + len) < 0)
		return -1;
	if (sizeof h + len > sizeof link_out)
		return link_send(l, &h, sizeof h) < 0 ? -1 : link_send(l, p, len);
	link_put(&h, sizeof h);
	if (len) /* (p is NULL for a request without text) */
		link_put(p, len);
	return 0;
}

/* Send what is gathered and read the reply: SQLite's result code (its
** message in l->msg), or -1 when the connection failed (l->rc says
** SQLITE_IOERR).  A reply that reports an earlier row's failure says so
** in l->held. */
static int link_reply(sq_link_t *l, int64_t *value, char *text, size_t textlen)
{
	struct meminst_store_reply r;
	char msg[MEMINST_STORE_TEXT_MAX];
	if (link_flush(l) < 0 || link_recv(l, &r, sizeof r) < 0)
		return -1;
	if (r.len > sizeof msg || link_recv(l, msg, r.len) < 0)
		return link_broken(l);
	l->rc = r.rc, l->ext = r.ext;
	l->held = r.flags & MEMINST_STORE_HELD;
	char *to = text && !l->held ? text : l->msg;
	size_t room = text && !l->held ? textlen : sizeof l->msg;
	size_t n = r.len < room ? r.len : room - 1;
	memcpy(to, msg, n);
	to[n] = 0;
	if (value)
		*value = r.value;
	return r.rc;
}

/* Requests whose replies are read later, in order (alloc_sqlite_link_read):
** several in one exchange.  OPEN takes a path, EXEC and PREPARE SQL, the
** others none (NULL). */
int alloc_sqlite_link_send(sq_link_t *l, uint32_t op, uint32_t stmt, const char *text)
{
	return link_request(l, op, stmt, text, text ? strlen(text) + 1 : 0);
}

int alloc_sqlite_link_read(sq_link_t *l, int64_t *value)
{
	return link_reply(l, value, NULL, 0);
}

/* A request and its reply: SQLite's result code, -1 when the connection
** failed; QUERY's first column in *value. */
int alloc_sqlite_link_call(sq_link_t *l, uint32_t op, uint32_t stmt, const char *text, int64_t *value)
{
	return alloc_sqlite_link_send(l, op, stmt, text) < 0 ? -1 : link_reply(l, value, NULL, 0);
}

/* A statement's number, or 0 (l->rc and l->msg say why). */
uint32_t alloc_sqlite_link_prepare(sq_link_t *l, const char *sql)
{
	uint32_t st = ++l->stmts;
	return alloc_sqlite_link_call(l, MEMINST_STORE_PREPARE, st, sql, NULL) == 0 /* SQLITE_OK */ ? st : 0;
}

/* The rollback journal's name into buf ("" when there is none). */
void alloc_sqlite_link_journal(sq_link_t *l, char *buf, size_t len)
{
	buf[0] = 0;
	if (link_request(l, MEMINST_STORE_JOURNAL, 0, NULL, 0) == 0)
		link_reply(l, NULL, buf, len);
}

/* A row's value as sent: its kind, then an int64, or a length and bytes. */
struct link_val {
	char kind; /* 'i' 's' 'n' 'b' */
	int64_t i;
	const void *p;
	uint32_t n;
};

static size_t link_val_head(const struct link_val *v, unsigned char *to)
{
	to[0] = (unsigned char)v->kind;
	if (v->kind == 'i')
		memcpy(to + 1, &v->i, 8);
	else if (v->kind != 'n')
		memcpy(to + 1, &v->n, 4);
	return v->kind == 'i' ? 9 : v->kind == 'n' ? 1 : 5;
}

/* A row, queued: 0, or -1 when the connection has failed.  fmt as
** alloc_sqlite_row's (at most 16 values); 'b' takes a pointer and a size_t. */
int alloc_sqlite_link_row(sq_link_t *l, uint32_t stmt, const char *fmt, va_list ap)
{
	struct link_val v[16];
	size_t nv = 0, len = 0;
	for (; fmt[nv] && nv < 16; nv++) {
		struct link_val *x = &v[nv];
		*x = (struct link_val){.kind = fmt[nv]};
		if (x->kind == 'i') {
			x->i = va_arg(ap, int64_t);
			len += 9;
			continue;
		}
		if (x->kind == 's') {
			x->p = va_arg(ap, const char *);
			x->n = x->p ? (uint32_t)strlen(x->p) : 0;
			x->kind = x->p ? 's' : 'n';
		} else {
			x->p = va_arg(ap, const void *);
			x->n = (uint32_t)va_arg(ap, size_t);
		}
		len += x->kind == 'n' ? 1 : 5 + x->n;
	}
	struct meminst_store_req req = {.len = (uint32_t)len, .op = MEMINST_STORE_ROW, .stmt = stmt};
	link_take(l);
	if (link_room(l, sizeof req + len) < 0)
		return -1;
	/* a row larger than the buffer (a block chunk) goes out straight */
	bool straight = sizeof req + len > sizeof link_out;
	if (!straight)
		link_put(&req, sizeof req);
	else if (link_send(l, &req, sizeof req) < 0)
		return -1;
	for (size_t i = 0; i < nv; i++) {
		unsigned char head[9];
		size_t k = link_val_head(&v[i], head), n = v[i].kind == 'n' ? 0 : v[i].n;
		if (!straight) {
			link_put(head, k);
			if (n)
				link_put(v[i].p, n);
		} else if (link_send(l, head, k) < 0 || (n && link_send(l, v[i].p, n) < 0)) {
			return -1;
		}
	}
	return 0;
}
