/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * What pool_create() checks and computes before it touches the pool list: a pool's name, its
 * object layout (stride, offsets of the debugging extras, the OS layer's size, the cost of a
 * cached object) and whether two sizes may merge. Pure functions of their arguments, which
 * take no lock; private header of the pool heads (pool.c).
 */
#ifndef POOL_SRC_POOL_LAYOUT_H
#define POOL_SRC_POOL_LAYOUT_H

#include <stddef.h>

#include "base/pool-head-t.h"

/* 1 when `name` is a valid pool name (1 to POOL_NAME_MAX of [A-Za-z0-9_.-]), else 0. */
int pool__name_valid(const char *name);

/*
 * Object layout for `size` usable bytes with the layout debugging flags `layout`:
 *   [object: max(size, 8)][tag: 8 bytes at offset max(size, 8)][caller: 8][backup: 8 + size]
 * rounded up to the alignment. The tag follows the object's last byte, so that an overflow of a
 * single byte reaches it (a free object holds nothing of the library's, so only objects under 8
 * bytes, with POOL_F_EXACT, keep padding before it). Under `malloc` nothing is rounded: each
 * object is a malloc block of exactly what it holds, so that a tool sees an overflow of a byte.
 * Writes the layout fields of `pool` (ro.size, stride, os_size, the offsets, cache_cost, align,
 * layout). Returns 0, or -1 when the layout exceeds POOL_SIZE_MAX.
 */
int pool__layout_compute(struct pool_head *pool, size_t size, size_t align, unsigned int layout);

/* 1 when pools of sizes `a` and `b` may merge: within 1% or 16 bytes of each other. */
int pool__sizes_mergeable(size_t a, size_t b);

#endif
