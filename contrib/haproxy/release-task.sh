#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# release-task.sh OUT - memory return from HAProxy's own threads in the libpool build
# (OUT/haproxy, build.sh pool). The port runs libpool with release=caller and a task that calls
# libpool_release_run() (src/pool-libpool.c), so that:
#   - HAProxy at nbthread 2 has 2 threads, none of them libpool's releaser (with POOL_RELEASE=
#     thread in the environment, libpool's "pool-releaser" is the third);
#   - the objects of a burst come back with no call: 200 connections each holding a buffer
#     (a request left unfinished), then closed; with POOL_DECAY_MS=200 (windows of 200 ms), the
#     pool "buffer" must hold at most half of its peak `allocated` 3 s later.
# Prints what it saw; exits 0 when all of it holds, 1 otherwise.
set -u

die() { echo "release task: FAIL: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: release-task.sh OUT"
bin="$1/haproxy"
[ -x "$bin" ] || die "no $bin: make haproxy first"
command -v socat >/dev/null 2>&1 || die "no socat: install the package socat"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/haproxy-release.XXXXXX") || die "mktemp failed"
hp=
trap '[ -n "$hp" ] && kill "$hp" 2>/dev/null; rm -rf "$tmp"' EXIT
cat > "$tmp/haproxy.cfg" <<EOF
global
	nbthread 2
	maxconn 1000
	stats socket $tmp/cli.sock level admin
defaults
	mode http
	timeout connect 5s
	timeout client 20s
	timeout server 5s
frontend fe
	bind unix@$tmp/fe.sock
	http-request return status 200
EOF

# start BIN's server with the environment given; its pid in $hp, once its CLI answers
start() {
	env "$@" "$bin" -db -f "$tmp/haproxy.cfg" > "$tmp/out" 2>&1 &
	hp=$!
	i=0
	until [ -S "$tmp/cli.sock" ] && echo "show info" | socat - "UNIX-CONNECT:$tmp/cli.sock" \
		> /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -le 100 ] || { cat "$tmp/out"; die "haproxy did not start"; }
		sleep 0.1
	done
}
stop() {
	kill "$hp" 2>/dev/null
	wait "$hp" 2>/dev/null
	hp=
	rm -f "$tmp/cli.sock"
}
threads() { cat /proc/"$hp"/task/*/comm | sort | tr '\n' ' '; }
# `allocated` of the pool "buffer", from `show pools`
buffers() {
	echo "show pools" | socat - "UNIX-CONNECT:$tmp/cli.sock" |
		sed -n 's/.*Pool buffer (.*) : \([0-9]*\) allocated.*/\1/p'
}

start POOL_RELEASE=thread
t=$(threads)
echo "release task: POOL_RELEASE=thread: threads $t"
stop
case $t in *pool-releaser*) ;; *) die "POOL_RELEASE=thread started no pool-releaser thread" ;; esac

start POOL_DECAY_MS=200
t=$(threads)
echo "release task: default: threads $t"
[ "$(echo "$t" | wc -w)" -eq 2 ] || die "expected nbthread's 2 threads"
case $t in *pool-releaser*) die "libpool's releaser thread runs in HAProxy" ;; esac
clients=
for i in $(seq 200); do
	{ printf 'GET / HTTP/1.1\r\n'; sleep 3; } | socat - "UNIX-CONNECT:$tmp/fe.sock" \
		> /dev/null 2>&1 &
	clients="$clients $!"
done
sleep 2
peak=$(buffers)
# shellcheck disable=SC2086
wait $clients 2>/dev/null
sleep 3
after=$(buffers)
stop
echo "release task: pool buffer: $peak allocated with the connections open," \
	"$after 3 s after they closed"
{ [ -n "$peak" ] && [ -n "$after" ]; } || die "no pool buffer in show pools"
[ "$peak" -ge 32 ] || die "the connections held $peak buffers, too few to tell"
[ $((after * 2)) -le "$peak" ] || die "the buffers did not come back with no call"
echo "release task: PASS: 2 threads, and the burst's buffers came back with no call"
