/* bench/leak_scan.c — the leak check's cost (bench/leak_scan.sh): N blocks
** of SIZE bytes, each pointing to the next (a list from .bss: all still
** reachable, every block scanned), then exit, which runs the check.  Each
** block is filled (0x01 bytes: not a pointer) as a program fills what it
** allocates: calloc's fresh pages left untouched would fault in while
** scanned, and the check's CPU would be the kernel's page faults. */
#include <stdlib.h>
#include <string.h>
void **head;
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, size = argc > 2 ? atol(argv[2]) : 64;
	void **prev = NULL;
	for (long i = 0; i < n; i++) {
		void **b = malloc((size_t)size);
		memset(b, 1, (size_t)size);
		*b = prev;
		prev = b;
	}
	head = prev;
	return 0;
}
