/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The bucket tier (pool-bucket.c): magazines, shared free lists (the BUSY protocol), per-bucket
 * counters, the moves to and from the slab tier with their counts. Demand and memory return
 * have their own header, pool-demand.h. Private header: its callers are the thread-cache tier
 * (pool-thread.c, pool-tcache.c, pool-magazine.c), pool-demand.c and the pool heads (pool.c,
 * pool-alloc.c, pool-stats.c).
 */
#ifndef POOL_SRC_POOL_BUCKET_H
#define POOL_SRC_POOL_BUCKET_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/pool-assert.h"
#include "debug/pool-debug.h"
#include "base/pool-head-t.h"
#include "os/pool-san.h"

/* ------------------------------------------------------------------------------------------ */
/* Owning a bucket (the BUSY protocol: pool-bucket.c's essay)                                 */
/* ------------------------------------------------------------------------------------------ */

/* Take ownership of bucket `b`: its head (NULL or a stack), or POOL_BUSY if another owns it. */
static inline struct pool_mag *pool__bucket_own(struct pool_bucket *b)
{
	struct pool_mag *h = atomic_load_explicit(&b->free_list, memory_order_relaxed);

	if (h == POOL_BUSY)
		return POOL_BUSY;
	return atomic_exchange_explicit(&b->free_list, POOL_BUSY, memory_order_acquire);
}

/* Give ownership back with `head` as the new head (release: what we wrote is visible first). */
static inline void pool__bucket_give(struct pool_bucket *b, struct pool_mag *head)
{
	/* nobody else may have changed a head we own (no ABA; tests/model/busy.pml) */
	POOL_ASSERT(atomic_load_explicit(&b->free_list, memory_order_relaxed) == POOL_BUSY);
	atomic_store_explicit(&b->free_list, head, memory_order_release);
}

/* Owner-only counter update: a plain load and store, no read-modify-write. */
static inline void pool__own_add(atomic_ulong *c, unsigned long delta)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + delta,
	                      memory_order_relaxed);
}

