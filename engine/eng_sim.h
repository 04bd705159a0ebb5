/*
** eng_sim.h — the call-stack simulation engine of the exact profiler.
**
** The engine consumes the records of <meminst-trace.h> one chunk at a time
** (chunks of different threads may interleave; within a thread they come in
** order) and keeps, per trace thread, the simulated call stack and two
** aggregation tables: one row per function and one per caller->called pair,
** each with CNT, ACC and OWN in ticks of the file's clock.  Those rows are
** exactly what MEMINST_TREC_PROF_PAIR records carry.
**
** It is self-contained: no stdio, no SQLite, no libc allocation — memory
** comes from the caller's eng_allocator — so that the same file can be
** built into libmeminst for the in-process profiler.  Memory is proportional
** to the distinct functions, call pairs and stack depth, never to events.
**
** The rules (fprof's, see doc/meminst-profile.5):
**   - ACC is charged to a function (and to the pair that called it) only by
**     its outermost instance on the stack: recursion never counts twice;
**   - OWN is the time a function is on top of the stack, not suspended;
**   - SUSPEND: a call of `suspend` from the top function: ACC = its time,
**     OWN = 0; the functions on the stack get it in ACC, not in OWN;
**   - ALLOC: a call of `<alloc>` from the top function, OWN = ACC;
**   - bytes: an ALLOC that allocates (malloc … new, not free/delete) of
**     `size` bytes is one block of `size` bytes in the OWN bytes of the top
**     function (and of <alloc>), and in the ACC bytes of every function on
**     the stack, charged like ACC time by the outermost instance only;
**   - a RETURN for a function lower in the stack pops the frames above it
**     (longjmp, exceptions), closing them at that time;
**   - a RETURN for a function not on the stack: the function was entered
**     before the trace started.  Its ACC runs from the start of the traced
**     segment, its OWN is the time the stack was empty, CNT is 0, and the
**     calls made from the empty stack since are its calls; the chain of such
**     functions ends at the pseudo caller `undefined`;
**   - THREAD_EXIT, TRACE_OFF and the end of the data close the open frames
**     at that time; TRACE_ON starts afresh.
*/
#ifndef ENG_SIM_H
#define ENG_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meminst-trace.h"

/* Pseudo function addresses (never code addresses), as in PROF_PAIR rows
** (MEMINST_TPROF_* of <meminst-trace.h>). */
#define ENG_FN_UNDEFINED 0u /* the caller of untraced entries        */
#define ENG_FN_SUSPEND 1u
#define ENG_FN_ALLOC 2u
#define ENG_FN_PENDING 3u   /* internal: caller not known yet          */
#define ENG_FN_TRACE_WAIT 4u /* <trace-wait>: the tracer's own waits   */
#define ENG_FN_SNAPSHOT 5u   /* <snapshot>: a snapshot's pause         */
#define ENG_FN_PREEMPTED 6u  /* <preempted>: switched out, trace=wall  */
#define ENG_FN_MEMINST 7u    /* <meminst>: its work around the allocator (readers' rows) */
#define ENG_FN_PSEUDO_MAX 7u

/* The pseudo function of a SUSPEND reason that is meminst's own pause
** (kept out of the program's times), or 0 for the program's own waits. */
static inline uint64_t eng_own_pause_fn(uint64_t reason)
{
	return reason == MEMINST_TSUSPEND_TRACE      ? ENG_FN_TRACE_WAIT
	       : reason == MEMINST_TSUSPEND_SNAPSHOT ? ENG_FN_SNAPSHOT
	       : reason == MEMINST_TSUSPEND_PREEMPT  ? ENG_FN_PREEMPTED
						     : 0;
}

/* realloc(ctx, NULL, n) allocates; realloc(ctx, p, 0) is never asked. */
struct eng_allocator {
	void *(*realloc)(void *ctx, void *p, size_t n);
	void (*free)(void *ctx, void *p);
	void *ctx;
};

enum eng_err {
	ENG_OK = 0,
	ENG_E_NOMEM,     /* the allocator failed                       */
	ENG_E_KIND,      /* unknown fixed-size record kind             */
	ENG_E_SIZE,      /* record size bad or running past the chunk   */
	ENG_E_COUNT,     /* a count inside a record does not fit it     */
};

/*
** The tracer's events inside a figure, for compensation (the reader takes
** their calibrated cost off, prof_model.c): each interval between two
** events holds the tracer's work after the first stamp and before the
** second, which depends on the two kinds: CC, CR, RR, RC for calls and
** returns, LRR and LRC after the return of a leaf (a return right after
** its call: the tracer writes it otherwise) (MEMINST_TCOST_CC … order),
** and next to an ALLOC record or the
** start of a segment one half event of a call or return (XH) and one half
** of an ALLOC's out cost (AH).  OWN counts the intervals it was given, ACC
** (outermost instance) every interval from its CALL to its RETURN.
*/
enum { ENG_EV_CC, ENG_EV_CR, ENG_EV_RR, ENG_EV_RC, ENG_EV_LRR, ENG_EV_LRC, ENG_EV_XH, ENG_EV_AH,
       ENG_EV_N };
