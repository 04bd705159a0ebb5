# compat.sh — the compatibility set: real programs from Debian packages
# under the preload, in mis and mim mode with each backend, compared with
# the uninstrumented run (exit status and stdout), and one snapshot run of
# each (mim, snapshot at exit of every process) whose snapshots must add up:
# block rows against the status stored with them (snap_consistent).
#
# Quick by default (part of `make check`); COMPAT_LONG=1 (`make check-long`)
# grows every workload about tenfold and adds sqlite3 and python3 at scale.
# Programs that are not installed are skipped one by one, with their
# package named.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"
. "$top_srcdir/tests/compat/compat_lib.sh"
# gcc's cc1 carries its own operator new and delete (static libstdc++,
# exported for plugins): with backend=jemalloc meminst says once that it
# uses the system allocator (tests/integration/gcc.sh).
MI_EXPECTED_NOTE='defines operator new.*backend=jemalloc is not used'

# ---------------------------------------------------------- workloads --

if have tclsh tcl; then
	cat >"$MI_TMP/work.tcl" <<'TCL'
set n [lindex $argv 0]
array set a {}
for {set i 0} {$i < $n} {incr i} { set a(k$i) [string repeat x [expr {$i % 50}]] }
set keys [lsort [array names a]]
set total 0
foreach k $keys { incr total [string length $a($k)] }
set l {}
for {set i 0} {$i < $n} {incr i} { lappend l [format %08d [expr {($i * 7919) % $n}]] }
puts "[llength $keys] $total [lindex [lsort $l] end] [string length [join $l ,]]"
TCL
	tcl() { mi_x tclsh "$MI_TMP/work.tcl" "$(scale 60000 600000)"; }
	check tclsh tcl
fi

if have ruby ruby; then
	ruby_work() { mi_x ruby -e 'h = {}; ARGV[0].to_i.times { |i| h["k#{i}"] = "v" * (i % 40) }
		puts h.size, h.values.map(&:size).sum, h.keys.sort.last' "$(scale 100000 1000000)"; }
	check ruby ruby_work
fi

# make driving gcc on a multi-file program, then running it.
if have make make && have gcc gcc; then
	mkdir -p "$MI_TMP/proj"
	for i in 1 2 3 4 5 6; do
		cat >"$MI_TMP/proj/part$i.c" <<EOF
#include <stdlib.h>
#include <string.h>
long part$i(long n)
{
	long s = 0;
	for (long k = 0; k < n; k++) {
		char *b = malloc(16 + k % 200);
		memset(b, $i, 16 + k % 200);
		s += b[k % 16] * (k % 7);
		free(b);
	}
	return s;
}
EOF
	done
	cat >"$MI_TMP/proj/main.c" <<'EOF'
#include <stdio.h>
long part1(long), part2(long), part3(long), part4(long), part5(long), part6(long);
int main(void)
{
	printf("%ld\n", part1(1000) + part2(2000) + part3(3000) + part4(4000) + part5(5000) + part6(6000));
	return 0;
}
EOF
	cat >"$MI_TMP/proj/Makefile" <<'EOF'
OBJS = main.o part1.o part2.o part3.o part4.o part5.o part6.o
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c
	$(CC) -O2 -c $< -o $@
clean:
	rm -f prog $(OBJS)
EOF
	build() {
		make -s -C "$MI_TMP/proj" clean >/dev/null
		mi_x make --no-print-directory -j2 -C "$MI_TMP/proj" CC=gcc prog && mi_x "$MI_TMP/proj/prog"
	}
	check "make+gcc" build
fi

# bash forking many children: subshells, pipelines, command substitution.
if have bash bash; then
	forks() {
		mi_x bash -c '
			n=$1 t=0
			for i in $(seq 1 "$n"); do
				v=$(echo "$i" | tr 0-9 a-j)
				t=$((t + ${#v}))
				( : "$v" ) &
				[ $((i % 16)) -eq 0 ] && wait
			done
			wait
			printf "%s\n" "$t" "$(seq 1 2000 | sort -r | head -n 3 | tr "\n" " ")"
		' bash "$(scale 300 3000)"
	}
	check "bash forks" forks
fi

# gzip and xz on a large generated file: compress, decompress, checksum.
/usr/bin/python3 -c '
import random, sys
r = random.Random(7)
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
out = sys.stdout
for i in range(int(sys.argv[1])):
    out.write(" ".join(r.choice(words) for _ in range(12)) + " %d\n" % r.randrange(10**9))
' "$(scale 120000 1500000)" >"$MI_TMP/big.txt" || exit 99
if have gzip gzip; then
	gz() { mi_x gzip -6 -c "$MI_TMP/big.txt" | mi_x gzip -dc | cksum; }
	check gzip gz
fi
if have xz xz-utils; then
	xzz() { mi_x xz -T2 -3 -c "$MI_TMP/big.txt" | mi_x xz -dc | cksum; }
	check xz xzz
fi

# Our own: 8 threads allocating and freeing across threads (tests/targets).
mt() { mi_x "$MI_TARGETS/mt_alloc"; }
check "mt_alloc (8 threads)" mt

if [ "$LONG" = 1 ]; then
	if have sqlite3 sqlite3; then
		sq() {
			mi_x sqlite3 ':memory:' "
				CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
				WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000000)
				INSERT INTO t SELECT i, hex(randomblob(16)), i * 0.5 FROM s;
				CREATE INDEX tb ON t(b);
				SELECT count(*), sum(c), min(length(b)) FROM t;
				SELECT count(*) FROM t x JOIN t y ON y.a = x.a + 1 WHERE x.a % 7 = 0;"
		}
		check "sqlite3 1M rows" sq
	fi
	if have python3 python3; then
		pyt() {
			PYTHONMALLOC=malloc mi_x /usr/bin/python3 -c '
import threading, json
def work(k):
    d = {str(i): [i] * (i % 9) for i in range(300000)}
    json.dumps(d)
t = [threading.Thread(target=work, args=(k,)) for k in range(4)]
[x.start() for x in t]; [x.join() for x in t]
print(len(json.dumps({str(i): i for i in range(100000)})))'
		}
		check "python3 threads" pyt
	fi
fi

mi_finish
