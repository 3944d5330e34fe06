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

/*
 * The fields of struct pool_stats that the buckets count: allocated, used, needed_avg, failed,
 * shared_free and the cumulative traffic counters (shared lists, OS layer, gc, lost).
 */
void pool__bucket_stats(const struct pool_head *pool, struct pool_stats *st);

/* One allocation failed for the thread with registry id `id` (counted in its bucket). */
void pool__count_failed(struct pool_head *pool, unsigned int id);

/* A new pool: its demand state (the window from decay_ms) and its gc floor. */
void pool__bucket_init(struct pool_head *pool, unsigned int decay_ms);

/* A destroyed pool: what pool__bucket_init() set up is torn down (its lists are empty). */
void pool__bucket_fini(struct pool_head *pool);

/*
 * Up to `want` (>= 1) new objects from the OS layer (the use-after-free backend for a pool with
 * the uaf layout), linked by word 0, counted as allocated and used in one move (near bucket
 * `start`); *got receives how many. NULL (and *got = 0) at the pool's limit or when the OS layer
 * has no memory; fewer than `want` near the limit or when memory runs out midway.
 */
void *pool__os_get(struct pool_head *pool, unsigned int want, unsigned int start,
                   unsigned int *got);

/*
 * Give `n` objects linked by word 0, counted as used until now, back to the OS layer (under
 * uaf: to the quarantine, with `caller` as the freeing caller for reports; may be NULL).
 */
void pool__os_put(struct pool_head *pool, void *list, unsigned int n, unsigned int start,
                  const void *caller);

/*
 * Split the first `n` objects of `list` (linked by word 0) into clusters of pool->cluster
 * objects stacked through their tagged down words, from *top to *bottom (whose down is left for
 * the push to set); *ncl receives the number of clusters. Touches each object once, to link it.
 * Returns what follows the n-th object of the list.
 */
void *pool__clusters_build(struct pool_head *pool, void *list, unsigned int n,
                           struct pool_item **top, struct pool_item **bottom, unsigned int *ncl);

/*
 * Pop up to `max_clusters` (>= 1) clusters of one bucket, visiting each bucket once from
 * `start`, with one exchange: their objects chained by word 0 (the first cluster's first object
 * first), *n their count, counted as used. NULL if none could be had.
 */
struct pool_item *pool__shared_pop(struct pool_head *pool, unsigned int start,
                                   unsigned int max_clusters, unsigned int *n);

/*
 * Push a stack of `nclusters` clusters (`top` to `bottom`, from pool__clusters_build()) holding
 * `nobjs` objects, uncounting them from used, with one exchange; 2 tries per bucket from
 * `start`. Returns 1, or 0 when every try met a BUSY head (nothing changed).
 */
int pool__shared_push(struct pool_head *pool, struct pool_item *top, struct pool_item *bottom,
                      unsigned int nobjs, unsigned int nclusters, unsigned int start);

/* pool__shared_push(), or, when every try met a BUSY head, the objects go to the OS layer. */
void pool__push_clusters(struct pool_head *pool, struct pool_item *top, struct pool_item *bottom,
                         unsigned int nobjs, unsigned int nclusters, unsigned int start);

/*
 * Push the first `n` objects of `list` (linked by word 0, counted as used) to the shared lists
 * as clusters, or give them to the OS layer when every try met a BUSY head.
 */
void pool__push_or_release(struct pool_head *pool, void *list, unsigned int n,
                           unsigned int start);

/*
 * Called now and then from slow paths: when the pool's demand window (decay_ms) has ended, end
 * it and run the release pass (unless another thread runs one).
 */
void pool__bucket_tick(struct pool_head *pool);

/*
 * pool_gc() of one pool: end the demand window, then give back what the shared lists held idle
 * through it, beyond the floor (pool->floor objects).
 */
void pool__bucket_gc(struct pool_head *pool);

/* Every object of the shared lists goes to the OS layer (BUSY buckets are retried a while). */
void pool__bucket_flush(struct pool_head *pool);

/*
 * pool_set_limit(): store the cap (any size_t; 0: none). Lock-free; the count it is checked
 * against is kept by every move to and from the OS layer, limit or not (pool-bucket.c).
 */
void pool__bucket_set_limit(struct pool_head *pool, size_t max_objects);

/*
 * Test hook (tests/check_limit.c): when not NULL, the limit's accounting calls it right after a
 * reservation (reserving = 1: the objects are not counted in `allocated` yet) and right before
 * an unreservation (reserving = 0: they are counted out of `allocated` already), the two places
 * where a pool_set_limit() from another thread could land between the steps of a move. NULL
 * outside that test; set it only while no other thread uses pools.
 */
extern void (*pool__limit_test_hook)(struct pool_head *pool, int reserving);

/*
 * fork(): own every head before, waiting a bounded time for each; after, the parent gives back
 * the heads it owns, and the child also resets each head it could not own (counted as lost).
 */
void pool__bucket_fork_prepare(struct pool_head *pool);
void pool__bucket_fork_parent(struct pool_head *pool);
void pool__bucket_fork_child(struct pool_head *pool);

#endif
