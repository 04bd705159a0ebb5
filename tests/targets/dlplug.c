/*
** dlplug.c — a small library that tests/targets/snap_death.c opens and
** closes in a loop (tests/integration/snap_death.sh): its constructor and
** destructor allocate and free, so that the loader runs program code
** while it holds its lock.
*/
#include <stdlib.h>
#include <string.h>

static void *plug_blocks[8];

__attribute__((constructor)) static void plug_init(void)
{
	for (int i = 0; i < 8; i++) {
		plug_blocks[i] = malloc(100 + 50 * i);
		if (plug_blocks[i])
			memset(plug_blocks[i], i, 100);
	}
}

__attribute__((destructor)) static void plug_fini(void)
{
	for (int i = 0; i < 8; i++)
		free(plug_blocks[i]);
}

int plug_value(void)
{
	return plug_blocks[7] ? 7 : 0;
}
