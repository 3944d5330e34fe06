# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# Sourced by the tests that run tools/pool-httpd (test_httpd.sh, test_pools_page.sh); they set
# HTTPD (the binary) and tmp (a scratch directory) and define fail().
#
# start <fd limit> <pool-httpd options...>: run the server in the background with that
# descriptor limit, its stdout in $tmp/out and stderr in $tmp/err; set $pid and $port (from
# the "port=<n>" of its first line). Fails the test if it exits or prints no port in 30 s.
start() {
	limit=$1
	shift
	: >"$tmp/out"
	: >"$tmp/err"
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
