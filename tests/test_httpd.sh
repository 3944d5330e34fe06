#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# tools/pool-httpd end to end: 10 000 keep-alive requests, every bad-input case, 10 000
# connections at once past a lowered fd limit, random allocation failures (-dMfail=5), no object
# left in use afterwards (asked through the CLI socket), clean stop on SIGTERM.
# The client is tests/httpd-client.py (python3, standard library only).
BUILD=${BUILD:-build/cc}
HTTPD=$BUILD/tools/pool-httpd
POOLS=$BUILD/tools/pools
CLIENT="python3 tests/httpd-client.py"

command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is not installed"; exit 77; }
[ -x "$HTTPD" ] || { echo "FAIL: $HTTPD not built"; exit 1; }

tmp=$(mktemp -d /tmp/test_httpd.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*"
	[ -f "$tmp/out" ] && sed 's/^/  server stdout: /' "$tmp/out"
	[ -f "$tmp/err" ] && sed 's/^/  server stderr: /' "$tmp/err"
	exit 1
}

# start <fd limit> <options...>: run the server in the background, set $pid and $port.
start() {
	limit=$1
	shift
	: >"$tmp/out"
	# Under SAN=address the server must also exit without a leak (tests/run.sh turns leak
	# detection off for the other tests; the later setting wins).
	(ulimit -n "$limit" && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" &&
		export ASAN_OPTIONS && exec "$HTTPD" "$@") >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	port=
	i=0
	while [ -z "$port" ] && [ $i -lt 300 ]; do
		kill -0 "$pid" 2>/dev/null || fail "the server exited at start"
		port=$(sed -n 's/.* port=\([0-9][0-9]*\) .*/\1/p' "$tmp/out")
		[ -n "$port" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$port" ] || fail "the server printed no port"
	echo "server: $(head -n 1 "$tmp/out")"
}

# no_object_in_use: `pools show json` through the CLI, until no httpd-* object is in use.
no_object_in_use() {
	i=0
	while :; do
		"$POOLS" -S "$tmp/cli.sock" show json >"$tmp/pools.json" ||
			fail "pools -S $tmp/cli.sock show json failed"
		$CLIENT pools "$tmp/pools.json" >"$tmp/pools.txt" && break
		i=$((i + 1))
		# connections in their linger or timeout period still hold their objects
		[ $i -lt 100 ] || { cat "$tmp/pools.txt" "$tmp/pools.json"; fail "objects left in use"; }
		sleep 0.2
	done
	cat "$tmp/pools.txt"
}

# stop: SIGTERM; the server must exit 0 with every pool at used 0 in its final `pools show`.
stop() {
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=
	[ $rc -eq 0 ] || fail "the server exited with status $rc after SIGTERM"
	grep -q "stopping on" "$tmp/err" || fail "no shutdown message"
	# e.g. "  - Pool httpd-conn (104 bytes/16) : 201 allocated (22512 bytes), 0 used (~0 ..."
	for p in httpd-conn httpd-ibuf httpd-req httpd-obuf; do
		grep -Eq "Pool $p .*[^0-9]0 used" "$tmp/out" ||
			fail "final pools show: $p not at used 0"
	done
	echo "stop: clean exit on SIGTERM, every pool at used 0"
}

# Bad options: usage and status 2.
for args in "--threads 0" "--port 70000" "--timeout x" "-dMbogus" "--bogus" "extra"; do
	# shellcheck disable=SC2086
	"$HTTPD" $args >/dev/null 2>"$tmp/usage"
	rc=$?
	[ $rc -eq 2 ] || fail "pool-httpd $args: status $rc, expected 2"
	grep -q "Usage:" "$tmp/usage" || fail "pool-httpd $args: no usage"
done
echo "options: bad options give usage and status 2"

# 1. Normal and bad clients, with 256 descriptors so that 10 000 connections exhaust them.
start 256 --threads 2 --timeout 1 --cli "$tmp/cli.sock"
$CLIENT load "$port" 10000 || fail "load"
$CLIENT bad "$port" || fail "bad input"
$CLIENT flood "$port" 10000 || fail "flood"
no_object_in_use
stop
# The flood must have gone past the fd limit: the server refused some connections itself.
refused=$(sed -n 's/.*total: .* accepted, \([0-9]*\) refused.*/\1/p' "$tmp/err")
[ "${refused:-0}" -gt 0 ] || fail "the flood did not exhaust the server's descriptors"
echo "flood: the server refused $refused connections past its fd limit and kept serving"

# 2. Random allocation failures: connections close, nothing leaks.
start 1024 --threads 2 --timeout 1 --cli "$tmp/cli.sock" -dMfail=5
$CLIENT faults "$port" 3000 || fail "faults"
no_object_in_use
stop
exit 0
