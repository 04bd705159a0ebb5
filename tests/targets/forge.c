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
**   forge links     (mim) a child overwrites the list links of a live block
**                   with the addresses of two words in shared memory and
**                   frees it, as an unlink-write attack would; the parent
**                   checks that the child was stopped (SIGABRT) and that
**                   neither word was written.
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

static int forge_links(void)
{
	if (!probe_on()) {
		puts("links: nothing written");
		return 0;
	}
	/* two 16-byte-aligned "headers" whose words an unlink would write */
	uint64_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return 2;
	memset(w, 0x5a, 64);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		uint64_t *b = malloc(64);
		sink = b;
		b[-4] = (uintptr_t)&w[0]; /* next */
		b[-3] = (uintptr_t)&w[4]; /* prev */
		free(b);
		_exit(0); /* not reached when the unlink is checked */
	}
	int st;
	waitpid(pid, &st, 0);
	for (int i = 0; i < 8; i++)
		if (w[i] != 0x5a5a5a5a5a5a5a5aull) {
			printf("links: word %d written (%#llx)\n", i, (unsigned long long)w[i]);
			return 1;
		}
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT) {
		printf("links: the child was not stopped (status %#x)\n", st);
		return 1;
	}
	puts("links: nothing written");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "headers") == 0)
		return forge_headers();
	if (argc == 2 && strcmp(argv[1], "links") == 0)
		return forge_links();
	fprintf(stderr, "usage: forge headers|links\n");
	return 2;
}
