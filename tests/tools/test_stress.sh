#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# pool-stress, briefly: 48 threads on every workload, plain and under a few POOL_DEBUG settings
# (tag,integrity,caller,cold-first; uaf; uaf,cache; fail=5; no-cache: a NULL not asked for fails
# the run), a workload that gets nothing (fail=100) failing, the soak workload, the canary
# self-test, the JSON output and the usage errors. Asserts exit statuses and output, never a
# time. Sanitizer builds (SAN set) run shorter workloads. Env (from make check): BUILD, SAN.
BUILD=${BUILD:-build/cc}
B=$BUILD/tools/pool-stress
if [ ! -x "$B" ]; then
	echo "test_stress: $B is missing (run make first)"
	exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ -n "$SAN" ]; then
	secs=0.3; dbg_secs=0.2; soak_secs=0.5
else
	secs=2; dbg_secs=0.5; soak_secs=1
fi
. "$(dirname "$0")/../testlib.sh"
havepy=""
need python3 python3 && havepy=1

# The main job, briefly: every workload, 48 threads, JSON results.
if expect 0 "48 threads, every workload, ${secs}s each" \
	"$B" --threads 48 --seconds "$secs" --json "$tmp/stress.json"; then
	for wl in local pipeline bleed mixed spike; do
		grep -q "^$wl  *48 .* ok$" "$tmp/out" || fail "no passing summary line for $wl"
	done
	grep -q "^pools show" "$tmp/out" || fail "no pools show at the end"
	grep -q "PASSED" "$tmp/out" || fail "no PASSED line"
	if [ -n "$havepy" ]; then
		python3 - "$tmp/stress.json" <<'PY' || fail "JSON results are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["result"] == "ok" and d["threads"] == 48, d
names = [w["name"] for w in d["workloads"]]
assert names == ["local", "pipeline", "bleed", "mixed", "spike"], names
for w in d["workloads"]:
    assert w["ok"] and w["operations"] > 0, w
for p in d["pools"]:
    assert p["used"] == 0 and p["allocated"] == p["shared_free"] + p["slab_free"], p
assert "after_gc" in d["workloads"][4]["spike"]
PY
	fi
	# not a terminal: no progress line (it is drawn with carriage returns)
	if grep -q "$(printf '\r')" "$tmp/out"; then fail "progress line written to a non-terminal"; fi
fi

# --bind pins workers where the machine allows it, and says once that it cannot otherwise;
# the library's own pools show ends the run.
if expect 0 "--bind" "$B" --threads 8 --seconds "$dbg_secs" --workload local,bleed --bind; then
	grep -q "^Dumping pools usage" "$tmp/out" || fail "no pool_dump() pools show at the end"
	grep -q "Pool stress-local-64 (64 bytes/16)" "$tmp/out" || fail "pools show lacks a pool"
fi
if expect 0 "--bind with an XML topology (binding refused, run goes on)" \
	env HWLOC_XMLFILE=tests/topologies/AMD-17h-Zen-2xEpyc-7451.xml \
	"$B" --threads 4 --seconds "$dbg_secs" --workload local --bind; then
	grep -q "cannot bind threads" "$tmp/err" ||
		fail "no message when binding is refused"
fi

# Debugging settings, from POOL_DEBUG and from -dM.
for d in tag,integrity,caller,cold-first uaf uaf,cache no-cache; do
	if expect 0 "POOL_DEBUG=$d" env POOL_DEBUG="$d" "$B" --threads 48 --seconds "$dbg_secs"; then
		grep -q "debugging: .*$(echo "$d" | cut -d, -f1)" "$tmp/out" ||
			fail "POOL_DEBUG=$d not in effect"
	fi
