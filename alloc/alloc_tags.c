/*
** alloc_tags.c — the numbering of allocators, classes, types and threads.
**
**   allocator  a fixed list: the family of the entry point used.
**   class      0 is "unknown"; then one class per module that allocated
**              (executable, libc, libstdc++, each shared library), created
**              when a module's first allocation site is seen, and the
**              classes a program registers by name.
**   type       0 is "unknown"; automatic types are allocation sites (the
**              caller's code address) numbered in order of first use;
**              registered types carry a name and a class.
**   thread     numbered from 1 in order of first allocation; OS tid and
**              name are remembered.
**
** Sites are found through an open-addressing hash table read without locks
** (a slot's type is published before its site, with release order); new
** sites are inserted under tag_lock.  When a module is unloaded (dlclose,
** alloc_unload.c) the sites of its types leave the table (their slots
** become TAG_TOMB) for a second table of dead keys: a module loaded there
** later makes types of its own, and the same module loaded at the same
** address again takes its old types back.  The table grows by copying into a new
** mapping; old mappings are kept, since a reader may still be probing one.
** Tables live in mmap'd memory, never in the user heap, and grow as
** numbers are handed out (alloc_table_t): a number is given only once its
** entries here and in the status tables are mapped; when they cannot be,
** a new site or thread gets the overflow number and a new class none, and
** meminst says so once.
*/
#include "alloc_int.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define TAG_CLASS_MAX (1u << 16)
#define TAG_NAME_CHUNK (256u << 10)

typedef struct tag_class_s {
	uintptr_t module_base; /* 0 for registered classes */
	uintptr_t module_bias; /* its load bias (snapshots: class_load) */
	const char *module;    /* the module's path; NULL for registered classes */
	const char *name;
	_Atomic bool dead;     /* its module was unloaded (alloc_tags_unloaded) */
} tag_class_t;

typedef struct tag_type_s {
	uintptr_t site;    /* automatic types */
	const char *name;  /* registered types                                */
	const char *descr; /* automatic types: "function+0xoff (module)", kept
			      from when the site was first seen, so it stays
			      right after the module is unloaded              */
	uint32_t class_no;
	uint32_t nframes;        /* site_depth: the stack that keys the type, */
	const uint64_t *frames;  /* frames[0] == site (alloc_stack.c)        */
} tag_type_t;

typedef struct tag_thread_s {
	pid_t tid;
	char name[16];
} tag_thread_t;

typedef struct tag_site_s {
	_Atomic uintptr_t site;
	_Atomic uint32_t type;
} tag_site_t;

typedef struct tag_sites_s {
	size_t mask;
	size_t used;
	tag_site_t slot[];
} tag_sites_t;

static struct tag_global {
	pthread_mutex_t lock;
	alloc_table_t classes; /* tag_class_t  */
	_Atomic uint32_t nclasses;
	alloc_table_t types;   /* tag_type_t   */
	alloc_table_t threads; /* tag_thread_t */
	_Atomic(tag_sites_t *) sites;
	_Atomic(tag_sites_t *) dead; /* keys of unloaded modules' types (tag lock) */
	char *names;
	size_t names_used;
	_Atomic int warned[ALLOC_K_COUNT]; /* a kind's tables could not grow */
} tag = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.classes = ALLOC_TABLE("classes", tag_class_t, TAG_CLASS_MAX, 10),
	.types = ALLOC_TABLE("types", tag_type_t, ALLOC_TYPE_MAX + 1, 10),
	.threads = ALLOC_TABLE("threads", tag_thread_t, ALLOC_THREAD_MAX + 1, 10),
};

_Atomic uint32_t alloc_ntypes, alloc_nthreads;

/* Entries of numbers handed out (their chunks are mapped). */
static tag_class_t *tag_class(uint32_t c) { return alloc_table_at(&tag.classes, c); }
static tag_type_t *tag_type(uint32_t t) { return alloc_table_at(&tag.types, t); }
static tag_thread_t *tag_thread(uint32_t t) { return alloc_table_at(&tag.threads, t); }

