/*
** snap_forksig.c — a forked child and the parent's service thread, for
** tests/integration/snap_bugs.sh.  Runs preloaded.
**
** Usage: snap_forksig busy PATH     (MEMINST=…,snapshot=PATH,snapshot_at=signal)
**        snap_forksig signal        (MEMINST=…,snapshot_at=signal)
**
** busy: holds 200,000 blocks, raises SIGUSR2 and waits until the service
** thread is writing that snapshot (PATH-journal exists), then forks a
** child that calls exit().  The child must exit; the parent waits for it
** at most 3 s (it needs milliseconds), then kills it and prints "child
** hung", else prints "child exited N".  Prints "no window" if the write
** was not seen within 10 s.
**
** signal: forks a child that raises SIGUSR2 and leaves with _exit; the
** parent waits for it, then 1 s more (the time the snapshot would take to
** appear), and exits.  The signal was the child's, so no snapshot of the
** parent should be stored.  Prints "parent PID" and "child status N"
** (whatever the child does with the signal, it is not checked).
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCKS 200000

static void *volatile keep[BLOCKS];

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Wait for the child at most `ms` milliseconds: its exit status, or -1. */
static int wait_child(pid_t pid, long ms)
{
	int status;
	for (long t = 0; t < ms; t += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		pause_ms(10);
	}
	return -1;
}

static int busy(const char *path)
{
	char journal[4096];
	snprintf(journal, sizeof journal, "%s-journal", path);
	for (int i = 0; i < BLOCKS; i++)
		keep[i] = malloc(32);
	raise(SIGUSR2);
	int t = 0;
	while (access(journal, F_OK) != 0 && t++ < 10000)
		pause_ms(1);
	if (t > 10000) {
		printf("no window\n");
		return 0;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		exit(0);
	int rc = wait_child(pid, 3000);
	if (rc < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		printf("child hung\n");
	} else {
		printf("child exited %d\n", rc);
	}
	return 0;
}

static int child_signal(void)
{
	keep[0] = malloc(100);
	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		raise(SIGUSR2);
		pause_ms(100);
		_exit(0);
	}
	printf("child status %d\n", wait_child(pid, 10000));
	pause_ms(1000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "busy") == 0)
		return busy(argv[2]);
	if (argc == 2 && strcmp(argv[1], "signal") == 0)
		return child_signal();
	fprintf(stderr, "usage: snap_forksig busy PATH | snap_forksig signal\n");
	return 2;
}
