/* bench_trace_floor.c — the floor of an enter/exit tracer, preloaded by
** bench/trace.sh and bench/trace_insn.sh: a TSC read and 8 bytes stored
** in a thread-local buffer at each entry and each exit (16 B and two TSC
** reads per call+return pair), the buffer reused when full, no I/O.  What
** any exact tracer must at least spend; meminst's trace=wall is measured
** against it. */
#include <stdint.h>

#define FLOOR_WORDS 8192 /* 64 KiB, like meminst's events chunks */

static __thread uint64_t floor_buf[FLOOR_WORDS] __attribute__((tls_model("initial-exec")));
static __thread unsigned floor_pos __attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline, no_instrument_function)) void floor_put(uint64_t w)
{
	unsigned p = floor_pos;
	floor_buf[p] = w;
	floor_pos = (p + 1) & (FLOOR_WORDS - 1);
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
