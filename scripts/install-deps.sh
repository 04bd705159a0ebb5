#!/bin/sh
# Install what meminst needs to build and test on Debian 12 (or Ubuntu).
# Idempotent: asks apt only for packages that are missing.
set -eu
PKGS="build-essential autoconf automake libtool pkg-config binutils g++
libcriterion-dev libjemalloc-dev libsqlite3-dev sqlite3 libdw-dev libelf-dev libunwind-dev zlib1g-dev
python3 perl git gzip xz-utils groff-base tcl valgrind clang heaptrack strace
ruby python3-lxml e2fsprogs ripgrep fd-find hyperfine fzf curl lighttpd redis-server redis-tools
memcached tmux dbus-daemon dbus-bin daemon"
# The second line: programs of the compatibility set (tests/compat/), which
# skip one by one where missing.
# clang's sanitizer and libFuzzer runtimes (make check-sanitize, check-fuzz):
# a "Recommends" of clang, under this name on Debian 12; left out where apt
# does not know it (elsewhere clang may carry them itself).
# The viewers the export tests read with (tests/export/): go tool pprof and
# headless Chromium; the tests skip with a line where they are missing.
# uftrace: bench/trace-truth.sh's third view (Debian 12 has 0.13).
OPTIONAL="libclang-rt-14-dev golang-go chromium uftrace"
missing=
installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
optional=
for p in $OPTIONAL; do
	installed "$p" || optional="$optional $p"
done
[ -z "$missing$optional" ] && exit 0
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
for p in $optional; do # only now does apt know what the distribution has
	apt-cache show "$p" >/dev/null 2>&1 && missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing"
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
