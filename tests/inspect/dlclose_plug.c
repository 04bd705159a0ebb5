/*
** dlclose_plug.c — the libraries of dlclose_main.c: built twice, with
** -DPLUG_A (keeps 8 blocks in keep_a) and -DPLUG_B (keeps 5 in keep_b);
** the blocks stay live after the library is unloaded.  -DPLUG_SAME=SIZE
** builds keep_same, whose code is the same for every SIZE (so two
** libraries of it loaded one after the other at one address allocate from
** the same site address), keeping n blocks of SIZE bytes.
*/
#include <stdlib.h>

void *volatile plug_kept[8];

#ifdef PLUG_A
__attribute__((noinline)) static void *keep_a(int i)
{
	return plug_kept[i] = malloc(48 + (size_t)i); /* line of keep_a */
}

void plug_a(void)
{
	for (int i = 0; i < 8; i++)
		keep_a(i);
}
#elif defined(PLUG_SAME)
__attribute__((noinline)) static void *keep_same(int i)
{
	return plug_kept[i] = malloc(PLUG_SAME); /* line of keep_same */
}

void plug_same(int n)
{
	for (int i = 0; i < n; i++)
		keep_same(i);
}
#else
__attribute__((noinline)) static void *keep_b(int i)
{
	return plug_kept[i] = calloc(1, 200 + (size_t)i); /* line of keep_b */
}

void plug_b(void)
{
	for (int i = 0; i < 5; i++)
		keep_b(i);
}
#endif
