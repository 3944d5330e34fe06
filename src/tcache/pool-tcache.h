/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The thread-cache tier's entry points (pool-tcache.c): what the slow paths and the bulk calls
 * ask of one thread's caches (pop, push, refill, an uncached put, bulk moves), the bulk calls'
 * inline fast paths, flush, and the sections that fork() and pool_destroy() quiesce; the
 * mechanics of one slot are pool-magazine.h's, the threads pool-thread.h's. Private header: its
 * callers are pool-alloc.c (the slow paths) and pool-thread.c. Functions taking `dbg` want the
 * debugging word as pool__thread_self() returned it, so that one slow-path call decides
 * everything on one snapshot of it.
 */
#ifndef POOL_SRC_POOL_TCACHE_H
#define POOL_SRC_POOL_TCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "base/pool-util.h"

/*
 * Can this thread cache objects of `pool`? (registered, the pool has a slot, no-cache off, and a
 * magazine of the pool fits the budget)
 */
int pool__tcache_usable(const struct pool_head *pool, const struct pool_thread *self,
                        unsigned int dbg);

/*
 * Do the objects of this thread's caches carry the integrity pattern (integrity on in `dbg`, and
 * the caches filled since it was last switched on)? Only then may a check read it.
 */
int pool__tcache_integrity(const struct pool_thread *self, unsigned int dbg);

/*
 * An object of `pool` from this thread's cache: the loaded magazine, else the previous one or
 * the top of the full stack loaded in its place (cold-first: the least recently freed object).
 * NULL when the thread caches none. Touches no shared line.
 */
void *pool__tcache_pop(struct pool_head *pool, struct pool_thread *self, unsigned int dbg);

/*
 * Push `obj` into this thread's cache of `pool`, making room in the loaded magazine when it is
 * full (magazines rotate, full ones leave for the shared lists when the budget cannot hold
 * them). 1 when cached, 0 when the slot cannot cache (no budget for a magazine, no memory) or
 * the pool was found destroyed. pool__tcache_pop(), pool__tcache_refill() and the bulk calls
 * likewise fail on a pool found destroyed: each checks it inside its section, before it touches
 * the pool's slot (pool_destroy() marks it while it keeps the threads out of their sections).
 */
int pool__tcache_push(struct pool_head *pool, struct pool_thread *self, void *obj,
                      unsigned int dbg);

/*
 * One object for this thread, counted as used, when its cache had none: the loaded magazine is
 * refilled with whole magazines from a shared list (one exchange) or from the slab tier, and
 * one is taken; a thread that cannot cache gets one object from a shared list or the slab tier.
 * NULL at the limit or when out of memory.
 */
void *pool__tcache_refill(struct pool_head *pool, struct pool_thread *self, unsigned int dbg);

/*
 * Give one object back without caching it (it was counted as used until now): to a magazine of
 * the shared lists, or to the OS layer (no-global, uaf; `caller` for the uaf report).
 */
void pool__tcache_put_uncached(struct pool_head *pool, struct pool_thread *self, void *obj,
                               unsigned int dbg, const void *caller);

/*
 * pool_alloc_bulk() for a thread that can cache `pool` and no per-object debugging: `n` pointers
 * copied out of the loaded magazine, reloaded from the slot's other magazines, the shared lists
 * or the OS layer as often as needed; n, or 0 with nothing taken (what was taken went back).
 */
size_t pool__tcache_alloc_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                               size_t n, unsigned int dbg);

/* The empty entries of a thread without caches (pool__tls_cache points to them). */
extern const struct pool_tcache pool__tcache_none[POOL_MAX_CACHED_POOLS];

/*
 * The registered caller's entry of `pool` straight from the TLS pointer the inline fast path
 * reads: NULL for a thread without caches or a pool without a slot. No call into the TLS
 * runtime, unlike pool__thread_self().
 */
static inline struct pool_tcache *pool__tcache_entry(const struct pool_head *pool)
{
	struct pool_tcache *t = POOL__TLS_CACHE();

	if (t == pool__tcache_none || !pool->ro.index)
		return NULL;
	return t + pool->ro.index;
}

/*
 * The fast paths of the bulk calls, for a registered thread without per-object debugging: n
 * pointers copied out of / into the loaded magazine (the way DPDK's mempool cache works), the
 * allocations counted down by the profile's countdown as pool_alloc() does. They return 1, or
 * 0 when they cannot serve (too few objects or too little room, a NULL pointer, a sample due
 * among them; the caller keeps sampled objects out of a free), and then the slow paths do it
 * all. Like the inline fast path, each writes the count last when it adds and first when it
 * takes, so fork() may cut it anywhere.
 */
