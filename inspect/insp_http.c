/*
** insp_http.c — the small HTTP/1.1 server of `inspect serve`: enough of
** RFC 9112 for the scrapers of profiles (go tool pprof, Grafana Alloy,
** Parca, curl), and nothing a slow or hostile client can use to hang it.
**
**   one request at a time, one per connection (Connection: close): a
**   scrape is a snapshot of the target, so serving them one by one also
**   keeps the target from being asked twice at once;
**   the request head is at most INSP_HTTP_HEAD_MAX bytes and must come
**   within INSP_HTTP_READ_MS of the connection (else 400, or the
**   connection is dropped when nothing came); the answer must be taken
**   within INSP_HTTP_WRITE_MS;
**   GET and HEAD only (405 with Allow); a body is never read;
**   SIGINT and SIGTERM stop the loop between requests: they are blocked
**   while a request is served and taken only in ppoll, so a snapshot
**   being made is finished and its temporary file removed.
**
** Listening addresses are numeric or "localhost"; anything but loopback
** (127.0.0.0/8, ::1) is refused unless the caller allows it.
*/
#include "insp_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define INSP_HTTP_HEAD_MAX 8192
#define INSP_HTTP_READ_MS 5000
#define INSP_HTTP_WRITE_MS 30000

static volatile sig_atomic_t http_stop;
static sigset_t http_wait_mask; /* SIGINT and SIGTERM let through while waiting */

static void http_on_signal(int sig)
{
	http_stop = sig;
}

/* ------------------------------------------------------------ listen -- */

static bool http_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (IN6_IS_ADDR_V4MAPPED(a))
		return a->s6_addr[12] == 127;
	return IN6_IS_ADDR_LOOPBACK(a);
}

/* Split "HOST:PORT" or "[V6]:PORT" (host "" : every address). */
static bool http_split(const char *addr, char *host, size_t hlen, const char **port)
{
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return false;
	const char *h = addr;
	size_t n = (size_t)(colon - addr);
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
		h++, n -= 2;
	if (n >= hlen)
		return false;
	memcpy(host, h, n);
	host[n] = 0;
	*port = colon + 1;
	return atol(*port) <= 65535;
}

int insp_http_listen(const struct rd_opts *o, const char *addr, bool remote, int *fd, char *url, size_t ulen)
{
	char host[256];
	const char *port;
	if (!http_split(addr, host, sizeof host, &port))
		return rd_usage_error(o, "serve", "--listen %s: give HOST:PORT (127.0.0.1:6060, [::1]:6060)", addr);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV | AI_PASSIVE}, *ai;
	if (strcmp(host, "localhost") != 0)
		hints.ai_flags |= AI_NUMERICHOST;
	int e = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
	if (e)
		return rd_usage_error(o, "serve", "--listen %s: %s", addr, gai_strerror(e));
	if (!http_loopback(ai->ai_addr) && !remote) {
		freeaddrinfo(ai);
		return rd_usage_error(o, "serve", "--listen %s is not a loopback address: anyone who reaches it reads "
				      "the process's profiles (add --allow-remote to mean it)", addr);
	}
	int s = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (s >= 0)
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (s < 0 || bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s, 16) != 0) {
		e = errno;
		if (s >= 0)
			close(s);
		freeaddrinfo(ai);
		rd_errf(o->err, "inspect: serve: cannot listen on %s: %s\n", addr, strerror(e));
		return RD_EXIT_USAGE;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char name[INET6_ADDRSTRLEN] = "?";
	int bound = 0;
	if (getsockname(s, (struct sockaddr *)&ss, &sl) == 0) {
		bool v6 = ss.ss_family == AF_INET6;
		const void *in = v6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
				    : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
		inet_ntop(ss.ss_family, in, name, sizeof name);
		bound = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
		snprintf(url, ulen, v6 ? "http://[%s]:%d" : "http://%s:%d", name, bound);
	}
	*fd = s;
	return 0;
}

/* ----------------------------------------------------------- request -- */

/* Read the head (up to the empty line) before the deadline: its length,
** 0 when the client sent nothing, -1 when it is too long, late or cut. */
static long http_read_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	double deadline = rd_now() + INSP_HTTP_READ_MS / 1000.0;
	while (n + 1 < cap) {
		int left = (int)((deadline - rd_now()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return n ? -1 : 0;
		ssize_t k = recv(fd, buf + n, cap - 1 - n, 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return n ? -1 : 0;
		n += (size_t)k;
		buf[n] = 0;
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return (long)n;
	}
	return -1;
}

/* The request line "METHOD TARGET HTTP/1.x": false when it is not one. */
static bool http_parse(char *head, struct insp_http_req *q)
{
	char *eol = strpbrk(head, "\r\n");
	*eol = 0;
	char *sp1 = strchr(head, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 || sp1[1] != '/')
		return false;
	size_t ml = (size_t)(sp1 - head), tl = (size_t)(sp2 - sp1 - 1);
	if (ml == 0 || ml >= sizeof q->method || tl >= sizeof q->path)
		return false;
	memcpy(q->method, head, ml);
	q->method[ml] = 0;
	memcpy(q->path, sp1 + 1, tl);
	q->path[tl] = 0;
	char *qm = strchr(q->path, '?');
	snprintf(q->query, sizeof q->query, "%s", qm ? qm + 1 : "");
	if (qm)
		*qm = 0;
	return true;
}

bool insp_http_param(const struct insp_http_req *q, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = q->query; *p;) {
		size_t n = strcspn(p, "&");
		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			size_t vl = n - kl - 1 < len - 1 ? n - kl - 1 : len - 1;
			memcpy(out, p + kl + 1, vl);
			out[vl] = 0;
			return true;
		}
		p += n + (p[n] == '&');
	}
	return false;
}

