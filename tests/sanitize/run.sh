#!/bin/sh
# run.sh — one sanitizer build for `make check-sanitize`: configure the
# source tree afresh in a directory of its own with clang and the given
# sanitizer flags, build it and run the given tests there with
# `make check TESTS=...`.
#
# usage: run.sh NAME BUILDDIR SRCDIR CONFIGARGS CFLAGS LDFLAGS TESTS [HELPERS]
#   CONFIGARGS  the current build's configure arguments, quoted as
#               config.status --config prints them; its compiler and flag
#               settings are dropped because the sanitizer build sets its own
#   HELPERS     check programs the shell tests among TESTS run
# Only the test programs and HELPERS are built (check_PROGRAMS is
# overridden): the other check programs, the preload targets, are not run
# here and need not compile with clang.
# With SANITIZE_CRSHIM=yes in the environment, the Criterion tests are
# built against the stand-in in crshim/ instead of Criterion (which cannot
# start under TSan; see crshim/criterion/criterion.h).
# The sanitizer options come from the environment (ASAN_OPTIONS etc.).
# Logs: BUILDDIR/configure.log, BUILDDIR/build.log, BUILDDIR/check.log.
name=$1 builddir=$2 srcdir=$3 configargs=$4 cflags=$5 ldflags=$6 tests=$7 helpers=$8
programs=$helpers
for t in $tests; do
	case $t in *.sh) ;; *) programs="$programs $t" ;; esac
done

# The compiler settings of the current build would clash with clang's
# sanitizer flags; everything else (prefix, --with-jemalloc, ...) is kept.
eval "set -- $configargs"
for a; do
	shift
	case $a in
	CC=*|CXX=*|CFLAGS=*|CXXFLAGS=*|LDFLAGS=*|CPP=*|CXXCPP=*) ;;
	*) set -- "$@" "$a" ;;
	esac
done

mkdir -p "$builddir" && cd "$builddir" || exit 1
echo "check-sanitize: $name: configure in $builddir"
# Configure again only when the flags or arguments changed; otherwise
# later runs just rebuild what changed.
want="$cflags | $ldflags | $*"
if [ ! -f config.status ] || [ "$(cat sanitize-config 2>/dev/null)" != "$want" ]; then
	rm -f sanitize-config
	"$srcdir/configure" "$@" CC=clang CXX=clang++ \
		CFLAGS="$cflags" CXXFLAGS="$cflags" LDFLAGS="$ldflags" \
		>configure.log 2>&1 || {
		echo "check-sanitize: $name: configure failed (see $builddir/configure.log):"
		tail -n 5 configure.log
		exit 1
	}
	# make does not rebuild objects when only the flags changed
	make clean >/dev/null 2>&1
	echo "$want" >sanitize-config
fi
echo "check-sanitize: $name: build"
make -j2 >build.log 2>&1 || {
	echo "check-sanitize: $name: build failed (see $builddir/build.log):"
	grep -a -e 'error' build.log | head -n 10
	exit 1
}
set --
if [ "$SANITIZE_CRSHIM" = yes ]; then
	clang $cflags -std=gnu11 -Wall -Wextra -I"$srcdir/tests/sanitize/crshim" \
		-c -o crshim.o "$srcdir/tests/sanitize/crshim/crshim.c" || exit 1
	set -- CRITERION_CFLAGS="-pthread -I$srcdir/tests/sanitize/crshim" CRITERION_LIBS="$builddir/crshim.o"
fi
echo "check-sanitize: $name: $tests"
make -j2 check TESTS="$tests" check_PROGRAMS="$programs" "$@" >check.log 2>&1
status=$?
grep -a -e '^PASS:' -e '^FAIL:' -e '^ERROR:' -e '^SKIP:' -e '^XFAIL:' -e '^XPASS:' check.log \
	| sed "s/^/  $name: /"
if [ $status != 0 ]; then
	echo "check-sanitize: $name: FAILED (see $builddir/check.log and tests/*/*.log there)"
	# A sanitizer report names its kind on a SUMMARY line.
	grep -a -h -e 'SUMMARY: .*Sanitizer' -e 'runtime error:' tests/*/*.log 2>/dev/null | sort | uniq -c | head -n 20
fi
exit $status
