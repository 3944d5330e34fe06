/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slab tier's own helpers, for its files (pool-slab.c, pool-geometry.c, pool-purge.c): the
 * size of a slab's header, where an object lies in its slab, and the shards' counters. Private
 * to src/slab/.
 */
#ifndef POOL_SRC_POOL_SLAB_INT_H
#define POOL_SRC_POOL_SLAB_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool-head-t.h"

/* Bytes of a slab's header with a bitmap of `words` words. */
static inline size_t pool__slab_header_bytes(uint32_t words)
{
	return sizeof(struct pool_slab) + (size_t)words * sizeof(uint64_t);
}

/* The first object of `slab`: past the header, shifted by the slab's color. */
static inline char *pool__slab_base(const struct pool_slabs *S, struct pool_slab *slab)
{
	return (char *)slab + S->first + (size_t)slab->color * S->color_unit;
}

/* Object `idx` of `slab`. */
static inline void *pool__slab_obj_at(const struct pool_head *pool, struct pool_slab *slab,
                                      uint32_t idx)
{
	return pool__slab_base(&pool->slabs, slab) + (size_t)idx * pool->slabs.step;
}

/*
 * A shard's counter `c` changes by `delta`: the shard's lock serialises the writers, so a plain
 * load and store; statistics read it relaxed.
 */
static inline void pool__slab_count(atomic_ulong *c, long delta)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (unsigned long)delta,
	                      memory_order_relaxed);
}

#endif
