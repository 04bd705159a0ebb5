/*
** alloc_sqfork.c — SQLite's own locks around fork(2).
**
** libsqlite3 is one library per process: the program's (python's sqlite3
** module, a C program linked with it) and the one meminst loads to store
** snapshots are the same copy, with the same static mutexes.  A thread of
** the program inside sqlite3_malloc holds SQLITE_MUTEX_STATIC_MEM, one
** opening a file holds STATIC_MAIN (the VFS list) and STATIC_VFS1 (the
** unix VFS's inode list).  fork copies those mutexes held by a thread the
** child does not have, and the child's first snapshot store (its exit
** snapshot) waited on them for ever.
**
** So the prepare handler takes them, after meminst's store lock and before
** the allocator's locks, and both the parent and the child handler release
** them: the child then finds SQLite whole.  They are taken with
** sqlite3_mutex_try, in the order SQLite nests them (a thread holding one
** on the left may take one on the right: OPEN (shared cache) > PRNG > MAIN
** > VFS1 > LRU > PMEM > MEM), and when one is busy every one held is let go
** and the round starts again after a pause, so that a wrong guess of that
** order costs a retry, never a deadlock.  Rounds are bounded
** (SQFORK_WAIT_NS): a mutex held across the whole wait — by the thread that
** forks, from a signal handler that interrupted it inside SQLite, or by a
** thread blocked on something the forking thread holds — gives up; the
** child then says its snapshots are not stored instead of hanging, and the
** parent's fork was late by that wait.
**
** The mutexes of the application and extension VFSes (APP1-3, VFS2-3) are
** not taken: meminst's store never takes them.  Not covered: a fork while
** another thread runs SQLite's very first sqlite3_initialize, which holds a
** recursive mutex SQLite does not expose.
**
** SQLite is looked up among the loaded objects (dl_iterate_phdr, by file
** name), never loaded: a process that has not loaded it has no SQLite lock
** to hold.  Where it is
** loaded, sqlite3_mutex_alloc of a static mutex sets SQLite's default mutex
** methods if nothing did yet (sqlite3MutexInit), as the program's own first
** SQLite call would; a program that later installs its own mutex methods
** (SQLITE_CONFIG_MUTEX) still gets them.
*/
#include "alloc_int.h"

#include <errno.h>
#include <link.h>
#include <sched.h>
#include <sqlite3.h>
#include <string.h>
#include <time.h>

#define SQFORK_WAIT_NS 2000000000LL /* at most this long a fork, then give up */
#define SQFORK_NAP_NS 100000L       /* between two rounds, after the first few */

static const int sqfork_ids[] = {
	SQLITE_MUTEX_STATIC_OPEN, SQLITE_MUTEX_STATIC_PRNG, SQLITE_MUTEX_STATIC_MAIN,
	SQLITE_MUTEX_STATIC_VFS1, SQLITE_MUTEX_STATIC_LRU,  SQLITE_MUTEX_STATIC_PMEM,
	SQLITE_MUTEX_STATIC_MEM};
#define SQFORK_N (sizeof sqfork_ids / sizeof sqfork_ids[0])

/* One fork's state: set by the prepare handler of the forking thread, read
** by its parent or child handler (no other thread forks meanwhile: glibc
** runs the handlers of one fork at a time, and our store lock is held). */
static struct sqfork {
	bool found; /* this fork: SQLite is loaded, its mutex functions below */
	sqlite3_mutex *(*alloc)(int);
	int (*try_enter)(sqlite3_mutex *);
	void (*leave)(sqlite3_mutex *);
	sqlite3_mutex *held[SQFORK_N];
	unsigned nheld;
} sqf;

static void sqfork_leave_all(void)
{
	while (sqf.nheld)
		sqf.leave(sqf.held[--sqf.nheld]);
}

/* One round: every mutex, in order; false (none held) when one is busy. */
static bool sqfork_round(void)
{
	for (unsigned i = 0; i < SQFORK_N; i++) {
		sqlite3_mutex *m = sqf.alloc(sqfork_ids[i]);
		if (!m) /* SQLite built or configured without mutexes */
			continue;
		if (sqf.try_enter(m) != SQLITE_OK) {
			sqfork_leave_all();
			return false;
		}
		sqf.held[sqf.nheld++] = m;
	}
	return true;
}

