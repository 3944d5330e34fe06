#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The `pools` tool against the test fixture tests/tools/pool-cli-server.c: exit codes 0 (success),
# 1 (the server answered an error), 2 (bad usage) and 3 (socket unreachable, no answer), the
# one-line messages that say which, -S and POOL_CLI_SOCKET, -dM, and the same socket driven by
# socat as an operator would.
# Env (from make check): BUILD. Exit 0 pass, 1 fail.

BUILD=${BUILD:?BUILD must name the build directory}
POOLS=$BUILD/tools/pools
SERVER=$BUILD/tests/tools/pool-cli-server
for b in "$POOLS" "$SERVER"; do
	[ -x "$b" ] || { echo "missing $b (run make first)"; exit 1; }
done

dir=$(mktemp -d /tmp/test_pools_tool.XXXXXX) || exit 1
sock=$dir/pools.sock
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

failures=0
checks=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run <expected exit> <args...>: runs pools, keeps stdout in $dir/out and stderr in $dir/err
run() {
	want=$1
	shift
	checks=$((checks + 1))
	"$POOLS" "$@" >"$dir/out" 2>"$dir/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "pools $* exited $rc, expected $want; stderr: $(cat "$dir/err")"
		return 1
	fi
	return 0
}

# expect_err <fixed string>: stderr is one line holding it
expect_err() {
	checks=$((checks + 1))
	n=$(wc -l <"$dir/err")
	if ! grep -qF -- "$1" "$dir/err"; then
		fail "stderr lacks '$1': $(cat "$dir/err")"
	elif [ "$2" != multi ] && [ "$n" -ne 1 ]; then
		fail "stderr is $n lines, expected 1: $(cat "$dir/err")"
	fi
}

expect_out() {
	checks=$((checks + 1))
	grep -qF -- "$1" "$dir/out" || fail "stdout lacks '$1': $(cat "$dir/out")"
}

# start_server [level]: the fixture serves $sock at that level (default: admin)
start_server() {
	: >"$dir/server.out"   # the "ready" line of an earlier server must not count
	"$SERVER" -S "$sock" -t 5000 -l "${1:-admin}" >"$dir/server.out" 2>"$dir/server.err" &
	pid=$!
	i=0
	while ! grep -q '^ready ' "$dir/server.out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "server did not start: $(cat "$dir/server.err")"
			exit 1
		fi
		sleep 0.1
	done
}

stop_server() {
	kill "$pid"
	wait "$pid"
	src=$?
	pid=
	checks=$((checks + 1))
	[ "$src" -eq 0 ] || fail "server exited $src: $(cat "$dir/server.err")"
}

# ---- nothing to talk to: exit 3 ---------------------------------------------------------
run 3 -S "$dir/nowhere.sock" show && expect_err "cannot reach socket '$dir/nowhere.sock'"
: >"$dir/plain"
run 3 -S "$dir/plain" show && expect_err "cannot reach socket '$dir/plain'"

# ---- bad usage: exit 2, the message naming the option, a hint to --help -------------------
hint="Try 'pools --help' for more information."
run 2 show && expect_err "pools: no socket: use -S <path> or set POOL_CLI_SOCKET" multi &&
	expect_err "$hint" multi
run 2 -S "$sock" && expect_err "pools: no command given" multi
run 2 -x -S "$sock" show && expect_err "pools: unknown option '-x'" multi
run 2 --bogus show && expect_err "pools: unknown option '--bogus'" multi
run 2 -S && expect_err "pools: option '--socket' needs a value" multi
run 2 -S "$sock" -t 0 show &&
	expect_err "pools: bad value '0' for --timeout-ms: expected 1..3600000" multi
run 2 -S "$sock" --timeout-ms=9999999 show &&
	expect_err "pools: bad value '9999999' for --timeout-ms: expected 1..3600000" multi
run 2 -S "$sock" -dMbogus show &&
	expect_err "pools: -dMbogus: unknown pool debugging option 'bogus'" multi
run 2 -S "$sock" show "$(printf 'a\nb')" && expect_err "hold no newline" multi
checks=$((checks + 1))
[ "$(wc -l <"$dir/err")" -eq 2 ] || fail "a usage error is not two lines: $(cat "$dir/err")"
run 0 -h && expect_out "Usage: pools " && expect_out "Exit status: 0 success, 1 the server"
run 0 --help && expect_out "-S, --socket <path>"
run 0 --version && expect_out "pools (libpool) "
run 0 -dMhelp && expect_out "Pool debugging options"

