/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The thread-cache tier: the thread registry, each thread's context and caches (struct
 * pool_thread, reached by the inline fast path through the TLS pointer pool__tls_cache), the
 * budget reservations, CLOCK eviction, refill from the shared lists, bulk moves, flush at thread
 * exit and on request, and draining other threads' caches (pool_destroy(), fork()).
 *
 * Concurrency: a thread's caches are written by that thread alone, except under its ctx->lock by
 * pool_destroy() (drain) and in a fork() child. The registry (registry[], ids) is guarded by
 * registry_lock; the pool slot table by the pool list lock of pool.c, whose creation and
 * destruction of pools call pool__tcache_attach()/detach(). Lock order: pool list ->
 * registry_lock -> ctx->lock -> a pool's pass lock (trylock only) (see the essay in pool.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pool-assert.h"
#include "pool-bucket.h"
#include "pool-config.h"
#include "pool-fault.h"
#include "pool-os.h"
#include "pool-tcache.h"
#include "pool-util.h"

/* Clusters a thread cache takes from the shared lists per refill (one exchange). */
#define REFILL_CLUSTERS 4u

/* A thread's slow paths look at the clock (demand tracking) once every this many calls. */
#define TICK_EVERY 16u

/*
 * The fast path's view of a thread: its caches when it is registered, otherwise this array of
 * empty entries (head NULL, room 0), on which pool_alloc() and pool_free() always take the slow
 * path. Never written: the fast path writes an entry only after finding an object or room in it.
 */
const struct pool_tcache pool__tcache_none[POOL_MAX_CACHED_POOLS];

/*
 * The TLS pointer the inline fast path reads (initial-exec: one load from the thread pointer).
 * It is 8 bytes, so that a program may load the library with dlopen(): glibc keeps a small
 * surplus of static TLS for initial-exec variables of libraries loaded late.
 */
POOL_API __thread struct pool_tcache *pool__tls_cache
	__attribute__((tls_model("initial-exec"))) = (struct pool_tcache *)pool__tcache_none;

/*
 * This thread as the library sees it (the default TLS model: reached only on slow paths). Its
 * caches are allocated: a library with initial-exec TLS has its whole TLS block in static TLS,
 * so the block must stay a few words for dlopen() to find room for it.
 */
static __thread struct pool_thread pool_self;

struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];
static atomic_uint pool_max_slot = 1;   /* highest slot ever used + 1 */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_thread_caches *registry[POOL_MAX_THREADS];
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
/* One cache entry                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Objects in slot `s` of a thread: its reservation minus the room left in it. */
static inline uint32_t tc_count(const struct pool_thread_caches *ctx, unsigned int s)
{
	return ctx->limit[s] - ctx->tc[s].room;
}

/* Other threads read `room` for statistics: stores are relaxed atomics. */
static inline void tc_set_room(struct pool_tcache *tc, uint32_t room)
{
	__atomic_store_n(&tc->room, room, __ATOMIC_RELAXED);
}

static inline void tc_set_count(struct pool_thread_caches *ctx, unsigned int s, uint32_t count)
{
	POOL_ASSERT(count <= ctx->limit[s]);
	tc_set_room(&ctx->tc[s], ctx->limit[s] - count);
}

/* Change the reservation of slot `s`, keeping its objects (and the budget's books). */
static inline void tc_set_limit(struct pool_thread_caches *ctx, unsigned int s, uint32_t limit)
{
	uint32_t count = tc_count(ctx, s);

	POOL_ASSERT(count <= limit);
	ctx->reserved += ((size_t)limit - ctx->limit[s]) * pool__slots[s]->cache_cost;
	__atomic_store_n(&ctx->limit[s], limit, __ATOMIC_RELAXED);
	tc_set_room(&ctx->tc[s], limit - count);
}

#if POOL_ASSERTS
/*
 * The budget's books (assertion builds): what the thread has reserved is the sum of its
 * reservations, plus what other threads credited it and it has not taken back yet. Under the
 * caches' lock.
 */
