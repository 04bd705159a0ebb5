/*
** alloc_control.c — the control channel's connections, served by the
** service thread (alloc_service.c owns the listening socket and the poll
** loop; this file, what comes in on each connection).
**
** Request, one line: "snapshot <absolute-path> <map|status|leaks>", or in
** a process started dormant "start mis|mim", "stop" and "sample
** start|stop" (alloc_switch.c); answer, one line: "ok <snapshot-number>"
** (0 for the others) or "error <message>".
*/
#include "alloc_int.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/*
** Control connections are served by the service thread without ever
** waiting on one: a client's uid is checked as soon as it is accepted
** (another user is answered and dropped at once), each connection has one
** deadline for its whole request line, at most ALLOC_CONTROL_CONN_MAX are open (a
** new one evicts the oldest, so idle clients cannot lock a real one out),
** and the lock the exit flush takes is held only while a complete request
** is carried out.  So no client can delay the program's exit, its other
** snapshots or its allocations.
*/
#define SVC_REQUEST_MS 2000
#define SVC_LINE_MAX 4200

static struct svc_conn {
	int fd;            /* -1: free */
	size_t len;
	int64_t deadline;  /* CLOCK_MONOTONIC ns */
	int64_t since;     /* accepted at: the oldest is evicted first */
} svc_conn[ALLOC_CONTROL_CONN_MAX];

/* The slots' request lines apart: marking the slots free touched all eight
** lines' pages (32 KiB resident in every process, issue 29). */
static char svc_conn_line[ALLOC_CONTROL_CONN_MAX][SVC_LINE_MAX];

/* One answer line: "ok N" when msg is NULL, else "error MSG".  Never waits
** (the answer fits in an empty socket buffer; a client that lets its own
** buffer fill loses its answer), never raises SIGPIPE. */
static void svc_answer(int fd, const char *msg, int id)
{
	char line[600];
	int len = msg ? alloc_fmt(line, sizeof line, "error %s\n", msg)
		      : alloc_fmt(line, sizeof line, "ok %d\n", id);
	if (len > (int)sizeof line - 1)
		len = sizeof line - 1;
	if (send(fd, line, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* the client is gone or not reading: nothing more to do */
	}
}

static void svc_conn_close(struct svc_conn *c, const char *msg)
{
	if (msg)
		svc_answer(c->fd, msg, 0);
	close(c->fd);
	c->fd = -1;
}

/* Carry out one complete request line (NUL-terminated, without its '\n'). */
static void svc_control_request(int fd, char *line)
{
	char err[512], *path = line + 9, *content;
	int sw = alloc_switch_request(line, err, sizeof err), sfd = 0; /* start mis|mim, stop */
	if (sw < 0)
		sw = alloc_switch_sample_request(line, err, sizeof err, &sfd); /* sample start|stop */
	if (sw >= 0) {
		svc_answer(fd, sw ? err : NULL, sfd);
		return;
	}
	if (strncmp(line, "snapshot /", 10) != 0 || !(content = strrchr(line, ' ')) || content <= path) {
		svc_answer(fd, "bad request (expected: snapshot <absolute-path> <map|status|leaks>)", 0);
		return;
	}
	*content++ = 0;
	bool leaks = strcmp(content, "leaks") == 0, with_map = leaks || strcmp(content, "map") == 0;
	if (!with_map && strcmp(content, "status") != 0) {
		svc_answer(fd, "bad request: content is map, status or leaks", 0);
		return;
	}
	if (alloc_mode == MEMINST_MODE_OFF) {
		svc_answer(fd, "meminst is dormant in this process: nothing is counted until it is switched on "
			   "(inspect start --pid PID)", 0);
		return;
	}
	if (leaks && alloc_mode != MEMINST_MODE_MIM) {
		svc_answer(fd, "a leak check needs mode mim (the process runs in mis)", 0);
		return;
	}
	alloc_service_hold();
	alloc_snap_t *im = leaks ? alloc_snap_capture_leaks("control") : alloc_snap_capture_to(with_map, "control", path);
	alloc_sqlite_no_wait(false); /* a client waits for this one */
	const char *why = im ? err : errno == EIO ? "cannot write the capture's temporary file" : "out of memory";
	int id = im ? alloc_sqlite_store(path, im, false, err, sizeof err) : -1;
	alloc_sqlite_no_wait(true);
	alloc_snap_free(im);
	alloc_service_release();
	svc_answer(fd, id < 0 ? why : NULL, id);
}

/* A new connection: refused at once unless the peer is our user. */
void alloc_control_accept(int listen_fd)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct ucred cred;
	socklen_t clen = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.uid != getuid()) {
		svc_answer(fd, "permission denied: not the same user", 0);
		close(fd);
		return;
	}
	struct svc_conn *slot = NULL;
	for (int i = 0; i < ALLOC_CONTROL_CONN_MAX; i++)
		if (svc_conn[i].fd < 0) {
			slot = &svc_conn[i];
			break;
		} else if (!slot || svc_conn[i].since < slot->since) {
			slot = &svc_conn[i];
		}
	if (slot->fd >= 0)
		svc_conn_close(slot, "dropped: too many control connections at once");
	int64_t now = alloc_snap_now(CLOCK_MONOTONIC);
	*slot = (struct svc_conn){.fd = fd, .since = now, .deadline = now + SVC_REQUEST_MS * 1000000ll};
}

