/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The bucket tier: the shared free lists with their BUSY protocol, the counters of each bucket,
 * the OS layer with the accounting of every backend, limits, demand tracking (needed_avg) and
 * memory return (release at eviction, pool_gc(), pool_flush()).
 *
 * Concurrency: lock-free. A bucket head is changed only by atomic exchange and compare-and-swap
 * (the protocol is step 4 of the essay in pool.c); counters are relaxed atomics. Nothing here
 * takes a lock or calls anything that can block while it owns a head.
 */
#include <sched.h>
#include <stdatomic.h>

#include "pool-bucket.h"
#include "pool-os.h"
#include "pool-uaf.h"

#define PUSH_TRIES_PER_BUCKET 2u        /* a push tries each bucket twice before the OS layer */
#define FLUSH_BUSY_TRIES      100000u   /* a flush waits this many yields for a BUSY head */

/* ------------------------------------------------------------------------------------------ */
/* Counters                                                                                   */
/* ------------------------------------------------------------------------------------------ */

#define SUM_FIELD(fn, field) SUM_FIELD_AS(, fn, field)
#define SUM_FIELD_AS(storage, fn, field)                                            \
storage unsigned long fn(const struct pool_head *pool)                            \
{                                                                                  \
	unsigned long sum = 0;                                                     \
	unsigned int i;                                                            \
	for (i = 0; i < pool->nbuckets; i++)                                       \
		sum += atomic_load_explicit(&pool->buckets[i].field,                \
		                            memory_order_relaxed);                  \
	return sum;                                                                \
}

SUM_FIELD(pool__sum_allocated, allocated)
SUM_FIELD(pool__sum_used, used)
SUM_FIELD(pool__sum_failed, failed)
SUM_FIELD(pool__sum_shared_free, free_objects)
SUM_FIELD_AS(static, sum_shared_get_objects, shared_get_objects)
SUM_FIELD_AS(static, sum_shared_get_clusters, shared_get_clusters)
SUM_FIELD_AS(static, sum_shared_put_objects, shared_put_objects)
SUM_FIELD_AS(static, sum_shared_put_clusters, shared_put_clusters)
SUM_FIELD_AS(static, sum_os_allocs, os_allocs)
SUM_FIELD_AS(static, sum_os_releases, os_releases)

/* swrate: sliding sum over n samples (HAProxy's swrate_add(), include/haproxy/freq_ctr.h). */
static inline unsigned long swrate_next(unsigned long sum, unsigned long n, unsigned long v)
{
	return sum - (sum + n - 1) / n + v;
}

static inline unsigned long swrate_avg(unsigned long sum, unsigned long n)
{
	return (sum + n - 1) / n;
}

unsigned long pool__sum_needed(const struct pool_head *pool)
{
	unsigned long sum = 0;
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++)
		sum += swrate_avg(atomic_load_explicit(&pool->buckets[i].needed_sum,
		                                             memory_order_relaxed),
		                        POOL_AVG_SAMPLES);
	return sum;
}

/*
 * One opportunistic sample of `used` into the bucket's needed_avg (a lost race skips a sample).
 * It is HAProxy's swrate over POOL_AVG_SAMPLES samples on the way down, but it rises at once to
 * a new peak: a burst must not make the pool give back, while the burst is being freed, the
 * objects it will need again at the next burst. It falls by a factor e for every 1024 samples
 * below it, and the bucket is sampled every time its used count changes.
 */
static inline void sample_needed(struct pool_bucket *b, unsigned long used)
{
	unsigned long old = atomic_load_explicit(&b->needed_sum, memory_order_relaxed);
	unsigned long peak = used * POOL_AVG_SAMPLES;
	unsigned long next = peak > old ? peak : swrate_next(old, POOL_AVG_SAMPLES, used);

	if (next != old)
		atomic_compare_exchange_strong_explicit(&b->needed_sum, &old, next,
		                                        memory_order_relaxed,
		                                        memory_order_relaxed);
}

