/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The thread-cache tier: the thread registry, each thread's context and caches (struct
 * pool_thread, reached by the inline fast path through the TLS pointer pool__tls_cache), the
 * budget reservations, CLOCK eviction, refill from the shared lists, flush at thread exit and on
 * request, and draining other threads' caches (pool_destroy(), fork()).
 *
 * Concurrency: a thread's caches are written by that thread alone, except under its ctx->lock by
 * pool_destroy() (drain) and in a fork() child. The registry (registry[], ids) is guarded by
 * registry_lock; the pool slot table by the pool list lock of pool.c, whose creation and
 * destruction of pools call pool__tcache_attach()/detach(). Lock order: pool list ->
 * registry_lock -> ctx->lock (see the essay in pool.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pool-bucket.h"
#include "pool-config.h"
#include "pool-tcache.h"

/*
 * The fast path's view of a thread: its caches when it is registered, otherwise this array of
 * empty entries (head NULL, room 0), on which pool_alloc() and pool_free() always take the slow
 * path. Never written: the fast path writes an entry only after finding an object or room in it.
 */
static const struct pool_tcache tcache_none[POOL_MAX_CACHED_POOLS];

/*
 * The TLS pointer the inline fast path reads (initial-exec: one load from the thread pointer).
 * It is 8 bytes, so that a program may load the library with dlopen(): glibc keeps a small
 * surplus of static TLS for initial-exec variables of libraries loaded late.
 */
POOL_API __thread struct pool_tcache *pool__tls_cache
	__attribute__((tls_model("initial-exec"))) = (struct pool_tcache *)tcache_none;

/* This thread's caches and context (the default TLS model: reached only on slow paths). */
static __thread struct pool_thread pool_self;

struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];
static atomic_uint pool_max_slot = 1;   /* highest slot ever used + 1 */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_thread *registry[POOL_MAX_THREADS];
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------------------------------ */
/* Pool slots                                                                                 */
/* ------------------------------------------------------------------------------------------ */

void pool__tcache_attach(struct pool_head *pool)
{
	unsigned int s;

	for (s = 1; s < POOL_MAX_CACHED_POOLS; s++) {
		if (!pool__slots[s]) {
			pool__slots[s] = pool;
			pool->ro.index = s;
			pool->ro.cache_off = (uint32_t)(s * sizeof(struct pool_tcache));
			if (s + 1 > atomic_load(&pool_max_slot))
				atomic_store(&pool_max_slot, s + 1);
			return;
		}
	}
}

void pool__tcache_detach(struct pool_head *pool)
{
	if (pool->ro.index)
		pool__slots[pool->ro.index] = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Thread contexts and the registry (step 7)                                                  */
/* ------------------------------------------------------------------------------------------ */

static void thread_exit(void *arg);
static void flush_all_caches(struct pool_thread *ctx);

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

static void thread_init(struct pool_thread *ctx)
{
	unsigned int i, id = POOL_MAX_THREADS;

	pthread_once(&exit_key_once, make_exit_key);
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->budget = pool__config_get()->cache_bytes;
	ctx->reserved = 0;
	ctx->hand = 1;
	ctx->integrity_epoch = pool__debug_integrity_epoch();
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
		pool__tls_cache = ctx->tc;
	} else {
		ctx->id = hash_thread(ctx);
		ctx->state = POOL_THREAD_UNCACHED;
	}
}

/* The pthread key destructor: flush, leave the registry, and work uncached from now on. */
static void thread_exit(void *arg)
{
	struct pool_thread *ctx = arg;

	if (ctx->state != POOL_THREAD_CACHED)
		return;
	pool__tls_cache = (struct pool_tcache *)tcache_none;
	flush_all_caches(ctx);
	pthread_mutex_lock(&registry_lock);
	registry[ctx->id] = NULL;
	pthread_mutex_unlock(&registry_lock);
	ctx->state = POOL_THREAD_EXITED;
	ctx->id = hash_thread(ctx);
}

static void fill_all_caches(struct pool_thread *ctx);

struct pool_thread *pool__thread_self(void)
{
	struct pool_thread *ctx = &pool_self;
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
	                       ctx->integrity_epoch != pool__debug_integrity_epoch()))
		fill_all_caches(ctx);
	return ctx;
}

/* ------------------------------------------------------------------------------------------ */
/* Thread caches: reservation, eviction, flush (steps 2 and 3)                                */
/* ------------------------------------------------------------------------------------------ */

int pool__tcache_usable(const struct pool_head *pool, const struct pool_thread *ctx)
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
			p = pool__link_get(p, 0);
		list = pool__link_get(p, 0);
		pool__link_set(p, 0, NULL);
	}
	tc_set_count(tc, keep);
	return list;
}

/* Evict the bottom `n` objects of slot `slot` and give back its unused reservation. */
static void tc_evict(struct pool_thread *ctx, unsigned int slot, uint32_t n)
{
	struct pool_tcache *tc = &ctx->tc[slot];
	struct pool_head *pool = pool__slots[slot];
	void *list;

	if (n) {
		list = tc_take_bottom(tc, n);
		pool__release_list(pool, list, ctx->id, 1, !!(pool_debugging & POOL_DBG_INTEGRITY));
	}
	ctx->reserved -= (size_t)tc->room * pool->stride;
	tc_set_limit(tc, tc_count(tc));
}

