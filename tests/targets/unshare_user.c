/*
** unshare_user.c — a program that enters a user namespace of its own, as
** `unshare -r`, rootless container tools and sandboxes do.
**
**   unshare_user
**
** unshare(CLONE_NEWUSER) needs a process of one thread: the kernel says
** EINVAL otherwise.  It prints the call's answer (and errno), then
** allocates, sleeps 300 ms (meminst's interval snapshots go on), prints
** and exits with status 3.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void)
{
	int rc = unshare(CLONE_NEWUSER);
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