/*
** Map the entries of number n of a kind, here and in the status tables,
** before it is handed out.  False if a chunk cannot be mapped: the first
** time for each kind, one line says what happens instead.
*/
static bool tag_reserve(unsigned kind, alloc_table_t *table, uint32_t n, const char *instead)
{
	if (alloc_table_ensure(table, n) && alloc_stat_reserve(kind, n))
		return true;
	if (!atomic_exchange(&tag.warned[kind], 1))
		alloc_log("no memory to map the tables of %s (number %u): %s", table->what,
			  (unsigned)n, instead);
	return false;
}

static const char *const tag_allocator_names[ALLOC_A_ALL] = {
	"malloc", "calloc", "realloc", "aligned", "valloc", "new", "new[]", "mmap"};

static tag_sites_t *tag_sites_new(size_t capacity)
{
	tag_sites_t *s = alloc_sys_map(sizeof *s + capacity * sizeof(tag_site_t));
	if (s)
		s->mask = capacity - 1;
	return s;
}

int alloc_tags_init(void)
{
	tag.names = alloc_sys_map(TAG_NAME_CHUNK);
	tag_sites_t *s = tag_sites_new(4096);
	/* made now, not after a dlclose, where its mapping could take the
	** place of the closed library from the next one */
	tag_sites_t *dead = tag_sites_new(256);
	if (!tag.names || !s || !dead || !alloc_table_ensure(&tag.classes, 0) ||
	    !alloc_table_ensure(&tag.types, 0) || !alloc_table_ensure(&tag.types, ALLOC_TYPE_MAX) ||
	    !alloc_table_ensure(&tag.threads, 0) || !alloc_table_ensure(&tag.threads, ALLOC_THREAD_MAX))
		return -1;
	atomic_store(&tag.sites, s);
	atomic_store(&tag.dead, dead);
	tag_class(0)->name = "unknown";
	tag_type(0)->name = "unknown";
	tag_type(ALLOC_TYPE_MAX)->name = "(types beyond the limit)";
	atomic_store(&tag.nclasses, 1);
	atomic_store(&alloc_ntypes, 1);
	atomic_store(&alloc_nthreads, 1); /* thread 0: blocks from no thread */
	return 0;
}

/* Copy a name into the name arena, a chain of mmap'd chunks that are never
** freed (names are referenced for the life of the process).  Tag lock held. */
static const char *tag_intern(const char *name)
{
	size_t n = strnlen(name, MEMINST_NAME_MAX - 1);
	if (tag.names_used + n + 1 > TAG_NAME_CHUNK) {
		char *chunk = alloc_sys_map(TAG_NAME_CHUNK);
		if (!chunk)
			return "(out of memory for names)";
		tag.names = chunk;
		tag.names_used = 0;
	}
	char *p = tag.names + tag.names_used;
	memcpy(p, name, n);
	p[n] = 0;
	tag.names_used += n + 1;
	return p;
}

/* ------------------------------------------------------------ classes --- */

/* Find or add the class of a module.  Tag lock held. */
/* The class of the module loaded at base from path: by both, since after a
** dlclose another module may be loaded at the same base. */
static uint32_t tag_class_of_module(uintptr_t base, uintptr_t bias, const char *path)
{
	uint32_t n = atomic_load(&tag.nclasses);
	for (uint32_t c = 1; c < n; c++)
		if (tag_class(c)->module_base == base && tag_class(c)->module &&
		    strcmp(tag_class(c)->module, path) == 0) {
			atomic_store(&tag_class(c)->dead, false); /* loaded there again */
			return c;
		}
	if (n >= TAG_CLASS_MAX ||
	    !tag_reserve(ALLOC_K_CLASS, &tag.classes, n, "further modules get class 0 (unknown)"))
		return 0;
	const char *slash = strrchr(path, '/');
	tag_class_t *c = tag_class(n);
	c->module_base = base;
	c->module_bias = bias;
	c->module = tag_intern(path);
	c->name = tag_intern(slash ? slash + 1 : path);
	atomic_store(&tag.nclasses, n + 1);
	return n;
}

