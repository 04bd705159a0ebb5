/*
** sandbox_alone.c — a program that makes sure it runs alone before it
** locks itself in, as Chromium's zygote does before it drops its
** capabilities (sandbox/linux/services/thread_helpers.cc): the link count
** of /proc/self/task, looked at through a descriptor of /proc, must be 3
** (".", ".." and one thread), else it aborts.
**
**   sandbox_alone [fork|clone]
**
** It allocates, prints, makes sure it is alone, frees and prints again.
** fork, clone: first a child made by fork, or by the raw clone system call
** (Chromium's launcher, before its exec), makes sure it is alone and ends
** by _exit(5); the parent prints how it ended.  Exit status 4.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void alone_or_abort(const char *who)
{
	int proc = open("/proc/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	errno = EDOM; /* a call that succeeds leaves errno as it was */
	if (proc < 0 || fstatat(proc, "self/task/", &st, 0) != 0) {
		perror("/proc/self/task");
		abort();
	}
	if (errno != EDOM) {
		fprintf(stderr, "%s: errno changed by a successful fstatat: %d\n", who, errno);
		abort();
	}
	close(proc);
	if (st.st_nlink != 3) {
		fprintf(stderr, "%s: not alone: %d threads\n", who, (int)st.st_nlink - 2);
		abort();
	}
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	char *keep[50];
	for (int i = 0; i < 50; i++)
		keep[i] = malloc(64 + (size_t)i * 8);
	printf("allocated 50 blocks\n");
	fflush(stdout);
	if (strcmp(how, "fork") == 0 || strcmp(how, "clone") == 0) {
		pid_t child = strcmp(how, "fork") == 0 ? fork() : (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		if (child == 0) {
			alone_or_abort("child");
			_exit(5);
		}
		int st = 0;
		if (child < 0 || waitpid(child, &st, 0) != child)
			return 1;
		printf("the child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	alone_or_abort("main");
	printf("alone\n");
	for (int i = 0; i < 50; i++)
		free(keep[i]);
	printf("freed\n");
	return 4;
}
