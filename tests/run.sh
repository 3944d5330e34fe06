#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Runs every test program and script given as arguments, each with its output shown, and ends
# with one line "check: N passed, N failed, N skipped" (exit 77 means skipped), and how many
# seconds each took. The last lines of each failed test's output are shown again just before
# that line, so that a log cut to its tail (a CI summary) still tells what failed and why.
# Exits 1 if any failed. Called by `make check`, which exports BUILD, SAN, USE_JEMALLOC and CC
# for the scripts. CHECK_SKIP (from the environment or make's command line) names tests, by file
# name (test_bench.sh, check_pool), not to run: each is counted and named as skipped (CI leaves
# the slowest tests of the tools' output, which its plain run makes, out of its sanitizer runs).
# Tests end with objects still handed out on purpose (a pool is not a leak checker's business
# there), so LeakSanitizer would report them: the address sanitizer runs without it.
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
# Every process of an ASan build says once at start what AddressSanitizer sees of pool objects
# (doc/debugging.md): the tests know, and check_asan and test_debug_malloc.sh check the note.
POOL_ASAN_NOTE=0
export POOL_ASAN_NOTE
# ThreadSanitizer sleeps 1 s in every process at exit (atexit_sleep_ms, to catch races with
# threads still running then): with Check's forks and the children of the death tests and of the
# fault sweep, that was 2.7 of the 10.7 minutes of `make check SAN=thread` (check_fault: 114 s,
# now 6). The tests join their threads before they exit, and the library's destructor joins its
# releaser thread.
TSAN_OPTIONS="atexit_sleep_ms=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export TSAN_OPTIONS
# Check stops a test case after 4 s unless it sets its own limit: a hang guard only (no test
# times anything), which a loaded 2-core machine can reach with death tests; 60 s by default.
CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
export CK_DEFAULT_TIMEOUT
passed=0
failed=0
skipped=0
failures=""
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pool-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
for t in "$@"; do
	echo "=== $t"
	case " ${CHECK_SKIP:-} " in
	*" ${t##*/} "*)
		echo "--- skipped (CHECK_SKIP): $t"
		skipped=$((skipped + 1))
		continue ;;
	esac
	t0=$(date +%s)
	n=$((n + 1))
	# the output goes to the terminal as it comes, and to a file for the summary
	{
		case "$t" in
		*.sh) sh "$t" ;;
		*) "$t" ;;
		esac
		echo $? > "$tmp/rc"
	} 2>&1 | tee "$tmp/out.$n"
	rc=$(cat "$tmp/rc")
	echo "--- $t: $(($(date +%s) - t0)) s"
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
	elif [ $rc -eq 77 ]; then
		echo "--- skipped: $t"
		skipped=$((skipped + 1))
	else
		failed=$((failed + 1))
		failures="$failures $t"
		echo "--- FAILED ($rc): $t"
		{
			echo "=== the end of the output of $t (exit $rc):"
			tail -n 30 "$tmp/out.$n"
		} >> "$tmp/summary"
	fi
	rm -f "$tmp/out.$n"
done
[ -f "$tmp/summary" ] && cat "$tmp/summary"
[ -n "$failures" ] && echo "failed:$failures"
echo "check: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
