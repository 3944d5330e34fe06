#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The public header as users compile it: a program that includes <pool/pool.h> alone and uses
# every inline function of the fast path compiles without a warning under the strict warnings a
# user's build may turn into errors, with the build's compiler: -Wall -Wextra -Wshadow
# -Wcast-align (=strict with gcc, which otherwise warns only on targets that trap) -Wcast-qual
# -Wstrict-prototypes -Wmissing-prototypes -Wredundant-decls -Wundef -Werror. The header made
# user code warn under -Wcast-align: the fast path's cast of a char pointer to the 32-byte
# aligned struct pool_tcache (issue 29). The same for <pool/libpool.h>, the API under the
# libpool_ prefix that the build makes from the headers (mk/prefixed-header.sh), which must
# also leave a program every pool_ and POOL_ name: it defines none (no macro, no identifier in
# the preprocessed text), and each LIBPOOL_ macro has its POOL_ twin's definition. Runs in
# every build; needs only the compiler. Env (from make check): CC, BUILD.
set -u
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
cc=${CC:-cc}
cat > "$tmp/user.c" <<'PROG'
#include <pool/pool.h>

void *user_objects(struct pool_head *p);

void *user_objects(struct pool_head *p)
{
	void *a = pool_alloc(p), *b = pool_zalloc(p);
	void *c = pool_alloc_flags(p, POOL_F_NO_POISON);

	pool_free(p, a);
	pool_free(p, b);
	return c;
}
PROG
align=-Wcast-align
case "$($cc --version 2>/dev/null | head -n 1)" in
*clang*) ;;
*) align=-Wcast-align=strict ;;
esac
flags="-std=gnu11 -O2 -Wall -Wextra -Wshadow $align -Wcast-qual -Wstrict-prototypes \
-Wmissing-prototypes -Wredundant-decls -Wundef -Werror"
echo "$cc $flags -Iinclude -c user.c"
# shellcheck disable=SC2086
if ! $cc $flags -Iinclude -c -o "$tmp/user.o" "$tmp/user.c"; then
	echo "FAIL: <pool/pool.h> makes user code warn (above)"
	exit 1
fi
echo "<pool/pool.h> compiles warning-free under $align and the other strict warnings"

prefixed=${BUILD:?BUILD must be set}/include
[ -f "$prefixed/pool/libpool.h" ] || { echo "FAIL: $prefixed/pool/libpool.h not built"; exit 1; }
sed -e 's|<pool/pool.h>|<pool/libpool.h>|' -e 's/\<pool_/libpool_/g' -e 's/\<POOL_/LIBPOOL_/g' \
	"$tmp/user.c" > "$tmp/user-prefixed.c"
echo "$cc $flags -I$prefixed -c user-prefixed.c"
# shellcheck disable=SC2086
if ! $cc $flags -I"$prefixed" -c -o "$tmp/user-prefixed.o" "$tmp/user-prefixed.c"; then
	echo "FAIL: <pool/libpool.h> makes user code warn (above)"
	exit 1
fi
echo '#include <pool/libpool.h>' > "$tmp/only.c"
$cc -E -dM -I"$prefixed" "$tmp/only.c" > "$tmp/macros" &&
	$cc -E -P -I"$prefixed" "$tmp/only.c" > "$tmp/text" ||
	{ echo "FAIL: <pool/libpool.h> does not preprocess"; exit 1; }
left=$({ awk '$1 == "#define" { print $2 }' "$tmp/macros"; grep -oE '[A-Za-z_][A-Za-z0-9_]*' "$tmp/text"; } |
	grep -E '^(pool|POOL)_[A-Za-z0-9]' | sort -u | tr '\n' ' ')
if [ -n "$left" ]; then
	echo "FAIL: <pool/libpool.h> defines names a program may own: $left"
	exit 1
fi
# each LIBPOOL_ macro as <pool/pool.h> defines its POOL_ twin, the prefix aside
printf '#include <pool/pool.h>\n' > "$tmp/plain.c"
$cc -E -dM -Iinclude "$tmp/plain.c" | grep -E '^#define POOL_[A-Za-z0-9]' |
	sed -e 's/\<pool_\([a-z0-9]\)/libpool_\1/g' -e 's/\<POOL_\([A-Za-z0-9]\)/LIBPOOL_\1/g' |
	sort > "$tmp/want"
grep -E '^#define LIBPOOL_' "$tmp/macros" | sort > "$tmp/got"
if ! diff "$tmp/want" "$tmp/got" > "$tmp/diff"; then
	echo "FAIL: the macros of <pool/libpool.h> differ from <pool/pool.h>'s, prefix aside:"
	cat "$tmp/diff"
	exit 1
fi
echo "<pool/libpool.h> compiles warning-free, defines no pool_ or POOL_ name, and its" \
	"$(wc -l < "$tmp/got") LIBPOOL_ macros are <pool/pool.h>'s"
