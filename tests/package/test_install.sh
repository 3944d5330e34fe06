#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The install layout, as a distribution builds it: `make install` from a fresh build directory
# into a staging DESTDIR with a multiarch LIBDIR, a non-default MANDIR and the user's CFLAGS,
# CPPFLAGS and LDFLAGS; then every file where it belongs, the installed libpool.pc used as it
# is (PKG_CONFIG_SYSROOT_DIR, no rewriting), no rpath in installed binaries, man page links, no
# empty directory, the README's example and the installed example server built with pkg-config
# against the staged tree, and `make uninstall` leaving nothing behind.
# Env (from make check): CC, USE_JEMALLOC, SAN. Skipped (77) in sanitizer builds.
set -u
[ -n "${SAN:-}" ] && { echo "skip: the install test builds without sanitizers (SAN=$SAN)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

prefix=/opt/libpool-test
libdir=$prefix/lib/x86_64-linux-gnu
mandir=$prefix/man
stage=$tmp/stage
# The user's flags must reach the compiler and the linker: a -D the code does not know and a
# linker option whose mark we can read back (-z now sets BIND_NOW).
set -- BUILD="$tmp/build" PREFIX="$prefix" LIBDIR="$libdir" MANDIR="$mandir" DESTDIR="$stage"
make install "$@" CPPFLAGS="-DLIBPOOL_INSTALL_TEST=1" CFLAGS="-O1 -g" \
	LDFLAGS="-Wl,-z,now" V=1 > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make install failed"; }
grep -q -- '-DLIBPOOL_INSTALL_TEST=1.*-O1 -g' "$tmp/log" || fail "CPPFLAGS/CFLAGS not used"
grep -- '-march' "$tmp/log" | grep -v 'pool-bench-dpdk' && fail "-march outside pool-bench-dpdk"

root=$stage$prefix
lib=$stage$libdir
for f in "$lib/libpool.a" "$lib/libpool.so" "$lib/libpool.so.2" "$lib/libpool.so.$VERSION" \
	"$lib/pkgconfig/libpool.pc" "$root/include/pool/pool.h" "$root/include/pool/pool-inline.h" \
	"$root/include/pool/pool-t.h" "$root/include/pool/libpool.h" \
	"$root/bin/pools" "$root/bin/pool-stress" "$root/bin/pool-bench" "$root/bin/pool-topology" \
	"$root/libexec/libpool/pool-bench-malloc" \
	"$root/share/doc/libpool/README.md" "$root/share/doc/libpool/LICENSE" \
	"$root/share/doc/libpool/CHANGELOG.md" "$root/share/doc/libpool/internals.md" \
	"$root/share/doc/libpool/examples/pool-httpd.c" "$root/share/doc/libpool/examples/example.c" \
	"$root/man/man1/pools.1" "$root/man/man3/pool_create.3" "$root/man/man3/pool_free.3" \
	"$root/man/man3/pool_version.3" "$root/man/man7/libpool.7"; do
	[ -e "$f" ] || fail "not installed: ${f#"$stage"}"
done
for f in "$root/bin/pool-httpd" "$root/bin/pool-bench-malloc" "$root/bin/pool-cli-server" \
	"$root/lib/libpool.so" "$root/share/man/man1/pools.1"; do
	[ -e "$f" ] && fail "installed where it does not belong: ${f#"$stage"}"
done
empty=$(find "$stage" -type d -empty)
[ -z "$empty" ] || fail "empty directories installed: $empty"

soname=$(objdump -p "$lib/libpool.so" | awk '/SONAME/ {print $2}')
[ "$soname" = libpool.so.2 ] || fail "soname is '$soname'"
for f in "$lib/libpool.so.$VERSION" "$root"/bin/* "$root"/libexec/libpool/*; do
	readelf -d "$f" | grep -q 'R.*PATH' && fail "${f#"$stage"} has an rpath: $(readelf -d "$f" | grep PATH)"
	readelf -d "$f" | grep -q 'BIND_NOW\|FLAGS.*NOW' || fail "${f#"$stage"}: LDFLAGS not used (no BIND_NOW)"
done
readelf -d "$root/bin/pool-stress" | grep -q 'NEEDED.*libpool.so.2' ||
	fail "pool-stress does not link the shared library"

# Man pages name the documentation where it went (DOCDIR, here under the non-default prefix),
# not the default /usr/local/share/doc/libpool they named whatever PREFIX and DOCDIR were.
for m in man1/pools.1 man1/pool-stress.1 man1/pool-topology.1 man7/libpool.7; do
	grep -q "^\.I $prefix/share/doc/libpool" "$root/man/$m" ||
		fail "$m does not name DOCDIR $prefix/share/doc/libpool"
done
grep -rl "/usr/local/share/doc" "$root/man" && fail "installed man pages name /usr/local/share/doc"

# Man pages: every name of a NAME section is a link to its page.
[ "$(readlink "$root/man/man3/pool_free.3")" = pool_alloc.3 ] || fail "pool_free.3 is no link to pool_alloc.3"
for m in "$root"/man/man*/*; do
	[ -L "$m" ] && { [ -f "$m" ] || fail "dangling man link ${m#"$stage"}"; }
done

# The installed .pc as it is: its directories are the ones given, seen through the sysroot.
pc() { PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config "$@" libpool; }
[ "$(pc --modversion)" = "$VERSION" ] || fail "pkg-config --modversion: $(pc --modversion)"
[ "$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --variable=libdir libpool)" = "$libdir" ] ||
	fail "libdir in the .pc: $(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --variable=libdir libpool)"
flags=$(pc --cflags --libs) || fail "pkg-config --cflags --libs libpool failed"
case "$flags" in *"-I$root/include"*"-L$lib"*"-lpool"*) ;; *) fail "flags: $flags" ;; esac
static=$(pc --static --libs) || fail "pkg-config --static failed"
for l in -lpool -ljemalloc; do
	[ "$l" = -ljemalloc ] && [ "${USE_JEMALLOC:-1}" = 0 ] && continue
	n=$(echo "$static" | tr ' ' '\n' | grep -c -- "^$l\$")
	[ "$n" -eq 1 ] || fail "pkg-config --static lists $l $n times: $static"
