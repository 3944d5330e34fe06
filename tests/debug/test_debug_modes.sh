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
# a bad word of POOL_DEBUG is named and left out; the valid words apply (a misspelt word must
# not leave the program running with no check at all)
out=$(POOL_DEBUG=tag,bogus "$dbg" --show 2>&1)
echo "POOL_DEBUG=tag,bogus: $out"
case "$out" in
*"libpool: POOL_DEBUG='tag,bogus': ignoring 'bogus': unknown pool debugging option 'bogus';"\
" the other options apply"*) ;;
*) echo "the bad word of POOL_DEBUG=tag,bogus is not named"; rc=1 ;;
esac
case "$out" in *",tag,"*) ;; *) echo "POOL_DEBUG=tag,bogus dropped 'tag'"; rc=1 ;; esac
out=$(POOL_DEBUG=uaf,fail=300,malloc,integrity "$dbg" --show 2>&1)
echo "POOL_DEBUG=uaf,fail=300,malloc,integrity: $out"
for want in "ignoring 'fail=300': invalid value" "ignoring 'malloc': pool debugging options" \
	",integrity," ",uaf," "no-fail," ",no-malloc"; do
	case "$out" in *"$want"*) ;; *) echo "lacks '$want'"; rc=1 ;; esac
done
[ "$(printf '%s\n' "$out" | grep -c '^libpool: ')" = 2 ] || { echo "not one line per bad word"; rc=1; }
# POOL_DEBUG set but empty is unset (as POOL_LEAK_REPORT and POOL_STATS_ON_EXIT are): no
# option changes and nothing is printed; `-dM` alone (pool_parse_debugging("")) still poisons
unset_show=$(env -u POOL_DEBUG "$dbg" --show 2>&1)
empty_show=$(POOL_DEBUG= "$dbg" --show 2>&1)
echo "POOL_DEBUG unset: $unset_show"
echo "POOL_DEBUG empty: $empty_show"
[ "$unset_show" = "$empty_show" ] || { echo "an empty POOL_DEBUG changed the options"; rc=1; }
case "$empty_show" in *",poison"*) echo "an empty POOL_DEBUG turned poisoning on"; rc=1 ;; esac
exit $rc
