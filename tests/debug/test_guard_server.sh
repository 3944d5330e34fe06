#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# Guard pages catch a server's bug in production: tests/debug/guard-server.c, a server loop
# whose buggy handler writes one byte past its object, or reads it after its free, on every
# request it serves, built as a user builds it (plain -O2), runs with POOL_DEBUG=guard at the
# profile's default rate (512 KiB: one sample per 2,521 objects of 208 bytes), 5 times each.
# Each run must end in libpool's report (the kind of bug, the pool, the allocating stack with
# the buggy handler, for a use after free the freeing one too) well before 2,000,000 requests;
# the allocations it took are printed (doc/debugging.md, "Guard pages", quotes them).
# Env (from make check): BUILD, CC, SAN.
BUILD=${BUILD:?BUILD must name the build directory}
CC=${CC:-cc}
tmp=$(mktemp -d /tmp/test_guard_server.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
. tests/testlib.sh

# AddressSanitizer's redzone past each object reports the overflow first: its own business
case "${SAN:-}" in *address*) echo "test_guard_server: skipped under AddressSanitizer"; exit 77 ;; esac

lib=$(cd "$BUILD" && pwd)
san=${SAN:+-fsanitize=$SAN}
prog=$tmp/guard-server
if ! $CC -O2 $san -Iinclude -o "$prog" tests/debug/guard-server.c -L"$lib" -lpool \
	-Wl,-rpath,"$lib" -lpthread 2>"$tmp/cc"; then
	cat "$tmp/cc"
	echo "test_guard_server: the fixture does not build"
	exit 1
fi

for mode in overflow uaf; do
	all=""
	for run in 1 2 3 4 5; do
		POOL_DEBUG=guard "$prog" $mode 2000000 >"$tmp/out" 2>"$tmp/err"
		status=$?
		if [ $status -ne 3 ]; then
			fail "$mode run $run: exit $status, not the report's abort: $(tail -n 5 "$tmp/err")"
			continue
		fi
		case $mode in
		overflow) want="FATAL: overflow past the end of a sampled object in pool 'request' (208 bytes)" ;;
		uaf) want="FATAL: use after free of a sampled object in pool 'request' (208 bytes)" ;;
		esac
		grep -q "$want" "$tmp/err" || { fail "$mode run $run: no '$want'"; cat "$tmp/err"; }
		grep -q "^libpool:   allocated by thread [0-9]*: " "$tmp/err" &&
			grep -q "guard-server" "$tmp/err" ||
			{ fail "$mode run $run: no allocating stack"; cat "$tmp/err"; }
		if [ $mode = uaf ]; then
			grep -q "^libpool:   freed by thread [0-9]*: " "$tmp/err" ||
				{ fail "$mode run $run: no freeing stack"; cat "$tmp/err"; }
		fi
		n=$(sed -n 's/^caught after \([0-9]*\) allocations, \([0-9]*\) by the buggy handler$/\1 \2/p' "$tmp/err")
		[ -n "$n" ] || { fail "$mode run $run: no count"; cat "$tmp/err"; continue; }
		all="$all ${n% *}/${n#* }"
	done
	echo "ok: $mode caught after (allocations/by the buggy handler):$all"
done
[ "$failures" -eq 0 ] || { echo "test_guard_server: $failures failures"; exit 1; }
echo "test_guard_server: passed"
