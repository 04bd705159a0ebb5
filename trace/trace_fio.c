/*
** trace_fio.c — the trace file's writes: who writes where, the writer
** thread's direct writes, and what a failed write leaves.
**
** Every write to a regular trace file goes to a range of its own, taken
** from buf_end by an atomic add (async-signal-safe, no lock), and is made
** with pwrite(2) there: chunks of different threads never mix, and within
** a thread and stream they keep their order because each stream's chunks
** are written one after the other.  A pipe or a character device (a reader
** on a FIFO, /dev/null) is written with write(2) in the order of the calls.
**
** Direct writes.  The kernel's copy of every traced byte into the page
** cache is CPU time of the program (sys time, whichever thread writes):
** about 2 ns a traced call on ext4 here, a tenth of what the floor of any
** tracer costs (bench/RESULTS.md).  So the writer thread writes its events
** chunks through a second descriptor of the same file opened with O_DIRECT,
** many chunks at once (pwritev): the device takes the bytes from our
** buffers, and the process pays for one system call per batch instead of
** a copy per byte.  O_DIRECT wants memory, lengths and file offsets
** aligned to the file system's block: events buffers are page-aligned
** mappings, each chunk is followed in its buffer by a padding chunk
** (MEMINST_TRACE_STREAM_PAD) up to the next 4 KiB, and a batch's range is
** taken at the next 4 KiB boundary of the file, the bytes before it filled
** by a padding chunk written the ordinary way.  A file system that refuses
** O_DIRECT (tmpfs: the open fails; others: EINVAL at the first write) gets
** ordinary writes, the padding then being a few bytes a chunk.
**
** A failed write (a full disk, a quota, ulimit -f, an I/O error) is said
** at once, on one line with the path; tracing stops (as by
** meminst_trace_stop: the hooks go back to their cost with tracing off),
** so does sampling (trace_sampler_fail: no more ticks for the program),
** nothing more is written, and the
** file is cut at the start of the lowest range whose write failed, so it
** ends with its last complete chunk.  A write into a higher range that was
** already under way when the failure came is cut again by its own writer
** right after it (it looks at the failure after its write).
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define FIO_ALIGN 4096u /* direct writes: memory, length and offset */

_Atomic int trace_fio_fd = -1;
char trace_fio_path[4096];
static _Atomic int fio_dfd = -1;           /* the same file, O_DIRECT, or -1   */
static dev_t fio_dev;                      /* the file the descriptors must be */
static ino_t fio_ino;
static bool fio_regular;                   /* ranges and pwrite, else write(2) */
static _Atomic uint64_t fio_end;           /* the next byte no range holds     */
static _Atomic uint64_t fio_cut = UINT64_MAX; /* lowest range whose write failed */
static _Atomic int fio_failed;             /* nothing more is written          */
/* Writers between taking a descriptor and being done with it: a close at
** run time (trace_fio_close(true)) waits for them, so that no write lands
** in a descriptor number the program has got again meanwhile. */
static _Atomic int fio_users;

/* A writer takes the file's descriptor (-1 when it is closed or a write has
** failed) and gives it back when done with it. */
static int fio_take(void)
{
	atomic_fetch_add(&fio_users, 1);
	int fd = atomic_load(&trace_fio_fd);
	return fd >= 0 && !atomic_load_explicit(&fio_failed, memory_order_relaxed) ? fd : -1;
}

static void fio_give_back(void)
{
	atomic_fetch_sub(&fio_users, 1);
}

/* ---------------------------------------------------------- creating -- */

