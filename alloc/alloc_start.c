/*
** alloc_start.c — starting the allocation layer: MEMINST read into memory
** of our own and parsed, the backend resolved and loaded, the mode and the
** tables set up (alloc_init), the header check's key (alloc_check_init),
** and the route word's flags (alloc_route_flag).
**
** Separate from alloc_core.c, which keeps the life of a block (the path
** every allocation and free takes), because none of this runs more than
** once or off the hot path: it is read apart from the entry points and
** changes for other reasons (new settings, new backends).  The globals it
** sets (alloc_mode, alloc_opts, alloc_route...) stay defined in
** alloc_core.c, beside their readers.
*/
#include "alloc_int.h"
#include "alloc_check.h"

#include <errno.h>
#include <string.h>

/* ----------------------------------------------------------- start-up -- */

static void core_fatal_option(const char *err)
{
	alloc_log("%s", err);
	alloc_log("the program was not started; fix or unset MEMINST (see meminst(7))");
	alloc_sys_exit(2);
}

/*
** MEMINST as it is now, in memory of our own.  The parsed settings point
** into it (paths included) and are read again much later — at exit, from a
** signal, by the service thread — by which time a program that sets its
** process title (redis, nginx, postgres) has written over its environment
** strings.  A mapping, because malloc is not ours to call yet.
*/
static const char *core_settings_copy(void)
{
	const char *v = alloc_getenv("MEMINST");
	if (!v)
		return NULL;
	size_t n = strlen(v) + 1;
	char *copy = alloc_sys_map(n);
	if (!copy) {
		alloc_log("cannot map %zu bytes for the MEMINST settings; the program was not started", n);
		alloc_sys_exit(127);
	}
	memcpy(copy, v, n);
	return copy;
}

/* Another allocator defines part of the malloc family: every block is the
** system allocator's, untouched (alloc_backend.c). */
static void core_replaced_check(void)
{
	bool exe;
	const char *lib;
	unsigned replaced = alloc_backend_replaced(&exe, &lib);
	if (!replaced)
		return;
	bool c = replaced & ALLOC_FAMILY_C;
	if ((c && alloc_opts.mode != MEMINST_MODE_OFF) || alloc_opts.backend != ALLOC_BACKEND_SYSTEM)
		alloc_replaced_report(replaced, exe, lib);
	if (c)
		alloc_opts.mode = MEMINST_MODE_OFF;
	alloc_opts.backend = ALLOC_BACKEND_SYSTEM;
}

/*
** Start the layer: resolve the system allocator, read MEMINST, pick the
** backend and mode.  Runs once, on the first allocation or from our
** constructor, whichever comes first; while it runs (alloc_state == 1) every
** allocation is served by the bootstrap arena, including dlsym's own.
*/
void alloc_init(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&alloc_state, &expected, 1))
		return;
	int saved_errno = errno;
	char err[ALLOC_OPTIONS_ERRMAX];
	alloc_check_init();
	if (alloc_backend_resolve_system() < 0)
		alloc_sys_exit(127);
	if (alloc_options_parse(core_settings_copy(), &alloc_opts, err, sizeof err) < 0 ||
	    alloc_options_unsupported(&alloc_opts, err, sizeof err) < 0)
		core_fatal_option(err);
	core_replaced_check();
	if (alloc_backend_load(alloc_opts.backend, err, sizeof err) < 0)
		core_fatal_option(err);
	alloc_mode = alloc_opts.mode;
	alloc_plain = alloc_mode == MEMINST_MODE_OFF;
	/* dormant: the tables wait for a switch on (alloc_switch.c); made now so
	** that the fork handlers keep their order */
	alloc_switchable = alloc_mode == MEMINST_MODE_OFF && alloc_opts.control;
	alloc_site_depth = alloc_opts.site_depth;
	alloc_site_skip = !alloc_opts.site_skip_none;
	alloc_snap_init();
	alloc_map_init();
	alloc_hdr_size = alloc_mode == MEMINST_MODE_MIM ? sizeof(alloc_mhdr_t)
			 : alloc_mode == MEMINST_MODE_MIS ? sizeof(alloc_hdr_t) : 0;
	if (alloc_mode != MEMINST_MODE_OFF || alloc_switchable) {
		alloc_guard_enter();
		if (alloc_stat_init() < 0 || alloc_tags_init() < 0 || alloc_thread_init() < 0) {
			alloc_log("cannot map the status tables; the program was not started");
			alloc_sys_exit(127);
		}
		alloc_guard_exit();
		alloc_region_init();
	}
	atomic_store(&alloc_state, 2);
	unsigned mode = alloc_mode == MEMINST_MODE_MIM ? ALLOC_ROUTE_MIM
			: alloc_mode == MEMINST_MODE_MIS ? ALLOC_ROUTE_MIS : ALLOC_ROUTE_OFF;
	unsigned r = atomic_load(&alloc_route); /* the tracer's bits stay */
	while (!atomic_compare_exchange_weak(&alloc_route, &r,
					     (r & (ALLOC_ROUTE_WATCH | ALLOC_ROUTE_ASAMPLE)) | mode))
		;
	errno = saved_errno;
}

/* Raise or clear one of the route's reasons to leave the fast paths (the
** tracer's flags; each is set by one owner, so bits cannot race). */
void alloc_route_flag(unsigned flag, bool on)
{
	if (on)
		atomic_fetch_or(&alloc_route, flag);
	else
		atomic_fetch_and(&alloc_route, ~flag);
}

/* ------------------------------------------------- the check's key --- */

/*
** The check's secret (see alloc_check.h): from the kernel, or when it has
** none to give this early, from the time stamp counter and the addresses
** of the stack and of the library.  The two multipliers are made odd and
** shifted left past the words' check bits; the two other words are made
** odd (a and b odd: each product is one-to-one in the other word).
*/
void alloc_check_init(void)
{
	uint64_t *k = alloc_check_key;
	if (!alloc_sys_random(k, sizeof alloc_check_key)) {
		uint64_t z = (uint64_t)__builtin_ia32_rdtsc() ^ (uint64_t)(uintptr_t)&k ^
			     (uint64_t)(uintptr_t)alloc_check_key << 17;
		for (unsigned i = 0; i < 4; i++) { /* splitmix64 */
			z += 0x9e3779b97f4a7c15ull;
			uint64_t y = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			y = (y ^ (y >> 27)) * 0x94d049bb133111ebull;
			k[i] = y ^ (y >> 31);
		}
	}
	k[0] = (k[0] | 1) << (64 - ALLOC_SIZE_BITS);
	k[1] |= 1;
	k[2] = (k[2] | 1) << (64 - ALLOC_META_CHECK_SHIFT + 1);
	k[3] |= 1;
}
