#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Writes <pool/libpool.h> on stdout: the public headers of include/pool/ (pool-t.h,
# pool-inline.h, pool.h, in that order, as one file) with every name they define spelled
# with the prefix: pool_x is libpool_x (functions, types, struct tags, enum constants,
# pool_debugging) and POOL_X is LIBPOOL_X (macros, include guards). Internal names (pool__,
# POOL__) stay: the inline functions of both headers read and call the same ones. What is a
# name is asked of the compiler: the macros `cc -E -dM` lists and the identifiers of the
# preprocessed text (so comments keep the names of environment variables, such as POOL_DEBUG),
# the names that conditionals test, and the prefixes that POOL_DECLARE pastes; a manual page
# reference, pool_create(3), is kept.
# The library exports each libpool_ function as an alias of its pool_ one (abi/libpool.map).
#   sh mk/prefixed-header.sh CC INCLUDE_DIR > libpool.h
set -eu
[ $# -eq 2 ] || { echo "usage: sh mk/prefixed-header.sh CC INCLUDE_DIR" >&2; exit 2; }
cc=$1
inc=$2
files="$inc/pool/pool-t.h $inc/pool/pool-inline.h $inc/pool/pool.h"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# shellcheck disable=SC2086
{
	$cc -E -dM -I"$inc" "$inc/pool/pool.h" | awk '$1 == "#define" { sub(/\(.*/, "", $2); print $2 }'
	$cc -E -P -I"$inc" "$inc/pool/pool.h" | grep -oE '[A-Za-z_][A-Za-z0-9_]*'
	cat $files | grep -oE '[A-Za-z_][A-Za-z0-9_]*##' | tr -d '#'
	cat $files | grep -E '^#[[:space:]]*(if|elif)' | grep -oE '[A-Za-z_][A-Za-z0-9_]*'
} | grep -E '^(pool|POOL)_[A-Za-z0-9]' | LC_ALL=C sort -u > "$tmp/names"
[ -s "$tmp/names" ] || { echo "mk/prefixed-header.sh: no name found in $inc/pool" >&2; exit 1; }

# One sed command per name (a pasted prefix, which ends in '_', also at the start of a longer
# word); a manual page reference is kept by a marker that the last command removes.
awk '{ rep = ($0 ~ /^pool_/ ? "lib" : "LIB") $0
       if ($0 ~ /_$/) { print "s/\\<" $0 "/" rep "/g"; next }
       print "s/\\<" $0 "(\\([1-8]\\))/LIBPOOLKEEP@" $0 "(\\1)/g"
       print "s/\\<" $0 "\\>/" rep "/g" }' "$tmp/names" > "$tmp/rename.sed"
# a family named in a comment (POOL_F_*)
printf '%s\n' 's/\<POOL_\([A-Z0-9_]*\*\)/LIBPOOL_\1/g; s/LIBPOOLKEEP@//g' >> "$tmp/rename.sed"

cat <<EOF
/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * <pool/libpool.h>: libpool's API with the libpool_ prefix, for programs that define pool_
 * names of their own (HAProxy defines pool_gc(), pool_flush(), struct pool_head...). Generated
 * by mk/prefixed-header.sh from <pool/pool-t.h>, <pool/pool-inline.h> and <pool/pool.h>: do not
 * edit. Every pool_x of those headers is libpool_x here and every POOL_X is LIBPOOL_X, with the
 * same contract (the comments below, and the manual pages of the pool_ names); names that
 * begin with pool__ or POOL__ are libpool's own in both. Include this header or <pool/pool.h>,
 * never both, and link libpool.so, which exports both sets of names (libpool(7), "Programs with
 * their own pool_ names").
 */
#ifdef POOL_POOL_H
#error "<pool/libpool.h> and <pool/pool.h> declare the same API: include one of them"
#endif
EOF
# shellcheck disable=SC2086
cat $files | grep -vE '^#include <pool/pool(-t|-inline)\.h>$' | sed -f "$tmp/rename.sed"
