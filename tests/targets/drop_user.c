/*
** drop_user.c — a program that switches to another user, as daemons do
** (memcached -u nobody, su, setpriv): run as root.
**
**   drop_user keep|exec|fork|temp UID GID
**
** It allocates, then setgroups(0), setgid(GID), setuid(UID):
**   keep   it goes on as that user: allocates and frees 2000 blocks,
**          prints its effective uid and exits with status 3
**   exec   it executes itself ("after") as that user, which does the same
**   fork   it forks a child as that user, which does the same and exits
**          with status 4, waited for
**   temp   seteuid(UID) alone, some work, seteuid(0) back (a daemon's
**          temporary drop), then the same as root
*/
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int work(int status)
{
	char *keep = NULL;
	for (int i = 0; i < 2000; i++) {
		char *p = malloc(64 + (size_t)i % 512);
		if (!p)
			return 1;
		memset(p, i, 64);
		free(keep);
		keep = p;
	}
	/* 100 ms more: the 10 ms interval snapshots come whatever the load */
	nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	printf("as uid %d: done\n", (int)geteuid());
	fflush(stdout);
	free(keep);
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "after") == 0)
		return work(3);
	if (argc != 4) {
		fprintf(stderr, "usage: drop_user keep|exec|fork|temp UID GID\n");
		return 2;
	}
	char *early = malloc(1000);
	printf("as uid %d: start\n", (int)geteuid());
	fflush(stdout);
	if (strcmp(argv[1], "temp") == 0) {
		if (seteuid((uid_t)atoi(argv[2])) != 0 || work(0) != 0 || seteuid(0) != 0) {
			perror("drop_user");
			return 1;
		}
		free(early);
		return work(3);
	}
	if (setgroups(0, NULL) != 0 || setgid((gid_t)atoi(argv[3])) != 0 || setuid((uid_t)atoi(argv[2])) != 0) {
		perror("drop_user");
		return 1;
	}
	free(early);
	if (strcmp(argv[1], "exec") == 0) {
		execl("/proc/self/exe", "drop_user", "after", (char *)NULL);
		perror("exec");
		return 1;
	}
	if (strcmp(argv[1], "fork") == 0) {
		pid_t child = fork();
		if (child == 0)
			_exit(work(4));
		int st = 0;
		if (child < 0 || waitpid(child, &st, 0) != child)
			return 1;
		printf("child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 3;
	}
	return work(3);
}
