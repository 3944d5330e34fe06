/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Demand and memory return, the bucket tier's second half: a pool's magazine size and gc floor
 * (set when it is created), its demand windows (decay_ms, after jemalloc's dirty_decay_ms), each
 * bucket's low-water marks over them, needed_avg, and what goes back to the slab tier: the
 * window's end, which counts what stayed unused through it (what the pool owes), the steps that
 * pay it back, pool_gc() (which ends the window at once and gives back everything above the
 * need), pool_flush(). doc/internals.md, 8.2 "Demand over time", has the measurements.
 *
 * Who ends the windows: the releaser (pool-release.c: a library thread, or the program's calls
 * of pool_release_run()), and a slow path now and then when no releaser stepped for two windows
 * (pool__demand_tick()). A window's end only counts; the payment is made in steps of a bounded
 * number of objects, each ownership of a head detaching at most AUTO_MAGS_PER_TURN magazines, so
 * that no BUSY window and no caller is held long, and the steps go on until what is owed is paid:
 * the rate follows the debt, not a count per pass.
 *
 * Every bucket is changed only by the owner of its head (the BUSY protocol of pool-bucket.c);
 * window ends and payments are serialised by the pool's pass lock, only tried by the releaser
 * and the slow paths, taken by pool_gc(). A payment detaches whole magazines inside a BUSY window
 * (reading their headers, and splitting at most one by copying part of its pointer array) and
 * gives their objects to the slab tier after giving the head back: it reads no free object.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "shared/pool-demand.h"
#include "slab/pool-limit.h"
#include "slab/pool-slab.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"

#define FLUSH_BUSY_TRIES      100000u   /* pool_flush()/pool_gc() wait this many yields per head */
#define AUTO_MAGS_PER_TURN    64u       /* magazines an automatic payment detaches per ownership
                                           of a head (a few microseconds of BUSY window) */
#define GC_MAGS_PER_TURN      1024u     /* ... and pool_gc(), which has the caller's time */
#define TICK_PAY_OBJS         2048u     /* objects a slow path's tick pays at most (no releaser) */
#define GC_FLOOR_BYTES        65536u    /* pool_gc() keeps at most this much beyond the need */
#define EMPTIES_KEEP          4u        /* empty magazines a release pass leaves a bucket */
/*
 * How deep a slot's loaded magazine starts: at most 1/MAG_BUDGET_SHARE of the thread budget in
 * objects. A thread keeps a loaded and a previous magazine per pool it uses, and the loaded one
 * counts in the budget by its depth, so a pool of large objects (16 KiB buffers under a 512 KiB
 * budget: 2 objects) starts shallow rather than filling the budget with two magazines.
 */
#ifndef MAG_BUDGET_SHARE                /* a -D for measurements */
#define MAG_BUDGET_SHARE      16u
#endif
/*
 * ... but at least MAG_FLOOR_OBJS objects while that is at most 1/MAG_FLOOR_SHARE of the
 * budget: magazines sized in bytes, with a floor in objects. A 16 KiB pool under a 512 KiB
 * budget gets magazines of 8 rather than 2: a rotation (a slow path of about 150 to 250
 * instructions) every 8 objects, not every 2 (callgrind, `batch` at 16 KiB: 41 million
 * instructions for 220,000 pairs, 148 million with 2). Idle, such a slot is the CLOCK's first
 * victim, so its reservation does not stay.
 */
#define MAG_FLOOR_OBJS        8u
#define MAG_FLOOR_SHARE       4u
/*
 * The magazines themselves hold up to 1/MAG_DEEP_SHARE of the budget (at most the configured
 * cluster): a slot that fills its loaded magazine while the budget has room to spare, without
 * evicting anything, gets it deeper (pool-magazine.c, deepen()), as tcmalloc's thread cache
 * lets a free list's max_length grow by a batch at each overflow. With a 2 MiB budget a 16 KiB
 * pool starts at 8 and goes to 32: rotated every 8 objects, `batch` at 16 KiB (64 objects live)
 * takes 1.9 times as long as a thread cache without magazines. A fixed depth of 1/4 of the
 * budget costs the `server` rows 5-20% under a 512 KiB budget, where the large pools' loaded
 * magazines crowd out the small ones.
 */
#ifndef MAG_DEEP_SHARE
#define MAG_DEEP_SHARE        4u
#endif

/* When a releaser last stepped (CLOCK_MONOTONIC_COARSE ns), 0: never; the slow paths' ticks
   defer to it. */
static _Atomic uint64_t releaser_seen_ns;

/*
 * Owner: what bucket `b` may give back now of what stayed unused through the ended window: the
 * least it held since then and still holds. Its marks at the pool's epoch (a pop, a push or the
 * count rotated them since the window ended): low_prev is the ended window's least, low_cur the
 * least since; behind the epoch, low_cur spans the whole ended window (nothing popped or pushed
 * here since its last rotation, which was the first move of an earlier window, so what it counts
 * lay here through all of it).
 */
static unsigned long bucket_idle_now(const struct pool_head *pool, const struct pool_bucket *b)
{
	unsigned int e = atomic_load_explicit(&pool->demand.epoch, memory_order_relaxed);
	unsigned long lc = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
	unsigned long lp = atomic_load_explicit(&b->low_prev, memory_order_relaxed);

	if (e != atomic_load_explicit(&b->epoch, memory_order_relaxed))
		return lc;
	return lp < lc ? lp : lc;
}

/*
 * Owner: detach up to `want` objects, at most `max_mags` magazines, from the top of bucket `b`'s
 * stack: whole magazines, and when the last one holds more than what is left to take, the
 * pointers of its last objects are copied into split[] (at most POOL_CLUSTER_MAX) and *nsplit
 * receives their number. The detached magazines are returned as a stack linked by `next`;
 * *took gets the objects detached in all. Reads magazine headers and, for the split, part of
 * one pointer array; no object. The bucket's counters lose them (free, allocated, both marks)
 * and slab_put_objects gains them.
 */
static struct pool_mag *bucket_detach(struct pool_bucket *b, struct pool_mag **head,
                                      unsigned long want, unsigned long max_mags,
                                      void **split, unsigned int *nsplit, unsigned long *took)
{
	struct pool_mag *h = *head, *top = NULL, *last = NULL;
	unsigned long n = 0, nm = 0;

	*nsplit = 0;
	while (h && nm < max_mags && n < want) {
		if (n + h->n > want) {
			unsigned int r = (unsigned int)(want - n);

			h->n -= r;
			memcpy(split, &h->obj[h->n], r * sizeof(*split));
			*nsplit = r;
			n += r;
			break;
		}
		n += h->n;
		nm++;
		if (last)
			last->next = h;
		else
			top = h;
		last = h;
		h = h->next;
	}
	*took = n;
	if (!n)
		return NULL;
	if (last)
		last->next = NULL;
	*head = h;
	{
		uint32_t lc = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
		uint32_t lp = atomic_load_explicit(&b->low_prev, memory_order_relaxed);

		/* they were idle through the window: the marks lose them as well */
		POOL_ASSERT(pool__own_get(&b->free_objects) >= n);
		pool__own_add(&b->free_objects, -n);
		atomic_store_explicit(&b->low_cur, lc > n ? lc - (uint32_t)n : 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, lp > n ? lp - (uint32_t)n : 0,
		                      memory_order_relaxed);
	}
	pool__bucket_count_down(b, n);
	POOL_ASSERT(pool__bucket_books_ok(b));
	return top;
}

/*
 * Give back the objects of a detached stack of magazines and of split[] (uncounted by
 * bucket_detach()), and free the magazines.
 */
static void release_detached(struct pool_head *pool, struct pool_mag *top, void *const *split,
                             unsigned int nsplit, unsigned long n)
{
	unsigned int i;

	pool__limit_unreserve(pool, (unsigned int)n);
	pool__count_moved(n);
	for (i = 0; i < nsplit; i++)
		pool__slab_put(pool, &split[i], 1, NULL);
	pool__bucket_release_mags(pool, top, NULL);
	atomic_fetch_add_explicit(&pool->demand.gc_released_bytes, n * pool->stride,
	                          memory_order_relaxed);
}

/*
 * Owner: the bucket's empty magazines beyond `keep` are taken off it; returned as a stack for
 * the caller to free after the window.
 */
static struct pool_mag *trim_empties(struct pool_bucket *b, unsigned int keep)
{
	unsigned int ne = atomic_load_explicit(&b->nempties, memory_order_relaxed);
	struct pool_mag *out = NULL;

	if (ne > keep)
		pool__bucket_withdraw_empties(b, ne - keep, &out);
	return out;
}

/*
 * Own bucket `b` for a pass: an automatic pass skips a BUSY head, pool_gc() waits a while.
 * Returns the head, or POOL_BUSY.
 */
static struct pool_mag *pass_own(struct pool_bucket *b, int gc)
{
	struct pool_mag *head = POOL_BUSY;
	unsigned int tries;

	for (tries = 0; tries < (gc ? FLUSH_BUSY_TRIES : 1); tries++) {
		head = pool__bucket_own(b);
		if (head != POOL_BUSY)
			break;
		sched_yield();
	}
	return head;
}

/*
 * The count at a window's end (the caller ended it and holds the pass lock): every bucket tells
 * what stayed free through the whole window and its marks rotate; what stayed free beyond a floor
 * for the pool (pool->floor objects, or its reserve if more) is owed to the slab tier, and
 * needed_avg becomes what the pool held minus it. What is paid is at most what is owed and what
 * stayed free is still free, so the shared lists keep the floor. One exchange per bucket, which
 * also trims the bucket's empty magazines to EMPTIES_KEEP. An automatic count skips BUSY buckets
 * (they owe nothing this window). `gc`: pool_gc(), which waits for BUSY heads a while, counts
 * everything free now (its need is what is in use) and keeps the reserve but no floor: the
 * objects a floor keeps are whichever the payment left last, one or two in each of as many
 * slabs, which then cannot go back (after a soak, 4-6 MB for a few dozen objects); the next
 * refill takes from the densest slab instead.
 */
static void count_round(struct pool_head *pool, int gc)
{
	size_t keep = atomic_load_explicit(&pool->reserve, memory_order_relaxed);
	unsigned long idle = 0, alloc;
	unsigned int i;

	POOL_ASSERT(pool__lock_held(&pool->demand.pass_lock));
	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *head = pass_own(b, gc), *extra;
		unsigned long f;

		if (head == POOL_BUSY)
			continue;
		if (POOL_ASSERTS >= 2 && gc)
			pool__bucket_walk(pool, b, head);
		f = pool__own_get(&b->free_objects);
		pool__bucket_sync(pool, b);
		if (gc) {
			/* everything free counts: its marks too, so that the payment may take it */
			atomic_store_explicit(&b->low_prev, pool__clamp32(f), memory_order_relaxed);
			atomic_store_explicit(&b->low_cur, pool__clamp32(f), memory_order_relaxed);
			idle += f;
		} else {
			idle += bucket_idle_now(pool, b);
		}
		extra = trim_empties(b, EMPTIES_KEEP);
		pool__bucket_give(b, head);
		pool__mag_free_stack(pool, extra);
	}
	alloc = pool__sum_allocated(pool);
	atomic_store_explicit(&pool->demand.need, alloc > idle ? alloc - idle : 0,
	                      memory_order_relaxed);
	if (!gc && keep < pool->floor)
		keep = pool->floor;
	atomic_store_explicit(&pool->demand.owed, idle > keep ? idle - keep : 0,
	                      memory_order_relaxed);
}

