/*
** fd_reuse.c — a program that puts its data file on every descriptor, as
** a daemon that closes and reopens everything, or a tool that dup2s one
** file over a range, does.
**
**   fd_reuse DATAFILE [stderr]
**
** Writes 13 bytes to DATAFILE, then dup2s it over descriptors 3..1023
** (with "stderr": over 2 too, after a last line there), allocates, and
** exits 0.  Whatever meminst writes at exit must not reach DATAFILE.
*/
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fd_reuse DATAFILE [stderr]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0 || write(fd, "hello, data\n\n", 13) != 13) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 3; i < 1024; i++)
		if (i != fd)
			dup2(fd, i);
	if (argc > 2 && !strcmp(argv[2], "stderr")) {
		fputs("stderr goes to the data file now\n", stderr);
		dup2(fd, 2);
	}
	char *keep[100];
	for (int i = 0; i < 100; i++)
		keep[i] = malloc(32 + (size_t)i);
	for (int i = 0; i < 50; i++)
		free(keep[i]);
	printf("done\n");
	return 0;
}
