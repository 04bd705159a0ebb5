/*
** trace_call.c — exact tracing of code built with -finstrument-functions:
** the two hooks GCC and Clang call at every function entry and exit, the
** <alloc> and suspend events, and starting and stopping (MEMINST trace=,
** meminst_trace_start/stop/apply).
**
** The hot path is one test of trace_armed (zero while nothing is to be
** done: tracing off or stopped, no call counting, so that the hooks then
** cost what empty hooks cost), one initial-exec TLS load (trace_hot, the
** thread's record while it is traced, never NULL), one compare against
** the tracing generation, a time stamp and the stores into the thread's
** buffer.
** Everything else — the first call of a thread, a full buffer, a stop —
** falls to call_slow.
**
** Which threads: all (default), or the family of the thread that started
** tracing (it and the threads created by family members while tracing,
** fprof's procs).  Each thread decides lazily, at its first instrumented
** call after a start or stop: trace_gen changes at both, and a record
** whose gen is stale writes TRACE_OFF and lets go.
*/
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <signal.h>
#include <string.h>

#define NOINST __attribute__((no_instrument_function))

__thread trace_thr_t *trace_cur TRACE_TLS_MODEL;
/* The hooks' fast path reads trace_hot: trace_cur, or while that is NULL
** call_nobody, whose gen_hook no generation matches (in_hook set), so
** that the fast path tests no NULL. */
static trace_thr_t call_nobody = {.gen_hook = (uint64_t)1 << 32};
static __thread trace_thr_t *trace_hot TRACE_TLS_MODEL = &call_nobody;
__thread trace_tls_t trace_tls TRACE_TLS_MODEL;
_Atomic uint32_t trace_gen;
_Atomic int trace_on;
bool trace_all_threads = true;
bool trace_sites;
bool trace_alloc_watch;
void (*trace_call_hook)(void *fn);
_Atomic int trace_armed;
static _Atomic int call_start_lock;

/* trace_armed counts the reasons the hooks have work: tracing on (1), a
** call hook set (1), and each thread whose trace_cur is set (1 each: it
** must still write TRACE_OFF after a stop). */
void trace_arm(int delta)
{
	atomic_fetch_add_explicit(&trace_armed, delta, memory_order_release);
}

void trace_call_hook_set(void (*fn)(void *))
{
	void (*old)(void *) = __atomic_exchange_n(&trace_call_hook, fn, __ATOMIC_ACQ_REL);
	if (!old != !fn)
		trace_arm(fn ? 1 : -1);
}

/* weak: until the sampler is linked */
__attribute__((weak)) bool trace_asample_on;
__attribute__((weak)) void trace_asample_note(size_t size) { (void)size; }
__attribute__((weak)) void trace_sample_thread_begin(void) {}
__attribute__((weak)) void trace_sample_thread_end(void) {}

/* ------------------------------------------------------------ threads -- */

void trace_cur_set(trace_thr_t *t)
{
	trace_cur = t;
	trace_hot = t ? t : &call_nobody;
}

static NOINST void call_thread_off(trace_thr_t *t)
{
	trace_cur_set(NULL);
	trace_arm(-1);
	/* the thread's own clock, as for its calls: with trace=cpu a system
	** call stamp can be behind the TSC-advanced last stamp */
	uint64_t w = MEMINST_TREC_HEAD(MEMINST_TREC_TRACE_OFF, trace_now_thread());
	trace_ev_append_to(t, &w, 1);
	t->gen = 0;
	trace_ev_flush(t);
}

/*
** Bring the thread in line with the current generation: stop recording if
** its record is stale, start if tracing is on and the thread belongs.
** Returns the record to write to, or NULL.
*/
static NOINST trace_thr_t *call_sync(void)
{
	trace_tls_t *tl = &trace_tls;
	if (tl->busy)
		return NULL;
	uint32_t g = atomic_load_explicit(&trace_gen, memory_order_acquire);
	trace_thr_t *t = trace_cur;
	if (t && t->gen == g)
		return t;
	if (t)
		call_thread_off(t);
	if (tl->seen_gen == g)
		return NULL;
	tl->seen_gen = g;
	if (!atomic_load(&trace_on) || (!trace_all_threads && tl->member_gen != g))
		return NULL;
	if (!(t = trace_thread_record()))
		return NULL;
	t->gen = g;
	trace_frames_reset(t);
	uint64_t on = trace_now_thread(), w = MEMINST_TREC_HEAD(MEMINST_TREC_TRACE_ON, on);
	trace_ev_append_to(t, &w, 1);
	if (trace_clock == MEMINST_TRACE_CLOCK_TSC)
		trace_preempt_start(t, on);
	trace_arm(1);
	trace_cur_set(t);
	return t;
}

