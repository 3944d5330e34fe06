#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# build.sh LIBPOOL_BUILD OUT VARIANT... - build memcached 1.6.18 from Debian's source (fetched
# by fetch.sh into OUT/src), each VARIANT in a tree of its own, OUT/VARIANT:
#   pool     contrib/memcached/slabs-pool.c in place of slabs.c, linked with LIBPOOL_BUILD's
#            libpool.so (rpath to it): OUT/memcached
#   slabs    memcached's own allocator: OUT/memcached-slabs
#   planted  the pool variant's test build, with a planted use after free (MC_POOL_PLANT_UAF,
#            see slabs-pool.c): memcached-debug only, for check.sh
# Every variant is the same source with the same patch (memcached-libpool.patch, inert
# without -DMEMCACHED_LIBPOOL), configured as Debian configures it (--enable-sasl
# --enable-tls) with Debian's build flags (dpkg-buildflags, hardening=+all), and builds
# memcached, memcached-debug, sizes, testapp and timedrun, which its test suite runs. A tree is
# made again (copied, patched, configured) only when its flags changed; otherwise make rebuilds
# what changed. Environment: CC (default cc), MAKE (default make; its MAKEFLAGS' jobs apply).
set -eu

die() { echo "memcached build: $*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: build.sh LIBPOOL_BUILD OUT VARIANT..."
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib=$(cd "$1" && pwd) || die "no libpool build directory $1"
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
CC=${CC:-cc}
MAKE=${MAKE:-make}
[ -f "$lib/libpool.so" ] || die "no $lib/libpool.so: build libpool first (make)"
command -v dpkg-buildflags >/dev/null 2>&1 || die "no dpkg-buildflags: install dpkg-dev"

sh "$here/fetch.sh" "$out/src"
src="$out/src/memcached-1.6.18"
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
deb_cppflags=$(dpkg-buildflags --get CPPFLAGS)
deb_cflags=$(dpkg-buildflags --get CFLAGS)
deb_ldflags=$(dpkg-buildflags --get LDFLAGS)

for v in "$@"; do
	t="$out/$v"
	cppflags=$deb_cppflags
	ldflags=$deb_ldflags
	libs=
	targets="memcached memcached-debug sizes testapp timedrun"
	case $v in
	pool|planted)
		# -rdynamic: libpool's reports name memcached's functions (dladdr)
		cppflags="$cppflags -DMEMCACHED_LIBPOOL -I$root/include"
		ldflags="$ldflags -L$lib -Wl,-rpath,$lib -rdynamic"
		libs=-lpool
		if [ "$v" = planted ]; then
			cppflags="$cppflags -DMC_POOL_PLANT_UAF"
			targets="memcached-debug timedrun"
		fi
		;;
	slabs) ;;
	*) die "unknown variant $v (pool, slabs, planted)" ;;
	esac
	config="CC=$CC CPPFLAGS=$cppflags CFLAGS=$deb_cflags LDFLAGS=$ldflags LIBS=$libs
source=$(cat "$src/.fetched")"
	t0=$(date +%s)
	if [ ! -f "$t/.configured" ] || [ "$(cat "$t/.configured")" != "$config" ]; then
		rm -rf "$t"
		cp -a "$src" "$t"
		patch -d "$t" -p1 --quiet --forward --no-backup-if-mismatch \
			< "$here/memcached-libpool.patch" || die "memcached-libpool.patch does not apply"
		if [ "$v" != slabs ]; then
			rm -f "$t/slabs.c"
			ln -s "$here/slabs-pool.c" "$t/slabs.c"
		fi
		(cd "$t" && ./configure --enable-sasl --enable-tls CC="$CC" CPPFLAGS="$cppflags" \
			CFLAGS="$deb_cflags" LDFLAGS="$ldflags" LIBS="$libs") > "$t/configure.log" 2>&1 ||
			{ tail -n 20 "$t/configure.log" >&2; die "$v: configure failed ($t/configure.log)"; }
		echo "$config" > "$t/.configured"
	fi
	# shellcheck disable=SC2086
	$MAKE -C "$t" $targets > "$t/make.log" 2>&1 ||
		{ grep -E 'error:|Error [0-9]' "$t/make.log" | head -n 20 >&2;
		  die "$v: make failed ($t/make.log)"; }
	case $v in
	pool) cp -f "$t/memcached" "$out/memcached" ;;
	slabs) cp -f "$t/memcached" "$out/memcached-slabs" ;;
	esac
	echo "memcached build: $v in $t ($(($(date +%s) - t0)) s)"
done
