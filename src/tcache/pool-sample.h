/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's sampler: which allocations each thread samples, and the sampled objects' life
 * in the region of their own (the essay at the top of pool-sample.c). Private header of the
 * thread-cache tier: its callers are the slow paths of pool-alloc.c and the thread registry
 * (pool-thread.c).
 */
#ifndef POOL_SRC_POOL_SAMPLE_H
#define POOL_SRC_POOL_SAMPLE_H

#include <limits.h>
#include <stdint.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "debug/pool-profile.h"

/* A countdown that no allocation reaches: no profile runs, or it leaves the pool out. */
#define POOL_SAMPLE_NEVER (LONG_MAX / 4)

/*
 * A thread's sampler: per cache slot, the profile (generation) and the pool its countdown,
 * struct pool_tcache.left, was drawn for; the generator of the intervals. Allocated at the
 * thread's first slow path with a profile on, freed at its exit.
 */
struct pool_sampler {
	uint64_t rng;
	unsigned int gen[POOL_MAX_CACHED_POOLS];
	const struct pool_head *pool[POOL_MAX_CACHED_POOLS];
};

/* pool__sample_tick()'s way when the countdown needs more than a decrement. */
int pool__sample_decide(struct pool_thread_caches *ctx, unsigned int s,
                        const struct pool_head *pool, unsigned int dbg);

/*
 * An allocation of `pool` (slot `s` of the calling thread's caches `ctx`) in a slow path: is it
 * to be sampled? Counts it down (unless the fast path did: the countdown below 0 says so),
 * draws a countdown where the profile or the pool is new to the slot, and with the profile off
 * leaves the countdown out of reach. A decrement and a test when nothing is due.
 */
static inline int pool__sample_tick(struct pool_thread_caches *ctx, unsigned int s,
                                    const struct pool_head *pool, unsigned int dbg)
{
	struct pool_tcache *tc = &ctx->tc[s];
	const struct pool_sampler *sp = ctx->sampler;

	if (tc->left >= 0)
		tc->left--;
	if (POOL_LIKELY(tc->left >= 0) &&
	    (!(dbg & POOL_DBG_PROFILE) ||
	     (sp && sp->gen[s] == pool__prof_gen() && sp->pool[s] == pool)))
		return 0;
	return pool__sample_decide(ctx, s, pool, dbg);
}

/*
 * pool_alloc_bulk() of `n` objects by a thread with caches, the profile on: may a sample fall
 * among them? (1: the bulk call allocates one by one, each counted by pool__sample_tick())
 */
int pool__sample_bulk_due(const struct pool_thread_caches *ctx, unsigned int s,
                          const struct pool_head *pool, size_t n);

/*
 * An allocation of `pool` by a thread without a cache of it (or a pool without a slot), the
 * profile on: sampled with the chance that its bytes hold a point of the Poisson process,
 * 1 - exp(-size / rate). 1: sample it.
 */
int pool__sample_uncached(const struct pool_head *pool);

/*
 * The allocation due, by `caller`, on thread `tid` (pool__thread_id()): a sampled object from
 * the region, its stack taken, counted in the pool (allocated, used, the limit) as any object
 * handed out, and remembered by the profile; under `guard` debugging, a share of them on guarded pages
 * (pool-guard.c). NULL when it cannot (the region or the profile's table is full, the pool's
 * limit leaves no new object, counted as dropped; a layout whose objects live elsewhere, uaf
 * and malloc): the caller hands out an ordinary object, remembered in place for those layouts
 * (pool__sample_in_place()). The object is not touched: the debugging layer's hand-out hooks
 * come after. Outside any section.
 */
void *pool__sample_alloc(struct pool_head *pool, unsigned int tid, const void *caller,
                         unsigned int dbg);

/*
 * A sampled allocation of a pool whose objects cannot live in the region (uaf, malloc layouts:
 * every free of theirs comes to a slow path): `obj` remembered by address.
 */
void pool__sample_in_place(struct pool_head *pool, void *obj, const void *caller);

/*
 * `ptr`, an address of the region, freed into `pool` by `caller` on thread `tid`
 * (pool__thread_id()): the checks
 * of the sampled object (a double free, an address that is no sampled object, a free into
 * another pool: reported for guarded objects, otherwise let pass), then the debugging layer's
 * free hooks, the profile's credit, the slot given back to the region and the pool's counts.
 */
void pool__sample_free(struct pool_head *pool, unsigned int tid, void *ptr, const void *caller,
                       unsigned int dbg);

/* A thread's caches go (exit, the fork() child's other threads): its sampler with them. */
void pool__sample_release(struct pool_thread_caches *ctx);

#endif
