/*
** alloc_service_peak.c — the peak trigger (snapshot_at=peak): when the
** total of live bytes turns down from its highest, the thread about to
** free captures the map as it is and hands it to the service thread
** (alloc_service.c), which stores it.
**
** Apart from the service thread because this half runs in the program's
** threads, on the allocation side of the counters (alloc_peak_next and
** alloc_peak_turn are what their paths compare with), never in the
** service thread; the two meet at the image waiting to be stored.
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>

/*
** Peaks are taken at the turn.  A climb that crosses a threshold of
** geometric steps costs a copy of the map at every step, the sum of a
** geometric series: with 10 % steps, eleven times the final map.  So the
** threshold (1 MiB, then peak_growth percent above the last peak
** snapshot's total) only arms the trigger; while armed, the allocating
** side follows the highest total in steps of a quarter of peak_growth
** percent, and the snapshot is taken when a free would take the total
** that far below the highest: by the freeing thread, before the free, so
** it shows the blocks of the top less at most that quarter.  A climb costs
** one copy, and a climb in steps one per step higher than peak_growth.
**
** alloc_peak_next is what the allocating side compares with (the arming
** threshold, then the next step of the highest), alloc_peak_turn what the
** freeing side compares with (INT64_MIN while not armed).  svc_peak_busy
** makes one thread at a time move them.
*/
_Atomic int64_t alloc_peak_next = INT64_MAX;
_Atomic int64_t alloc_peak_turn = INT64_MIN;
static atomic_flag svc_peak_busy = ATOMIC_FLAG_INIT;
/* Captured at a turn, waiting for the service thread to store it. */
static _Atomic(alloc_snap_t *) svc_peak_image;

/* Move alloc_peak_next, and the gate's epoch with it: the threads' fast
** paths compare with their own copy of it (alloc_thread_t.peak_d), which
** they make again when they see the epoch move. */
static void svc_peak_next_set(int64_t next)
{
	atomic_store(&alloc_peak_next, next);
	atomic_fetch_add(&alloc_count_gate, ALLOC_GATE_EPOCH);
}

/* How far below its highest the total comes down before the peak is
** taken, also the step in which the highest is followed (at least 1). */
static int64_t svc_peak_margin(int64_t high)
{
	int64_t m = high / 400 * (int64_t)alloc_opts.peak_growth;
	return m > 0 ? m : 1;
}

/* Wait for the next peak: armed once the total passes the larger of
** 1 MiB and `stored` + peak_growth percent. */
void alloc_service_peak_arm(int64_t stored)
{
	int64_t growth = stored / 100 * (int64_t)alloc_opts.peak_growth;
	int64_t next = stored + (growth > 0 ? growth : 1);
	atomic_store(&alloc_peak_turn, INT64_MIN);
	svc_peak_next_set(next > (1 << 20) ? next : (1 << 20));
}

/*
** An allocating thread, outside every lock, saw the total pass
** alloc_peak_next: the trigger arms, or the highest moved up.  Nothing is
** captured here.
*/
void alloc_service_peak(int64_t total)
{
	if (total <= atomic_load(&alloc_peak_next) || !alloc_service_running() ||
	    atomic_flag_test_and_set_explicit(&svc_peak_busy, memory_order_acquire))
		return;
	if (total > atomic_load(&alloc_peak_next)) {
		int64_t margin = svc_peak_margin(total);
		atomic_store(&alloc_peak_turn, total - margin);
		svc_peak_next_set(total + margin);
	}
	atomic_flag_clear_explicit(&svc_peak_busy, memory_order_release);
}

/*
** A thread about to free (outside every lock, before the free counts)
** would take the total below alloc_peak_turn: the climb is over.  Capture
** the map as it is, the block still in it, and hand the copy to the
** service thread to store; then wait for the next peak.
*/
void alloc_service_peak_turn(int64_t total)
{
	if (!alloc_service_running() || atomic_flag_test_and_set_explicit(&svc_peak_busy, memory_order_acquire))
		return;
	if (atomic_load(&alloc_peak_turn) == INT64_MIN) { /* another thread took it */
		atomic_flag_clear_explicit(&svc_peak_busy, memory_order_release);
		return;
	}
	/* The pause is meminst's, not the program's: a traced thread records
	** it as <snapshot>, kept out of <alloc> and its callers' times; and
	** the free that made it keeps the program's errno (the capture's
	** mappings, the wake pipe full: tests/integration/errno_kept.sh). */
	int saved_errno = errno;
	uint64_t begin = trace_suspend_begin();
	alloc_snap_t *im = alloc_snap_capture(true, "peak");
	if (im && im->nstatus[ALLOC_K_TOTAL])
		total = (int64_t)im->status[ALLOC_K_TOTAL][0].sizes.current;
	alloc_service_peak_arm(total);
	atomic_flag_clear_explicit(&svc_peak_busy, memory_order_release);
	if (im) {
		alloc_snap_free(atomic_exchange(&svc_peak_image, im)); /* keep the latest */
		alloc_service_wake('p'); /* when full, the thread finds the image anyway */
	}
	trace_suspend_end(begin, MEMINST_TSUSPEND_SNAPSHOT);
	errno = saved_errno;
}

/* Peaks stop (the thread is asked to end): nothing compares above or below. */
void alloc_service_peak_off(void)
{
	svc_peak_next_set(INT64_MAX);
	atomic_store(&alloc_peak_turn, INT64_MIN);
}

/* In a child of fork: the parent's pending peak goes, and a capture the
** fork cut short leaves no thread holding the trigger. */
void alloc_service_peak_forget(void)
{
	alloc_snap_free(atomic_exchange(&svc_peak_image, NULL));
	alloc_service_peak_off();
	atomic_flag_clear(&svc_peak_busy);
}

alloc_snap_t *alloc_service_peak_take(void)
{
	return atomic_exchange(&svc_peak_image, NULL);
}

bool alloc_service_peak_pending(void)
{
	return atomic_load(&svc_peak_image) != NULL;
}

/* A peak the file was too busy for waits for its next turn, unless a newer
** one came meanwhile (false: then the caller frees it). */
bool alloc_service_peak_keep(alloc_snap_t *im)
{
	alloc_snap_t *none = NULL;
	return atomic_compare_exchange_strong(&svc_peak_image, &none, im);
}
