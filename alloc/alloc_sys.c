/*
** alloc_sys.c — the OS layer under libmeminst's allocation layer.
**
** Everything here works before libc is fully set up and never allocates:
** a small printf-like formatter writing into caller buffers, output with
** write(2), a getenv that scans environ, reads of /proc with read(2), page
** mappings for our own tables, and a probe telling whether an address can be
** read without faulting.  The core calls these wrappers rather than libc so
** that no allocation and no stdio lock can happen on the allocation path.
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------ formatter -- */

struct fmt_out {
	char *buf;
	size_t len, pos;
};

static void fmt_putc(struct fmt_out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos] = c;
	o->pos++;
}

static void fmt_pad(struct fmt_out *o, int n, char c)
{
	while (n-- > 0)
		fmt_putc(o, c);
}

static void fmt_str(struct fmt_out *o, const char *s, int width, bool left)
{
	int n = (int)strlen(s);
	if (!left)
		fmt_pad(o, width - n, ' ');
	while (*s)
		fmt_putc(o, *s++);
	if (left)
		fmt_pad(o, width - n, ' ');
}

static void fmt_num(struct fmt_out *o, unsigned long long v, bool neg,
		    unsigned base, int width, bool left, bool zero)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		tmp[n++] = '-';
	char out[26];
	for (int i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	if (zero && !left && width > n) {
		const char *digits = out;
		if (neg) { /* the sign goes before the zeros: -0042 */
			fmt_putc(o, '-');
			digits++;
		}
		fmt_pad(o, width - n, '0');
		fmt_str(o, digits, 0, false);
	} else {
		fmt_str(o, out, width, left);
	}
}

/*
** A printf subset: %s %c %d %i %u %x %p %%, flags '-' and '0', a width
** (digits or *), and the l, ll, z length modifiers.  Never allocates and is
** async-signal-safe.  Returns the length the output wanted (like snprintf).
*/
int alloc_vfmt(char *buf, size_t len, const char *fmt, va_list ap)
{
	struct fmt_out o = {buf, len, 0};
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			fmt_putc(&o, *f);
			continue;
		}
		bool left = false, zero = false;
		int width = 0, lng = 0;
		for (f++; *f == '-' || *f == '0'; f++)
			*f == '-' ? (left = true) : (zero = true);
		if (*f == '*') {
			width = va_arg(ap, int);
			f++;
		}
		for (; *f >= '0' && *f <= '9'; f++)
			width = width * 10 + (*f - '0');
		for (; *f == 'l' || *f == 'z'; f++)
			lng++;
		switch (*f) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			fmt_str(&o, s ? s : "(null)", width, left);
			break;
		}
		case 'c':
			fmt_putc(&o, (char)va_arg(ap, int));
			break;
		case 'd':
		case 'i': {
			long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
			unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
			fmt_num(&o, u, v < 0, 10, width, left, zero);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
			fmt_num(&o, v, false, *f == 'x' ? 16 : 10, width, left, zero);
			break;
		}
		case 'p':
			fmt_putc(&o, '0');
			fmt_putc(&o, 'x');
			fmt_num(&o, (uintptr_t)va_arg(ap, void *), false, 16, width, left, zero);
			break;
		case '%':
			fmt_putc(&o, '%');
			break;
		default: /* unknown conversion: show it, do not guess the argument */
			fmt_putc(&o, '%');
			if (*f)
				fmt_putc(&o, *f);
			else
				f--;
		}
	}
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = 0;
	return (int)o.pos;
}

