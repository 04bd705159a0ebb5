#!/bin/sh
# Install what meminst needs to build and test on Debian 12 (or Ubuntu).
# Idempotent: asks apt only for packages that are missing.
set -eu
PKGS="build-essential autoconf automake libtool pkg-config binutils g++
libcriterion-dev libjemalloc-dev libsqlite3-dev sqlite3 libdw-dev libelf-dev libunwind-dev
python3 perl git gzip xz-utils groff-base tcl valgrind"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
