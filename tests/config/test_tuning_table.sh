#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# doc/tuning.md's table of derived defaults must be what the code derives today: regenerate it
# with tools/pool-topology on every XML in $POOL_TOPOLOGY_DIR (default tests/topologies)
# and compare with the committed lines between the tuning-table markers (`make tuning-table`
# rewrites them).
dir=${POOL_TOPOLOGY_DIR:-tests/topologies}
tool=${BUILD:?BUILD must be set}/tools/pool-topology
[ -d "$dir" ] || { echo "FAIL: no topology directory $dir"; exit 1; }
[ -x "$tool" ] || { echo "FAIL: $tool not built"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
LC_ALL=C
export LC_ALL
set -- "$dir"/*.xml                     # byte order, as make's $(sort) in mk/topology.mk
"$tool" --table "$@" > "$tmp/generated" || {
	echo "FAIL: pool-topology --table failed"; cat "$tmp/generated"; exit 1; }
awk '/<!-- tuning-table end -->/ { p = 0 } p { print } /<!-- tuning-table begin -->/ { p = 1 }' \
	doc/tuning.md > "$tmp/committed"
[ -s "$tmp/committed" ] || { echo "FAIL: no tuning-table markers in doc/tuning.md"; exit 1; }
if ! diff -u "$tmp/committed" "$tmp/generated"; then
	echo "FAIL: doc/tuning.md's table is stale: run 'make tuning-table'"
	exit 1
fi
echo "doc/tuning.md table matches pool-topology on $(wc -l < "$tmp/generated") lines"
exit 0