int alloc_class_register(const char *name)
{
	pthread_mutex_lock(&tag.lock);
	uint32_t n = atomic_load(&tag.nclasses);
	int found = -1;
	for (uint32_t c = 1; c < n && found < 0; c++)
		if (tag_class(c)->module_base == 0 && strncmp(tag_class(c)->name, name, MEMINST_NAME_MAX - 1) == 0)
			found = (int)c;
	if (found < 0 && n < TAG_CLASS_MAX &&
	    tag_reserve(ALLOC_K_CLASS, &tag.classes, n, "meminst_class_register returns -1")) {
		tag_class(n)->name = tag_intern(name);
		atomic_store(&tag.nclasses, n + 1);
		found = (int)n;
	}
	pthread_mutex_unlock(&tag.lock);
	return found;
}

/* ------------------------------------------------------------- types ---- */

/* A slot whose site left the table: neither empty nor any key (keys are
** return addresses, or stack hashes with the top bit set). */
#define TAG_TOMB ((uintptr_t)1)

static size_t tag_hash(uintptr_t site)
{
	uint64_t h = (uint64_t)site * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32);
}

static uint32_t tag_sites_find(tag_sites_t *s, uintptr_t site)
{
	for (size_t i = tag_hash(site) & s->mask;; i = (i + 1) & s->mask) {
		uintptr_t v = atomic_load_explicit(&s->slot[i].site, memory_order_acquire);
		if (v == site)
			return atomic_load_explicit(&s->slot[i].type, memory_order_relaxed);
		if (v == 0)
			return 0;
	}
}

static void tag_sites_put(tag_sites_t *s, uintptr_t site, uint32_t type)
{
	size_t i = tag_hash(site) & s->mask;
	while (atomic_load_explicit(&s->slot[i].site, memory_order_relaxed))
		i = (i + 1) & s->mask;
	atomic_store_explicit(&s->slot[i].type, type, memory_order_relaxed);
	atomic_store_explicit(&s->slot[i].site, site, memory_order_release);
	s->used++;
}

/* Keep the load under one half; a failed grow leaves the table as is.
** `where` holds the table (tag.sites, tag.dead), made on first use. */
static tag_sites_t *tag_sites_reserve(_Atomic(tag_sites_t *) *where)
{
	tag_sites_t *s = atomic_load(where);
	if (s && (s->used + 1) * 2 <= s->mask + 1)
		return s;
	tag_sites_t *bigger = tag_sites_new(s ? (s->mask + 1) * 2 : 64);
	if (!bigger)
		return s && (s->used + 1 <= s->mask) ? s : NULL;
	for (size_t i = 0; s && i <= s->mask; i++) {
		uintptr_t v = atomic_load_explicit(&s->slot[i].site, memory_order_relaxed);
		if (v && v != TAG_TOMB)
			tag_sites_put(bigger, v, atomic_load_explicit(&s->slot[i].type, memory_order_relaxed));
	}
	atomic_store_explicit(where, bigger, memory_order_release);
	return bigger;
}

/* A key of the dead table: a type's key with its class mixed in (one
** address may have been a site of several modules, one after the other). */
static uint64_t tag_dead_key(uint64_t key, uint32_t cls)
{
	uint64_t k = key ^ ((uint64_t)cls * 0x9e3779b97f4a7c15ull);
	return k > TAG_TOMB ? k : k + 2;
}

/* The type of a key that left the table with its module, if its class is
** `cls` (the module is back at the same address): that type again.  Tag
** lock held. */
static uint32_t tag_type_revived(uint64_t key, uint32_t cls)
{
	tag_sites_t *d = atomic_load(&tag.dead);
	uint32_t t = d && cls ? tag_sites_find(d, tag_dead_key(key, cls)) : 0;
	return t && tag_type(t)->class_no == cls ? t : 0;
}

static const uint64_t *tag_frames_copy(const uint64_t *frames, unsigned n);

