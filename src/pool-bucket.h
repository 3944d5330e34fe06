/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The bucket tier: shared free lists (the BUSY protocol), per-bucket counters, the OS layer with
 * its accounting, limits, demand tracking and memory return. Private header: its callers are the
 * thread-cache tier (pool-tcache.c) and the pool heads (pool.c).
 */
#ifndef POOL_SRC_POOL_BUCKET_H
#define POOL_SRC_POOL_BUCKET_H

#include <stdint.h>

#include "pool-debug.h"
#include "pool-head-t.h"
#include "pool-san.h"

/* Pointer hash: the bucket of an object (Fibonacci hashing, Knuth TAOCP vol. 3, 6.4). */
static inline unsigned int pool__bucket_of(const struct pool_head *pool, const void *ptr)
{
	if (pool->nbuckets == 1)
		return 0;
	return (unsigned int)((((uintptr_t)ptr >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >>
	                      pool->bucket_shift);
}

/*
 * The link words of free objects (word 0: next in a cluster or a thread cache, word 1: down to
 * the next cluster), with the sanitizer annotations when they are on: a free object is poisoned
 * and the library unpoisons the word it reads or writes around the access.
 */
static inline void *pool__link_get(void *obj, unsigned int word)
{
	void **p = (void **)obj + word;
	void *v;

	if (pool__san_on()) {
		pool__san_access(p, sizeof(*p));
		v = *p;
		pool__san_noaccess(p, sizeof(*p));
		return v;
	}
	return *p;
}

static inline void pool__link_set(void *obj, unsigned int word, void *v)
{
	void **p = (void **)obj + word;

	if (pool__san_on()) {
		pool__san_access(p, sizeof(*p));
		*p = v;
		pool__san_noaccess(p, sizeof(*p));
		return;
	}
	*p = v;
}

/* Sums of a bucket counter over a pool (relaxed reads: stats and limits only). */
unsigned long pool__sum_allocated(const struct pool_head *pool);
unsigned long pool__sum_used(const struct pool_head *pool);
unsigned long pool__sum_needed(const struct pool_head *pool);
unsigned long pool__sum_failed(const struct pool_head *pool);
unsigned long pool__sum_shared_free(const struct pool_head *pool);

/* The cumulative traffic counters of struct pool_stats (shared lists, OS layer, gc). */
void pool__bucket_traffic(const struct pool_head *pool, struct pool_stats *st);

/* One allocation failed for the thread with registry id `id` (counted in its bucket). */
void pool__count_failed(struct pool_head *pool, unsigned int id);

/* `delta` objects of `pool` (the one at `obj`) start / stop being used. */
void pool__count_used(struct pool_head *pool, const void *obj, long delta);

/*
 * A new object from the OS layer (the use-after-free backend for a pool with the uaf layout),
 * counted as allocated and used. NULL at the pool's limit or when the OS layer has no memory.
 */
void *pool__os_get(struct pool_head *pool);

/*
 * Give a free object, already uncounted from used, back to the OS layer (under uaf: to the
 * quarantine, with `caller` as the freeing caller for reports; may be NULL).
 */
void pool__os_put(struct pool_head *pool, void *obj, const void *caller);

/* The number of objects in a cluster (its chain through word 0). */
unsigned int pool__cluster_length(struct pool_item *first);

/* Pop one cluster, visiting each bucket once from `start`; NULL if none could be had. */
struct pool_item *pool__shared_pop(struct pool_head *pool, unsigned int start);

/*
 * Push a cluster of `n` objects linked by word 0 (NULL: nothing) to the shared lists from bucket
 * `start`, or give it to the OS layer when every try met a BUSY head.
 */
void pool__push_or_release(struct pool_head *pool, struct pool_item *first, unsigned int n,
                           unsigned int start);

/*
 * Give back a list of free objects linked by word 0, each still counted as used. Each object is
 * checked when it comes `from_cache` (the backup copy; the integrity pattern too when
 * `integrity`), uncounted from used, then goes to the OS layer when its bucket holds more than
 * needed or the shared lists are bypassed, and otherwise into clusters pushed from `start`.
 */
void pool__release_list(struct pool_head *pool, void *list, unsigned int start, int from_cache,
                        int integrity);

/* pool_gc() of one pool: what the shared lists hold beyond the need goes to the OS layer. */
void pool__bucket_gc(struct pool_head *pool);

/* Every object of the shared lists goes to the OS layer (BUSY buckets are retried a while). */
void pool__bucket_flush(struct pool_head *pool);

/* pool_set_limit(): the cap and the exact count it is checked against. */
void pool__bucket_set_limit(struct pool_head *pool, size_t max_objects);

/* fork(): own every head before (waiting for holders), put them back after. */
void pool__bucket_fork_prepare(struct pool_head *pool);
void pool__bucket_fork_restore(struct pool_head *pool);

#endif
