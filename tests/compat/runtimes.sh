# runtimes.sh — the compatibility set, second part: programs built by other
# toolchains and runtimes loading C extensions, compared with the plain run
# under mis and mim with each backend, and each process's snapshots checked
# (as compat.sh does; helpers in compat_lib.sh):
#   rg, fdfind, hyperfine   Rust binaries (hyperfine spawns and times others)
#   fzf, go                 Go binaries (goroutines on several threads; go
#                           runs its static compile/vet/link tools)
#   python3                 C extensions: _decimal, _sqlite3, _json, zlib,
#                           _hashlib, lxml.etree
#   perl                    XS modules: List::Util, Digest::MD5/SHA,
#                           Storable, Encode, POSIX, Data::Dumper
#   ruby                    C extensions: json, zlib, digest, stringio,
#                           strscan, and an exception raised and rescued
#   cxx_throw               C++ exceptions thrown across allocations
#                           (tests/targets/cxx_throw.cc)
#   malloc_tune, e2fsck     programs calling mallopt, malloc_trim,
#                           mallinfo2, malloc_info and malloc_stats
# COMPAT_LONG=1 grows each workload about tenfold.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"
. "$top_srcdir/tests/compat/compat_lib.sh"

# A tree of text and Rust files for the file walkers.
tree=$MI_TMP/tree
for d in a b c d e f; do
	mkdir -p "$tree/$d/sub"
	for i in $(seq 1 "$(scale 40 400)"); do
		seq "$i" $(((i % 40 + 1) * 50)) | sed "s/^/line $d /" >"$tree/$d/sub/f$i.txt"
		echo "fn main$i() {}" >"$tree/$d/m$i.rs"
	done
done

# ------------------------------------------------------------ Rust --

if have rg ripgrep; then
	rgw() {
		mi_x rg -n --sort path 'line [ace] 1[0-9]+7$' "$tree" | cksum
		mi_x rg -c -t rust --sort path 'main[0-9]' "$tree" | sed "s|$tree||" | cksum
		mi_x rg -l --threads 2 -F 'line b 33' "$tree" | sort | sed "s|$tree||" | cksum
	}
	check rg rgw
fi

if have fdfind fd-find; then
	fdw() {
		mi_x fdfind -t f -e txt . "$tree" | sort | sed "s|$tree||" | cksum
		mi_x fdfind -e rs 'm1' "$tree" --exec wc -c '{}' ';' | sed "s|$tree||" | sort | cksum
	}
	check fdfind fdw
fi

# hyperfine's figures are times; its JSON export gives what is fixed: the
# commands, the number of runs and their exit codes.
if have hyperfine hyperfine; then
	hfw() {
		rm -f "$MI_TMP/hf.json"
		mi_x hyperfine -N --style none --runs "$(scale 5 50)" --export-json "$MI_TMP/hf.json" \
			'seq 1 2000' 'sort --version' >/dev/null
		echo "exit $?"
		/usr/bin/python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["command"], len(r["times"]), sorted(set(r["exit_codes"])))' "$MI_TMP/hf.json"
	}
	check hyperfine hfw
fi

# -------------------------------------------------------------- Go --

if have fzf fzf; then
	seq 1 "$(scale 30000 300000)" | sed 's/^/item /' >"$MI_TMP/fzf.in"
	fzw() {
		mi_x fzf --filter '12 3' <"$MI_TMP/fzf.in" | cksum
		mi_x fzf --filter "'item 99" --no-sort <"$MI_TMP/fzf.in" | cksum
	}
	mi_compare fzf fzw && live_stdin fzf "$MI_TMP/fzf.in" fzf --filter '12 3'
	# as a new user runs it: the launcher's output and status are the
	# program's, and the cut trace is explained
	fzf --filter '12 3' <"$MI_TMP/fzf.in" >"$MI_TMP/fzf.plain"
	"$top_builddir/session/meminst" --library="$MEMINST_LIB" -q -o "$MI_TMP/fzf.sess" \
		fzf --filter '12 3' <"$MI_TMP/fzf.in" >"$MI_TMP/fzf.out" 2>"$MI_TMP/fzf.err"
	rc=$?
	why=
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	cmp -s "$MI_TMP/fzf.plain" "$MI_TMP/fzf.out" || mi_why_add "stdout differs"
	grep -q 'cut after .*exit_group system call itself, as Go programs do' "$MI_TMP/fzf.err" ||
		mi_why_add "the cut trace is not explained"
	mi_verdict "fzf under meminst (the launcher)" "$why" "$MI_TMP/fzf.err" stderr
