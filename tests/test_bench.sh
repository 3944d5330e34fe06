#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# pool-bench smoke run: one repetition, tiny counts, every scenario and size; proves that it runs,
# prints the table and the targets, writes JSON (and a PNG when gnuplot is installed) and counts
# instructions under callgrind (when valgrind is installed). Backends that cannot run here are
# skipped by pool-bench itself, with the reason. Asserts no time.
# Env (from make check): BUILD, SAN, CC.
BUILD=${BUILD:-build/cc}
B=$BUILD/tools/pool-bench
if [ ! -x "$B" ]; then
	echo "test_bench: $B is missing (run make first)"
	exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

expect() {
	want=$1; desc=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$desc: exit $rc, expected $want"
		tail -n 40 "$tmp/out" "$tmp/err"
		return 1
	fi
	echo "ok: $desc"
	return 0
}

# A sanitizer runtime must come first in the process: no allocator can be preloaded into it, and
# DPDK's EAL is not built for it. Sanitizer builds compare libpool with the C library's malloc.
if [ -n "$SAN" ]; then
	backends=libpool,glibc
else
	backends=libpool,glibc,jemalloc,tcmalloc,mimalloc
	# DPDK's EAL depends on the machine (memory, /var/run, CPU flags): probe it first, so that
	# an environment where it cannot start skips it rather than failing the smoke run
	probe=$("$BUILD/tools/pool-bench-dpdk" --child dpdk pair 64 64 1 2>/dev/null | tail -n 1)
	case "$probe" in
	ok*) backends=$backends,dpdk ;;
	*) echo "note: DPDK left out: ${probe:-pool-bench-dpdk was not built or crashed}" ;;
	esac
fi
plot=""
if command -v gnuplot >/dev/null 2>&1; then
	plot="--plot $tmp/bench.png"
fi

# shellcheck disable=SC2086
if expect 0 "smoke run: every scenario and size, one repetition" \
	"$B" --reps 1 --pairs 4096 --threads 8 --backend "$backends" --json "$tmp/bench.json" $plot
then
	cat "$tmp/out"
	for row in pair batch bulk pipeline threads-8; do
		for size in 64 192 16384; do
			grep -q "^$row  *$size  *[0-9]" "$tmp/out" || fail "no '$row $size' row with figures"
		done
	done
	grep -q "^targets" "$tmp/out" || fail "no targets section"
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$tmp/bench.json" <<'PY' || fail "JSON results are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
libpool = [r for r in d["results"] if r["backend"] == "libpool"]
assert len(libpool) == 3 * 6, len(libpool)
for r in d["results"]:
    assert r["ns_per_pair"] > 0 and len(r["samples"]) == 1, r
PY
	fi
	if [ -n "$plot" ]; then
		head -c 4 "$tmp/bench.png" | od -c | grep -q "P   N   G" || fail "no PNG written"
	else
		echo "note: gnuplot is not installed: --plot not tested"
	fi
fi

# Instructions per pair under callgrind: libpool's pair loop. Valgrind 3.19 cannot read the
# DWARF 5 that clang writes, and the sanitizers do not run under Valgrind.
if ! command -v valgrind >/dev/null 2>&1; then
	echo "note: valgrind is not installed: --instructions not tested"
elif [ -n "$SAN" ] || echo "${CC:-cc}" | grep -q clang; then
	echo "note: --instructions not tested with SAN=$SAN CC=${CC:-cc} (valgrind cannot run it)"
elif expect 0 "--instructions (callgrind)" "$B" --instructions --pairs 2000 --backend libpool
then
	cat "$tmp/out"
	grep -Eq "^libpool +64 +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+" "$tmp/out" || fail "no instruction count for libpool"
fi

for args in "--reps 0" "--reps 1000" "--backend nope" "--scenario pair,nope" "--size 8" \
	"--pairs 10" "--threads 0" "--bogus" "--size"; do
	# shellcheck disable=SC2086
	if expect 2 "usage error: $args" "$B" $args; then
		grep -q "^usage: pool-bench" "$tmp/err" || fail "$args: no usage text"
	fi
done

echo "test_bench: $failures failure(s)"
[ "$failures" -eq 0 ]
