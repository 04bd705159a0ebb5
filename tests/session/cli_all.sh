# cli_all.sh — one command line for every command of inspect.  Each command
# `inspect --help` lists is run with each option its own --help lists (made
# from its option table, reader/rd_args.c) on a traced, a sampled and a
# snapshot-only session of tests/session/known; an option of a --help that
# no case below runs fails the test, so a new option needs a case.  For
# every command: --help prints its usage on stdout and exits 0; an unknown
# option, a misspelt one, an option without its value and a bad value are
# each one line on stderr, "inspect: CMD: …" with the --help hint, and exit
# status 2; --json is one JSON document, --csv parses as CSV and --table
# picks one table wherever --help offers them.  The launcher, meminst, is
# held to the same at the end: its --help, every option of it, its
# mistakes, and its options ending at the program.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3

# ------------------------------------------------------------ sessions --
why=
"$LAUNCH" -q --mim --trace --interval=20ms -o t.db -- "$KNOWN" >out 2>err || mi_why_add "traced: exit $?"
"$LAUNCH" -q --mim --sample=1000 --alloc-sample=64k -o s.db -- "$KNOWN" >out 2>>err ||
	mi_why_add "sampled: exit $?"
"$LAUNCH" -q --mim --no-time --interval=20ms -o m.db -- "$KNOWN" >out 2>>err || mi_why_add "snapshots: exit $?"
# what the cases refer to: the program's pid, the first and last map
for db in t s m; do
	"$INSPECT" list --json $db.db 2>>err | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)["snapshots"]
maps = [x["id"] for x in s if x["content"] == "map"]
print(s[0]["pid"], maps[0], maps[-1])' >$db.facts 2>>err || mi_why_add "$db.db: no map snapshot"
done
mi_verdict "sessions: traced (t.db), sampled (s.db), snapshots only (m.db)" "$why" err stderr
[ "$why" ] && mi_finish

