#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# -dMmalloc: every object of the pools comes from the C library's malloc() and goes back with
# free(), one by one, so that the tools which watch those calls see pool objects as the
# program's own blocks, with the library built as users get it (the default build, no
# sanitizer):
#   1. Valgrind's memcheck reports a one-byte overflow of a pool object under POOL_DEBUG=malloc
#      ("0 bytes after a block of size 24"), and a read after free with the stack of the free,
#      through the function that called pool_free(); without `malloc` the overflow goes unseen
#      (the object lies inside a larger block of jemalloc's);
#   2. a program built with -fsanitize=address and linked to the default libpool reports a use
#      after free of a pool object (heap-use-after-free), and the stack that freed it names the
#      program's function that called pool_free() and its caller, with ASan's default (fast)
#      unwinder;
#   3. pool_create() refuses nothing, the counters and `pools show` keep working, no object is
#      cached or in a shared list, a limit still applies (the same program, natively);
#   4. the ASan program that did not set POOL_DEBUG is told once at start that ASan does not
#      see pool objects, and how to have it see them (not with POOL_ASAN_NOTE=0 or POOL_DEBUG).
# Part 1 needs valgrind (make check installs it; the test fails without it) and cannot run in
# the sanitizer builds, which Valgrind does not run; part 2 builds its own ASan program against
# the library of this build, which must be a build without a sanitizer. So the whole test is
# skipped (77) in sanitizer builds, as test_valgrind.sh is (README, "Tests").
set -u
[ -n "${SAN:-}" ] && { echo "skip: valgrind and a second sanitizer do not run sanitizer builds" \
	"(SAN=$SAN)"; exit 77; }