static inline int reserved_ok(const struct pool_thread_caches *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed), s;
	size_t sum = atomic_load_explicit(&ctx->credit, memory_order_relaxed);

	for (s = 1; s < max; s++)
		if (ctx->limit[s] && pool__slots[s])
			sum += (size_t)ctx->limit[s] * pool__slots[s]->cache_cost;
	return sum == ctx->reserved;
}
#endif

/* Do every object of this thread's caches carry the integrity pattern, as `dbg` wants? */
static inline int integrity_on(const struct pool_thread_caches *ctx, unsigned int dbg)
{
	return (dbg & POOL_DBG_INTEGRITY) &&
	       ctx->integrity_epoch == pool__debug_integrity_epoch();
}

int pool__tcache_integrity(const struct pool_thread *self, unsigned int dbg)
{
	return self->caches && integrity_on(self->caches, dbg);
}

/*
 * Move the objects of slot `slot`'s bulk magazine onto its list (in the order they were put in,
 * so the last one freed is on top); the count does not change. Every path but the bulk calls'
 * fast paths sees only the list, and calls this first.
 */
static void mag_spill(struct pool_thread_caches *ctx, unsigned int slot)
{
	struct pool_mag *m = ctx->mag[slot];
	struct pool_tcache *tc = &ctx->tc[slot];
	uint32_t i;

	if (!m || !m->n)
		return;
	for (i = 0; i < m->n; i++) {
		pool__link_set(m->obj[i], 0, tc->head);
		tc->head = m->obj[i];
	}
	m->n = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Thread contexts and the registry (step 7 of the essay)                                     */
/* ------------------------------------------------------------------------------------------ */

static void thread_exit(void *arg);
static void flush_all_caches(struct pool_thread_caches *ctx, unsigned int dbg);
static void fill_all_caches(struct pool_thread_caches *ctx);

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0) {
		static const char msg[] = "libpool: cannot create the thread-exit key; "
		                          "threads will not flush their caches at exit\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			return;
	}
}

/* An id for a thread without a registry slot: spreads such threads over the buckets. */
static unsigned int hash_thread(const void *p)
{
	return pool__hash_bits((uint64_t)(uintptr_t)p, 24);
}

/*
 * Free a thread's caches (empty by now) and its magazines. `destroy_lock` is 0 in a fork child
 * for a thread that did not follow: it may have held the lock, which must not be destroyed then.
 */
static void free_caches(struct pool_thread_caches *c, int destroy_lock)
{
	unsigned int s;

	for (s = 0; s < POOL_MAX_CACHED_POOLS; s++)
		if (c->mag[s])
			pool__os_meta_free(c->mag[s], sizeof(*c->mag[s]), POOL_CACHE_LINE);
	if (destroy_lock)
		pthread_mutex_destroy(&c->lock);
	pool__os_meta_free(c, sizeof(*c), POOL_CACHE_LINE);
}

