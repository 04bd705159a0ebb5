/*
** secure_exec.c — a program installed set-user-ID (or set-group-ID, or
** with file capabilities), as passwd, ping or sudo are: the loader runs it
** in secure-execution mode (AT_SECURE) and ignores LD_PRELOAD.  It says
** whether it runs with other credentials than its caller's, allocates,
** and exits 0.
*/
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(void)
{
	char *p = malloc(100);
	printf("secure execution: %s\n", getauxval(AT_SECURE) ? "yes" : "no");
	free(p);
	return 0;
}
