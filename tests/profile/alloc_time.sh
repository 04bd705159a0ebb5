#!/bin/sh
# alloc_time.sh — <alloc> is the allocator's time (issue 28 items 2 and 6).
#
# A word counter times its own allocator calls (the TSC around each malloc
# and free, less the same measure around nothing; a call of more than half
# a millisecond was switched out and is left out), run without meminst: the
# allocator's time per call.  Traced (trace=cpu, so that the load's
# pre-emption does not count) with mis and with mim, the compensated <alloc>
# per call must be near it: meminst measures the backend's time inside each
# call and puts the rest (its bookkeeping, the tracer's stamps) in
# <meminst>, kept out of the program's time; --no-compensate leaves it in
# <alloc>, several times the allocator's time.  Then the callgrind, pprof
# and html exports put a loop's allocated bytes and its <alloc> call on the
# malloc line (pprof decoded by go tool pprof when there is one).
. "$top_srcdir/tests/profile/lib.sh"

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
case $(uname -m) in x86_64) ;; *) echo "not x86-64 (the TSC): skipped"; exit 77 ;; esac
cat >"$IT_TMP/words.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t ticks, calls, skipped;
static void note(uint64_t d)
{
	calls++;
	if (d < 1500000) /* ~0.5 ms: switched out, not the allocator's */
		ticks += d;
	else
		skipped++;
}
static void *timed_malloc(size_t n)
{
	uint64_t t = __rdtsc();
	void *p = malloc(n);
	note(__rdtsc() - t);
	return p;
}
static void timed_free(void *p)
{
	uint64_t t = __rdtsc();
	free(p);
	note(__rdtsc() - t);
}

struct entry { struct entry *next; char *word; long count; };
#define NB 65536
static struct entry *table[NB];

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h & (NB - 1);
}

static void count_word(const char *w, size_t len)
{
	char *copy = timed_malloc(len + 1);
	memcpy(copy, w, len + 1);
	unsigned h = hash(copy);
	for (struct entry *e = table[h]; e; e = e->next)
		if (!strcmp(e->word, copy)) {
			e->count++;
			timed_free(copy);
			return;
		}
	struct entry *e = timed_malloc(sizeof *e);
	e->word = copy, e->count = 1, e->next = table[h], table[h] = e;
}

static void free_table(void)
{
	for (unsigned i = 0; i < NB; i++)
		for (struct entry *e = table[i], *n; e; e = n) {
			n = e->next;
			timed_free(e->word);
			timed_free(e);
		}
}

static double tsc_ns(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t t0 = __rdtsc(), t1;
	double dt;
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
		t1 = __rdtsc();
		dt = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	} while (dt < 2e7);
	return dt / (double)(t1 - t0);
}

int main(int argc, char **argv)
{
	long words = argc > 1 ? atol(argv[1]) : 600000;
	unsigned seed = 1;
	char w[32];
	for (long i = 0; i < words; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned v = (seed >> 8) % 50000u, len = 3 + v % 9;
		for (unsigned k = 0; k < len; k++)
			w[k] = 'a' + (v >> k) % 26;
		w[len] = 0;
		count_word(w, len);
	}
	free_table();
	double empty = 0;
	for (int i = 0; i < 1000000; i++) { /* the measure's own share */
		uint64_t t = __rdtsc(), d = __rdtsc() - t;
		empty += d < 20000 ? d : empty / (i + 1);
	}
	printf("%llu %.3f\n", (unsigned long long)calls,
	       ((double)ticks / (double)(calls - skipped) - empty / 1e6) * tsc_ns());
	return 0;
}
C
"$CC" -g -O1 -fno-inline -finstrument-functions -o "$IT_DB/words" "$IT_TMP/words.c" || exit 99

