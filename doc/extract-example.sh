#!/bin/sh
# extract-example.sh — print the C program of a man page's "Program source"
# subsection as plain C, so the build can compile the very text the page
# shows (doc/Makefile.inc builds it; doc/man-check.sh runs it).
#   $1: the man page
# Only the escapes the pages use in code are undone: \- \(aq \(dq \& and \e
# (last, so that an escaped backslash never starts another escape).
set -eu
awk '/^\.SS Program source/ { in_sub = 1; next }
     in_sub && /^\.EX/ { in_code = 1; next }
     in_code && /^\.EE/ { exit }
     in_code' "$1" |
	sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\&//g' \
	    -e 's/\\e/\\/g'
