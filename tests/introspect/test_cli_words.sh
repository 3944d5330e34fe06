#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# Every -dM word and every CLI command is in the man pages and in the programs' help: the
# fixture tests/tools/pool-cli-server.c serves its socket at level admin, the `pools` tool asks it for
# `help` and `pools debug help`, and tests/introspect/check-cli-words.py compares them, `pools -dMhelp`,
# `pools --help`, pool_parse_debugging(3) and pools(1) with the tables of src/.
# Env (from make check): BUILD. Exit 0 pass, 1 fail.

BUILD=${BUILD:?BUILD must name the build directory}
POOLS=$BUILD/tools/pools
SERVER=$BUILD/tests/tools/pool-cli-server
top=$(dirname "$0")/../..
for b in "$POOLS" "$SERVER"; do
	[ -x "$b" ] || { echo "FAIL: missing $b (run make first)"; exit 1; }
done
for c in python3:python3 mandoc:mandoc; do
	command -v "${c%%:*}" >/dev/null 2>&1 || { echo "FAIL: ${c%%:*} is not installed" \
		"(Debian package ${c#*:}; make check installs it)"; exit 1; }
done

dir=$(mktemp -d /tmp/test_cli_words.XXXXXX) || exit 1
sock=$dir/pools.sock
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

"$SERVER" -S "$sock" -l admin >"$dir/server.out" 2>"$dir/server.err" &
pid=$!
i=0
while ! grep -q '^ready ' "$dir/server.out" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: server did not start: $(cat "$dir/server.err")"
		exit 1
	fi
	sleep 0.1
done

ask() {
	out=$1
	shift
	"$POOLS" "$@" >"$dir/$out" 2>"$dir/err" ||
		{ echo "FAIL: pools $* exited $?: $(cat "$dir/err")"; exit 1; }
}
ask cli-help -S "$sock" help
ask cli-debug-help -S "$sock" debug help
ask dm-help -dMhelp
ask tool-help --help

python3 "$top/tests/introspect/check-cli-words.py" "$top" "$dir/cli-debug-help" "$dir/dm-help" -- \
	"$dir/cli-help" "$dir/tool-help"
