#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# check.sh OUT VARIANT [TEST...] - memcached's own test suite in the tree OUT/VARIANT that
# build.sh made (pool: the libpool build; slabs: memcached's own allocator), run as memcached's
# `make test` runs it: ./sizes, ./testapp (its C tests, which start ./memcached-debug), then
# prove over t/*.t, the files of skip.list left out (listed first, with why: always those of
# the features turned off, and under POOL_DEBUG=uaf the ones its limits break; the slabs build
# runs them all). With TEST arguments (t/<name>.t), prove runs those only, and the C tests
# are left out. prove's output ends the output, with its Result: line; the exit status is
# prove's (or the first failing C test's).
#
# Environment: MEMCACHED_CHECK_JOBS=N runs N test files at once (prove -j N; default 1, as
# memcached's make test); POOL_DEBUG reaches every memcached the suite starts (libpool reads
# it at load). Every test file's server runs under memcached's own timedrun (600 s).
set -eu

die() { echo "memcached check: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: check.sh OUT VARIANT [TEST...]"
here=$(cd "$(dirname "$0")" && pwd)
tree="$1/$2"
variant=$2
shift 2
[ -x "$tree/memcached-debug" ] || die "no $tree/memcached-debug: make memcached first"
command -v prove >/dev/null 2>&1 || die "no prove: install the package perl"
jobs=${MEMCACHED_CHECK_JOBS:-1}
cd "$tree"

# skip.list's lines that apply: always, and the uaf ones when POOL_DEBUG holds the word uaf
uaf=no
case ",${POOL_DEBUG:-}," in *,uaf,*) uaf=yes ;; esac
skips=
[ "$variant" = slabs ] || skips=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$here/skip.list" |
	awk -v uaf=$uaf '$2 == "always" || ($2 == "uaf" && uaf == "yes") {
		t = $1; $1 = ""; $2 = ""; sub(/^ +/, ""); print t, $0 }')
echo "memcached check: $variant build ($tree), POOL_DEBUG=${POOL_DEBUG:-}," \
	"$jobs test file(s) at once"
if [ -n "$skips" ]; then
	echo "memcached check: skipped (contrib/memcached/README.md says why):"
	echo "$skips" | while read -r t why; do echo "  $t: $why"; done
fi

if [ $# -gt 0 ]; then
	tests="$*"
else
	echo "memcached check: ./sizes"
	./sizes || die "./sizes failed"
	echo "memcached check: ./testapp"
	./testapp || die "./testapp failed"
	tests=
	for t in t/*.t; do
		echo "$skips" | awk -v t="$t" '$1 == t { found = 1 } END { exit !found }' && continue
		tests="$tests $t"
	done
fi
# shellcheck disable=SC2086
exec prove -j "$jobs" $tests
