#!/bin/sh
# leaks_roots.sh — which memory the leak check takes as roots, on
# tests/targets/leak_roots (its comment lists the blocks):
#   - a pointer only in a mapping the program made itself (mmap, as
#     pymalloc's arenas) keeps its block still reachable (300 in 1);
#   - a pointer only in a freed malloc block (glibc's heap: free chunks
#     keep their contents) does not: definitely lost (120);
#   - a live block that glibc mapped on its own (1 MiB) is no root: lost
#     with no pointer to it, definitely lost, and the block only it
#     points to indirectly lost (140);
#   - a pointer left on the stack of a thread that has ended (glibc keeps
#     the stack for the next thread) does not count: definitely lost (160);
#   - nor do the TLS and the result of a thread joined (glibc's stack
#     cache, which memcheck's __libc_freeres unmaps): definitely lost
#     (170, 180); those of a thread ended but not joined do: still
#     reachable (190, 200), as memcheck says;
#   - libresolv.so.2's link map, names and version table, which the loader
#     allocates when the program dlopens it, are still reachable, not
#     suppressed (memcheck counts them: __libc_freeres keeps a loaded
#     object's);
#   - against valgrind --leak-check=full on the same program: the same
#     bytes and blocks of each of these sites;
#   - a C++ program (tests/targets/cxx_containers) under MEMINST=mim (sites
#     of one frame): libstdc++'s emergency exception pool, which memcheck
#     never counts (__gnu_cxx::__freeres), is on the suppressed line, its
#     site a libstdc++ frame without a name; nothing of libstdc++'s is
#     still reachable.
# Three runs (the thread's stack, the mapping's place vary).
. "$top_srcdir/tests/integration/lib.sh"

P=$MI_TARGETS/leak_roots
INSPECT=$top_builddir/inspect/inspect

# site FILE.csv KIND FUNCTION: "bytes blocks" of one site of KIND.
site() {
	awk -F, -v k="$2" -v f="$3" '$1 == k && index($7, f "+") == 1 { b += $2; n += $3 } END { print b + 0, n + 0 }' "$1"
}
expect() { # WHAT GOT WANTED
	[ "$2" = "$3" ] || mi_why_add "$1: $2, expected $3"
}
CASES="still_reachable:alloc_in_anon:300_1 definitely_lost:alloc_in_freed:120_1
definitely_lost:alloc_big:1048576_1 indirectly_lost:alloc_in_big:140_1
definitely_lost:alloc_on_dead_stack:160_1 definitely_lost:alloc_in_dead_tls:170_1
definitely_lost:alloc_dead_result:180_1 still_reachable:alloc_in_zombie_tls:190_1
still_reachable:alloc_zombie_result:200_1"

for run in 1 2 3; do
	d=$MI_TMP/run$run
	mkdir -p "$d"
	why=
	MI_MEMINST="mim,snapshot=$d/l.db" mi_x "$P" >"$d/out" 2>"$d/err" || mi_why_add "exit status $?"
	expect "output" "$(cat "$d/out")" "ready 1"
	mi_no_complaint "$d/err"
	"$INSPECT" leaks --all --csv "$d/l.db" >"$d/l.csv" 2>"$d/i.err" || mi_why_add "inspect leaks failed"
	for c in $CASES; do
		IFS=: read -r kind fn want <<-E
		$c
		E
		kind=$(echo "$kind" | tr _ ' ')
		expect "$kind at $fn" "$(site "$d/l.csv" "$kind" "$fn")" "$(echo "$want" | tr _ ' ')"
	done
	set -- $(site "$d/l.csv" "still reachable" _dl_new_object)
	[ "$2" -ge 1 ] || mi_why_add "libresolv's link map is not still reachable"
	mi_verdict "anonymous mappings are roots, freed chunks, live blocks, dead stacks and cached threads' TLS are not, run $run" \
		"$why" "$d/l.csv" "inspect leaks" "$d/err" stderr "$d/i.err" "inspect stderr"
done