/*
 * Pay what the pool owes, up to *budget objects (lowered by what was paid), under the pass
 * lock: from each bucket, what it may give back now (bucket_idle_now(), which a pop since the
 * count lowered), in turns of at most AUTO_MAGS_PER_TURN magazines per ownership of its head
 * (GC_MAGS_PER_TURN for pool_gc(), which also waits for BUSY heads). What is owed drops to 0 once
 * a sweep finds nothing more to take and skipped no BUSY head: the objects it counted were taken
 * by threads meanwhile. Returns the objects still owed.
 */
static unsigned long pay(struct pool_head *pool, int gc, unsigned long *budget)
{
	unsigned long owed = atomic_load_explicit(&pool->demand.owed, memory_order_relaxed);
	void *split[POOL_CLUSTER_MAX];
	unsigned int i, skipped = 0;

	POOL_ASSERT(pool__lock_held(&pool->demand.pass_lock));
	for (i = 0; owed && *budget && i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];

		while (owed && *budget) {
			struct pool_mag *head = pass_own(b, gc), *top;
			unsigned long take, took = 0, can;
			unsigned int nsplit;

			if (head == POOL_BUSY) {
				skipped = 1;
				break;
			}
			can = bucket_idle_now(pool, b);
			take = owed < can ? owed : can;
			if (take > *budget)
				take = *budget;
			top = bucket_detach(b, &head, take, gc ? GC_MAGS_PER_TURN : AUTO_MAGS_PER_TURN,
			                    split, &nsplit, &took);
			pool__bucket_give(b, head);
			if (!took)
				break;
			release_detached(pool, top, split, nsplit, took);
			owed -= took;
			*budget -= took;
		}
	}
	if (i == pool->nbuckets && !skipped && *budget)
		owed = 0;
	atomic_store_explicit(&pool->demand.owed, owed, memory_order_relaxed);
	return owed;
}

