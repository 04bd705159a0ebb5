/*
** snap_fdfork.c — a single-threaded program that forks often and relies on
** its descriptor numbers, for tests/integration/snap_fdfork.sh.  Runs
** preloaded, with meminst's background threads busy (interval snapshots
** every millisecond, or wall-clock sampling).
**
** Usage: snap_fdfork N
**        snap_fdfork daemon FILE   (MEMINST=…,snapshot_at=signal+peak)
**        snap_fdfork trace FILE    (MEMINST=…,sample=…,sample_clock=wall)
**        snap_fdfork files PREFIX  (MEMINST=…,alloc_sample=…)
**
** N rounds of: open /dev/null and close it, sleep half a millisecond, and
** check that the number is still closed (in a program with one thread
** nothing else can take it: bash closes such numbers a second time after
** fork, and would close whatever took it); then fork a child that calls
** exit(), and wait for it at most 10 s (a child made while a thread of the
** parent held a lock it then needs would hang).  Stops at the first hung
** child.  Prints "hung H taken T".
**
** daemon: closes every descriptor above 2, as daemons do, opens FILE
** twice, for reading then for writing (3 and 4, and again under every
** number from 960 to 1023: those of the pipe meminst made at start), writes "log\n", raises
** SIGUSR2 and climbs to 8 MiB and back (a signal and a peak snapshot),
** then reads FILE back through the first descriptor: meminst must neither
** write to nor read from the program's files.  Prints "file LENGTH
** offset N" (N: where the reading descriptor stands, 0).
**
** trace: closes meminst's trace file (found in /proc/self/fd) and opens
** FILE under its number, then 100 times allocates and frees 2000
** blocks, writes "ok\n" to FILE and sleeps 5 ms.  Prints "size N" (300
** when nothing else wrote to FILE).
**
** files: closes every descriptor above 2, as daemons do, and opens PREFIX0
** to PREFIX7 (the lowest numbers: those libunwind's pipe had among them),
** then 100 times allocates and frees 2000 blocks, writes "ok\n" to each
** file and sleeps 1 ms.  Prints "sizes" and each file's size (300 when
** nothing else wrote to it); a failed write ends it with status 1.
*/
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The child's exit status, or -1 if it has not ended within 10 s. */
static int wait_child(pid_t pid)
{
	int status;
	for (long t = 0; t < 10000; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		pause_us(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static int daemon_files(const char *path)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	int w = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	close(w); /* created: now the reader takes 3, the writer 4 */
	int r = open(path, O_RDONLY);
	w = open(path, O_WRONLY);
	if (w < 0 || r < 0 || write(w, "log\n", 4) != 4) {
		perror(path);
		return 1;
	}
	/* meminst keeps its descriptors at high numbers: the file goes under
	** those too (the reader under the even ones), where its pipe was */
	for (int fd = 960; fd < 1024; fd++)
		dup2(fd % 2 ? w : r, fd);
	raise(SIGUSR2);
	static char *keep[128];
	for (int i = 0; i < 128; i++)
		keep[i] = malloc(65536);
	for (int i = 0; i < 128; i++)
		free(keep[i]);
	pause_us(300000); /* the service thread's turn */
	off_t at = lseek(r, 0, SEEK_CUR);
	char buf[64];
	ssize_t n = pread(r, buf, sizeof buf, 0);
	printf("file %zd offset %lld\n", n, (long long)at);
	return 0;
}

static int daemon_trace(const char *path)
{
	/* meminst's trace file, closed as a daemon closing everything would
	** (only it: libunwind keeps descriptors of its own too) */
	int fd = -1;
	for (int i = 3; i < 1024 && fd < 0; i++) {
		char link[64], target[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", i);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n > 6 && memcmp(target + n - 6, ".trace", 6) == 0)
			fd = i;
	}
	if (fd < 0) {
		printf("no trace file open\n");
		return 1;
	}
	close(fd);
	/* under the number the trace file had (meminst keeps its files at
	** high numbers, which an open does not return: dup2 puts it there) */
	int own = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (own >= 0 && own != fd && dup2(own, fd) == fd) {
		close(own);
		own = fd;
	}
	if (own != fd) {
		printf("the file took %d, not %d\n", own, fd);
		return 1;
	}
	for (int r = 0; r < 100; r++) {
		static void *v[2000];
		for (int i = 0; i < 2000; i++)
			v[i] = malloc(1000 + (size_t)r);
		for (int i = 0; i < 2000; i++)
			free(v[i]);
		if (write(own, "ok\n", 3) != 3)
			return 1;
		pause_us(5000);
	}
	printf("size %lld\n", (long long)lseek(own, 0, SEEK_END));
	return 0;
}

static int daemon_many(const char *prefix)
{
	enum { FILES = 8 };
	int fds[FILES];
	char name[4096];
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (int i = 0; i < FILES; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		if ((fds[i] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0) {
			perror(name);
			return 1;
		}
	}
	for (int r = 0; r < 100; r++) {
		static void *v[2000];
		for (int i = 0; i < 2000; i++)
			v[i] = malloc(1000 + (size_t)r);
		for (int i = 0; i < 2000; i++)
			free(v[i]);
		for (int i = 0; i < FILES; i++)
			if (write(fds[i], "ok\n", 3) != 3) {
				printf("write to file %d: %s\n", i, strerror(errno));
				return 1;
			}
		pause_us(1000);
	}
	printf("sizes");
	for (int i = 0; i < FILES; i++)
		printf(" %lld", (long long)lseek(fds[i], 0, SEEK_END));
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "files") == 0)
		return daemon_many(argv[2]);
	if (argc > 2 && strcmp(argv[1], "trace") == 0)
		return daemon_trace(argv[2]);
	if (argc > 2 && strcmp(argv[1], "daemon") == 0)
		return daemon_files(argv[2]);
	int rounds = argc > 1 ? atoi(argv[1]) : 100, hung = 0, taken = 0;
	for (int i = 0; i < rounds && !hung; i++) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0) {
			perror("open /dev/null");
			return 1;
		}
		close(fd);
		pause_us(500);
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			taken++;
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			exit(0);
		hung += wait_child(pid) < 0;
	}
	printf("hung %d taken %d\n", hung, taken);
	return 0;
}
