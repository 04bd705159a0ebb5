/*
** insp_control.c — the client side of a live process's control channel.
**
** A process started with MEMINST=…,control=on listens on the abstract UNIX
** socket "\0meminst-control-PID" (SOCK_STREAM) and serves only its own
** user.  The exchange is one line each way:
**     client: snapshot <absolute-path> <map|status>\n
**             (or, to a process started dormant: start mis|mim\n, stop\n)
**     server: ok <snapshot-id>\n (0 for start, stop)  or  error <message>\n
** then the server closes.  The path is everything between "snapshot " and
** the last space, so it may hold spaces but not a line break.
**
** Abstract names are not protected by file permissions: anyone can bind
** one first.  So the client checks SO_PEERCRED after connecting: the
** listener must be the process asked for, running as our user; otherwise
** the path is never sent.  Each exchange is bounded by a timeout
** (INSPECT_CONTROL_TIMEOUT seconds, default 10).
*/
#include "insp_int.h"

#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int insp_control_timeout(void)
{
	const char *v = getenv("INSPECT_CONTROL_TIMEOUT");
	int64_t t;
	return v && rd_parse_int(v, &t) && t > 0 && t < 86400 ? (int)t : 10;
}

/* Was the process started with control=on (its MEMINST, as it was at its
** exec, in /proc/PID/environ)?  Then telling the user to start it so would
** be wrong: the channel could not be opened, or the program closed it. */
static bool ctl_started_with_control(int64_t pid)
{
	char path[64], env[65536];
	snprintf(path, sizeof path, "/proc/%lld/environ", (long long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, env, sizeof env - 1);
	close(fd);
	for (ssize_t i = 0; i < n;) {
		const char *var = env + i;
		size_t len = strnlen(var, (size_t)(n - i));
		i += (ssize_t)len + 1;
		if (len < 8 || strncmp(var, "MEMINST=", 8) != 0)
			continue;
		static const char *const on[] = {"control=on", "control=1", "control=yes", "control=true"};
		for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
			size_t w = strlen(on[k]);
			for (const char *p = var + 8; (p = strstr(p, on[k])); p += w)
				if ((p == var + 8 || p[-1] == ',') && (p[w] == ',' || p + w == var + len))
					return true;
		}
	}
	return false;
}

static int ctl_unreachable(const struct rd_opts *o, int64_t pid)
{
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		rd_errf(o->err, "inspect: no process %lld\n", (long long)pid);
	else if (ctl_started_with_control(pid))
		rd_errf(o->err, "inspect: process %lld has no meminst control channel although it was "
			"started with control=on: the channel could not be opened, or the program closed it "
			"(its stderr says why; see meminst(7))\n",
			(long long)pid);
	else
		rd_errf(o->err, "inspect: process %lld has no meminst control channel "
			"(start it with MEMINST=mim,control=on)\n", (long long)pid);
	return RD_EXIT_LIVE;
}

static int ctl_fail(const struct rd_opts *o, int64_t pid, const char *why, const char *detail)
{
	rd_errf(o->err, "inspect: process %lld: %s%s%s\n", (long long)pid, why, detail ? ": " : "",
		detail ? detail : "");
	return RD_EXIT_LIVE;
}

/* Connect, bounded by the send timeout (AF_UNIX connect honours it). */
static int ctl_connect(const struct rd_opts *o, int64_t pid, int *fdp)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "meminst-control-%lld", (long long)pid);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ctl_fail(o, pid, "cannot create a socket", strerror(errno));
	struct timeval tv = {.tv_sec = insp_control_timeout()};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, len) != 0) {
		int e = errno;
		close(fd);
		if (e == ECONNREFUSED || e == ENOENT)
			return ctl_unreachable(o, pid);
		return ctl_fail(o, pid, "cannot connect to its control channel",
				e == EAGAIN || e == EINPROGRESS ? "timed out" : strerror(e));
	}
	*fdp = fd;
	return 0;
}

static int ctl_check_peer(const struct rd_opts *o, int64_t pid, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return ctl_fail(o, pid, "cannot check who listens", strerror(errno));
	char why[128];
	if ((int64_t)cred.pid != pid) {
		snprintf(why, sizeof why, "it belongs to pid %d", (int)cred.pid);
		return ctl_fail(o, pid, "refusing: the control socket is not the process's own", why);
	}
	if (cred.uid != geteuid()) {
		snprintf(why, sizeof why, "it runs as uid %u, you as uid %u", (unsigned)cred.uid,
			 (unsigned)geteuid());
		return ctl_fail(o, pid, "only the process's own user may ask it", why);
	}
	return 0;
}

static int ctl_send(const struct rd_opts *o, int64_t pid, int fd, const char *line)
{
	size_t len = strlen(line), done = 0;
	while (done < len) {
		ssize_t k = send(fd, line + done, len - done, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EPIPE || errno == ECONNRESET))
			return 0; /* a refusing server answers and closes first: read that */
		if (k <= 0)
			return ctl_fail(o, pid, "cannot send the request",
					errno == EAGAIN ? "timed out" : strerror(errno));
		done += (size_t)k;
	}
	return 0;
}