/* End the current demand window: the epoch moves and every bucket's marks follow lazily. */
static void end_window(struct pool_head *pool, uint64_t now)
{
	atomic_store_explicit(&pool->demand.epoch_ns, now, memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->demand.epoch, 1, memory_order_relaxed);
}

void pool__demand_init(struct pool_head *pool, unsigned int cluster, size_t cache_bytes,
                       unsigned int decay_ms)
{
	size_t share = cache_bytes / MAG_BUDGET_SHARE / pool->cache_cost;
	size_t most = cache_bytes / MAG_FLOOR_SHARE / pool->cache_cost;
	size_t deep = cache_bytes / MAG_DEEP_SHARE / pool->cache_cost;
	size_t floor_objs;

	POOL_ASSERT(cluster >= 1 && cluster <= POOL_CLUSTER_MAX && pool->stride && pool->cache_cost);
	if (share < MAG_FLOOR_OBJS)
		share = most < MAG_FLOOR_OBJS ? (most > share ? most : share) : MAG_FLOOR_OBJS;
	pool->depth = share < cluster ? (share ? (unsigned int)share : 1) : cluster;
	pool->cluster = deep < cluster ? (unsigned int)deep : cluster;
	if (pool->cluster < pool->depth)
		pool->cluster = pool->depth;
	pool->mag_bytes = sizeof(struct pool_mag) + (size_t)pool->cluster * sizeof(void *);
	/* the floor is bytes: a pool of objects over 64 KiB keeps none beyond its need */
	floor_objs = GC_FLOOR_BYTES / pool->stride;
	pool->floor = floor_objs < pool->depth ? (unsigned int)floor_objs : pool->depth;
	pool__lock_init(&pool->demand.pass_lock);
	pool->demand.window_ns = (uint64_t)decay_ms * 1000000u;
	atomic_store(&pool->demand.epoch_ns, pool__clock_ns(CLOCK_MONOTONIC_COARSE));
}

