#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# tools/pool-topology: the summary of this machine, the table on XML files, bad usage (exit 2)
# and a file hwloc cannot load (exit 1, the row says so, the other rows are still printed).
tool=${BUILD:?BUILD must be set}/tools/pool-topology
dir=${POOL_TOPOLOGY_DIR:-tests/topologies}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

unset HWLOC_XMLFILE POOL_BUCKETS POOL_CACHE_SIZE
"$tool" > "$tmp/out" 2> "$tmp/err" || fail "no arguments: exit $?"
grep -q '^topology: this machine (hwloc' "$tmp/out" || fail "no source line: $(cat "$tmp/out")"
grep -q '^  buckets per pool    [0-9]' "$tmp/out" || fail "no buckets line"
grep -q 'in effect' "$tmp/out" || fail "no configuration in effect"
[ -s "$tmp/err" ] && fail "unexpected stderr: $(cat "$tmp/err")"

POOL_BUCKETS=32 "$tool" > "$tmp/out" 2>&1 || fail "POOL_BUCKETS=32: exit $?"
sed -n '/in effect/,$p' "$tmp/out" | grep -q 'buckets per pool    32$' || fail "override not shown"

"$tool" --bogus > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] || fail "--bogus: expected exit 2"
grep -q 'usage:' "$tmp/err" || fail "--bogus: no usage on stderr"
"$tool" --table > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] || fail "--table without files: expected exit 2"
grep -q 'needs at least one XML file' "$tmp/err" || fail "--table: no reason given"
"$tool" --help > "$tmp/out" || fail "--help: exit $?"
grep -q 'usage:' "$tmp/out" || fail "--help: no usage"

echo "not xml" > "$tmp/bad.xml"
[ -f "$dir/Intel-CascadeLake-2xXeon6230.xml" ] || fail "no $dir/Intel-CascadeLake-2xXeon6230.xml"
"$tool" --table "$tmp/bad.xml" "$dir/Intel-CascadeLake-2xXeon6230.xml" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 1 ] || fail "--table with a bad file: expected exit 1"
grep -q '^| bad.xml | (hwloc could not load it)' "$tmp/out" || fail "bad row missing"
grep -q '^| Intel-CascadeLake-2xXeon6230.xml | 2 x 20 cores x 2 threads |.*| \*\*64\*\* |' \
	"$tmp/out" || fail "Cascade Lake row: $(cat "$tmp/out")"
grep -q "libpool: hwloc could not load the topology" "$tmp/err" || fail "no fallback message"
echo "pool-topology: summary, overrides, table, usage errors all as expected"
exit 0
