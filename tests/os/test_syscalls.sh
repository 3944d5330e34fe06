#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Thread churn makes no needless system calls: pool-stress with 160 threads (local workload)
# under strace -f -c. The jemalloc layer used to read RLIMIT_AS at every new thread's first
# call (162 prlimit64 calls in this run); now at load, pool_create() and pool_gc()/pool_trim()
# only (src/os/pool-os.c), so fewer than 16 here. Skipped without strace (or where ptrace is
# refused) and in sanitizer builds, whose runtimes read rlimits for each thread themselves.
set -u
stress="$BUILD/tools/pool-stress"
[ -x "$stress" ] || { echo "missing $stress"; exit 1; }
[ -z "${SAN:-}" ] || { echo "test_syscalls: skipped under SAN=$SAN"; exit 77; }
command -v strace >/dev/null 2>&1 || { echo "test_syscalls: skipped: no strace"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pool-syscalls.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! strace -f -c -o "$tmp/counts" -e trace=prlimit64,getrlimit \
	"$stress" --threads 160 --seconds 0.2 --workload local >"$tmp/out" 2>&1; then
	if grep -q "PTRACE\|ptrace\|Operation not permitted" "$tmp/out"; then
		echo "test_syscalls: skipped: strace cannot trace here"
		exit 77
	fi
	echo "FAIL: pool-stress under strace failed:"
	tail -n 20 "$tmp/out"
	exit 1
fi
cat "$tmp/counts"
# strace -c: % time, seconds, usecs/call, calls, [errors,] syscall
n=$(awk '$NF == "prlimit64" || $NF == "getrlimit" { s += $4 } END { print s + 0 }' "$tmp/counts")
echo "rlimit reads for 160 threads: $n"
if [ "$n" -ge 16 ]; then
	echo "FAIL: $n reads of a resource limit for 160 new threads (expected fewer than 16)"
	exit 1
fi
echo "ok: no rlimit read per thread"