done
if expect 0 "-dMfail=5 (allocation failures are counted, not taken for corruption)" \
	"$B" --threads 48 --seconds "$dbg_secs" -dMfail=5 --json "$tmp/fail.json"; then
	grep -q "debugging: fail=5" "$tmp/out" || fail "-dMfail=5 not in effect"
	if [ -n "$havepy" ]; then
		python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert sum(w['failures'] for w in d['workloads']) > 0" "$tmp/fail.json" ||
			fail "-dMfail=5 produced no counted failure"
	fi
fi

# A workload that gets no object at all fails, even when the failures were asked for.
if expect 1 "-dMfail=100: a workload that allocates nothing fails" \
	"$B" --threads 4 --seconds 0.2 --workload local -dMfail=100; then
	grep -q "^local: FAILED: no allocation succeeded: all [0-9]* returned NULL" "$tmp/out" ||
		fail "no 'no allocation succeeded' line"
fi

# The soak, briefly: thread replacements, the chaos thread's calls, the books, the RSS.
if expect 0 "soak, 48 threads, ${soak_secs}s" \
	"$B" --threads 48 --seconds "$soak_secs" --workload soak --json "$tmp/soak.json"; then
	grep -q "^soak  *48 .* ok$" "$tmp/out" || fail "no passing summary line for soak"
	grep -q "^soak: [0-9]* thread replacements, [0-9]* switch flips, .* RSS [0-9]* KiB at the start" \
		"$tmp/out" || fail "no soak figures line"
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$tmp/soak.json" <<'PY' || fail "soak JSON results are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
w = d["workloads"][0]
assert d["result"] == "ok" and w["name"] == "soak" and w["operations"] > 0, d
k = w["soak"]
assert k["flips"] + k["gcs"] + k["trims"] + k["flushes"] + k["limits"] + k["dumps"] > 0, k
assert k["rss_end_kb"] > 0 and k["rss_peak_kb"] >= k["rss_start_kb"] > 0, k
for p in d["pools"]:
    assert p["used"] == 0 and p["allocated"] == 0, p
PY
	fi
fi

# The canary catches a corrupted object: report and exit 1.
if expect 1 "deliberate corruption is caught" \
	"$B" --threads 4 --seconds 5 --workload local --self-test-corruption 1000; then
	grep -q "CORRUPTION in workload 'local': checksum mismatch" "$tmp/err" ||
		fail "no corruption report"
	grep -q "first word differing from the pattern" "$tmp/err" || fail "no offset in the report"
fi

# Bad usage: one message naming the option, a hint to --help, exit 2.
for args in "--threads 0" "--threads 1025" "--threads x" "--seconds 0" "--seconds abc" \
	"--workload local,nope" "--bogus" "-dMbogus" "--threads" "--json=" "-t -1" "extra"; do
	# shellcheck disable=SC2086
	if expect 2 "usage error: $args" "$B" $args; then
		opt=${args%% *}
		opt=${opt%%=*}
		case $opt in -t) opt=--threads ;; -dMbogus) opt=-dMbogus: ;; esac
		grep -q "^pool-stress: .*$opt" "$tmp/err" || fail "$args: the message does not name $opt"
		grep -q "^Try 'pool-stress --help' for more information.$" "$tmp/err" ||
			fail "$args: no hint to --help"
	fi
done
expect 2 "usage error names the value" "$B" --threads 2000 &&
	{ grep -q "^pool-stress: bad value '2000' for --threads: expected 1..1024$" "$tmp/err" ||
		fail "--threads 2000: $(cat "$tmp/err")"; }
expect 3 "--json into a missing directory: cannot start" \
	"$B" --threads 1 --seconds 0.1 --json "$tmp/missing/x.json" &&
	{ grep -q "cannot create '$tmp/missing/x.json'" "$tmp/err" || fail "--json: no reason"; }
expect 0 "--help" "$B" --help && { grep -q "^Usage: pool-stress" "$tmp/out" || fail "help"; }
expect 0 "--version" "$B" --version && { grep -q "^pool-stress (libpool) " "$tmp/out" || fail "version"; }

echo "test_stress: $failures failure(s)"
[ "$failures" -eq 0 ]
