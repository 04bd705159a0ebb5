#!/bin/sh
# man.sh — the manual pages of inspect render cleanly and keep up with the
# program and the schema:
#   1. groff (with tbl) and man, when installed, format doc/inspect.1 and
#      doc/meminst-snapshot.5 with every warning on and print nothing on
#      stderr;
#   2. every command of `inspect --help` and every long option of each
#      `inspect COMMAND --help` is in inspect(1);
#   3. every table and column of the schema (made from the header by
#      mkfixture, listed with python3's sqlite3) is in meminst-snapshot(5).
. "$top_srcdir/tests/inspect/lib.sh"

page1=$top_srcdir/doc/inspect.1
page5=$top_srcdir/doc/meminst-snapshot.5

# ---- 1. rendering --------------------------------------------------------------
for page in "$page1" "$page5"; do
	name=$(basename "$page")
	if command -v groff >/dev/null 2>&1; then
		if groff -t -man -ww -z "$page" >"$IT_TMP/err" 2>&1 && [ ! -s "$IT_TMP/err" ]; then
			it_ok "groff -t -man -ww $name"
		else
			it_fail "groff -t -man -ww $name" "$IT_TMP/err"
		fi
	else
		echo "skip  groff -man -ww $name: groff not installed"
	fi
	if command -v man >/dev/null 2>&1; then
		if MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$IT_TMP/err" && [ ! -s "$IT_TMP/err" ]; then
			it_ok "man --warnings $name"
		else
			it_fail "man --warnings $name" "$IT_TMP/err"
		fi
	fi
done

# The page's text with the escapes for minus and hyphen undone.
sed -e 's/\\-/-/g' -e 's/\\(em/-/g' "$page1" >"$IT_TMP/page1"
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page5" >"$IT_TMP/page5"

# ---- 2. commands and options -------------------------------------------------
"$IT_INSPECT" --help >"$IT_TMP/help" 2>&1
cmds=$(sed -n 's/^  \([a-z-]*\)  .*/\1/p' "$IT_TMP/help")
[ -n "$cmds" ] || it_fail "no command found in inspect --help" "$IT_TMP/help"
missing=
for c in $cmds; do
	grep -Eq "^\\.(B|BI|TP|BR) \"?$c( |\"|\$)" "$IT_TMP/page1" || missing="$missing $c"
	"$IT_INSPECT" "$c" --help >>"$IT_TMP/opthelp" 2>&1
done
if [ -z "$missing" ]; then
	it_ok "inspect.1 describes every command ($(echo $cmds | wc -w))"
else
	echo "not described:$missing" >"$IT_TMP/why"
	it_fail "inspect.1 describes every command" "$IT_TMP/why"
fi
opts=$(grep -o -- '--[a-z][a-z-]*' "$IT_TMP/opthelp" | sort -u)
missing=
for opt in $opts; do
	grep -q -- "$opt" "$IT_TMP/page1" || missing="$missing $opt"
done
if [ -z "$missing" ]; then
	it_ok "inspect.1 names every option of the commands' --help ($(echo $opts | wc -w))"
else
	echo "not named:$missing" >"$IT_TMP/why"
	it_fail "inspect.1 names every option" "$IT_TMP/why"
fi

# ---- 3. the schema -------------------------------------------------------------
if it_have_python && python3 -c 'import sqlite3' 2>/dev/null; then
	"$IT_MKFIXTURE" "$IT_TMP/schema.db" || exit 99
	python3 - "$IT_TMP/schema.db" "$IT_TMP/page5" >"$IT_TMP/why" 2>&1 <<'PY'
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
text = open(sys.argv[2], encoding='utf-8').read()
missing = []
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
for t in tables:
    if not re.search(r'\.SS .*\b%s\b' % t, text):
        missing.append('table ' + t)
    for col in db.execute("SELECT name FROM pragma_table_info(?)", (t,)):
        if not re.search(r'\b%s\b' % col[0], text):
            missing.append('column %s.%s' % (t, col[0]))
if not tables or missing:
    sys.exit('not in meminst-snapshot.5: ' + ', '.join(missing or ['any table']))
print(len(tables))
PY
	if [ $? -eq 0 ]; then
		it_ok "meminst-snapshot.5 has every table ($(cat "$IT_TMP/why")) and column of the schema"
	else
		it_fail "meminst-snapshot.5 and the schema" "$IT_TMP/why"
	fi
else
	echo "skip  the schema check: python3 with sqlite3 not available"
fi
it_finish