/* In a thread made by our pthread_create: who made it, whether it is of
** the traced family, and its record now (so THREAD_START has its start). */
NOINST void trace_thread_begin(uint32_t parent_no, uint32_t member_gen)
{
	trace_tls.parent_no = parent_no;
	trace_tls.member_gen = member_gen;
	if (atomic_load(&trace_on))
		call_sync();
}

/* For the pthread_create wrapper, in the creating thread. */
NOINST void trace_thread_parent(uint32_t *parent_no, uint32_t *member_gen)
{
	uint32_t g = atomic_load(&trace_gen);
	*parent_no = trace_tls.rec ? trace_tls.rec->thread_no : 0;
	*member_gen = trace_tls.member_gen == g || (trace_cur && trace_cur->gen == g) ? g : 0;
}

/* -------------------------------------------------------------- hooks -- */

/* bits of a CALL32 word a return turns into a LEAF32: the kind, the
** address, and the upper bits of the call's delta (which must be 0) */
#define CALL_LEAF_MASK (0xffffffff000000ffull | (uint64_t)((1u << MEMINST_TREC_LEAF_BITS) - 1) << 20)

/* A return of fn (address a, d ticks after the call or return before it)
** right after the CALL32 of fn, with nothing else written between (p[-1]
** is above the stream's floor) and both deltas in 12 bits: the CALL32
** becomes a LEAF32, and the return takes no word.  True if so. */
static inline __attribute__((always_inline)) bool call_leaf(trace_stream_t *s, uint64_t *p, uint64_t a,
							    uint64_t d)
{
	if (p > s->floor && d < (uint64_t)1 << MEMINST_TREC_LEAF_BITS &&
	    ((p[-1] ^ (MEMINST_TREC_CALL32 | a << 32)) & CALL_LEAF_MASK) == 0) {
		p[-1] ^= (MEMINST_TREC_CALL32 ^ MEMINST_TREC_LEAF32) | d << (8 + MEMINST_TREC_LEAF_BITS);
		return true;
	}
	return false;
}

/* Append a call or return: one word (CALL32, RET32; a return right after
** its call: LEAF32) when the time since the chunk's last one fits 24 bits
** and the address shares its high half with the last full one, else two
** (CALL_FN, RETURN) that set both again.  `now` is the time stamp (from
** trace_t0); ev.last holds raw readings. */
static inline __attribute__((always_inline)) void call_put(trace_thr_t *t, unsigned kind, void *fn,
							   uint64_t now)
{
	uint64_t *p = t->ev.pos, a = (uintptr_t)fn, raw = now + trace_t0, d = raw - t->ev.last;
	bool call = kind == MEMINST_TREC_CALL;
	if (trace_likely((d >> MEMINST_TREC_DELTA_BITS | ((a >> 32) ^ t->ev.hi)) == 0)) {
		if (call || !call_leaf(&t->ev, p, a, d)) {
			p[0] = (call ? MEMINST_TREC_CALL32 : MEMINST_TREC_RET32) | d << 8 | a << 32;
			t->ev.pos = p + 1;
		}
	} else {
		p[0] = MEMINST_TREC_HEAD(call ? MEMINST_TREC_CALL_FN : MEMINST_TREC_RETURN, now);
		p[1] = a;
		t->ev.pos = t->ev.floor = p + 2;
		t->ev.hi = a >> 32;
	}
	t->ev.last = raw;
}

/* With the TSC clock: a gap since the thread's last call or return long
** enough to look for a pre-emption (trace_preempt.c)?  Returns the TSC
** reading, which is the call's or return's time too (one rdtsc, not two:
** it is most of the cost).  Apart, so that call_slow keeps few registers
** for trace=cpu, which never needs it. */
static NOINST __attribute__((noinline)) uint64_t call_gap(trace_thr_t *t)
{
	uint64_t raw = __builtin_ia32_rdtsc();
	uint64_t prev = t->ev.last != trace_t0 ? t->ev.last : t->pre.run_last;
	if (raw - prev >= (uint64_t)1 << TRACE_GAP_BITS)
		trace_preempt_gap(t, prev > trace_t0 ? prev - trace_t0 : 0, raw - trace_t0);
	return raw;
}

