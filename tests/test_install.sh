#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# `make install` into a staging directory, then the README's example program built with
# `pkg-config --cflags --libs libpool` against the installed shared library, run from two threads;
# then `make uninstall` removes everything it installed.
set -u
[ -n "${SAN:-}" ] && { echo "skip: the install test builds without sanitizers (SAN=$SAN)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=/opt/libpool-test
make -s install BUILD="$BUILD" CC="${CC:-cc}" USE_JEMALLOC="${USE_JEMALLOC:-1}" \
	PREFIX="$prefix" DESTDIR="$tmp/stage" >/dev/null || { echo "make install failed"; exit 1; }
root="$tmp/stage$prefix"
for f in lib/libpool.a lib/libpool.so lib/libpool.so.0 include/pool/pool.h include/pool/pool-t.h \
	lib/pkgconfig/libpool.pc; do
	[ -e "$root/$f" ] || { echo "not installed: $f"; exit 1; }
done
soname=$(objdump -p "$root/lib/libpool.so" | awk '/SONAME/ {print $2}')
[ "$soname" = libpool.so.0 ] || { echo "soname is '$soname'"; exit 1; }
# only the public API is exported
bad=$(nm -D --defined-only "$root/lib/libpool.so" | awk '{print $3}' | grep -v '^pool_' | grep -v '^pool__' || true)
[ -z "$bad" ] || { echo "exported symbols outside the API: $bad"; exit 1; }
grep -q "Libs.private:.*-lhwloc" "$root/lib/pkgconfig/libpool.pc" || { echo "no Libs.private"; exit 1; }
# the README example, verbatim
awk '/^```c$/ {on = 1; next} /^```$/ {if (on) exit} on' README.md > "$tmp/example.c"
[ -s "$tmp/example.c" ] || { echo "no example in README.md"; exit 1; }
# the .pc names the final prefix: point pkg-config at the staged tree
sed "s|^prefix=.*|prefix=$root|" "$root/lib/pkgconfig/libpool.pc" > "$tmp/libpool.pc"
flags=$(PKG_CONFIG_PATH="$tmp" pkg-config --cflags --libs libpool) || exit 1
${CC:-cc} -o "$tmp/example" "$tmp/example.c" $flags -lpthread || { echo "example does not build"; exit 1; }
out=$(LD_LIBRARY_PATH="$root/lib" "$tmp/example") || { echo "example failed: $out"; exit 1; }
echo "example: $out"
case "$out" in "allocated "*", used 0") ;; *) echo "unexpected output"; exit 1 ;; esac
LD_LIBRARY_PATH="$root/lib" ldd "$tmp/example" | grep -q "$root/lib/libpool.so.0" ||
	{ echo "not linked to the installed library"; exit 1; }
make -s uninstall PREFIX="$prefix" DESTDIR="$tmp/stage" >/dev/null || exit 1
left=$(find "$root" -type f | head -5)
[ -z "$left" ] || { echo "left after uninstall: $left"; exit 1; }
echo "install, pkg-config build of the README example, and uninstall: ok"