static inline int pool__tcache_alloc_bulk_fast(struct pool_head *pool, void **objs, size_t n)
{
	struct pool_tcache *tc = pool__tcache_entry(pool);
	void **top;

	if (!tc || (POOL__DEBUGGING() & POOL_DBG_SLOW) || tc->top <= tc->base ||
	    (size_t)(tc->top - tc->base) < n || tc->left < 0 || (size_t)tc->left < n)
		return 0;
	tc->left -= (long)n;
	top = tc->top - n;
	__atomic_store_n(&tc->top, top, __ATOMIC_RELAXED);
	memcpy(objs, top, n * sizeof(*objs));
	return 1;
}

static inline int pool__tcache_free_bulk_fast(struct pool_head *pool, void **objs, size_t n)
{
	struct pool_tcache *tc = pool__tcache_entry(pool);
	void **top;

	if (!tc || (POOL__DEBUGGING() & POOL_DBG_SLOW) || tc->top >= tc->end ||
	    n > (size_t)(tc->end - tc->top))
		return 0;
	/* the copy counts only if there was no NULL, else the slow path skips them */
	top = tc->top;
	if (!pool__copy_nonnull(top, objs, n))
		return 0;
	__atomic_store_n(&tc->top, top + n, __ATOMIC_RELAXED);
	return 1;
}

/*
 * pool_free_bulk() likewise: the pointers into the loaded magazine, the magazines rotating as it
 * fills; what the budget cannot hold goes to the shared lists. Returns 1, or 0 when the pool was
 * found destroyed (a thread racing pool_destroy(): nothing was taken).
 */
int pool__tcache_free_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                           size_t n, unsigned int dbg);

/*
 * Sections: a thread changes its slots only inside one. pool__tcache_quiesce_begin() keeps the
 * threads of threads[0..n-1] (NULL entries and the caller's own caches `own` skipped) out of
 * their sections and waits for those inside to leave (a bounded wait: it returns how many it
 * gave up on, stuck or dead inside one, and marks each); pool__tcache_quiesce_end() lets them in
 * again. The caller serialises quiescers (the registry lock of pool-thread.c; a second quiescer
 * at once fails an assertion) and keeps the threads from registering or leaving.
 * pool__tcache_stuck(c), between the two: whether `c`'s thread is still inside the section the
 * wait gave up on, so that its slots are not the quiescer's to read. Not its busy word alone: a
 * thread the wait saw outside may set it for an instant when it tries to enter and finds the
 * quiescer (section_enter()), and it is outside all the same.
 */
unsigned int pool__tcache_quiesce_begin(struct pool_thread_caches *const *threads, unsigned int n,
                                        const struct pool_thread_caches *own);
int pool__tcache_stuck(const struct pool_thread_caches *c);
void pool__tcache_quiesce_end(void);

/*
 * Tier 2 of the assertions (pool-assert.h): walk every slot of the caches `ctx` (the calling
 * thread's, or ones no other thread changes; pool__magazine_walk_slot()) and check that
 * sum(reserved_objs * cache_cost) == reserved - credit <= budget. Call it under
 * `if (POOL_ASSERTS >= 2)`: a thread's flush and a pool's destruction do, for the caller's
 * caches.
 */
void pool__tcache_walk_caches(const struct pool_thread_caches *ctx);

/*
 * The releaser's quiesce of a few threads only (pool-thread.c, the spare magazines of threads
 * idle through a window): pool__tcache_hold() keeps threads[0..n-1] (not the caller's own) out
 * of their sections from now on, with one barrier for all, and returns how many were outside
 * one; it never waits. pool__tcache_held_out(c) says whether `c` was outside (its slots are the
 * caller's to change until pool__tcache_unhold(c)); one found inside is unheld at once and left
 * alone. Under the registry lock (the one quiescer rule), and the global quiesce is not on.
 */
unsigned int pool__tcache_hold(struct pool_thread_caches *const *threads, unsigned int n);
int pool__tcache_held_out(const struct pool_thread_caches *c);
void pool__tcache_unhold(struct pool_thread_caches *c);

/*
 * Evict everything `ctx` (the calling thread's caches) holds: every slot's magazines to the tier
 * below, its empty magazines freed (thread exit, pool_thread_flush(), no-cache).
 */
void pool__tcache_flush_all(struct pool_thread_caches *ctx, unsigned int dbg);

/* Integrity was switched on: fill every object the calling thread's caches hold. */
void pool__tcache_fill_all(struct pool_thread_caches *ctx);

#endif