# The commands, and the options of each, as their --help gives them.
cmds=$("$INSPECT" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
options() { # CMD: "--name VALUE" per line (VALUE empty for a flag)
	"$INSPECT" "$1" --help 2>/dev/null |
		sed -n 's/^ \{1,\}\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\)\( \([^ ]*\)\)\{0,1\}.*/\2 \4/p' |
		grep -v '^--help'
}

# ---------------------------------------------------------------- help --
why=
n=0
for c in $cmds; do
	n=$((n + 1))
	"$INSPECT" "$c" --help >help 2>herr
	rc=$?
	[ $rc -eq 0 ] || mi_why_add "$c --help: exit $rc"
	[ -s herr ] && mi_why_add "$c --help wrote to stderr: $(head -n 1 herr)"
	head -n 1 help | grep -q "^Usage: inspect $c " || mi_why_add "$c --help: no usage line"
	grep -q '^Options:$' help || mi_why_add "$c --help: no Options: heading"
	grep -q -- '-h, --help' help || mi_why_add "$c --help: --help not listed"
	"$INSPECT" "$c" -h >help2 2>&1
	cmp -s help help2 || mi_why_add "$c -h differs from --help"
	wide=$(/usr/bin/python3 -c 'import sys
print(next((l for l in open(sys.argv[1], encoding="utf-8").read().splitlines() if len(l) > 80), ""))' help)
	[ -z "$wide" ] || mi_why_add "$c --help: a line wider than 80 columns: $wide"
done
[ $n -ge 20 ] || mi_why_add "only $n commands in inspect --help"
mi_verdict "--help of each of the $n commands: usage, options, 80 columns, exit 0" "$why"

# --------------------------------------------------------- every option --
# One case per line: SESSIONS EXIT COMMAND ARGS...  @DB@ is the session's
# file, @PID@ its program's pid, @MAP@ its last map, @MAP0@ its first.
cases='tsm 0 list --snapshot 1 @DB@
tsm 0 holes --min 4K --all --snapshot @MAP0@ @DB@
tsm 0 holes --limit 3 @DB@
tsm 0 limits --snapshot @MAP0@ --type 1 --class 1 --thread 1 --allocator 0 @DB@
tsm 0 sum --snapshot @MAP0@ --type 1 --class known --thread 1 --allocator malloc @DB@
tsm 0 descr --limit 5 --snapshot @MAP0@ --type 1 --class 1 --thread 1 --allocator 0 --no-symbols @DB@
tsm 0 descr --limit 5 --full-names @DB@
tsm 0 top --by site --limit 3 --snapshot @MAP0@ --type 1 --class 1 --thread 1 --allocator 0 @DB@
tsm 0 top --live-at-exit --pid @PID@ --no-symbols --stacks 2 @DB@
tsm 0 top --by class --full-names @DB@
tsm 0 leaks --snapshot @MAP@ --all --limit 2 --suppress main --suppressions /dev/null --no-default-suppressions --no-symbols @DB@
tsm 0 leaks --full-names @DB@
tsm 4 leaks --pid 999999999
tsm 1 leaks --from 1 --to @MAP@ --all --limit 2 @DB@
tsm 0 top --by temporary --limit 3 --pid @PID@ --no-symbols @DB@
tsm 0 sizes --by site --limit 2 --snapshot @MAP@ --no-symbols @DB@
tsm 0 sizes --pid @PID@ --full-names @DB@
tsm 0 diff --from @MAP0@ --to @MAP@ --limit 2 --type 1 --class 1 --thread 1 --allocator 0 --no-symbols @DB@
tsm 0 diff --full-names --stacks none @DB@:@MAP0@ @DB@:@MAP@
ts 0 diff --by calls --limit 3 --stacks 1 --no-symbols m.db @DB@
tsm 2 diff --by leaked @DB@
tsm 0 status --total --allocators --classes --types --threads --snapshot 1 --no-symbols @DB@
tsm 0 status --full-names @DB@
tsm 4 status --pid 999999999
tsm 0 timeline --pid @PID@ --limit 3 @DB@
tsm 0 timeline --by type --limit 2 --no-symbols @DB@
tsm 0 timeline --by thread --full-names @DB@
tsm 0 rss --snapshot @MAP@ --limit 3 --no-symbols @DB@
tsm 0 report --pid @PID@ --image 0 --limit 3 --no-symbols @DB@
tsm 0 report --full-names --stacks 1 @DB@
tsm 0 types --snapshot @MAP@ --no-symbols @DB@
tsm 0 types --full-names @DB@
tsm 0 type --snapshot @MAP@ --no-symbols @DB@ 1
tsm 0 type --full-names @DB@ 1
tsm 0 class --snapshot @MAP@ @DB@ 1
tsm 0 allocator --snapshot @MAP@ @DB@ 0
tsm 0 header-size --snapshot @MAP@ @DB@
tsm 4 snapshot --pid 999999999 --output new.db
tsm 4 snapshot --pid 999999999 -o new.db
tsm 4 start --pid 999999999 --mis
tsm 4 start --pid 999999999 --mim
tsm 4 start --pid 999999999 --sample 100
tsm 4 start --pid 999999999 --site-depth user
tsm 4 stop --pid 999999999
tsm 4 serve --pid 999999999 --listen 127.0.0.1:0 --no-symbols
tsm 4 serve --pid 999999999 --listen 0.0.0.0:0 --allow-remote
tsm 0 sql @DB@ SELECT count(*) FROM snapshot
tsm 0 sql --time-limit 5s --memory-limit 64M @DB@ SELECT count(*) FROM snapshot
ts 0 profile --output prof.db --force --pid @PID@ --image 0 --no-symbols @DB@
ts 0 profile --dump dump.txt --append --full-names @DB@
ts 0 profile @DB@ --dump
t 0 analyse --style fprof --output a.txt --append --pid @PID@ --image 0 --no-symbols @DB@
t 0 analyse --dest a.txt --force --full-names --sort own --no-callers --totals --no-details --cols 100 @DB@
t 0 analyse --json --sort acc @DB@
t 0 analyse --csv @DB@
t 0 analyse --no-compensate --json @DB@
t 0 analyse --focus main @DB@
t 0 profile --no-compensate --output prof2.db --force @DB@
t 0 export --format callgrind --no-compensate --output cg2.out --force @DB@
s 0 analyse --style flat --top 5 --cumulative --hide main --time percent --metric bytes --thread 1 @DB@
s 0 analyse --style tree --cutoff 0.5 --time samples --limit 3 @DB@
s 0 analyse --style callers --metric count @DB@
s 0 analyse --focus main --cols 90 @DB@
s 0 analyse --style anomalies @DB@ @DB@
ts 0 export --format callgrind --output cg.out --force --pid @PID@ --image 0 --no-symbols @DB@
ts 0 export --format folded --metric bytes --full-names @DB@
t 0 export --format chrome --min-duration 0.5 --max-size 10M -o chrome.json @DB@
tsm 0 export --format pprof --snapshot @MAP@ -f -o mem.pb.gz @DB@
tsm 0 export --format folded --metric allocated --pid @PID@ --no-symbols @DB@
tsm 0 export --format pprof --metric calls --snapshot @MAP@ -f -o ev.pb.gz @DB@
ts 0 html --output r.html --force --pid @PID@ --image 0 --no-symbols --full-names @DB@
m 0 html -o m.html @DB@'

why=
: >err
echo "$cases" | while read -r sessions want args; do
	for db in t s m; do
		case $sessions in *$db*) ;; *) continue ;; esac
		read -r pid map0 map <$db.facts
		line=$(echo "$args" | sed "s/@DB@/$db.db/g; s/@PID@/$pid/g; s/@MAP0@/$map0/g; s/@MAP@/$map/g")
		case $line in
		sql\ --*) # options, then the database and the query as one argument
			opts=${line%% $db.db *}
			query=${line#* $db.db }
			"$INSPECT" $opts $db.db "$query" >out 2>cerr
			;;
		sql*) # the query is one argument
			query=${line#* * }
			"$INSPECT" sql $db.db "$query" >out 2>cerr
			;;
		*) "$INSPECT" $line >out 2>cerr ;; # word splitting intended
		esac
		rc=$?
		[ $rc -eq "$want" ] || echo "inspect $line: exit $rc, not $want: $(head -c 300 cerr)" >>failed
		cat cerr >>err
	done