/* The clock hand's next victim: a slot with objects whose reference bit is clear; 0 if none. */
static unsigned int clock_victim(struct pool_thread *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int step;

	for (step = 0; step < 2 * max; step++) {
		unsigned int s = ctx->hand;
		struct pool_tcache *tc = &ctx->tc[s];

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
static int tc_reserve(struct pool_thread *ctx, unsigned int slot, uint32_t n)
{
	struct pool_tcache *tc = &ctx->tc[slot];
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
		struct pool_tcache *o = &ctx->tc[s];

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
			uint32_t cnt = tc_count(&ctx->tc[s]);
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
static void flush_all_caches(struct pool_thread *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int s;

	pthread_mutex_lock(&ctx->lock);
	for (s = 1; s < max; s++) {
		struct pool_tcache *tc = &ctx->tc[s];

		if (tc->limit)
			tc_evict(ctx, s, tc_count(tc));
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* Integrity was switched on: fill every object this thread caches with the pattern. */
static void fill_all_caches(struct pool_thread *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int s;

	pthread_mutex_lock(&ctx->lock);
	for (s = 1; s < max; s++) {
		struct pool_tcache *tc = &ctx->tc[s];
		void *p;

		for (p = tc->head; p; p = pool__link_get(p, 0))
			pool__debug_fill_cached(pool__slots[s], p, 1);
	}
	pthread_mutex_unlock(&ctx->lock);
	ctx->integrity_epoch = pool__debug_integrity_epoch();
}

/* Push one object into this thread's cache of `pool` (room must have been reserved). */
static void tc_push(struct pool_head *pool, struct pool_tcache *tc, void *obj)
{
	unsigned int integrity = pool_debugging & POOL_DBG_INTEGRITY;

	if (integrity || pool->backup_off)
		pool__debug_fill_cached(pool, obj, !!integrity);
	pool__link_set(obj, 0, tc->head);
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
	tc->head = pool__link_get(obj, 0);
	tc_set_room(tc, tc->room + 1);
	return obj;
}

/* ------------------------------------------------------------------------------------------ */
/* Getting and putting objects beyond the thread cache                                        */
/* ------------------------------------------------------------------------------------------ */

void *pool__tcache_refill(struct pool_head *pool, struct pool_thread *ctx)
{
	struct pool_item *cl = NULL;
	void *obj, *p, *next;
	unsigned int n;

	if (!(pool_debugging & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF))
		cl = pool__shared_pop(pool, ctx->id);
	if (!cl)
		return pool__os_get(pool);

	obj = cl;
	next = pool__link_get(obj, 0);
	pool__count_used(pool, obj, 1);
	if (!next)
		return obj;
	n = pool__cluster_length(next);
	if (pool__tcache_usable(pool, ctx) && tc_reserve(ctx, pool->ro.index, n)) {
		struct pool_tcache *tc = &ctx->tc[pool->ro.index];

		for (p = next; p; p = next) {
			next = pool__link_get(p, 0);
			pool__count_used(pool, p, 1);
			tc_push(pool, tc, p);
		}
	} else {
		pool__push_or_release(pool, next, n, ctx->id);
	}
	return obj;
}

void *pool__tcache_pop(struct pool_head *pool, struct pool_thread *ctx)
{
	return tc_pop(&ctx->tc[pool->ro.index]);
}

int pool__tcache_push(struct pool_head *pool, struct pool_thread *ctx, void *obj)
{
	if (!tc_reserve(ctx, pool->ro.index, 1))
		return 0;
	tc_push(pool, &ctx->tc[pool->ro.index], obj);
	return 1;
}

void pool__tcache_put_uncached(struct pool_head *pool, struct pool_thread *ctx, void *obj)
{
	pool__link_set(obj, 0, NULL);
	pool__release_list(pool, obj, ctx->id, 0, 0);
}

POOL_API void pool_thread_flush(void)
{
	struct pool_thread *ctx = &pool_self;

	if (ctx->state == POOL_THREAD_CACHED) {
		pool__thread_self();
		flush_all_caches(ctx);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Other threads' caches: pool_destroy(), statistics, fork()                                  */
/* ------------------------------------------------------------------------------------------ */

void pool__tcache_drain_pool(struct pool_head *pool)
{
	struct pool_thread *self = pool__thread_self();
	unsigned int i, slot = pool->ro.index;

	if (!slot)
		return;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread *ctx = registry[i];
		struct pool_tcache *tc;
		void *list;

		if (!ctx)
			continue;
		pthread_mutex_lock(&ctx->lock);
		tc = &ctx->tc[slot];
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
			pool__release_list(pool, list, self->id, 0, 0);
	}
	pthread_mutex_unlock(&registry_lock);
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
		tc = &registry[i]->tc[slot];
		limit = __atomic_load_n(&tc->limit, __ATOMIC_RELAXED);
		room = __atomic_load_n(&tc->room, __ATOMIC_RELAXED);
		sum += room < limit ? limit - room : 0;    /* racy reads: never below 0 */
	}
	pthread_mutex_unlock(&registry_lock);
	return sum;
}

void pool__tcache_fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

void pool__tcache_fork_parent(void)
{
	pthread_mutex_unlock(&registry_lock);
}

void pool__tcache_fork_child(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int i, s, max;

	max = atomic_load(&pool_max_slot);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread *ctx = registry[i];

		if (!ctx || ctx == self)
			continue;
		for (s = 1; s < max; s++) {
			struct pool_tcache *tc = &ctx->tc[s];

			if (tc->head && pool__slots[s])
				pool__release_list(pool__slots[s], tc->head, self->id, 0, 0);
			tc->head = NULL;
			tc->room = tc->limit = 0;
		}
		registry[i] = NULL;
	}
	/* the forking thread took the lock in fork_prepare(): it owns it in the child too */
	pthread_mutex_unlock(&registry_lock);
}

