#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# planted-uaf.sh OUT - libpool's use-after-free report in a real server. OUT/planted is the
# test build of the contribution (build.sh planted: slabs-pool.c with MC_POOL_PLANT_UAF), whose
# slabs_free() writes to the item "libpool-planted-uaf" after giving it back to its pool. Its
# memcached-debug runs with POOL_DEBUG=uaf on a UNIX socket; the item is stored, then deleted;
# the server must die by SIGABRT with libpool's report on stderr naming the check (use after
# free, a write), the pool (mc-slab-01, the class of a 1-byte item), the caller (slabs_free,
# the function that wrote) and who freed it. Prints the report; exits 0 when all of it is
# there, 1 otherwise. Needs perl (the client).
set -u

die() { echo "planted uaf: FAIL: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: planted-uaf.sh OUT"
bin="$1/planted/memcached-debug"
[ -x "$bin" ] || die "no $bin: make memcached-check-debug builds it"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mc-planted.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
sock="$tmp/mc.sock"
user=
[ "$(id -u)" = 0 ] && user="-u root"

# shellcheck disable=SC2086
POOL_DEBUG=uaf "$bin" $user -U 0 -s "$sock" -t 2 -m 8 2> "$tmp/stderr" &
pid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$sock" ] || { cat "$tmp/stderr"; kill $pid 2>/dev/null; die "the server did not start"; }

perl -MIO::Socket::UNIX -e '
	my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!\n";
	print $s "set libpool-planted-uaf 0 0 1\r\nx\r\n";
	my $r = <$s>;
	die "set: $r" unless $r eq "STORED\r\n";
	print $s "delete libpool-planted-uaf\r\n";
	$r = <$s>;     # the server dies before it answers, or just after
' "$sock" || { kill $pid 2>/dev/null; die "the client failed"; }

i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $pid 2>/dev/null; then
	kill $pid
	cat "$tmp/stderr"
	die "the server is still running: the planted use after free was not caught"
fi
wait $pid
status=$?
echo "planted uaf: memcached-debug (POOL_DEBUG=uaf) exited with status $status; its stderr:"
sed 's/^/  | /' "$tmp/stderr"
[ $status -eq 134 ] || die "expected status 134 (SIGABRT)"
for want in "use after free" "write" "pool 'mc-slab-01'" "caller: slabs_free" "freed by:"; do
	grep -q "$want" "$tmp/stderr" || die "the report lacks '$want'"
done
echo "planted uaf: PASS: reported as a use after free in pool mc-slab-01 by slabs_free"
