/*
** alloc_dynsym.h — dladdr's answer from a sorted index of a module's
** dynamic symbols (alloc_dynsym.c), for alloc_sys_module.c.
*/
#ifndef ALLOC_DYNSYM_H
#define ALLOC_DYNSYM_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* The symbol dladdr would name at addr in the object lm (loaded at
** map_start), if lm has an index: true, with *name NULL when dladdr names
** none, else *name (the object's string), *lo and *size.  False when lm
** has no index yet: the caller asks dladdr and calls alloc_dynsym_missed.
** subs: the loader's count of unloads; an index made under another count
** is dropped.  Never waits: false while another thread uses the indexes. */
bool alloc_dynsym_find(const struct link_map *lm, uintptr_t addr, unsigned long long subs, const char **name,
		       uintptr_t *lo, uintptr_t *size);

/* dladdr was asked for an address of lm (loaded at map_start): after a
** few such in an object with many dynamic symbols, its index is made. */
void alloc_dynsym_missed(const struct link_map *lm, uintptr_t map_start, unsigned long long subs);

#endif
