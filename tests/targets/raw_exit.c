/*
** raw_exit.c — a main thread that ends by the exit system call, not
** exit_group: the process ends with it when it is the program's last
** thread.  Without meminst it ends at once with status 3; meminst's own
** threads (the snapshot service, the wall-clock sampler, the trace writer)
** must neither keep it alive nor change its status.
**   raw_exit syscall   syscall(SYS_exit, 3), libc's wrapper
**   raw_exit asm       the syscall instruction itself (no wrapper to see)
**   raw_exit --no-unshare syscall|asm
**                      the same, run again under a seccomp filter that
**                      refuses unshare (EPERM): meminst's wall-clock
**                      sampler then has no probe thread of its own
** It allocates, keeps some blocks, and writes its lines first (flushed:
** the exit system call does not flush stdio).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *volatile keep[16];

/* argv[0] again, under a filter that refuses unshare. */
static int again_without_unshare(char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof code / sizeof *code, code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("raw_exit: seccomp");
		return 2;
	}
	execv("/proc/self/exe", (char *[]){argv[0], argv[2], NULL});
	perror("raw_exit: exec");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--no-unshare") == 0)
		return again_without_unshare(argv);
	if (argc != 2 || (strcmp(argv[1], "syscall") && strcmp(argv[1], "asm"))) {
		fprintf(stderr, "usage: raw_exit [--no-unshare] syscall|asm\n");
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