command -v valgrind >/dev/null 2>&1 || {
	echo "FAIL: valgrind is not installed (Debian package valgrind; make check installs it)"
	exit 1
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/mm.c" <<'PROG'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <pool/pool.h>

/* the program's own function that frees: the stacks must name it */
__attribute__((noinline)) static void release_session(struct pool_head *p, char *o)
{
	pool_free(p, o);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void close_connection(struct pool_head *p, char *o)
{
	release_session(p, o);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	struct pool_head *p = pool_create("session", 24, POOL_F_SHARED);
	struct pool_head *q = pool_create("conn", 24, POOL_F_SHARED);
	char *o = pool_alloc(p), *objs[4];
	volatile char *v = o;
	struct pool_stats st;
	int i;

	if (!o || q != p)
		return 2;
	memset(o, 1, pool_object_size(p));
	if (!strcmp(what, "overflow"))
		v[pool_object_size(p)] = 'x';          /* one byte past the object */
	close_connection(p, o);
	if (!strcmp(what, "uaf"))
		printf("read after free: %d\n", v[3]);
	/* counters, limits and pools show */
	for (i = 0; i < 4; i++)
		objs[i] = pool_alloc(p);
	pool_get_stats(p, &st, sizeof(st));
	printf("allocated %zu used %zu cached %zu shared_free %zu os_allocs %llu\n", st.allocated,
	       st.used, st.cached, st.shared_free, (unsigned long long)st.os_allocs);
	pool_set_limit(p, 4);
	errno = 0;
	printf("past the limit: %s\n", !pool_alloc(p) && errno == ENOMEM ? "NULL" : "an object");
	for (i = 0; i < 4; i++)
		pool_free(p, objs[i]);
	pool_get_stats(p, &st, sizeof(st));
	printf("after frees: allocated %zu used %zu failed %zu os_releases %llu\n", st.allocated,
	       st.used, st.failed, (unsigned long long)st.os_releases);
	pool_dump(stdout, NULL);
	pool_destroy(q);
	return pool_destroy(p) == 0 ? 0 : 3;
}
PROG
cc=${CC:-cc}
bdir=$(cd "$BUILD" && pwd) || exit 1
# the default build's shared library, as a user links it
$cc -g -O1 -Iinclude -o "$tmp/mm" "$tmp/mm.c" -L"$bdir" -lpool -Wl,-rpath,"$bdir" ||
	exit 1
rc=0
fail() { echo "FAIL: $*"; rc=1; }

echo "--- natively, POOL_DEBUG=malloc"
POOL_DEBUG=malloc "$tmp/mm" > "$tmp/native" 2>&1 || fail "the program failed ($?)"
cat "$tmp/native"
grep -q "allocated 4 used 4 cached 0 shared_free 0 os_allocs 5" "$tmp/native" ||
	fail "counters: not one object from the OS layer per allocation, or objects cached"
grep -q "past the limit: NULL" "$tmp/native" || fail "the limit did not apply"
grep -q "after frees: allocated 0 used 0 failed 1 os_releases 5" "$tmp/native" ||
	fail "counters after the frees"
grep -q "Pool session (24 bytes/16) : 0 allocated" "$tmp/native" || fail "pools show"

echo "--- memcheck, POOL_DEBUG=malloc: a one-byte overflow"
POOL_DEBUG=malloc valgrind --error-exitcode=3 "$tmp/mm" overflow > "$tmp/vg.over" 2>&1
vrc=$?
cat "$tmp/vg.over"
[ $vrc -eq 3 ] || fail "memcheck reported no error (exit $vrc, expected 3)"
grep -q "Invalid write of size 1" "$tmp/vg.over" || fail "no invalid write reported"
grep -q "0 bytes after a block of size 24 alloc'd" "$tmp/vg.over" ||
	fail "the overflow is not placed right after the 24-byte object"

echo "--- memcheck, POOL_DEBUG=malloc: a read after free"
POOL_DEBUG=malloc valgrind --error-exitcode=3 "$tmp/mm" uaf > "$tmp/vg.uaf" 2>&1
vrc=$?
cat "$tmp/vg.uaf"
[ $vrc -eq 3 ] || fail "memcheck reported no error (exit $vrc, expected 3)"
grep -q "Invalid read of size 1" "$tmp/vg.uaf" || fail "no invalid read reported"
sed -n "/block of size 24 free'd/,/Block was alloc'd/p" "$tmp/vg.uaf" > "$tmp/vg.freed"
grep -q "release_session" "$tmp/vg.freed" && grep -q "close_connection" "$tmp/vg.freed" ||
	fail "the stack of the free does not name release_session and close_connection"

echo "--- memcheck, no POOL_DEBUG: the overflow lands inside jemalloc's block, unseen"
env -u POOL_DEBUG valgrind --error-exitcode=3 "$tmp/mm" overflow > "$tmp/vg.default" 2>&1
echo "(exit $?: memcheck $(grep -c 'Invalid write' "$tmp/vg.default") invalid write(s))"

echo "--- a program built with -fsanitize=address, linked to the default libpool"
if $cc -g -O1 -fsanitize=address -fno-omit-frame-pointer -Iinclude -o "$tmp/mm-asan" \
	"$tmp/mm.c" -L"$bdir" -lpool -Wl,-rpath,"$bdir"; then
	# the interceptors of the ASan runtime are the process's malloc and free: libpool's too
	POOL_DEBUG=malloc ASAN_OPTIONS=detect_leaks=0 "$tmp/mm-asan" uaf > "$tmp/asan" 2>&1
	arc=$?
	cat "$tmp/asan"
	[ $arc -ne 0 ] || fail "ASan did not stop the program"
	grep -q "heap-use-after-free" "$tmp/asan" || fail "no heap-use-after-free reported"
	sed -n '/freed by thread/,/previously allocated/p' "$tmp/asan" > "$tmp/asan.freed"
	grep -q "release_session" "$tmp/asan.freed" && grep -q "close_connection" "$tmp/asan.freed" ||
		fail "the freeing stack does not name release_session and close_connection"
	grep -q "libpool: note:" "$tmp/asan" && fail "a note under POOL_DEBUG=malloc"
	# without POOL_DEBUG the program is told once, at start, that ASan does not see pool
	# objects and how to have it see them; POOL_ASAN_NOTE=0 or any POOL_DEBUG silences it (the
	# program's exit status does not matter here: without `malloc` its pools keep objects)
	env -u POOL_DEBUG -u POOL_ASAN_NOTE ASAN_OPTIONS=detect_leaks=0 "$tmp/mm-asan" \
		> "$tmp/note" 2>&1
	sed -n '/libpool:/p' "$tmp/note"
	[ "$(grep -c '^libpool: note: AddressSanitizer does not see pool objects' "$tmp/note")" = 1 ] ||
		fail "no note, or more than one, without POOL_DEBUG"
	grep -q "POOL_DEBUG=malloc makes each pool object a malloc() block" "$tmp/note" ||
		fail "the note does not say how to have ASan see pool objects"
	env -u POOL_DEBUG POOL_ASAN_NOTE=0 ASAN_OPTIONS=detect_leaks=0 "$tmp/mm-asan" \
		> "$tmp/quiet" 2>&1
	POOL_DEBUG=tag ASAN_OPTIONS=detect_leaks=0 "$tmp/mm-asan" > "$tmp/tag" 2>&1
	cat "$tmp/quiet" "$tmp/tag" | grep -q "libpool: note" &&
		fail "a note despite POOL_ASAN_NOTE=0 or POOL_DEBUG=tag"
	# a program without ASan hears nothing of it
	env -u POOL_DEBUG -u POOL_ASAN_NOTE "$tmp/mm" > "$tmp/plain" 2>&1
	grep -q "libpool: note" "$tmp/plain" && fail "a note in a program without ASan"
else
	fail "cannot build a program with -fsanitize=address (gcc's libasan: Debian libasan8)"
fi
[ $rc -eq 0 ] && echo "malloc: memcheck and ASan see pool objects, with the stacks of their frees"
exit $rc
