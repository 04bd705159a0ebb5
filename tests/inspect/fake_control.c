/*
** fake_control.c — a stand-in for a process's meminst control channel, for
** tests/inspect/control.sh, until the library serves it itself.
**
**   fake_control MODE FIXTURE.sql ID LOG
**
** listens on the abstract socket "\0meminst-control-<own pid>", prints
** "ready PID" on stdout and closes it, then serves one connection: it reads
** the request line, appends it to LOG and, by MODE,
**   ok       builds the database at the requested path from FIXTURE.sql
**            (the file may exist, empty: inspect's mkstemp) and answers
**            "ok ID"
**   error    answers "error disk full"
**   garbage  answers "what?"
**   silent   answers nothing and waits to be killed
** As the real server must, it checks SO_PEERCRED: only its own uid.
*/
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "meminst-snapshot.h"
#include "fx.h"

static int listen_here(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "meminst-control-%d", (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) ||
	    listen(fd, 4)) {
		perror("fake_control: listen");
		exit(1);
	}
	return fd;
}

static int read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t k = read(fd, buf + n, 1);
		if (k <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return 0;
		}
		n++;
	}
	return -1;
}

/* "snapshot PATH WHAT": the path is up to the last space. */
static int answer_ok(int c, char *line, const char *fixture, const char *id)
{
	char *last = strrchr(line, ' ');
	if (strncmp(line, "snapshot ", 9) != 0 || !last || last < line + 9) {
		dprintf(c, "error bad request\n");
		return 1;
	}
	*last = 0;
	const char *path = line + 9;
	struct fx_opts o = FX_OPTS_DEFAULT;
	const char *files[] = {fixture};
	char err[512];
	if (fx_create(path, &o, files, 1, err, sizeof err)) {
		dprintf(c, "error %s\n", err);
		return 1;
	}
	dprintf(c, "ok %s\n", id);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fputs("usage: fake_control ok|error|garbage|silent FIXTURE.sql ID LOG\n", stderr);
		return 2;
	}
	int fd = listen_here();
	printf("ready %d\n", (int)getpid());
	fclose(stdout);
	int c = accept(fd, NULL, NULL);
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (c < 0 || getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != geteuid())
		return 1;
	char line[8192];
	if (read_line(c, line, sizeof line))
		return 1;
	FILE *log = fopen(argv[4], "a");
	if (log) {
		fprintf(log, "%s\n", line);
		fclose(log);
	}
	const char *mode = argv[1];
	if (strcmp(mode, "ok") == 0)
		return answer_ok(c, line, argv[2], argv[3]);
	if (strcmp(mode, "error") == 0)
		dprintf(c, "error disk full\n");
	else if (strcmp(mode, "garbage") == 0)
		dprintf(c, "what?\n");
	else
		pause();
	close(c);
	return 0;
}
