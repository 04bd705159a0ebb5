/*
** snap_sqfork.c — a program that uses SQLite itself and forks while one of
** its threads holds one of SQLite's static mutexes, for
** tests/integration/snap_sqfork.sh.
**
** Usage: snap_sqfork
**
** Runs preloaded with MEMINST=…,snapshot=DIR/c.%p.db.  Each child
** allocates and exits at once, storing its exit snapshot; a child still
** there after 10 s is stuck ("stuck PID", killed, and the run stops with
** status 1).  Cases, each printing "case NAME pid PID":
**   main, mem, vfs1  a thread holds that mutex of the program's SQLite
**                    (STATIC_MAIN, STATIC_MEM, STATIC_VFS1) from before the
**                    fork until it is over (the child has it held by a
**                    thread it does not have, as in a plain run: the child
**                    does not use SQLite);
**   busy             two threads use SQLite without a pause (sqlite3_malloc,
**                    an in-memory database) while the main thread forks 100
**                    times.
** Then "stuck K".  With meminst storing through the program's libsqlite3,
** a child's exit snapshot needed those mutexes: it waited for ever, then
** (the fork handlers taking them by try-lock, for 2 s at most) the fork
** waited and the child said its snapshot was not stored.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static atomic_int phase; /* 0 idle, 1 held, 3 fork over */
static int hold_id;
static atomic_bool stop;

static void nap_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&t, &t) != 0)
		;
}

static void *holder(void *arg)
{
	(void)arg;
	sqlite3_mutex *m = sqlite3_mutex_alloc(hold_id);
	sqlite3_mutex_enter(m);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) < 3)
		nap_ms(1);
	sqlite3_mutex_leave(m);
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		sqlite3 *db;
		void *p = sqlite3_malloc(100);
		sqlite3_free(p);
		if (sqlite3_open(":memory:", &db) == SQLITE_OK)
			sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL, NULL);
		sqlite3_close(db);
	}
	return NULL;
}

/* Wait for pid, 10 s at most: 0 when it ended, 1 when it had to be killed. */
static int reap(pid_t pid)
{
	for (int i = 0; i < 10000; i++) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return 0;
		nap_ms(1);
	}
	printf("stuck %d\n", (int)pid);
	fflush(stdout);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 1;
}

static pid_t fork_child(const char *name)
{
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		void *volatile x = malloc(100);
		(void)x;
		exit(0);
	}
	if (p > 0 && name)
		printf("case %s pid %d\n", name, (int)p);
	return p;
}

static int held_case(const char *name, int id)
{
	pthread_t t;
	hold_id = id;
	atomic_store(&phase, 0);
	if (pthread_create(&t, NULL, holder, NULL) != 0)
		return -1;
	while (atomic_load(&phase) != 1)
		nap_ms(1);
	pid_t p = fork_child(name);
	atomic_store(&phase, 3);
	pthread_join(t, NULL);
	return p < 0 ? -1 : reap(p);
}

static int busy_case(void)
{
	pthread_t t[2];
	int stuck = 0;
	atomic_store(&stop, false);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, busy, NULL) != 0)
			return -1;
	for (int i = 0; i < 100 && !stuck; i++) {
		pid_t p = fork_child(i == 0 ? "busy" : NULL);
		if (p < 0)
			break;
		stuck += reap(p);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return stuck;
}

int main(void)
{
	if (sqlite3_initialize() != SQLITE_OK)
		return 2;
	static const struct {
		const char *name;
		int id;
	} cases[] = {{"main", SQLITE_MUTEX_STATIC_MAIN},
		     {"mem", SQLITE_MUTEX_STATIC_MEM},
		     {"vfs1", SQLITE_MUTEX_STATIC_VFS1}};
	int stuck = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !stuck; i++) {
		int r = held_case(cases[i].name, cases[i].id);
		if (r < 0)
			return 2;
		stuck += r;
	}
	if (!stuck) {
		int r = busy_case();
		if (r < 0)
			return 2;
		stuck += r;
	}
	printf("stuck %d\n", stuck);
	return stuck != 0;
}
