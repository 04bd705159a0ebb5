/*
** raw_exit.c — a main thread that ends by the exit system call, not
** exit_group: the process ends with it when it is the program's last
** thread.  Without meminst it ends at once with status 3; meminst's own
** threads (the snapshot service, the wall-clock sampler, the trace writer)
** must neither keep it alive nor change its status.
**   raw_exit syscall   syscall(SYS_exit, 3), libc's wrapper
**   raw_exit asm       the syscall instruction itself (no wrapper to see)
** It allocates, keeps some blocks, and writes its lines first (flushed:
** the exit system call does not flush stdio).
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *volatile keep[16];

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "syscall") && strcmp(argv[1], "asm"))) {
		fprintf(stderr, "usage: raw_exit syscall|asm\n");
		return 2;
	}
	for (int i = 0; i < 16; i++)
		keep[i] = malloc(100 + (size_t)i);
	printf("kept 16 blocks\n");
	fflush(stdout);
	if (strcmp(argv[1], "syscall") == 0)
		syscall(SYS_exit, 3);
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(SYS_exit), "D"(3) : "rcx", "r11", "memory");
#else
	syscall(SYS_exit, 3);
#endif
	return 1;
}