void pool__bucket_traffic(const struct pool_head *pool, struct pool_stats *st)
{
	st->shared_get_objects = sum_shared_get_objects(pool);
	st->shared_get_clusters = sum_shared_get_clusters(pool);
	st->shared_put_objects = sum_shared_put_objects(pool);
	st->shared_put_clusters = sum_shared_put_clusters(pool);
	st->os_allocs = sum_os_allocs(pool);
	st->os_releases = sum_os_releases(pool);
	st->gc_released_bytes = atomic_load_explicit(&pool->gc_released_bytes,
	                                             memory_order_relaxed);
}

void pool__count_used(struct pool_head *pool, const void *obj, long delta)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];
	unsigned long used;

	used = atomic_fetch_add_explicit(&b->used, (unsigned long)delta, memory_order_relaxed) +
	       (unsigned long)delta;
	sample_needed(b, used);
}

void pool__count_failed(struct pool_head *pool, unsigned int id)
{
	atomic_fetch_add_explicit(&pool->buckets[id & (pool->nbuckets - 1)].failed, 1,
	                          memory_order_relaxed);
}

/* Does the bucket of `obj` hold more objects than its needs justify? (memory return, step 6) */
static int bucket_over_need(struct pool_head *pool, const void *obj)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];
	unsigned long alloc = atomic_load_explicit(&b->allocated, memory_order_relaxed);
	unsigned long used = atomic_load_explicit(&b->used, memory_order_relaxed);
	unsigned long need = swrate_avg(atomic_load_explicit(&b->needed_sum,
	                                                           memory_order_relaxed),
	                                      POOL_AVG_SAMPLES);
	unsigned long keep = need + need / 4;

	if (keep < used)
		keep = used;
	return alloc > keep + 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Limits and the OS layer                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Take one object of the pool's limit; 0 when the pool is at its limit. */
static int limit_reserve(struct pool_head *pool)
{
	long cur = atomic_load_explicit(&pool->limit_count, memory_order_relaxed);
	size_t limit = pool->limit;

	if (!limit)
		return 1;
	do {
		if (cur >= (long)limit)
			return 0;
	} while (!atomic_compare_exchange_weak_explicit(&pool->limit_count, &cur, cur + 1,
	                                                memory_order_relaxed,
	                                                memory_order_relaxed));
	return 1;
}

static void limit_unreserve(struct pool_head *pool)
{
	if (pool->limit)
		atomic_fetch_sub_explicit(&pool->limit_count, 1, memory_order_relaxed);
}

void pool__bucket_set_limit(struct pool_head *pool, size_t max_objects)
{
	atomic_store(&pool->limit_count, (long)pool__sum_allocated(pool));
	pool->limit = max_objects;
}

void *pool__os_get(struct pool_head *pool)
{
	struct pool_bucket *b;
	void *obj;

	if (!limit_reserve(pool))
		return NULL;
	atomic_store(&pool->ever_allocated, 1);
	if (pool->layout & POOL_DBG_UAF)
		obj = pool__uaf_alloc(pool->ro.size, pool->align, pool);
	else
		obj = pool__os_alloc(pool->stride, pool->align);
	if (!obj) {
		limit_unreserve(pool);
		return NULL;
	}
	b = &pool->buckets[pool__bucket_of(pool, obj)];
	atomic_fetch_add_explicit(&b->allocated, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->os_allocs, 1, memory_order_relaxed);
	pool__count_used(pool, obj, 1);
	return obj;
}

void pool__os_put(struct pool_head *pool, void *obj, const void *caller)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];

	atomic_fetch_sub_explicit(&b->allocated, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->os_releases, 1, memory_order_relaxed);
	limit_unreserve(pool);
	if (pool->layout & POOL_DBG_UAF) {
		pool__uaf_free(obj, caller);
		return;
	}
	if (pool__san_on())
		pool__san_access(obj, pool->stride);
	pool__os_free(obj, pool->stride, pool->align);
}

/* ------------------------------------------------------------------------------------------ */
/* Shared free lists (step 4)                                                                 */
/* ------------------------------------------------------------------------------------------ */

unsigned int pool__cluster_length(struct pool_item *first)
{
	unsigned int n = 0;
	void *p;

	for (p = first; p; p = pool__link_get(p, 0))
		n++;
	return n;
}