static void thread_init(struct pool_thread *self)
{
	struct pool_thread_caches *c = NULL;
	unsigned int i, id = POOL_MAX_THREADS;

	pthread_once(&exit_key_once, make_exit_key);
	self->rng = 0;
	self->state = POOL_THREAD_UNCACHED;
	self->id = hash_thread(self);
	if (pool__fault(POOL_FAULT_THREAD))
		return;
	c = pool__os_meta_alloc(sizeof(*c), POOL_CACHE_LINE);
	if (!c)
		return;
	pthread_mutex_init(&c->lock, NULL);
	c->budget = pool__config_get()->cache_bytes;
	c->hand = 1;
	/*
	 * No epoch yet (they start at 1): `integrity` may have been switched on since this slow
	 * path read the flags, so only a sync that sees it on may say the caches are filled.
	 */
	c->integrity_epoch = 0;
	/* the lowest free id: ids stay dense, so per-id tables and hashes stay small */
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		if (!registry[i]) {
			id = i;
			registry[i] = c;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (id == POOL_MAX_THREADS) {
		pthread_mutex_destroy(&c->lock);
		pool__os_meta_free(c, sizeof(*c), POOL_CACHE_LINE);
		return;
	}
	c->id = id;
	self->id = id;
	self->caches = c;
	self->state = POOL_THREAD_CACHED;
	pthread_setspecific(exit_key, c);
	pool__tls_cache = c->tc;
}

/*
 * The pthread key destructor: flush, leave the registry, free the caches, and work without
 * them from now on (other destructors may still free objects).
 */
static void thread_exit(void *arg)
{
	struct pool_thread_caches *c = arg;
	struct pool_thread *self = &pool_self;

	if (self->state != POOL_THREAD_CACHED || self->caches != c)
		return;
	/* the fast path must not refill what is being flushed: empty entries from now on */
	pool__tls_cache = (struct pool_tcache *)pool__tcache_none;
	flush_all_caches(c, __atomic_load_n(&pool_debugging, __ATOMIC_ACQUIRE));
	pthread_mutex_lock(&registry_lock);
	registry[c->id] = NULL;
	pthread_mutex_unlock(&registry_lock);
	self->state = POOL_THREAD_EXITED;
	self->caches = NULL;
	self->id = hash_thread(self);
	free_caches(c, 1);
}

struct pool_thread *pool__thread_self(unsigned int *dbg_out)
{
	struct pool_thread *self = &pool_self;
	struct pool_thread_caches *ctx;
	unsigned int dbg = __atomic_load_n(&pool_debugging, __ATOMIC_ACQUIRE);
	size_t credit;

	*dbg_out = dbg;
	if (POOL_UNLIKELY(self->state == POOL_THREAD_NEW))
		thread_init(self);
	if (self->state != POOL_THREAD_CACHED)
		return self;
	ctx = self->caches;
	credit = atomic_load_explicit(&ctx->credit, memory_order_relaxed);
	if (credit)
		ctx->reserved -= atomic_exchange(&ctx->credit, 0);
	if (POOL_UNLIKELY(dbg & POOL_DBG_NO_CACHE)) {
		if (ctx->reserved)
			flush_all_caches(ctx, dbg);
	} else if (POOL_UNLIKELY((dbg & POOL_DBG_INTEGRITY) &&
	                         ctx->integrity_epoch != pool__debug_integrity_epoch())) {
		fill_all_caches(ctx);
	}
	return self;
}

unsigned int pool__thread_id(const struct pool_thread *self)
{
	return self->id;
}

uint64_t *pool__thread_rng(struct pool_thread *self)
{
	return &self->rng;
}

/* ------------------------------------------------------------------------------------------ */
/* Thread caches: reservation, eviction, flush (steps 2 and 3)                                */
/* ------------------------------------------------------------------------------------------ */

int pool__tcache_usable(const struct pool_head *pool, const struct pool_thread *self,
                        unsigned int dbg)
{
	return self->state == POOL_THREAD_CACHED && pool->ro.index &&
	       !(dbg & POOL_DBG_NO_CACHE) && pool->cache_cost <= self->caches->budget;
}

/* Every `TICK_EVERY` slow-path calls of this thread, give the pool's demand clock a look. */
static inline void tick(struct pool_head *pool)
{
	struct pool_thread *self = &pool_self;

	if (++self->ticks >= TICK_EVERY) {
		self->ticks = 0;
		pool__bucket_tick(pool);
	}
}

/*
 * Give back `n` objects linked by word 0 (each still counted as used), checked first when they
 * leave a thread cache (`from_cache`: the backup copy; the integrity pattern when `integrity`).
 * They go to the shared lists as clusters, or to the OS layer when the shared lists are
 * bypassed (no-global, uaf).
 */
static void release_objects(struct pool_head *pool, void *list, unsigned int n,
                            unsigned int start, unsigned int dbg, int from_cache, int integrity)
{
	void *p;

	if (!n)
		return;
	if (from_cache && (integrity || pool->backup_off))
		for (p = list; p; p = pool__link_get(p, 0))
			pool__debug_check_cached(pool, p, NULL, integrity);
	if ((dbg & POOL_DBG_NO_GLOBAL) || (pool->layout & POOL_DBG_UAF))
		pool__os_put(pool, list, n, start, NULL);
	else
		pool__push_or_release(pool, list, n, start);
}

/*
 * Evict the `n` most recently freed objects of slot `slot` (the top of its LIFO list: cutting
 * the bottom would walk what stays) as clusters, with one exchange, and give back the slot's
 * unused reservation. tcmalloc's thread caches release from the top of their lists too.
 */
static void tc_evict(struct pool_thread_caches *ctx, unsigned int slot, uint32_t n, unsigned int dbg)
{
	struct pool_tcache *tc = &ctx->tc[slot];
	struct pool_head *pool = pool__slots[slot];
	int integrity = integrity_on(ctx, dbg);
	uint32_t count = tc_count(ctx, slot);

	POOL_ASSERT(n <= count);
	if (n)
		mag_spill(ctx, slot);
	if (n) {
		void *list = tc->head, *rest;

		if ((dbg & POOL_DBG_NO_GLOBAL) || (pool->layout & POOL_DBG_UAF) || integrity ||
		    pool->backup_off) {
			void *q = list;
			uint32_t i;

			for (i = 1; i < n; i++)
				q = pool__link_get(q, 0);
			rest = pool__link_get(q, 0);
			pool__link_set(q, 0, NULL);
			tc->head = rest;
			tc_set_count(ctx, slot, count - n);
			release_objects(pool, list, n, ctx->id, dbg, 1, integrity);
		} else {
			struct pool_item *top, *bottom;
			unsigned int ncl;

			/* one walk: the clusters are built as the objects are unlinked */
			tc->head = pool__clusters_build(pool, list, n, &top, &bottom, &ncl);
			tc_set_count(ctx, slot, count - n);
			pool__push_clusters(pool, top, bottom, n, ncl, ctx->id);
		}
		tick(pool);
	}
	tc_set_limit(ctx, slot, tc_count(ctx, slot));
}

/* The clock hand's next victim: a slot with objects whose reference bit is clear; 0 if none. */
static unsigned int clock_victim(struct pool_thread_caches *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int step;

	for (step = 0; step < 2 * max; step++) {
		unsigned int s = ctx->hand;
		struct pool_tcache *tc = &ctx->tc[s];

		ctx->hand = s + 1 < max ? s + 1 : 1;
		if (!s || !tc_count(ctx, s))
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
static int tc_reserve(struct pool_thread_caches *ctx, unsigned int slot, uint32_t n, unsigned int dbg)
{
	struct pool_tcache *tc = &ctx->tc[slot];
	struct pool_head *pool = pool__slots[slot];
	size_t cost = pool->cache_cost;
	uint32_t want, grant;
	unsigned int s, max, rounds;
	int ok = 0;

	if (n <= tc->room)
		return 1;
	want = n - tc->room;
	grant = want < pool->cluster ? pool->cluster : want;
	if (ctx->reserved + (size_t)grant * cost <= ctx->budget)
		goto granted;
	grant = want;
	if (ctx->reserved + (size_t)grant * cost <= ctx->budget)
		goto granted;

	/* Over budget: take back what other slots reserve but do not use, then evict. */
	pthread_mutex_lock(&ctx->lock);
	max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	for (s = 1; s < max; s++)
		if (s != slot && ctx->tc[s].room)
			tc_evict(ctx, s, 0, dbg);
	for (rounds = 0; rounds < 4 * max; rounds++) {
		uint32_t cnt, ev;

		want = n > tc->room ? n - tc->room : 0;
		if (ctx->reserved + (size_t)want * cost <= ctx->budget) {
			ok = 1;
			break;
		}
		s = clock_victim(ctx);
		if (!s)
			break;
		cnt = tc_count(ctx, s);
		ev = cnt / 2;
		if (ev < pool__slots[s]->cluster)
			ev = cnt < pool__slots[s]->cluster ? cnt : pool__slots[s]->cluster;
		tc_evict(ctx, s, ev, dbg);
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!ok)
		return 0;
	grant = n > tc->room ? n - tc->room : 0;
granted:
	tc_set_limit(ctx, slot, ctx->limit[slot] + grant);
	POOL_ASSERT(ctx->reserved <= ctx->budget);
#if POOL_ASSERTS
	/* other threads change other slots' limits under the lock (drain) */
	pthread_mutex_lock(&ctx->lock);
	POOL_ASSERT(reserved_ok(ctx));
	pthread_mutex_unlock(&ctx->lock);
#endif
	return 1;
}

/* Evict everything this thread caches and drop its reservations (exit, flush, no-cache). */
static void flush_all_caches(struct pool_thread_caches *ctx, unsigned int dbg)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int s;

	pthread_mutex_lock(&ctx->lock);
	for (s = 1; s < max; s++)
		if (ctx->limit[s])
			tc_evict(ctx, s, tc_count(ctx, s), dbg);
	POOL_ASSERT(reserved_ok(ctx));
	pthread_mutex_unlock(&ctx->lock);
}

/* Integrity was switched on: fill every object this thread caches with the pattern. */
static void fill_all_caches(struct pool_thread_caches *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int epoch = pool__debug_integrity_epoch();
	unsigned int s;

	pthread_mutex_lock(&ctx->lock);
	for (s = 1; s < max; s++) {
		void *p;

		mag_spill(ctx, s);
		for (p = ctx->tc[s].head; p; p = pool__link_get(p, 0))
			pool__debug_fill_cached(pool__slots[s], p, 1);
	}
	pthread_mutex_unlock(&ctx->lock);
	ctx->integrity_epoch = epoch;
}

/* Push one object into slot `slot` (room must have been reserved). */
static void tc_push(struct pool_thread_caches *ctx, unsigned int slot, void *obj, int integrity)
{
	struct pool_tcache *tc = &ctx->tc[slot];
	struct pool_head *pool = pool__slots[slot];

	POOL_ASSERT(tc->room > 0);
	if (integrity || pool->backup_off)
		pool__debug_fill_cached(pool, obj, integrity);
	pool__link_set(obj, 0, tc->head);
	tc->head = obj;
	tc_set_room(tc, tc->room - 1);
	tc->referenced = 1;
}

/* Pop one object; the least recently freed one under cold-first. NULL if empty. */
static void *tc_pop(struct pool_thread_caches *ctx, unsigned int slot, unsigned int dbg)
{
	struct pool_tcache *tc = &ctx->tc[slot];
	uint32_t count = tc_count(ctx, slot);
	void *obj, *p;

	if (!tc->head || (dbg & POOL_DBG_COLD_FIRST))
		mag_spill(ctx, slot);
	if (!tc->head)
		return NULL;
	if ((dbg & POOL_DBG_COLD_FIRST) && count > 1) {
		/* the bottom of the LIFO list: walk to the one before it */
		for (p = tc->head; pool__link_get(pool__link_get(p, 0), 0); p = pool__link_get(p, 0))
			;
		obj = pool__link_get(p, 0);
		pool__link_set(p, 0, NULL);
	} else {
		obj = tc->head;
		tc->head = pool__link_get(obj, 0);
	}
	tc_set_count(ctx, slot, count - 1);
	return obj;
}

/* ------------------------------------------------------------------------------------------ */
/* Beyond the thread cache: refill, put, bulk                                                 */
/* ------------------------------------------------------------------------------------------ */

void *pool__tcache_pop(struct pool_head *pool, struct pool_thread *self, unsigned int dbg)
{
	return tc_pop(self->caches, pool->ro.index, dbg);
}

int pool__tcache_push(struct pool_head *pool, struct pool_thread *self, void *obj,
                      unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int slot = pool->ro.index;

	if (!tc_reserve(ctx, slot, 1, dbg))
		return 0;
	tc_push(ctx, slot, obj, integrity_on(ctx, dbg));
	return 1;
}

/*
 * Put `n` more objects (linked by word 0, counted as used) into slot `slot` when the budget
 * holds them: spliced onto an empty list as they are, pushed one by one onto a non-empty one
 * or when debugging fills them. Returns 1, or 0 when they did not fit (nothing changed).
 */
static int tc_take_list(struct pool_thread_caches *ctx, unsigned int slot, void *list,
                        uint32_t n, unsigned int dbg)
{
	struct pool_tcache *tc = &ctx->tc[slot];
	struct pool_head *pool = pool__slots[slot];
	int integrity = integrity_on(ctx, dbg);
	void *p, *next;

	if (!n)
		return 1;
	if (!tc_reserve(ctx, slot, n, dbg))
		return 0;
	if (!tc->head && !integrity && !pool->backup_off) {
		/* no walk: the chain becomes the list, its count is known */
		tc->head = list;
		tc_set_count(ctx, slot, tc_count(ctx, slot) + n);
		tc->referenced = 1;
		return 1;
	}
	for (p = list; p; p = next) {
		next = pool__link_get(p, 0);
		tc_push(ctx, slot, p, integrity);
	}
	return 1;
}

void *pool__tcache_refill(struct pool_head *pool, struct pool_thread *self, unsigned int dbg)
{
	struct pool_thread_caches *ctx = pool__tcache_usable(pool, self, dbg) ? self->caches : NULL;
	unsigned int n = 0;
	void *obj = NULL, *rest;

	/*
	 * A cache that refills takes up to REFILL_CLUSTERS clusters at once (one exchange): a
	 * thread that only allocates (the producer of a pipeline) then pays one exchange for that
	 * many objects. Without a cache, one cluster.
	 */
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF))
		obj = pool__shared_pop(pool, self->id, ctx ? REFILL_CLUSTERS : 1, &n);
	/* one object from the OS layer: growing, the pool asks for no more than it hands out */
	if (!obj)
		obj = pool__os_get(pool, 1, self->id, &n);
	if (!obj)
		return NULL;
	tick(pool);
	rest = pool__link_get(obj, 0);
	if (rest && !(ctx && tc_take_list(ctx, pool->ro.index, rest, n - 1, dbg)))
		release_objects(pool, rest, n - 1, self->id, dbg, 0, 0);
	pool__link_set(obj, 0, NULL);
	return obj;
}

