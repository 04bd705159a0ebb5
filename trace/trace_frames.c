/*
** trace_frames.c — the open frames of a traced thread as the hooks see
** them: for each call written and not yet returned, the stack pointer of
** its frame and its function (trace_int.h, Open frames).
**
** A program can leave frames without returning: longjmp and siglongjmp
** (out of a recursion, out of a signal handler), a thread's stack switched
** (swapcontext).  The hooks see no return for those frames, and the
** reader's stack, which follows the records, would keep them open: every
** later call counted under a frame that is gone, its time too.  So each
** hook compares the stack pointer with the innermost open frame's: on one
** stack, a frame at or below the one now being entered (or below the one
** returning) is gone, and its return is written then, with the time of
** now.  The fast path does the compare and the push or pop; the rest
** (frames gone, a stack of another, a full array) is the slow path's,
** here.
**
** A coroutine's stack (makecontext; a green-thread library's) is somewhere
** else in memory, above or below the thread's: its frames and the
** thread's are never compared with each other.  Only frames on the
** thread's own stack (trace_unwind_on_home) are closed, and only from a
** hook on that stack; on another stack nothing is closed.
*/
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <errno.h>
#include <string.h>

#define NOINST __attribute__((no_instrument_function))

/* The first array: 4096 frames.  It doubles up to 2^20 frames (16 MiB,
** deeper than an 8 MiB stack of 16-byte frames goes); past that, frames
** are counted (fr_over) and not followed. */
#define FRAMES_FIRST (64 * 1024)
#define FRAMES_MAX (16u << 20)

/* The innermost open frame of a thread without any: the hooks' test finds
** its stack pointer above every other, and no room to push after it. */
static const trace_frame_t frames_none = {.sp = UINTPTR_MAX, .fn = 0};

/* No open frame (a thread starting to record: the frames it is in were
** written by no CALL; their returns are the reader's untraced returns). */
NOINST void trace_frames_reset(trace_thr_t *t)
{
	t->fr_over = 0;
	if (t->fr_base) {
		t->fr_top = t->fr_base;
		t->fr_lim = t->fr_base + t->fr_bytes / sizeof *t->fr_base - 1;
	} else {
		t->fr_top = t->fr_lim = (trace_frame_t *)&frames_none;
	}
}

/* Room for one more frame: the array made or doubled (a new mapping, the
** frames copied; a signal handler's hooks cannot come in meanwhile: the
** stream is claimed).  False when there is none. */
static NOINST bool frames_grow(trace_thr_t *t)
{
	size_t old = t->fr_bytes, bytes = old ? 2 * old : FRAMES_FIRST;
	if (bytes > FRAMES_MAX)
		return false;
	int e = errno; /* the program's: a failed mmap sets it */
	trace_frame_t *n = alloc_sys_map(bytes);
	errno = e;
	if (!n)
		return false;
	size_t depth = 0;
	if (t->fr_base) {
		depth = (size_t)(t->fr_top - t->fr_base);
		memcpy(n, t->fr_base, old);
		alloc_sys_unmap(t->fr_base, old);
	} else {
		n[0] = frames_none; /* the sentinel under the outermost frame */
	}
	t->fr_base = n;
	t->fr_bytes = bytes;
	t->fr_top = n + depth;
	t->fr_lim = n + bytes / sizeof *n - 1;
	return true;
}

/* A call was written: its frame is open. */
NOINST void trace_frames_push(trace_thr_t *t, uintptr_t sp, uintptr_t fn)
{
	if (trace_unlikely(t->fr_over) || (t->fr_top >= t->fr_lim && !frames_grow(t))) {
		t->fr_over++;
		return;
	}
	*++t->fr_top = (trace_frame_t){.sp = sp, .fn = fn};
}

/*
** A call of fn at sp whose hook returns to ret: is it inlined into the
** open frame e, which has the same stack pointer (GCC and Clang keep the
** hooks of inlined functions, in the container's frame)?  Else e is gone
** (a frame left by longjmp, at the depth of this call).  A function
** called calls its hook from its prologue, a few bytes past its address,
** and before the next function's: an inlined copy, from its container's
** code, anywhere else (a container placed just after fn is told by its
** address, below ret).
*/
static NOINST bool frames_inlined(uintptr_t fn, uintptr_t ret, const trace_frame_t *e)
{
	return ret - fn >= TRACE_PROLOGUE_MAX || (e->fn > fn && e->fn < ret);
}

/*
** How many of the innermost open frames are gone, seen from a hook at sp.
** A call's of fn (ret: where its hook returns to): those below sp, and
** those at sp unless fn is inlined into them.  A return's of fn (ret 0;
** sp less 1 when the hook was reached by a tail call): those at sp or
** below but the outermost of fn's, which is the one returning (and those
** that share its frame: fn inlined into another); without a frame of
** fn's, those below sp.  Counted from the innermost out, up to the first
** that is still there or is on another stack; none when sp is on another
** stack, or frames past the array's end are open (their functions are
** not known, and they would be closed first).
*/
NOINST size_t trace_frames_gone(const trace_thr_t *t, uintptr_t sp, uintptr_t fn, uintptr_t ret)
{
	if (t->fr_over || !t->fr_base || !trace_unwind_on_home(sp))
		return 0;
	size_t n = 0, below = 0, own = 0;
	for (const trace_frame_t *f = t->fr_top; f > t->fr_base; f--) {
		if (f->sp > sp || !trace_unwind_on_home(f->sp) || (ret && f->sp == sp && frames_inlined(fn, ret, f)))
			break;
		n++;
		below += f->sp < sp;
		if (f->fn == fn)
			own = n; /* the outermost of fn's */
	}
	if (ret)
		return n;
	return own ? own - 1 : below;
}

/*
** A return of fn was written (after the returns of the frames gone):
** close its frame as the reader will — the innermost frame of fn, and the
** frames above it — or none when no frame of fn is open (the reader's
** untraced return).  Frames past the array's end go first.
*/
NOINST void trace_frames_pop(trace_thr_t *t, uintptr_t fn)
{
	if (t->fr_over) {
		t->fr_over--;
		return;
	}
	trace_frame_t *f = t->fr_top;
	for (; t->fr_base && f > t->fr_base; f--) {
		if (f->fn == fn) {
			t->fr_top = f - 1;
			return;
		}
	}
}