struct eng_evs {
	uint64_t own[ENG_EV_N], acc[ENG_EV_N];
};

static inline void eng_ev_add(uint64_t *to, const uint64_t *e)
{
	for (int k = 0; k < ENG_EV_N; k++)
		to[k] += e[k];
}

/* The interval that ends at an event of this kind, counted into add
** (before the event acts); *prev is the last event's: 0 call, 1 return,
** 2 ALLOC, 3 a leaf's return, -1 none (the segment's start).  Other kinds
** count nothing. */
static inline void eng_ev_interval(int *prev, unsigned kind, uint64_t add[ENG_EV_N])
{
	int cur = kind == MEMINST_TREC_CALL ? 0 : kind == MEMINST_TREC_RETURN ? 1 : kind == MEMINST_TREC_ALLOC ? 2 : -1;
	if (cur < 0)
		return;
	if ((*prev == 0 || *prev == 1) && cur < 2) {
		add[2 * *prev + (cur != *prev)]++;
	} else if (*prev == 3 && cur < 2) {
		add[cur ? ENG_EV_LRR : ENG_EV_LRC]++;
	} else {
		add[*prev == 2 ? ENG_EV_AH : ENG_EV_XH]++; /* after an ALLOC, a call, the start */
		add[cur == 2 ? ENG_EV_AH : ENG_EV_XH]++;
	}
	*prev = cur == 1 && *prev == 0 ? 3 : cur;
}

static inline void eng_evs_add(struct eng_evs *to, const struct eng_evs *e)
{
	eng_ev_add(to->own, e->own);
	eng_ev_add(to->acc, e->acc);
}

/* Memory allocated: requested bytes and blocks, own and accumulated. */
struct eng_mem {
	uint64_t own_bytes, own_blocks, acc_bytes, acc_blocks;
};

/* meminst's own work around the allocator inside <alloc> calls (ALLOC_AT:
** end - begin less the backend's time), ticks: cnt the <alloc> calls that
** measured it inside the ACC, own their share of <alloc>'s OWN (<alloc>'s
** rows only), acc their share of the ACC.  A call whose backend time is
** above its own (switched out inside it: the file's CPU clock left that
** out) is not measured. */
struct eng_mi {
	uint64_t cnt, own, acc;
};

struct eng_fn_row {
	uint64_t fn;             /* code address or PROF_FN_*               */
	uint64_t cnt, acc, own;  /* ticks                                   */
	struct eng_mem mem;
	struct eng_evs ev;
	struct eng_mi mi;
	uint32_t active;         /* instances on the stack now              */
	uint32_t seg;            /* segment of the last untraced-entry charge */
	uint64_t seg_acc;        /* that charge                             */
};

struct eng_pair_row {
	uint32_t caller, called; /* indexes into the thread's fns           */
	uint64_t cnt, acc, own;  /* of `called` while called from `caller`  */
	struct eng_mem mem;
	struct eng_evs ev;
	struct eng_mi mi;
	bool pending;            /* listed in eng_thread.pending            */
};

/* The calls of one pair made from one call site (CALL records that carry
** it: trace_sites=on), with the pair's rules: ACC and ACC bytes by the
** called function's outermost instance only. */
struct eng_site_row {
	uint32_t pair;           /* index into the thread's pairs           */
	uint64_t site;           /* the call site: a return address         */
	uint64_t cnt, acc;       /* ticks                                   */
	uint64_t acc_bytes, acc_blocks;
	uint64_t acc_ev[ENG_EV_N]; /* the tracer's intervals in acc        */
	struct eng_mi mi;        /* meminst's work in acc                   */
	bool pending;            /* listed in eng_thread.pending_sites      */
};

struct eng_frame {
	uint32_t fn, pair;
	uint32_t site;           /* site row + 1; 0: the call had no site   */
	uint64_t start, own;
	uint64_t bytes0, blocks0;       /* the thread's totals when entered  */
	uint64_t own_bytes, own_blocks; /* allocated while on top            */
	uint64_t own_ev[ENG_EV_N], ev0[ENG_EV_N]; /* intervals on top; ev_cum entered */
	uint64_t mi0, mi_calls0;        /* the thread's mi_* when entered   */
	bool outermost;
};