void pool__demand_fini(struct pool_head *pool)
{
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *head = pass_own(b, 1), *extra;

		/* owned: a thread racing the destruction (forbidden) cannot be taking one */
		if (head == POOL_BUSY)
			continue;
		if (POOL_ASSERTS >= 2)
			pool__bucket_walk(pool, b, head);
		extra = trim_empties(b, 0);
		pool__bucket_give(b, head);
		pool__mag_free_stack(pool, extra);
	}
	pool__lock_destroy(&pool->demand.pass_lock);
}

void pool__demand_releaser_seen(void)
{
	atomic_store_explicit(&releaser_seen_ns, pool__clock_ns(CLOCK_MONOTONIC_COARSE),
	                      memory_order_relaxed);
}

void pool__demand_releaser_gone(void)
{
	atomic_store_explicit(&releaser_seen_ns, 0, memory_order_relaxed);
}

int pool__demand_release_step(struct pool_head *pool, int end, unsigned long *budget)
{
	unsigned long owed, before = *budget, paid;

	if (pool__lock_try(&pool->demand.pass_lock) != 0)
		return -1;
	if (end) {
		end_window(pool, pool__clock_ns(CLOCK_MONOTONIC_COARSE));
		count_round(pool, 0);
	}
	owed = atomic_load_explicit(&pool->demand.owed, memory_order_relaxed);
	if (owed && *budget)
		owed = pay(pool, 0, budget);
	paid = before - *budget;
	pool__unlock(&pool->demand.pass_lock);
	if (paid)
		pool__slab_purge(pool);
	return owed != 0;
}

