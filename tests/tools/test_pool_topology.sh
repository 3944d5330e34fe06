#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# tools/pool-topology: the summary of this machine, the table on XML files, bad usage (exit 2,
# the message names the option), --help, --version, and a file hwloc cannot load (exit 1, the
# row says so, the other rows are still printed).
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
sed -n '/in effect/,$p' "$tmp/out" | grep -q 'buckets per pool  *32$' || fail "override not shown"
POOL_CLUSTER=16 "$tool" > "$tmp/out" 2>&1 || fail "POOL_CLUSTER=16: exit $?"
sed -n '/in effect/,$p' "$tmp/out" | grep -q 'objects per magazine  *16$' ||
	fail "POOL_CLUSTER=16 not shown"

# usage_error <message> <args...>: exit 2, the message, then the hint to --help
usage_error() {
	want=$1
	shift
	"$tool" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "$*: exit $rc, expected 2"
	[ "$(head -n 1 "$tmp/err")" = "pool-topology: $want" ] ||
		fail "$*: message '$(head -n 1 "$tmp/err")'"
	grep -q "^Try 'pool-topology --help' for more information.$" "$tmp/err" || fail "$*: no hint"
	[ -s "$tmp/out" ] && fail "$*: wrote on stdout"
}
usage_error "unknown option '--bogus'" --bogus
usage_error "unknown option '-x'" -x
usage_error "--table needs at least one XML file" --table
usage_error "unexpected argument 'file.xml' (files go with --table)" file.xml
"$tool" --help > "$tmp/out" || fail "--help: exit $?"
grep -q '^Usage: pool-topology' "$tmp/out" || fail "--help: no usage"
grep -q '^Exit status: 0 success, 1 a file hwloc could not load' "$tmp/out" ||
	fail "--help: no exit status"
"$tool" --version > "$tmp/out" || fail "--version: exit $?"
grep -q '^pool-topology (libpool) ' "$tmp/out" || fail "--version: $(cat "$tmp/out")"

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