void pool__tcache_put_uncached(struct pool_head *pool, struct pool_thread *self, void *obj,
                               unsigned int dbg, const void *caller)
{
	pool__link_set(obj, 0, NULL);
	if (pool->layout & POOL_DBG_UAF)
		pool__os_put(pool, obj, 1, self->id, caller);
	else
		release_objects(pool, obj, 1, self->id, dbg, 0, 0);
	/* threads without caches (no-cache, past the registry) look at the demand clock too */
	tick(pool);
}

size_t pool__tcache_alloc_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                               size_t n, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int slot = pool->ro.index;
	struct pool_tcache *tc = &ctx->tc[slot];
	size_t got = 0, i;

	/* from the cache first, then clusters from the shared lists or the OS layer */
	mag_spill(ctx, slot);
	while (got < n && tc->head) {
		objs[got++] = tc->head;
		tc->head = pool__link_get(tc->head, 0);
	}
	if (got)
		tc_set_count(ctx, slot, tc_count(ctx, slot) - (uint32_t)got);
	while (got < n) {
		unsigned int k = 0;
		void *p = NULL, *next;

		if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF))
			p = pool__shared_pop(pool, ctx->id, 1, &k);
		if (!p)
			p = pool__os_get(pool, n - got < pool->cluster ? (unsigned int)(n - got) :
			                 pool->cluster, ctx->id, &k);
		if (!p)
			break;
		for (; p && got < n; p = next) {
			next = pool__link_get(p, 0);
			pool__link_set(p, 0, NULL);
			objs[got++] = p;
			k--;
		}
		/* what the last cluster held beyond the request goes to the cache, or back */
		if (p && !tc_take_list(ctx, slot, p, k, dbg))
			release_objects(pool, p, k, ctx->id, dbg, 0, 0);
		tick(pool);
	}
	if (got == n)
		return n;
	/* all or nothing: what was taken goes back */
	for (i = 0; i < got; i++)
		pool__link_set(objs[i], 0, i + 1 < got ? objs[i + 1] : NULL);
	if (!tc_take_list(ctx, slot, objs[0], (uint32_t)got, dbg))
		release_objects(pool, objs[0], (unsigned int)got, ctx->id, dbg, 0, 0);
	return 0;
}