done
[ -s failed ] && mi_why_add "$(head -n 4 failed)"
# every option each --help lists has a case
for c in $cmds; do
	options "$c" | while read -r opt value; do
		case $opt in --json | --csv | --table) continue ;; esac # below, for all
		echo "$cases" | grep -q -- "^[tsm]* [0-9] $c .*$opt\( \|$\)" ||
			echo "$c $opt" >>untested
	done
done
[ -s untested ] && mi_why_add "options without a case: $(tr '\n' ',' <untested)"
mi_verdict "each option of each command on the sessions it applies to" "$why" err stderr

# -------------------------------------------------------------- errors --
# one_line WANT-RC PATTERN CMD ARGS...: `inspect CMD ARGS...` exits
# WANT-RC with one line "inspect: CMD: PATTERN (see 'inspect CMD --help')"
# on stderr and nothing on stdout.
one_line() {
	want=$1 pat=$2 c=$3
	shift 2
	"$INSPECT" "$@" >out 2>cerr
	rc=$?
	[ $rc -eq "$want" ] || mi_why_add "inspect $*: exit $rc, not $want"
	[ "$(wc -l <cerr)" -eq 1 ] || mi_why_add "inspect $*: $(wc -l <cerr) lines on stderr"
	grep -q "^inspect: $c: $pat (see 'inspect $c --help')\$" cerr ||
		mi_why_add "inspect $*: '$(head -n 1 cerr)' is not 'inspect: $c: $pat (see …)'"
	[ -s out ] && mi_why_add "inspect $*: wrote to stdout"
	cat cerr >>err
}
why=
: >err
for c in $cmds; do
	one_line 2 "unknown option '--no-such-option'" "$c" --no-such-option t.db
	one_line 2 "unknown option '--hepl' (did you mean '--help'?)" "$c" --hepl t.db
	one_line 2 "unknown option '-Z'" "$c" -Z t.db
	# the first option with a value that can be wrong, and its kind
	bad=$(options "$c" | awk '$2 ~ /^(N|M|PID|SIZE|US|PCT)$/ || ($2 ~ /\|/ && $2 !~ /NAME/) { print $1, $2; exit }')
	if [ -n "$bad" ]; then
		set -- $bad
		case $2 in *'|'*) pat="$1 takes .*, not 'x1'" ;; SIZE) pat="$1 needs a size .*, not 'x1'" ;;
		*) pat="$1 needs a number.*, not 'x1'" ;; esac
		one_line 2 "$pat" "$c" "$1" x1 t.db
		one_line 2 "$pat" "$c" "$1=x1" t.db
		one_line 2 "option '$1' needs a value" "$c" "$1"
	fi
	# a value that looks like an option is a mistake, not a file named "-o"
	case $(options "$c") in *--output*)
		one_line 2 "option '-o' needs a value, not the option '-o'" "$c" -o -o x t.db
		one_line 2 "option '--output' needs a value, not the option '--json'" "$c" --output --json t.db
		# two files: a mistake, not "the last one wins"
		one_line 2 "-o given twice ('a' and 'b'): give one output file" "$c" -o a --output=b t.db ;;
	esac
	one_line 2 ".*" "$c" # nothing to read
	# both output formats: a mistake, not "the last one wins"
	case $(options "$c") in *--csv*) one_line 2 "--json and --csv: give one of them" "$c" --json --csv t.db ;; esac
