#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# make bench-versus: libpool against another build of itself (an earlier release), side by
# side, in alternating runs: each round runs this build's pool-bench and the other's, one
# after the other (the order swaps every round), with the same arguments, and reads libpool's
# median of every figure from their JSON. It prints each round and, per figure, the median of
# the rounds' ratios (this / other) with their range. The two builds are never in one process:
# each pool-bench runs its own children, linked against its own libpool. A machine whose
# placement changes from period to period (a virtual machine) shows it in the rounds; the
# alternation is what makes the ratio fair.
#
# Usage: mk/bench-versus.sh THIS_POOL_BENCH OTHER_POOL_BENCH ROUNDS PIN SCENARIOS SIZES
#   e.g. mk/bench-versus.sh build/cc/tools/pool-bench ../base-0.1.0/build/cc/tools/pool-bench
#        5 0,1 pipeline 64,192,16384
# The other build is any libpool whose pool-bench takes --scenario, --size, --backend, --pin,
# --reps and --json (0.1.0 and later): build a release in a worktree of its own
# (git worktree add --detach ../base-0.1.0 e6fa8d2 && make -C ../base-0.1.0).
set -u
this=$1 other=$2 rounds=${3:-5} pin=${4:-0,1} scenarios=${5:-pipeline} sizes=${6:-64,192,16384}
for b in "$this" "$other"; do
	if [ ! -x "$b" ]; then
		echo "bench-versus: $b is not an executable pool-bench" >&2
		exit 2
	fi
done
command -v python3 >/dev/null 2>&1 || { echo "bench-versus: needs python3" >&2; exit 3; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "bench-versus: $this against $other; $rounds rounds; pinned to $pin;" \
	"scenarios $scenarios; sizes $sizes; load $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) = 1 ]; then order="this other"; else order="other this"; fi
	for who in $order; do
		if [ "$who" = this ]; then b=$this; else b=$other; fi
		"$b" --scenario "$scenarios" --size "$sizes" --backend libpool --pin "$pin" \
			--reps 3 --json "$tmp/$who.$r.json" >"$tmp/$who.$r.out" 2>&1 ||
			{ echo "bench-versus: round $r: $b failed:" >&2; tail -5 "$tmp/$who.$r.out" >&2;
			  exit 1; }
	done
	r=$((r + 1))
done
python3 - "$tmp" "$rounds" <<'PY'
import json, os, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    d = json.load(open(path))
    return {(r["scenario"], r["size"]): r["ns"]["median"] for r in d["results"]
            if r["backend"] == "libpool" and r.get("ns") and r["ns"].get("median")}
ratios = {}
for k in range(1, rounds + 1):
    a = figures(os.path.join(tmp, "this.%d.json" % k))
    b = figures(os.path.join(tmp, "other.%d.json" % k))
    line = []
    for key in sorted(set(a) & set(b)):
        ratios.setdefault(key, []).append(a[key] / b[key])
        line.append("%s %s B: %.4g / %.4g ns" % (key[0], key[1], a[key], b[key]))
    print("round %d: %s" % (k, "; ".join(line)))
print("this / other, median of the rounds [min-max]:")
for key in sorted(ratios):
    v = sorted(ratios[key])
    print("  %-20s %6s B  %.2fx [%.2f-%.2fx]" % (key[0], key[1], v[len(v) // 2], v[0], v[-1]))
PY
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
