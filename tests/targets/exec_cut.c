/*
** exec_cut.c — a child that executes a program while its first snapshot
** is being stored (exec_cut.sh).  `exec_cut BLOCKS PROGRAM ARGS...`: the
** parent makes BLOCKS blocks, so that a map snapshot of them takes a
** while, and forks; the child waits until the store into its snapshot
** file (MEMINST's snapshot=PATH, %p its pid) has begun (SQLite's journal
** beside it), at most 20,000 looks of 0.2 ms, then executes PROGRAM
** without LD_PRELOAD (a program meminst does not measure, which never
** repairs the file), or with it when EXEC_CUT_MEASURED is set.  The parent prints what it saw: "store under way" or
** "no store seen" (the run proves nothing then).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* snapshot=PATH of MEMINST, %p expanded to this process's pid; -1: none */
static int part_path(char *out, size_t len)
{
	const char *m = getenv("MEMINST"), *s = m ? strstr(m, "snapshot=") : NULL;
	size_t o = 0;
	if (!s)
		return -1;
	for (s += 9; *s && *s != ',' && o + 16 < len; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			o += (size_t)snprintf(out + o, len - o, "%d", (int)getpid());
			s++;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
	return 0;
}

/* The environment without LD_PRELOAD, or as it is with EXEC_CUT_MEASURED. */
static char **env_unmeasured(void)
{
	if (getenv("EXEC_CUT_MEASURED"))
		return environ;
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof *env);
	for (size_t i = 0; env && i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[k++] = environ[i];
	return env;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: exec_cut BLOCKS PROGRAM ARGS...\n", stderr);
		return 2;
	}
	for (long k = atol(argv[1]); k > 0; k--)
		if (!malloc(48))
			return 3;
	int seen[2];
	if (pipe(seen) != 0)
		return 3;
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char path[4096], journal[4200];
		char **env = env_unmeasured();
		if (part_path(path, sizeof path) != 0 || !env)
			_exit(3);
		snprintf(journal, sizeof journal, "%s-journal", path);
		struct timespec nap = {0, 200000};
		int tries = 0;
		while (access(journal, F_OK) != 0 && tries++ < 20000)
			nanosleep(&nap, NULL);
		char c = tries <= 20000 ? 'y' : 'n';
		if (write(seen[1], &c, 1) != 1)
			_exit(3);
		execve(argv[2], argv + 2, env);
		_exit(127);
	}
	close(seen[1]);
	char c = 'n';
	if (read(seen[0], &c, 1) != 1)
		c = 'n';
	int status;
	waitpid(p, &status, 0);
	printf("%s\n", c == 'y' ? "store under way" : "no store seen");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
