/*
 * libpool core: pool heads, thread caches, shared buckets, counters, eviction, refill, memory
 * return, the thread registry and fork safety.
 *
 * How it works
 *
 * 1. A pool hands out objects of one size. Each thread keeps, per pool, a LIFO list of free
 *    objects (its thread cache, struct pool_tcache in TLS). pool_alloc() pops from it and
 *    pool_free() pushes to it, inline in pool.h: a load of the debugging word, an index into
 *    thread-local storage, a pop or a push and a count update. No atomic, no lock, no call.
 *
 * 2. The cache budget. A thread may cache at most `budget` bytes over all pools (512 KiB by
 *    default, see pool_configure()). Rather than counting bytes on every push and pop, each
 *    (thread, pool) cache holds a `limit` in objects, a reservation: the thread keeps
 *    sum(limit * stride) <= budget. pool_free() only compares count with limit; when the limit
 *    is reached it calls the slow path, which grows the reservation from the unreserved part of
 *    the budget, takes back reservations other pools do not use (limit above count), and, when
 *    that is not enough, evicts. So the cached bytes never exceed the budget, and the fast path
 *    pays one compare for it.
 *
 * 3. Eviction takes the coldest objects first, approximately: pools are chosen by a CLOCK
 *    (second chance, Corbato 1968) over this thread's caches, whose reference bit pool_free()
 *    sets; within the chosen pool, the bottom half of its LIFO list goes, which is exactly its
 *    least recently freed half (a LIFO list is ordered by recency). Evicted objects leave in
 *    clusters (8 objects, pool_configure()) to the shared free lists, or to the OS layer when
 *    their bucket holds more than needed_avg justifies.
 *
 * 4. Shared free lists. Each pool has N buckets (a power of two, one cache line each). A bucket
 *    head is NULL, a cluster, or BUSY. Protocol:
 *      pop:  read the head; skip the bucket if it is NULL or BUSY; swap BUSY in with one atomic
 *            exchange. If the exchange returned BUSY, someone else owns it: skip. If it returned
 *            NULL, store NULL back and skip. Otherwise we own the cluster we got and the head;
 *            read cluster->down and store it as the new head (release).
 *      push: read the head; if BUSY, go to the next bucket; else link the cluster above it and
 *            CAS it in (release).
 *    Why it is safe: while the head is BUSY nobody else can pop, so the cluster whose `down` we
 *    read cannot be popped and freed to the OS by another thread in the meantime (the race
 *    HAProxy met with musl, GH #1275), and the head cannot go A->B->A under us (no ABA) because
 *    only the owner of BUSY may store a new head after a pop. Both loops are bounded: a pop
 *    visits each bucket once, a push tries 2N times and then gives the cluster to the OS layer.
 *    A thread never waits for another one.
 *
 * 5. Counters. allocated (objects held from the OS layer), used (objects handed out or in thread
 *    caches) and needed_avg (swrate of used over 1024 samples) live in the bucket chosen by a
 *    hash of the object's address, so an object's allocation and its free, on any threads, hit
 *    the same bucket and no counter line is written by every thread. failed is counted in the
 *    bucket of the thread. Totals are sums over buckets (slow: stats and limits only). They
 *    change only on slow paths: the fast path moves objects within a thread cache, which is
 *    already counted as used.
 *
 * 6. Memory return. An evicted object whose bucket has allocated > max(used, needed + needed/4)
 *    goes to the OS layer instead of a shared list, so a spike does not pin memory. pool_gc()
 *    gives back what the shared lists hold beyond max(used, needed*5/4) plus one cluster, then
 *    trims the OS layer. needed_avg is sampled every time a bucket's used changes; a bucket
 *    that took no sample between two pool_gc() calls is idle and its needed_avg is reset to its
 *    used, since a frozen average would otherwise keep the tail of the spike forever.
 *
 * 7. Threads. A thread gets its context on first use (initial-exec TLS), an id from the registry
 *    (POOL_MAX_THREADS slots, recycled), and a pthread key whose destructor flushes its caches at
 *    exit. Past POOL_MAX_THREADS, or after its exit flush, a thread works without a cache.
 *
 * Invariants
 *   - per thread: sum over pools of limit * stride == reserved <= budget, count <= limit;
 *   - per bucket: allocated >= used; objects in its free list == free_objects;
 *   - per pool: sum(allocated) == sum(used) + objects in free lists (when no thread is inside a
 *     slow path), and used == 0 once every object was freed and every cache flushed;
 *   - a thread cache is written only by its thread, except under its ctx->lock by pool_destroy()
 *     (which the caller guarantees no other thread is using) and in the child after fork().
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool-int.h"
#include "pool-os.h"

POOL_API __thread struct pool_thread_cache pool_tls_cache
	__attribute__((tls_model("initial-exec")));
static __thread struct pool_thread_ctx pool_ctx __attribute__((tls_model("initial-exec")));

pthread_mutex_t pool__list_lock = PTHREAD_MUTEX_INITIALIZER;
struct pool_head *pool__list_head;
static struct pool_head *pool_list_tail;
struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];
unsigned int pool__nb_pools;
static atomic_uint pool_max_slot = 1;   /* highest slot ever used + 1 */
struct pool_config pool__config = {
	.buckets = POOL_BUCKETS_DEF,
	.cache_bytes = POOL_CACHE_BYTES_DEF,
	.cluster = POOL_CLUSTER_DEFAULT,
	.decay_ms = POOL_DECAY_MS_DEF,
};
static int pool_config_frozen;          /* set when the first pool is created */
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
atomic_uint pool__integrity_epoch = 1;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_thread_ctx *registry[POOL_MAX_THREADS];
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

#define PUSH_TRIES_PER_BUCKET 2u

static void config_load(void)
{
	pool__config_defaults(&pool__config);
}