done
mi_verdict "every command: unknown, misspelt, valueless and bad options, a missing argument: one line, exit 2" "$why" err stderr

# ------------------------------------------------ --json --csv --table --
# The command lines whose result the formats render (snapshot's needs a
# live process: tests/inspect/control.sh).
bases='tsm list @DB@
tsm holes @DB@
tsm limits @DB@
tsm sum @DB@
tsm descr --limit 5 @DB@
tsm top @DB@
tsm sizes @DB@
tsm diff @DB@
tsm status @DB@
tsm timeline @DB@
tsm timeline --by class @DB@
tsm rss @DB@
tsm leaks @DB@
tsm report @DB@
tsm types @DB@
tsm type @DB@ 1
tsm class @DB@ 1
tsm allocator @DB@ 0
tsm header-size @DB@
t analyse @DB@
s analyse --style flat @DB@'
why=
: >err
for c in $cmds; do
	opts=$(options "$c" | cut -d' ' -f1 | grep -x -e --json -e --csv -e --table | tr '\n' ' ')
	[ -z "$opts" ] && continue
	[ "$c" = snapshot ] && continue
	echo "$bases" | grep -q "^[tsm]* $c " || { mi_why_add "$c: no command line for $opts"; continue; }
	echo "$bases" | grep "^[tsm]* $c " | while read -r sessions args; do
		for db in t s m; do
			case $sessions in *$db*) ;; *) continue ;; esac
			line=$(echo "$args" | sed "s/@DB@/$db.db/g")
			for f in $opts; do
				[ $f = --table ] && continue
				"$INSPECT" $line $f >doc 2>>err || { echo "inspect $line $f: exit $?" >>failed; continue; }
				/usr/bin/python3 - $f doc <<'PY' >>failed 2>&1 || echo "inspect $line $f: not valid" >>failed
import csv, json, sys
text = open(sys.argv[2]).read()
if sys.argv[1] == "--json":
    json.loads(text)
else:
    rows = [r for r in csv.reader(text.splitlines()) if r]
    assert len(rows) >= 2, "fewer than two CSV rows"
