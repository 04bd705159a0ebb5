/* bench_trace_floor.c — the floor of an enter/exit tracer, preloaded by
** bench/trace.sh, bench/trace_cpu.sh and bench/trace_insn.sh: a TSC read
** and 8 bytes stored in a thread-local buffer at each entry and each exit
** (16 B and two TSC reads per call+return pair), the buffer reused when
** full, no I/O.  What any exact tracer must at least spend; meminst's
** trace=wall is measured against it.
**
** Built a second time with -DFLOOR_FILE (libbench_trace_floor_file.so):
** the same, but each full 64 KiB buffer is written with write(2) to the
** file named by BENCH_FLOOR_FILE (made or emptied at the first write), by
** the traced thread itself, behind a 32-byte header as meminst writes its
** chunks (so the writes have meminst's sizes and file offsets: 64 KiB
** aligned writes are cheaper on ext4 but now and then far dearer).  What
** the kernel's copy of 16 B per call into the page cache adds to the
** floor: the floor of a tracer that keeps its records in a real file. */
#include <stdint.h>
#ifdef FLOOR_FILE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/uio.h>
#endif

#define FLOOR_WORDS 8192 /* 64 KiB, like meminst's events chunks */

/* Not static: the compiler must keep the stores.  Static, nothing reading
** it, the buffer let GCC drop them, and until 2026-11-25 (bench/RESULTS.md,
** issue 12 session 7) the floor was two TSC reads and a counter. */
__thread uint64_t bench_floor_buf[FLOOR_WORDS] __attribute__((tls_model("initial-exec")));
#define floor_buf bench_floor_buf
static __thread unsigned floor_pos __attribute__((tls_model("initial-exec")));

#ifdef FLOOR_FILE
static int floor_fd = -1;

static __attribute__((noinline, no_instrument_function)) void floor_write(void)
{
	if (floor_fd == -1) {
		const char *path = getenv("BENCH_FLOOR_FILE");
		floor_fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -2;
	}
	static uint64_t head[4] = {0x666c6f6f72};
	struct iovec v[2] = {{head, sizeof head}, {floor_buf, sizeof floor_buf}};
	if (floor_fd >= 0 && writev(floor_fd, v, 2) != (ssize_t)(sizeof head + sizeof floor_buf))
		floor_fd = -2;
}
#endif

static inline __attribute__((always_inline, no_instrument_function)) void floor_put(uint64_t w)
{
	unsigned p = floor_pos;
	floor_buf[p] = w;
	floor_pos = (p + 1) & (FLOOR_WORDS - 1);
#ifdef FLOOR_FILE
	if (__builtin_expect(p == FLOOR_WORDS - 1, 0))
		floor_write();
#endif
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	floor_put(__builtin_ia32_rdtsc() << 32 | (uint32_t)(uintptr_t)fn);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn, (void)site;
	floor_put(__builtin_ia32_rdtsc() << 32 | 1);
}
