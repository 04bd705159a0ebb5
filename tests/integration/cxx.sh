# cxx.sh — tests/targets/cxx_containers (g++: std containers, shared_ptr,
# new/delete, new[]/delete[], aligned and nothrow new) under the preload,
# output compared with an uninstrumented run; under mis and mim the
# target's probes also check the new and new[] counts exactly.
. "$top_srcdir/tests/integration/lib.sh"

cxx() { mi_x "$MI_TARGETS/cxx_containers"; }

mi_compare cxx_containers cxx
mi_finish