/* Defaults come from the topology and the environment, once, before their first use. */
static void config_ensure(void)
{
	pthread_once(&config_once, config_load);
}

static inline size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline int san_on(void)
{
	return POOL_UNLIKELY(pool_debugging & POOL_DBG_SANITIZER);
}

/* Link words of free objects, with sanitizer annotations when they are on. */
static inline void *link_get(void *obj, unsigned int word)
{
	void **p = (void **)obj + word;
	void *v;

	if (san_on()) {
		pool__san_access(p, sizeof(*p));
		v = *p;
		pool__san_noaccess(p, sizeof(*p));
		return v;
	}
	return *p;
}

static inline void link_set(void *obj, unsigned int word, void *v)
{
	void **p = (void **)obj + word;

	if (san_on()) {
		pool__san_access(p, sizeof(*p));
		*p = v;
		pool__san_noaccess(p, sizeof(*p));
		return;
	}
	*p = v;
}

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

unsigned long pool__sum_needed(const struct pool_head *pool)
{
	unsigned long sum = 0;
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++)
		sum += pool__swrate_avg(atomic_load_explicit(&pool->buckets[i].needed_sum,
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
	unsigned long next = peak > old ? peak : pool__swrate_next(old, POOL_AVG_SAMPLES, used);

	if (next != old)
		atomic_compare_exchange_strong_explicit(&b->needed_sum, &old, next,
		                                        memory_order_relaxed,
		                                        memory_order_relaxed);
}

static inline void count_used(struct pool_head *pool, const void *obj, long delta)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];
	unsigned long used;

	used = atomic_fetch_add_explicit(&b->used, (unsigned long)delta, memory_order_relaxed) +
	       (unsigned long)delta;
	sample_needed(b, used);
}

static void count_failed(struct pool_head *pool, struct pool_thread_ctx *ctx)
{
	atomic_fetch_add_explicit(&pool->buckets[ctx->id & (pool->nbuckets - 1)].failed, 1,
	                          memory_order_relaxed);
}

/* Does the bucket of `obj` hold more objects than its needs justify? (memory return, step 6) */
static int bucket_over_need(struct pool_head *pool, const void *obj)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];
	unsigned long alloc = atomic_load_explicit(&b->allocated, memory_order_relaxed);
	unsigned long used = atomic_load_explicit(&b->used, memory_order_relaxed);
	unsigned long need = pool__swrate_avg(atomic_load_explicit(&b->needed_sum,
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

int pool__limit_reserve(struct pool_head *pool)
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

void pool__limit_unreserve(struct pool_head *pool)
{
	if (pool->limit)
		atomic_fetch_sub_explicit(&pool->limit_count, 1, memory_order_relaxed);
}

void pool__count_os_alloc(struct pool_head *pool, void *obj)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];

	atomic_fetch_add_explicit(&b->allocated, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->os_allocs, 1, memory_order_relaxed);
	count_used(pool, obj, 1);
}

void pool__count_os_release(struct pool_head *pool, void *obj)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];

	count_used(pool, obj, -1);
	atomic_fetch_sub_explicit(&b->allocated, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->os_releases, 1, memory_order_relaxed);
	pool__limit_unreserve(pool);
}

/* A new object from the OS layer, counted as used; NULL at the limit or out of memory. */
static void *os_get(struct pool_head *pool)
{
	void *obj;

	if (!pool__limit_reserve(pool))
		return NULL;
	atomic_store(&pool->ever_allocated, 1);
	obj = pool__os_alloc(pool->stride, pool->align);
	if (!obj) {
		pool__limit_unreserve(pool);
		return NULL;
	}
	pool__count_os_alloc(pool, obj);
	return obj;
}

/* Give a free object (already uncounted from used) back below. */
static void os_put(struct pool_head *pool, void *obj)
{
	struct pool_bucket *b = &pool->buckets[pool__bucket_of(pool, obj)];

	atomic_fetch_sub_explicit(&b->allocated, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->os_releases, 1, memory_order_relaxed);
	pool__limit_unreserve(pool);
	if (pool->layout & POOL_DBG_UAF) {
		pool__uaf_quarantine(pool, obj, NULL);
		return;
	}
	if (san_on())
		pool__san_access(obj, pool->stride);
	pool__os_free(obj, pool->stride, pool->align);
}

/* ------------------------------------------------------------------------------------------ */
/* Shared free lists (step 4)                                                                 */
/* ------------------------------------------------------------------------------------------ */

static unsigned int cluster_length(struct pool_item *first)
{
	unsigned int n = 0;
	void *p;

	for (p = first; p; p = link_get(p, 0))
		n++;
	return n;
}

/* Pop one cluster, visiting each bucket once from `start`; NULL if none could be had. */
static struct pool_item *shared_pop(struct pool_head *pool, unsigned int start)
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
		atomic_store_explicit(&b->free_list, (struct pool_item *)link_get(head, 1),
		                      memory_order_release);
		n = cluster_length(head);
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
		link_set(first, 1, old);
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
static void push_or_release(struct pool_head *pool, struct pool_item *first, unsigned int n,
                            unsigned int start)
{
	void *p, *next;

	if (!first || shared_push(pool, first, n, start))
		return;
	for (p = first; p; p = next) {
		next = link_get(p, 0);
		os_put(pool, p);
	}
}

/*
 * Give back a list of free objects linked by word 0, each still counted as used. Each object is
 * checked (integrity, backup) when it comes `from_cache`, uncounted from used, then goes to the
 * OS layer when its bucket holds more than needed or the shared lists are bypassed, and
 * otherwise into clusters pushed to the shared lists.
 */
