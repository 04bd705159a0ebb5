/*
** alloc_symbolise.c — the names of print=types, from a helper process.
**
** libmeminst names a site by dladdr only (a symbol and an offset): reading
** debug information (libdw) inside the program at its exit would allocate
** through the allocator being reported on, run from a destructor while
** other threads may hold the loader's lock, and a damaged debug file could
** crash the program's last step.  So, as heaptrack hands its trace to
** heaptrack_interpret, the table's sites go to meminst-symbolise (inspect/
** tool_symbolise.c), a program of the package that names them as
** inspect does: the user's file:line in an inline chain, template
** arguments folded.  The request is the modules loaded (path, load bias,
** build-id) and each type's frames; the answer a name, a location and a
** chain per type.
**
** The program must not notice.  The helper is not the program's child
** (an exec makes any process's exit signal SIGCHLD again): a keeper, a
** copy of the program made by a clone whose exit signal is 0 (no SIGCHLD,
** and only a wait with __WALL sees it, so the program's own wait(-1) never
** reaps it), starts the helper and reaps it; nothing of the program runs
** in the keeper (every signal blocked, every handler back at its default)
** and neither keeps any of the program's descriptors.  Our descriptors
** sit high and are closed before returning; writes never raise SIGPIPE
** (MSG_NOSIGNAL); errno is kept.  The wait is bounded
** (MEMINST_SYMBOLISER_TIMEOUT_MS, 10 s by default): a helper that is
** missing, fails, crashes, answers badly or takes longer is killed and
** reaped, and the table keeps the dladdr names with a note.
*/
#include "alloc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MEMINST_SYMBOLISER_PATH
#define MEMINST_SYMBOLISER_PATH "/usr/local/libexec/meminst/meminst-symbolise"
#endif
#define SYM_TIMEOUT_MS 10000
#define SYM_STACK (64 * 1024)