/* Read one line (without its '\n') before the deadline. */
static int ctl_recv(const struct rd_opts *o, int64_t pid, int fd, char *buf, size_t cap)
{
	size_t n = 0;
	double deadline = rd_now() + insp_control_timeout();
	while (n + 1 < cap) {
		int left = (int)((deadline - rd_now()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = left > 0 ? poll(&p, 1, left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return ctl_fail(o, pid, "no answer", "timed out");
		ssize_t k = recv(fd, buf + n, cap - 1 - n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return ctl_fail(o, pid, "cannot read the answer", strerror(errno));
		if (k == 0)
			break;
		n += (size_t)k;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = 0;
	char *nl = strchr(buf, '\n');
	if (!nl)
		return ctl_fail(o, pid, "the answer was cut short", n ? buf : "the connection closed");
	*nl = 0;
	return 0;
}

static int ctl_answer(const struct rd_opts *o, int64_t pid, const char *ans, int64_t *id, const char *failed)
{
	if (strncmp(ans, "ok ", 3) == 0 && rd_parse_int(ans + 3, id) && *id >= 0)
		return 0;
	if (strncmp(ans, "error ", 6) == 0)
		return ctl_fail(o, pid, failed, ans + 6);
	char quoted[96];
	snprintf(quoted, sizeof quoted, "'%.80s'", ans);
	return ctl_fail(o, pid, "unexpected answer", quoted);
}

/* One exchange: connect, check the peer, send line, read "ok N". */
static int ctl_request(const struct rd_opts *o, int64_t pid, const char *line, int64_t *id,
		       const char *failed)
{
	if (o->no_control)
		return ctl_unreachable(o, pid);
	int fd = -1;
	int r = ctl_connect(o, pid, &fd);
	if (r)
		return r;
	char ans[512];
	r = ctl_check_peer(o, pid, fd);
	if (!r)
		r = ctl_send(o, pid, fd, line);
	if (!r)
		r = ctl_recv(o, pid, fd, ans, sizeof ans);
	if (!r)
		r = ctl_answer(o, pid, ans, id, failed);
	close(fd);
	return r;
}

int insp_control_snapshot(const struct rd_opts *o, int64_t pid, const char *abs_path,
			  const char *what, int64_t *id)
{
	if (abs_path[0] != '/' || strpbrk(abs_path, "\n\r")) {
		rd_errf(o->err, "inspect: %s: the path must be absolute and on one line\n", abs_path);
		return RD_EXIT_USAGE;
	}
	size_t len = strlen(abs_path) + strlen(what) + 16;
	char *line = rd_xmalloc(len);
	snprintf(line, len, "snapshot %s %s\n", abs_path, what);
	int r = ctl_request(o, pid, line, id, "the snapshot failed");
	free(line);
	if (!r && *id <= 0)
		r = ctl_fail(o, pid, "unexpected answer", "snapshot number 0");
	return r;
}

int insp_control_switch(const struct rd_opts *o, int64_t pid, const char *request)
{
	char line[64];
	int64_t id;
	snprintf(line, sizeof line, "%s\n", request);
	return ctl_request(o, pid, line, &id, "cannot switch meminst");
}

int insp_control_sample(const struct rd_opts *o, int64_t pid, const char *line, int64_t *fd)
{
	size_t len = strlen(line) + 2;
	char *l = rd_xmalloc(len);
	snprintf(l, len, "%s\n", line);
	int r = ctl_request(o, pid, l, fd, "cannot take a CPU profile");
	free(l);
	return r;
}

int insp_control_check(const struct rd_opts *o, int64_t pid)
{
	if (o->no_control)
		return ctl_unreachable(o, pid);
	int fd = -1;
	int r = ctl_connect(o, pid, &fd);
	if (!r)
		r = ctl_check_peer(o, pid, fd);
	if (fd >= 0)
		close(fd);
	return r;
}

/* A new empty file in $TMPDIR (or /tmp) for a live process's snapshot. */
int insp_control_tempfile(const struct rd_opts *o, char *buf, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char abs[PATH_MAX];
	if (!dir || !*dir || !realpath(dir, abs))
		snprintf(abs, sizeof abs, "/tmp");
	if ((size_t)snprintf(buf, len, "%s/inspect-live-XXXXXX", abs) >= len) {
		rd_errf(o->err, "inspect: the temporary directory name is too long\n");
		return RD_EXIT_USAGE;
	}
	int fd = mkstemp(buf);
	if (fd < 0) {
		rd_errf(o->err, "inspect: cannot create a temporary file in %s\n", abs);
		return RD_EXIT_LIVE;
	}
	close(fd);
	return 0;
}

void insp_control_tempfile_remove(const char *path)
{
	char journal[PATH_MAX + 16];
	unlink(path);
	snprintf(journal, sizeof journal, "%s-journal", path);
	unlink(journal);
}