/*
** The type keyed by `key`, created on first sight: `site` its allocation
** site, `loc` the address whose module is its class, `descr` its
** description (NULL: the name of loc), `frames` its stack (n 0: none).
** Lock-free when the key is known.  Must be called with none of our locks
** held (it may call dladdr, which takes the loader's lock).
*/
static uint32_t tag_type_of_key(uint64_t key, uintptr_t site, uintptr_t loc, const char *descr,
				const uint64_t *frames, unsigned n)
{
	uint32_t t = tag_sites_find(atomic_load_explicit(&tag.sites, memory_order_acquire), key);
	if (likely(t))
		return t;
	uintptr_t base, bias;
	char path[256], found[MEMINST_NAME_MAX];
	alloc_sys_locate(loc, &base, &bias, path, sizeof path, found, sizeof found); /* before the lock */
	pthread_mutex_lock(&tag.lock);
	tag_sites_t *s = atomic_load(&tag.sites);
	t = tag_sites_find(s, key);
	bool known = t != 0;
	uint32_t cls = known || !base ? 0 : tag_class_of_module(base, bias, path);
	if (!known && !(t = tag_type_revived(key, cls))) {
		uint32_t m = atomic_load(&alloc_ntypes);
		t = m < ALLOC_TYPE_MAX &&
		    tag_reserve(ALLOC_K_TYPE, &tag.types, m,
				"further sites are counted under the overflow type") ? m : ALLOC_TYPE_MAX;
		if (t == m) {
			tag_type_t *e = tag_type(m);
			e->site = site;
			e->descr = tag_intern(descr ? descr : found);
			if (n) {
				e->frames = tag_frames_copy(frames, n);
				e->nframes = e->frames ? n : 0;
			}
			e->class_no = cls;
			atomic_store(&alloc_ntypes, m + 1);
		}
	}
	if (!known && (s = tag_sites_reserve(&tag.sites)) != NULL)
		tag_sites_put(s, key, t);
	pthread_mutex_unlock(&tag.lock);
	return t;
}

/* Whether class c's module is among the n loaded now (by its load bias
** and path; the executable has no name there). */
static bool tag_class_loaded(const tag_class_t *c, const alloc_loaded_t *now, size_t n)
{
	uint64_t h = alloc_name_hash(c->module);
	for (size_t i = 0; i < n; i++)
		if (now[i].bias == c->module_bias && (now[i].name_hash == h || now[i].name_hash == 0))
			return true;
	return false;
}

/* The keys of types of dead classes leave the site table for the dead
** one.  Tag lock held. */
static void tag_sites_bury(void)
{
	tag_sites_t *s = atomic_load(&tag.sites);
	for (size_t i = 0; i <= s->mask; i++) {
		uintptr_t v = atomic_load_explicit(&s->slot[i].site, memory_order_relaxed);
		uint32_t t = atomic_load_explicit(&s->slot[i].type, memory_order_relaxed);
		if (!v || v == TAG_TOMB || !alloc_type_unloaded(t))
			continue;
		tag_sites_t *d = tag_sites_reserve(&tag.dead);
		if (!d)
			return; /* kept: counted under the old type, as before */
		atomic_store_explicit(&s->slot[i].site, TAG_TOMB, memory_order_release);
		uint64_t k = tag_dead_key(v, tag_type(t)->class_no);
		if (!tag_sites_find(d, k)) /* (there already: the same type) */
			tag_sites_put(d, k, t);
	}
}

/*
** Modules unloaded: the automatic classes whose module is not among the n
** loaded now are dead, and the keys of their types leave the site table,
** so that an allocation from the same address in a module loaded there
** later is a type of that module.  True when a class died.
*/
bool alloc_tags_unloaded(const alloc_loaded_t *now, size_t n)
{
	bool died = false;
	pthread_mutex_lock(&tag.lock);
	uint32_t nc = atomic_load(&tag.nclasses);
	for (uint32_t c = 1; c < nc; c++) {
		tag_class_t *e = tag_class(c);
		if (e->module && !atomic_load(&e->dead) && !tag_class_loaded(e, now, n)) {
			atomic_store(&e->dead, true);
			died = true;
		}
	}
	if (died)
		tag_sites_bury();
	pthread_mutex_unlock(&tag.lock);
	return died;
}

/* Whether a type's class is a module that was unloaded.  No lock. */
bool alloc_type_unloaded(uint32_t type)
{
	tag_type_t *e = type < atomic_load(&alloc_ntypes) ? tag_type(type) : NULL;
	return e && e->class_no && atomic_load_explicit(&tag_class(e->class_no)->dead, memory_order_relaxed);
}

/* The type number of an allocation site, creating it on first sight. */
uint32_t alloc_type_of_site(uintptr_t site)
{
	return tag_type_of_key(site, site, site, NULL, NULL, 0);
}

