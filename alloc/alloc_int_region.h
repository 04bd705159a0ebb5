/*
** alloc_int_region.h — a section of alloc_int.h: the program's mappings
** (alloc_region.c), the region table the mmap family's hooks keep and the
** snapshots copy.
**
** A file of its own so that alloc_int.h stays within the size guide; the
** mapping hooks are read apart from the allocation path.  alloc_int.h
** includes it in place (inside its hidden-visibility region, after the
** snapshots' section): include alloc_int.h, never this.
*/
#ifndef ALLOC_INT_REGION_H
#define ALLOC_INT_REGION_H
#ifndef ALLOC_INT_H
#error "include alloc_int.h, which includes this file"
#endif

/* ------------------------------------------------------- alloc_region.c -- */

/* A mapping the program made (mmap, mremap), as stored in table region. */
typedef struct alloc_region_s {
	uintptr_t start, end, site;
	int32_t tid;
	uint32_t kind; /* MEMINST_REGION_* (meminst-snapshot.h) */
} alloc_region_t;

void alloc_region_init(void);
void *alloc_region_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, uintptr_t site);
int alloc_region_munmap(void *addr, size_t len, uintptr_t site);
void *alloc_region_mremap(void *old, size_t old_len, size_t len, int flags, void *new_addr,
			   uintptr_t site);
void alloc_region_break(uintptr_t from, uintptr_t to, uintptr_t site);
void alloc_region_thread_begin(uintptr_t site);
void alloc_region_thread_end(void);
size_t alloc_region_copy(alloc_region_t **out, size_t *bytes);
void alloc_region_prefork(void);
void alloc_region_postfork(void);
void alloc_region_postfork_child(void);

#endif /* ALLOC_INT_REGION_H */
