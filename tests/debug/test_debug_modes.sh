#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The 48-thread producer/consumer test (and the rest of check_pool's Threads case) under
# debugging settings, and the reproducibility of fault injection with POOL_FAIL_SEED.
set -u
bin="$BUILD/tests/core/check_pool"
dbg="$BUILD/tests/debug/check_debug"
[ -x "$bin" ] && [ -x "$dbg" ] || { echo "missing $bin or $dbg"; exit 1; }
rc=0
# `malloc` hands objects to the C library's allocator, which in an ASan build is ASan's: its
# fork() while other threads allocate can leave the child waiting for a lock of a thread that
# is not there, so check_pool's fork test cannot run on it (check_debug checks `malloc` there).
modes="tag,integrity,caller,cold-first uaf backup,poison no-cache,no-global malloc malloc,tag,caller"
if [ "${SAN:-}" = address ]; then
	modes=${modes% malloc malloc,tag,caller}
	echo "note: no 'malloc' mode under SAN=address (ASan's allocator is not fork-safe while" \
		"threads allocate)"
fi
for mode in $modes; do
	echo "--- POOL_DEBUG=$mode"
	if ! POOL_DEBUG="$mode" CK_RUN_CASE=Threads "$bin"; then
		echo "FAILED under POOL_DEBUG=$mode"
		rc=1
	fi
done
a=$(POOL_DEBUG=fail=30 POOL_FAIL_SEED=7 "$dbg" --fail-sequence)
b=$(POOL_DEBUG=fail=30 POOL_FAIL_SEED=7 "$dbg" --fail-sequence)
c=$(POOL_DEBUG=fail=30 POOL_FAIL_SEED=8 "$dbg" --fail-sequence)
echo "seed 7: $a"
echo "seed 7: $b"
echo "seed 8: $c"
[ "$a" = "$b" ] || { echo "POOL_FAIL_SEED=7 did not repeat the same failures"; rc=1; }
[ "$a" != "$c" ] || { echo "seeds 7 and 8 gave the same failures"; rc=1; }
case "$a" in *x*) ;; *) echo "fail=30 failed nothing"; rc=1 ;; esac
# a bad POOL_DEBUG is refused with the word named, and the program runs on with defaults
out=$(POOL_DEBUG=tag,bogus "$dbg" --fail-sequence 2>&1)
case "$out" in
*"ignoring POOL_DEBUG='tag,bogus': unknown pool debugging option 'bogus'"*) ;;
*) echo "bad POOL_DEBUG not reported: $out"; rc=1 ;;
esac
# POOL_DEBUG set but empty is unset (as POOL_LEAK_REPORT and POOL_STATS_ON_EXIT are): no
# option changes and nothing is printed; `-dM` alone (pool_parse_debugging("")) still poisons
unset_show=$(env -u POOL_DEBUG "$dbg" --show 2>&1)
empty_show=$(POOL_DEBUG= "$dbg" --show 2>&1)
echo "POOL_DEBUG unset: $unset_show"
echo "POOL_DEBUG empty: $empty_show"
[ "$unset_show" = "$empty_show" ] || { echo "an empty POOL_DEBUG changed the options"; rc=1; }
case "$empty_show" in *",poison"*) echo "an empty POOL_DEBUG turned poisoning on"; rc=1 ;; esac
exit $rc
