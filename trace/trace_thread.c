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
	uintptr_t stack_lo; /* a stack of the program's: where it starts, else 0 */
	size_t stack_size;  /* its size, 0 when not known */
};

static void thread_end(void *arg)
{
	(void)arg;
	trace_sample_thread_end();
	trace_thread_exit();
	alloc_region_thread_end();
}

/* A stack the program gave (pthread_attr_setstack) cannot grow: under
** this size its thread is not sampled (trace_sample_no_room), as the
** walk (about 10 KiB) and the static TLS glibc takes out of it would
** not fit beside the program's frames.  A 16 KiB one from malloc had the
** heap after it overwritten ("malloc(): mismatching next->prev_size"). */
#define THREAD_OWN_SMALL (64 * 1024)

/* The thread's own stack, for trace_unwind_off_home: the program's, as
** given; glibc's, the size below this frame (the thread's descriptor and
** static TLS are above it, within THREAD_HOME_ABOVE). */
#define THREAD_HOME_ABOVE (64 * 1024)
static void thread_home(const struct thread_tramp *tp)
{
	char here;
	if (tp->stack_lo)
		trace_unwind_home(tp->stack_lo, tp->stack_lo + tp->stack_size);
	else if (tp->stack_size)
		trace_unwind_home((uintptr_t)&here - tp->stack_size, (uintptr_t)&here + THREAD_HOME_ABOVE);
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
	thread_home(&tp);
	trace_thread_begin(tp.parent_no, tp.member_gen);
	if (tp.internal) /* the snapshot service: not a thread of the program */
		trace_sample_thread_internal();
	else {
		trace_sample_thread_begin();
		if (tp.stack_lo && tp.stack_size < THREAD_OWN_SMALL)
			trace_sample_no_room();
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

/*
** A thread the program gives a small stack (PTHREAD_STACK_MIN, a pool's
** 16 to 64 KiB) shares it with meminst: glibc carves the static TLS of
** every loaded object out of it (libmeminst's is about 3 KiB, jemalloc's
** state included), the allocation hooks run on it, and so does the
** sampler's handler with its stack walk (libunwind's context and cursor).
** A thread that ran fine bare, 8 KB deep in PTHREAD_STACK_MIN, died of
** SIGSEGV under every mode, even off.  So a stack the library makes
** (not one the program mapped itself) below THREAD_STACK_SMALL gets
** THREAD_STACK_EXTRA more: address space only, touched pages as bare.
** The program's attr is not changed: a copy is (a byte copy, not
** destroyed: glibc's extension, the cpuset and signal mask, stays the
** program's).
*/
#define THREAD_STACK_EXTRA (64 * 1024)
#define THREAD_STACK_SMALL (1024 * 1024)


/* The size of the stack glibc makes for attr (the default, which ulimit
** -s sets, when attr says none); 0 when not known. */
static size_t thread_stack_size(const pthread_attr_t *attr)
{
	size_t size = 0;
	if (attr && pthread_attr_getstacksize(attr, &size) == 0 && size)
		return size;
	pthread_attr_t d;
	if (pthread_getattr_default_np(&d) != 0)
		return 0;
	if (pthread_attr_getstacksize(&d, &size) != 0)
		size = 0;
	pthread_attr_destroy(&d);
	return size;
}

static const pthread_attr_t *thread_roomier(const pthread_attr_t *attr, pthread_attr_t *copy,
					     bool *made)
{
	size_t size = thread_stack_size(attr);
	*made = false;
	if (thread_own_stack(attr) || size == 0 || size >= THREAD_STACK_SMALL)
		return attr;
	if (attr)
		memcpy(copy, attr, sizeof *copy);
	else if (pthread_attr_init(copy) != 0)
		return attr;
	else
		*made = true;
	if (pthread_attr_setstacksize(copy, size + THREAD_STACK_EXTRA) != 0) {
		if (*made)
			pthread_attr_destroy(copy);
		*made = false;
		return attr;
	}
	return copy;
}

/* Where the new thread's stack is, as far as attr says (thread_home). */
static void thread_stack_known(const pthread_attr_t *attr, struct thread_tramp *tp)
{
	void *lo = NULL;
	size_t size = 0;
	tp->stack_lo = 0;
	tp->stack_size = thread_stack_size(attr);
	if (thread_own_stack(attr) && pthread_attr_getstack(attr, &lo, &size) == 0) {
		tp->stack_lo = (uintptr_t)lo;
		tp->stack_size = size;
	}
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
	pthread_attr_t copy;
	bool made = false;
	const pthread_attr_t *use = tp->internal ? attr : thread_roomier(attr, &copy, &made);
	thread_stack_known(use, tp);
	int rc = real(th, use, thread_main, tp);
	if (made)
		pthread_attr_destroy(&copy);
	if (rc != 0)
		thread_tramp_free(tp);
	return rc;
}