# <alloc>'s own ns a call in a JSON analysis
PER_CALL="round(fn(j, 0, '<alloc>')['own_ms'] * 1e6 / fn(j, 0, '<alloc>')['calls'], 2)"
for mode in mis mim; do
	# a loaded machine (CI's make -j2 beside other jobs) slows a run now
	# and then, and a burst of the neighbours' load can outlast a run or
	# two: up to five runs a second more apart each time, the first within
	# the bounds counts.  The allocator's own time is taken before and
	# after the traced run, the larger of the two: the traced run met the
	# load of both (one CI's fast bare run beside a slowed traced one
	# failed all three runs of the earlier rule)
	for attempt in 1 2 3 4 5; do
		[ "$attempt" = 1 ] || sleep $((attempt - 1))
		before=$("$IT_DB/words" | awk '{ print $2 }')
		pt_trace_both "$mode,trace=cpu" w.trace words
		after=$("$IT_DB/words" | awk '{ print $2 }')
		bare=$(python3 -c "print(max($before, $after))")
		comp=$(pt_json "$IT_TMP/comp.json" "$PER_CALL")
		raw=$(pt_json "$IT_TMP/raw.json" "$PER_CALL")
		echo "  | $mode run $attempt: allocator ns a call: bare $before/$after, <alloc> compensated $comp, raw $raw"
		ok=$(python3 -c "print($comp <= 2.5 * max($bare, 3) and $raw >= 2 * $comp)")
		[ "$ok" = True ] && break
	done
	pt_expect "alloc_time $mode: compensated <alloc> within 2.5x the allocator's own time, raw at least twice it" \
		"$ok" "True"
	pt_expect "alloc_time $mode: the JSON says meminst's share is apart, measured in nearly every call" \
		"$(pt_json "$IT_TMP/comp.json" "(j['tracer_cost']['meminst_alloc_apart'], j['tracer_cost']['meminst_alloc_calls'] > 0.99 * fn(j, 0, '<alloc>')['calls'], j['tracer_cost']['meminst_alloc_ms'] > 0)")" \
		"(True, True, True)"
	pt_expect "alloc_time $mode: <meminst> is kept out, called from where <alloc> was" \
		"$(pt_json "$IT_TMP/comp.json" "sorted(c['name'] for k in j['threads'][0]['kept_out'] if k['name'] == '<meminst>' for c in k['callers'] if c['calls'] > 1000)")" \
		"['timed_free', 'timed_malloc']"
	pt_expect "alloc_time $mode: --no-compensate has no <meminst> and says so" \
		"$(pt_json "$IT_TMP/raw.json" "(any(k['name'] == '<meminst>' for k in j['threads'][0]['kept_out']), j['tracer_cost']['meminst_alloc_apart'])")" \
		"(False, False)"
	pt_expect "alloc_time $mode: count_word's ACC loses meminst's share too" \
		"$(pt_json "$IT_TMP/comp.json" "fn(j, 0, 'count_word')['acc_ms'] < fn(json.load(open('$IT_TMP/raw.json')), 0, 'count_word')['acc_ms']")" \
		"True"
done
it_run analyse w.trace
pt_expect "alloc_time: the text says what was taken off <alloc>" \
	"$(grep -c "taken off <alloc> and its callers' ACC into <meminst>" "$IT_TMP/out")" "1"

# item 6: a loop's bytes and its <alloc> call on the malloc line
cat >"$IT_TMP/lines.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#define N 20000
static void *keep[N];
void fill(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++)
			keep[i] = malloc(64 + i % 64); /* the malloc line */
		for (int i = 0; i < N; i++)
			free(keep[i]);
	}
}
int main(int argc, char **argv)
{
	fill(argc > 1 ? atoi(argv[1]) : 10);
	puts("done");
	return 0;
}
C
"$CC" -g -O1 -fno-inline -finstrument-functions -o "$IT_DB/lines" "$IT_TMP/lines.c" || exit 99
(cd "$IT_DB" && MEMINST=mis,trace=cpu,trace_file=l.trace LD_PRELOAD=$MEMINST_LIB ./lines) >"$IT_TMP/prog.out" 2>&1
it_run export --format callgrind -o cg.out l.trace
pt_expect "alloc_time: callgrind export" "$IT_RC" "0"
if command -v callgrind_annotate >/dev/null 2>&1; then
	# (sorted by bytes: the functions annotated are chosen by the sort
	# event, and a loaded machine leaves little time to fill itself)
	callgrind_annotate --auto=yes --show-percs=no --sort=Bytes "$IT_DB/cg.out" >"$IT_TMP/ann" 2>&1
	# 10 rounds of 20000 blocks of 64..127 bytes: 19,094,880 bytes
	pt_expect "alloc_time: callgrind_annotate puts the loop's bytes on the malloc line" \
		"$(awk '/the malloc line/ { gsub(",", "", $2); print $2; exit }' "$IT_TMP/ann")" "19094880"
	pt_expect "alloc_time: and the <alloc> calls right under it" \
		"$(awk '/the malloc line/ { getline a; getline b; print (a b ~ /<alloc> \(200,000x\)/) }' "$IT_TMP/ann")" "1"
	pt_expect "alloc_time: fill's first line keeps no bytes" \
		"$(awk '/void fill\(int rounds\)/ { getline; gsub(",", "", $2); print $2; exit }' "$IT_TMP/ann")" "0"
	# (a failure shows what callgrind_annotate said, and the file's head)
	if ! grep -q "the malloc line" "$IT_TMP/ann"; then
		head -n 40 "$IT_TMP/ann" | sed 's/^/  | annotate: /'
		head -n 30 "$IT_DB/cg.out" | sed 's/^/  | cg.out: /'
	fi