PY
			done
			case $opts in *--table*) ;; *) continue ;; esac
			key=$("$INSPECT" $line --json 2>>err | /usr/bin/python3 -c '
import json, sys
print(next(k for k, v in json.load(sys.stdin).items() if isinstance(v, (list, dict))))')
			"$INSPECT" $line --table "$key" >doc 2>>err && [ -s doc ] ||
				echo "inspect $line --table $key: exit $? or nothing" >>failed
			"$INSPECT" $line --table no_such_table >doc 2>cerr
			rc=$?
			[ $rc -eq 2 ] && grep -q 'no_such_table' cerr ||
				echo "inspect $line --table no_such_table: exit $rc, $(tail -n 1 cerr)" >>failed
		done
	done
done
[ -s failed ] && mi_why_add "$(head -n 4 failed)"
mi_verdict "--json is JSON, --csv is CSV, --table picks one table, wherever --help offers them" "$why" err stderr

# ------------------------------------------------------------ meminst --
# The launcher's command line is read by the same parser from its own
# table: --help as inspect's, each option of it run, its mistakes worded
# the same, and its options end at the program.
why=
"$LAUNCH" --help >help 2>herr
rc=$?
[ $rc -eq 0 ] || mi_why_add "meminst --help: exit $rc"
[ -s herr ] && mi_why_add "meminst --help wrote to stderr: $(head -n 1 herr)"
head -n 1 help | grep -q "^Usage: meminst " || mi_why_add "meminst --help: no usage line"
grep -q -- '-h, --help' help || mi_why_add "meminst --help: --help not listed"
"$LAUNCH" -h >help2 2>&1
cmp -s help help2 || mi_why_add "meminst -h differs from --help"
awk 'length > 80 { print; exit 1 }' help >wide || mi_why_add "meminst --help: a line wider than 80 columns: $(cat wide)"
mi_verdict "meminst --help: usage, options, 80 columns, exit 0" "$why" herr stderr

# One case per line: EXIT ARGS... (the program follows them); @OUT@ is a
# new session file, @LIB@ the library.
lcases='0 --mis --backend system --interval 50ms --snapshot-at exit+peak --site-depth 2 --site-skip wrap_x -o @OUT@
0 --mim --control --trace=cpu --sample=200 --sample-clock wall --alloc-sample 64k --sample-depth 16 --library @LIB@ -q -o @OUT@
0 --no-memory --trace --trace-sites --output @OUT@ -q
0 --dormant -o @OUT@ -q
0 --no-time --mim --site-depth user -o @OUT@ -q
0 --no-time --mim --snapshot-at exit+rss:2G+cgroup:90% -o @OUT@ -q
0 --no-time --interval auto -o @OUT@ -q
0 --no-time --interval=0 -o @OUT@ -q
0 --mim --leak-check --leak-exit-code 7 --leak-threshold 1G -o @OUT@ -q
0 -fqo @OUT@ --sample
0 --force --quiet -o @OUT@
0 --version
0 -V'
: >failed
: >untested
n=0
echo "$lcases" | while read -r want args; do
	n=$((n + 1))
	line=$(echo "$args" | sed "s|@OUT@|l$n.db|g; s|@LIB@|$MEMINST_LIB|g")
	"$LAUNCH" $line -- "$KNOWN" >out 2>cerr # word splitting intended
	rc=$?
	[ $rc -eq "$want" ] || echo "meminst $line: exit $rc, not $want: $(head -c 300 cerr)" >>failed
	case $line in *-o*) [ -s "l$n.db" ] || echo "meminst $line: no session l$n.db" >>failed ;; esac
	cat cerr >>err
done
"$LAUNCH" --help | sed -n 's/^ \{1,\}\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' |
	grep -v '^--help$' | while read -r opt; do
	echo "$lcases" | grep -q -- "$opt\([ =]\|$\)" || echo "$opt" >>untested
done
[ -s untested ] && mi_why_add "meminst options without a case: $(tr '\n' ',' <untested)"
[ -s failed ] && mi_why_add "$(head -n 4 failed)"
mi_verdict "meminst: each option of its --help, on a run of the known program" "$why" err stderr