int alloc_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = alloc_vfmt(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

void alloc_sys_write(int fd, const char *s, size_t n)
{
	if (fd == ALLOC_FD_STDERR && (fd = alloc_sys_err_fd()) < 0)
		return;
	while (n > 0) {
		ssize_t w = syscall(SYS_write, fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* ------------------------------------------------------------ stderr --- */

_Atomic unsigned alloc_sc_refused; /* set by alloc_seccomp.c */

/* Remember what fd is open on (false: it is not open). */
bool alloc_fdid_take(alloc_fdid_t *id, int fd)
{
	struct stat st;
	id->fd = -1;
	if (fd < 0 || fstat(fd, &st) != 0)
		return false;
	id->dev = st.st_dev, id->ino = st.st_ino, id->fd = fd;
	return true;
}

/* Is id's number still open on the file it was taken on?  A program may
** close any number and open or dup2 a file of its own onto it (a data
** file over 3..1023, stderr closed by close_stdout and the number reused):
** meminst writes only where this holds.  Async-signal-safe. */
bool alloc_fdid_same(const alloc_fdid_t *id)
{
	struct stat st;
	return id->fd >= 0 && !alloc_seccomp_refuses(ALLOC_SC_FSTAT) && fstat(id->fd, &st) == 0 &&
	       st.st_dev == id->dev && st.st_ino == id->ino;
}

/* stderr as it was at start, and a copy of it at a high number (CLOEXEC)
** for when the program has closed or replaced its descriptor 2. */
static alloc_fdid_t sys_err = {.fd = -1}, sys_err_copy = {.fd = -1};
static _Atomic bool sys_err_known;

void alloc_sys_err_init(void)
{
	if (atomic_load(&sys_err_known) || !alloc_fdid_take(&sys_err, 2))
		return;
	int copy = (int)syscall(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 3);
	if (copy >= 0)
		alloc_fdid_take(&sys_err_copy, alloc_sys_fd_high(copy));
	atomic_store(&sys_err_known, true);
}

/* Take stderr again as it is now (the unit tests capture the core's lines
** by putting a file of theirs on descriptor 2). */
void alloc_sys_err_retake(void)
{
	atomic_store(&sys_err_known, false);
	if (sys_err_copy.fd >= 0)
		syscall(SYS_close, sys_err_copy.fd);
	sys_err.fd = sys_err_copy.fd = -1;
	alloc_sys_err_init();
}

/* Where meminst's lines go: descriptor 2 while it is the stderr of the
** start, else the copy of it while that holds, else nowhere (-1).  Before
** the constructor has looked, 2.  When fstat is refused (a seccomp filter)
** nothing can be checked: 2, as the program's own messages. */
int alloc_sys_err_fd(void)
{
	if (!atomic_load(&sys_err_known) || alloc_seccomp_refuses(ALLOC_SC_FSTAT))
		return 2;
	if (alloc_fdid_same(&sys_err))
		return 2;
	return alloc_fdid_same(&sys_err_copy) ? sys_err_copy.fd : -1;
}

/* One line on stderr, prefixed with "meminst: ".  Never allocates.  When
** the program's stderr is no longer the one it started with, the line also
** goes to the notes file beside the snapshot (alloc_snap_note), which the
** launcher keeps in the session: `inspect report` shows it.  `kind` says
** what the line is (ALLOC_LINE_*): alloc_snap_route, by quiet= and
** run_dir=, may send it to the notes file only, or nowhere; `key` names
** the failure a run-file line reports (NULL: the line). */
static void sys_vlog(int kind, const char *key, const char *fmt, va_list ap)
{
	char line[512];
	int saved = errno;
	size_t n = (size_t)alloc_fmt(line, sizeof line, "meminst: ");
	alloc_vfmt(line + n, sizeof line - n - 1, fmt, ap);
	n = strlen(line);
	line[n++] = '\n';
	line[n] = 0; /* the key below is read as a string */
	int route = alloc_snap_route ? alloc_snap_route(kind, key ? key : line + 9) : ALLOC_ROUTE_SAY;
	bool keep = kind == ALLOC_LINE_NOTED || route == ALLOC_ROUTE_SAY_KEEP;
	if (route == ALLOC_ROUTE_SAY_KEEP)
		route = ALLOC_ROUTE_SAY;
	if (route != ALLOC_ROUTE_SAY || alloc_seccomp_refuses(ALLOC_SC_WRITE)) {
		if (route == ALLOC_ROUTE_NOTES && alloc_snap_note)
			alloc_snap_note(line, n);
		errno = saved;
		return;
	}
	int fd = alloc_sys_err_fd();
	if (fd >= 0) { /* stderr may be a file past ulimit -f */
		alloc_xfsz_t old;
		alloc_sys_xfsz_block(&old);
		errno = 0;
		alloc_sys_write(fd, line, n);
		alloc_sys_xfsz_restore(&old);
	}
	if ((fd != 2 || keep) && alloc_snap_note)
		alloc_snap_note(line, n);
	errno = saved;
}

#define SYS_LOG(kind, key)            \
	do {                          \
		va_list ap;           \
		va_start(ap, fmt);    \
		sys_vlog(kind, key, fmt, ap); \
		va_end(ap);           \
	} while (0)

void alloc_log(const char *fmt, ...) { SYS_LOG(ALLOC_LINE_ERROR, NULL); }

/* A note: what meminst did about the program's own settings, the run
** measured as well as it can be (quiet=notes: the notes file only). */
void alloc_note(const char *fmt, ...) { SYS_LOG(ALLOC_LINE_NOTE, NULL); }

/* A note the session must keep in any case (a seccomp filter that turned
** features off): in the notes beside the snapshot as well. */
void alloc_log_noted(const char *fmt, ...) { SYS_LOG(ALLOC_LINE_NOTED, NULL); }

/* A failure of a file of the run (a snapshot, a trace file), or a part of
** the run unmeasured, `key` the failure without the process's own words
** (its path): said once a run under the launcher (alloc_snap_route), and
** kept in the notes beside the snapshot. */
void alloc_log_run(const char *key, const char *fmt, ...) { SYS_LOG(ALLOC_LINE_RUN, key); }

/*
** A write of ours past the file size limit (ulimit -f) raises SIGXFSZ,
** whose default action kills the program with a core dump: its fate would
** depend on the size of our file.  So SIGXFSZ is blocked around each write
** of ours (a line, a trace chunk, a snapshot store), and one pending when
** the mask is restored is taken back first unless it was pending, blocked,
** before the block: our write raised it (one pending unblocked before
** would have been delivered).  That holds when the thread had it blocked
** already, by meminst's own masks too: a trace flush blocks every signal
** around its write and then restores the program's mask, which delivered
** the SIGXFSZ a write inside had left (a run past ulimit -f under load was
** killed, status 153, when the exit's flush met the limit).  One another
** process sent in the window would be taken too.  A SIGXFSZ the program
** had pending itself is left as it is.  The write sees EFBIG.  Raw system
** calls: lines are written from signal handlers too.  errno is kept.
** rt_sigpending is tried against a seccomp filter with the snapshots'
** calls: refused, nothing is taken back.
*/
static bool sys_xfsz_pending(void)
{
	sigset_t pending;
	return !alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT) &&
	       syscall(SYS_rt_sigpending, &pending, (size_t)(_NSIG / 8)) == 0 && sigismember(&pending, SIGXFSZ);
}

void alloc_sys_xfsz_block(alloc_xfsz_t *x)
{
	int saved = errno;
	sigset_t xfsz;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &xfsz, &x->old, (size_t)(_NSIG / 8));
	/* blocked already (a mask of the program's or of ours): one pending now is not ours */
	x->was_pending = sigismember(&x->old, SIGXFSZ) &&
			 (alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT) || sys_xfsz_pending());
	errno = saved;
}

void alloc_sys_xfsz_restore(const alloc_xfsz_t *x)
{
	int saved = errno;
	if (!x->was_pending && sys_xfsz_pending()) {
		sigset_t xfsz;
		sigemptyset(&xfsz);
		sigaddset(&xfsz, SIGXFSZ);
		const struct timespec now = {0, 0};
		syscall(SYS_rt_sigtimedwait, &xfsz, NULL, &now, (size_t)(_NSIG / 8));
	}
	if (!sigismember(&x->old, SIGXFSZ))
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &x->old, NULL, (size_t)(_NSIG / 8));
	errno = saved;
}