static inline unsigned long pool__own_get(const atomic_ulong *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/*
 * Owner: `n` objects of bucket `b` go down to the slab tier (a move of pool-bucket.c, a release
 * step, a flush): they leave `allocated` and join slab_put_objects, which nothing else writes.
 */
static inline void pool__bucket_count_down(struct pool_bucket *b, unsigned long n)
{
	pool__own_add(&b->allocated, -n);
	pool__own_add(&b->slab_put_objects, n);
}

/*
 * Owner: do the bucket's books balance? Every change of `allocated` changes slab_get_objects,
 * slab_put_objects or lost by as much, in the same ownership (the moves to and from the slab
 * tier, a release, a flush, a fork() child's losses), so allocated == slab_get_objects -
 * slab_put_objects - lost holds for each bucket at every give (modulo 2^64: a bucket's counts
 * may wrap, their sums do not).
 */
static inline int pool__bucket_books_ok(const struct pool_bucket *b)
{
	return pool__own_get(&b->allocated) == pool__own_get(&b->slab_get_objects) -
	       pool__own_get(&b->slab_put_objects) - pool__own_get(&b->lost);
}

/* A count as a low-water mark: they saturate at 2^32 - 1. */
static inline uint32_t pool__clamp32(unsigned long v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/*
 * Owner: bring the bucket's low-water marks to the pool's demand window. low_cur, the least the
 * bucket held free since its last rotation, becomes low_prev; low_cur starts again from the
 * objects free now. Any pop or push rotates first, so low_cur covers every window since the last
 * rotation: one, or more when nothing was popped in the others.
 */
static inline void pool__bucket_sync(struct pool_head *pool, struct pool_bucket *b)
{
	unsigned int e = atomic_load_explicit(&pool->demand.epoch, memory_order_relaxed);

	if (e == atomic_load_explicit(&b->epoch, memory_order_relaxed))
		return;
	atomic_store_explicit(&b->low_prev, atomic_load_explicit(&b->low_cur, memory_order_relaxed),
	                      memory_order_relaxed);
	atomic_store_explicit(&b->low_cur, pool__clamp32(pool__own_get(&b->free_objects)),
	                      memory_order_relaxed);
	atomic_store_explicit(&b->epoch, e, memory_order_relaxed);
}

/*
 * Owner of bucket `b`, whose head was `head`: link the stack top..bottom (nmags magazines, nobjs
 * objects) above it and count the push. The caller then gives the bucket back with `top`.
 */
static inline void pool__bucket_push_owned(struct pool_head *pool, struct pool_bucket *b,
                                           struct pool_mag *head, struct pool_mag *bottom,
                                           unsigned int nmags, unsigned int nobjs)
{
	bottom->next = head;
	pool__bucket_sync(pool, b);
	pool__own_add(&b->free_objects, nobjs);
	pool__own_add(&b->put_objects, nobjs);
	pool__own_add(&b->put_clusters, nmags);
}


/*
 * The transfer budget's books, kept by builds with assertions (POOL_ASSERTS: make DEBUG=1 and
 * the sanitizer builds; elsewhere they stay 0): objects moved between the tiers (thread caches,
 * shared lists, slab tier), and words of free objects that the tiers' own code read or wrote
 * while moving them. Magazines hold pointers, so only the debugging layer's fill and check of
 * cached objects (integrity, backup) add words; the budget is at most 1/cluster + a little per
 * object moved (doc/internals.md; tests/shared/check_transfer.c).
 */
extern atomic_ulong pool__moved_objects;
extern atomic_ulong pool__touched_words;

static inline void pool__count_moved(unsigned long n)
{
	if (POOL_ASSERTS)
		atomic_fetch_add_explicit(&pool__moved_objects, n, memory_order_relaxed);
}

static inline void pool__count_touched(unsigned long words)
{
	if (POOL_ASSERTS)
		atomic_fetch_add_explicit(&pool__touched_words, words, memory_order_relaxed);
}

/*
 * Tier 2 of the assertions (pool-assert.h): bucket `b` of `pool`, owned by the caller with
 * `head` its stack, walked: the objects of its stack are its free_objects, each magazine holds
 * 1..cluster non-NULL pointers, its empty magazines are nempties, and its books balance. Costs
 * the stack's magazines, inside the BUSY window: pool_gc(), pool_flush() and pool_destroy() call
 * it, under `if (POOL_ASSERTS >= 2)`.
 */
void pool__bucket_walk(const struct pool_head *pool, const struct pool_bucket *b,
                       const struct pool_mag *head);

/* Sums of a bucket counter over a pool (relaxed reads: stats and limits only). */
unsigned long pool__sum_allocated(const struct pool_head *pool);
unsigned long pool__sum_used(const struct pool_head *pool);

/*
 * The fields of struct pool_stats that the buckets count: allocated, used, failed, shared_free
 * and the cumulative traffic counters (shared lists, slab_get_objects and slab_put_objects, gc,
 * lost); pool__slab_stats() fills the slab tier's after it, pool__demand_needed_avg()
 * needed_avg.
 */
void pool__bucket_stats(const struct pool_head *pool, struct pool_stats *st);

/*
 * `n` objects counted as used are lost to this process (a fork() child could not trust the
 * caches of a thread that did not follow it): they leave allocated and used and join lost.
 */
void pool__bucket_count_lost(struct pool_head *pool, unsigned long n, unsigned int start);

/* One allocation failed for the thread with registry id `id` (counted in its bucket). */
void pool__count_failed(struct pool_head *pool, unsigned int id);

/* ------------------------------------------------------------------------------------------ */
/* Magazines                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * A new empty magazine for `pool` (pool->cluster pointers, pool->mag_bytes bytes of metadata
 * from the OS layer), or NULL when out of memory. Its `next` and `prev` are NULL.
 */
struct pool_mag *pool__mag_new(const struct pool_head *pool);

/* Give a magazine's memory back (its objects, if any, must have gone elsewhere). NULL: no-op. */
void pool__mag_free(const struct pool_head *pool, struct pool_mag *m);

/* Free every magazine of a stack linked by `next` (their objects must have gone elsewhere). */
void pool__mag_free_stack(const struct pool_head *pool, struct pool_mag *top);

/* ------------------------------------------------------------------------------------------ */
/* The slab tier below, with the counts of every move to and from it                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * Up to `want` (>= 1) objects from the slab tier (pool__slab_get(): whole line groups of the
 * densest slab, or for a pool off slabs objects from the OS layer one by one) into out[0..],
 * counted as used and as above the slabs in one move (near bucket `start`). Returns how many:
 * 0 at the pool's limit or when the OS layer has no memory, fewer than `want` near the limit or
 * when memory runs out midway.
 */
unsigned int pool__bucket_slab_get(struct pool_head *pool, void **out, unsigned int want,
                                   unsigned int start);

/*
 * Give objs[0..n-1], counted as used until now, down to the slab tier: their slabs (a slab
 * wholly free goes back to the OS layer), or the OS layer for a pool off slabs (under uaf: the
 * quarantine, with `caller` as the freeing caller for reports; may be NULL). Reads the pointer
 * array and slab headers only: the objects are not touched.
 */
void pool__bucket_slab_put(struct pool_head *pool, void *const *objs, unsigned int n,
                           unsigned int start, const void *caller);

/*
 * One object that does not come from the slab tier (a sampled object, which lives in the
 * profile's region) counted as if it did: reserved against the limit, then counted as used and
 * as above the slabs (near bucket `start`). 1, or 0 at the limit (nothing counted).
 * pool__bucket_slab_uncount() counts it out.
 */
int pool__bucket_extra_get(struct pool_head *pool, unsigned int start);

/*
 * The counting half of pool__bucket_slab_put(): `n` objects, counted as used until now, leave
 * `used`, `allocated` and the limit's count, as if given to the tier below, which the caller then
 * does itself (pool_free() of a pool of the `malloc` layout, whose free() must be its last call).
 */
void pool__bucket_slab_uncount(struct pool_head *pool, unsigned int n, unsigned int start);

/*
 * The objects of a stack of magazines (linked by `next`), counted out of the buckets already
 * (and out of the limit's count, pool__limit_unreserve()), go down to the slab tier
 * (pool__slab_put_mags(), `caller` for uaf's report, may be NULL); the magazines are freed.
 */
void pool__bucket_release_mags(struct pool_head *pool, struct pool_mag *top, const void *caller);

/* Owner: take up to `want` empty magazines of bucket `b` onto the stack *empties. */
void pool__bucket_withdraw_empties(struct pool_bucket *b, unsigned int want,
                                   struct pool_mag **empties);

/* ------------------------------------------------------------------------------------------ */
/* Shared free lists (the BUSY protocol)                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * Pop up to `max_mags` (>= 1) magazines of one bucket with one exchange, visiting each bucket
 * once from `start` (again, a bounded number of times after pauses, while a pass met BUSY heads
 * only: pool-bucket.c): a stack linked by `next` (NULL-terminated), top first; *nobjs receives the
 * objects they hold, counted as used. The first magazine is taken whatever it holds, the others
 * while all of them hold at most `max_objs` objects (what the caller's budget holds). In the
 * same ownership the empty magazines of *empties (a stack linked by `next`) are left in that
 * bucket, up to its bound; those it could not take stay in *empties for the caller to free.
 * Reads one magazine header per magazine and no object.
 * NULL (and *nobjs = 0, *empties untouched) if no bucket had a magazine.
 */
struct pool_mag *pool__shared_pop(struct pool_head *pool, unsigned int start,
                                  unsigned int max_mags, unsigned int max_objs,
                                  struct pool_mag **empties, unsigned int *nobjs);

/*
 * Push a stack of `nmags` magazines (`top` to `bottom` through `next`; bottom's `next` is set
 * here) holding `nobjs` objects, uncounting them from used, with one exchange; 2 tries per
 * bucket from `start`. In the same ownership, up to `want_empties` empty magazines are taken
 * from that bucket's empties into *empties (a stack linked by `next`; may be NULL when
 * want_empties is 0). Returns 1, or 0 when every try met a BUSY head (nothing changed).
 */
int pool__shared_push(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                      unsigned int nmags, unsigned int nobjs, unsigned int start,
                      unsigned int want_empties, struct pool_mag **empties);

/*
 * pool__shared_push() without empties, or, when every try met a BUSY head, the objects go to
 * the slab tier. Either way the caller no longer owns the magazines (freed in the second case).
 */
void pool__push_mags(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                     unsigned int nmags, unsigned int nobjs, unsigned int start);

/*
 * One object for a thread without a cache: taken out of the top magazine of a bucket's stack
 * (an emptied magazine joins that bucket's empties), counted as used; NULL if every bucket was
 * empty, or BUSY through the passes pool__shared_pop() makes.
 */
void *pool__shared_get_one(struct pool_head *pool, unsigned int start);

/*
 * One object from a thread without a cache, counted as used until now: put into the top
 * magazine of a bucket's stack when it has room, or into one of the bucket's empty magazines;
 * else into a new magazine; else (no memory, every head BUSY) to the slab tier.
 */
void pool__shared_put_one(struct pool_head *pool, void *obj, unsigned int start);

/*
 * Give `n` objects (objs[0..n-1], counted as used) to the shared lists in new magazines, or to
 * the slab tier when the shared lists are out of reach (no memory for a magazine, every head
 * BUSY). For callers holding pointers outside any magazine (pool_destroy()'s drain, a fork()
 * child, a bulk call giving back what it took).
 */
void pool__shared_put_array(struct pool_head *pool, void *const *objs, unsigned int n,
                            unsigned int start);

/*
 * fork(): own every head before, waiting a bounded time for each; after, the parent gives back
 * the heads it owns, and the child also resets each head it could not own (counted as lost).
 */
void pool__bucket_fork_prepare(struct pool_head *pool);
void pool__bucket_fork_parent(struct pool_head *pool);
void pool__bucket_fork_child(struct pool_head *pool);

#endif
