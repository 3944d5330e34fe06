#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Under Valgrind, a read of a freed pool object is reported by memcheck, with caching on, and
# the report carries the stack of the free. The slow-path-for-everything mode that makes this
# possible is memcheck's alone: under callgrind, cachegrind, DRD and Helgrind the inline fast
# path runs (so a profile shows libpool's real cost), which the program below tells by the
# POOL_DBG_SANITIZER bit of pool_debugging. Skipped (77) in sanitizer builds (they do not mix
# with Valgrind); fails when valgrind is not installed (make check installs it).
set -u
[ -n "${SAN:-}" ] && { echo "skip: valgrind does not run sanitizer builds (SAN=$SAN)"; exit 77; }
command -v valgrind >/dev/null 2>&1 || {
	echo "FAIL: valgrind is not installed (Debian package valgrind; make check installs it)"
	exit 1
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/uaf.c" <<'PROG'
#include <stdio.h>
#include <pool/pool.h>

static void release(struct pool_head *p, char *o) __attribute__((noinline));
static void release(struct pool_head *p, char *o)
{
	pool_free(p, o);
}

int main(void)
{
	struct pool_head *p = pool_create("vg", 64, 0);
	volatile char *o = pool_alloc(p);
	char c;

	o[0] = 'a';
	release(p, (char *)o);
	c = o[10];                     /* read after free: the object sits in the thread cache */
	printf("%d\n", c == 'z');
	printf("slow path for every object: %s\n",
	       (pool_debugging & POOL_DBG_SANITIZER) ? "yes" : "no");
	return 0;
}
PROG
libs="-lpthread -ldl -lm"
[ "${USE_JEMALLOC:-1}" = 1 ] && libs="$(pkg-config --libs jemalloc) $libs"
${CC:-cc} -gdwarf-4 -O1 -Iinclude -o "$tmp/uaf" "$tmp/uaf.c" "$BUILD/libpool.a" $libs || exit 1
valgrind --error-exitcode=3 "$tmp/uaf" > "$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 3 ] || { echo "expected memcheck to report an error (exit 3), got $rc"; exit 1; }
grep -q "Invalid read of size 1" "$tmp/out" || { echo "no invalid read reported"; exit 1; }
grep -q "slow path for every object: yes" "$tmp/out" || { echo "memcheck not detected"; exit 1; }
for tool in callgrind cachegrind drd helgrind; do
	case $tool in
	callgrind|cachegrind) opt="--$tool-out-file=/dev/null" ;;
	*) opt= ;;
	esac
	valgrind --tool=$tool $opt "$tmp/uaf" > "$tmp/out.$tool" 2>&1
	grep -q "slow path for every object: no" "$tmp/out.$tool" || {
		cat "$tmp/out.$tool"; echo "under $tool the inline fast path must run"; exit 1; }
	echo "under $tool: the inline fast path runs"
done
"$tmp/uaf" | grep -q "slow path for every object: no" || { echo "natively: not the fast path"; exit 1; }
if [ "${USE_JEMALLOC:-1}" = 0 ]; then
	# Objects from the C library are malloc blocks that memcheck tracks itself: it reports the
	# access, but describes the enclosing malloc block rather than our freed pool chunk.
	echo "memcheck reported the read of a freed pool object (C library OS layer)"
	exit 0
fi
grep -q "free'd" "$tmp/out" || { echo "the report lacks the stack of the free"; exit 1; }
grep -q "release" "$tmp/out" || { echo "the free stack does not name the freeing function"; exit 1; }
echo "memcheck reported the read of a freed pool object with the stack of the free"
