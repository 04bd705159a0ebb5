/*
** snap_writers.c — two stores into one new database, the second while the
** first is still writing, for tests/integration/snap_api.sh.  Linked with
** -lmeminst.
**
** Usage: snap_writers PATH
**
** Holds 400,000 blocks (so that a store takes a while and SQLite writes
** pages into the file before it commits), starts a thread that stores a
** snapshot into PATH, waits until PATH has data and its rollback journal
** exists (the first transaction is under way), then stores a second
** snapshot into PATH itself.  The second store should wait for the first
** and be numbered after it; prints "first N" and "second N" (or -1).  If
** the first store ends before that state is seen, prints "no window".
*/
#include <meminst.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCKS 400000

static void *volatile keep[BLOCKS];
static const char *path;
static volatile int first_rc, first_done;

static void *first(void *arg)
{
	(void)arg;
	first_rc = meminst_store_memory_data(path);
	first_done = 1;
	return NULL;
}

/* PATH has data and PATH-journal exists: a transaction is in progress. */
static int writing(const char *journal)
{
	struct stat st;
	return stat(path, &st) == 0 && st.st_size > 0 && access(journal, F_OK) == 0;
}

int main(int argc, char **argv)
{
	pthread_t th;
	char journal[4096];
	if (argc != 2 || strlen(argv[1]) > sizeof journal - 9)
		return 2;
	path = argv[1];
	snprintf(journal, sizeof journal, "%s-journal", path);
	for (int i = 0; i < BLOCKS; i++)
		keep[i] = malloc(32);
	if (pthread_create(&th, NULL, first, NULL) != 0)
		return 1;
	struct timespec ms = {0, 1000000};
	while (!first_done && !writing(journal))
		nanosleep(&ms, NULL);
	if (first_done) {
		pthread_join(th, NULL);
		printf("no window\n");
		return 0;
	}
	int second_rc = meminst_store_memory_data(path);
	pthread_join(th, NULL);
	printf("first %d\nsecond %d\n", first_rc, second_rc);
	return 0;
}
