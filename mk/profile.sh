#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The body of `make profile` (see mk/bench.mk):
#   sh mk/profile.sh BUILD PROFILER BACKEND SCENARIO THREADS SIZE COUNT LIVE LIFETIME TEARDOWN LL
# Runs one pool-bench child, one backend on one scenario, under a profiler, and writes the whole
# report to BUILD/profile.txt (the child's result line to BUILD/profile.out):
#   perf        perf record -g on cycles (cpu-clock where the machine counts no cycles), then
#               perf report --stdio; the default where perf can sample
#   callgrind   valgrind --tool=callgrind, then callgrind_annotate; the default elsewhere
#   cachegrind  valgrind --tool=cachegrind --cache-sim=yes, then cg_annotate, and the line
#               "D1 misses per allocation: X, LL misses per allocation: Y" from its totals
#   perf-stat   perf stat of the hardware data-cache events, per allocation; where perf cannot
#               count them (a virtual machine without a PMU), it says so and runs cachegrind
# BACKEND=libpool runs `pool-bench --child libpool`; glibc, jemalloc, tcmalloc and mimalloc run
# pool-bench-malloc with that allocator in LD_PRELOAD, as pool-bench does; dpdk pool-bench-dpdk.
# Empty COUNT: a default that suits the profiler (valgrind runs 20-100 times slower). LIVE,
# LIFETIME and TEARDOWN are the server's child keys (empty: the child's defaults). LL is
# cachegrind's last-level cache, "size,associativity,line size" (empty: what valgrind reads from
# the CPU).
BUILD=$1
PROFILER=$2
BACKEND=$3
SCENARIO=$4
THREADS=$5
SIZE=$6
COUNT=$7
LIVE=$8
LIFETIME=$9
TEARDOWN=${10}
LL=${11}
OUT=$BUILD/profile.txt
RES=$BUILD/profile.out

unset LD_PRELOAD
preload=
case "$BACKEND" in
libpool) prog=$BUILD/tools/pool-bench ;;
glibc) prog=$BUILD/tools/pool-bench-malloc ;;
jemalloc) prog=$BUILD/tools/pool-bench-malloc preload=libjemalloc.so.2 ;;
tcmalloc) prog=$BUILD/tools/pool-bench-malloc preload=libtcmalloc_minimal.so.4 ;;
mimalloc) prog=$BUILD/tools/pool-bench-malloc preload=libmimalloc.so.2 ;;
dpdk) prog=$BUILD/tools/pool-bench-dpdk ;;
*)
	echo "profile: unknown BACKEND '$BACKEND' (libpool, glibc, jemalloc, tcmalloc, mimalloc, dpdk)"
	exit 2 ;;
esac
[ -x "$prog" ] || { echo "profile: $prog is not built"; exit 1; }

if [ -z "$PROFILER" ]; then
	if perf record -q -o /dev/null -- true >/dev/null 2>&1; then PROFILER=perf
	else PROFILER=callgrind; fi
fi
case "$PROFILER" in
perf|callgrind|cachegrind|perf-stat) ;;
*) echo "profile: unknown PROFILER '$PROFILER' (perf, callgrind, cachegrind, perf-stat)"; exit 2 ;;
esac

# perf-stat: the events this machine counts; none, and cachegrind simulates them instead
events="L1-dcache-load-misses,LLC-load-misses,cache-misses"
if [ "$PROFILER" = perf-stat ]; then
	if ! command -v perf >/dev/null 2>&1; then
		echo "profile: perf is not installed (Debian package linux-perf): cachegrind instead"
		PROFILER=cachegrind
	elif ! perf stat -x, -e "$events" -- true 2>&1 | grep -q '^[0-9]'; then
		echo "profile: perf cannot count $events here (no hardware counters, as in most" \
			"virtual machines): cachegrind simulates the caches instead"
		PROFILER=cachegrind
	fi
fi

# The least count the child accepts is enough under valgrind for server and larson (two rounds
# or generations, the least they run); the others get a tenth of the native default.
if [ -z "$COUNT" ]; then
	case "$PROFILER:$SCENARIO" in
	callgrind:server|cachegrind:server|callgrind:larson|cachegrind:larson) COUNT=1 ;;
	callgrind:*|cachegrind:*)
		case "$SCENARIO" in
		xmalloc|pipeline|threads) COUNT=2000000 ;;
		*) COUNT=10000000 ;;
		esac ;;
	*)
		case "$SCENARIO" in
		server|larson|xmalloc) COUNT=4000000 ;;
		pipeline|threads) COUNT=20000000 ;;
		*) COUNT=100000000 ;;
		esac ;;
	esac