/* ---------------------------------------------------------- response -- */

static const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 501: return "Not Implemented";
	default: return "Internal Server Error";
	}
}

static bool http_send_all(int fd, const char *p, size_t n, double deadline)
{
	while (n) {
		int left = (int)((deadline - rd_now()) * 1000);
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		if (left <= 0 || poll(&pf, 1, left) <= 0)
			return false;
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return false;
		p += k, n -= (size_t)k;
	}
	return true;
}

static void http_respond(int fd, bool head_only, const struct insp_http_resp *r)
{
	char h[512], disp[128] = "";
	if (r->filename)
		snprintf(disp, sizeof disp, "Content-Disposition: attachment; filename=\"%s\"\r\n", r->filename);
	int n = snprintf(h, sizeof h,
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s%sContent-Length: %zu\r\n"
			 "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
			 r->status, http_reason(r->status), r->type ? r->type : "text/plain; charset=utf-8", disp,
			 r->status == 405 ? "Allow: GET, HEAD\r\n" : "", r->len);
	double deadline = rd_now() + INSP_HTTP_WRITE_MS / 1000.0;
	if (http_send_all(fd, h, (size_t)n, deadline) && !head_only)
		http_send_all(fd, r->body, r->len, deadline);
}

void insp_http_text(struct insp_http_resp *r, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(r->body);
	r->status = status;
	r->type = NULL, r->filename = NULL;
	r->len = 0;
	if (vasprintf(&r->body, fmt, ap) < 0)
		r->body = NULL;
	else
		r->len = strlen(r->body);
	va_end(ap);
}

/* One connection: its request read, answered, closed. */
static void http_serve_one(int fd, insp_http_handler *h, void *ctx)
{
	char head[INSP_HTTP_HEAD_MAX + 1];
	long n = http_read_head(fd, head, sizeof head);
	if (n == 0)
		return;
	struct insp_http_req q = {.fd = fd};
	struct insp_http_resp r = {0};
	bool head_only = false;
	if (n < 0 || !http_parse(head, &q)) {
		insp_http_text(&r, 400, "bad request: a request line \"GET /debug/pprof/heap HTTP/1.1\" and headers "
			       "within %d bytes and %d s are needed\n", INSP_HTTP_HEAD_MAX, INSP_HTTP_READ_MS / 1000);
	} else if (strcmp(q.method, "GET") != 0 && !(head_only = strcmp(q.method, "HEAD") == 0)) {
		insp_http_text(&r, 405, "method %s not allowed: GET or HEAD\n", q.method);
	} else {
		h(ctx, &q, &r);
	}
	http_respond(fd, head_only, &r);
	free(r.body);
}

/* Close after the answer: what the client still sends (a head cut at
** INSP_HTTP_HEAD_MAX, a body) is read for a moment first, so that the
** kernel does not reset the connection and lose the answer with it. */
static void http_close(int fd)
{
	char junk[4096];
	size_t total = 0;
	shutdown(fd, SHUT_WR);
	double deadline = rd_now() + 1.0;
	while (total < (1u << 20)) {
		int left = (int)((deadline - rd_now()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		ssize_t k = recv(fd, junk, sizeof junk, 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			break;
		total += (size_t)k;
	}
	close(fd);
}

bool insp_http_wait(const struct insp_http_req *q, int64_t ms)
{
	double until = rd_now() + (double)ms / 1000.0;
	while (!http_stop) {
		double left = until - rd_now();
		if (left <= 0)
			return true;
		struct pollfd p = {.fd = q->fd, .events = POLLRDHUP};
		struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
		int n = ppoll(&p, 1, &ts, &http_wait_mask);
		if (n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
			return false; /* the client went away */
	}
	return false;
}

int insp_http_serve(int lfd, insp_http_handler *h, bool (*stop)(void *ctx), void *ctx)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	struct sigaction sa = {.sa_handler = http_on_signal}; /* no SA_RESTART: ppoll returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigset_t wait_mask = old;
	sigdelset(&wait_mask, SIGINT);
	sigdelset(&wait_mask, SIGTERM);
	http_wait_mask = wait_mask;
	while (!http_stop && !stop(ctx)) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		struct timespec ts = {1, 0}; /* stop() is asked again each second */
		if (ppoll(&p, 1, &ts, &wait_mask) <= 0)
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		http_serve_one(fd, h, ctx);
		http_close(fd);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return http_stop;
}
