# small_stack.sh — threads on PTHREAD_STACK_MIN stacks using 6000 bytes of it
# (tests/targets/small_stack), under the preload in every mode and with
# sampling and allocation sampling: output and status are the plain run's.
# Before the fix every case died of SIGSEGV (glibc takes libmeminst's
# static TLS out of the thread's stack; the hooks and the sampler's
# handler run on the rest); pthread_create now gives such a stack 64 KiB
# more (trace_thread.c).  A small stack the program gives itself cannot
# grow: its thread is not sampled.
. "$top_srcdir/tests/integration/lib.sh"

small() { mi_x "$MI_TARGETS/small_stack"; }
own() { mi_x "$MI_TARGETS/small_stack" own; }

# stacks of 16 KiB the program gives (pthread_attr_setstack): such a
# thread is not sampled (the walk wrote past the stack into the heap)
mi_compare small_stack_own own || mi_finish
for set in "mis,sample=2000,trace_file=$MI_TMP/t.%p.trace" \
	"mim,sample=2000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace"; do
	rm -f "$MI_TMP"/t.*
	mi_case "small_stack own $(echo "$set" | sed "s|$MI_TMP/||g")" "$set" own
done

mi_compare small_stack small || mi_finish
for set in "mis,sample=2000,trace_file=$MI_TMP/t.%p.trace" \
	"off,sample=2000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace" \
	"mim,site_depth=32,alloc_sample=1024,trace_file=$MI_TMP/t.%p.trace"; do
	rm -f "$MI_TMP"/t.*
	mi_case "small_stack $(echo "$set" | sed "s|$MI_TMP/||g")" "$set" small
done
mi_finish
