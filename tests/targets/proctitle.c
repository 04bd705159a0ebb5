/*
** proctitle.c — sets its process title the way redis, nginx and postgres
** do: the environment is copied to the heap, then the block of argv and
** environ strings is written over with the title (and zeros).  Afterwards
** it allocates, raises SIGUSR2 (a signal snapshot when asked for) and
** exits: every setting meminst read from MEMINST must have been kept in
** memory of its own, or the snapshot path is read from the title.
**
**   proctitle [KEEP [signal]]   KEEP 4 KiB blocks held at exit; signal:
**                               raise SIGUSR2 (only under snapshot_at=signal)
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void set_title(int argc, char **argv, const char *title)
{
	char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	size_t n = 0;
	while (environ[n])
		n++;
	char **copy = malloc((n + 1) * sizeof *copy);
	for (size_t i = 0; i < n; i++) {
		if (environ[i] == end)
			end += strlen(environ[i]) + 1;
		copy[i] = strdup(environ[i]);
	}
	copy[n] = NULL;
	environ = copy;
	memset(start, 0, (size_t)(end - start));
	strncpy(start, title, (size_t)(end - start) - 1);
}

int main(int argc, char **argv)
{
	int keep = argc > 1 ? atoi(argv[1]) : 100;
	int sig = argc > 2 && strcmp(argv[2], "signal") == 0; /* raise the snapshot signal */
	set_title(argc, argv, "proctitle: /");
	/* what the real programs also do: the copied environment changes */
	setenv("MEMINST", "mim,snapshot=/", 1);
	void **blocks = malloc((size_t)keep * sizeof *blocks);
	for (int i = 0; i < keep; i++)
		blocks[i] = malloc(4096);
	if (sig)
		raise(SIGUSR2);
	printf("held %d blocks\n", keep);
	return 0;
}