# launcher_error WANT-PATTERN ARGS...: `meminst ARGS... -- touch ran`
# exits 2 with one line "meminst: PATTERN (see 'meminst --help')", nothing
# on stdout, and the program not run.
launcher_error() {
	pat=$1
	shift
	rm -f ran
	"$LAUNCH" "$@" -- touch ran >out 2>cerr
	rc=$?
	[ $rc -eq 2 ] || mi_why_add "meminst $*: exit $rc, not 2"
	[ "$(wc -l <cerr)" -eq 1 ] || mi_why_add "meminst $*: $(wc -l <cerr) lines on stderr"
	grep -q "^meminst: $pat (see 'meminst --help')\$" cerr ||
		mi_why_add "meminst $*: '$(head -n 1 cerr)' is not 'meminst: $pat (see …)'"
	[ -s out ] && mi_why_add "meminst $*: wrote to stdout"
	[ -e ran ] && mi_why_add "meminst $*: the program ran"
	cat cerr >>err
}
why=
: >err
launcher_error "unknown option '--no-such-option'" --no-such-option
launcher_error "unknown option '--hepl' (did you mean '--help'?)" --hepl
launcher_error "unknown option '--sampel' (did you mean '--sample'?)" --sampel
launcher_error "unknown option '-Z'" -Z
launcher_error "--trace-sites needs --trace (it records the call sites of traced calls)" --trace-sites
launcher_error "option '--control' takes no value" --control=on
launcher_error "--leak-check and --leak-exit-code need --mim (the scan reads the map of live blocks)" --leak-check
launcher_error "--leak-threshold needs --leak-exit-code" --mim --leak-threshold 1K
launcher_error "--interval needs a duration .*, not 'x1'" --interval x1
launcher_error "--interval needs a duration .*, not 'x1'" --interval=x1
launcher_error "--sample-depth needs a number from 1 to 1024, not '0'" --sample-depth 0
launcher_error "--alloc-sample needs a size .*, not '0'" --alloc-sample=0
launcher_error "--backend takes system or jemalloc, not 'x1'" --backend x1
launcher_error "--trace takes wall or cpu, not 'x1'" --trace=x1
launcher_error "--snapshot-at takes .*, not 'x1'" --snapshot-at x1
launcher_error "--snapshot-at takes .*, not 'cgroup:90'" --snapshot-at cgroup:90
launcher_error "--snapshot-at takes .*, not 'rss:101%'" --snapshot-at rss:101%
launcher_error "--snapshot-at takes .*, not 'rss:1G+rss:2G'" --snapshot-at rss:1G+rss:2G
launcher_error "option '-o' needs a value, not the option '-o'" -o -o x
launcher_error "-o given twice ('a.db' and 'b.db'): give one output file" -o a.db -o b.db
launcher_error "--mis, --mim, --dormant and --no-memory: give one of them" --mis --mim
# an optional value given as the next word would run a program named 1000
launcher_error "option '--sample' takes its value with '=': --sample=1000 (or '--sample --' before a program named '1000')" --sample 1000
launcher_error "option '--sample' takes its value with '=': --sample=0 .*" --sample 0
launcher_error "option '--trace' takes its value with '=': --trace=cpu .*" --trace cpu
"$LAUNCH" --interval >out 2>cerr
[ $? -eq 2 ] && grep -qx "meminst: option '--interval' needs a value (see 'meminst --help')" cerr ||
	mi_why_add "meminst --interval: $(head -n 1 cerr)"
"$LAUNCH" -q >out 2>cerr
[ $? -eq 2 ] && grep -qx "meminst: no program to run (see 'meminst --help')" cerr ||
	mi_why_add "meminst -q: $(head -n 1 cerr)"
mi_verdict "meminst: unknown, misspelt, valueless and bad options, no program: one line, exit 2" "$why" err stderr

# Options end at the program (or at "--"): the program's own options,
# even the launcher's names, are its arguments.
why=
rm -f own.db
"$LAUNCH" -q --no-time -o prog.db /bin/sh -c 'echo "$@"' sh --mim -o own.db >out 2>err
rc=$?
[ $rc -eq 0 ] || mi_why_add "exit $rc"
[ "$(cat out)" = "--mim -o own.db" ] || mi_why_add "the program got '$(cat out)', not '--mim -o own.db'"
[ -e own.db ] && mi_why_add "the program's -o was taken by meminst"
[ -s prog.db ] || mi_why_add "no session prog.db"
"$LAUNCH" -q --no-time -o dd.db -- /bin/sh -c 'echo "$@"' sh -- -q >out 2>>err
[ "$(cat out)" = "-- -q" ] || mi_why_add "after --, the program got '$(cat out)', not '-- -q'"
mi_verdict "meminst: its options end at the program or at --" "$why" err stderr
mi_finish
