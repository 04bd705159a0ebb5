/*
** forge.c — forged headers (run preloaded; see tests/integration/forge.sh).
**
**   forge headers   keeps one live block of 64 bytes and, 1,000,000 times,
**                   writes a forged header in front of it (size 1 TiB, the
**                   real type, thread and allocator, random check bits) and
**                   frees it.  A header meminst takes for its own is
**                   rewritten (freed flag, or the backend's free list), so
**                   each try is checked; the first accepted one ends the
**                   run with exit status 1.  Then the real header goes
**                   back and the block is freed for real.
**   forge index     (mim) a child allocates blocks A, B and C, overwrites
**                   B's place in the map (the word 32 bytes in front of it)
**                   and frees B, as a write-what-where attack on the map
**                   would: with A's place (an entry that holds another
**                   block), an index past the end of B's list, and the
**                   address of a word in shared memory.  Unchecked, the
**                   free would move the list's last entry (C) over A's
**                   entry, or write past the list.  Each time the parent
**                   checks that the child was stopped (SIGABRT) and that,
**                   when it was, A's and C's places were as before and
**                   the shared words unwritten.
**
** Built with -fno-builtin: the compiler would otherwise drop the stores
** made just before free() as dead.  Uninstrumented (the reference run)
** nothing is forged; both print the same
** line, so the runs compare.
*/
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

#define TRIES 1000000
static void *volatile sink;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static int forge_headers(void)
{
	unsigned long accepted = 0;
	if (probe_on()) {
		rng ^= (uint64_t)getpid() << 20;
		uint64_t *b = malloc(64);
		sink = b;
		uint64_t *h = b - 2; /* size word, meta word (both modes) */
		uint64_t size0 = h[0], meta0 = h[1];
		for (long i = 0; i < TRIES && !accepted; i++) {
			uint64_t r = next_random();
			uint64_t size = (1ull << 40) | (r & 0xffffull) << 48;
			uint64_t meta = (meta0 & ((1ull << 50) - 1)) | (r >> 16 << 50);
			h[0] = size, h[1] = meta;
			free(b);
			if (h[0] != size || h[1] != meta)
				accepted++;
		}
		if (accepted) {
			printf("forged header accepted\n");
			return 1;
		}
		h[0] = size0, h[1] = meta0;
		free(b);
	}
	printf("forged headers: %lu of %d accepted\n", accepted, TRIES);
	return 0;
}

static uint64_t *shared; /* [0..7] watched words; [8] the verdict */
static uint64_t *watch_a, *watch_c, saved_a, saved_c;

/* SIGABRT in the child: were the other blocks' places left alone? */
static void forge_on_abort(int sig)
{
	(void)sig;
	shared[8] = *watch_a == saved_a && *watch_c == saved_c ? 1 : 2;
}

static void forge_index_child(int how)
{
	uint64_t *a = malloc(64), *b = malloc(64), *c = malloc(64), saved_b[4];
	sink = a, sink = b, sink = c;
	watch_a = a - 4, watch_c = c - 4;
	saved_a = *watch_a, saved_c = *watch_c;
	memcpy(saved_b, b - 4, sizeof saved_b);
	signal(SIGABRT, forge_on_abort);
	if (how == 0)
		b[-4] = 0; /* the orphans' list, which does not hold it */
	else if (how == 1)
		b[-4] = 0x7fffffffull << 32; /* a list number past the last */
	else if (how == 2)
		b[-4] = (uintptr_t)&shared[0]; /* an address of the attacker's choice */
	else { /* freed, then its whole header written back: its list no longer holds it */
		free(b);
		memcpy(b - 4, saved_b, sizeof saved_b);
	}
	free(b);
	_exit(0); /* not reached when the index is checked */
}

static int forge_index(void)
{
	if (!probe_on()) {
		puts("index: nothing written");
		return 0;
	}
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 2;
	for (int how = 0; how < 4; how++) {
		memset(shared, 0x5a, 64);
		shared[8] = 0;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			forge_index_child(how);
		int st;
		waitpid(pid, &st, 0);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT) {
			printf("index %d: the child was not stopped (status %#x)\n", how, st);
			return 1;
		}
		if (shared[8] != 1) {
			printf("index %d: another block's place was written\n", how);
			return 1;
		}
		for (int i = 0; i < 8; i++)
			if (shared[i] != 0x5a5a5a5a5a5a5a5aull) {
				printf("index %d: word %d written (%#llx)\n", how, i, (unsigned long long)shared[i]);
				return 1;
			}
	}
	puts("index: nothing written");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "headers") == 0)
		return forge_headers();
	if (argc == 2 && strcmp(argv[1], "index") == 0)
		return forge_index();
	fprintf(stderr, "usage: forge headers|index\n");
	return 2;
}
