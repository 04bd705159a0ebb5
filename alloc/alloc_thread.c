/*
** alloc_thread.c — per-thread state, the thread registry, exit and fork.
**
** A thread's TLS (alloc_tls) is small; its counter slots and site cache
** live in an alloc_thread_t taken from a pool of mmap'd records, so a
** program that creates and destroys threads at a high rate reuses them.
** Live records sit in the registry so that readers can add every thread's
** pending counts.  A pthread key destructor retires a record when its
** thread exits: pending counts are flushed, the thread name is kept, and
** any allocation the thread makes afterwards (other key destructors still
** run) is counted directly into the global entries.
**
** In mim mode a record also points to its thread's list of live blocks; at
** exit the list is handed over (alloc_map.c) before the record goes back
** to the pool.
**
** fork: the prepare handler takes every lock of the layer in the documented
** order (map lists, tag table, registry), so the child starts with
** consistent tables; in the child, records of threads that do not exist
** there are flushed, their lists handed over, and retired.
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread alloc_tls_t alloc_tls ALLOC_TLS_MODEL;
_Atomic uint32_t alloc_count_gate;
static bool thr_membarrier;

static struct thread_global {
	pthread_mutex_t lock;        /* the registry lock                   */
	alloc_thread_t *live;        /* registry: doubly linked             */
	alloc_thread_t *pool;        /* retired records, linked by reg_next */
	pthread_key_t key;
	bool key_ok;
} thr_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

void alloc_thread_lock_registry(void) { pthread_mutex_lock(&thr_g.lock); }
void alloc_thread_unlock_registry(void) { pthread_mutex_unlock(&thr_g.lock); }
alloc_thread_t *alloc_thread_first(void) { return thr_g.live; }

static void thread_unlink(alloc_thread_t *t)
{
	if (t->reg_prev)
		t->reg_prev->reg_next = t->reg_next;
	else
		thr_g.live = t->reg_next;
	if (t->reg_next)
		t->reg_next->reg_prev = t->reg_prev;
}

/* Remember the name of a thread that is going away (it cannot be read from
** /proc once the thread is gone). */
static void thread_keep_name(alloc_thread_t *t)
{
	char comm[32];
	alloc_thread_set_name(t->thread_no,
			      alloc_sys_thread_comm(t->tid, comm, sizeof comm) ? comm : "(exited)");
}

/* Flush, unregister and pool a record.  Registry lock held. */
static void thread_retire_locked(alloc_thread_t *t)
{
	alloc_slots_flush_all(t);
	thread_unlink(t);
	t->reg_next = thr_g.pool;
	thr_g.pool = t;
}

/*
** The thread is exiting.  From here on its allocations are counted
** directly and added to the orphan list.  Signals are held off during the
** hand-over of its own list, which holds two list locks that a handler's
** free would wait on forever.
*/
static void thread_destructor(void *arg)
{
	alloc_thread_t *t = arg;
	alloc_tls_t *tls = &alloc_tls;
	if (!t || tls->thr != t)
		return;
	thread_keep_name(t);
	alloc_thread_park(); /* under the core's protection, before the registry lock */
	tls->thr = NULL;
	tls->state = ALLOC_TLS_DEAD;
	if (alloc_mode == MEMINST_MODE_MIM) {
		sigset_t old;
		alloc_sys_signals_off(&old);
		alloc_map_list_handover(t->own_list);
		alloc_sys_signals_on(&old);
	}
	alloc_thread_lock_registry();
	thread_retire_locked(t);
	alloc_thread_unlock_registry();
}

static alloc_thread_t *thread_record_new(void)
{
	alloc_thread_t *t;
	alloc_thread_lock_registry();
	t = thr_g.pool;
	if (t)
		thr_g.pool = t->reg_next;
	alloc_thread_unlock_registry();
	if (!t && !(t = alloc_sys_map(sizeof *t)))
		return NULL;
	memset(t, 0, offsetof(alloc_thread_t, stack_cache));
	for (unsigned i = 0; i < ALLOC_SLOTS_ALL; i++)
		t->slots[i].key = ALLOC_KEY_NONE;
	return t;
}

