/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slab tier, under the shared free lists (pool-slab.c): where a pool's objects come from and
 * go back to, with the limit's count. Private header: its callers are the bucket tier
 * (pool-bucket.c, pool-demand.c), the pool heads (pool.c: creation, destruction, fork(), gc) and
 * the tests.
 */
#ifndef POOL_SRC_POOL_SLAB_H
#define POOL_SRC_POOL_SLAB_H

#include <stddef.h>
#include <stdint.h>
#include <pool/pool-t.h>

#include "base/pool-head-t.h"

/*
 * The largest object (os_size, bytes) kept in slabs: a slab holds 8 of them in 4 MiB (7 to 31
 * objects of a smaller size). Larger objects come from the OS layer one by one.
 */
#define POOL_SLAB_OBJ_MAX ((4096u * 1024u - 65536u) / 8u)

/*
 * Does `pool` keep its objects in slabs? The one place that decides it: a pool with the uaf
 * layout keeps its own mappings (one per object, pool-uaf.c), one with the malloc layout takes
 * each object from the C library's malloc() (pool-malloc.c, so that Valgrind and sanitizers see
 * it), and objects too large for a slab come from the OS layer one by one. Fixed once the pool
 * allocated (its layout no longer changes). A layout that takes objects elsewhere adds its test
 * here.
 */
static inline int pool__slab_on(const struct pool_head *pool)
{
	return !(pool->layout & (POOL_DBG_UAF | POOL_DBG_MALLOC)) &&
	       pool->os_size <= POOL_SLAB_OBJ_MAX;
}

/* A new pool: its slab tier, empty. */
void pool__slab_init(struct pool_head *pool);

/*
 * The slabs' geometry from the pool's layout (struct pool_slabs): its size, the offset of the
 * first object, the objects a slab holds (whole line groups), its bitmap, the division by the
 * stride. pool.c calls it under the pool list lock whenever it computes a layout, before the
 * pool's first allocation; nothing changes it afterwards, so the tier reads it without a lock.
 */
void pool__slab_geometry(struct pool_head *pool);

/*
 * A destroyed pool: every slab it still holds goes back to the OS layer (none holds an object in
 * use: pool_destroy() checked), and the tier's memory is freed.
 */
void pool__slab_fini(struct pool_head *pool);

/*
 * Up to `want` (>= 1) objects for the tier above, into out[0..n): from the densest slab that has
 * a wholly free line group, its free groups in address order (fresh slab space last), as many
 * whole groups as fit in `want` (one object when `want` is less than a group); a new slab from
 * the OS layer when none has one. out[] is filled in descending address order, so that a
 * magazine pops them in ascending order. The objects are reserved against the pool's limit
 * first (pool__limit_unreserve()), and near it the last ones may be single objects. For a pool
 * off slabs, objects from the OS layer one by one (the uaf backend for a uaf pool, malloc() for
 * a malloc pool). Returns n: 0 at the limit or when memory runs out, fewer than `want` near
 * either. Reads and writes slab headers only, never an object. The objects are not counted
 * anywhere above: the caller counts them.
 * `start` (the calling thread's id) picks its shard (struct pool_slab_shard): its own when
 * that lock is free, else the next free one; a shard whose heap is empty takes another's
 * given-back objects before it makes a slab.
 */
unsigned int pool__slab_get(struct pool_head *pool, void **out, unsigned int want,
                            unsigned int start);

/*
 * Objects the tier above counted out go back: each to its slab (a slab whose objects are then
 * all free goes back to the OS layer whole, at once), or for a pool off slabs to the OS layer
 * (under uaf to the quarantine, with `caller`, which may be NULL, for its report; under malloc
 * to free()). Reads the
 * pointers and slab headers, never an object. An object that is not one of the pool's, or is
 * free already, is reported and the process aborts (pool-report.h).
 */
void pool__slab_put(struct pool_head *pool, void *const *objs, unsigned int n,
                    const void *caller);

/* pool__slab_put() of the objects of a stack of magazines (linked by `next`), with one lock. */
void pool__slab_put_mags(struct pool_head *pool, const struct pool_mag *top, const void *caller);

/*
 * Slabs that hold no object carved and given out (fresh ones the limit or a race left unused)
 * go back to the OS layer: pool_gc() and pool_flush() call it, then pool__slab_purge().
 */
void pool__slab_trim(struct pool_head *pool);

/*
 * Memory back from slabs that still hold live objects: in each slab that objects came back to
 * since its last purge, the whole pages of every run of free objects go to the kernel
 * (pool__os_purge(), under the shard's lock, so that no thread takes one of those objects
 * meanwhile); a slab wholly free went back whole already. The objects stay free in their slab
 * and read as zero when next handed out (a page fault each page). The release passes (after
 * they gave objects back), pool_gc() and pool_flush() call it; never a fast or refill path.
 * The resident bytes given to the kernel (pool__os_purge()) are counted by the pool's shards
 * (pool_stats.slab_purged_bytes).
 */
void pool__slab_purge(struct pool_head *pool);

/*
 * The bytes of the pool's slabs resident now: mincore(2) over each slab, under its shard's lock
 * (one system call per slab: for `pools show`, never a fast or refill path). Pages purged and
 * not touched since are not resident; a pool off slabs has none (0). Takes the shards' locks.
 */
size_t pool__slab_resident(struct pool_head *pool);

/*
 * The slab tier's figures of struct pool_stats, after the buckets' (pool__bucket_stats()): its
 * only writer of os_allocs and os_releases, the objects that came into the pool from the OS
 * layer's memory and went back to it. On slabs: the objects carved, and those gone back with
 * their slab; `allocated` gains the objects free in the slabs, and the slab figures are filled.
 * Off slabs: slab_get_objects and slab_put_objects, since this tier takes each object from the
 * OS layer and gives it back there.
 */
void pool__slab_stats(const struct pool_head *pool, struct pool_stats *st);

/*
 * Tier 2 of the assertions (pool-assert.h): every slab of the heap checked against its bitmap
 * and the tier's counters, under the lock. pool_gc(), pool_flush() and pool_destroy() call it.
 */
void pool__slab_walk(struct pool_head *pool);

/* fork(): the shards' locks are taken before (in the lock order) and released after, in both. */
void pool__slab_fork_prepare(struct pool_head *pool);
void pool__slab_fork_after(struct pool_head *pool);

#endif