struct eng_thread {
	uint32_t thread;         /* trace thread number                     */
	uint32_t parent;
	uint64_t tid;
	char name[17];
	bool seen;               /* a record with a time stamp came         */
	bool off;                /* between TRACE_OFF (or exit) and the next */
	uint64_t first, last;    /* first and last time stamp               */
	uint64_t now;            /* the time charged up to                  */
	uint64_t pause_from;     /* meminst's own pauses since the last      */
	uint64_t pause_sum;      /*   SUSPEND/ALLOC/CALL/RETURN: first start, total */
	uint64_t seg_start;      /* start of the traced segment             */
	uint64_t root_own;       /* empty-stack time in the segment         */
	uint64_t alloc_bytes, alloc_blocks; /* allocated so far (all ALLOCs)  */
	uint64_t root_bytes, root_blocks;   /* of those, with an empty stack   */
	uint64_t ev_cum[ENG_EV_N];  /* the tracer's intervals so far (eng_evs) */
	uint64_t ev_pend[ENG_EV_N]; /*   of those, not yet given to a figure */
	uint64_t root_ev[ENG_EV_N], seg_ev0[ENG_EV_N]; /* in root_own; at seg_start */
	int ev_prev;             /* the last event: 0 call, 1 return, 2 ALLOC, -1 none */
	uint64_t mi_cum, mi_calls; /* meminst's work in <alloc> calls so far, calls */
	/* the last ALLOC (for the ALLOC_AT record after it): its pair, OWN,
	** ACC and bytes allocated; last_pair UINT32_MAX when none is open */
	uint32_t last_pair;
	uint64_t last_own, last_acc, last_bytes;
	uint32_t seg;            /* segment number (from 1)                 */
	struct eng_frame *stack;
	size_t depth, stack_cap;
	struct eng_fn_row *fns;
	size_t nfns, fns_cap;
	uint32_t *fn_hash;       /* index + 1, 0 = empty                    */
	size_t fn_hcap;
	struct eng_pair_row *pairs;
	size_t npairs, pairs_cap;
	uint32_t *pair_hash;
	size_t pair_hcap;
	struct eng_site_row *sites; /* with eng_sim.keep_sites           */
	size_t nsites, sites_cap;
	uint32_t *site_hash;
	size_t site_hcap;
	uint32_t *pending_sites; /* site rows of pairs whose caller is PENDING */
	size_t npending_sites, pending_sites_cap;
	uint32_t *pending;       /* pairs whose caller is PENDING            */
	size_t npending, pending_cap;
	uint32_t undef_idx, pend_idx; /* rows of ENG_FN_UNDEFINED/PENDING    */
	/* counters */
	uint64_t events, calls, untraced, lost, exits;
	bool has_profile;        /* PROF_PAIR rows came                     */
};

struct eng_sim {
	struct eng_allocator a;
	struct eng_thread **threads; /* in order of first appearance        */
	size_t nthreads, threads_cap;
	uint32_t *thr_hash;
	size_t thr_hcap;
	bool seen;
	bool keep_sites;         /* the call sites of CALL records, per pair */
	uint64_t first, last;    /* over every thread                       */
	uint64_t events, lost;
	/* CLOCK records: the first and the last (ticks, ns) */
	unsigned nclock;
	uint64_t clock_t0, clock_ns0, clock_t1, clock_ns1;
	/* records the engine leaves to its caller (MODULE, PROCESS, samples …)
	** and every record when `all` is set; may be NULL */
	void (*other)(void *ctx, uint32_t thread, const uint64_t *rec, size_t n);
	void *other_ctx;
	const struct eng_thread *feeding; /* the thread of the chunk being fed */
};

/* The size in words of the record at w (avail words left in the chunk),
** checking what can be checked from the record alone.  ENG_OK or an
** error. */
enum eng_err eng_rec_size(const uint64_t *w, size_t avail, size_t *len);

void eng_sim_init(struct eng_sim *s, const struct eng_allocator *a);
/* Consume n words of one chunk of `thread` (stream: MEMINST_TRACE_STREAM_*:
** only the events stream drives the stacks; signal records go to `other`).
** On error *bad is the word index of the offending record; the records
** before it were consumed. */
enum eng_err eng_sim_feed(struct eng_sim *s, uint32_t thread, unsigned stream,
			    const uint64_t *w, size_t n, size_t *bad);
/* The end of the data: close every open frame at its thread's last time
** stamp and settle the untraced callers. */
enum eng_err eng_sim_finish(struct eng_sim *s);
void eng_sim_free(struct eng_sim *s);

/* The thread's total CNT and OWN (pseudo rows excluded, except suspend and
** <alloc> which are calls too). */
void eng_thread_totals(const struct eng_thread *t, uint64_t *cnt, uint64_t *own);
/* The function on top of the thread's stack now (the innermost traced
** function running), or ENG_FN_UNDEFINED with an empty stack. */
uint64_t eng_thread_top(const struct eng_thread *t);

#endif
