#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The body of `make demo` (see mk/demo.mk):
#   sh mk/demo.sh BUILD DURATION CONNS WRK_THREADS PATH "HTTPD_OPTS"
# Runs pool-httpd with pools, then with --malloc, under wrk; prints wrk's summaries, then for the
# pools run `pools show byusage` asked through the CLI socket with the `pools` tool, and a one-line
# comparison. Stops every server it started, also on
# failure or interruption.
BUILD=$1
DURATION=$2
CONNS=$3
WRK_THREADS=$4
URLPATH=$5
HTTPD_OPTS=$6
HTTPD=$BUILD/tools/pool-httpd
POOLS=$BUILD/tools/pools

command -v wrk >/dev/null 2>&1 ||
	{ echo "demo: wrk is not installed (Debian: apt-get install -y wrk)"; exit 1; }
[ -x "$HTTPD" ] || { echo "demo: $HTTPD is not built"; exit 1; }

tmp=$(mktemp -d /tmp/pool-demo.XXXXXX)
pid=
stop_server() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid"
		rc=$?
		pid=
		return $rc
	fi
}
cleanup() {
	stop_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# run LABEL [pool-httpd options]: one server, one wrk run; sets rps.
run() {
	label=$1
	shift
	# shellcheck disable=SC2086
	"$HTTPD" "$@" $HTTPD_OPTS >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	port=
	i=0
	while [ -z "$port" ] && [ $i -lt 100 ]; do
		kill -0 "$pid" 2>/dev/null || { cat "$tmp/err"; echo "demo: the server exited"; exit 1; }
		port=$(sed -n 's/.* port=\([0-9][0-9]*\) .*/\1/p' "$tmp/out")
		[ -n "$port" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$port" ] || { echo "demo: the server printed no port"; exit 1; }
	echo "=== $label: $(head -n 1 "$tmp/out")"
	wrk -t"$WRK_THREADS" -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$port$URLPATH" \
		>"$tmp/wrk" 2>&1 || { cat "$tmp/wrk"; echo "demo: wrk failed"; exit 1; }
	cat "$tmp/wrk"
	if [ "$label" = pools ]; then
		echo "--- pools show byusage (through the CLI socket, with the pools tool)"
		"$POOLS" -S "$tmp/cli.sock" show byusage || { echo "demo: the CLI did not answer"; exit 1; }
	fi
	rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$tmp/wrk")
	[ -n "$rps" ] || { echo "demo: no Requests/sec in wrk's output"; exit 1; }
	stop_server || { cat "$tmp/err"; echo "demo: the server did not stop cleanly"; exit 1; }
	sed -n '/final pools show/,$p' "$tmp/out"
	grep "total:" "$tmp/err"
	echo
}

run pools --cli "$tmp/cli.sock"
rps_pools=$rps
run malloc --malloc
rps_malloc=$rps
awk -v p="$rps_pools" -v m="$rps_malloc" -v path="$URLPATH" 'BEGIN {
	printf "demo: GET %s: pools %.0f requests/s, malloc %.0f requests/s, pools/malloc = %.3f\n",
	       path, p, m, p / m }'
