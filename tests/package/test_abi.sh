#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The ABI of libpool.so: the version script abi/libpool.map lists exactly the names marked
# POOL_API in include/pool/ (functions and data) and LIBPOOL_API in the <pool/libpool.h> the
# build made from them ($BUILD/include/pool/), and the symbols the built library exports,
# with their version node, are exactly those of abi/libpool.symbols (after a deliberate change:
# make abi-symbols). The abidiff comparison with the release baselines is `make abi-check` (CI).
# Env (from make check): BUILD, VERSION.
set -u
BUILD=${BUILD:?BUILD must be set}
version=${VERSION:?VERSION must be set}
lib=$BUILD/libpool.so.$version
[ -e "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

# POOL_API names: a declaration starts with POOL_API and the name precedes '(' (a function) or
# ends it (data, possibly before attributes).
[ -e "$BUILD/include/pool/libpool.h" ] || { echo "FAIL: $BUILD/include/pool/libpool.h not built"; exit 1; }
sed -n 's/^\(LIB\)\{0,1\}POOL_API .*[ *]\([a-z_][a-z0-9_]*\)(.*/\2/p; s/^\(LIB\)\{0,1\}POOL_API extern .*[ *]\([a-z_][a-z0-9_]*\)\( *__attribute__.*\)\{0,1\};\{0,1\}$/\2/p' \
	include/pool/*.h "$BUILD/include/pool/libpool.h" | sort -u > "$tmp/api"
sed -e 's|/\*.*\*/||' -e '/\/\*/,/\*\//d' abi/libpool.map |
	awk '/global:/ { on = 1; next } /local:/ || /^}/ { on = 0 } on && /;/ { gsub(/[ \t;]/, ""); if ($0 != "") print }' |
	sort -u > "$tmp/map"
[ -s "$tmp/api" ] || { echo "FAIL: no POOL_API declaration found"; exit 1; }
if ! diff "$tmp/api" "$tmp/map" > "$tmp/d1"; then
	echo "FAIL: abi/libpool.map and the POOL_API declarations of include/pool/ differ"
	echo "  (< only POOL_API, > only in the map):"; cat "$tmp/d1"; fail=1
fi

sh mk/abi-symbols.sh "$lib" "$version" abi/libpool.symbols > "$tmp/symbols" || exit 1
if ! diff -u abi/libpool.symbols "$tmp/symbols"; then
	echo "FAIL: the symbols $lib exports differ from abi/libpool.symbols;"
	echo "  after a deliberate ABI change: make abi-symbols (and see abi/libpool.map)"
	fail=1
fi
# each libpool_ name is its pool_ name's function (the default version of it)
nm -D --defined-only --with-symbol-versions "$lib" |
	awk '$NF !~ /@@/ { next } { n = $NF; sub(/@@.*/, "", n); a[n] = $1 }
	     END { for (n in a) if (n ~ /^libpool_/) { p = substr(n, 4)
	               if (a[p] != a[n]) print n " is at " a[n] ", " p " at " (p in a ? a[p] : "none") } }' \
	> "$tmp/alias"
if [ -s "$tmp/alias" ]; then
	echo "FAIL: libpool_ names that are not their pool_ function:"; cat "$tmp/alias"; fail=1
fi
[ $fail -eq 0 ] || exit 1
echo "ABI: $(wc -l < "$tmp/map") names in abi/libpool.map = POOL_API; exports = abi/libpool.symbols;" \
	"$(grep -c ' libpool_' abi/libpool.symbols) libpool_ names alias their pool_ functions"
