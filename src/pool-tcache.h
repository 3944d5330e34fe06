/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The thread-cache tier: the registry, each thread's context and caches, budget reservations,
 * CLOCK eviction, refill, bulk moves and flush. Private header: its caller is pool.c (the pool
 * heads). Functions taking `dbg` want the debugging word as pool__thread_self() returned it, so
 * that one slow-path call decides everything on one snapshot of it.
 */
#ifndef POOL_SRC_POOL_TCACHE_H
#define POOL_SRC_POOL_TCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pool/pool.h>

#include "pool-head-t.h"

/* Pools by cache slot (struct pool_head_ro.index), under the pool list lock of pool.c. */
extern struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];

/*
 * The calling thread's context: registered on first use (an id from the registry, or none past
 * POOL_MAX_THREADS: the thread then works without a cache), and brought in line with the
 * run-time flags (no-cache flushes the caches; integrity switched on fills them with the
 * pattern). *dbg receives the debugging word it acted on. Never NULL.
 */
struct pool_thread *pool__thread_self(unsigned int *dbg);

/* The thread's registry id (a hash of it for threads without one) and fault-injection state. */
unsigned int pool__thread_id(const struct pool_thread *ctx);
uint64_t *pool__thread_rng(struct pool_thread *ctx);

/* Can this thread cache objects of `pool`? (registered, pool has a slot, no-cache off...) */
int pool__tcache_usable(const struct pool_head *pool, const struct pool_thread *ctx,
                        unsigned int dbg);

/*
 * Do the objects of this thread's caches carry the integrity pattern (integrity on in `dbg`, and
 * the caches filled since it was last switched on)? Only then may a check read it.
 */
int pool__tcache_integrity(const struct pool_thread *ctx, unsigned int dbg);

/* Pop an object of `pool` from this thread's cache (cold-first: the oldest); NULL if empty. */
void *pool__tcache_pop(struct pool_head *pool, struct pool_thread *ctx, unsigned int dbg);

/*
 * Push `obj` into this thread's cache of `pool`, reserving room within the budget (evicting
 * cold objects when needed). 1 when cached, 0 when the budget cannot hold it.
 */
int pool__tcache_push(struct pool_head *pool, struct pool_thread *ctx, void *obj,
                      unsigned int dbg);

/*
 * One object for this thread, counted as used: from a cluster of the shared lists, whose other
 * objects refill this thread's cache when the budget holds them (else they go back), or a new
 * object from the OS layer. NULL at the limit or when out of memory.
 */
void *pool__tcache_refill(struct pool_head *pool, struct pool_thread *ctx, unsigned int dbg);

/* Give one object back without caching it (it was counted as used until now). */
void pool__tcache_put_uncached(struct pool_head *pool, struct pool_thread *ctx, void *obj,
                               unsigned int dbg, const void *caller);

/*
 * pool_alloc_bulk() for a thread that can cache `pool` and no per-object debugging: `n` objects
 * into objs[] from the cache, then whole clusters; n, or 0 with nothing taken.
 */
size_t pool__tcache_alloc_bulk(struct pool_head *pool, struct pool_thread *ctx, void **objs,
                               size_t n, unsigned int dbg);

/* The empty entries of a thread without caches (pool__tls_cache points to them). */
extern const struct pool_tcache pool__tcache_none[POOL_MAX_CACHED_POOLS];

/*
 * The registered caller's caches straight from the TLS pointer the inline fast path reads
 * (pool__tls_cache points to the first member of struct pool_thread_caches): NULL for a thread
 * without caches. No call into the TLS runtime, unlike pool__thread_self().
 */
static inline struct pool_thread_caches *pool__tcache_fast(void)
{
	struct pool_tcache *t = pool__tls_cache;

	return t == pool__tcache_none ? NULL : (struct pool_thread_caches *)(void *)t;
}

/*
 * The fast paths of the bulk calls, for a registered thread without per-object debugging: n
 * objects out of / into the thread's bulk magazine for `pool`, with a copy of the pointers and
 * no object touched (the way DPDK's mempool cache works). They return 1, or 0 when they cannot
 * serve (no magazine, too few objects or too little room, a NULL pointer), and then the slow
 * paths do it all. The room of the thread cache entry is the reservation's, shared with the list.
 */
static inline int pool__tcache_alloc_bulk_fast(struct pool_head *pool, void **objs, size_t n)
{
	struct pool_thread_caches *ctx = pool__tcache_fast();
	unsigned int slot = pool->ro.index;
	struct pool_mag *m;

	if (!ctx || !slot || (POOL__DEBUGGING() & POOL_DBG_SLOW))
		return 0;
	m = ctx->mag[slot];
	if (!m || m->n < n)
		return 0;
	m->n -= (uint32_t)n;
	memcpy(objs, &m->obj[m->n], n * sizeof(*objs));
	__atomic_store_n(&ctx->tc[slot].room, ctx->tc[slot].room + (uint32_t)n, __ATOMIC_RELAXED);
	return 1;
}

static inline int pool__tcache_free_bulk_fast(struct pool_head *pool, void **objs, size_t n)
{
	struct pool_thread_caches *ctx = pool__tcache_fast();
	unsigned int slot = pool->ro.index;
	struct pool_tcache *tc;
	struct pool_mag *m;
	void **dst;
	size_t i;

	if (!ctx || !slot || (POOL__DEBUGGING() & POOL_DBG_SLOW))
		return 0;
	m = ctx->mag[slot];
	tc = &ctx->tc[slot];
	if (!m || n > POOL_MAG_OBJECTS - m->n || n > tc->room)
		return 0;
	/*
	 * Copy, and look for a NULL in the same pass (four at a time: one branch per four): the
	 * copy counts only if there was none, else the slow path skips them.
	 */
	dst = &m->obj[m->n];
	for (i = 0; i + 4 <= n; i += 4) {
		void *a = objs[i], *b = objs[i + 1], *c = objs[i + 2], *d = objs[i + 3];

		dst[i] = a;
		dst[i + 1] = b;
		dst[i + 2] = c;
		dst[i + 3] = d;
		if (POOL_UNLIKELY(!a || !b || !c || !d))
			return 0;
	}
	for (; i < n; i++) {
		dst[i] = objs[i];
		if (POOL_UNLIKELY(!objs[i]))
			return 0;
	}
	m->n += (uint32_t)n;
	__atomic_store_n(&tc->room, tc->room - (uint32_t)n, __ATOMIC_RELAXED);
	tc->referenced = 1;
	return 1;
}

/* pool_free_bulk() likewise: into the cache in one splice, or as clusters to the shared lists. */
void pool__tcache_free_bulk(struct pool_head *pool, struct pool_thread *ctx, void **objs,
                            size_t n, unsigned int dbg);

/* A pool gets a cache slot in every thread (none when all are taken: index 0) / loses it. */
void pool__tcache_attach(struct pool_head *pool);
void pool__tcache_detach(struct pool_head *pool);

/*
 * pool_destroy(): take every thread's cached objects of `pool` back to the shared lists and drop
 * their reservations. The caller holds the pool list lock; no other thread uses the pool.
 */
void pool__tcache_drain_pool(struct pool_head *pool);

/* Objects of `pool` in all thread caches (racy reads: an estimate). */
unsigned long pool__sum_cached(const struct pool_head *pool);

/*
 * fork(): the registry lock around fork(); the child takes back the caches of the threads that
 * did not follow it.
 */
void pool__tcache_fork_prepare(void);
void pool__tcache_fork_parent(void);
void pool__tcache_fork_child(void);

#endif