/* Create the file 0600, never through a symbolic link left at its name.
** An existing regular file is replaced only if it is ours (effective uid),
** not a symbolic link, and empty or a meminst trace (a rerun with the same
** trace_file); anything else stays as it is.  A FIFO or a character device
** (a pipe to a reader, /dev/null, /dev/stdout) is written to: there is
** nothing there to overwrite.  No O_APPEND: writes go where their range is. */
int trace_file_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 || errno != EEXIST)
		goto done;
	struct stat st;
	if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		goto done;
	}
	char magic[8] = {0};
	int rd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	const char *bad = rd < 0 ? (errno == ELOOP ? "is a symbolic link" : strerror(errno)) : NULL;
	if (!bad && (fstat(rd, &st) < 0 || !S_ISREG(st.st_mode)))
		bad = "is not a regular file";
	else if (!bad && st.st_uid != geteuid())
		bad = "is owned by another user";
	ssize_t n = bad ? -1 : read(rd, magic, sizeof magic);
	if (!bad && n != 0 && !(n == 8 && memcmp(magic, MEMINST_TRACE_MAGIC, 8) == 0))
		bad = "exists and is not a meminst trace";
	if (!bad) /* the file just judged, not one swapped in at the name since */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat now;
	if (fd >= 0 && (fstat(fd, &now) < 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino)) {
		close(fd);
		fd = -1, bad = "was replaced while opening";
	} else if (fd >= 0 && ftruncate(fd, 0) < 0) {
		close(fd);
		fd = -1;
	}
	if (rd >= 0)
		close(rd);
	if (bad) {
		alloc_log_run(NULL, "trace file %s %s; not overwriting it", path, bad);
		return -1;
	}
done:
	if (fd < 0 && !alloc_seccomp_enosys("openat", errno)) /* a filter's: said there, once */
		alloc_log_run(NULL, "cannot create trace file %s: %s", path, strerror(errno));
	return alloc_sys_fd_high(fd);
}

