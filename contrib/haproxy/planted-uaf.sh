#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# planted-uaf.sh OUT - libpool's use-after-free report in HAProxy. OUT/planted is the test build
# of the port (build.sh planted: HAPROXY_LIBPOOL_PLANT_UAF), whose __pool_free() writes to an
# object of the pool "buffer" after giving it back. HAProxy's first such free is its own, at
# start: init_buffer() (src/dynbuf.c) allocates the buffers it keeps in reserve, then frees
# them. Started with POOL_DEBUG=uaf, the server must die by SIGABRT with libpool's report on
# stderr naming the check (use after free, a write), the pool (buffer), the caller
# (init_buffer, where the inline __pool_free() wrote) and who freed the object. Prints the
# report; exits 0 when all of it is there, 1 otherwise.
set -u

die() { echo "planted uaf: FAIL: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: planted-uaf.sh OUT"
bin="$1/planted/haproxy"
[ -x "$bin" ] || die "no $bin: make haproxy-check builds it"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/haproxy-planted.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/haproxy.cfg" <<EOF
global
	nbthread 2
defaults
	mode http
	timeout connect 1s
	timeout client 1s
	timeout server 1s
frontend planted
	bind unix@$tmp/fe.sock
	http-request return status 200
EOF

POOL_DEBUG=uaf timeout 60 "$bin" -db -f "$tmp/haproxy.cfg" > "$tmp/stdout" 2> "$tmp/stderr"
status=$?
echo "planted uaf: haproxy (POOL_DEBUG=uaf) exited with status $status; its stderr:"
sed 's/^/  | /' "$tmp/stderr"
[ $status -ne 124 ] ||
	die "the server still ran after 60 s: the planted use after free was not caught"
[ $status -eq 134 ] || die "expected status 134 (SIGABRT)"
for want in "use after free" "write" "pool 'buffer'" "caller: init_buffer" "freed by:"; do
	grep -q "$want" "$tmp/stderr" || die "the report lacks '$want'"
done
echo "planted uaf: PASS: reported as a use after free in pool buffer by init_buffer"