/* A text buffer in pages of our own, grown by remapping. */
struct sym_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void sym_put(struct sym_buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *p = b->p ? alloc_sys_remap(b->p, b->cap, cap) : alloc_sys_map(cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p, b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sym_putf(struct sym_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sym_putf(struct sym_buf *b, const char *fmt, ...)
{
	char line[4096 + 64];
	va_list ap;
	va_start(ap, fmt);
	int n = alloc_vfmt(line, sizeof line, fmt, ap);
	va_end(ap);
	sym_put(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void sym_free(struct sym_buf *b)
{
	if (b->p)
		alloc_sys_unmap(b->p, b->cap);
	*b = (struct sym_buf){0};
}

/* ------------------------------------------------------------ request -- */

static int sym_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct sym_buf *b = arg;
	char path[4096], hex[2 * 64 + 2];
	alloc_sys_module_path(info, path, sizeof path);
	if (!path[0] || strchr(path, '\n'))
		return 0;
	alloc_sys_build_id_hex(info, hex, sizeof hex);
	if (!hex[0])
		alloc_fmt(hex, sizeof hex, "-");
	sym_putf(b, "M %lx %s %s\n", (unsigned long)info->dlpi_addr, hex, path);
	return 0;
}

/* One type's line: its frames (the site alone, or site_depth's stack) and,
** when its module was unloaded, that module's path and load bias. */
static void sym_type_line(struct sym_buf *b, const struct meminst_status_info *e)
{
	const uint64_t *frames;
	unsigned nf = alloc_type_frames(e->id, &frames);
	uint64_t one = e->site;
	if (!nf)
		frames = &one, nf = 1;
	nf = nf > 64 ? 64 : nf;
	uint32_t cls = alloc_type_class(e->id);
	const char *gone = alloc_type_unloaded(e->id) ? alloc_class_module(cls) : NULL;
	if (gone && strchr(gone, '\n'))
		gone = NULL;
	if (gone)
		sym_putf(b, "T %u %lx %u", e->id, (unsigned long)alloc_class_bias(cls), nf);
	else
		sym_putf(b, "T %u - %u", e->id, nf);
	for (unsigned i = 0; i < nf; i++)
		sym_putf(b, " %llx", (unsigned long long)frames[i]);
	sym_putf(b, "\t%s\t%s\n", gone ? gone : "", e->name);
}

/* The request for the rows that will be printed; false if none has a site. */
static bool sym_request(struct sym_buf *b, const struct meminst_status_info *e, long n)
{
	sym_putf(b, "meminst-symbolise 1\n");
	alloc_sys_dl_iterate(sym_module_cb, b);
	bool any = false;
	for (long i = 0; i < n; i++)
		if (e[i].blocks.max_ever > 0 && e[i].site) {
			sym_type_line(b, &e[i]);
			any = true;
		}
	sym_putf(b, "E\n");
	return any && !b->failed;
}

/* --------------------------------------------------------------- spawn -- */

/* Milliseconds of CLOCK_MONOTONIC, for the helper's deadlines. */
static long sym_now_ms(void)
{
	return (long)(alloc_snap_now(CLOCK_MONOTONIC) / 1000000);
}

/*
** Two processes: the keeper, a copy of the program (a clone without
** CLONE_VM, so nothing it does touches the program's memory) whose exit
** signal is 0, and the helper, its child, which runs meminst-symbolise.
** An exec makes a process's exit signal SIGCHLD again, so the program
** must not be the helper's parent: the keeper is, reaps it (killing it at
** the deadline) and ends with a status that says how the helper ended;
** the program reaps the keeper with __WALL.  The helper dies with the
** keeper (PR_SET_PDEATHSIG).
*/
enum { SYM_LATE = 126, SYM_NOEXEC = 127, SYM_SIGNAL = 128 }; /* the keeper's status */

struct sym_child {
	int sock, null;
	const char *path;
	sigset_t mask;   /* the program thread's, restored before execve */
	long timeout_ms; /* the keeper kills the helper after this */
};

/* The kernel's struct sigaction (not libc's). */
struct sym_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

/* The helper, in the keeper's memory (CLONE_VM | CLONE_VFORK: the keeper
** waits until execve): its socket as standard input and output, no other
** descriptor, the signal mask the program had. */
static int sym_helper_main(void *arg)
{
	struct sym_child *c = arg;
	if (syscall(SYS_dup3, c->sock, 0, 0) < 0 || syscall(SYS_dup3, c->sock, 1, 0) < 0 ||
	    syscall(SYS_dup3, c->null, 2, 0) < 0)
		return SYM_NOEXEC;
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	int keep[3] = {0, 1, 2};
	alloc_sys_own_fd_table(keep, 3);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &c->mask, NULL, 8);
	char *const argv[] = {(char *)"meminst-symbolise", NULL};
	char *const envp[] = {(char *)"MEMINST=off", NULL};
	syscall(SYS_execve, c->path, argv, envp);
	return SYM_NOEXEC;
}

/* How the helper ended, as the keeper's exit status. */
static int sym_keeper_status(int st)
{
	if (WIFSIGNALED(st))
		return SYM_SIGNAL + WTERMSIG(st);
	int code = WEXITSTATUS(st);
	return code == SYM_NOEXEC ? SYM_NOEXEC : code < SYM_LATE ? code : SYM_LATE - 1;
}

/* The keeper: every signal blocked (from the program thread) and every
** handler at its default, so that nothing of the program runs here. */
static int sym_keeper_main(void *arg)
{
	struct sym_child *c = arg;
	struct sym_ksigaction dfl = {SIG_DFL, 0, NULL, 0};
	for (int sig = 1; sig < 65; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8);
	long deadline = sym_now_ms() + c->timeout_ms;
	void *stack = mmap(NULL, SYM_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int pid = stack == MAP_FAILED ? -1
		  : clone(sym_helper_main, (char *)stack + SYM_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	alloc_sys_own_fd_table(NULL, 0); /* none of the program's files stay open here */
	if (pid <= 0)
		return SYM_NOEXEC;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		int st;
		if (syscall(SYS_wait4, pid, &st, __WALL | WNOHANG, NULL) == pid)
			return sym_keeper_status(st);
		long left = deadline - sym_now_ms();
		if (left <= 0) {
			syscall(SYS_kill, pid, SIGKILL);
			syscall(SYS_wait4, pid, &st, __WALL, NULL);
			return SYM_LATE;
		}
		struct timespec ts = {left / 1000, (left % 1000) * 1000000};
		syscall(SYS_rt_sigtimedwait, &chld, NULL, &ts, 8);
	}
}

/* Start the keeper and its helper: the keeper's pid, and our end of the
** helper's socket in *sock; -1 and a reason in why. */
static pid_t sym_spawn(const char *path, long timeout_ms, int *sock, char *why, size_t len)
{
	int sv[2];
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		alloc_fmt(why, len, "no socket (%s)", strerror(errno));
		return -1;
	}
	struct sym_child c = {.sock = alloc_sys_fd_high(sv[1]), .path = path, .timeout_ms = timeout_ms};
	sv[0] = alloc_sys_fd_high(sv[0]);
	c.null = alloc_sys_fd_high((int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
	void *stack = mmap(NULL, SYM_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	pid_t pid = -1;
	if (stack != MAP_FAILED && c.null >= 0) {
		sigset_t all;
		sigfillset(&all);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &c.mask, 8);
		/* a copy, exit signal 0: no SIGCHLD, and wait(-1) does not see it */
		pid = clone(sym_keeper_main, (char *)stack + SYM_STACK, 0, &c);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &c.mask, NULL, 8);
	}
	if (stack != MAP_FAILED)
		munmap(stack, SYM_STACK); /* the keeper has a copy */
	syscall(SYS_close, c.sock);
	if (c.null >= 0)
		syscall(SYS_close, c.null);
	if (pid <= 0) {
		alloc_fmt(why, len, "cannot start a process (%s)", strerror(errno));
		syscall(SYS_close, sv[0]);
		return -1;
	}
	*sock = sv[0];
	return pid;
}

/* ------------------------------------------------------------ exchange -- */

/* Send the request and read the answer until the helper closes its end,
** or the deadline: false at the deadline. */
static bool sym_exchange(int sock, const struct sym_buf *req, struct sym_buf *ans, long deadline)
{
	size_t sent = 0;
	syscall(SYS_fcntl, sock, F_SETFL, O_NONBLOCK);
	for (;;) {
		long left = deadline - sym_now_ms();
		if (left <= 0)
			return false;
		struct pollfd p = {sock, (short)(POLLIN | (sent < req->len ? POLLOUT : 0)), 0};
		struct timespec ts = {left / 1000, (left % 1000) * 1000000};
		if (syscall(SYS_ppoll, &p, 1, &ts, NULL, 8) < 0 && errno != EINTR)
			return true;
		if (p.revents & POLLOUT) {
			long n = syscall(SYS_sendto, sock, req->p + sent, req->len - sent, MSG_NOSIGNAL | MSG_DONTWAIT,
					 NULL, 0);
			if (n > 0)
				sent += (size_t)n;
			if ((n < 0 && errno != EAGAIN) || sent == req->len) {
				sent = req->len; /* all of it, or the helper stopped reading */
				syscall(SYS_shutdown, sock, SHUT_WR);
			}
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			char chunk[16384];
			long n = syscall(SYS_read, sock, chunk, sizeof chunk);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				return true;
			if (n > 0)
				sym_put(ans, chunk, (size_t)n);
		}
	}
}

/* Reap the keeper (it ends by the deadline: it kills a late helper);
** killed if it does not, then as late. */
static int sym_reap(pid_t pid, long deadline)
{
	int st = 0;
	for (;;) {
		long r = syscall(SYS_wait4, pid, &st, __WALL | WNOHANG, NULL);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : SYM_LATE;
		if (r < 0 && errno != EINTR)
			return SYM_LATE;
		if (sym_now_ms() >= deadline) {
			syscall(SYS_kill, pid, SIGKILL);
			while (syscall(SYS_wait4, pid, &st, __WALL, NULL) < 0 && errno == EINTR)
				;
			return SYM_LATE;
		}
		struct timespec ms = {0, 1000000};
		syscall(SYS_nanosleep, &ms, NULL);
	}
}

/* Split the answer into names[type]: false if it is not whole. */
static bool sym_parse(char *a, size_t len, alloc_sym_name_t *names, long n)
{
	if (len < 2 || strcmp(a + len - 2, "E\n") != 0 || (len > 2 && a[len - 3] != '\n'))
		return false;
	a[len - 2] = 0;
	for (char *line = a, *next; *line; line = next) {
		next = strchr(line, '\n');
		*next++ = 0;
		char *f[4] = {line, NULL, NULL, NULL};
		for (int k = 1; k < 4; k++) {
			f[k] = f[k - 1] ? strchr(f[k - 1], '\t') : NULL;
			if (f[k])
				*f[k]++ = 0;
		}
		long id = 0;
		for (const char *d = f[0]; *d; d++) {
			if (*d < '0' || *d > '9' || id > n)
				return false;
			id = id * 10 + (*d - '0');
		}
		if (!f[3] || !*f[0] || id >= n || !*f[1])
			return false;
		names[id] = (alloc_sym_name_t){f[1], *f[2] ? f[2] : NULL, *f[3] ? f[3] : NULL};
	}
	return true;
}

/* Why the helper gave no names, from the keeper's status. */
static void sym_why_status(int st, const char *path, long timeout, char *why, size_t len)
{
	if (st == SYM_LATE)
		alloc_fmt(why, len, "%s took longer than %ld ms", path, timeout);
	else if (st == SYM_NOEXEC)
		alloc_fmt(why, len, "cannot run %s", path);
	else if (st > SYM_SIGNAL)
		alloc_fmt(why, len, "%s was killed by signal %d", path, st - SYM_SIGNAL);
	else if (st)
		alloc_fmt(why, len, "%s exited with status %d", path, st);
	else
		alloc_fmt(why, len, "%s gave a malformed answer", path);
}

static long sym_timeout_ms(void)
{
	const char *v = alloc_getenv("MEMINST_SYMBOLISER_TIMEOUT_MS");
	long ms = 0;
	for (; v && *v >= '0' && *v <= '9' && ms < 100000000; v++)
		ms = ms * 10 + (*v - '0');
	return v && !*v && ms > 0 ? ms : SYM_TIMEOUT_MS;
}

/*
** Names for the n types of e whose rows are printed (those with a site),
** from the helper; the others NULL.  NULL, after a note on fd, when the
** helper is missing, fails or is late.  Free with alloc_symbolise_free.
*/
alloc_sym_names_t *alloc_symbolise(const struct meminst_status_info *e, long n, int fd)
{
	int saved_errno = errno;
	const char *env = alloc_getenv("MEMINST_SYMBOLISER");
	const char *path = env && *env ? env : MEMINST_SYMBOLISER_PATH;
	long timeout = sym_timeout_ms();
	struct sym_buf req = {0}, ans = {0};
	alloc_sym_names_t *r = NULL;
	char why[512] = "";
	int sock = -1;
	if (!sym_request(&req, e, n)) {
		if (req.failed)
			alloc_fmt(why, sizeof why, "no memory for the request");
	} else if (syscall(SYS_access, path, X_OK) != 0) {
		alloc_fmt(why, sizeof why, "no helper at %s (%s; MEMINST_SYMBOLISER names another)", path,
			  strerror(errno));
	} else {
		pid_t pid = sym_spawn(path, timeout, &sock, why, sizeof why);
		if (pid > 0) {
			/* the keeper ends the helper at the timeout: a second more */
			long deadline = sym_now_ms() + timeout + 1000;
			sym_exchange(sock, &req, &ans, deadline);
			syscall(SYS_close, sock);
			int st = sym_reap(pid, deadline);
			size_t bytes = sizeof *r + (size_t)n * sizeof r->names[0];
			if (!st && !ans.failed && ans.p && (r = alloc_sys_map(bytes)) != NULL) {
				r->bytes = bytes;
				if (!sym_parse(ans.p, ans.len, r->names, n)) {
					alloc_sys_unmap(r, bytes);
					r = NULL;
				}
			}
			if (!r)
				sym_why_status(st, path, timeout, why, sizeof why);
		}
	}
	sym_free(&req);
	if (r) {
		r->answer = ans.p, r->answer_cap = ans.cap;
	} else {
		sym_free(&ans);
		if (why[0]) {
			char line[1024];
			int len = alloc_fmt(line, sizeof line,
					    "meminst: print=types: sites named by dladdr, without source lines: "
					    "%s\n", why);
			alloc_sys_write(fd, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
		}
	}
	errno = saved_errno;
	return r;
}

void alloc_symbolise_free(alloc_sym_names_t *r)
{
	if (!r)
		return;
	if (r->answer)
		alloc_sys_unmap(r->answer, r->answer_cap);
	alloc_sys_unmap(r, r->bytes);
}