void alloc_assert_fail(const char *expr, const char *file, int line)
{
	alloc_log("internal assertion failed: %s (%s:%d)", expr, file, line);
	abort();
}

/* ------------------------------------------------------------ process --- */

/* getenv without libc: works before libc's own initialisation. */
const char *alloc_getenv(const char *name)
{
	size_t n = strlen(name);
	if (!environ)
		return NULL;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

pid_t alloc_sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Fill buf with n bytes from the kernel's random source; false if it is
** not ready (early boot) or not there (a kernel before 3.17). */
bool alloc_sys_random(void *buf, size_t n)
{
	return syscall(SYS_getrandom, buf, n, 1 /* GRND_NONBLOCK */) == (long)n;
}

void alloc_sys_exit(int status)
{
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/*
** Give the calling thread, one of meminst's own (the snapshot service, the
** wall-clock sampler), a descriptor table of its own that holds only `keep`
** (-1 entries ignored).  The files it opens while the program runs
** (snapshot databases, /proc) then never take a number of the program's
** table: a single-threaded program may close a number twice (bash does
** after each fork) or reuse one it has just closed, and would close ours
** or have us write into or close its own.  The thread's copies of the
** program's other descriptors are closed at once, so it keeps none of the
** program's pipes open.  Returns 0, or -1 if the table is still shared.
*/
int alloc_sys_own_fd_table(const int *keep, unsigned nkeep)
{
	if (syscall(SYS_unshare, CLONE_FILES) != 0)
		return -1;
	unsigned from = 0;
	for (;;) {
		unsigned next = ~0u; /* the lowest kept number at or above from */
		for (unsigned i = 0; i < nkeep; i++)
			if (keep[i] >= 0 && (unsigned)keep[i] >= from && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
#ifdef SYS_close_range
		if (next > from && syscall(SYS_close_range, from, next - 1, 0) == 0)
			from = next; /* done */
#endif
		if (next > from) {
			/* before Linux 5.9: one by one up to the limit */
			long max = sysconf(_SC_OPEN_MAX);
			for (long fd = from; fd < (next < max ? (long)next : max); fd++)
				syscall(SYS_close, (int)fd);
		}
		if (next == ~0u)
			return 0;
		from = next + 1;
	}
}

/*
** Move a descriptor of meminst's out of the numbers a program gets: to the
** lowest free one at or above 32 under the lower of 1024 and RLIMIT_NOFILE
** (a program's own open, dup or pipe returns the lowest free number, so
** without this its first file would be 5 or 6 rather than 3 while
** meminst's threads run; and a daemon that closes every descriptor and
** opens its own files would get ours back).  Not higher: the kernel's
** table grows to the number.  Returns the new number (the old one closed),
** or fd itself when no high number is free.  Async-signal-safe.
*/
int alloc_sys_fd_high(int fd)
{
	struct rlimit lim;
	long top = syscall(SYS_getrlimit, RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 1024 ? (long)lim.rlim_cur : 1024;
	if (fd < 0 || top <= 64)
		return fd;
	int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, top - 32);
	if (high < 0)
		return fd;
	syscall(SYS_close, fd);
	return high;
}

/* Read a small file into buf (NUL-terminated).  Returns bytes or -1. */
int alloc_sys_read_file(const char *path, char *buf, size_t len)
{
	if (alloc_seccomp_refuses(ALLOC_SC_OPEN_READ))
		return -1;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = syscall(SYS_read, fd, buf, len - 1);
	syscall(SYS_close, fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

/* ------------------------------------------------------------ memory ---- */

void *alloc_sys_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The lock holds the id of the process whose thread maps a chunk (1 when
** unknown: a seccomp filter refuses getpid).  Another thread maps for a
** few microseconds; but a child copied meanwhile (a fork, whose handlers
** do not hold these, or a raw clone, once adopted: alloc_clone_yield)
** finds its parent's id there, a holder it does not have, and takes the
** lock over: the holder's chunk is mapped again if it was not stored. */
static int table_lock_id(void)
{
	pid_t pid = alloc_sys_pid();
	return pid > 0 ? (int)pid : 1;
}

static void table_lock(alloc_table_t *t)
{
	for (unsigned turn = 1;; turn++) {
		int held = 0, me = table_lock_id();
		if (atomic_compare_exchange_strong_explicit(&t->lock, &held, me, memory_order_acquire,
							    memory_order_relaxed))
			return;
		if (held != me && atomic_compare_exchange_strong_explicit(&t->lock, &held, me, memory_order_acquire,
									  memory_order_relaxed))
			return;
		alloc_clone_yield(turn);
	}
}

bool alloc_table_ensure(alloc_table_t *t, uint32_t i)
{
	if (i >= t->cap || (i >> t->shift) >= ALLOC_TABLE_DIR_MAX)
		return false;
	char *_Atomic *slot = &t->dir[i >> t->shift];
	if (likely(atomic_load_explicit(slot, memory_order_acquire) != NULL))
		return true;
	size_t bytes = ((t->esize << t->shift) + 4095) & ~(size_t)4095;
	table_lock(t);
	bool ok = atomic_load_explicit(slot, memory_order_relaxed) != NULL;
	if (!ok) {
		char *c = alloc_sys_map(bytes);
		if (c)
			atomic_store_explicit(slot, c, memory_order_release);
		ok = c != NULL;
	}
	atomic_store_explicit(&t->lock, 0, memory_order_release);
	return ok;
}

/*
** The same, with the pages faulted in now rather than while our locks are
** held (snapshot buffers).  A large one (a peak's copy of the map, tens of
** MB) is aligned to 2 MiB and asks for transparent huge pages: faulting it
** in 4 KiB pages cost the program's thread 17 ms per 40 MB, in 2 MiB pages
** 4-10 ms, and unmapping it is cheaper too.  Where THP is off, small pages
** as before.
*/
#define SYS_HUGE (2u << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
void *alloc_sys_map_populated(size_t size)
{
	if (size < 2 * SYS_HUGE) {
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_NORESERVE, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	char *m = alloc_sys_map(size + SYS_HUGE);
	if (!m)
		return NULL;
	char *p = (char *)(((uintptr_t)m + SYS_HUGE - 1) & ~(uintptr_t)(SYS_HUGE - 1));
	if (p > m)
		munmap(m, (size_t)(p - m));
	munmap(p + size, (size_t)(m + SYS_HUGE - p));
	madvise(p, size, MADV_HUGEPAGE); /* refused when THP is off: small pages */
	alloc_sys_populate(p, size);
	return p;
}

/* Fault in what is not yet there (a mapping grown by alloc_sys_remap). */
void alloc_sys_populate(void *p, size_t size)
{
	if (madvise(p, size, MADV_POPULATE_WRITE) != 0) /* before 5.14: touch every page */
		for (size_t at = 0; at < size; at += 4096)
			((volatile char *)p)[at] = ((volatile char *)p)[at];
}

void alloc_sys_unmap(void *p, size_t size)
{
	munmap(p, size);
}

/* Resize a mapping of ours, moving it if need be (its contents follow);
** NULL, with the old mapping intact, when it cannot. */
void *alloc_sys_remap(void *p, size_t old, size_t size)
{
	void *n = mremap(p, old, size, MREMAP_MAYMOVE);
	return n == MAP_FAILED ? NULL : n;
}

/*
** Can n bytes at p be read?  Used only when a header would lie on a page
** other than the pointer handed to free, so a foreign pointer at the start
** of a mapping does not fault.  process_vm_readv on ourselves reports
** EFAULT instead of faulting; where it is not allowed (seccomp) fall back to
** asking whether the page is mapped at all.
*/
static _Atomic pid_t sys_pid; /* filled lazily, by whichever thread comes first */

/* 0 (unknown) when getpid fails: a seccomp filter may refuse it. */
void alloc_sys_pid_refresh(void)
{
	long pid = alloc_seccomp_refuses(ALLOC_SC_GETPID) ? -1 : syscall(SYS_getpid);
	atomic_store_explicit(&sys_pid, pid > 0 ? (pid_t)pid : 0, memory_order_relaxed);
}

/* The process's id, taken once (and again in a child of fork): after a
** seccomp filter that refuses getpid, the one known before it.  0 when it
** was never known (a child forked under such a filter). */
pid_t alloc_sys_pid(void)
{
	pid_t pid = atomic_load_explicit(&sys_pid, memory_order_relaxed);
	if (!pid) {
		alloc_sys_pid_refresh();
		pid = atomic_load_explicit(&sys_pid, memory_order_relaxed);
	}
	return pid;
}

bool alloc_readable(const void *p, size_t n)
{
	char tmp[64];
	if (n > sizeof tmp)
		n = sizeof tmp;
	struct iovec local = {tmp, n}, remote = {(void *)p, n};
	if (alloc_seccomp_refuses(ALLOC_SC_VM_READV)) {
		/* under a seccomp filter: mincore, else trust the header check */
		if (alloc_seccomp_refuses(ALLOC_SC_MINCORE))
			return true;
	} else {
		ssize_t r = syscall(SYS_process_vm_readv, alloc_sys_pid(), &local, 1UL, &remote, 1UL, 0UL);
		if (r == (ssize_t)n)
			return true;
		if (r < 0 && errno == EFAULT)
			return false;
	}
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)4095;
	unsigned char vec[2];
	size_t span = ((uintptr_t)p + n - page + 4095) & ~(size_t)4095;
	return mincore((void *)page, span, vec) == 0;
}

/* The name of a live thread of this process; false once it is gone.  The
** calling thread's own name comes from prctl, not /proc: a thread that ends
** (its name kept by thread_keep_name) after the program's join returned
** would otherwise hold descriptor 3 for a moment while the program opens a
** file, which then gets 4 (tests/integration/fd_numbers.sh). */
bool alloc_sys_thread_comm(pid_t tid, char *buf, size_t len)
{
	char path[64];
	if (tid == alloc_sys_gettid() && len >= 17) {
		if (alloc_seccomp_refuses(ALLOC_SC_THREAD_NAME) || prctl(PR_GET_NAME, buf, 0, 0, 0) != 0)
			return false;
		buf[16] = 0;
		return true;
	}
	alloc_fmt(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
	if (alloc_sys_read_file(path, buf, len) <= 0)
		return false;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

int alloc_sys_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	if (set && how != SIG_UNBLOCK) { /* SIGCANCEL and SIGSETXID (32, 33) stay open */
		copy = *set;
		((unsigned long *)(void *)&copy)[0] &= ~(3UL << 31);
		set = &copy;
	}
	int saved = errno;
	long r = syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8));
	int e = r < 0 ? errno : 0;
	errno = saved;
	return e;
}

void alloc_sys_signals_off(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	alloc_sys_sigmask(SIG_SETMASK, &all, old); /* (returns its error, errno untouched) */
}

void alloc_sys_signals_on(const sigset_t *old)
{
	alloc_sys_sigmask(SIG_SETMASK, old, NULL);
}
