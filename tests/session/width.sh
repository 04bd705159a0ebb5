# width.sh — text output takes the terminal's width ($COLUMNS here, as a
# terminal would give it) and is never cut without one: `inspect top` fits
# its widest name column (cut in the middle, '…'), status --types its
# location column beside the names (the maxima since the last read and the
# rarer events left out for it at 100 columns), and narrower than its
# figures leaves columns out from the right with a note (no line of any
# command wider, headings and notes broken at spaces), `inspect analyse` cuts
# names with '~' at --cols or
# $COLUMNS, and to a file prints a long name whole on its own line with its
# figures aligned on the next.
. "$top_srcdir/tests/integration/lib.sh"
command -v cc >/dev/null 2>&1 || { echo "skip  width: no C compiler"; exit 77; }
INSPECT=$top_builddir/inspect/inspect
cd "$MI_TMP" || exit 99

long=a_function_with_a_rather_long_name_that_does_not_fit_in_the_name_column
cat >w.c <<EOC
#include <stdlib.h>
void *${long}_of_analyse(int i) { return malloc(64 + i); }
int main(void)
{
	for (int i = 0; i < 100; i++)
		free(${long}_of_analyse(i));
	void *keep = ${long}_of_analyse(5000);
	(void)keep;
	return 0;
}
EOC
why=
cc -g -O0 -finstrument-functions w.c -o w 2>err || mi_why_add "cc failed"
env LD_PRELOAD="$MEMINST_LIB" MEMINST=mim,snapshot=w.db,trace=wall,trace_file=w.trace ./w 2>>err ||
	mi_why_add "the program failed"

# top --by site: the site's name is wider than 70 columns
COLUMNS=70 "$INSPECT" top --by site w.db >narrow 2>>err || mi_why_add "top exited $?"
"$INSPECT" top --by site w.db >wide 2>>err
over=$(python3 -c 'import sys
print(next((l.rstrip("\n") for l in sys.stdin if len(l.rstrip("\n")) > 70), ""))' <narrow)
[ -z "$over" ] || mi_why_add "a line of top wider than COLUMNS=70: $over"
# narrower than its figures: columns left out from the right, said in a
# note; the heading and the notes broken at spaces; no line wider
for cmd in "top --by site" "top" "descr" "holes" "status --types" "sum"; do
	COLUMNS=40 "$INSPECT" $cmd w.db >n40 2>>err || mi_why_add "$cmd exited $?"
	over=$(python3 -c 'import sys
print(next((l.rstrip("\n") for l in sys.stdin if len(l.rstrip("\n")) > 40), ""))' <n40)
	[ -z "$over" ] || mi_why_add "a line of $cmd wider than COLUMNS=40: $over"
done
# status --types: its location column fits beside the cut names
COLUMNS=100 "$INSPECT" status --types w.db >n100 2>>err || mi_why_add "status --types exited $?"
over=$(python3 -c 'import sys
print(next((l.rstrip("\n") for l in sys.stdin if len(l.rstrip("\n")) > 100), ""))' <n100)
[ -z "$over" ] || mi_why_add "a line of status --types wider than COLUMNS=100: $over"
# the counters are there; the maxima since the last read and the rarer
# events are what is left out for the location, and said
grep -q ' calls  *allocated  *location$' n100 && grep -q "….*w\.c:[0-9]*\$" n100 ||
	mi_why_add "status --types at 100 columns: no location column beside a cut name"
grep -q "^(left out at 100 columns: max-since, max-since, frees, temporary, reallocs;" n100 ||
	mi_why_add "status --types at 100 columns: not the spare columns left out: $(grep -A1 '^(left' n100)"
COLUMNS=40 "$INSPECT" top --by site w.db >n40 2>>err
grep -q "^(left out at 40 columns: .*location" n40 || mi_why_add "top at 40 columns: no note of the columns left out"
grep -q '…' narrow || mi_why_add "top cut nothing at 70 columns"
grep -q "${long}_of_analyse" wide || mi_why_add "top to a file cut the name"
grep -q '…' wide && mi_why_add "top to a file cut something"

# analyse: cut at COLUMNS=90; whole on its own line to a file
COLUMNS=90 "$INSPECT" analyse w.trace >narrow 2>>err || mi_why_add "analyse exited $?"
line=$(grep "a_function_with" narrow | head -n 1)
[ "${#line}" -le 90 ] || mi_why_add "analyse line of ${#line} columns at COLUMNS=90"
case $line in *'~'*[0-9]) ;; *) mi_why_add "analyse at 90 columns: '$line' is not cut with '~' before its figures" ;; esac
"$INSPECT" analyse w.trace >wide 2>>err
awk -v n="${long}_of_analyse" '
	index($0, n) { named = NR; if ($0 ~ / [0-9]+ +[0-9.]+ +[0-9.]+$/) whole_line = 1 }
	NR == named + 1 && named { if ($0 ~ /^ +[0-9]+ +[0-9.]+ +[0-9.]+$/) figures = 1 }
	END { exit !(named && figures && !whole_line) }' wide ||
	mi_why_add "analyse to a file: the long name is not whole on its own line with its figures under it"
mi_verdict "text width: the terminal's when there is one, nothing cut without" "$why" wide "analyse to a file" err stderr
mi_finish