/* Pop one cluster, visiting each bucket once from `start`; NULL if none could be had. */
struct pool_item *pool__shared_pop(struct pool_head *pool, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i, n;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_item *head;

		head = atomic_load_explicit(&b->free_list, memory_order_relaxed);
		if (!head || head == POOL_BUSY)
			continue;
		head = atomic_exchange_explicit(&b->free_list, POOL_BUSY, memory_order_acquire);
		if (head == POOL_BUSY)
			continue;
		if (!head) {
			atomic_store_explicit(&b->free_list, NULL, memory_order_release);
			continue;
		}
		/* we own `head`: nobody can pop it, so reading its down link is safe */
		atomic_store_explicit(&b->free_list, (struct pool_item *)pool__link_get(head, 1),
		                      memory_order_release);
		n = pool__cluster_length(head);
		atomic_fetch_sub_explicit(&b->free_objects, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&b->shared_get_objects, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&b->shared_get_clusters, 1, memory_order_relaxed);
		return head;
	}
	return NULL;
}

/* Push a cluster of `n` objects linked by word 0; returns 0 if every try met BUSY. */
static int shared_push(struct pool_head *pool, struct pool_item *first, unsigned int n,
                       unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	for (i = 0; i < pool->nbuckets * PUSH_TRIES_PER_BUCKET; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_item *old = atomic_load_explicit(&b->free_list, memory_order_relaxed);

		if (old == POOL_BUSY)
			continue;
		atomic_fetch_add_explicit(&b->free_objects, n, memory_order_relaxed);
		pool__link_set(first, 1, old);
		if (atomic_compare_exchange_strong_explicit(&b->free_list, &old, first,
		                                            memory_order_release,
		                                            memory_order_relaxed)) {
			atomic_fetch_add_explicit(&b->shared_put_objects, n, memory_order_relaxed);
			atomic_fetch_add_explicit(&b->shared_put_clusters, 1, memory_order_relaxed);
			return 1;
		}
		atomic_fetch_sub_explicit(&b->free_objects, n, memory_order_relaxed);
	}
	return 0;
}

/* Push a cluster to the shared lists, or give it to the OS layer if every bucket stayed BUSY. */
void pool__push_or_release(struct pool_head *pool, struct pool_item *first, unsigned int n,
                            unsigned int start)
{
	void *p, *next;

	if (!first || shared_push(pool, first, n, start))
		return;
	for (p = first; p; p = next) {
		next = pool__link_get(p, 0);
		pool__os_put(pool, p, NULL);
	}
}

/*
 * Give back a list of free objects linked by word 0, each still counted as used. Each object is
 * checked (integrity, backup) when it comes `from_cache`, uncounted from used, then goes to the
 * OS layer when its bucket holds more than needed or the shared lists are bypassed, and
 * otherwise into clusters pushed to the shared lists.
 */
void pool__release_list(struct pool_head *pool, void *list, unsigned int start, int from_cache,
                        int integrity)
{
	unsigned int dbg = pool_debugging;
	int direct = (dbg & POOL_DBG_NO_GLOBAL) || (pool->layout & POOL_DBG_UAF);
	struct pool_item *first = NULL;
	unsigned int n = 0;
	void *obj, *next;

	for (obj = list; obj; obj = next) {
		next = pool__link_get(obj, 0);
		if (from_cache && (integrity || pool->backup_off))
			pool__debug_check_cached(pool, obj, NULL, integrity);
		pool__count_used(pool, obj, -1);
		if (direct || bucket_over_need(pool, obj)) {
			pool__os_put(pool, obj, NULL);
			continue;
		}
		pool__link_set(obj, 0, first);
		first = obj;
		if (++n == pool->cluster) {
			pool__push_or_release(pool, first, n, start);
			first = NULL;
			n = 0;
		}
	}
	pool__push_or_release(pool, first, n, start);
}

/* ------------------------------------------------------------------------------------------ */
/* Memory return                                                                              */
/* ------------------------------------------------------------------------------------------ */

