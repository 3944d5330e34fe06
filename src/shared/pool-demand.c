/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Demand and memory return, the bucket tier's second half: a pool's magazine size and gc floor
 * (set when it is created), its demand windows (decay_ms, after jemalloc's dirty_decay_ms), each
 * bucket's low-water marks over them, needed_avg (the average of `used` over a window, below),
 * and what goes back to the slab tier: the window's end, which counts what stayed unused through
 * it (what the pool owes), the steps that pay it back, pool_gc() (which ends the window at once
 * and gives back everything above the need), pool_flush(). doc/internals.md, 8.2 "Demand over
 * time", has the measurements.
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

/* ------------------------------------------------------------------------------------------ */
/* The average                                                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * needed_avg is the average of `used` over the last demand window, each moment weighted by its
 * length: a load that holds N objects reads N, a burst counts for the time it lasted, and once
 * a window has passed since it was freed it is gone from the figure. (What memory return keeps
 * is another measure, the most used at one moment of a window: count_round()'s low-water
 * marks, which do not read this.)
 *
 * 1. Samples. `used` changes on slow paths only: the fast path moves objects between a thread's
 *    cache and the program, both counted in `used`; a magazine moving to or from a shared list,
 *    or objects to or from the slab tier, change it. So its integral over time is kept from
 *    samples of pool__sum_used(): a slow path's tick (every 16th slow path of a thread) takes
 *    one when the coarse clock moved since the last (every 4 ms at most, whatever the threads;
 *    the samples' own write side only tried, never the pass lock), a window's end takes one and
 *    closes the window, and a read adds the stretch since the last without storing it. No clock is read that the ticks did not
 *    read already. A burst that comes and goes between two samples (within one tick of the
 *    coarse clock, or while no slow path of any thread ticked) is not seen.
 * 2. Between two samples, `used` moved while ticks ran (tick_ns is the latest) and stayed after
 *    the last of them: the stretch up to that tick is credited with the mean of the two values,
 *    the rest with the newer one; a stretch with no tick in it, with the older one (fewer than
 *    16 slow paths per thread moved anything). So a burst freed just after a sample and a long
 *    quiet that follows read as what they were, within what a thread's 16 slow paths move.
 * 3. The window: the integral since the current window began, plus the ended window's average
 *    for the part of the last decay_ms that lies before it (the ended window taken as flat): a
 *    sliding average over decay_ms, exact for a steady load, that forgets a burst between one
 *    and two windows after it ended, as memory return does. A window that lasted longer (no
 *    releaser ended it) averages over its whole length. Before the pool's first window ends,
 *    the figure is `used`; pool_gc() starts it again from `used`, its need being what is in use.
 */
#define AVG_READ_TRIES 1000u            /* copies a read makes while samples write */

static double bits_double(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

static uint64_t double_bits(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof(b));
	return b;
}

/* `used` now, in objects: a sum that wraps below 0 while a move is half counted reads as 0. */
static unsigned long used_now(const struct pool_head *pool)
{
	unsigned long used = pool__sum_used(pool);

	return (long)used > 0 ? used : 0;
}

/*
 * used x ns over (from, now]: `u0` at `from`, `u` at `now`, `tick` the latest tick before `now`
 * (section 2 above).
 */
static double stretch(uint64_t from, unsigned long u0, uint64_t now, unsigned long u,
                      uint64_t tick)
{
	uint64_t moved;

	if (now <= from)
		return 0;
	/* a tick of the sample's own clock tick (4 ms) may have come after it */
	if (tick < from)
		return (double)u0 * (double)(now - from);
	moved = tick < now ? tick : now;
	return ((double)u0 + (double)u) / 2 * (double)(moved - from) +
	       (double)u * (double)(now - moved);
}

/*
 * The samples' write side: avg_seq made odd by a compare-and-swap, so that one writer at a time
 * changes the fields and a read that saw them change copies them again. `wait`: until it is
 * free (a window's end: the writer it waits for only makes a few stores), else once. Returns 0
 * when taken, -1 when another writer held it.
 */
static int avg_write_begin(struct pool_demand *d, int wait)
{
	unsigned int seq = atomic_load_explicit(&d->avg_seq, memory_order_relaxed);

	while ((seq & 1) ||
	       !atomic_compare_exchange_weak_explicit(&d->avg_seq, &seq, seq + 1,
	                                              memory_order_relaxed, memory_order_relaxed)) {
		if (!wait)
			return -1;
		if (seq & 1)
			sched_yield();
		seq = atomic_load_explicit(&d->avg_seq, memory_order_relaxed);
	}
	/* the odd count is seen before any of the stores that follow */
	atomic_thread_fence(memory_order_release);
	return 0;
}

static void avg_write_end(struct pool_demand *d)
{
	atomic_fetch_add_explicit(&d->avg_seq, 1, memory_order_release);
}

/*
 * The write side held: a sample at `now`, the latest tick before it at `tick`. A sample within
 * the last one's tick of the coarse clock (or behind it: another thread's later clock read)
 * adds no time but still sets the value that counts from then on.
 */
static void avg_sample(struct pool_head *pool, uint64_t now, uint64_t tick)
{
	struct pool_demand *d = &pool->demand;
	uint64_t last = atomic_load_explicit(&d->avg_last_ns, memory_order_relaxed);
	unsigned long u = used_now(pool);
	double sum;

	if (now < last)
		now = last;
	sum = bits_double(atomic_load_explicit(&d->avg_sum, memory_order_relaxed)) +
	      stretch(last, atomic_load_explicit(&d->avg_last_used, memory_order_relaxed), now, u,
	              tick);
	atomic_store_explicit(&d->avg_sum, double_bits(sum), memory_order_relaxed);
	atomic_store_explicit(&d->avg_last_ns, now, memory_order_relaxed);
	atomic_store_explicit(&d->avg_last_used, u, memory_order_relaxed);
}

/*
 * Pass lock held: the window ends at `now`: a last sample, then its average becomes the ended
 * window's and the next one starts. With `restart` (pool_gc()), the ended window's average is
 * `used` now instead: the past demand is forgotten.
 */
static void avg_close(struct pool_head *pool, uint64_t now, int restart)
{
	struct pool_demand *d = &pool->demand;
	uint64_t start;
	double prev;

	POOL_ASSERT(pool__lock_held(&d->pass_lock));
	avg_write_begin(d, 1);
	start = atomic_load_explicit(&d->avg_start_ns, memory_order_relaxed);
	avg_sample(pool, now, atomic_load_explicit(&d->tick_ns, memory_order_relaxed));
	now = atomic_load_explicit(&d->avg_last_ns, memory_order_relaxed);
	if (restart || now <= start)
		prev = (double)atomic_load_explicit(&d->avg_last_used, memory_order_relaxed);
	else
		prev = bits_double(atomic_load_explicit(&d->avg_sum, memory_order_relaxed)) /
		       (double)(now - start);
	atomic_store_explicit(&d->avg_prev, double_bits(prev), memory_order_relaxed);
	atomic_store_explicit(&d->avg_have_prev, 1, memory_order_relaxed);
	atomic_store_explicit(&d->avg_sum, double_bits(0), memory_order_relaxed);
	atomic_store_explicit(&d->avg_start_ns, now, memory_order_relaxed);
	avg_write_end(d);
}

/*
 * A slow path's tick at `now`: note it, and take a sample when the coarse clock moved since the
 * last one, unless another writer holds the samples' write side. It never takes the pass lock:
 * a sample never delays a window's end or a payment.
 */
static void avg_tick(struct pool_head *pool, uint64_t now)
{
	struct pool_demand *d = &pool->demand;
	uint64_t before = atomic_load_explicit(&d->tick_ns, memory_order_relaxed);

	/* one store per tick of the coarse clock (4 ms), whatever the threads */
	if (before != now)
		atomic_store_explicit(&d->tick_ns, now, memory_order_relaxed);
	if (now <= atomic_load_explicit(&d->avg_last_ns, memory_order_relaxed) ||
	    avg_write_begin(d, 0) != 0)
		return;
	avg_sample(pool, now, before);
	avg_write_end(d);
}

unsigned long pool__demand_needed_avg(const struct pool_head *pool)
{
	const struct pool_demand *d = &pool->demand;
	uint64_t now = pool__clock_ns(CLOCK_MONOTONIC_COARSE), start, last;
	unsigned long u = used_now(pool), last_used;
	unsigned int seq, tries = 0;
	double sum, prev, avg;
	int have_prev;

	/*
	 * A consistent copy of what the samples wrote: they are rare and short, so a copy made
	 * while one wrote is made again (a bounded number of times: past it, the last copy).
	 */
	for (;;) {
		seq = atomic_load_explicit(&d->avg_seq, memory_order_acquire);
		have_prev = (int)atomic_load_explicit(&d->avg_have_prev, memory_order_relaxed);
		start = atomic_load_explicit(&d->avg_start_ns, memory_order_relaxed);
		last = atomic_load_explicit(&d->avg_last_ns, memory_order_relaxed);
		last_used = atomic_load_explicit(&d->avg_last_used, memory_order_relaxed);
		sum = bits_double(atomic_load_explicit(&d->avg_sum, memory_order_relaxed));
		prev = bits_double(atomic_load_explicit(&d->avg_prev, memory_order_relaxed));
		atomic_thread_fence(memory_order_acquire);
		if ((!(seq & 1) && atomic_load_explicit(&d->avg_seq, memory_order_relaxed) == seq) ||
		    ++tries == AVG_READ_TRIES)
			break;
		sched_yield();
	}
	if (!have_prev)
		return u;
	if (now < last)
		now = last;
	sum += stretch(last, last_used, now, u,
	               atomic_load_explicit(&d->tick_ns, memory_order_relaxed));
	if (now - start >= d->window_ns)
		avg = now > start ? sum / (double)(now - start) : prev;
	else
		avg = (sum + prev * (double)(d->window_ns - (now - start))) / (double)d->window_ns;
	return avg > 0 ? (unsigned long)(avg + 0.5) : 0;
}

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
 * for the pool (pool->floor objects, or its reserve if more) is owed to the slab tier: what the
 * pool keeps is what it held minus that, at least the most it used at one moment of the window
 * (needed_avg, the average, is not read here). What is paid is at most what is owed and what
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
	unsigned long idle = 0;
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

/*
 * Pass lock held: end the current demand window: the epoch moves and every bucket's marks follow
 * lazily; the average closes the window (with `restart`, pool_gc(), it starts again from `used`).
 */
static void end_window(struct pool_head *pool, uint64_t now, int restart)
{
	avg_close(pool, now, restart);
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
	uint64_t now;

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
	now = pool__clock_ns(CLOCK_MONOTONIC_COARSE);
	atomic_store(&pool->demand.epoch_ns, now);
	atomic_store(&pool->demand.avg_start_ns, now);
	atomic_store(&pool->demand.avg_last_ns, now);
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
		end_window(pool, pool__clock_ns(CLOCK_MONOTONIC_COARSE), 0);
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

	avg_tick(pool, now);
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
		end_window(pool, now, 0);
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
	end_window(pool, pool__clock_ns(CLOCK_MONOTONIC_COARSE), 1);
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

