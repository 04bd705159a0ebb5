/*
** seccomp_filter.c — a program that locks itself in a seccomp filter, as
** sandboxed tools do (a parser, a codec, a browser's renderer).
**
**   seccomp_filter kill|errno|syscall|strict|nopid|tsync|fork|probe|inherit
**
** It allocates, writes lines to stdout through stdio (buffered when stdout
** is a pipe, so they are lost if the process is killed before exit), then
** installs a filter that allows only the system calls the program itself
** needs from there on (write, brk, mmap, munmap, exit_group, ...):
**   kill     prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER), anything else
**            kills the process (SECCOMP_RET_KILL_PROCESS)
**   errno    the same, anything else fails with EPERM (SECCOMP_RET_ERRNO)
**   syscall  the kill filter through syscall(SYS_seccomp, ...), the way
**            libseccomp's seccomp_load installs it
**   strict   prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): read, write,
**            _exit and sigreturn only; it ends with SYS_exit
**   nopid    everything is allowed but getpid, which fails with EPERM
**   tsync    the kill filter, allowing also futex and the sleeps, through
**            seccomp(2) with SECCOMP_FILTER_FLAG_TSYNC: every thread of
**            the process is put under it, meminst's too; it then sleeps
**            1.5 s in the filter (a thread of meminst's looking at /proc
**            there was killed: openat) and, before that, has a thread of
**            its own free blocks the main thread allocated (in mim, such
**            a free made every thread pass a barrier by membarrier, which
**            the filter kills on)
**   probe    no filter: only the probes libseccomp makes before its first
**            filter (seccomp(2) strict mode with flags 1, a filter with no
**            program: EINVAL, EFAULT); meminst took the first for strict
**            mode and turned snapshots, tracing and its threads off
**   fork     the tsync filter for this thread only (no TSYNC), allowing
**            also fork, wait, getpid, close and prctl: it forks, the child
**            sleeps 1.5 s in the filter and ends by _exit(4), which the
**            parent prints (a child's service thread, made under the
**            filter with control=on, and its _exit's look at /proc were
**            killed; so was the parent, its lock waits' sched_yield)
**   inherit  as man-db's children: a filter that fails openat for writing
**            and socket with ENOSYS (SECCOMP_RET_ERRNO), everything else
**            allowed; then it executes itself ("inherited"), so that the
**            new program starts under a filter it cannot read (meminst
**            said "cannot create ...: Function not implemented" at each
**            store, for the trace file and the control channel)
** Then it allocates and frees some more, prints, and exits with status 3.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* inherit: openat(2) or open(2) for writing or creating, and socket(2), fail with ENOSYS */
static void install_enosys(void)
{
	const unsigned enosys = SECCOMP_RET_ERRNO | ENOSYS, writing = 03 | 0100 /* O_ACCMODE|O_CREAT */;
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, enosys),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])), /* open's flags */
		BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])), /* openat's */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writing, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, enosys),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
		perror("seccomp");
		exit(1);
	}
}