done
# hwloc and libdw are loaded with dlopen(3) when needed, not linked (src/config/topology.c,
# src/debug/pool-symbols.c)
for l in -lhwloc -ldw; do
	n=$(echo "$static" | tr ' ' '\n' | grep -c -- "^$l\$")
	[ "$n" -eq 0 ] || fail "pkg-config --static lists $l, which libpool does not link: $static"
done

# The README's example, as installed, built with the .pc and run from the staged library.
${CC:-cc} -o "$tmp/example" "$root/share/doc/libpool/examples/example.c" $flags -lpthread ||
	fail "the example does not build"
out=$(LD_LIBRARY_PATH="$lib" "$tmp/example") || fail "the example failed: $out"
case "$out" in "allocated "*", used 0") ;; *) fail "unexpected output: $out" ;; esac
LD_LIBRARY_PATH="$lib" ldd "$tmp/example" | grep -q "$lib/libpool.so.2" ||
	fail "the example is not linked with the installed library"
# The installed example server builds from its installed source alone.
${CC:-cc} -D_GNU_SOURCE -o "$tmp/pool-httpd" "$root/share/doc/libpool/examples/pool-httpd.c" \
	$flags -lpthread || fail "the installed example server does not build"
# libpool.a links with what `pkg-config --static` names, as it is (it listed hwloc's -ludev,
# which no Debian package of the build provides: the link failed), and the program needs no
# libpool.so to run.
${CC:-cc} -o "$tmp/example-static" "$root/share/doc/libpool/examples/example.c" $(pc --cflags) \
	-Wl,--as-needed -Wl,-Bstatic -lpool -Wl,-Bdynamic $(pc --static --libs) -lpthread ||
	fail "the example does not link with libpool.a and pkg-config --static"
readelf -d "$tmp/example-static" | grep -q 'NEEDED.*libpool' &&
	fail "the statically linked example still needs libpool.so"
"$tmp/example-static" > /dev/null || fail "the statically linked example failed"

# The same build directory installed again with other directories: libpool.pc follows them
# (it used to keep the first PREFIX it was generated with).
make -s install BUILD="$tmp/build" PREFIX=/usr/local DOCDIR=/srv/doc/libpool-0 \
	DESTDIR="$tmp/stage2" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "second make install failed"; }
pc2=$tmp/stage2/usr/local/lib/pkgconfig/libpool.pc
grep -qx 'prefix=/usr/local' "$pc2" && grep -qx 'libdir=${prefix}/lib' "$pc2" ||
	fail "libpool.pc not regenerated for PREFIX=/usr/local: $(head -n 6 "$pc2")"
grep -q '^\.I /srv/doc/libpool-0' "$tmp/stage2/usr/local/share/man/man1/pools.1" ||
	fail "pools(1) does not name DOCDIR=/srv/doc/libpool-0"

make -s uninstall "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make uninstall failed"; }
left=$(find "$stage" ! -type d | head -5)
[ -z "$left" ] || fail "left after uninstall: $left"
echo "install layout (LIBDIR=$libdir, MANDIR=$mandir), .pc as installed, pkg-config builds, uninstall: ok"
