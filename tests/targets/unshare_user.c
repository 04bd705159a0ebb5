/*
** unshare_user.c — a program that enters a user namespace of its own, as
** `unshare -r`, rootless container tools and sandboxes do.
**
**   unshare_user [syscall]
**
** unshare(CLONE_NEWUSER) needs a process of one thread: the kernel says
** EINVAL otherwise.  With `syscall` the call is syscall(SYS_unshare, ...),
** through libc's syscall(), as raw callers make it.  It prints the call's answer (and errno), then
** allocates, sleeps 300 ms (meminst's interval snapshots go on), prints
** and exits with status 3.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rc = argc > 1 && !strcmp(argv[1], "syscall") ? (int)syscall(SYS_unshare, CLONE_NEWUSER)
							  : unshare(CLONE_NEWUSER);
	printf("unshare(CLONE_NEWUSER): %d %s\n", rc, rc ? strerror(errno) : "");
	fflush(stdout);
	char *p = malloc(1000);
	memset(p, 1, 1000);
	struct timespec ts = {0, 300 * 1000 * 1000};
	nanosleep(&ts, NULL);
	printf("done %d\n", p[999]);
	free(p);
	return 3;
}
