#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# tools/pool-httpd end to end: its options and exit statuses, 10 000 keep-alive requests, every
# bad-input case, 10 000 connections at once past a lowered fd limit, random allocation failures
# (-dMfail=5), no object left in use afterwards (asked through the CLI socket), memory given back
# after a slowloris wave, the --stats endpoints, clean stop on SIGTERM.
# The client is tests/tools/httpd-client.py (python3, standard library only); the pools page in a
# browser is tests/tools/test_pools_page.sh.
BUILD=${BUILD:-build/cc}
HTTPD=$BUILD/tools/pool-httpd
POOLS=$BUILD/tools/pools
CLIENT="python3 tests/tools/httpd-client.py"

command -v python3 >/dev/null 2>&1 ||
	{ echo "FAIL: python3 is not installed (Debian package python3; make check installs it)"; exit 1; }
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

. tests/tools/httpd-start.sh

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

# Bad options: one line naming the option, a hint to --help, status 2.
# bad <expected message> <options...>
bad() {
	want=$1
	shift
	"$HTTPD" "$@" >/dev/null 2>"$tmp/usage"
	rc=$?
	[ $rc -eq 2 ] || fail "pool-httpd $*: status $rc, expected 2"
	[ "$(head -n 1 "$tmp/usage")" = "pool-httpd: $want" ] ||
		fail "pool-httpd $*: message '$(head -n 1 "$tmp/usage")', expected 'pool-httpd: $want'"
	[ "$(sed -n 2p "$tmp/usage")" = "Try 'pool-httpd --help' for more information." ] ||
		fail "pool-httpd $*: no hint to --help"
}
bad "bad value '99999' for --port: expected 0..65535" --port 99999
bad "bad value '0' for --threads: expected 1..1024" --threads 0
bad "bad value 'x' for --timeout: expected 0.001..86400 seconds" --timeout x
bad "bad value '0.001' for --gc-interval: expected 0 or 0.01..3600 seconds" --gc-interval 0.001
bad "bad value '1.2.3' for --addr: expected an IPv4 address" --addr 1.2.3
bad "bad value 'root' for --cli-level: expected user, operator or admin" --cli-level root
bad "-dMbogus: unknown pool debugging option 'bogus'" -dMbogus
bad "unknown option '--bogus'" --bogus
bad "option '--port' needs a value" --port
bad "unexpected argument 'extra'" extra
"$HTTPD" --help >"$tmp/usage" 2>&1 || fail "--help: status $?"
grep -q "^Usage: pool-httpd" "$tmp/usage" || fail "--help: no usage"
grep -q "^Exit status: 0 clean stop, 1 objects still in use" "$tmp/usage" || fail "--help: no exit status"
"$HTTPD" --version >"$tmp/usage" 2>&1 || fail "--version: status $?"
grep -q "^pool-httpd (libpool) " "$tmp/usage" || fail "--version: $(cat "$tmp/usage")"
echo "options: bad options name themselves and give status 2; --help, --version"

# Cannot start: status 3 and the reason (192.0.2.1 is TEST-NET-1, never a local address).
"$HTTPD" --threads 1 --addr 192.0.2.1 >/dev/null 2>"$tmp/usage"
rc=$?
[ $rc -eq 3 ] || fail "--addr 192.0.2.1: status $rc, expected 3"
grep -q "^pool-httpd: cannot listen on 192.0.2.1:0: " "$tmp/usage" || fail "--addr: $(cat "$tmp/usage")"
"$HTTPD" --threads 1 --cli "$tmp/no/such/dir/cli.sock" >/dev/null 2>"$tmp/usage"
rc=$?
[ $rc -eq 3 ] || fail "--cli in a missing directory: status $rc, expected 3"
grep -q "^pool-httpd: cannot serve the CLI on $tmp/no/such/dir/cli.sock: " "$tmp/usage" ||
	fail "--cli: $(cat "$tmp/usage")"
echo "start: an address that is not local and a CLI socket that cannot be made give status 3"

# 1. Normal clients. Their keep-alive connections wait between two requests as long as the
# client takes for the seven others: a long --timeout, so that a loaded machine (a load average
# of 190 was seen) cannot make the server close one legitimately in the middle of the run.
start 1024 --threads 2 --timeout 60 --cli "$tmp/cli.sock"
$CLIENT load "$port" 10000 || fail "load"
$CLIENT nostats "$port" || fail "statistics paths without --stats"
no_object_in_use
# --cli-level defaults to operator: it may give memory back
"$POOLS" -S "$tmp/cli.sock" trim >"$tmp/trim" 2>&1 || fail "pools trim at level operator: $(cat "$tmp/trim")"
stop

# 2. Bad clients (a 1 s --timeout for the silent ones), with 256 descriptors so that 10 000
# connections exhaust them.
start 256 --threads 2 --timeout 1 --cli "$tmp/cli.sock"
$CLIENT bad "$port" || fail "bad input"
$CLIENT flood "$port" 10000 || fail "flood"
no_object_in_use
stop
# The flood must have gone past the fd limit: the server refused some connections itself.
refused=$(sed -n 's/.*total: .* accepted, \([0-9]*\) refused.*/\1/p' "$tmp/err")
[ "${refused:-0}" -gt 0 ] || fail "the flood did not exhaust the server's descriptors"
echo "flood: the server refused $refused connections past its fd limit and kept serving"

# 3. Random allocation failures: connections close, nothing leaks.
start 1024 --threads 2 --timeout 1 --cli "$tmp/cli.sock" -dMfail=5
$CLIENT faults "$port" 3000 || fail "faults"
no_object_in_use
stop

# 4. Memory return: a slowloris wave of 800 connections, each holding a 16 KiB input buffer,
# then within 10 idle seconds the pool back to at most 32 buffers and RSS back within 1.5x of
# the idle baseline, by the library alone: the server calls neither pool_gc() nor
# pool_thread_flush(), and a demand window of 2 s (POOL_DECAY_MS) gives its releaser thread
# five windows for the two it needs.
# ThreadSanitizer's allocator (SAN=thread builds use the C library's OS layer, which it
# replaces) keeps what is freed: there, RSS is not checked. Then the --stats endpoints.
rss=rss
[ "$SAN" = thread ] && rss=no-rss
POOL_DECAY_MS=2000 start 4096 --threads 2 --timeout 60 --stats --cli "$tmp/cli.sock" \
	--cli-level user
$CLIENT memreturn "$port" "$pid" 800 "$POOLS" "$tmp/cli.sock" $rss || fail "memory return"
$CLIENT stats "$port" || fail "stats"
"$POOLS" -S "$tmp/cli.sock" trim >"$tmp/trim" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "Permission denied: 'pools trim' needs level operator" "$tmp/trim" ||
	fail "pools trim on a --cli-level user socket: status $rc, $(cat "$tmp/trim")"
echo "cli: --cli-level user refuses pools trim, operator (the default) runs it"
no_object_in_use
stop
exit 0