/* The process's start, /proc/self/stat's 22nd field (clock ticks after
** boot): an exec keeps it, a fork or a reused pid does not; 0 when /proc
** cannot tell (not mounted, a seccomp filter). */
uint64_t trace_proc_start(void)
{
	char buf[1024];
	int n = alloc_sys_read_file("/proc/self/stat", buf, sizeof buf);
	const char *p = n > 0 ? strrchr(buf, ')') : NULL; /* the name may hold anything */
	for (int field = 3; p && field <= 22; field++) /* the space before each field */
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Is the file at path a trace an earlier program of this process wrote
** (the same pid and start in its header: it exec'd the running one)? */
static bool fio_earlier_image(const char *path, uint64_t start)
{
	struct meminst_trace_header h;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool earlier = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		       pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
		       memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) == 0 && h.header_size >= sizeof h &&
		       h.pid == (uint32_t)getpid() && h.proc_start == start;
	close(fd);
	return earlier;
}

/*
** An exec keeps the pid, so the new program's trace file has the earlier
** one's name (trace.%p): made again, it lost the earlier program's whole
** trace without a word.  So a file at path that an earlier program of this
** process wrote is kept, and this one writes PATH.exec1 (PATH.exec2 after
** a second exec, ...: the first name no earlier program holds).  0, or -1
** (said) when the name would be too long or there were too many.
*/
#define FIO_IMAGES_MAX 9999

int trace_file_image(char *path, size_t len)
{
	uint64_t start = trace_proc_start();
	if (!start || !fio_earlier_image(path, start))
		return 0;
	size_t n = strlen(path);
	for (unsigned i = 1; i <= FIO_IMAGES_MAX; i++) {
		if (alloc_fmt(path + n, len - n, ".exec%u", i) >= (int)(len - n))
			break;
		if (!fio_earlier_image(path, start))
			return 0;
	}
	path[n] = 0;
	alloc_log_run(NULL, "trace file %s: no name left for this program's trace (it is the process's "
		      "program after %d execs at most); not traced", path, FIO_IMAGES_MAX);
	return -1;
}

/* May a file at path be replaced (by a rename over it)?  NULL when there
** is none, or it is ours, regular, not a symbolic link, and empty or a
** meminst trace: the rules of trace_file_create.  Else why not. */
const char *trace_file_refuse(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? NULL : strerror(errno);
	if (S_ISLNK(st.st_mode))
		return "is a symbolic link";
	if (!S_ISREG(st.st_mode))
		return "is not a regular file";
	if (st.st_uid != geteuid())
		return "is owned by another user";
	char magic[8];
	int rd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = rd < 0 ? -1 : read(rd, magic, sizeof magic);
	if (rd >= 0)
		close(rd);
	if (n != 0 && !(n == 8 && memcmp(magic, MEMINST_TRACE_MAGIC, 8) == 0))
		return "exists and is not a meminst trace";
	return NULL;
}

/* ------------------------------------------------------------ writing -- */

/*
** All the bytes of v[0..n) at `off` (pwritev), or with write(2) when off
** is negative; 0, or -1 with errno (EIO for a write of 0 bytes) and *done
** the bytes that went out.  v is used up.  Async-signal-safe.
** A file over the program's RLIMIT_FSIZE (ulimit -f) makes the kernel send
** SIGXFSZ, whose default action kills the program with a core dump: it is
** blocked around the write and the one our write raised is taken back
** (alloc_sys_xfsz_block/_restore), also where the caller blocked every
** signal (the writer thread, a flush): three system calls around a batch.
*/
static int fio_writev(int fd, struct iovec *v, int n, int64_t off, size_t *done)
{
	alloc_xfsz_t old;
	alloc_sys_xfsz_block(&old);
	size_t total = 0;
	errno = 0;
	while (n > 0) {
		ssize_t w = off < 0 ? writev(fd, v, n) : pwritev(fd, v, n, off + (int64_t)total);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		total += (size_t)w;
		for (; n > 0 && (size_t)w >= v->iov_len; v++, n--)
			w -= (ssize_t)v->iov_len;
		if (n > 0) {
			v->iov_base = (char *)v->iov_base + w;
			v->iov_len -= (size_t)w;
		}
	}
	int e = n > 0 ? (errno ? errno : EIO) : 0;
	alloc_sys_xfsz_restore(&old);
	if (done)
		*done = total;
	errno = e;
	return n > 0 ? -1 : 0;
}

int trace_fd_write(int fd, const void *p, size_t n, size_t *done)
{
	struct iovec v = {(void *)p, n};
	return fio_writev(fd, &v, 1, -1, done);
}

int trace_write_all(int fd, const void *p, size_t n)
{
	return trace_fd_write(fd, p, n, NULL);
}

/* The write of the range at `off` failed with e: say so once, cut the file
** at the lowest failed range, write nothing more.  Async-signal-safe. */
static void fio_fail(int fd, uint64_t off, int e)
{
	uint64_t cut = atomic_load(&fio_cut);
	while (off < cut && !atomic_compare_exchange_weak(&fio_cut, &cut, off))
		;
	if (!atomic_exchange(&fio_failed, 1)) {
		bool sampled = trace_stop_after_failure();
		alloc_log_run(NULL, "cannot write trace file %s: %s (errno %d); the trace ends at its last "
			  "complete chunk, tracing %s",
			  trace_fio_path, strerror(e), e, sampled ? "and sampling stop" : "stops");
	}
	if (fio_regular && ftruncate(fd, (off_t)atomic_load(&fio_cut)) < 0) {
		/* the reader stops at the torn chunk */
	}
}

/* After a write that went out: a failure meanwhile cut the file, and this
** write, in a higher range, may have made it longer again. */
static void fio_recut(int fd)
{
	uint64_t cut;
	if (atomic_load_explicit(&fio_failed, memory_order_acquire) && fio_regular &&
	    (cut = atomic_load(&fio_cut)) != UINT64_MAX && ftruncate(fd, (off_t)cut) < 0) {
		/* as above */
	}
}

/* v[0..n), `bytes` in all, to a range of their own (or the pipe).  0, or -1. */
static int fio_put(int fd, struct iovec *v, int n, size_t bytes)
{
	int64_t off = fio_regular ? (int64_t)atomic_fetch_add(&fio_end, bytes) : -1;
	if (fio_writev(fd, v, n, off, NULL) < 0) {
		fio_fail(fd, off < 0 ? 0 : (uint64_t)off, errno);
		return -1;
	}
	fio_recut(fd);
	return 0;
}

/* A padding chunk of `bytes` (32, or 48 and up, a multiple of 8) at off. */
static int fio_pad_at(int fd, uint64_t off, size_t bytes)
{
	static uint64_t words[(FIO_ALIGN + 64) / 8];
	struct meminst_trace_chunk h;
	trace_pad_chunk(&h, words, bytes);
	struct iovec v[2] = {{&h, sizeof h}, {words, bytes - sizeof h}};
	if (fio_writev(fd, v, 2, (int64_t)off, NULL) < 0) {
		fio_fail(fd, off, errno);
		return -1;
	}
	return 0;
}

/* Fill h and words as a padding chunk of `bytes` in all (32, or 48 and up,
** a multiple of 8): no words, or one PAD record of all of them. */
void trace_pad_chunk(struct meminst_trace_chunk *h, uint64_t *words, size_t bytes)
{
	uint32_t n = (uint32_t)((bytes - sizeof *h) / 8);
	if (n) {
		words[0] = MEMINST_TREC_HEAD(MEMINST_TREC_PAD, 0);
		words[1] = MEMINST_TREC_SIZE_WORD(n, 0);
		memset(words + 2, 0, (n - 2) * 8u);
	}
	*h = (struct meminst_trace_chunk){MEMINST_TRACE_CHUNK_MAGIC, n, 0, MEMINST_TRACE_STREAM_PAD, 0, 0,
					  meminst_trace_checksum(words, n)};
}

/* The bytes of padding after `bytes` that reach the next 4 KiB: 0, 32, or
** 48 and up (a padding chunk is its 32-byte header and no words or at least
** a two-word PAD record), at most 4 KiB + 40. */
size_t trace_pad_bytes(uint64_t bytes)
{
	size_t pad = (size_t)(-bytes & (FIO_ALIGN - 1));
	if (pad && (pad < 32 || pad == 40))
		pad += FIO_ALIGN;
	return pad;
}

/* Hand one chunk to the sink or the file.  Async-signal-safe. */
static int fio_emit(const void *chunk, size_t bytes)
{
	if (trace_sink)
		return trace_sink(chunk, bytes);
	int fd = fio_take(), rc = -1;
	if (fd >= 0) {
		struct iovec v = {(void *)chunk, bytes};
		rc = fio_put(fd, &v, 1, bytes);
	}
	fio_give_back();
	return rc;
}

/* Checksum (for the file, not the sink) and out.  Async-signal-safe. */
int trace_chunk_emit(struct meminst_trace_chunk *h)
{
	const uint64_t *w = (const uint64_t *)(h + 1);
	/* the in-process profiler reads the words at once: no checksum */
	h->checksum = trace_sink ? 0 : meminst_trace_checksum(w, h->words);
	/* not only the writer thread writes chunks (samples, the exit flush):
	** each write checks that the number is still the file's, so a chunk
	** never goes into a file of a program that closed ours (a daemon) */
	trace_file_check();
	return fio_emit(h, sizeof *h + (size_t)h->words * 8);
}

/* Has a write failed (nothing more is written)? */
bool trace_fio_failed(void)
{
	return atomic_load_explicit(&fio_failed, memory_order_acquire) != 0;
}

/* Can the writer write direct (its chunks then padded to 4 KiB)? */
bool trace_fio_direct(void)
{
	return atomic_load_explicit(&fio_dfd, memory_order_relaxed) >= 0 && !trace_sink;
}

/*
** The writer thread's batch: v[0..n), `bytes` in all, checksummed chunks
** (v itself is left as it is).  When `aligned` (each piece page-aligned and
** a multiple of 4 KiB long: chunks padded by the writer), direct at the
** next 4 KiB boundary, what lies before it padded; otherwise as any write.
** 0, or -1.
*/
static int fio_batch(int fd, const struct iovec *v, int n, size_t bytes, bool aligned);

int trace_fio_batch(const struct iovec *v, int n, size_t bytes, bool aligned)
{
	int fd = fio_take();
	int rc = fd >= 0 ? fio_batch(fd, v, n, bytes, aligned) : -1;
	fio_give_back();
	return rc;
}

static int fio_batch(int fd, const struct iovec *v, int n, size_t bytes, bool aligned)
{
	struct iovec copy[n];
	memcpy(copy, v, sizeof copy);
	int dfd = aligned ? atomic_load(&fio_dfd) : -1;
	if (dfd < 0 || !fio_regular)
		return fio_put(fd, copy, n, bytes);
	uint64_t at = atomic_load(&fio_end), start;
	size_t pad;
	do {
		pad = trace_pad_bytes(at);
		start = at + pad;
	} while (!atomic_compare_exchange_weak(&fio_end, &at, start + bytes));
	if (pad && fio_pad_at(fd, at, pad) < 0)
		return -1;
	size_t done;
	if (fio_writev(dfd, copy, n, (int64_t)start, &done) == 0) {
		fio_recut(fd);
		return 0;
	}
	if (errno == EINVAL && done == 0) {
		/* the file system takes O_DIRECT opens but not these writes:
		** ordinary ones from now on, this batch too, in its range */
		if (atomic_exchange(&fio_dfd, -1) == dfd)
			close(dfd);
		memcpy(copy, v, sizeof copy);
		if (fio_writev(fd, copy, n, (int64_t)start, NULL) == 0) {
			fio_recut(fd);
			return 0;
		}
	}
	fio_fail(fd, start, errno);
	return -1;
}

/* ----------------------------------------------------- the descriptors -- */

/* The file fd (created, its header of `header` bytes written) is the
** trace file from now on; a regular file also gets its O_DIRECT twin. */
void trace_fio_start(int fd, size_t header)
{
	struct stat st;
	fio_regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	fio_dev = st.st_dev, fio_ino = st.st_ino;
	atomic_store(&fio_end, header);
	atomic_store(&fio_cut, UINT64_MAX);
	atomic_store(&fio_failed, 0);
	int dfd = -1;
#ifdef O_DIRECT
	struct stat dst;
	if (fio_regular &&
	    (dfd = alloc_sys_fd_high(open(trace_fio_path, O_WRONLY | O_DIRECT | O_NOFOLLOW | O_CLOEXEC))) >= 0 &&
	    (fstat(dfd, &dst) != 0 || dst.st_dev != fio_dev || dst.st_ino != fio_ino)) {
		close(dfd);
		dfd = -1;
	}
#endif
	atomic_store(&fio_dfd, dfd);
	atomic_store_explicit(&trace_fio_fd, fd, memory_order_release);
}

/* Both descriptors closed: at exit and in a forked child (the parent's),
** at once; at run time (the end of a CPU profile on request), `wait`: once
** every write that took them is done (writes that come later find none and
** drop their chunk).  True if the file was open. */
bool trace_fio_close(bool wait)
{
	int dfd = atomic_exchange(&fio_dfd, -1), fd = atomic_exchange(&trace_fio_fd, -1);
	const struct timespec tick = {0, 1000000};
	while (wait && atomic_load(&fio_users))
		syscall(SYS_nanosleep, &tick, NULL); /* a write or a handler finishing; not our wrapped nanosleep */
	if (!wait)
		atomic_store(&fio_users, 0); /* a child: the parent's writers are not here */
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* Programs that close every descriptor (daemons) close ours too, and may
** get its number again for a file of theirs: before each batch the writer
** thread makes sure that the descriptor is still the trace file, and opens
** the file again if not (never closing the program's descriptor).  The
** direct one is then given up. */
static void fio_check(int fd, int dfd);

void trace_file_check(void)
{
	atomic_fetch_add(&fio_users, 1);
	fio_check(atomic_load(&trace_fio_fd), atomic_load(&fio_dfd));
	atomic_fetch_sub(&fio_users, 1);
}

static void fio_check(int fd, int dfd)
{
	struct stat st;
	if (dfd >= 0 && (fstat(dfd, &st) != 0 || st.st_dev != fio_dev || st.st_ino != fio_ino))
		atomic_compare_exchange_strong(&fio_dfd, &dfd, -1);
	if (fd < 0 || trace_sink || (fstat(fd, &st) == 0 && st.st_dev == fio_dev && st.st_ino == fio_ino))
		return;
	int nfd = alloc_sys_fd_high(open(trace_fio_path, O_WRONLY | (fio_regular ? 0 : O_APPEND) | O_CLOEXEC));
	if (nfd < 0 || fstat(nfd, &st) != 0 || st.st_dev != fio_dev || st.st_ino != fio_ino) {
		if (nfd >= 0)
			close(nfd);
		if (!atomic_exchange(&fio_failed, 1)) {
			bool sampled = trace_stop_after_failure();
			alloc_log("the program closed the trace file %s and it cannot be opened again; "
				  "tracing %s",
				  trace_fio_path, sampled ? "and sampling stop" : "stops");
		}
		return;
	}
	if (atomic_compare_exchange_strong(&trace_fio_fd, &fd, nfd))
		return;
	close(nfd); /* closed at exit meanwhile */
}