/* Copy n frames into the name chunks (8-byte aligned), or NULL. */
static const uint64_t *tag_frames_copy(const uint64_t *frames, unsigned n)
{
	size_t bytes = n * sizeof *frames;
	tag.names_used = (tag.names_used + 7) & ~(size_t)7;
	if (tag.names_used + bytes > TAG_NAME_CHUNK) {
		char *chunk = alloc_sys_map(TAG_NAME_CHUNK);
		if (!chunk)
			return NULL;
		tag.names = chunk;
		tag.names_used = 0;
	}
	uint64_t *p = (uint64_t *)(void *)(tag.names + tag.names_used);
	memcpy(p, frames, bytes);
	tag.names_used += bytes;
	return p;
}

/*
** The type of a stack (site_depth=N|user): key is the stack's hash with
** the top bit set, which no user-space return address has, so stacks and
** single sites share one table.  The type's site is frames[0] (the call
** into the allocator), its class the module of the last frame (for
** site_depth=user the caller in the user's code), its description the
** frames' names, innermost first.
*/
uint32_t alloc_type_of_stack_known(uint64_t key)
{
	return tag_sites_find(atomic_load_explicit(&tag.sites, memory_order_acquire), key);
}

uint32_t alloc_type_of_stack(uint64_t key, const uint64_t *frames, unsigned n, const char *descr)
{
	return tag_type_of_key(key, frames[0], frames[n - 1], descr, frames, n);
}

unsigned alloc_type_frames(uint32_t type, const uint64_t **frames)
{
	tag_type_t *e = type < atomic_load(&alloc_ntypes) ? tag_type(type) : NULL;
	if (!e)
		return 0;
	*frames = e->frames;
	return e->nframes;
}

uint32_t alloc_type_register(const char *name, int class_no, uintptr_t site)
{
	uintptr_t base = 0, bias = 0;
	char path[256] = "", descr[MEMINST_NAME_MAX];
	if (class_no < 0)
		alloc_sys_locate(site, &base, &bias, path, sizeof path, descr, sizeof descr);
	pthread_mutex_lock(&tag.lock);
	uint32_t cls = class_no >= 0 ? (uint32_t)class_no : base ? tag_class_of_module(base, bias, path) : 0;
	uint32_t n = atomic_load(&alloc_ntypes), found = 0;
	if (cls >= atomic_load(&tag.nclasses))
		goto out;
	for (uint32_t t = 1; t < n && !found; t++)
		if (tag_type(t)->name && tag_type(t)->class_no == cls &&
		    strncmp(tag_type(t)->name, name, MEMINST_NAME_MAX - 1) == 0)
			found = t;
	if (!found && n < ALLOC_TYPE_MAX &&
	    tag_reserve(ALLOC_K_TYPE, &tag.types, n, "meminst_type_register returns 0")) {
		tag_type(n)->name = tag_intern(name);
		tag_type(n)->class_no = cls;
		atomic_store(&alloc_ntypes, n + 1);
		found = n;
	}
out:
	pthread_mutex_unlock(&tag.lock);
	return found;
}

uintptr_t alloc_type_site(uint32_t type)
{
	tag_type_t *e = tag_type(type);
	return e ? e->site : 0;
}

/* The class of a type handed out (0 for a number never handed out). */
uint32_t alloc_type_class(uint32_t type)
{
	tag_type_t *e = tag_type(type);
	return e ? e->class_no : 0;
}

/* ------------------------------------------------------------ threads --- */

/*
** A new thread's number.  Numbers are taken with a counter, so the tables
** of a number are mapped after it is taken; a thread whose entries cannot
** be mapped gets the overflow number, as the threads past the limit do
** (its number is left unused: readers see zeros there).
*/
uint32_t alloc_thread_number_new(pid_t tid)
{
	uint32_t n = atomic_fetch_add(&alloc_nthreads, 1);
	if (n >= ALLOC_THREAD_MAX) {
		atomic_store(&alloc_nthreads, ALLOC_THREAD_MAX + 1);
		n = ALLOC_THREAD_MAX; /* shared by every thread beyond the limit */
	} else if (!tag_reserve(ALLOC_K_THREAD, &tag.threads, n,
				"further threads are counted under the overflow thread")) {
		n = ALLOC_THREAD_MAX;
	}
	if (n == ALLOC_THREAD_MAX)
		alloc_fmt(tag_thread(n)->name, 16, "(beyond limit)");
	tag_thread(n)->tid = tid;
	return n;
}