static void install(const char *how)
{
	if (strcmp(how, "inherited") == 0)
		return;
	bool forks = strcmp(how, "fork") == 0, tsync = strcmp(how, "tsync") == 0;
	unsigned deny = strcmp(how, "errno") == 0 ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_KILL_PROCESS;
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_write),
		ALLOW(SYS_brk),
		ALLOW(SYS_mmap),
		ALLOW(SYS_munmap),
		ALLOW(SYS_mremap),
		ALLOW(SYS_exit_group),
		ALLOW(SYS_exit),
		ALLOW(SYS_rt_sigreturn),
		ALLOW(SYS_newfstatat), /* stdio's first look at stdout */
		ALLOW(SYS_fstat),
		/* tsync: the lock waits and the sleep too (never matched else) */
		ALLOW(tsync ? SYS_futex : ~0u),
		ALLOW(tsync ? SYS_clock_nanosleep : ~0u),
		ALLOW(tsync ? SYS_clone3 : ~0u), /* and what a thread's start and end need */
		ALLOW(tsync ? SYS_clone : ~0u),
		ALLOW(tsync ? SYS_mprotect : ~0u),
		ALLOW(tsync ? SYS_set_robust_list : ~0u),
		ALLOW(tsync ? SYS_rseq : ~0u),
		ALLOW(tsync ? SYS_madvise : ~0u),
		ALLOW(tsync ? SYS_rt_sigprocmask : ~0u),
		ALLOW(tsync ? SYS_rt_sigaction : ~0u),
		ALLOW(tsync || forks ? SYS_gettid : ~0u),
		ALLOW(forks ? SYS_futex : ~0u), /* fork: and what a child and its wait need */
		ALLOW(forks ? SYS_clock_nanosleep : ~0u),
		ALLOW(forks ? SYS_clone : ~0u),
		ALLOW(forks ? SYS_wait4 : ~0u),
		ALLOW(forks ? SYS_set_robust_list : ~0u),
		ALLOW(forks ? SYS_rt_sigprocmask : ~0u),
		ALLOW(forks ? SYS_getpid : ~0u),
		ALLOW(forks ? SYS_close : ~0u),
		ALLOW(forks ? SYS_prctl : ~0u),
		BPF_STMT(BPF_RET | BPF_K, deny),
	};
	struct sock_filter nopid[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	if (strcmp(how, "probe") == 0) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) == 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, NULL) == 0) {
			fprintf(stderr, "a probe took effect\n");
			exit(1);
		}
		return;
	}
	struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
	if (strcmp(how, "nopid") == 0)
		prog = (struct sock_fprog){.len = sizeof nopid / sizeof nopid[0], .filter = nopid};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		perror("PR_SET_NO_NEW_PRIVS");
		exit(1);
	}
	long r;
	if (strcmp(how, "strict") == 0)
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
	else if (strcmp(how, "syscall") == 0 || tsync || forks)
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
	else
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	if (r != 0) {
		perror("seccomp");
		exit(1);
	}
}

/* keep[16..31]: blocks of another thread's */
static void *free_half(void *arg)
{
	char **keep = arg;
	for (int i = 16; i < 32; i++)
		free(keep[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seccomp_filter kill|errno|syscall|strict|nopid|tsync|fork|probe\n");
		return 2;
	}
	static char *keep[64];
	for (int i = 0; i < 64; i++)
		keep[i] = malloc(100 + (size_t)i);
	printf("before the filter: %d blocks\n", 64);
	if (strcmp(argv[1], "inherit") == 0) {
		fflush(stdout);
		install_enosys();
		execl("/proc/self/exe", "seccomp_filter", "inherited", (char *)NULL);
		perror("exec");
		return 1;
	}
	install(argv[1]);
	size_t total = 0;
	for (int round = 0; round < 100; round++) {
		char *p = malloc(1000 + (size_t)round);
		if (!p)
			return 1;
		memset(p, round, 1000);
		total += (unsigned char)p[999];
		free(p);
	}
	printf("in the filter: checksum %zu\n", total);
	if (strcmp(argv[1], "tsync") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, free_half, keep) != 0 || pthread_join(th, NULL) != 0)
			return 1;
		printf("a thread freed 16 blocks of main's\n");
		usleep(1500 * 1000);
	}
	if (strcmp(argv[1], "fork") == 0) {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			usleep(1500 * 1000);
			_exit(4);
		}
		int st = 0;
		if (child < 0 || waitpid(child, &st, 0) != child)
			return 1;
		printf("the child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	for (int i = 0; i < (strcmp(argv[1], "tsync") ? 32 : 16); i++)
		free(keep[i]);
	printf("done\n");
	if (strcmp(argv[1], "strict") == 0) {
		fflush(stdout);
		syscall(SYS_exit, 3);
	}
	return 3;
}
