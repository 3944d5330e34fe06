#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Writes libpool-embed.a: libpool for a program that links it statically and may own pool_
# names (HAProxy), as one object whose only global names are the API under the libpool_ prefix
# (<pool/libpool.h>) and the internal names its inline functions use (pool__ in abi/libpool.map).
# Every other name of libpool is local, so the program's own pool_gc() or pool_debugging never
# meets libpool's. With JEMALLOC_PIC (Debian's libjemalloc_pic.a, from libjemalloc-dev), a
# private copy of jemalloc goes in too: its C++ member (operator new and delete, which would
# bring libstdc++) left out, its API that libpool calls renamed pool__je_*, every name of it
# local, malloc() and free() included, so that the program's malloc() stays the C library's
# and the program loads neither libjemalloc.so nor libstdc++ (HAProxy's peak RSS: 0.7 MiB less,
# doc/benchmarks.md). jemalloc's thread-local data is initial-exec: the archive is for programs
# and for libraries loaded with them, not for a shared object that is dlopen()ed.
#   sh mk/embed.sh OUT MAP JEMALLOC_PIC|"" OBJ...
set -eu
[ $# -ge 4 ] || { echo "usage: sh mk/embed.sh OUT MAP JEMALLOC_PIC|\"\" OBJ..." >&2; exit 2; }
out=$1 map=$2 je=$3
shift 3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

ld -r -o "$tmp/pool.o" "$@"

if [ -n "$je" ]; then
	[ -f "$je" ] || { echo "mk/embed.sh: no $je (Debian: libjemalloc-dev)" >&2; exit 1; }
	je=$(cd "$(dirname "$je")" && pwd)/$(basename "$je")
	# jemalloc's own API under private names (libpool calls mallocx, dallocx, sdallocx and
	# mallctl: src/os/pool-os.c); the C library's names (malloc, free...) are made local below
	for n in mallocx rallocx xallocx sallocx dallocx sdallocx nallocx mallctl \
		mallctlnametomib mallctlbymib malloc_stats_print; do
		echo "$n pool__je_$n"
	done > "$tmp/je-rename"
	mkdir "$tmp/je"
	(cd "$tmp/je" && ar x "$je")
	rm -f "$tmp"/je/jemalloc_cpp*.o
	ld -r -o "$tmp/je.o" "$tmp"/je/*.o
	awk '{ print $2 }' "$tmp/je-rename" > "$tmp/je-keep"
	objcopy --redefine-syms="$tmp/je-rename" --keep-global-symbols="$tmp/je-keep" \
		"$tmp/je.o" "$tmp/je-private.o"
	objcopy --redefine-syms="$tmp/je-rename" "$tmp/pool.o"
	ld -r -o "$tmp/all.o" "$tmp/pool.o" "$tmp/je-private.o"
else
	mv "$tmp/pool.o" "$tmp/all.o"
fi

# pool_x is libpool_x, and so is the default version of a versioned name
# (pool_configure@@LIBPOOL_0.3, which the calls to pool_configure inside reach; the older
# versions, for programs linked against an older libpool.so, are left local). Two passes:
# objcopy refuses two names renamed to one.
sed -n 's/^[[:space:]]*libpool_\([a-z0-9_]*\);.*/\1/p' "$map" > "$tmp/api"
[ -s "$tmp/api" ] || { echo "mk/embed.sh: no libpool_ name in $map" >&2; exit 1; }
nm "$tmp/all.o" | awk '$NF ~ /^pool_[a-z0-9_]*@@LIBPOOL_/ { print $NF }' | sort -u |
	awk '{ n = $0; sub(/@@.*/, "", n); print $0 " lib" n }' > "$tmp/rename-versioned"
awk '{ print "pool_" $1 " libpool_" $1 }' "$tmp/api" > "$tmp/rename"
{
	awk '{ print "libpool_" $1 }' "$tmp/api"
	sed -n 's/^[[:space:]]*\(pool__[a-z0-9_]*\);.*/\1/p' "$map"
} > "$tmp/keep"
objcopy --redefine-syms="$tmp/rename-versioned" "$tmp/all.o"
objcopy --redefine-syms="$tmp/rename" --keep-global-symbols="$tmp/keep" "$tmp/all.o" \
	"$tmp/libpool-embed.o"
rm -f "$out.tmp"
ar rcs "$out.tmp" "$tmp/libpool-embed.o"
mv -f "$out.tmp" "$out"