void pool__demand_tick(struct pool_head *pool)
{
	uint64_t now = pool__clock_ns(CLOCK_MONOTONIC_COARSE), begun;
	unsigned long budget = TICK_PAY_OBJS;
	int ended;

	/* a releaser stepped within two windows: the windows are its */
	if (now - atomic_load_explicit(&releaser_seen_ns, memory_order_relaxed) <
	    2 * pool->demand.window_ns)
		return;
	begun = atomic_load_explicit(&pool->demand.epoch_ns, memory_order_relaxed);
	ended = now - begun >= pool->demand.window_ns;
	if (!ended && !atomic_load_explicit(&pool->demand.owed, memory_order_relaxed))
		return;
	if (pool__lock_try(&pool->demand.pass_lock) != 0)
		return;
	/* another thread may have ended this window while we took the lock */
	if (ended && atomic_load_explicit(&pool->demand.epoch_ns, memory_order_relaxed) == begun) {
		end_window(pool, now);
		count_round(pool, 0);
	}
	if (atomic_load_explicit(&pool->demand.owed, memory_order_relaxed))
		pay(pool, 0, &budget);
	pool__unlock(&pool->demand.pass_lock);
	if (budget < TICK_PAY_OBJS)
		pool__slab_purge(pool);
}

void pool__demand_gc(struct pool_head *pool)
{
	unsigned long budget = ULONG_MAX;

	pool__lock(&pool->demand.pass_lock);
	end_window(pool, pool__clock_ns(CLOCK_MONOTONIC_COARSE));
	count_round(pool, 1);
	pay(pool, 1, &budget);
	pool__unlock(&pool->demand.pass_lock);
}

void pool__demand_push_idle(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                            unsigned int nmags, unsigned int nobjs, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1, i;

	POOL_ASSERT(nmags >= 1 && top && bottom && nobjs >= nmags);
	for (i = 0; i < 2 * pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head = pool__bucket_own(b);
		uint32_t lc;

		if (head == POOL_BUSY)
			continue;
		pool__bucket_push_owned(pool, b, head, bottom, nmags, nobjs);
		/* unused through the window that ends now: as if they had lain here all along */
		lc = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
		atomic_store_explicit(&b->low_cur, pool__clamp32((unsigned long)lc + nobjs),
		                      memory_order_relaxed);
		pool__bucket_give(b, top);
		pool__count_moved(nobjs);
		return;
	}
	/* every head stayed BUSY: pool__push_mags() tries once more, else the slab tier */
	pool__push_mags(pool, top, bottom, nmags, nobjs, start);
}

/*
 * Owner: what bucket `b` gives back of its stack when it keeps `keep` objects, as
 * pool__demand_flush() does for all: detached from the top, the rest given back with the head.
 */
static void flush_keeping(struct pool_head *pool, struct pool_bucket *b, struct pool_mag *head,
                          unsigned long keep)
{
	unsigned long n = pool__own_get(&b->free_objects), took;
	void *split[POOL_CLUSTER_MAX];
	struct pool_mag *top = NULL;
	unsigned int nsplit = 0;

	POOL_ASSERT(keep && keep <= n);
	if (n > keep)
		top = bucket_detach(b, &head, n - keep, ULONG_MAX, split, &nsplit, &took);
	else
		took = 0;
	pool__bucket_give(b, head);
	if (took)
		release_detached(pool, top, split, nsplit, took);
}

void pool__demand_flush(struct pool_head *pool, size_t keep)
{
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *top = pass_own(b, 1), *extra;
		unsigned long n;

		if (top == POOL_BUSY)
			continue;
		if (POOL_ASSERTS >= 2)
			pool__bucket_walk(pool, b, top);
		/*
		 * The whole stack, without a walk: its count is the bucket's free_objects. Count
		 * while we own it (a flush that counts after giving the head back loses updates:
		 * tests/model/busy.pml).
		 */
		n = pool__own_get(&b->free_objects);
		if (keep && n) {
			unsigned long k = n < keep ? n : (unsigned long)keep;

			/* the reserve stays, in the buckets met first */
			flush_keeping(pool, b, top, k);
			keep -= k;
			continue;
		}
		atomic_store_explicit(&b->free_objects, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_cur, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, 0, memory_order_relaxed);
		pool__bucket_count_down(b, n);
		POOL_ASSERT(pool__bucket_books_ok(b));
		extra = trim_empties(b, 0);
		pool__bucket_give(b, NULL);
		pool__mag_free_stack(pool, extra);
		if (n)
			release_detached(pool, top, NULL, 0, n);
	}
}