static alloc_thread_t *thread_start_blocked(alloc_tls_t *tls)
{
	alloc_thread_t *t = thread_record_new();
	if (!t) {
		tls->state = ALLOC_TLS_DEAD;
		return NULL;
	}
	t->tid = alloc_sys_gettid();
	t->thread_no = alloc_thread_number_new(t->tid);
	t->meta_own = alloc_meta_pack(0, t->thread_no, 0, alloc_mode == MEMINST_MODE_MIM ? 5 : 4);
	alloc_slot_retarget(t, 0, ALLOC_KEY(ALLOC_K_TOTAL, 0));
	for (unsigned a = 0; a < ALLOC_A_COUNT; a++)
		alloc_slot_retarget(t, 1 + a, ALLOC_KEY(ALLOC_K_ALLOCATOR, a));
	alloc_slot_retarget(t, 1 + ALLOC_A_COUNT, ALLOC_KEY(ALLOC_K_THREAD, t->thread_no));
	t->own_list = &alloc_map_orphans;
	if (alloc_mode == MEMINST_MODE_MIM) {
		alloc_list_t *l = alloc_map_list_new(t->thread_no);
		if (l)
			t->own_list = l;
	}
	t->own_at = (uint64_t)t->own_list->id << 32;
	alloc_thread_lock_registry();
	t->reg_next = thr_g.live;
	if (thr_g.live)
		thr_g.live->reg_prev = t;
	thr_g.live = t;
	alloc_thread_unlock_registry();
	tls->thread_no = t->thread_no;
	tls->thr = t;
	tls->state = ALLOC_TLS_LIVE;
	if (thr_g.key_ok) {
		alloc_guard_enter(); /* keys past the first 32 make glibc calloc */
		pthread_setspecific(thr_g.key, t);
		alloc_guard_exit();
	}
	return t;
}

/*
** First allocation of a thread: give it a number and a record, register
** it, and arrange for its retirement at exit.  Returns NULL when no record
** can be had (the caller then counts directly).  Holds no lock on return.
**
** Signals are blocked meanwhile: the thread has no record yet (tls->thr
** NULL, state NEW), so a signal handler's free here came back in to start
** the thread again, and waited for ever on the registry lock the
** interrupted start holds, or made a second record for the thread
** (tests/integration/sig_threads.sh).  Once per thread, two system calls.
*/
alloc_thread_t *alloc_thread_start(alloc_tls_t *tls)
{
	sigset_t old;
	alloc_sys_signals_off(&old);
	alloc_thread_t *t = thread_start_blocked(tls);
	alloc_sys_signals_on(&old);
	return t;
}

/* ------------------------------------------------------------- fork ----- */

/*
** mis mode has no lock around counting, so a fork could copy another
** thread half way through its five counter updates.  The forking thread
** raises ALLOC_GATE_FORKING, then makes every other thread pass a memory barrier
** (membarrier: asymmetric, so the hot path needs only compiler barriers),
** and waits until none is inside core_count; threads that arrive later see
** the flag and wait in alloc_fork_wait until the fork is done.  In mim mode
** counting happens under the map list locks, which prefork takes anyway.
*/
/* Every thread of the process passes a full memory barrier (biased
** lists, alloc_map.c); without membarrier only this one does, and then no
** list is biased. */
void alloc_thread_fence_all(void)
{
	if (__atomic_load_n(&thr_membarrier, __ATOMIC_RELAXED))
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		atomic_thread_fence(memory_order_seq_cst);
}

void alloc_thread_membarrier_off(void)
{
	if (!thr_membarrier)
		return;
	if (alloc_map_bias)
		alloc_map_unbias_all();
	atomic_fetch_or(&alloc_count_gate, ALLOC_GATE_FENCE);
	/* the last one: every thread sees the fence bit before the filter */
	syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	__atomic_store_n(&thr_membarrier, false, __ATOMIC_SEQ_CST);
}

