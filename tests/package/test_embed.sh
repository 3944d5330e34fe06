#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# libpool-embed.a (mk/embed.sh), libpool for a program that links it statically and owns pool_
# names:
#   - its only global definitions are the libpool_ API of abi/libpool.map and the internal
#     pool__ names <pool/libpool.h>'s inline functions use: no pool_ name, no jemalloc name
#     (malloc, mallocx, mallctl, je_*), nothing else;
#   - tests/package/check_host.c linked with it alone (check_host_embed) passes: a program that
#     defines every name HAProxy defines runs libpool correctly; it needs neither libpool.so
#     nor libjemalloc.so nor libstdc++;
#   - a program linked with it keeps its malloc() (the C library's, or a sanitizer's), finds no
#     mallctl() or mallocx() (HAProxy's weak mallctl sees no jemalloc), and libpool's objects
#     come from jemalloc in the jemalloc build (pool_get_os_stats()), from the C library without.
# Env (from make check): BUILD, CC, SAN, USE_JEMALLOC.
set -u
BUILD=${BUILD:?BUILD must be set}
lib=$BUILD/libpool-embed.a
host=$BUILD/tests/package/check_host_embed
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
for f in "$lib" "$host"; do
	[ -e "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done
fail=0

# 1. the global definitions
{
	sed -n 's/^[[:space:]]*\(libpool_[a-z0-9_]*\);.*/\1/p' abi/libpool.map
	sed -n 's/^[[:space:]]*\(pool__[a-z0-9_]*\);.*/\1/p' abi/libpool.map
} | LC_ALL=C sort -u > "$tmp/want"
nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | LC_ALL=C sort -u > "$tmp/got"
if ! cmp -s "$tmp/want" "$tmp/got"; then
	echo "FAIL: libpool-embed.a's global names are not the libpool_ API and the pool__ ones"
	diff "$tmp/want" "$tmp/got" | head -n 20
	fail=1
else
	echo "ok: libpool-embed.a defines $(wc -l < "$tmp/got") global names, the libpool_ API and" \
		"$(grep -c '^pool__' "$tmp/got") pool__ ones"
fi

# 2. the host program, on the archive alone
needed=$(readelf -d "$host" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed" in
*" libpool"*|*" libjemalloc"*|*" libstdc++"*)
	echo "FAIL: check_host_embed needs $needed"; fail=1 ;;
*)	echo "ok: check_host_embed needs $needed" ;;
esac
if "$host" > "$tmp/host.out" 2>&1; then
	echo "ok: $(tail -n 1 "$tmp/host.out")"
else
	cat "$tmp/host.out"; echo "FAIL: check_host_embed"; fail=1
fi

# 3. the program's malloc stays its own
cat > "$tmp/embed_host.c" <<'PROG'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pool/libpool.h>

/* two of the program's own pool names, as HAProxy has them */
unsigned int pool_debugging = ~0u;
void pool_gc(void *pool_ctx) { (void)pool_ctx; puts("pool_gc called"); abort(); }

int main(void)
{
	struct libpool_head *p = libpool_create("embed", 256, 0);
	struct libpool_os_stats os;
	Dl_info mi, pi;
	void *m = malloc(100), *o;
	int i;

	if (!p || !m)
		return 2;
	for (i = 0; i < 10000; i++) {
		o = libpool_alloc(p);
		if (!o)
			return 3;
		memset(o, 0x5a, 256);
		libpool_free(p, o);
	}
	libpool_trim();
	if (libpool_get_os_stats(&os, sizeof(os)) != 0)
		return 4;
	if (!dladdr((void *)malloc, &mi) || !dladdr((void *)main, &pi))
		return 5;
	printf("layer %s\n", os.layer);
	printf("malloc %s\n", mi.dli_fbase == pi.dli_fbase ? "in the program" : "elsewhere");
	printf("mallctl %s\n", dlsym(RTLD_DEFAULT, "mallctl") ? "found" : "none");
	printf("mallocx %s\n", dlsym(RTLD_DEFAULT, "mallocx") ? "found" : "none");
	free(m);
	libpool_destroy(p);
	return 0;
}
PROG
san=
[ -n "${SAN:-}" ] && san="-fsanitize=$SAN -fno-omit-frame-pointer"
case ${CC:-cc} in *clang*) [ -n "$san" ] && san="$san -shared-libsan -Wl,-rpath,$(${CC:-cc} -print-runtime-dir)" ;; esac
# shellcheck disable=SC2086
if ! ${CC:-cc} -std=gnu11 -O1 -g -Wall -Wextra -I"$BUILD/include" -Iinclude $san \
	-o "$tmp/embed_host" "$tmp/embed_host.c" "$lib" -lpthread -ldl -lm; then
	echo "FAIL: a program does not link with libpool-embed.a"; exit 1
fi
layer=libc
[ "${USE_JEMALLOC:-1}" = 1 ] && layer=jemalloc
"$tmp/embed_host" > "$tmp/out" 2> "$tmp/err"
rc=$?
printf 'layer %s\nmalloc elsewhere\nmallctl none\nmallocx none\n' "$layer" > "$tmp/expect"
if [ $rc -eq 0 ] && cmp -s "$tmp/expect" "$tmp/out"; then
	echo "ok: libpool's objects from $layer; the program's malloc() is not in it;" \
		"no mallctl(), no mallocx()"
else
	echo "FAIL: the program linked with libpool-embed.a (exit $rc):"; cat "$tmp/out" "$tmp/err"
	fail=1
fi
[ $fail -eq 0 ] && echo "PASS: libpool-embed.a" || exit 1