else
	echo "  | no callgrind_annotate: its checks skipped"
fi
# the pprof export: the bytes and <alloc>'s time on fill's malloc line
it_run export --format pprof -o l.pb l.trace
pt_expect "alloc_time: pprof export" "$IT_RC" "0"
if command -v go >/dev/null 2>&1; then
	go tool pprof -lines -top -sample_index=alloc_space "$IT_DB/l.pb" >"$IT_TMP/pp" 2>&1
	pt_expect "alloc_time: pprof -lines puts the loop's bytes on the malloc line" \
		"$(awk '$NF ~ /lines\.c:9$/ && $(NF-1) == "fill" { print $1 }' "$IT_TMP/pp")" "18647.34kB"
	go tool pprof -raw "$IT_DB/l.pb" >"$IT_TMP/raw" 2>&1
	pt_expect "alloc_time: pprof's <alloc> samples are called from fill at lines 9 (malloc) and 11 (free)" \
		"$(python3 - "$IT_TMP/raw" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
locs = dict(re.findall(r'^ +(\d+): 0x[0-9a-f]+ M=\d+ (.*?) s=', t, re.M))
found = set()
for m in re.finditer(r'^ +(\d+) +\d+ +\d+: ([\d ]+)$', t, re.M):
    ids = m.group(2).split()
    if int(m.group(1)) > 0 and len(ids) > 1 and locs[ids[0]].startswith('<alloc>') and locs[ids[1]].startswith('fill '):
        found.add(locs[ids[1]].rsplit(':', 1)[1])
print(sorted(found))
PY
)" "['11', '9']"
else
	echo "  | no go: the pprof decoding skipped"
fi
# the html view: a frame "fill at lines.c:9" with the bytes and <alloc> below
it_run html -o l.html l.trace
pt_expect "alloc_time: html" "$IT_RC" "0"
pt_expect "alloc_time: html's flame graphs put the bytes and <alloc> at the malloc line" \
	"$(python3 - "$IT_DB/l.html" <<'PY'
import json, re, sys
raw = open(sys.argv[1], encoding="utf-8").read()
out = []
for key in ("flame-bytes", "flame-time"):
    d = json.loads(re.search(r'<script type="application/json" id="%s">(.*?)</script>' % key, raw, re.S).group(1))
    def paths(node, prefix):
        if node[0] <= -2:
            for c in (node[2] if len(node) > 2 else []):
                yield from paths(c, prefix)
            return
        name = "all" if node[0] < 0 else d["names"][node[0]]
        yield prefix + [name], node[1]
        for c in (node[2] if len(node) > 2 else []):
            yield from paths(c, prefix + [name])
    v = {";".join(k): n for k, n in paths(d["tree"], [])}
    line = "all;main;fill;fill at lines.c:9"
    out.append(v.get(line) if key == "flame-bytes" else v.get(line + ";<alloc>", 0) > 0)
print(out)
PY
)" "[19094880, True]"
it_finish