void pool__bucket_flush(struct pool_head *pool)
{
	unsigned int i, tries;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_item *list = NULL, *down;
		void *p, *next;

		for (tries = 0; tries < FLUSH_BUSY_TRIES; tries++) {
			list = atomic_exchange_explicit(&b->free_list, POOL_BUSY,
			                                memory_order_acquire);
			if (list != POOL_BUSY)
				break;
			sched_yield();
		}
		if (list == POOL_BUSY)
			continue;
		atomic_store_explicit(&b->free_list, NULL, memory_order_release);
		for (; list; list = down) {
			down = pool__link_get(list, 1);
			atomic_fetch_sub_explicit(&b->free_objects, pool__cluster_length(list),
			                          memory_order_relaxed);
			for (p = list; p; p = next) {
				next = pool__link_get(p, 0);
				pool__os_put(pool, p, NULL);
				atomic_fetch_add_explicit(&pool->gc_released_bytes, pool->stride,
				                          memory_order_relaxed);
			}
		}
	}
}

/*
 * needed_avg is sampled only when a bucket's used changes, so once a bucket goes idle its average
 * stays frozen at its value after the spike (up to about POOL_AVG_SAMPLES objects of lag per
 * bucket, whatever the spike was). A bucket whose needed_sum has not changed since the previous
 * pool_gc() took no sample in between: it is idle, and its average is brought to its current
 * used, so that a spike does not pin memory forever. A race with a sampling thread only means
 * the bucket was not idle: the reset is skipped.
 */
static void gc_refresh_idle(struct pool_head *pool)
{
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		unsigned long sum = atomic_load_explicit(&b->needed_sum, memory_order_relaxed);
		unsigned long now;

		if (sum == atomic_load_explicit(&b->gc_seen_sum, memory_order_relaxed)) {
			now = atomic_load_explicit(&b->used, memory_order_relaxed) * POOL_AVG_SAMPLES;
			if (atomic_compare_exchange_strong_explicit(&b->needed_sum, &sum, now,
			                                            memory_order_relaxed,
			                                            memory_order_relaxed))
				sum = now;
		}
		atomic_store_explicit(&b->gc_seen_sum, sum, memory_order_relaxed);
	}
}

/* Release what the shared lists hold beyond max(used, needed*5/4) plus one cluster. */
void pool__bucket_gc(struct pool_head *pool)
{
	unsigned long alloc, used, need, keep;
	unsigned int i, misses = 0;
	long excess;

	gc_refresh_idle(pool);
	alloc = pool__sum_allocated(pool);
	used = pool__sum_used(pool);
	need = pool__sum_needed(pool);
	keep = need + need / 4;
	if (keep < used)
		keep = used;
	keep += pool->cluster;
	excess = (long)alloc - (long)keep;
	for (i = 0; excess > 0 && misses < pool->nbuckets; i++) {
		struct pool_item *cl = pool__shared_pop(pool, i);
		void *p, *next;

		if (!cl) {
			misses++;
			continue;
		}
		misses = 0;
		for (p = cl; p && excess > 0; p = next) {
			next = pool__link_get(p, 0);
			pool__os_put(pool, p, NULL);
			atomic_fetch_add_explicit(&pool->gc_released_bytes, pool->stride,
			                          memory_order_relaxed);
			excess--;
		}
		if (p)
			pool__push_or_release(pool, p, pool__cluster_length(p), i);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* fork()                                                                                     */
/* ------------------------------------------------------------------------------------------ */

void pool__bucket_fork_prepare(struct pool_head *p)
{
	unsigned int i;

	for (i = 0; i < p->nbuckets; i++) {
		struct pool_item *h;

		while ((h = atomic_exchange(&p->buckets[i].free_list, POOL_BUSY)) == POOL_BUSY)
			sched_yield();
		p->buckets[i].fork_saved = h;
	}
}

void pool__bucket_fork_restore(struct pool_head *p)
{
	unsigned int i;

	for (i = 0; i < p->nbuckets; i++)
		atomic_store(&p->buckets[i].free_list, p->buckets[i].fork_saved);
}
