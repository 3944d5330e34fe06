#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# pool-httpd's live pools page in headless Chromium, while wrk drives the server (loopback
# only, bounded): the page refreshes itself, shows a chart and a table row for each httpd-*
# pool, its values follow what the server holds, its headers sort the table, its table of the
# profile's sites (the server samples, -dMprofile) lists the sites holding bytes; a screenshot is
# taken (tests/tools/pools-page.py does the checks through the DevTools protocol).
# Fails without chromium, wrk, or a python3 with the websocket module (Debian packages
# chromium, wrk, python3-websocket, which make check installs).
# Env (from make check): BUILD. POOLS_PAGE_SHOT=<file.png> keeps the screenshot there, and
# POOLS_PAGE_SETTLE=<n> waits n more refreshes before taking it (doc/pools-page.png is made with
# POOLS_PAGE_SHOT=doc/pools-page.png POOLS_PAGE_SETTLE=30).
BUILD=${BUILD:?BUILD must name the build directory}
HTTPD=$BUILD/tools/pool-httpd
[ -x "$HTTPD" ] || { echo "FAIL: $HTTPD not built"; exit 1; }

chromium=
for c in chromium chromium-browser; do
	command -v "$c" >/dev/null 2>&1 && { chromium=$(command -v "$c"); break; }
done
missing() { echo "FAIL: $1 (Debian package $2; make check installs it)"; exit 1; }
[ -n "$chromium" ] || missing "chromium is not installed" chromium
command -v wrk >/dev/null 2>&1 || missing "wrk is not installed" wrk
# Debian's python3-websocket lives in /usr/bin/python3's path, which may not be the first python3.
python=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import websocket' 2>/dev/null; then
		python=$p
		break
	fi
done
[ -n "$python" ] || missing "no python3 with the websocket module" python3-websocket

tmp=$(mktemp -d /tmp/test_pools_page.XXXXXX) || exit 1
pid=
wrk_pid=
cleanup() {
	[ -n "$wrk_pid" ] && kill "$wrk_pid" 2>/dev/null
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	sed 's/^/  server stderr: /' "$tmp/err" 2>/dev/null
	exit 1
}

. tests/tools/httpd-start.sh
# --timeout 60: the connections the page test holds open must outlive its two samples.
# -dMprofile=16k: a profile from the start, for the page's table of sites.
start 1024 --threads 2 --stats --timeout 60 -dMprofile=16k

# Load for the whole page test, bounded: wrk stops by itself after 120 s at most.
wrk -t1 -c8 -d120s "http://127.0.0.1:$port/bytes/20000" >"$tmp/wrk" 2>&1 &
wrk_pid=$!

shot=${POOLS_PAGE_SHOT:-$tmp/pools-page.png}
"$python" tests/tools/pools-page.py "$chromium" "$port" "$shot" "${POOLS_PAGE_SETTLE:-0}" ||
	fail "the pools page"
[ -s "$shot" ] || fail "no screenshot"

kill -INT "$wrk_pid" 2>/dev/null
wait "$wrk_pid"
wrk_pid=
grep -q "requests in" "$tmp/wrk" || fail "wrk did not run: $(cat "$tmp/wrk")"
echo "wrk: $(grep "requests in" "$tmp/wrk" | sed 's/^ *//') while the page was tested"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "the server exited with status $rc after SIGTERM"
echo "test_pools_page: passed"
exit 0
