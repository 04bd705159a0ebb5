/*
** trace_thread.c — pthread_create, interposed: each new thread learns who
** created it (THREAD_START's parent, the traced family) and runs the
** tracer's and the sampler's per-thread start and end around its start
** routine, and has its stack noted as a region (alloc_region.c) named by
** the site that created it.  Exported from libmeminst only (not the core the unit tests
** link), like the allocation hooks.
*/
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

struct thread_tramp {
	void *(*start)(void *);
	void *arg;
	uintptr_t site; /* pthread_create's caller: names the thread's stack */
	uint32_t parent_no, member_gen;
	bool internal; /* made by meminst itself (inside its guard) */
};

static void thread_end(void *arg)
{
	(void)arg;
	trace_sample_thread_end();
	trace_thread_exit();
	alloc_region_thread_end();
}

/*
** A thread of meminst's own (made inside its guard) gets its trampoline
** from a mapping, not from the backend: with glibc, a thread's first
** malloc or free gives it an arena, 64 MiB of address space (128 MiB for a
** moment) that a program under RLIMIT_AS would no longer have, and this
** free was the only call of glibc's allocator such a thread made.
*/
static struct thread_tramp *thread_tramp_new(bool internal)
{
	if (!internal)
		return alloc_real.malloc(sizeof(struct thread_tramp));
	int saved_errno = errno;
	struct thread_tramp *tp = alloc_sys_map(sizeof *tp);
	errno = saved_errno;
	return tp;
}

static void thread_tramp_free(struct thread_tramp *tp)
{
	if (!tp->internal)
		return alloc_real.free(tp);
	int saved_errno = errno;
	alloc_sys_unmap(tp, sizeof *tp);
	errno = saved_errno;
}

/* The new thread's first frame.  The cleanup handler also runs when the
** thread leaves by pthread_exit or is cancelled. */
ALLOC_EDGE static void *thread_main(void *p)
{
	struct thread_tramp tp = *(struct thread_tramp *)p;
	thread_tramp_free(p);
	trace_tls.internal = tp.internal; /* before its record is made */
	trace_thread_begin(tp.parent_no, tp.member_gen);
	if (tp.internal) /* the snapshot service: not a thread of the program */
		trace_sample_thread_internal();
	else {
		trace_sample_thread_begin();
		alloc_region_thread_begin(tp.site);
	}
	void *r;
	pthread_cleanup_push(thread_end, NULL);
	r = tp.start(tp.arg);
	pthread_cleanup_pop(1);
	return r;
}

/* Whether attr gives the thread a stack of the program's: when none was
** set, glibc's pthread_attr_getstack gives the stored NULL top less the
** size (0 or an address that ends at 0). */
static bool thread_own_stack(const pthread_attr_t *attr)
{
	void *lo = NULL;
	size_t size = 0;
	return attr && pthread_attr_getstack(attr, &lo, &size) == 0 && lo && (uintptr_t)lo + size != 0;
}

ALLOC_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *),
				void *arg)
{
	alloc_create_fn *real = trace_real_pthread_create();
	/* a process made by clone without fork is taken as alone before it
	** has a second thread (alloc_exit.c) */
	if (atomic_load(&alloc_state) == 2)
		alloc_clone_adopt();
	alloc_thread_park(); /* the new thread starts from the true counts */
	if (!real)
		return EAGAIN;
	/* before start the backend may not be resolved: pass the thread through */
	if (atomic_load(&alloc_state) != 2 || !alloc_real.malloc)
		return real(th, attr, start, arg);
	struct thread_tramp *tp = thread_tramp_new(alloc_tls.guard > 0);
	if (!tp)
		return EAGAIN;
	tp->start = start;
	tp->arg = arg;
	tp->internal = alloc_tls.guard > 0;
	tp->site = thread_own_stack(attr) ? 0 : (uintptr_t)__builtin_return_address(0);
	trace_thread_parent(&tp->parent_no, &tp->member_gen);
	int rc = real(th, attr, thread_main, tp);
	if (rc != 0)
		thread_tramp_free(tp);
	return rc;
}