void pool__tcache_free_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                            size_t n, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int slot = pool->ro.index;

	/* a pool used in bulk gets its magazine, and the next bulk calls take the fast path */
	if (!ctx->mag[slot] && n <= POOL_MAG_OBJECTS)
		ctx->mag[slot] = pool__os_meta_alloc(sizeof(*ctx->mag[slot]), POOL_CACHE_LINE);
	if (ctx->mag[slot] && tc_reserve(ctx, slot, (uint32_t)n, dbg) &&
	    pool__tcache_free_bulk_fast(pool, objs, n))
		return;
	void *list = NULL;
	size_t i, k = 0;

	for (i = n; i-- > 0;) {
		if (!objs[i])
			continue;
		pool__link_set(objs[i], 0, list);
		list = objs[i];
		k++;
	}
	if (!k)
		return;
	if (tc_take_list(ctx, slot, list, (uint32_t)k, dbg))
		return;
	/* the budget cannot hold them: they go to the shared lists as clusters at once */
	release_objects(pool, list, (unsigned int)k, ctx->id, dbg, 0, 0);
}

POOL_API void pool_thread_flush(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int dbg;

	if (self->state == POOL_THREAD_CACHED) {
		pool__thread_self(&dbg);
		flush_all_caches(self->caches, dbg);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Other threads' caches: pool_destroy(), statistics, fork()                                  */
/* ------------------------------------------------------------------------------------------ */

void pool__tcache_drain_pool(struct pool_head *pool)
{
	unsigned int dbg, i, slot = pool->ro.index;
	struct pool_thread *self = pool__thread_self(&dbg);

	if (!slot)
		return;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *ctx = registry[i];
		struct pool_tcache *tc;
		uint32_t count;
		void *list;

		if (!ctx)
			continue;
		pthread_mutex_lock(&ctx->lock);
		mag_spill(ctx, slot);
		tc = &ctx->tc[slot];
		list = tc->head;
		count = tc_count(ctx, slot);
		tc->head = NULL;
		if (ctx == self->caches)
			ctx->reserved -= (size_t)ctx->limit[slot] * pool->cache_cost;
		else
			atomic_fetch_add(&ctx->credit, (size_t)ctx->limit[slot] * pool->cache_cost);
		tc_set_room(tc, 0);
		__atomic_store_n(&ctx->limit[slot], 0, __ATOMIC_RELAXED);
		tc->referenced = 0;
		pthread_mutex_unlock(&ctx->lock);
		release_objects(pool, list, count, self->id, dbg, 0, 0);
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
		uint32_t limit, room;

		if (!registry[i])
			continue;
		limit = __atomic_load_n(&registry[i]->limit[slot], __ATOMIC_RELAXED);
		room = __atomic_load_n(&registry[i]->tc[slot].room, __ATOMIC_RELAXED);
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

/*
 * In a fork child, the objects a vanished thread's list of slot `s` really holds: the thread may
 * have been cut short between changing its list and its count (cutting clusters off, splicing
 * a refill), so its count is only an upper bound. Objects it was moving are lost to the child.
 */
static uint32_t listed(const struct pool_thread_caches *ctx, unsigned int s)
{
	uint32_t want = tc_count(ctx, s), n = 0;
	void *p;

	for (p = ctx->tc[s].head; p && n < want; p = pool__link_get(p, 0))
		n++;
	return n;
}

void pool__tcache_fork_child(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int i, s, max;

	max = atomic_load(&pool_max_slot);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *ctx = registry[i];

		if (!ctx || ctx == self->caches)
			continue;
		for (s = 1; s < max; s++) {
			struct pool_tcache *tc = &ctx->tc[s];

			mag_spill(ctx, s);
			if (tc->head && pool__slots[s])
				release_objects(pool__slots[s], tc->head, listed(ctx, s), self->id,
				                0, 0, 0);
			tc->head = NULL;
			tc->room = 0;
			ctx->limit[s] = 0;
		}
		registry[i] = NULL;
		/* its thread does not exist here: its caches go (a lock it held with them) */
		free_caches(ctx, 0);
	}
	/* the forking thread took the lock in fork_prepare(): it owns it in the child too */
	pthread_mutex_unlock(&registry_lock);
}