static void thread_quiesce_counting(int why)
{
	alloc_thread_t *self = alloc_tls.thr;
	atomic_fetch_or(&alloc_count_gate, why);
	if (__atomic_load_n(&thr_membarrier, __ATOMIC_RELAXED))
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	for (alloc_thread_t *t = thr_g.live; t; t = t->reg_next)
		while (t != self && atomic_load(&t->counting))
			alloc_sys_yield();
}

/* Waits that a thread a clone left behind would make endless (it raised the
** gate and never will lower it): alloc_clone_adopt every so often. */
void alloc_fork_wait(void)
{
	for (unsigned i = 1; atomic_load(&alloc_count_gate) & ALLOC_GATE_STOP; i++)
		alloc_clone_yield(i);
}

/*
** mis: a snapshot's status is one instant only if no thread counts while
** the kinds are read one after the other (in mim the list locks, which
** counting holds, do that).  The same quiescence as for fork, with its own
** gate bit so that the two can overlap; the registry lock is held only
** while waiting for the threads inside counting to leave.
*/
void alloc_thread_stop_counting(void)
{
	alloc_thread_lock_registry();
	thread_quiesce_counting(ALLOC_GATE_CAPTURE);
	alloc_thread_unlock_registry();
}

void alloc_thread_resume_counting(void)
{
	atomic_fetch_and(&alloc_count_gate, ~ALLOC_GATE_CAPTURE);
}

static void thread_prefork(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	alloc_map_stop();
	alloc_tags_prefork();
	alloc_stack_prefork();
	pthread_mutex_lock(&thr_g.lock);
	if (alloc_mode == MEMINST_MODE_MIS)
		thread_quiesce_counting(ALLOC_GATE_FORKING);
	alloc_region_prefork();
	errno = saved_errno;
}

static void thread_postfork_parent(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	alloc_region_postfork();
	atomic_fetch_and(&alloc_count_gate, ~ALLOC_GATE_FORKING);
	pthread_mutex_unlock(&thr_g.lock);
	alloc_stack_postfork_parent();
	alloc_tags_postfork_parent();
	alloc_map_resume();
	errno = saved_errno;
}

/* In the child only the forking thread exists: retire every other record
** (their blocks were copied and stay counted; their pending deltas are
** folded in), and give the surviving thread its new tid. */
void alloc_thread_child_reset(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	/* a capture by a thread that did not follow would never clear its bit */
	atomic_fetch_and(&alloc_count_gate, ~ALLOC_GATE_STOP);
	alloc_sys_pid_refresh();
	alloc_ids_forget();
	trace_sample_postfork_child(); /* before alloc_service.c's handler starts a thread */
	pthread_mutex_init(&thr_g.lock, NULL);
	alloc_region_postfork_child();
	alloc_stack_postfork_child();
	alloc_tags_postfork_child();
	alloc_map_postfork_child();
	alloc_thread_t *self = alloc_tls.thr, *next;
	for (alloc_thread_t *t = thr_g.live; t; t = next) {
		next = t->reg_next;
		if (t != self) {
			alloc_map_list_handover(t->own_list);
			thread_retire_locked(t);
		}
	}
	if (self) {
		self->tid = alloc_sys_gettid();
		/* the child keeps the thread number but has its own tid */
		alloc_thread_set_tid(self->thread_no, self->tid);
	}
	errno = saved_errno;
}

/* Called once from alloc_init, guarded (both calls may allocate). */
int alloc_thread_init(void)
{
	thr_g.key_ok = pthread_key_create(&thr_g.key, thread_destructor) == 0;
	thr_membarrier = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	if (!thr_membarrier) /* then the hot path fences itself */
		atomic_fetch_or(&alloc_count_gate, ALLOC_GATE_FENCE);
	alloc_map_bias = thr_membarrier;
	if (pthread_atfork(thread_prefork, thread_postfork_parent, alloc_thread_child_reset) != 0)
		return -1;
	return 0;
}
