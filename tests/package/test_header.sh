#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The public header as users compile it: a program that includes <pool/pool.h> alone and uses
# every inline function of the fast path compiles without a warning under the strict warnings a
# user's build may turn into errors, with the build's compiler: -Wall -Wextra -Wshadow
# -Wcast-align (=strict with gcc, which otherwise warns only on targets that trap) -Wcast-qual
# -Wstrict-prototypes -Wmissing-prototypes -Wredundant-decls -Wundef -Werror. The header made
# user code warn under -Wcast-align: the fast path's cast of a char pointer to the 32-byte
# aligned struct pool_tcache (issue 29). Runs in every build; needs only the compiler.
# Env (from make check): CC.
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
