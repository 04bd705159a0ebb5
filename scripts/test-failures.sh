#!/bin/sh
# Print, from Automake's test-suite.log, the lines that say why each failed
# test failed (its "FAIL  …" verdicts and the lines that follow them), at
# most 40 lines a test, so that a CI log that keeps only its end still
# tells why.
set -eu
log=${1:-test-suite.log}
[ -f "$log" ] || exit 0
awk '
/^(FAIL|ERROR|XPASS): / { name = $2; n = 0; print ""; print "==== " $0; next }
name != "" && /^(FAIL|not ok|ERROR)/ && n < 40 { print "  " $0; n++; show = 6; next }
name != "" && show > 0 && n < 40 { print "  " $0; n++; show--; next }
' "$log"