# ---- a server ---------------------------------------------------------------------------
start_server
mode=$(stat -c %a "$sock")
checks=$((checks + 1))
[ "$mode" = 600 ] || fail "socket mode $mode, expected 600"

run 0 -S "$sock" show && {
	expect_out "Dumping pools usage. Use 'pools trim' to release unused memory."
	# 50 taken in refills of 16 from the slab tier: 64, of which 24 cached; 3 buffers in a
	# refill of 4 (half a magazine of 8)
	expect_out "  - Pool conn (192 bytes/64) : 64 allocated (12288 bytes), 64 used (~24 by thread caches), ~40 in use, "
	expect_out "  - Pool buf (16384 bytes/16) : 4 allocated (65536 bytes), 4 used (~1 by thread caches), ~3 in use, "
	expect_out "Total: 3 pools, 77824 bytes allocated, 77824 used (~20992 by thread caches), ~56832 in use, ~"
	# the end of a pool line in HAProxy's words: "N failures" (the JSON key is "failed")
	checks=$((checks + 1))
	grep -Eq '^  - Pool conn .*, needed_avg [0-9]+, 0 failures, 1 users, @0x[0-9a-f]+ \[SHARED\]$' \
		"$dir/out" || fail "the conn line does not end as HAProxy's does: $(grep conn "$dir/out")"
	checks=$((checks + 1))
	[ "$(wc -l <"$dir/out")" -eq 5 ] || fail "pools show printed $(wc -l <"$dir/out") lines"
	checks=$((checks + 1))
	[ -s "$dir/err" ] && fail "stderr not empty: $(cat "$dir/err")"
}
# the environment variable, arguments after the command, the answer ends without the status line
POOL_CLI_SOCKET=$sock run 0 show byusage 1 && {
	expect_out "(limited to the first 1 entries)"
	expect_out "  - Pool buf "
	checks=$((checks + 1))
	grep -q '^OK$' "$dir/out" && fail "the status line leaked into the output"
}
run 0 -S "$sock" -t 20000 show match co detailed && expect_out "      created as conn: 192 bytes/64, flags SHARED"
run 0 "--socket=$sock" show json && {
	checks=$((checks + 1))
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = [p for p in d["pools"] if p["name"] == "conn"][0]
assert (c["size"], c["align"], c["allocated"], c["used"], c["cached"], c["shared"]) == (192, 64, 64, 64, 24, True), c
assert d["total"]["pools"] == 3' "$dir/out" || fail "pools show json: not the expected JSON"
	else
		fail "python3 is not installed (Debian package python3; make check installs it)"
	fi
}
run 0 -S "$sock" show prometheus && expect_out 'libpool_pool_allocated_objects{pool="conn"} 64'
run 0 -S "$sock" help && expect_out "pools show [byname|bysize|byusage]"
run 0 -S "$sock" topology && expect_out "PUs "
run 0 -S "$sock" trim && expect_out "Released "
run 0 -S "$sock" debug && expect_out "no-fail,merge,"
run 0 -S "$sock" debug no-merge && expect_out "Pool debugging options now: no-fail,no-merge,"
run 0 -S "$sock" debug && expect_out ",no-merge,"
run 0 -S "$sock" debug help && expect_out "Pool debugging options"
# -dM applies to the client only: the server's options do not change
run 0 -dMpoison -S "$sock" debug && expect_out ",no-poison,"
# the allocation-site profile: started, viewed (the server's pools in use, no sample yet)
run 0 -S "$sock" profile && expect_out "Profile never started"
run 0 -S "$sock" profile on rate 4k && expect_out "Profile on: one sample per about 4096 bytes"
run 0 -S "$sock" profile bypool json && {
	checks=$((checks + 1))
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["profile"]["on"] and d["profile"]["rate"] == 4096, d["profile"]
p = {q["name"]: q["in_use"] for q in d["pools"]}
assert p["conn"] == 40 and p["buf"] == 3, p
assert sum(s["live_objects"] for s in d["sites"] if s["pool"] == "conn") == 40, d["sites"]' 		"$dir/out" || fail "pools profile json: not the expected JSON: $(cat "$dir/out")"
}
run 0 -S "$sock" profile off && expect_out "Profile off"