void alloc_thread_set_tid(uint32_t thread_no, pid_t tid)
{
	tag_thread(thread_no)->tid = tid;
}

pid_t alloc_thread_tid(uint32_t thread_no)
{
	tag_thread_t *e = tag_thread(thread_no);
	return e ? e->tid : 0;
}

void alloc_thread_set_name(uint32_t thread_no, const char *name)
{
	tag_thread_t *e = tag_thread(thread_no);
	if (e)
		alloc_fmt(e->name, sizeof e->name, "%s", name);
}

/* ------------------------------------------------------------ reading --- */

uint32_t alloc_tags_count(unsigned kind)
{
	switch (kind) {
	case ALLOC_K_TOTAL: return 1;
	case ALLOC_K_ALLOCATOR: return ALLOC_A_ALL;
	case ALLOC_K_CLASS: return atomic_load(&tag.nclasses);
	case ALLOC_K_TYPE: {
		uint32_t n = atomic_load(&alloc_ntypes);
		return n >= ALLOC_TYPE_MAX ? ALLOC_TYPE_MAX + 1 : n;
	}
	case ALLOC_K_THREAD: {
		uint32_t n = atomic_load(&alloc_nthreads);
		return n > ALLOC_THREAD_MAX + 1 ? ALLOC_THREAD_MAX + 1 : n;
	}
	}
	return 0;
}

const char *alloc_class_module(uint32_t class_no)
{
	return class_no < alloc_tags_count(ALLOC_K_CLASS) ? tag_class(class_no)->module : NULL;
}

uintptr_t alloc_class_bias(uint32_t class_no)
{
	return class_no < alloc_tags_count(ALLOC_K_CLASS) ? tag_class(class_no)->module_bias : 0;
}

const char *alloc_allocator_name(uint32_t a)
{
	return a < ALLOC_A_ALL ? tag_allocator_names[a] : NULL;
}

/* The description of a number.  Called outside every lock of ours. */
void alloc_tags_name(unsigned kind, uint32_t id, char *buf, size_t len)
{
	switch (kind) {
	case ALLOC_K_TOTAL:
		alloc_fmt(buf, len, "total");
		break;
	case ALLOC_K_ALLOCATOR:
		alloc_fmt(buf, len, "%s", id < ALLOC_A_ALL ? tag_allocator_names[id] : "?");
		break;
	case ALLOC_K_CLASS: {
		tag_class_t *c = tag_class(id);
		alloc_fmt(buf, len, "%s", c && c->name ? c->name : "?");
		break;
	}
	case ALLOC_K_TYPE: {
		tag_type_t *t = tag_type(id);
		if (!t)
			alloc_fmt(buf, len, "?");
		else if (t->name)
			alloc_fmt(buf, len, "%s", t->name);
		else if (t->descr)
			alloc_fmt(buf, len, "%s", t->descr);
		else
			alloc_fmt(buf, len, "%p", (void *)t->site);
		break;
	}
	case ALLOC_K_THREAD: {
		tag_thread_t *t = tag_thread(id);
		char comm[32];
		if (!t)
			alloc_fmt(buf, len, "(none)");
		else if (id == 0)
			alloc_fmt(buf, len, "(none)");
		else if (!t->name[0] && alloc_sys_thread_comm(t->tid, comm, sizeof comm))
			alloc_fmt(buf, len, "%s", comm);
		else
			alloc_fmt(buf, len, "%s", t->name[0] ? t->name : "(exited)");
		break;
	}
	}
}

/* ------------------------------------------------------------- fork ----- */

void alloc_tags_prefork(void) { pthread_mutex_lock(&tag.lock); }
void alloc_tags_postfork_parent(void) { pthread_mutex_unlock(&tag.lock); }
void alloc_tags_postfork_child(void)
{
	pthread_mutex_init(&tag.lock, NULL);
}
