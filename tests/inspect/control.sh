#!/bin/sh
# control.sh — the client side of the live-process control channel:
# `inspect snapshot --pid` and `inspect status --pid` against
# tests/inspect/fake_control (a stand-in server on the same abstract
# socket and protocol), the request line they send, and every failure:
# no channel (exit 4 with the documented line), an error answer, a
# garbled answer, no answer within INSPECT_CONTROL_TIMEOUT.
. "$top_srcdir/tests/inspect/lib.sh"

fake=$top_builddir/tests/inspect/fake_control
[ -x "$fake" ] || { echo "error: $fake not built"; exit 99; }
log=$IT_TMP/requests
mkfifo "$IT_TMP/ready" || exit 99
IT_SERVER=

# serve MODE ID: start the fake server in the background; sets IT_SERVER
# to its pid once it listens.
serve() {
	"$fake" "$1" "$IT_FIXTURES/basic.sql" "$2" "$log" >"$IT_TMP/ready" &
	read -r word IT_SERVER <"$IT_TMP/ready"
	[ "$word" = ready ] || { echo "error: fake_control did not start"; exit 99; }
}

# finish_server: the server must be gone (it serves one connection); the
# silent one is killed.
finish_server() {
	kill "$IT_SERVER" 2>/dev/null
	wait "$IT_SERVER" 2>/dev/null
	IT_SERVER=
}
trap 'finish_server; it_cleanup' EXIT

# ---- snapshot --pid -o FILE ------------------------------------------------
: >"$log"
serve ok 3
it_run snapshot --pid "$IT_SERVER" -o live.db
finish_server
if [ $IT_RC -eq 0 ] && [ "$(cat "$log")" = "snapshot $IT_DB/live.db map" ] &&
	grep -qx 'snapshot: 3' "$IT_TMP/out" && [ -s "$IT_DB/live.db" ]; then
	it_ok "snapshot --pid: sends 'snapshot ABSOLUTE-PATH map', prints the new number"
else
	it_fail "snapshot --pid (exit $IT_RC)" "$log" "$IT_TMP/out" "$IT_TMP/err"
fi
it_run holes live.db --snapshot 1 --json --table summary
if [ $IT_RC -eq 0 ] && grep -q '"hole_bytes": 8888' "$IT_TMP/out"; then
	it_ok "the database written through the channel reads back"
else
	it_fail "reading the database written through the channel" "$IT_TMP/out" "$IT_TMP/err"
fi

# ---- status --pid ------------------------------------------------------------
: >"$log"
mkdir "$IT_TMP/tmp"
serve ok 2
(TMPDIR=$IT_TMP/tmp && export TMPDIR && it_run status --pid "$IT_SERVER" --classes --json)
finish_server
req=$(cat "$log")
case $req in
"snapshot $IT_TMP/tmp/inspect-live-"??????" status") req_ok=yes ;;
*) req_ok=no ;;
esac
if [ $req_ok = yes ] && [ -z "$(ls -A "$IT_TMP/tmp")" ]; then
	it_ok "status --pid: a status snapshot in a private temporary file, removed afterwards"
else
	echo "request: $req" >"$IT_TMP/why"
	ls -la "$IT_TMP/tmp" >>"$IT_TMP/why"
	it_fail "status --pid: the request or the temporary file" "$IT_TMP/why"
fi
serve ok 2
it_run status --pid "$IT_SERVER" --classes --json
finish_server
if [ $IT_RC -eq 0 ] && grep -q '"name": "lists", "bytes_current": 228' "$IT_TMP/out" &&
	grep -q '"file": "process [0-9]*"' "$IT_TMP/out" && it_have_python && it_valid_json "$IT_TMP/out"; then
	it_ok "status --pid prints the process's status"
else
	it_fail "status --pid output (exit $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
fi

# ---- failures ------------------------------------------------------------------
# expect_live STATUS STDERR-PATTERN ARGS...
expect_live() {
	want_rc=$1 want=$2
	shift 2
	it_run "$@"
	if [ $IT_RC -eq "$want_rc" ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] &&
		grep -Eqx -- "$want" "$IT_TMP/err" && [ ! -s "$IT_TMP/out" ]; then
		it_ok "$label"
	else
		echo "exit $IT_RC; wanted $want_rc and: $want" >>"$IT_TMP/err"
		it_fail "$label" "$IT_TMP/err"
	fi
}

label="no control channel: exit 4 and the documented line"
expect_live 4 "inspect: process $$ has no meminst control channel \\(start it with MEMINST=mim,control=on\\)" \
	snapshot --pid $$ -o x.db
[ -e "$IT_DB/x.db" ] && it_fail "the output file was created without a snapshot"
label="status --pid of a process without channel"
expect_live 4 "inspect: process $$ has no meminst control channel \\(start it with MEMINST=mim,control=on\\)" \
	status --pid $$

serve error 1
label="an error answer is reported"
expect_live 4 "inspect: process $IT_SERVER: the snapshot failed: disk full" snapshot --pid "$IT_SERVER" -o y.db
finish_server

serve garbage 1
label="a garbled answer is reported"
expect_live 4 "inspect: process $IT_SERVER: unexpected answer: 'what\\?'" snapshot --pid "$IT_SERVER" -o y.db
finish_server

serve silent 1
label="no answer: a timeout (INSPECT_CONTROL_TIMEOUT=1)"
export INSPECT_CONTROL_TIMEOUT=1
expect_live 4 "inspect: process $IT_SERVER: no answer: timed out" snapshot --pid "$IT_SERVER" -o y.db
unset INSPECT_CONTROL_TIMEOUT
finish_server

label="snapshot needs --pid and -o"
expect_live 2 "inspect: snapshot: needs --pid PID and -o FILE \\(see 'inspect snapshot --help'\\)" snapshot -o y.db
label="status takes a database or --pid, not both"
expect_live 2 "inspect: status: give a database or --pid, not both \\(see 'inspect status --help'\\)" \
	status basic.db --pid 1
it_finish
