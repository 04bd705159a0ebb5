# oom.sh — tests/targets/oom under RLIMIT_AS, linked with libmeminst: when
# the backend runs out, every allocation function returns NULL with ENOMEM,
# nothing crashes, a failed realloc keeps the old block, and the counters
# count exactly what was handed out.  Uninstrumented first, as reference.
. "$top_srcdir/tests/integration/lib.sh"

oom() {
	mi_xl "$MI_TARGETS/oom"
}

mi_compare oom oom
mi_finish
