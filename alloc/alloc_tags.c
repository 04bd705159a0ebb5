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
** sites are inserted under tag_lock.  The table grows by copying into a new
** mapping; old mappings are kept, since a reader may still be probing one.
** Tables live in mmap'd memory, never in the user heap.
*/
#include "alloc_int.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define TAG_CLASS_MAX (1u << 16)
#define TAG_NAME_CHUNK (1u << 20)

typedef struct tag_class_s {
	uintptr_t module_base; /* 0 for registered classes */
	const char *module;    /* the module's path; NULL for registered classes */
	const char *name;
} tag_class_t;

typedef struct tag_type_s {
	uintptr_t site;    /* automatic types */
	const char *name;  /* registered types                                */
	const char *descr; /* automatic types: "function+0xoff (module)", kept
			      from when the site was first seen, so it stays
			      right after the module is unloaded              */
	uint32_t class_no;
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
	tag_class_t *classes;
	_Atomic uint32_t nclasses;
	tag_type_t *types;
	tag_thread_t *threads;
	_Atomic(tag_sites_t *) sites;
	char *names;
	size_t names_used;
} tag = {.lock = PTHREAD_MUTEX_INITIALIZER};

uint32_t *alloc_type_classes;
_Atomic uint32_t alloc_ntypes, alloc_nthreads;

static const char *const tag_allocator_names[ALLOC_A_COUNT] = {
	"malloc", "calloc", "realloc", "aligned", "valloc", "new", "new[]"};

static tag_sites_t *tag_sites_new(size_t capacity)
{
	tag_sites_t *s = alloc_sys_map(sizeof *s + capacity * sizeof(tag_site_t));
	if (s)
		s->mask = capacity - 1;
	return s;
}

