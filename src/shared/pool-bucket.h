/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The bucket tier: magazines, shared free lists (the BUSY protocol), per-bucket counters, the OS
 * layer with its accounting and limits (pool-bucket.c), demand tracking and memory return
 * (pool-demand.c). Private header: its callers are the thread-cache tier (pool-thread.c,
 * pool-tcache.c, pool-magazine.c) and the pool heads (pool.c, pool-alloc.c, pool-stats.c).
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
 * Owner: do the bucket's books balance? Every change of `allocated` changes os_allocs,
 * os_releases or lost by as much, in the same ownership (the OS layer's moves, a release, a
 * flush, a fork() child's losses), so allocated == os_allocs - os_releases - lost holds for each
 * bucket at every give (modulo 2^64: a bucket's counts may wrap, their sums do not).
 */
static inline int pool__bucket_books_ok(const struct pool_bucket *b)
{
	return pool__own_get(&b->allocated) == pool__own_get(&b->os_allocs) -
	       pool__own_get(&b->os_releases) - pool__own_get(&b->lost);
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
 * shared lists, OS layer), and words of free objects that the tiers' own code read or wrote
 * while moving them. Magazines hold pointers, so only the debugging layer's fill and check of
 * cached objects (integrity, backup) add words; the budget is at most 1/cluster + a little per
 * object moved (doc/internals.md; tests/check_transfer.c).
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
 * The fields of struct pool_stats that the buckets count: allocated, used, needed_avg, failed,
 * shared_free and the cumulative traffic counters (shared lists, OS layer, gc, lost).
 */
void pool__bucket_stats(const struct pool_head *pool, struct pool_stats *st);

/*
 * `n` objects counted as used are lost to this process (a fork() child could not trust the
 * caches of a thread that did not follow it): they leave allocated and used and join lost.
 */
void pool__bucket_count_lost(struct pool_head *pool, unsigned long n, unsigned int start);

/* One allocation failed for the thread with registry id `id` (counted in its bucket). */
void pool__count_failed(struct pool_head *pool, unsigned int id);

/*
 * A new pool (its layout computed): its magazine capacity and starting depth from the
 * configured cluster and the thread budget (a pool of large objects gets smaller magazines,
 * and starts shallower still, pool-demand.c), its demand state (the window from decay_ms) and
 * its gc floor.
 */
void pool__bucket_init(struct pool_head *pool, unsigned int cluster, size_t cache_bytes,
                       unsigned int decay_ms);

/*
 * A destroyed pool: what pool__bucket_init() set up is torn down, and the buckets' empty
 * magazines are freed (their stacks are empty).
 */
void pool__bucket_fini(struct pool_head *pool);

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
/* The OS layer, with the accounting of every backend                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * Up to `want` (>= 1) objects from the tier below the shared lists (pool__slab_get(): whole line
 * groups of the densest slab, or for a pool off slabs objects from the OS layer one by one) into
 * out[0..], counted as used and as above the slabs in one move (near bucket `start`). Returns
 * how many: 0 at the pool's limit or when the OS layer has no memory, fewer than `want` near
 * the limit or when memory runs out midway.
 */
unsigned int pool__bucket_os_get(struct pool_head *pool, void **out, unsigned int want,
                                 unsigned int start);

/*
 * Give objs[0..n-1], counted as used until now, down to the tier below the shared lists: their
 * slabs (a slab wholly free goes back to the OS layer), or the OS layer for a pool off slabs
 * (under uaf: the quarantine, with `caller` as the freeing caller for reports; may be NULL).
 * Reads the pointer array and slab headers only: the objects are not touched.
 */
void pool__bucket_os_put(struct pool_head *pool, void *const *objs, unsigned int n,
                         unsigned int start, const void *caller);

/*
 * The counting half of pool__bucket_os_put(): `n` objects, counted as used until now, leave
 * `used`, `allocated` and the limit's count, as if given to the tier below, which the caller then
 * does itself (pool_free() of a pool of the `malloc` layout, whose free() must be its last call).
 */
void pool__bucket_os_uncount(struct pool_head *pool, unsigned int n, unsigned int start);

/*
 * For the release passes (pool-demand.c): these objects leave the shared tier, downward (the
 * objects that left the buckets' `allocated` leave the limit's count with
 * pool__limit_unreserve(), pool-limit.h); one free object, already uncounted, goes down (its
 * slab, or the OS layer, the uaf quarantine with `caller` for its report); the objects of a
 * stack of magazines (linked by `next`, uncounted) go down likewise and the magazines are freed.
 */
void pool__bucket_os_free(struct pool_head *pool, void *obj, const void *caller);
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
 * the OS layer. Either way the caller no longer owns the magazines (freed in the second case).
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
 * else into a new magazine; else (no memory, every head BUSY) to the OS layer.
 */
void pool__shared_put_one(struct pool_head *pool, void *obj, unsigned int start);

/*
 * Give `n` objects (objs[0..n-1], counted as used) to the shared lists in new magazines, or to
 * the OS layer when the shared lists are out of reach (no memory for a magazine, every head
 * BUSY). For callers holding pointers outside any magazine (pool_destroy()'s drain, a fork()
 * child, a bulk call giving back what it took).
 */
void pool__shared_put_array(struct pool_head *pool, void *const *objs, unsigned int n,
                            unsigned int start);

/*
 * A releaser (pool-release.c: its thread, or the program's pool_release_run()) is stepping now:
 * for two demand windows from now, pool__bucket_tick() leaves the windows to it, so that it
 * falls back to the slow paths only when no releaser has stepped for that long. _gone(): at
 * once (a fork() child, whose releaser thread did not follow it).
 */
void pool__bucket_releaser_seen(void);
void pool__bucket_releaser_gone(void);

/*
 * A step of memory return, for the releaser: with `end`, end the pool's demand window and count
 * what stayed unused through it beyond the floor (what the pool owes; needed_avg follows); then
 * give back up to *budget objects of what is owed (*budget drops by what was given), at most
 * 64 magazines per ownership of a head, BUSY heads skipped. Returns 1 when the pool still owes
 * objects, 0 when it owes none, -1 when another pass held the pool (nothing done).
 */
int pool__bucket_release_step(struct pool_head *pool, int end, unsigned long *budget);

/*
 * Called now and then from slow paths, when no releaser stepped for two windows: when the
 * pool's demand window (decay_ms) has ended, end it and count; then pay a bounded share of what
 * is owed (unless another thread holds the pool's pass).
 */
void pool__bucket_tick(struct pool_head *pool);

/*
 * pool_gc() of one pool: end the demand window now and give back every object of the shared
 * lists beyond the floor (pool->floor objects): the need is what is in use.
 */
void pool__bucket_gc(struct pool_head *pool);

/*
 * The releaser took a stack of magazines (`top` to `bottom` through `next`, `nobjs` objects
 * counted as used) from the cache of a thread idle through a whole window: push it to a shared
 * list (near bucket `start`) as objects unused through the window that is ending, so that the
 * count at its end finds them owed. When every head stays BUSY, as pool__push_mags().
 */
void pool__bucket_push_idle(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                            unsigned int nmags, unsigned int nobjs, unsigned int start);

/* Every object of the shared lists goes to the OS layer (BUSY buckets are retried a while). */
void pool__bucket_flush(struct pool_head *pool);

/*
 * pool_set_limit(): store the cap (any size_t; 0: none). Lock-free; the count it is checked
 * against is kept by every move to and from the OS layer, limit or not (pool-bucket.c).
 */
void pool__bucket_set_limit(struct pool_head *pool, size_t max_objects);

/*
 * fork(): own every head before, waiting a bounded time for each; after, the parent gives back
 * the heads it owns, and the child also resets each head it could not own (counted as lost).
 */
void pool__bucket_fork_prepare(struct pool_head *pool);
void pool__bucket_fork_parent(struct pool_head *pool);
void pool__bucket_fork_child(struct pool_head *pool);

#endif
