# threads.sh — tests/targets/mt_alloc under the preload: 8 threads
# allocating and freeing with blocks freed by other threads, then 2000
# short threads created and joined 8 at a time, some allocating from a key
# destructor after libmeminst has retired them.  Output is compared with an
# uninstrumented run; under mis and mim the target's own probes also check
# that its class ends empty and that the status kinds add up.
. "$top_srcdir/tests/integration/lib.sh"

mt() { mi_x "$MI_TARGETS/mt_alloc"; }

mi_compare mt_alloc mt
mi_finish