static void release_list(struct pool_head *pool, struct pool_thread_ctx *ctx, void *list,
                         int from_cache)
{
	unsigned int dbg = pool_debugging;
	int direct = (dbg & POOL_DBG_NO_GLOBAL) || (pool->layout & POOL_DBG_UAF);
	struct pool_item *first = NULL;
	unsigned int n = 0;
	void *obj, *next;

	for (obj = list; obj; obj = next) {
		next = link_get(obj, 0);
		if (from_cache && ((dbg & POOL_DBG_INTEGRITY) || pool->backup_off))
			pool__debug_check_cached(pool, obj, NULL);
		count_used(pool, obj, -1);
		if (direct || bucket_over_need(pool, obj)) {
			os_put(pool, obj);
			continue;
		}
		link_set(obj, 0, first);
		first = obj;
		if (++n == pool->cluster) {
			push_or_release(pool, first, n, ctx->id);
			first = NULL;
			n = 0;
		}
	}
	push_or_release(pool, first, n, ctx->id);
}

/* ------------------------------------------------------------------------------------------ */
/* Thread contexts and the registry (step 7)                                                  */
/* ------------------------------------------------------------------------------------------ */

static void thread_exit(void *arg);
static void flush_all_caches(struct pool_thread_ctx *ctx);

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0) {
		static const char msg[] = "libpool: cannot create the thread-exit key; "
		                          "threads will not flush their caches at exit\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			return;
	}
}

static unsigned int hash_thread(const void *p)
{
	return (unsigned int)(((uintptr_t)p * UINT64_C(0x9E3779B97F4A7C15)) >> 40);
}