# ---- refused: exit 1, the server's reason on one line -----------------------------------
run 1 -S "$sock" show bogus && expect_err "pools: command refused by '$sock': Unknown option 'bogus' for 'pools show'"
run 1 -S "$sock" frob && expect_err "pools: command refused by '$sock': Unknown command 'frob'. Try 'help'."
run 1 -S "$sock" trim now && expect_err "Unknown command 'now'. Try 'help'."
run 1 -S "$sock" debug bogus && expect_err "command refused by '$sock': unknown pool debugging option 'bogus'"
run 1 -S "$sock" debug tag && expect_err "'tag' changes the object layout and cannot change at run time"
run 1 -S "$sock" show byname bysize && expect_err "Option 'bysize' conflicts with 'byname'"
run 1 -S "$sock" profile pool nosuch && expect_err "No pool named 'nosuch'"
checks=$((checks + 1))
[ -s "$dir/out" ] && fail "a refused command printed on stdout: $(cat "$dir/out")"

# ---- socat, as an operator would --------------------------------------------------------
checks=$((checks + 1))
if ! command -v socat >/dev/null 2>&1; then
	fail "socat is not installed (Debian package socat; make check installs it)"
else
	printf 'pools show byname\nhelp\n' | socat -t 5 - "UNIX-CONNECT:$sock" >"$dir/out" 2>"$dir/err"
	src=$?
	checks=$((checks + 1))
	[ $src -eq 0 ] || fail "socat failed: $(cat "$dir/err")"
	expect_out "  - Pool buf (16384 bytes/16)"
	expect_out "  pools trim "
	checks=$((checks + 1))
	# two answers, each followed by exactly one empty line
	[ "$(grep -c '^$' "$dir/out")" -eq 2 ] || fail "socat: expected 2 empty lines: $(cat "$dir/out")"
	checks=$((checks + 1))
	[ "$(sed -n '6p' "$dir/out")" = "" ] || fail "socat: the first answer does not end at line 6"
fi

# ---- the server goes away ---------------------------------------------------------------
stop_server
checks=$((checks + 1))
[ -e "$sock" ] && fail "the socket is still there after the server stopped"
run 3 -S "$sock" show && expect_err "cannot reach socket '$sock'"

# a stale socket (the server was killed): refused connection, exit 3; a new server replaces it
start_server
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=
checks=$((checks + 1))
[ -S "$sock" ] || fail "expected a stale socket after kill -9"
run 3 -S "$sock" show && expect_err "cannot reach socket '$sock': Connection refused"
start_server
run 0 -S "$sock" show && expect_out "Total: 3 pools"
stop_server

# ---- a socket of level user: it reads, sees no address, and is refused the rest (exit 1) ----
start_server user
run 0 -S "$sock" show && {
	expect_out "  - Pool conn (192 bytes/64) : 64 allocated"
	checks=$((checks + 1))
	grep -q "@0x" "$dir/out" && fail "a user session sees addresses: $(cat "$dir/out")"
}
run 1 -S "$sock" trim &&
	expect_err "pools: command refused by '$sock': Permission denied: 'pools trim' needs level operator; this session is user."
run 1 -S "$sock" debug no-merge && expect_err "needs level admin; this session is user."
run 0 -S "$sock" help && {
	checks=$((checks + 1))
	grep -q "pools trim" "$dir/out" && fail "help at level user lists pools trim"
}
# a regular file where the socket should go is not replaced
stop_server
echo keep >"$sock"
"$SERVER" -S "$sock" >"$dir/server.out" 2>"$dir/server.err"
rc=$?
checks=$((checks + 1))
if [ $rc -ne 3 ] || ! grep -qF "cannot serve '$sock': File exists" "$dir/server.err"; then
	fail "server on a regular file: exit $rc, $(cat "$dir/server.err")"
fi
checks=$((checks + 1))
[ "$(cat "$sock")" = keep ] || fail "the regular file was changed"

echo "test_pools_tool: $checks checks, $failures failed"
[ $failures -eq 0 ]