/* Bytes on a connection: read what is there; a complete line is served. */
static void svc_conn_read(struct svc_conn *c)
{
	char *line = svc_conn_line[c - svc_conn];
	ssize_t n = read(c->fd, line + c->len, SVC_LINE_MAX - 1 - c->len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		svc_conn_close(c, NULL);
		return;
	}
	c->len += (size_t)n;
	char *nl = memchr(line, '\n', c->len);
	if (!nl && c->len == SVC_LINE_MAX - 1) {
		svc_conn_close(c, "bad request: line too long");
		return;
	}
	if (!nl)
		return;
	*nl = 0;
	svc_control_request(c->fd, line);
	svc_conn_close(c, NULL);
}

/* Drop connections past their deadline; the poll timeout to the next one. */
int alloc_control_expire(int timeout)
{
	int64_t now = alloc_snap_now(CLOCK_MONOTONIC);
	for (int i = 0; i < ALLOC_CONTROL_CONN_MAX; i++) {
		struct svc_conn *c = &svc_conn[i];
		if (c->fd < 0)
			continue;
		if (now >= c->deadline) {
			svc_conn_close(c, "timeout: no complete request line within 2 s");
			continue;
		}
		int left = (int)((c->deadline - now + 999999) / 1000000);
		if (timeout < 0 || left < timeout)
			timeout = left;
	}
	return timeout;
}

int alloc_control_open(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (alloc_seccomp_refuses(ALLOC_SC_FILES)) /* a filter's ENOSYS, said once */
		return -1;
	int n = alloc_fmt(a.sun_path + 1, sizeof a.sun_path - 1, "meminst-control-%d", alloc_ids_name(NULL));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	const char *call = fd < 0 ? "socket" : "bind";
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0 ||
	    (call = "listen", listen(fd, 2 * ALLOC_CONTROL_CONN_MAX)) != 0) {
		if (!alloc_seccomp_enosys(call, errno))
			alloc_log("control=on: cannot open the control channel: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Connection i of the poll set (-1: a free slot). */
int alloc_control_fd(int i)
{
	return svc_conn[i].fd;
}

/* Connection i is readable (`ours`), or the program closed its number. */
void alloc_control_ready(int i, bool ours)
{
	if (ours)
		svc_conn_read(&svc_conn[i]);
	else /* the number is not ours any more: nothing to close */
		svc_conn[i].fd = -1;
}

/* Every slot free; `close_them`: the connections' descriptors are in the
** program's table, closed here (a fork's child, a launch). */
void alloc_control_forget(bool close_them)
{
	for (int i = 0; i < ALLOC_CONTROL_CONN_MAX; i++) {
		if (svc_conn[i].fd >= 0 && close_them)
			close(svc_conn[i].fd);
		svc_conn[i].fd = -1;
	}
}