int alloc_tags_init(void)
{
	tag.classes = alloc_sys_map(TAG_CLASS_MAX * sizeof(tag_class_t));
	tag.types = alloc_sys_map((size_t)(ALLOC_TYPE_MAX + 1) * sizeof(tag_type_t));
	alloc_type_classes = alloc_sys_map((size_t)(ALLOC_TYPE_MAX + 1) * sizeof(uint32_t));
	tag.threads = alloc_sys_map((size_t)(ALLOC_THREAD_MAX + 1) * sizeof(tag_thread_t));
	tag.names = alloc_sys_map(TAG_NAME_CHUNK);
	tag_sites_t *s = tag_sites_new(4096);
	if (!tag.classes || !tag.types || !alloc_type_classes || !tag.threads || !tag.names || !s)
		return -1;
	atomic_store(&tag.sites, s);
	tag.classes[0].name = "unknown";
	tag.types[0].name = "unknown";
	tag.types[ALLOC_TYPE_MAX].name = "(types beyond the limit)";
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
static uint32_t tag_class_of_module(uintptr_t base, const char *path)
{
	uint32_t n = atomic_load(&tag.nclasses);
	for (uint32_t c = 1; c < n; c++)
		if (tag.classes[c].module_base == base)
			return c;
	if (n >= TAG_CLASS_MAX)
		return 0;
	const char *slash = strrchr(path, '/');
	tag.classes[n].module_base = base;
	tag.classes[n].module = tag_intern(path);
	tag.classes[n].name = tag_intern(slash ? slash + 1 : path);
	atomic_store(&tag.nclasses, n + 1);
	return n;
}

int alloc_class_register(const char *name)
{
	pthread_mutex_lock(&tag.lock);
	uint32_t n = atomic_load(&tag.nclasses);
	int found = -1;
	for (uint32_t c = 1; c < n && found < 0; c++)
		if (tag.classes[c].module_base == 0 && strncmp(tag.classes[c].name, name, MEMINST_NAME_MAX - 1) == 0)
			found = (int)c;
	if (found < 0 && n < TAG_CLASS_MAX) {
		tag.classes[n].name = tag_intern(name);
		atomic_store(&tag.nclasses, n + 1);
		found = (int)n;
	}
	pthread_mutex_unlock(&tag.lock);
	return found;
}

/* ------------------------------------------------------------- types ---- */

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

/* Keep the load under one half; a failed grow leaves the table as is. */
static tag_sites_t *tag_sites_reserve(tag_sites_t *s)
{
	if ((s->used + 1) * 2 <= s->mask + 1)
		return s;
	tag_sites_t *bigger = tag_sites_new((s->mask + 1) * 2);
	if (!bigger)
		return (s->used + 1 <= s->mask) ? s : NULL;
	for (size_t i = 0; i <= s->mask; i++) {
		uintptr_t v = atomic_load_explicit(&s->slot[i].site, memory_order_relaxed);
		if (v)
			tag_sites_put(bigger, v, atomic_load_explicit(&s->slot[i].type, memory_order_relaxed));
	}
	atomic_store_explicit(&tag.sites, bigger, memory_order_release);
	return bigger;
}

/*
** The type number of an allocation site, creating it on first sight.
** Lock-free when the site is known.  Must be called with none of our locks
** held (it may call dladdr, which takes the loader's lock).
*/
uint32_t alloc_type_of_site(uintptr_t site)
{
	uint32_t t = tag_sites_find(atomic_load_explicit(&tag.sites, memory_order_acquire), site);
	if (likely(t))
		return t;
	uintptr_t base;
	char path[256], descr[MEMINST_NAME_MAX];
	alloc_sys_locate(site, &base, path, sizeof path, descr, sizeof descr); /* before the lock */
	pthread_mutex_lock(&tag.lock);
	tag_sites_t *s = atomic_load(&tag.sites);
	t = tag_sites_find(s, site);
	if (!t) {
		uint32_t n = atomic_load(&alloc_ntypes);
		t = n < ALLOC_TYPE_MAX ? n : ALLOC_TYPE_MAX;
		if (t == n) {
			tag.types[n].site = site;
			tag.types[n].descr = tag_intern(descr);
			tag.types[n].class_no = base ? tag_class_of_module(base, path) : 0;
			alloc_type_classes[n] = tag.types[n].class_no;
			atomic_store(&alloc_ntypes, n + 1);
		}
		if ((s = tag_sites_reserve(s)) != NULL)
			tag_sites_put(s, site, t);
	}
	pthread_mutex_unlock(&tag.lock);
	return t;
}

uint32_t alloc_type_register(const char *name, int class_no, uintptr_t site)
{
	uintptr_t base = 0;
	char path[256] = "", descr[MEMINST_NAME_MAX];
	if (class_no < 0)
		alloc_sys_locate(site, &base, path, sizeof path, descr, sizeof descr);
	pthread_mutex_lock(&tag.lock);
	uint32_t cls = class_no >= 0 ? (uint32_t)class_no : base ? tag_class_of_module(base, path) : 0;
	uint32_t n = atomic_load(&alloc_ntypes), found = 0;
	if (cls >= atomic_load(&tag.nclasses))
		goto out;
	for (uint32_t t = 1; t < n && !found; t++)
		if (tag.types[t].name && tag.types[t].class_no == cls && strncmp(tag.types[t].name, name, MEMINST_NAME_MAX - 1) == 0)
			found = t;
	if (!found && n < ALLOC_TYPE_MAX) {
		tag.types[n].name = tag_intern(name);
		tag.types[n].class_no = cls;
		alloc_type_classes[n] = cls;
		atomic_store(&alloc_ntypes, n + 1);
		found = n;
	}
out:
	pthread_mutex_unlock(&tag.lock);
	return found;
}

uintptr_t alloc_type_site(uint32_t type)
{
	return type < atomic_load(&alloc_ntypes) ? tag.types[type].site : 0;
}

/* ------------------------------------------------------------ threads --- */

uint32_t alloc_thread_number_new(pid_t tid)
{
	uint32_t n = atomic_fetch_add(&alloc_nthreads, 1);
	if (n >= ALLOC_THREAD_MAX) {
		atomic_store(&alloc_nthreads, ALLOC_THREAD_MAX + 1);
		n = ALLOC_THREAD_MAX; /* shared by every thread beyond the limit */
		alloc_fmt(tag.threads[n].name, 16, "(beyond limit)");
	}
	tag.threads[n].tid = tid;
	return n;
}

void alloc_thread_set_tid(uint32_t thread_no, pid_t tid)
{
	tag.threads[thread_no].tid = tid;
}

pid_t alloc_thread_tid(uint32_t thread_no)
{
	return tag.threads[thread_no].tid;
}

void alloc_thread_set_name(uint32_t thread_no, const char *name)
{
	alloc_fmt(tag.threads[thread_no].name, sizeof tag.threads[thread_no].name, "%s", name);
}

/* ------------------------------------------------------------ reading --- */

uint32_t alloc_tags_count(unsigned kind)
{
	switch (kind) {
	case ALLOC_K_TOTAL: return 1;
	case ALLOC_K_ALLOCATOR: return ALLOC_A_COUNT;
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
	return class_no < alloc_tags_count(ALLOC_K_CLASS) ? tag.classes[class_no].module : NULL;
}

const char *alloc_allocator_name(uint32_t a)
{
	return a < ALLOC_A_COUNT ? tag_allocator_names[a] : NULL;
}

/* The description of a number.  Called outside every lock of ours. */
void alloc_tags_name(unsigned kind, uint32_t id, char *buf, size_t len)
{
	switch (kind) {
	case ALLOC_K_TOTAL:
		alloc_fmt(buf, len, "total");
		break;
	case ALLOC_K_ALLOCATOR:
		alloc_fmt(buf, len, "%s", id < ALLOC_A_COUNT ? tag_allocator_names[id] : "?");
		break;
	case ALLOC_K_CLASS:
		alloc_fmt(buf, len, "%s", tag.classes[id].name ? tag.classes[id].name : "?");
		break;
	case ALLOC_K_TYPE:
		if (tag.types[id].name)
			alloc_fmt(buf, len, "%s", tag.types[id].name);
		else if (tag.types[id].descr)
			alloc_fmt(buf, len, "%s", tag.types[id].descr);
		else
			alloc_fmt(buf, len, "%p", (void *)tag.types[id].site);
		break;
	case ALLOC_K_THREAD: {
		tag_thread_t *t = &tag.threads[id];
		char comm[32];
		if (id == 0)
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
