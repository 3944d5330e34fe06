/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Demand and memory return, the bucket tier's second half: a pool's magazine size and gc floor
 * (set when it is created), its demand windows (decay_ms, after jemalloc's dirty_decay_ms), each
 * bucket's low-water marks over them, needed_avg, and what goes back to the OS layer: the
 * release pass at the end of a window, pool_gc() (which ends it at once), pool_flush(). See the
 * essay in pool.c, step 6, and doc/internals.md.
 *
 * Every bucket is changed only by the owner of its head (the BUSY protocol of pool-bucket.c);
 * release passes are serialised by the pool's pass lock, taken with trylock from slow paths
 * (pool__bucket_tick()) and with lock from pool_gc(). A pass detaches whole magazines inside a
 * BUSY window (reading their headers, and splitting at most one by copying part of its pointer
 * array) and gives their objects to the OS layer after giving the head back: it reads no free
 * object.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "base/pool-lock.h"

#define FLUSH_BUSY_TRIES      100000u   /* pool_flush()/pool_gc() wait this many yields per head */
#define PASS_OBJS_MAX         512u      /* objects one automatic pass takes from one bucket (as
                                           64 clusters of 8 did before magazines: a pass runs on
                                           a user thread's slow path, so it stays short) */
#define GC_MAGS_PER_TURN      1024u     /* magazines a pass detaches per ownership of a head */
#define GC_FLOOR_BYTES        65536u    /* pool_gc() keeps at most this much beyond the need */
#define EMPTIES_KEEP          4u        /* empty magazines a release pass leaves a bucket */
/*
 * A pool's magazine holds at most 1/MAG_BUDGET_SHARE of the thread budget in objects: a thread
 * keeps a loaded and a previous magazine per pool it uses, so a pool of large objects (16 KiB
 * buffers under a 512 KiB budget: 2 objects) gets small magazines rather than filling the
 * budget with two of them.
 */
#ifndef MAG_BUDGET_SHARE                /* a -D for the measurements of doc/benchmarks.md */
#define MAG_BUDGET_SHARE      16u
#endif
/*
 * ... but at least MAG_FLOOR_OBJS objects while that is at most 1/MAG_FLOOR_SHARE of the
 * budget: magazines sized in bytes, with a floor in objects (issue 27). A 16 KiB pool under a
 * 512 KiB budget gets magazines of 8 rather than 2: a rotation (a slow path of about 150 to
 * 250 instructions) every 8 objects, not every 2 (callgrind, `batch` at 16 KiB: 148 million
 * instructions for 220,000 pairs with 2, 41 with 8, 36 on libpool 0.1.0). Idle, such a slot
 * is the CLOCK's first victim, so its reservation does not stay.
 */
#define MAG_FLOOR_OBJS        8u
#define MAG_FLOOR_SHARE       4u

/*
 * Owner, at the start of a release pass (the window just ended): the objects of this bucket that
 * stayed in its stack through the whole window, i.e. the least it held since the window began
 * (low_cur, or low_prev when a pop or push of the new window rotated the marks already), and no
 * more than it holds now. Then the marks rotate.
 */
static unsigned long bucket_idle_rotate(struct pool_head *pool, struct pool_bucket *b)
{
	unsigned int e = atomic_load_explicit(&pool->demand.epoch, memory_order_relaxed);
	unsigned long f = pool__own_get(&b->free_objects), idle;

	if (e != atomic_load_explicit(&b->epoch, memory_order_relaxed))
		idle = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
	else
		idle = atomic_load_explicit(&b->low_prev, memory_order_relaxed);
	pool__bucket_sync(pool, b);
	return idle < f ? idle : f;
}

/*
 * Owner: detach up to `want` objects, at most `max_mags` magazines, from the top of bucket `b`'s
 * stack: whole magazines, and when the last one holds more than what is left to take, the
 * pointers of its last objects are copied into split[] (at most POOL_CLUSTER_MAX) and *nsplit
 * receives their number. The detached magazines are returned as a stack linked by `next`;
 * *took gets the objects detached in all. Reads magazine headers and, for the split, part of
 * one pointer array; no object. The bucket's counters lose them (free, allocated, both marks)
 * and os_releases gains them.
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
	pool__own_add(&b->allocated, -n);
	pool__own_add(&b->os_releases, n);
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

	pool__bucket_limit_unreserve(pool, (unsigned int)n);
	pool__count_moved(n);
	for (i = 0; i < nsplit; i++)
		pool__bucket_os_free(pool, split[i], NULL);
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
 * The release pass, run when a demand window ends: every bucket tells what stayed free through
 * the whole window and its marks rotate; what stayed free, beyond a floor of pool->floor objects
 * for the pool, goes back to the OS layer, and needed_avg becomes what the pool held minus it.
 * Two rounds of exchanges per bucket (count and rotate, then release), once per window; the
 * first also trims the bucket's empty magazines to EMPTIES_KEEP.
 * `gc`: a pool_gc() call waits for BUSY heads a while and releases all that it may, in turns of
 * at most GC_MAGS_PER_TURN magazines per ownership so that no BUSY window grows long; an
 * automatic pass skips BUSY buckets and takes at most PASS_OBJS_MAX objects a bucket (the
 * rest goes at the next window). The caller holds the pass lock.
 */
static void release_pass(struct pool_head *pool, int gc)
{
	unsigned long idle_of[POOL_BUCKETS_MAX];
	unsigned long idle = 0, alloc, excess;
	void *split[POOL_CLUSTER_MAX];
	unsigned int i;

	POOL_ASSERT(pool__lock_held(&pool->demand.pass_lock));
	POOL_ASSERT(pool->nbuckets <= POOL_BUCKETS_MAX);
	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *head = pass_own(b, gc), *extra;

		idle_of[i] = 0;
		if (head == POOL_BUSY)
			continue;
		if (POOL_ASSERTS >= 2 && gc)
			pool__bucket_walk(pool, b, head);
		idle_of[i] = bucket_idle_rotate(pool, b);
		idle += idle_of[i];
		extra = trim_empties(b, EMPTIES_KEEP);
		pool__bucket_give(b, head);
		pool__mag_free_stack(pool, extra);
	}
	alloc = pool__sum_allocated(pool);
	atomic_store_explicit(&pool->demand.need, alloc > idle ? alloc - idle : 0,
	                      memory_order_relaxed);
	excess = idle > pool->floor ? idle - pool->floor : 0;
	for (i = 0; excess && i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		unsigned long budget = gc ? ULONG_MAX : PASS_OBJS_MAX;

		while (excess && idle_of[i] && budget) {
			struct pool_mag *head = pass_own(b, gc), *top;
			unsigned long take, took = 0, turn;
			unsigned int nsplit;

			if (head == POOL_BUSY)
				break;
			/* what was idle, and is still there (pops since the count took from it) */
			take = idle_of[i] < excess ? idle_of[i] : excess;
			if (take > atomic_load_explicit(&b->low_cur, memory_order_relaxed))
				take = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
			if (take > budget)
				take = budget;
			turn = GC_MAGS_PER_TURN;
			top = bucket_detach(b, &head, take, turn, split, &nsplit, &took);
			pool__bucket_give(b, head);
			if (!took)
				break;
			release_detached(pool, top, split, nsplit, took);
			excess -= took;
			idle_of[i] -= took;
			budget -= budget == ULONG_MAX ? 0 : took;
		}
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* End the current demand window: the epoch moves and every bucket's marks follow lazily. */
static void end_window(struct pool_head *pool, uint64_t now)
{
	atomic_store_explicit(&pool->demand.epoch_ns, now, memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->demand.epoch, 1, memory_order_relaxed);
}

void pool__bucket_init(struct pool_head *pool, unsigned int cluster, size_t cache_bytes,
                       unsigned int decay_ms)
{
	size_t share = cache_bytes / MAG_BUDGET_SHARE / pool->cache_cost;
	size_t most = cache_bytes / MAG_FLOOR_SHARE / pool->cache_cost;
	size_t floor_objs;

	POOL_ASSERT(cluster >= 1 && cluster <= POOL_CLUSTER_MAX && pool->stride && pool->cache_cost);
	if (share < MAG_FLOOR_OBJS)
		share = most < MAG_FLOOR_OBJS ? (most > share ? most : share) : MAG_FLOOR_OBJS;
	pool->cluster = share < cluster ? (share ? (unsigned int)share : 1) : cluster;
	pool->mag_bytes = sizeof(struct pool_mag) + (size_t)pool->cluster * sizeof(void *);
	/* the floor is bytes: a pool of objects over 64 KiB keeps none beyond its need */
	floor_objs = GC_FLOOR_BYTES / pool->stride;
	pool->floor = floor_objs < pool->cluster ? (unsigned int)floor_objs : pool->cluster;
	pool__lock_init(&pool->demand.pass_lock);
	pool->demand.window_ns = (uint64_t)decay_ms * 1000000u;
	atomic_store(&pool->demand.epoch_ns, now_ns());
}

void pool__bucket_fini(struct pool_head *pool)
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

void pool__bucket_tick(struct pool_head *pool)
{
	uint64_t now = now_ns();
	uint64_t begun = atomic_load_explicit(&pool->demand.epoch_ns, memory_order_relaxed);

	if (now - begun < pool->demand.window_ns)
		return;
	if (pool__lock_try(&pool->demand.pass_lock) != 0)
		return;
	/* another thread may have ended this window while we took the lock */
	if (atomic_load_explicit(&pool->demand.epoch_ns, memory_order_relaxed) == begun) {
		end_window(pool, now);
		release_pass(pool, 0);
	}
	pool__unlock(&pool->demand.pass_lock);
}

void pool__bucket_gc(struct pool_head *pool)
{
	pool__lock(&pool->demand.pass_lock);
	end_window(pool, now_ns());
	release_pass(pool, 1);
	pool__unlock(&pool->demand.pass_lock);
}

void pool__bucket_flush(struct pool_head *pool)
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
		atomic_store_explicit(&b->free_objects, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_cur, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, 0, memory_order_relaxed);
		pool__own_add(&b->allocated, -n);
		pool__own_add(&b->os_releases, n);
		POOL_ASSERT(pool__bucket_books_ok(b));
		extra = trim_empties(b, 0);
		pool__bucket_give(b, NULL);
		pool__mag_free_stack(pool, extra);
		if (n)
			release_detached(pool, top, NULL, 0, n);
	}
}

