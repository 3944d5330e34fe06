#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# build.sh LIBPOOL_BUILD OUT VARIANT... - build HAProxy 2.6.12 from Debian's source (fetched by
# fetch.sh into OUT/src), each VARIANT in a tree of its own, OUT/VARIANT:
#   pool     USE_LIBPOOL=1: HAProxy's pools on libpool (pool-libpool.c and its two headers put
#            into the tree), linked statically with LIBPOOL_BUILD's libpool-embed.a (libpool
#            and a private jemalloc, mk/embed.sh: no libjemalloc.so nor libstdc++ loaded),
#            including the <pool/libpool.h> that build made: OUT/haproxy
#   stock    HAProxy's own pools: OUT/haproxy-stock
#   planted  the pool variant's test build, with a planted use after free
#            (HAPROXY_LIBPOOL_PLANT_UAF: __pool_free() writes to a freed buffer): for
#            planted-uaf.sh, not copied out
# Every variant is the same source with the same patch (haproxy-libpool.patch, inert without
# USE_LIBPOOL), built with the options of Debian's package that the reg-tests use (TARGET=
# linux-glibc USE_PCRE2=1 USE_PCRE2_JIT=1 USE_OPENSSL=1 USE_LUA=1 USE_PROMEX=1; not USE_OT nor
# USE_SYSTEMD, whose libraries the tests do not need) and Debian's build flags
# (dpkg-buildflags, hardening=+all), as debian/rules passes them. A tree is made again (copied,
# patched) only when its flags or the patch changed; otherwise HAProxy's make rebuilds what
# changed.
# Environment: CC (default cc), MAKE (default make; its MAKEFLAGS' jobs apply).
set -eu

die() { echo "haproxy build: $*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: build.sh LIBPOOL_BUILD OUT VARIANT..."
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$1" && pwd) || die "no libpool build directory $1"
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
CC=${CC:-cc}
MAKE=${MAKE:-make}
[ -f "$lib/libpool-embed.a" ] || die "no $lib/libpool-embed.a: build libpool first (make)"
[ -f "$lib/include/pool/libpool.h" ] || die "no $lib/include/pool/libpool.h: build libpool first"
command -v dpkg-buildflags >/dev/null 2>&1 || die "no dpkg-buildflags: install dpkg-dev"

sh "$here/fetch.sh" "$out/src"
src="$out/src/haproxy-2.6.12"
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
deb_cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
deb_ldflags=$(dpkg-buildflags --get LDFLAGS)

for v in "$@"; do
	t="$out/$v"
	opts=
	case $v in
	pool) opts="USE_LIBPOOL=1" ;;
	planted) opts="USE_LIBPOOL=1 DEFINE=-DHAPROXY_LIBPOOL_PLANT_UAF" ;;
	stock) ;;
	*) die "unknown variant $v (pool, stock, planted)" ;;
	esac
	config="CC=$CC $opts DEBUG_CFLAGS=$deb_cflags LDFLAGS=$deb_ldflags
source=$(cat "$src/.fetched")
patch=$(cksum < "$here/haproxy-libpool.patch")"
	t0=$(date +%s)
	if [ ! -f "$t/.configured" ] || [ "$(cat "$t/.configured")" != "$config" ]; then
		rm -rf "$t"
		cp -a "$src" "$t"
		patch -d "$t" -p1 --quiet --forward --no-backup-if-mismatch \
			< "$here/haproxy-libpool.patch" || die "haproxy-libpool.patch does not apply"
		if [ "$v" != stock ]; then
			ln -s "$here/pool-libpool.c" "$t/src/pool-libpool.c"
			ln -s "$here/pool-libpool.h" "$t/include/haproxy/pool-libpool.h"
			ln -s "$here/pool-libpool-t.h" "$t/include/haproxy/pool-libpool-t.h"
		fi
		echo "$config" > "$t/.configured"
	fi
	# LIBPOOL_INC and _LIB point at the build, whose libpool-embed.a needs what ADDLIB gives
	# shellcheck disable=SC2086
	$MAKE -C "$t" TARGET=linux-glibc USE_PCRE2=1 USE_PCRE2_JIT=1 USE_OPENSSL=1 USE_LUA=1 \
		LUA_INC=/usr/include/lua5.3 USE_PROMEX=1 CC="$CC" DEBUG_CFLAGS="$deb_cflags" \
		LDFLAGS="$deb_ldflags" $opts \
		${opts:+LIBPOOL_INC="$lib/include" LIBPOOL_LIB="$lib" LIBPOOL_LIB_NAME=:libpool-embed.a} \
		${opts:+ADDLIB="-lpthread -ldl -lm"} \
		> "$t/make.log" 2>&1 ||
		{ grep -E 'error|Error [0-9]' "$t/make.log" | head -n 20 >&2;
		  die "$v: make failed ($t/make.log)"; }
	case $v in
	pool) cp -f "$t/haproxy" "$out/haproxy" ;;
	stock) cp -f "$t/haproxy" "$out/haproxy-stock" ;;
	esac
	echo "haproxy build: $v in $t ($(($(date +%s) - t0)) s)"
done