/* The address of a defined function NAME of a loaded object, by its GNU
** hash table, 0 when not found.  Not dlsym: every dl* call clears the
** thread's pending dlerror(), which belongs to the program. */
static void *sqfork_sym(const struct dl_phdr_info *info, const char *name)
{
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	uintptr_t symtab = 0, strtab = 0, gnuhash = 0;
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t v = dyn->d_un.d_ptr;
		if (v < info->dlpi_addr) /* the loader relocates these in place, or not */
			v += info->dlpi_addr;
		if (dyn->d_tag == DT_SYMTAB)
			symtab = v;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = v;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnuhash = v;
	}
	if (!symtab || !strtab || !gnuhash)
		return NULL;
	const uint32_t *h = (const void *)gnuhash;
	uint32_t nbuckets = h[0], symoffset = h[1], hash = 5381;
	if (!nbuckets)
		return NULL;
	const uint32_t *buckets = (const void *)(h + 4 + h[2] * (sizeof(ElfW(Addr)) / 4));
	const uint32_t *chain = buckets + nbuckets;
	const ElfW(Sym) *syms = (const void *)symtab;
	for (const char *c = name; *c; c++)
		hash = hash * 33 + (unsigned char)*c;
	for (uint32_t i = buckets[hash % nbuckets]; i >= symoffset; i++) {
		uint32_t h2 = chain[i - symoffset];
		if ((h2 | 1) == (hash | 1) && syms[i].st_shndx != SHN_UNDEF &&
		    (syms[i].st_info & 0xf) == STT_FUNC /* ST_TYPE, either class */ &&
		    strcmp((const char *)strtab + syms[i].st_name, name) == 0)
			return (void *)(info->dlpi_addr + syms[i].st_value);
		if (h2 & 1)
			break;
	}
	return NULL;
}

static int sqfork_find(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libsqlite3.so", 13) != 0)
		return 0;
	*(void **)&sqf.alloc = sqfork_sym(info, "sqlite3_mutex_alloc");
	*(void **)&sqf.try_enter = sqfork_sym(info, "sqlite3_mutex_try");
	*(void **)&sqf.leave = sqfork_sym(info, "sqlite3_mutex_leave");
	return sqf.alloc && sqf.try_enter && sqf.leave;
}

/* SQLite's mutex functions, where a libsqlite3 is loaded (by meminst or by
** the program: the same one). */
static bool sqfork_resolve(void)
{
	sqf.found = dl_iterate_phdr(sqfork_find, NULL) == 1;
	return sqf.found;
}

/*
** Prepare handler's part (the store lock held, no lock of the allocator):
** true when SQLite is not loaded or all its static mutexes are now held by
** this thread; false when one stayed busy for SQFORK_WAIT_NS (the child must
** not use SQLite).  Guarded: SQLite's mutex functions may allocate (its
** first sqlite3_mutex_alloc).
*/
bool alloc_sqfork_prepare(void)
{
	int saved_errno = errno; /* fork's caller sees fork's errno */
	alloc_guard_enter();
	sqf.nheld = 0;
	bool ok = true;
	if (sqfork_resolve()) {
		int64_t start = alloc_snap_now(CLOCK_MONOTONIC);
		for (unsigned round = 0; !sqfork_round(); round++) {
			if (round < 16) {
				sched_yield();
				continue;
			}
			if (alloc_snap_now(CLOCK_MONOTONIC) - start > SQFORK_WAIT_NS) {
				ok = false;
				break;
			}
			struct timespec nap = {0, SQFORK_NAP_NS};
			nanosleep(&nap, NULL);
		}
	}
	alloc_guard_exit();
	errno = saved_errno;
	return ok;
}

/* Parent and child handlers' part: let go of what the prepare took (in the
** child the thread that took them is this one). */
void alloc_sqfork_release(void)
{
	if (sqf.found)
		sqfork_leave_all();
	sqf.found = false;
}