fi

# go itself (the go command is dynamically linked; the tools it runs are
# static, so only it is instrumented): list, vet, build and run a module,
# offline.  Its live snapshot is taken during `go run`, whose program waits
# for its input.
if have go golang-go; then
	mkdir -p "$MI_TMP/gomod"
	cat >"$MI_TMP/gomod/go.mod" <<'EOF2'
module example.com/gomod

go 1.19
EOF2
	cat >"$MI_TMP/gomod/main.go" <<'EOF2'
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

func main() {
	n := 0
	fmt.Fscan(os.Stdin, &n)
	var mu sync.Mutex
	m := map[string]int{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < n; i += 4 {
				s := strings.Repeat("x", i%50) + fmt.Sprint(i)
				mu.Lock()
				m[s] = i
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Println(len(keys), keys[len(keys)-1][:10])
}
EOF2
	scale 20000 200000 >"$MI_TMP/go.in"
	gohere() {
		cd "$MI_TMP/gomod" || return 1
		rm -rf "$MI_TMP/gocache" prog
		export GOCACHE="$MI_TMP/gocache" GOPATH="$MI_TMP/gopath" GOFLAGS= \
			GO111MODULE=on GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off GOENV=off
	}
	gow() {
		(
			gohere || exit 1
			mi_x go list -deps -f '{{.ImportPath}}' net/http | cksum
			mi_x go vet . && mi_x go build -o prog . && ./prog <"$MI_TMP/go.in"
		)
	}
	if mi_compare go gow; then
		go_from=$(pwd)
		gohere && live_stdin go "$MI_TMP/go.in" go run .
		cd "$go_from" || exit 99
	fi
fi

# ----------------------------------------------- C extensions --

if ! have /usr/bin/python3 python3; then
	:
elif ! /usr/bin/python3 -c 'import lxml.etree' 2>/dev/null; then
	echo "skip  python3 lxml: not installed (apt-get install python3-lxml)"
else
	cat >"$MI_TMP/ext.py" <<'EOF2'
import sys, json, decimal, sqlite3, zlib, hashlib, lxml.etree as ET
n = int(sys.argv[1])
decimal.getcontext().prec = 50
d = sum(decimal.Decimal(i) / decimal.Decimal(7) for i in range(1, n))
db = sqlite3.connect(":memory:")
db.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)")
db.executemany("INSERT INTO t VALUES (?, ?)", ((i, "x" * (i % 60)) for i in range(n)))
rows = db.execute("SELECT count(*), sum(length(b)) FROM t WHERE a % 3 = 0").fetchone()
doc = json.dumps({str(i): [i, str(i) * 3] for i in range(n)})
back = json.loads(doc)
z = zlib.compress(doc.encode(), 6)
root = ET.Element("root")
for i in range(n // 10):
    ET.SubElement(root, "item", id=str(i)).text = "v" * (i % 30)
x = ET.tostring(root)
parsed = ET.fromstring(x)
print(d, rows, len(back), len(z), hashlib.sha256(z).hexdigest()[:16], len(x),
      len(parsed.findall("item")))
EOF2
	pyx() { mi_x /usr/bin/python3 "$MI_TMP/ext.py" "$(scale 20000 200000)"; }
	check "python3 C extensions" pyx
fi

if have perl perl; then
	cat >"$MI_TMP/xs.pl" <<'EOF2'
use strict; use warnings;
use List::Util qw(sum max);
use Digest::MD5 qw(md5_hex);
use Digest::SHA qw(sha256_hex);
use Storable qw(freeze thaw dclone);
use Encode qw(encode decode);
use POSIX qw(floor);
use Data::Dumper;
my $n = shift;
my %h = map { ("k$_" => [ $_, "v" x ($_ % 40) ]) } 1 .. $n;
my $frozen = freeze(\%h);
my $copy = dclone(thaw($frozen));
my $s = sum(map { $_->[0] } values %$copy);
my $u = decode("UTF-8", encode("UTF-8", join("", map { chr(0x100 + $_ % 500) } 1 .. $n)));
$Data::Dumper::Sortkeys = 1;
my $dump = Dumper({ map { ("k$_" => $copy->{"k$_"}) } 1 .. 200 });
print join(" ", $s, max(map { length $_->[1] } values %$copy), scalar(keys %$copy),
	length($u), md5_hex($dump), substr(sha256_hex($dump), 0, 16), floor($n / 7)), "\n";
EOF2
	plx() { mi_x perl "$MI_TMP/xs.pl" "$(scale 30000 300000)"; }
	check "perl XS modules" plx
fi

if have ruby ruby; then
	cat >"$MI_TMP/ext.rb" <<'EOF2'
require 'json'; require 'zlib'; require 'digest'; require 'stringio'; require 'strscan'
n = ARGV[0].to_i
h = {}; n.times { |i| h["k#{i}"] = [i, "v" * (i % 40)] }
j = JSON.generate(h); back = JSON.parse(j)
z = Zlib::Deflate.deflate(j); io = StringIO.new; io.write(Zlib::Inflate.inflate(z))
ss = StringScanner.new(io.string); words = 0; words += 1 while ss.scan_until(/"k\d+"/)
msg = 0
begin
  raise ArgumentError, "x" * 100 if back.size > 0
rescue ArgumentError => e
  msg = e.message.size
end
puts [back.size, words, z.bytesize, Digest::SHA256.hexdigest(j)[0, 16],
      Digest::MD5.hexdigest(z)[0, 8], msg].join(" ")
EOF2
	rbx() { mi_x ruby "$MI_TMP/ext.rb" "$(scale 30000 300000)"; }
	check "ruby C extensions" rbx
fi

# ------------------------------------------------- C++ exceptions --

cxx() { mi_x "$MI_TARGETS/cxx_throw" "$(scale 2000 20000)"; }
check "cxx_throw (C++ exceptions)" cxx

# ---------------------------------------- glibc's tuning calls --

# malloc_tune prints only what any allocator under it must keep; the
# figures of mallinfo2 and malloc_stats go to stderr (not compared).
tune() { mi_x "$MI_TARGETS/malloc_tune" "$(scale 20000 200000)"; }
check "malloc_tune (mallopt, malloc_trim, mallinfo2, malloc_info)" tune

# e2fsck -tt prints mallinfo2's figures and times after each pass: those
# numbers are the allocator's and the clock's (meminst(7), COMPATIBILITY),
# so they are cut; the rest must be identical.
if have mke2fs e2fsprogs && have e2fsck e2fsprogs; then
	mke2fs -q -F -t ext4 -b 1024 -d "$tree" "$MI_TMP/ext4.img" "$(scale 8M 64M)" >/dev/null 2>&1 ||
		exit 99
	fsck() {
		mi_x e2fsck -fn -tt "$MI_TMP/ext4.img" >"$MI_TMP/fsck.out" 2>&1
		echo "exit $?"
		sed -E 's/(Memory used|I\/O read):.*/\1/' "$MI_TMP/fsck.out"
	}
	check "e2fsck (mallinfo2)" fsck
fi

mi_finish
