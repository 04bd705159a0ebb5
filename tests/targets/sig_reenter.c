/*
** sig_reenter.c — allocations from a signal handler that interrupted
** meminst itself, in the same thread (issue 17 item 6).  The main thread
** churns malloc and free; a CPU-time timer (ITIMER_PROF) interrupts it
** every 100 us, and when the interrupted instruction lies in libmeminst's
** code the handler mallocs and frees a few blocks, and frees the block
** main left for it (allocated outside the handler).  It never runs its
** allocations when it interrupted libc: glibc's malloc is not re-entrant,
** which is not what is tested here.  Before the fix, mim spun forever on
** the lock the interrupted code held.
**
** Bounded by counts: main stops after 300 re-entries or 20M pairs.  It
** prints "ok" (stdout, as uninstrumented), and "reentered N" on stderr
** for the test to check; the counters must come back to where they
** started (probe.h).
*/
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

#include "probe.h"

#define SEGS 8
static uintptr_t seg_lo[SEGS], seg_hi[SEGS];
static int nsegs;
static volatile sig_atomic_t reentered, handled;
static void *volatile gift; /* a block main allocated, for the handler to free */

static int find_meminst(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libmeminst"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nsegs < SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			seg_lo[nsegs] = info->dlpi_addr + ph->p_vaddr;
			seg_hi[nsegs] = seg_lo[nsegs] + ph->p_memsz;
			nsegs++;
		}
	}
	return 1;
}

static int in_meminst(uintptr_t pc)
{
	for (int i = 0; i < nsegs; i++)
		if (pc >= seg_lo[i] && pc < seg_hi[i])
			return 1;
	return 0;
}

static void on_prof(int sig, siginfo_t *si, void *uc_)
{
	(void)sig, (void)si;
	ucontext_t *uc = uc_;
	handled++;
	if (!in_meminst((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]))
		return;
	reentered++;
	for (int i = 0; i < 16; i++) {
		char *p = malloc(24 + 40 * (size_t)i);
		if (!p)
			abort();
		p[0] = (char)i;
		free(p);
	}
	void *g = gift;
	gift = NULL;
	free(g);
}

int main(void)
{
	dl_iterate_phdr(find_meminst, NULL);
	struct probe_table before = {NULL, 0, 0};
	if (probe_on())
		before = probe_table_read(MEMINST_STATUS_TOTAL);
	struct sigaction sa = {.sa_sigaction = on_prof, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = {{0, 100}, {0, 100}};
	setitimer(ITIMER_PROF, &it, NULL);
	sigset_t prof, old;
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	void *slot[64] = {0};
	unsigned r = 1;
	for (unsigned long i = 0; i < 20000000ul && reentered < 300; i++) {
		r = r * 1103515245 + 12345;
		unsigned k = (r >> 8) & 63;
		free(slot[k]);
		slot[k] = malloc(16 + (r >> 20) % 500);
		if (!gift && (i & 63) == 0) { /* the handler frees gift: not while we set it */
			sigprocmask(SIG_BLOCK, &prof, &old);
			gift = malloc(100);
			sigprocmask(SIG_SETMASK, &old, NULL);
		}
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
	sigprocmask(SIG_BLOCK, &prof, &old);
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	free(gift);
	gift = NULL;
	if (before.e) {
		struct probe_table after = probe_table_read(MEMINST_STATUS_TOTAL);
		if (after.e[0].blocks.current != before.e[0].blocks.current ||
		    after.e[0].sizes.current != before.e[0].sizes.current)
			probe_fail("total now %llu B in %llu blocks, %llu B in %llu blocks at the start",
				   (unsigned long long)after.e[0].sizes.current,
				   (unsigned long long)after.e[0].blocks.current,
				   (unsigned long long)before.e[0].sizes.current,
				   (unsigned long long)before.e[0].blocks.current);
	}
	fprintf(stderr, "reentered %d of %d signals\n", (int)reentered, (int)handled);
	printf("ok\n");
	return 0;
}