static void thread_init(struct pool_thread_ctx *ctx)
{
	unsigned int i, id = POOL_MAX_THREADS;

	pthread_once(&exit_key_once, make_exit_key);
	config_ensure();
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->cache = &pool_tls_cache;
	ctx->budget = pool__config.cache_bytes;
	ctx->reserved = 0;
	ctx->hand = 1;
	ctx->integrity_epoch = atomic_load(&pool__integrity_epoch);
	ctx->rng = 0;
	/* the lowest free id: ids stay dense, so per-id tables and hashes stay small */
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		if (!registry[i]) {
			id = i;
			registry[i] = ctx;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (id < POOL_MAX_THREADS) {
		ctx->id = id;
		ctx->state = POOL_THREAD_CACHED;
		pthread_setspecific(exit_key, ctx);
	} else {
		ctx->id = hash_thread(ctx);
		ctx->state = POOL_THREAD_UNCACHED;
	}
}

/* The pthread key destructor: flush, leave the registry, and work uncached from now on. */
static void thread_exit(void *arg)
{
	struct pool_thread_ctx *ctx = arg;

	if (ctx->state != POOL_THREAD_CACHED)
		return;
	flush_all_caches(ctx);
	pthread_mutex_lock(&registry_lock);
	registry[ctx->id] = NULL;
	pthread_mutex_unlock(&registry_lock);
	ctx->state = POOL_THREAD_EXITED;
	ctx->id = hash_thread(ctx);
}

static void fill_all_caches(struct pool_thread_ctx *ctx);

/* The calling thread's context, made on first use and brought in line with run-time flags. */
struct pool_thread_ctx *pool__thread_ctx(void)
{
	struct pool_thread_ctx *ctx = &pool_ctx;
	unsigned int dbg;
	size_t credit;

	if (POOL_UNLIKELY(ctx->state == POOL_THREAD_NEW))
		thread_init(ctx);
	if (ctx->state != POOL_THREAD_CACHED)
		return ctx;
	credit = atomic_load_explicit(&ctx->credit, memory_order_relaxed);
	if (credit)
		ctx->reserved -= atomic_exchange(&ctx->credit, 0);
	dbg = pool_debugging;
	if (POOL_UNLIKELY(dbg & POOL_DBG_NO_CACHE) && ctx->reserved)
		flush_all_caches(ctx);
	else if (POOL_UNLIKELY((dbg & POOL_DBG_INTEGRITY) &&
	                       ctx->integrity_epoch != atomic_load(&pool__integrity_epoch)))
		fill_all_caches(ctx);
	return ctx;
}

/* ------------------------------------------------------------------------------------------ */
/* Thread caches: reservation, eviction, flush (steps 2 and 3)                                */
/* ------------------------------------------------------------------------------------------ */

static inline int cache_usable(const struct pool_head *pool, const struct pool_thread_ctx *ctx)
{
	return ctx->state == POOL_THREAD_CACHED && pool->ro.index &&
	       !(pool_debugging & POOL_DBG_NO_CACHE) && pool->stride <= ctx->budget;
}

/* Objects in a cache entry. `room` is the free part of the reservation `limit`. */
static inline uint32_t tc_count(const struct pool_tcache *tc)
{
	return tc->limit - tc->room;
}

static inline void tc_set_room(struct pool_tcache *tc, uint32_t room)
{
	__atomic_store_n(&tc->room, room, __ATOMIC_RELAXED);
}

static inline void tc_set_count(struct pool_tcache *tc, uint32_t count)
{
	tc_set_room(tc, tc->limit - count);
}

/* Change the reservation, keeping the objects. */
static inline void tc_set_limit(struct pool_tcache *tc, uint32_t limit)
{
	uint32_t count = tc_count(tc);

	__atomic_store_n(&tc->limit, limit, __ATOMIC_RELAXED);
	tc_set_room(tc, limit - count);
}

/* Take the `n` least recently freed objects (the bottom of the LIFO) out of a cache. */
static void *tc_take_bottom(struct pool_tcache *tc, uint32_t n)
{
	uint32_t keep = tc_count(tc) - n;
	void *list, *p;
	uint32_t i;

	if (!keep) {
		list = tc->head;
		tc->head = NULL;
	} else {
		p = tc->head;
		for (i = 1; i < keep; i++)
			p = link_get(p, 0);
		list = link_get(p, 0);
		link_set(p, 0, NULL);
	}
	tc_set_count(tc, keep);
	return list;
}

/* Evict the bottom `n` objects of slot `slot` and give back its unused reservation. */
static void tc_evict(struct pool_thread_ctx *ctx, unsigned int slot, uint32_t n)
{
	struct pool_tcache *tc = &ctx->cache->tc[slot];
	struct pool_head *pool = pool__slots[slot];
	void *list;

	if (n) {
		list = tc_take_bottom(tc, n);
		release_list(pool, ctx, list, 1);
	}
	ctx->reserved -= (size_t)tc->room * pool->stride;
	tc_set_limit(tc, tc_count(tc));
}

/* The clock hand's next victim: a slot with objects whose reference bit is clear; 0 if none. */
static unsigned int clock_victim(struct pool_thread_ctx *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int step;

	for (step = 0; step < 2 * max; step++) {
		unsigned int s = ctx->hand;
		struct pool_tcache *tc = &ctx->cache->tc[s];

		ctx->hand = s + 1 < max ? s + 1 : 1;
		if (!s || !tc_count(tc))
			continue;
		if (tc->referenced) {
			tc->referenced = 0;
			continue;
		}
		return s;
	}
	return 0;
}

/*
 * Make room in slot `slot` for `n` more objects (limit >= count + n), growing its reservation by
 * at least a cluster when the budget allows; takes back unused reservations and evicts cold
 * objects when it does not. Returns 1 on success, 0 when the budget cannot hold them.
 */
static int tc_reserve(struct pool_thread_ctx *ctx, unsigned int slot, uint32_t n)
{
	struct pool_tcache *tc = &ctx->cache->tc[slot];
	struct pool_head *pool = pool__slots[slot];
	size_t stride = pool->stride;
	uint32_t want, grant;
	unsigned int s, max, rounds;
	int ok = 0;

	if (n <= tc->room)
		return 1;
	want = n - tc->room;
	grant = want < pool->cluster ? pool->cluster : want;
	if (ctx->reserved + (size_t)grant * stride <= ctx->budget)
		goto granted;
	grant = want;
	if (ctx->reserved + (size_t)grant * stride <= ctx->budget)
		goto granted;

	/* Over budget: take back what other slots reserve but do not use, then evict. */
	pthread_mutex_lock(&ctx->lock);
	max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	for (s = 1; s < max; s++) {
		struct pool_tcache *o = &ctx->cache->tc[s];

		if (s != slot && o->room)
			tc_evict(ctx, s, 0);
	}
	for (rounds = 0; rounds < 4 * max; rounds++) {
		want = n > tc->room ? n - tc->room : 0;
		if (ctx->reserved + (size_t)want * stride <= ctx->budget) {
			ok = 1;
			break;
		}
		s = clock_victim(ctx);
		if (!s)
			break;
		{
			uint32_t cnt = tc_count(&ctx->cache->tc[s]);
			uint32_t ev = cnt / 2;

			if (ev < pool__slots[s]->cluster)
				ev = cnt < pool__slots[s]->cluster ? cnt : pool__slots[s]->cluster;
			tc_evict(ctx, s, ev);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!ok)
		return 0;
	grant = n > tc->room ? n - tc->room : 0;
granted:
	tc_set_limit(tc, tc->limit + grant);
	ctx->reserved += (size_t)grant * stride;
	return 1;
}

/* Evict everything this thread caches and drop its reservations (exit, flush, no-cache). */
static void flush_all_caches(struct pool_thread_ctx *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int s;

	pthread_mutex_lock(&ctx->lock);
	for (s = 1; s < max; s++) {
		struct pool_tcache *tc = &ctx->cache->tc[s];

		if (tc->limit)
			tc_evict(ctx, s, tc_count(tc));
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* Integrity was switched on: fill every object this thread caches with the pattern. */
static void fill_all_caches(struct pool_thread_ctx *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int s;

	pthread_mutex_lock(&ctx->lock);
	for (s = 1; s < max; s++) {
		struct pool_tcache *tc = &ctx->cache->tc[s];
		void *p;

		for (p = tc->head; p; p = link_get(p, 0))
			pool__debug_fill_cached(pool__slots[s], p);
	}
	pthread_mutex_unlock(&ctx->lock);
	ctx->integrity_epoch = atomic_load(&pool__integrity_epoch);
}

/* Push one object into this thread's cache of `pool` (room must have been reserved). */
static void tc_push(struct pool_head *pool, struct pool_tcache *tc, void *obj)
{
	if ((pool_debugging & POOL_DBG_INTEGRITY) || pool->backup_off)
		pool__debug_fill_cached(pool, obj);
	link_set(obj, 0, tc->head);
	tc->head = obj;
	tc_set_room(tc, tc->room - 1);
	tc->referenced = 1;
}

/* Pop one object; the least recently freed one under cold-first. NULL if empty. */
static void *tc_pop(struct pool_tcache *tc)
{
	void *obj;

	if (!tc->head)
		return NULL;
	if ((pool_debugging & POOL_DBG_COLD_FIRST) && tc_count(tc) > 1)
		return tc_take_bottom(tc, 1);
	obj = tc->head;
	tc->head = link_get(obj, 0);
	tc_set_room(tc, tc->room + 1);
	return obj;
}

/* ------------------------------------------------------------------------------------------ */
/* Getting and putting objects beyond the thread cache                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * One object for this thread: a cluster from the shared lists (the rest of it refills the
 * thread cache when there is room, else goes back), or a new object from the OS layer. Counted
 * as used. NULL at the limit or when out of memory.
 */
void *pool__get_object(struct pool_head *pool, struct pool_thread_ctx *ctx)
{
	struct pool_item *cl = NULL;
	void *obj, *p, *next;
	unsigned int n;

	if (!(pool_debugging & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF))
		cl = shared_pop(pool, ctx->id);
	if (!cl)
		return (pool->layout & POOL_DBG_UAF) ? pool__uaf_alloc(pool) : os_get(pool);

	obj = cl;
	next = link_get(obj, 0);
	count_used(pool, obj, 1);
	if (!next)
		return obj;
	n = cluster_length(next);
	if (cache_usable(pool, ctx) && tc_reserve(ctx, pool->ro.index, n)) {
		struct pool_tcache *tc = &ctx->cache->tc[pool->ro.index];

		for (p = next; p; p = next) {
			next = link_get(p, 0);
			count_used(pool, p, 1);
			tc_push(pool, tc, p);
		}
	} else {
		push_or_release(pool, next, n, ctx->id);
	}
	return obj;
}

/* Give one object back without caching it (counted as used until now). */
void pool__put_object(struct pool_head *pool, struct pool_thread_ctx *ctx, void *obj)
{
	link_set(obj, 0, NULL);
	release_list(pool, ctx, obj, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Slow paths of pool_alloc() and pool_free()                                                 */
/* ------------------------------------------------------------------------------------------ */

POOL_API POOL_NOINLINE POOL_COLD void *pool__alloc_slow(struct pool_head *pool,
                                                         unsigned int flags)
{
	const void *caller = __builtin_return_address(0);
	struct pool_thread_ctx *ctx = pool__thread_ctx();
	unsigned int dbg = pool_debugging;
	int from_cache = 0;
	void *obj = NULL;

	if ((dbg & POOL_DBG_FAIL) && !(flags & POOL_F_NO_FAIL) && pool__debug_fail_roll(ctx))
		goto fail;
	if (cache_usable(pool, ctx)) {
		obj = tc_pop(&ctx->cache->tc[pool->ro.index]);
		from_cache = obj != NULL;
	}
	if (!obj)
		obj = pool__get_object(pool, ctx);
	if (POOL_UNLIKELY(!obj))
		goto fail;
	if (POOL_UNLIKELY(dbg | pool->layout))
		pool__debug_on_alloc(pool, obj, flags, caller, from_cache);
	else if (flags & POOL_F_MUST_ZERO)
		memset(obj, 0, pool->ro.size);
	return obj;
fail:
	count_failed(pool, ctx);
	errno = ENOMEM;
	return NULL;
}

POOL_API POOL_NOINLINE POOL_COLD void pool__free_slow(struct pool_head *pool, void *ptr)
{
	const void *caller = __builtin_return_address(0);
	struct pool_thread_ctx *ctx = pool__thread_ctx();
	struct pool_tcache *tc;

	if (!ptr)
		return;
	if (san_on())
		pool__san_check_free(pool, ptr, caller);
	if (POOL_UNLIKELY(pool_debugging | pool->layout))
		pool__debug_on_free(pool, ptr, caller);
	if (san_on())
		pool__san_freed(pool, ptr);
	if (pool->layout & POOL_DBG_UAF) {
		if (!cache_usable(pool, ctx)) {
			pool__uaf_free(pool, ptr, caller);
			return;
		}
	}
	if (cache_usable(pool, ctx) && tc_reserve(ctx, pool->ro.index, 1)) {
		tc = &ctx->cache->tc[pool->ro.index];
		tc_push(pool, tc, ptr);
		return;
	}
	if (pool->layout & POOL_DBG_UAF) {
		pool__uaf_free(pool, ptr, caller);
		return;
	}
	pool__put_object(pool, ctx, ptr);
}

POOL_API size_t pool_alloc_bulk(struct pool_head *pool, void **objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		objs[i] = pool_alloc(pool);
		if (!objs[i])
			break;
	}
	return i;
}

POOL_API void pool_free_bulk(struct pool_head *pool, void **objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pool_free(pool, objs[i]);
}

POOL_API void pool_thread_flush(void)
{
	struct pool_thread_ctx *ctx = &pool_ctx;

	if (ctx->state == POOL_THREAD_CACHED) {
		pool__thread_ctx();
		flush_all_caches(ctx);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Creation and destruction                                                                   */
/* ------------------------------------------------------------------------------------------ */

static int valid_name(const char *name)
{
	size_t len;
	const char *p;

	if (!name)
		return 0;
	len = strlen(name);
	if (len == 0 || len > POOL_NAME_MAX)
		return 0;
	for (p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/*
 * Object layout for `size` usable bytes with the layout debugging flags `layout`:
 *   [object: max(size, 16)][tag: 8 bytes at offset max(size, 16)][caller: 8][backup: 8 + size]
 * rounded up to the alignment. The tag follows the object's last byte, so that an overflow of a
 * single byte reaches it (objects under 16 bytes keep it past their two link words).
 * Returns 0, or -1 when the layout exceeds POOL_SIZE_MAX.
 */
static int compute_layout(struct pool_head *pool, size_t size, size_t align, unsigned int layout)
{
	size_t off = size < POOL_MIN_OBJECT ? POOL_MIN_OBJECT : size;
	/* under uaf the object ends at a guard page: its caller lives in the uaf table instead */
	unsigned int extras = (layout & POOL_DBG_UAF) ? 0 : layout;

	if (size > POOL_SIZE_MAX)
		return -1;
	pool->tag_off = pool->caller_off = pool->backup_off = 0;
	if (extras & POOL_DBG_TAG) {
		pool->tag_off = off;
		off += sizeof(uint64_t);
	}
	if (extras & POOL_DBG_CALLER) {
		pool->caller_off = round_up(off, sizeof(void *));
		off = pool->caller_off + sizeof(void *);
	}
	if (extras & POOL_DBG_BACKUP) {
		pool->backup_off = round_up(off, sizeof(uint64_t));
		off = pool->backup_off + sizeof(uint64_t) + size;
	}
	off = round_up(off, align);
	if (off > POOL_SIZE_MAX)
		return -1;
	pool->ro.size = size;
	pool->stride = off;
	pool->align = align;
	pool->layout = layout;
	return 0;
}

static int sizes_mergeable(size_t a, size_t b)
{
	size_t big = a > b ? a : b, small = a > b ? b : a;
	size_t tol = big / 100 > 16 ? big / 100 : 16;

	return big - small <= tol;
}

static int add_user(struct pool_head *pool, const char *name, size_t size, size_t align,
                    unsigned int flags)
{
	struct pool_user *u;

	if (pool->users == pool->users_cap) {
		unsigned int cap = pool->users_cap ? pool->users_cap * 2 : 4;

		u = pool__os_meta_alloc(cap * sizeof(*u), 16);
		if (!u)
			return -1;
		if (pool->user)
			memcpy(u, pool->user, pool->users * sizeof(*u));
		pool__os_meta_free(pool->user, pool->users_cap * sizeof(*u), 16);
		pool->user = u;
		pool->users_cap = cap;
	}
	u = &pool->user[pool->users++];
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->size = size;
	u->align = align;
	u->flags = flags;
	return 0;
}

static struct pool_head *find_mergeable(const char *name, size_t size, size_t align,
                                        unsigned int layout)
{
	struct pool_head *p;

	for (p = pool__list_head; p; p = p->next) {
		if (!(p->ro.flags & POOL_F_SHARED) || p->align != align || p->layout != layout)
			continue;
		if ((pool_debugging & POOL_DBG_NO_MERGE) && strcmp(p->name, name) != 0)
			continue;
		if (p->ro.size == size)
			return p;
		if (sizes_mergeable(p->ro.size, size) && !atomic_load(&p->ever_allocated))
			return p;
	}
	return NULL;
}

POOL_API struct pool_head *pool_create_aligned(const char *name, size_t size, size_t align,
                                               unsigned int flags)
{
	struct pool_head tmp, *pool;
	unsigned int layout, nb, s;
	size_t head_size;

	if (!valid_name(name) || size == 0 || (flags & ~POOL_F_CREATE_MASK) ||
	    (align & (align - 1)) || align > pool__os_page_size()) {
		errno = EINVAL;
		return NULL;
	}
	if (align < POOL_DEFAULT_ALIGN)
		align = POOL_DEFAULT_ALIGN;
	if (!(flags & POOL_F_EXACT)) {
		if (size > POOL_SIZE_MAX) {
			errno = EINVAL;
			return NULL;
		}
		size = round_up(size, sizeof(void *));
	}

	config_ensure();
	pthread_mutex_lock(&pool__list_lock);
	pool_config_frozen = 1;
	layout = pool_debugging & POOL_DBG_LAYOUT;
	memset(&tmp, 0, sizeof(tmp));
	if (compute_layout(&tmp, size, align, layout) < 0) {
		pthread_mutex_unlock(&pool__list_lock);
		errno = EINVAL;
		return NULL;
	}
	if (flags & POOL_F_SHARED) {
		pool = find_mergeable(name, size, align, layout);
		if (pool) {
			if (add_user(pool, name, size, align, flags) < 0) {
				pthread_mutex_unlock(&pool__list_lock);
				errno = ENOMEM;
				return NULL;
			}
			if (size > pool->ro.size)
				compute_layout(pool, size, align, layout);
			pthread_mutex_unlock(&pool__list_lock);
			return pool;
		}
	}

	nb = pool__config.buckets;
	head_size = sizeof(*pool) + nb * sizeof(struct pool_bucket);
	pool = pool__os_meta_alloc(head_size, POOL_CACHE_LINE);
	if (!pool) {
		pthread_mutex_unlock(&pool__list_lock);
		errno = ENOMEM;
		return NULL;
	}
	compute_layout(pool, size, align, layout);
	pool->ro.flags = flags;
	pool->nbuckets = nb;
	pool->bucket_shift = 64 - (unsigned int)__builtin_ctz(nb);
	pool->cluster = pool__config.cluster;
	snprintf(pool->name, sizeof(pool->name), "%s", name);
	if (add_user(pool, name, size, align, flags) < 0) {
		pool__os_meta_free(pool, head_size, POOL_CACHE_LINE);
		pthread_mutex_unlock(&pool__list_lock);
		errno = ENOMEM;
		return NULL;
	}
	/* a slot in every thread's cache array, or none (0) when all are taken */
	for (s = 1; s < POOL_MAX_CACHED_POOLS; s++) {
		if (!pool__slots[s]) {
			pool__slots[s] = pool;
			pool->ro.index = s;
			pool->ro.cache_off = (uint32_t)offsetof(struct pool_thread_cache, tc[s]);
			if (s + 1 > atomic_load(&pool_max_slot))
				atomic_store(&pool_max_slot, s + 1);
			break;
		}
	}
	pool->prev = pool_list_tail;
	if (pool_list_tail)
		pool_list_tail->next = pool;
	else
		pool__list_head = pool;
	pool_list_tail = pool;
	pool__nb_pools++;
	if (san_on())
		pool__san_pool_created(pool);
	pthread_mutex_unlock(&pool__list_lock);
	return pool;
}

POOL_API struct pool_head *pool_create(const char *name, size_t size, unsigned int flags)
{
	return pool_create_aligned(name, size, 0, flags);
}

/* Take every thread's cached objects of `pool` back into the shared lists (pool_destroy). */
static void drain_all_threads(struct pool_head *pool)
{
	struct pool_thread_ctx *self = pool__thread_ctx();
	unsigned int i, slot = pool->ro.index;

	if (!slot)
		return;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_ctx *ctx = registry[i];
		struct pool_tcache *tc;
		void *list;

		if (!ctx)
			continue;
		pthread_mutex_lock(&ctx->lock);
		tc = &ctx->cache->tc[slot];
		list = tc->head;
		tc->head = NULL;
		if (ctx == self)
			ctx->reserved -= (size_t)tc->limit * pool->stride;
		else
			atomic_fetch_add(&ctx->credit, (size_t)tc->limit * pool->stride);
		tc_set_room(tc, 0);
		__atomic_store_n(&tc->limit, 0, __ATOMIC_RELAXED);
		tc->referenced = 0;
		pthread_mutex_unlock(&ctx->lock);
		if (list)
			release_list(pool, self, list, 0);
	}
	pthread_mutex_unlock(&registry_lock);
}

/* Give every object of the shared lists back to the OS layer; BUSY buckets are retried. */
static void flush_shared(struct pool_head *pool)
{
	unsigned int i, tries;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_item *list = NULL, *down;
		void *p, *next;

		for (tries = 0; tries < 100000; tries++) {
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
			down = link_get(list, 1);
			atomic_fetch_sub_explicit(&b->free_objects, cluster_length(list),
			                          memory_order_relaxed);
			for (p = list; p; p = next) {
				next = link_get(p, 0);
				os_put(pool, p);
				atomic_fetch_add_explicit(&pool->gc_released_bytes, pool->stride,
				                          memory_order_relaxed);
			}
		}
	}
}

POOL_API int pool_destroy(struct pool_head *pool)
{
	size_t head_size;

	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&pool__list_lock);
	if (pool->users > 1) {
		pool->users--;
		pthread_mutex_unlock(&pool__list_lock);
		return 0;
	}
	drain_all_threads(pool);
	if (pool__sum_used(pool) != 0) {
		pthread_mutex_unlock(&pool__list_lock);
		errno = EBUSY;
		return -1;
	}
	flush_shared(pool);
	if (pool->layout & POOL_DBG_UAF)
		pool__uaf_release(pool);
	if (san_on())
		pool__san_pool_destroyed(pool);
	if (pool->prev)
		pool->prev->next = pool->next;
	else
		pool__list_head = pool->next;
	if (pool->next)
		pool->next->prev = pool->prev;
	else
		pool_list_tail = pool->prev;
	if (pool->ro.index)
		pool__slots[pool->ro.index] = NULL;
	pool__nb_pools--;
	pthread_mutex_unlock(&pool__list_lock);
	pool__os_meta_free(pool->user, pool->users_cap * sizeof(*pool->user), 16);
	head_size = sizeof(*pool) + pool->nbuckets * sizeof(struct pool_bucket);
	pool__os_meta_free(pool, head_size, POOL_CACHE_LINE);
	return 0;
}

POOL_API struct pool_head *pool__declare_create(const char *name, size_t size)
{
	struct pool_head *pool = pool_create(name, size, POOL_F_SHARED);

	if (!pool) {
		fprintf(stderr, "libpool: POOL_DECLARE(%s, %zu): %s\n", name ? name : "(null)",
		        size, strerror(errno));
		exit(1);
	}
	return pool;
}

POOL_API void pool__declare_destroy(struct pool_head *pool)
{
	if (pool) {
		pool_thread_flush();
		pool_destroy(pool);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Memory return                                                                              */
/* ------------------------------------------------------------------------------------------ */

POOL_API void pool_flush(struct pool_head *pool)
{
	if (pool)
		flush_shared(pool);
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
static void gc_one(struct pool_head *pool)
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
		struct pool_item *cl = shared_pop(pool, i);
		void *p, *next;

		if (!cl) {
			misses++;
			continue;
		}
		misses = 0;
		for (p = cl; p && excess > 0; p = next) {
			next = link_get(p, 0);
			os_put(pool, p);
			atomic_fetch_add_explicit(&pool->gc_released_bytes, pool->stride,
			                          memory_order_relaxed);
			excess--;
		}
		if (p)
			push_or_release(pool, p, cluster_length(p), i);
	}
}

POOL_API void pool_gc(struct pool_head *pool)
{
	struct pool_head *p;

	if (pool) {
		gc_one(pool);
	} else {
		pthread_mutex_lock(&pool__list_lock);
		for (p = pool__list_head; p; p = p->next)
			gc_one(p);
		pthread_mutex_unlock(&pool__list_lock);
	}
	pool__os_trim();
}

/* ------------------------------------------------------------------------------------------ */
/* Limits, statistics, configuration                                                          */
/* ------------------------------------------------------------------------------------------ */

void pool__set_limit_locked(struct pool_head *pool, size_t max_objects)
{
	atomic_store(&pool->limit_count, (long)pool__sum_allocated(pool));
	pool->limit = max_objects;
}

POOL_API int pool_set_limit(struct pool_head *pool, size_t max_objects)
{
	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&pool__list_lock);
	pool__set_limit_locked(pool, max_objects);
	pthread_mutex_unlock(&pool__list_lock);
	return 0;
}

unsigned long pool__sum_cached(const struct pool_head *pool)
{
	unsigned long sum = 0;
	unsigned int i, slot = pool->ro.index;

	if (!slot)
		return 0;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		const struct pool_tcache *tc;
		uint32_t limit, room;

		if (!registry[i])
			continue;
		tc = &registry[i]->cache->tc[slot];
		limit = __atomic_load_n(&tc->limit, __ATOMIC_RELAXED);
		room = __atomic_load_n(&tc->room, __ATOMIC_RELAXED);
		sum += room < limit ? limit - room : 0;    /* racy reads: never below 0 */
	}
	pthread_mutex_unlock(&registry_lock);
	return sum;
}

POOL_API int pool_get_stats(const struct pool_head *pool, struct pool_stats *st)
{
	if (!pool || !st) {
		errno = EINVAL;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->size = pool->ro.size;
	st->align = pool->align;
	st->stride = pool->stride;
	st->allocated = pool__sum_allocated(pool);
	st->used = pool__sum_used(pool);
	st->cached = pool__sum_cached(pool);
	st->needed_avg = pool__sum_needed(pool);
	st->failed = pool__sum_failed(pool);
	st->shared_free = pool__sum_shared_free(pool);
	st->limit = pool->limit;
	st->users = pool->users;
	st->flags = pool->ro.flags;
	st->buckets = pool->nbuckets;
	st->os_layer = pool__os_name();
	pool__os_usage(&st->os_allocated, &st->os_resident);
	st->shared_get_objects = sum_shared_get_objects(pool);
	st->shared_get_clusters = sum_shared_get_clusters(pool);
	st->shared_put_objects = sum_shared_put_objects(pool);
	st->shared_put_clusters = sum_shared_put_clusters(pool);
	st->os_allocs = sum_os_allocs(pool);
	st->os_releases = sum_os_releases(pool);
	st->gc_released_bytes = atomic_load_explicit(&pool->gc_released_bytes,
	                                             memory_order_relaxed);
	return 0;
}

POOL_API const char *pool_name(const struct pool_head *pool)
{
	return pool ? pool->name : NULL;
}

POOL_API size_t pool_object_size(const struct pool_head *pool)
{
	return pool ? pool->ro.size : 0;
}

POOL_API void pool_for_each(int (*fn)(struct pool_head *pool, void *arg), void *arg)
{
	struct pool_head *p;

	if (!fn)
		return;
	pthread_mutex_lock(&pool__list_lock);
	for (p = pool__list_head; p; p = p->next)
		if (fn(p, arg))
			break;
	pthread_mutex_unlock(&pool__list_lock);
}

POOL_API int pool_configure(const struct pool_config *cfg)
{
	int ret = 0;

	if (!cfg) {
		errno = EINVAL;
		return -1;
	}
	if ((cfg->buckets && (cfg->buckets > POOL_BUCKETS_MAX ||
	                      (cfg->buckets & (cfg->buckets - 1)))) ||
	    (cfg->cache_bytes && (cfg->cache_bytes < 4096 || cfg->cache_bytes > POOL_SIZE_MAX)) ||
	    (cfg->cluster && cfg->cluster > POOL_CLUSTER_MAX) ||
	    cfg->decay_ms > POOL_DECAY_MS_MAX) {
		errno = EINVAL;
		return -1;
	}
	config_ensure();
	pthread_mutex_lock(&pool__list_lock);
	if (pool_config_frozen) {
		errno = EBUSY;
		ret = -1;
	} else {
		if (cfg->buckets)
			pool__config.buckets = cfg->buckets;
		if (cfg->cache_bytes)
			pool__config.cache_bytes = cfg->cache_bytes;
		if (cfg->cluster)
			pool__config.cluster = cfg->cluster;
		if (cfg->decay_ms)
			pool__config.decay_ms = cfg->decay_ms;
	}
	pthread_mutex_unlock(&pool__list_lock);
	return ret;
}

POOL_API void pool_get_config(struct pool_config *cfg)
{
	config_ensure();
	if (cfg)
		*cfg = pool__config;
}

/* ------------------------------------------------------------------------------------------ */
/* fork(): the child must be able to allocate                                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * Before fork() we take the pool list and registry locks and own every bucket head (swapping
 * BUSY in, waiting for holders, who hold it for a few instructions), so that no head is BUSY and
 * no lock is held by a thread that will not exist in the child. Parent and child put the heads
 * back. The child then takes back the caches of the threads that did not follow it.
 */
static void fork_prepare(void)
{
	struct pool_head *p;
	unsigned int i;

	pthread_mutex_lock(&pool__list_lock);
	pthread_mutex_lock(&registry_lock);
	pool__debug_fork_prepare();
	for (p = pool__list_head; p; p = p->next) {
		for (i = 0; i < p->nbuckets; i++) {
			struct pool_item *h;

			while ((h = atomic_exchange(&p->buckets[i].free_list, POOL_BUSY)) ==
			       POOL_BUSY)
				sched_yield();
			p->buckets[i].fork_saved = h;
		}
	}
}

static void fork_restore_heads(void)
{
	struct pool_head *p;
	unsigned int i;

	for (p = pool__list_head; p; p = p->next)
		for (i = 0; i < p->nbuckets; i++)
			atomic_store(&p->buckets[i].free_list, p->buckets[i].fork_saved);
}

static void fork_parent(void)
{
	fork_restore_heads();
	pool__debug_fork_after();
	pthread_mutex_unlock(&registry_lock);
	pthread_mutex_unlock(&pool__list_lock);
}

static void fork_child(void)
{
	struct pool_thread_ctx *self = &pool_ctx;
	unsigned int i, s, max;

	fork_restore_heads();
	pool__debug_fork_after();
	max = atomic_load(&pool_max_slot);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_ctx *ctx = registry[i];

		if (!ctx || ctx == self)
			continue;
		for (s = 1; s < max; s++) {
			struct pool_tcache *tc = &ctx->cache->tc[s];

			if (tc->head && pool__slots[s])
				release_list(pool__slots[s], self, tc->head, 0);
			tc->head = NULL;
			tc->room = tc->limit = 0;
		}
		registry[i] = NULL;
	}
	/* the forking thread took both locks in fork_prepare(): it owns them in the child too */
	pthread_mutex_unlock(&registry_lock);
	pthread_mutex_unlock(&pool__list_lock);
}

__attribute__((constructor(101))) static void pool_core_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	pool__debug_init();
}
