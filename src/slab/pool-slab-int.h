/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slab tier's own helpers, for its files (pool-slab.c, pool-geometry.c, pool-purge.c,
 * pool-slab-map.c): the size of a slab's header, where an object lies in its slab, the map of
 * the slabs, and the shards' counters. Private to src/slab/.
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
 * The map of the process's slabs (pool-slab-map.c): does a slab of some pool start at `slab`
 * (an address aligned on 16 KiB, as every slab is)?
 * A slab is added once made, before any of its objects is handed out (0, or -1 when the map
 * cannot grow: out of memory, or an address above 2^48), and removed before it goes back to
 * the OS layer. No lock; the lookup, inline, reads two words.
 */
#define POOL_SLAB_MAP_GRAIN_BITS 14u       /* log2 of the smallest slab: slabs start on 16 KiB */
#define POOL_SLAB_MAP_LEAF_BITS  18u       /* grains per leaf: 4 GiB of addresses */
#define POOL_SLAB_MAP_ADDR_BITS  48u       /* the user address space the map covers */

typedef _Atomic uint64_t pool__slab_map_leaf[(1u << POOL_SLAB_MAP_LEAF_BITS) / 64u];
extern pool__slab_map_leaf *_Atomic pool__slab_map_top[];

int pool__slab_map_add(const void *slab);
void pool__slab_map_remove(const void *slab);

static inline int pool__slab_map_has(const void *slab)
{
	uintptr_t a = (uintptr_t)slab, g = a >> POOL_SLAB_MAP_GRAIN_BITS;
	pool__slab_map_leaf *leaf;

	if (a >> POOL_SLAB_MAP_ADDR_BITS)
		return 0;
	leaf = atomic_load_explicit(&pool__slab_map_top[g >> POOL_SLAB_MAP_LEAF_BITS],
	                            memory_order_acquire);
	return leaf && ((atomic_load_explicit(&(*leaf)[(g >> 6) & ((1u << (POOL_SLAB_MAP_LEAF_BITS -
	                6)) - 1)], memory_order_relaxed) >> (g & 63)) & 1);
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