fi
keys=
[ -n "$LIVE" ] && keys="$keys live=$LIVE"
[ -n "$LIFETIME" ] && keys="$keys lifetime=$LIFETIME"
[ -n "$TEARDOWN" ] && keys="$keys teardown=$TEARDOWN"
# shellcheck disable=SC2086
set -- "$prog" --child "$BACKEND" "$SCENARIO" "$SIZE" "$COUNT" "$THREADS" $keys
echo "profile: $PROFILER on:${preload:+ LD_PRELOAD=$preload} $*"

# Run "$@" (a profiler and its arguments, then the child) with the backend's preload.
run() {
	if [ -n "$preload" ]; then
		LD_PRELOAD=$preload "$@"
	else
		"$@"
	fi
}

# The profiler or the child failed: say what the child printed, and exit 1.
failed() {
	echo "profile: $PROFILER or the child failed; the child printed:"
	cat "$RES"
	exit 1
}

# The units (allocations) the child reported in its result line; exit if it reported none.
units() {
	n=$(grep '^ok ' "$RES" | tail -n 1 | sed -n 's/.* units=\([0-9]*\).*/\1/p')
	if [ -z "$n" ]; then
		echo "profile: the child failed:"
		cat "$RES"
		exit 1
	fi
}

case "$PROFILER" in
perf)
	event=cycles
	perf stat -e cycles -x, -- true 2>&1 | grep -q "not supported" && event=cpu-clock
	run perf record -q -e $event -g -o "$BUILD/profile.data" -- "$@" > "$RES" || failed
	units
	perf report -i "$BUILD/profile.data" --stdio --no-children --percent-limit 0.5 \
		--sort symbol 2>/dev/null > "$OUT" || exit 1
	perf report -i "$BUILD/profile.data" --stdio --no-children -g none --percent-limit 0.5 \
		--sort symbol 2>/dev/null | grep -v '^$' | head -40
	;;
callgrind)
	run valgrind --tool=callgrind --quiet --callgrind-out-file="$BUILD/profile.callgrind" \
		-- "$@" > "$RES" || failed
	units
	callgrind_annotate "$BUILD/profile.callgrind" > "$OUT" || exit 1
	sed -n '/PROGRAM TOTALS/,/Auto-annotated/p' "$OUT" | grep -v '^-*$' |
		grep -v Auto-annotated | head -30
	;;
cachegrind)
	run valgrind --tool=cachegrind --cache-sim=yes ${LL:+--LL=$LL} --quiet \
		--cachegrind-out-file="$BUILD/profile.cachegrind" -- "$@" > "$RES" || failed
	units
	# valgrind warns about the caches it detected even when LL overrides them: say what ran
	echo "profile: simulated caches:" \
		"$(sed -n 's/^desc: \(D1\|LL\) cache: *\(.*\)/\1 \2;/p' "$BUILD/profile.cachegrind" |
			tr '\n' ' ')"
	cg_annotate "$BUILD/profile.cachegrind" > "$OUT" || exit 1
	grep -A 30 'Ir ' "$OUT" | head -30
	# "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw" and "summary: <one total per event>"
	awk -v n="$n" '
		/^events:/ { for (i = 2; i <= NF; i++) ev[i] = $i }
		/^summary:/ { for (i = 2; i <= NF; i++) tot[ev[i]] = $i }
		END {
			if (!n) { print "profile: the child reported no allocations"; exit 1 }
			printf "D1 misses per allocation: %.3f, LL misses per allocation: %.3f\n",
			       (tot["D1mr"] + tot["D1mw"]) / n, (tot["DLmr"] + tot["DLmw"]) / n
			printf "(%d allocations; reads: D1 %.3f, LL %.3f; writes: D1 %.3f, LL %.3f; " \
			       "instructions %.1f, data references %.1f per allocation; totals of the " \
			       "whole child, set-up included; threads run one at a time under valgrind, " \
			       "so no miss comes from another core)\n", n, tot["D1mr"] / n,
			       tot["DLmr"] / n, tot["D1mw"] / n, tot["DLmw"] / n, tot["Ir"] / n,
			       (tot["Dr"] + tot["Dw"]) / n
		}' "$BUILD/profile.cachegrind" | tee -a "$OUT"
	;;
perf-stat)
	run perf stat -x, -o "$OUT" -e "$events" -- "$@" > "$RES" || failed
	units
	awk -F, -v n="$n" '
		$1 ~ /^[0-9]+$/ { printf "%s per allocation: %.3f\n", $3, $1 / n; next }
		$1 ~ /^</ { printf "%s: %s\n", $3, $1 }' "$OUT" | tee -a "$OUT"
	echo "($n allocations; counts of the whole child, set-up included)" | tee -a "$OUT"
	;;
esac
cat "$RES"
echo "profile: the whole report is in $OUT"