/* A claim found on the stream (trace_int.h, Re-entrancy): by the code this
** call interrupted when the mark is well below it on the same stack (a
** signal frame takes more than a kilobyte) or when this runs on the
** alternate signal stack; else by a writer a longjmp abandoned. */
#define CALL_NESTED_BYTES 512
NOINST bool trace_ev_interrupted(trace_thr_t *t, uint32_t mark)
{
	bool nested = (int32_t)(mark - t->in_hook) < -CALL_NESTED_BYTES;
	stack_t ss;
	if (!nested && sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
		nested = true;
	if (nested)
		atomic_fetch_add_explicit(&t->hook_dropped, 1, memory_order_relaxed);
	return nested;
}

/* call_slow's work on the claimed record t: flush first when the buffer
** is nearly full (its CLOCK record must not be later; room for a SUSPEND
** of <preempted> too); false when the exit flush has the buffer (no room
** for the `words` of the record); else true with the time stamp in *now. */
static inline __attribute__((always_inline)) bool call_slow_room(trace_thr_t *t, unsigned words, uint64_t *now)
{
	if (t->ev.pos + 5 > t->ev.end)
		trace_ev_flush(t);
	if (t->ev.pos + words > t->ev.end) {
		t->ev.lost++;
		return false;
	}
	*now = trace_clock == MEMINST_TRACE_CLOCK_TSC ? call_gap(t) - trace_t0 : trace_now_thread();
	return true;
}

/* The returns of the innermost open frames that a hook at sp finds gone
** (trace_frames.c): left by longjmp, they end now.  False when the exit
** flush has the buffer.  Apart: call_slow_put tests the innermost first. */
static NOINST __attribute__((noinline)) bool call_close_gone(trace_thr_t *t, uintptr_t sp, uintptr_t fn,
								  uintptr_t ret)
{
	uint64_t now;
	for (size_t n = trace_frames_gone(t, sp, fn, ret); n > 0; n--) {
		if (!call_slow_room(t, 2, &now))
			return false;
		call_put(t, MEMINST_TREC_RETURN, (void *)t->fr_top->fn, now);
		t->fr_top--;
	}
	return true;
}

/* Frames gone, seen from a call (ret: where its hook returns to) or a
** return (ret 0; sp less 1 when by a tail call) of fn: written and
** closed.  False when nothing can be written. */
static inline __attribute__((always_inline)) bool call_gone(trace_thr_t *t, uintptr_t fn, uintptr_t sp,
							    uintptr_t ret)
{
	trace_frame_t *f = t->fr_top; /* the innermost open frame there? */
	if (ret ? f->sp <= sp : f->sp <= sp && (f->fn != fn || f[-1].sp <= sp))
		return call_close_gone(t, sp, fn, ret);
	return true;
}

static NOINST void call_slow_put(trace_thr_t *t, unsigned kind, void *fn, uintptr_t sp, uintptr_t ret)
{
	uint64_t now;
	bool call = kind == MEMINST_TREC_CALL;
	trace_frame_t *f;
	if (!call_gone(t, (uintptr_t)fn, sp, call ? ret : 0))
		return;
	if (!call_slow_room(t, 2, &now))
		return;
	call_put(t, kind, fn, now);
	f = t->fr_top;
	if (call && trace_likely(f < t->fr_lim && !t->fr_over))
		f[1].sp = sp, f[1].fn = (uintptr_t)fn, t->fr_top = f + 1;
	else if (call)
		trace_frames_push(t, sp, (uintptr_t)fn);
	else if (trace_likely(f->fn == (uintptr_t)fn && !t->fr_over))
		t->fr_top = f - 1;
	else
		trace_frames_pop(t, (uintptr_t)fn);
}

/* trace_sites=on: a call is the three-word CALL [head, fn, site], which
** sets the bases of the one-word forms as CALL_FN does (and ends the
** floor: no LEAF32 is made over it). */
static NOINST __attribute__((noinline)) void call_slow_put_site(trace_thr_t *t, void *fn, void *site,
								  uintptr_t sp, uintptr_t ret)
{
	uint64_t now;
	if (!call_gone(t, (uintptr_t)fn, sp, ret) || !call_slow_room(t, 3, &now))
		return;
	trace_frames_push(t, sp, (uintptr_t)fn);
	uint64_t *p = t->ev.pos, a = (uintptr_t)fn;
	p[0] = MEMINST_TREC_HEAD(MEMINST_TREC_CALL, now);
	p[1] = a;
	p[2] = (uintptr_t)site;
	t->ev.pos = t->ev.floor = p + 3;
	t->ev.hi = a >> 32;
	t->ev.last = now + trace_t0;
}

/* What the hooks' fast path leaves: other clocks, a full buffer, a time or
** address that does not fit one word, a thread to start or stop, a stream
** already claimed.  call_sync may stop the thread's record or start one:
** each is claimed while written.  with_site (trace_sites=on, calls only):
** the call is written with its site; call_slow and call_slow_site are
** this, made twice so that call_slow keeps no site (no register to save
** for it: the clocks other than the TSC take call_slow at every call). */
static inline __attribute__((always_inline)) void call_slow_body(unsigned kind, void *fn, void *site,
								uintptr_t sp, uintptr_t ret, bool with_site)
{
	uint32_t mark = trace_sp_mark();
	trace_thr_t *held = trace_cur;
	if (held && !trace_ev_claim(held, mark))
		return; /* a handler's call inside the thread's own: dropped */
	trace_thr_t *t = call_sync();
	if (t != held) {
		if (held)
			trace_ev_release(held);
		held = t && trace_ev_claim(t, mark) ? t : NULL;
	}
	if (held && with_site)
		call_slow_put_site(held, fn, site, sp, ret);
	else if (held)
		call_slow_put(held, kind, fn, sp, ret);
	else if (!t && kind == MEMINST_TREC_CALL && trace_call_hook && !trace_tls.busy)
		trace_call_hook(fn);
	if (held)
		trace_ev_release(held);
}

static NOINST __attribute__((noinline)) void call_slow(unsigned kind, void *fn, uintptr_t sp, uintptr_t ret)
{
	call_slow_body(kind, fn, NULL, sp, ret, false);
}

static NOINST __attribute__((noinline)) void call_slow_site(void *fn, void *site, uintptr_t sp, uintptr_t ret)
{
	call_slow_body(MEMINST_TREC_CALL, fn, site, sp, ret, true);
}

/*
** The hooks' fast path: CALL32 or RET32 [kind, ticks since the chunk's
** last call or return, low half of fn], 8 bytes; a return right after its
** call turns that CALL32 into a LEAF32 and takes no word.  It runs on
** every call of the program, so it is a handful of instructions and calls
** nothing (the compiler saves one register, on the return's path, for
** the open frames' compare): one TLS load
** (trace_hot: no NULL test), one compare of the record's generation and
** claim with call_fast_gen (which is the tracing generation only while
** tracing with the TSC clock, so that the clock needs no test of its
** own), the claim (the stack pointer stored as it is), the TSC read, the
** room and fit tests and four stores (three for a LEAF32, whose test comes
** first and needs neither room nor the gap test), and the open frame's
** compare with the stack pointer, push or pop (trace_frames.c: two more
** stores on entry, one on return); ev.last is a raw TSC
** reading, so no origin is subtracted.  The rest (other clocks, a full
** buffer, a long form, a thread to start or stop, and every call and
** return with trace_sites, which sets call_fast_gen to 0) is call_slow's,
** by a tail call (a call's with trace_sites: call_slow_site's, with the
** site).  The two rdtsc are most of its cost (three quarters of the
** hooks' CPU samples fall on them).  A gap of 2^TRACE_GAP_BITS ticks or
** more since the last call or return goes to call_slow too, to look for
** a pre-emption (trace_preempt.c).  With nothing armed the hooks are a
** compare with memory, a branch and a return.  Check changes with
** objdump -d and bench/trace_insn.sh: 44 instructions on entry, 46 on a
** leaf's exit (gcc 12 -O2; 32 and 36 before the open frames were kept).
*/
static _Atomic uint32_t call_fast_gen;

/* trace_armed (relaxed), tested by one compare with memory: the hooks'
** cost with nothing armed is that compare, a branch and the return. */
static inline __attribute__((always_inline)) bool call_armed(void)
{
#if defined(__x86_64__)
	__asm__ goto("cmpl $0, %0\n\tjne %l[armed]" : : "m"(trace_armed) : "cc" : armed);
	return false;
armed:
	return true;
#else
	return atomic_load_explicit(&trace_armed, memory_order_relaxed) != 0;
#endif
}

/* The fast path's claim: trace_ev_claim's mark, stored straight from the
** stack pointer (at a function's entry it is 8 past a multiple of 16:
** never 0), the signal fence with it. */
static inline __attribute__((always_inline)) void call_claim_fast(trace_thr_t *t)
{
#if defined(__x86_64__)
	__asm__ volatile("movl %%esp, %0" : "=m"(t->in_hook) : : "memory");
#else
	t->in_hook = trace_sp_low();
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* The fast path's start: nothing armed (return), or the thread's record
** claimed (true), or not for the fast path (false: call_slow's). */
#define CALL_FAST_CLAIM(t, fast)                                                                           \
	if (trace_likely(!call_armed()))                                                                   \
		return;                                                                                    \
	trace_thr_t *t = trace_hot;                                                                        \
	uint64_t fast = atomic_load_explicit(&call_fast_gen, memory_order_relaxed);                        \
	if (trace_likely(t->gen_hook == fast) && (call_claim_fast(t), true))

/* The fast path's end: the word written, the claim let go (gen_hook
** stored whole: the next test loads 8 bytes, see trace_ev_release). */
static inline __attribute__((always_inline)) void call_fast_done(trace_thr_t *t, uint64_t now, uint64_t fast)
{
	t->ev.last = now;
	atomic_signal_fence(memory_order_seq_cst);
	t->gen_hook = fast;
}

/* A one-word call or return fits: room in the buffer, d under the gap
** that looks for a pre-emption (so it fits the word's 24 bits too), the
** address's high half that of the last full one. */
static inline __attribute__((always_inline)) bool call_fast_fits(const trace_thr_t *t, const uint64_t *p,
								  uint64_t a, uint64_t d)
{
	return trace_likely(p < t->ev.end) && trace_likely(d < (uint64_t)1 << TRACE_GAP_BITS) &&
	       trace_likely(a >> 32 == t->ev.hi);
}

/* The frame of the hooks' caller, for trace_frames.c: its stack pointer
** at the call of the hook (the same at its call and return hooks, unless
** the return hook is reached by a tail call: CALL_TAIL). */
#define CALL_SP() ((uintptr_t)__builtin_dwarf_cfa())

/* A return hook reached by a tail call (GCC and Clang at -O2 end a
** function so, its frame popped: the hook returns to the function's
** caller, site): the stack pointer is then the caller's, above every
** frame of fn.  trace_frames.c takes such an sp less 1, which is within
** fn's frame as the one of a call ends. */
#define CALL_TAIL(site) (__builtin_extract_return_addr(__builtin_return_address(0)) == (site))

/* Where a call hook returns to: in fn's prologue when fn was called, in
** its container's code when it was inlined (trace_frames_gone). */
#define CALL_RET() ((uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

/* Entered fn: also its frame opened, when the innermost open one is above
** it, or at the same stack pointer with fn inlined into it (a hook far
** from fn's address; else call_slow tells whether that frame is gone and
** closes it), and there is room. */
ALLOC_EXPORT NOINST void __cyg_profile_func_enter(void *fn, void *site)
{
	CALL_FAST_CLAIM(t, fast) {
		uint64_t *p = t->ev.pos, a = (uintptr_t)fn;
		uint64_t now = __builtin_ia32_rdtsc(), d = now - t->ev.last;
		trace_frame_t *f = t->fr_top;
		if (call_fast_fits(t, p, a, d) &&
		    (trace_likely(f->sp > CALL_SP()) || (f->sp == CALL_SP() && CALL_RET() - a >= TRACE_PROLOGUE_MAX)) &&
		    trace_likely(f < t->fr_lim)) {
			*p = MEMINST_TREC_CALL32 | d << 8 | a << 32;
			t->ev.pos = p + 1;
			f[1].sp = CALL_SP(), f[1].fn = a;
			t->fr_top = f + 1;
			call_fast_done(t, now, fast);
			return;
		}
		trace_ev_release(t);
	}
	if (trace_unlikely(trace_sites))
		call_slow_site(fn, site, CALL_SP(), CALL_RET());
	else
		call_slow(MEMINST_TREC_CALL, fn, CALL_SP(), CALL_RET());
}

/* Returning from fn: RET32, the same word; or, right after fn's CALL32,
** that word becomes a LEAF32 (8 bytes for the call and its return).  The
** leaf is tested first: it writes no word, so it needs no room, and its
** 12-bit delta is under the gap. */
ALLOC_EXPORT NOINST void __cyg_profile_func_exit(void *fn, void *site)
{
	CALL_FAST_CLAIM(t, fast) {
		uint64_t *p = t->ev.pos, a = (uintptr_t)fn;
		uint64_t now = __builtin_ia32_rdtsc(), d = now - t->ev.last;
		trace_frame_t *f = t->fr_top;
		/* the innermost open frame is fn's (else frames above it were
		** left by a longjmp, or tracing started inside it: call_slow);
		** by a tail call, it is fn's one below the stack pointer (not
		** told from a tail call: a frame of fn's gone just above fn's
		** own is closed instead of it, and fn's then at the next hook) */
		if (trace_likely(f->sp == CALL_SP()) || (f->sp < CALL_SP() && f[-1].sp >= CALL_SP() && f->fn == a)) {
			if (trace_likely(a >> 32 == t->ev.hi) && trace_likely(call_leaf(&t->ev, p, a, d))) {
				t->fr_top = f - 1;
				call_fast_done(t, now, fast);
				return;
			}
			if (call_fast_fits(t, p, a, d)) {
				*p = MEMINST_TREC_RET32 | d << 8 | a << 32;
				t->ev.pos = p + 1;
				t->fr_top = f - 1;
				call_fast_done(t, now, fast);
				return;
			}
		}
		trace_ev_release(t);
	}
	call_slow(MEMINST_TREC_RETURN, fn, CALL_SP() - CALL_TAIL(site), 0);
}

/* ------------------------------------------------- <alloc> and suspend -- */

/* Is this thread traced right now (and not inside the runtime)? */
static inline trace_thr_t *call_traced(void)
{
	trace_thr_t *t = trace_cur;
	/* alloc_tls.guard: inside libmeminst (the service thread for life, a
	** snapshot being stored): its allocations and waits are not the
	** program's */
	if (t && t->gen == atomic_load_explicit(&trace_gen, memory_order_relaxed) && !trace_tls.busy &&
	    !alloc_tls.guard)
		return t;
	return NULL;
}

uint64_t trace_alloc_begin(void)
{
	return call_traced() ? trace_now_inline() : UINT64_MAX;
}

/*
** An ALLOC_AT record: the call's site and the backend's time inside it, and
** with mim the block's allocation number when the block went into the map:
** it joins the block to the block in a snapshot (its address would not:
** addresses are reused, and a thread's time stamps cannot be set against
** another's with trace=cpu).  A call too long for the short form is an
** ALLOC or ALLOC_BLOCK record, without the site.
*/
static inline uint64_t call_inner(uint64_t backend_tsc)
{
	if (backend_tsc == UINT64_MAX || !trace_tsc_mult)
		return MEMINST_TALLOC_INNER_NONE;
	return meminst_talloc_inner_code((uint64_t)(((unsigned __int128)backend_tsc * trace_tsc_mult) >> 32));
}

void trace_alloc_end(uint64_t begin, unsigned op, size_t size, const void *block, uintptr_t site,
		     uint64_t backend_tsc)
{
	trace_thr_t *t;
	if (begin != UINT64_MAX && (t = call_traced()) && trace_ev_claim(t, trace_sp_mark())) {
		if (t->ev.pos + 8 > t->ev.end)
			trace_ev_flush(t);
		uint64_t *p = t->ev.pos, end = trace_now_inline(), op_size = op | (uint64_t)size << 8;
		uint64_t seq = block ? alloc_new_block_seq(block) : UINT64_MAX, off = 0;
		/* a long call with the TSC clock: was the thread pre-empted in it?
		** That time is not the allocator's: the call's record ends before
		** it and a SUSPEND(PREEMPT) follows, as for a gap between calls
		** (the next call or return would find the gap but place it after
		** this record, where it no longer fits) */
		if (trace_clock == MEMINST_TRACE_CLOCK_TSC && end - begin >= (uint64_t)1 << TRACE_GAP_BITS &&
		    (off = trace_preempt_off(t, begin, end)) != 0) {
			end -= off;
			if (backend_tsc != UINT64_MAX && backend_tsc >= off) /* most likely in the backend's part */
				backend_tsc -= off;
		}
		if (trace_unlikely(p + 8 > t->ev.end)) { /* the flush could not write */
			t->ev.lost++;
		} else if (trace_likely(end - begin <= UINT32_MAX)) {
			unsigned n = seq == UINT64_MAX ? 4 : 5;
			p[0] = MEMINST_TREC_HEAD(MEMINST_TREC_ALLOC_AT, begin);
			p[1] = MEMINST_TREC_SIZE_WORD(n, end - begin), p[2] = op_size;
			p[3] = (site & ((1ull << MEMINST_TALLOC_INNER_SHIFT) - 1)) |
			       call_inner(backend_tsc) << MEMINST_TALLOC_INNER_SHIFT;
			p[4] = seq;
			t->ev.pos = p + n;
		} else if (seq == UINT64_MAX) {
			p[0] = MEMINST_TREC_HEAD(MEMINST_TREC_ALLOC, begin), p[1] = end, p[2] = op_size;
			t->ev.pos = p + 3;
		} else {
			p[0] = MEMINST_TREC_HEAD(MEMINST_TREC_ALLOC_BLOCK, begin), p[1] = MEMINST_TREC_SIZE_WORD(5, 0);
			p[2] = end, p[3] = op_size, p[4] = seq;
			t->ev.pos = p + 5;
		}
		if (off && t->ev.pos + 3 <= t->ev.end) {
			uint64_t *w = t->ev.pos;
			w[0] = MEMINST_TREC_HEAD(MEMINST_TREC_SUSPEND, end), w[1] = end + off;
			w[2] = MEMINST_TSUSPEND_PREEMPT;
			t->ev.pos = w + 3;
		}
		trace_stream_wrote(&t->ev);
		t->pre.mark = end + off;
		trace_ev_release(t);
	}
	if (trace_asample_on && op != MEMINST_TALLOC_FREE && op != MEMINST_TALLOC_DELETE)
		trace_asample_note(size);
}

uint64_t trace_suspend_begin(void)
{
	return call_traced() ? trace_now_inline() : UINT64_MAX;
}

void trace_suspend_end(uint64_t begin, unsigned reason)
{
	trace_thr_t *t;
	if (begin == UINT64_MAX || !(t = call_traced()) || !trace_ev_claim(t, trace_sp_mark()))
		return;
	if (t->ev.pos + 3 > t->ev.end)
		trace_ev_flush(t);
	uint64_t w[3] = {MEMINST_TREC_HEAD(MEMINST_TREC_SUSPEND, begin), trace_now_inline(), reason};
	trace_ev_append_to(t, w, 3);
	trace_preempt_waited(t, begin, w[1]);
	trace_ev_release(t);
}

/* -------------------------------------------------------- start, stop -- */

/* Tracing off for every thread: each one writes TRACE_OFF at its next call
** and lets go of its record, and the hooks then cost what they cost off.
** Lock-free (one exchange decides who turns it off), async-signal-safe. */
static void call_turn_off(void)
{
	if (!atomic_exchange(&trace_on, 0))
		return;
	atomic_store(&call_fast_gen, 0);
	atomic_fetch_add_explicit(&trace_gen, 1, memory_order_release);
	trace_alloc_watch = false;
	alloc_route_flag(ALLOC_ROUTE_WATCH, false);
	trace_arm(-1);
}

/* A write of the trace file failed (trace_fio.c, which says so): nothing
** more can be written, so nothing more is recorded, traced or sampled.
** Any context: the thread a signal handler interrupted may hold
** call_start_lock.  True if sampling was on. */
bool trace_stop_after_failure(void)
{
	call_turn_off();
	return trace_sampler_fail();
}

/* Start tracing with these settings; the calling thread heads the family.
** 0, or -1 with one line logged. */
static int call_start(int clock, const char *file, size_t file_len, int threads, int output, int sites)
{
	int rc = -1;
	trace_tls.busy++;
	while (atomic_exchange(&call_start_lock, 1))
		;
	if (atomic_load(&trace_on)) {
		rc = 0; /* already on: the settings of the running trace stay */
		goto out;
	}
	int want = clock ? clock : trace_want_clock ? trace_want_clock : 1;
	if (trace_clock && (want == 2) != (trace_clock == MEMINST_TRACE_CLOCK_CPU)) {
		alloc_log("cannot trace with %s time: the trace file records %s time",
			  want == 2 ? "cpu" : "wall", want == 2 ? "wall" : "cpu");
		goto out;
	}
	if (file_len) {
		char path[sizeof trace_path];
		if (file_len >= sizeof path) {
			alloc_log("trace_file name too long");
			goto out;
		}
		memcpy(path, file, file_len);
		path[file_len] = 0;
		if (trace_file_is_open() && strcmp(path, trace_path) != 0) {
			alloc_log("cannot trace to %s: the trace already goes to %s", path,
				  trace_path[0] ? trace_path : "meminst.%p.trace");
			goto out;
		}
		memcpy(trace_path, path, file_len + 1);
	}
	bool profile = output == 2;
	if (profile != trace_prof_on && (trace_file_is_open() || trace_prof_on)) {
		alloc_log(profile ? "cannot trace to an in-process profile: the trace file is already open"
				  : "cannot trace to a file: tracing goes to the in-process profile");
		goto out;
	}
	trace_want_clock = want;
	trace_all_threads = threads != 2;
	trace_sites = sites == 2;
	if (profile && trace_prof_start() < 0)
		goto out;
	if (trace_file_ensure() < 0)
		goto out;
	if (trace_fio_failed()) /* said when it failed: nothing can be written */
		goto out;
	uint32_t g = atomic_load(&trace_gen) + 1;
	trace_tls.member_gen = g;
	trace_alloc_watch = true;
	alloc_route_flag(ALLOC_ROUTE_WATCH, true);
	trace_arm(1);
	atomic_store(&trace_on, 1);
	atomic_store_explicit(&trace_gen, g, memory_order_release);
	/* the hooks' fast path writes no call site: with trace_sites every
	** call and return goes to call_slow (call_slow_site) */
	atomic_store(&call_fast_gen, trace_clock == MEMINST_TRACE_CLOCK_TSC && !trace_sites ? g : 0);
	if (trace_fio_failed()) /* a write failed meanwhile, before tracing was on */
		call_turn_off();
	rc = 0;
out:
	atomic_store(&call_start_lock, 0);
	trace_tls.busy--;
	if (rc == 0) {
		trace_unwind_main_home(); /* which frames are the thread's own (trace_frames.c) */
		call_sync(); /* the starter's TRACE_ON now, not at its next call */
		trace_calibrate();
	}
	return rc;
}

/* Stop tracing; with write_profile, the in-process profile is written
** (the calling thread's records flushed first; other threads' come in at
** their next call, when they see the stop, and the file is written again
** at exit). */
static int call_stop(bool write_profile)
{
	while (atomic_exchange(&call_start_lock, 1))
		;
	call_turn_off();
	atomic_store(&call_start_lock, 0);
	trace_thr_t *t = trace_cur;
	if (t && trace_ev_claim(t, trace_sp_mark())) {
		call_thread_off(t);
		trace_ev_release(t);
	}
	if (write_profile && trace_prof_on)
		trace_prof_write();
	return 0;
}

/* Constructor: MEMINST=trace=wall|cpu.  A trace file that cannot be made is
** said on one line; the program runs on untraced. */
int trace_start_from_env(void)
{
	if (!alloc_opts.trace_clock)
		return 0;
	if (call_start(alloc_opts.trace_clock, alloc_opts.trace_file, alloc_opts.trace_file_len,
		       alloc_opts.trace_threads, alloc_opts.trace_output, alloc_opts.trace_sites) < 0) {
		alloc_log("tracing is off");
		return -1;
	}
	return 0;
}

/* Destructor (alloc_api.c's): the sampler stops first, whatever the order
** of destructors, then tracing; every buffer goes out, and the in-process
** profile is written last, with everything. */
void trace_at_exit(void)
{
	if (!trace_file_is_open() && !trace_sink)
		return;
	trace_sampler_stop();
	call_stop(false);
	trace_writer_close();
	trace_prof_write();
}

/* ------------------------------------------------------------- the API -- */

/* Options in MEMINST syntax; only the tracing items are accepted. */
static int call_parse(const char *options, const char *who, alloc_options_t *o)
{
	char err[ALLOC_OPTIONS_ERRMAX];
	if (alloc_options_parse(options, o, err, sizeof err) < 0) {
		alloc_log("%s: %s", who, err);
		return -1;
	}
	if (o->mode != MEMINST_MODE_OFF || o->snapshot || o->interval_ns || o->sample_hz ||
	    o->alloc_sample || o->control) {
		alloc_log("%s: only trace, trace_file, trace_threads, trace_output and trace_sites are accepted", who);
		return -1;
	}
	return 0;
}

static void call_ensure_alloc(void)
{
	if (atomic_load(&alloc_state) == 0)
		alloc_init();
}

ALLOC_EXPORT int meminst_trace_start(const char *options)
{
	alloc_options_t o;
	call_ensure_alloc();
	if (call_parse(options, "meminst_trace_start", &o) < 0)
		return -1;
	/* what options do not say, MEMINST does (trace_file= without trace=
	** names the file of a later start) */
	bool own_file = o.trace_file_len != 0;
	return call_start(o.trace_clock ? o.trace_clock : alloc_opts.trace_clock,
			  own_file ? o.trace_file : alloc_opts.trace_file,
			  own_file ? o.trace_file_len : alloc_opts.trace_file_len,
			  o.trace_threads ? o.trace_threads : alloc_opts.trace_threads,
			  o.trace_output ? o.trace_output : alloc_opts.trace_output,
			  o.trace_sites ? o.trace_sites : alloc_opts.trace_sites);
}

ALLOC_EXPORT int meminst_trace_stop(void)
{
	return call_stop(true);
}

ALLOC_EXPORT int meminst_trace_active(void)
{
	return call_traced() != NULL;
}

ALLOC_EXPORT int meminst_trace_flush(void)
{
	trace_thr_t *t = trace_tls.rec;
	if (!trace_file_is_open() && !trace_prof_on)
		return -1;
	if (t && !trace_tls.busy && trace_ev_claim(t, trace_sp_mark())) {
		trace_ev_flush(t);
		trace_ev_release(t);
	}
	trace_writer_drain();
	return 0;
}

/* fprof:apply: trace only the calling thread's family around one call; with
** MEMINST_TRACE_CONTINUE tracing stays on afterwards.  If tracing is
** already on, fn just runs under it. */
ALLOC_EXPORT void *meminst_trace_apply(void *(*fn)(void *), void *arg, const char *options,
				       unsigned flags)
{
	alloc_options_t o;
	call_ensure_alloc();
	bool started = false;
	if (!atomic_load(&trace_on) && call_parse(options, "meminst_trace_apply", &o) == 0)
		started = call_start(o.trace_clock, o.trace_file, o.trace_file_len,
				     o.trace_threads ? o.trace_threads : 2,
				     o.trace_output ? o.trace_output : alloc_opts.trace_output,
				     o.trace_sites ? o.trace_sites : alloc_opts.trace_sites) == 0;
	void *r = fn(arg);
	if (started && !(flags & MEMINST_TRACE_CONTINUE))
		call_stop(true);
	return r;
}