# memcheck's own answer can change between runs: a stale word that
# happens to point inside the 1 MiB block (a register or stack slot, or
# any value in its range) makes it and what it holds "possibly lost" to
# memcheck; up to three valgrind runs, the comparison of the last is said.
vg_try=0
while command -v valgrind >/dev/null && [ $vg_try -lt 3 ]; do
	vg_try=$((vg_try + 1))
	why=
	$MI_TIMEOUT valgrind --leak-check=full --show-leak-kinds=all "$P" >"$MI_TMP/vg.out" 2>"$MI_TMP/vg.err" ||
		mi_why_add "valgrind failed"
	# vg KIND FUNCTION: "bytes blocks" of the loss records of KIND whose stack has FUNCTION
	vg() { # the direct bytes of "T (D direct, I indirect) bytes in N blocks"
		awk -v k="$1" -v f="$2" '
			/ bytes in .* blocks are .* in loss record/ {
				rec = $0; sub(/^==[0-9]*== */, "", rec)
				b = rec; if (b ~ /direct,/) sub(/^[^(]*\(/, "", b); sub(/ .*/, "", b); gsub(/,/, "", b)
				n = rec; sub(/.* bytes in /, "", n); sub(/ blocks.*/, "", n); gsub(/,/, "", n)
				kind = rec; sub(/.* blocks are /, "", kind); sub(/ in loss record.*/, "", kind)
				cur = kind == k; next }
			cur && index($0, " " f " (") { s += b; c += n; cur = 0 }
			/^==[0-9]*== $/ { cur = 0 }
			END { print s + 0, c + 0 }' "$MI_TMP/vg.err"
	}
	for c in $CASES; do
		IFS=: read -r kind fn want <<-E
		$c
		E
		kind=$(echo "$kind" | tr _ ' ')
		expect "memcheck: $kind at $fn" "$(vg "$kind" "$fn")" "$(site "$MI_TMP/run1/l.csv" "$kind" "$fn")"
	done
	expect "memcheck: the link map" "$(vg 'still reachable' _dl_new_object)" \
		"$(site "$MI_TMP/run1/l.csv" 'still reachable' _dl_new_object)"
	expect "memcheck: still reachable" \
		"$(sed -n 's/^==[0-9]*== *still reachable: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' "$MI_TMP/vg.err" | tr -d ,)" \
		"$(awk -F, 'NF == 3 && $1 == "still reachable" { print $2, $3 }' "$MI_TMP/run1/l.csv")"
	[ -n "$why" ] && [ $vg_try -lt 3 ] && grep -q "possibly lost in loss record" "$MI_TMP/vg.err" && continue
	mi_verdict "the same sites as valgrind --leak-check=full (valgrind run $vg_try)" "$why" "$MI_TMP/vg.err" "valgrind"
	break
done
command -v valgrind >/dev/null || echo "skip  memcheck comparison: valgrind is not installed"

why=
MI_MEMINST="mim,snapshot=$MI_TMP/cxx.db" mi_x "$MI_TARGETS/cxx_containers" >"$MI_TMP/cxx.out" 2>"$MI_TMP/cxx.err" ||
	mi_why_add "cxx_containers: exit status $?"
"$INSPECT" leaks --all --csv "$MI_TMP/cxx.db" >"$MI_TMP/cxx.csv" 2>"$MI_TMP/cxx.ierr" || mi_why_add "inspect leaks failed"
awk -F, '$1 == "suppressed" && $7 ~ /^0x[0-9a-f]* \(libstdc\+\+/ && $2 >= 8192 { f = 1 } END { exit !f }' \
	"$MI_TMP/cxx.csv" || mi_why_add "no suppressed row of libstdc++'s pool"
awk -F, '$1 != "suppressed" && NF > 3 && $7 ~ /libstdc\+\+/ { f = 1 } END { exit f }' "$MI_TMP/cxx.csv" ||
	mi_why_add "a row of libstdc++'s not suppressed"
mi_verdict "libstdc++'s emergency pool suppressed with sites of one frame" "$why" "$MI_TMP/cxx.csv" "inspect leaks" \
	"$MI_TMP/cxx.ierr" "inspect stderr"
mi_finish
