/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's sampler: which allocations each thread samples, and where sampled objects live
 * (the tables and what the profile counts: pool-profile.c).
 *
 * 1. The countdown. Per thread and pool, the allocations until the next sample, drawn so that
 *    samples are a Poisson process over the bytes allocated (pool__prof_interval(): exponential
 *    intervals of mean `rate` bytes, as jemalloc and tcmalloc draw theirs). It lives in the
 *    fast path's entry (struct pool_tcache.left): the inline pool_alloc() counts it down, and
 *    the allocation that takes it below 0 comes to the slow path, which samples it; slow paths
 *    count their own allocations (pool__sample_tick()). Every allocation counts, whatever the
 *    object's life: weights are unbiased. Without a profile it stays far from 0.
 * 2. The region. A sampled object does not come from the pool's caches: it lives in a slot of
 *    the region (src/os/pool-region.c), pages of its own, and is counted in its pool (used,
 *    allocated, the limit) as any object handed out. The inline pool_free() sends any address
 *    of the region to the slow path, so every free of a sample is seen, on whatever thread,
 *    and credited to its site; the slot goes back to the region, never to a cache, so no
 *    sample is handed out again as another allocation. Objects of the uaf and malloc layouts
 *    keep theirs (every free of such a pool comes to a slow path): they are remembered in place.
 * 3. Guard pages. Under `guard` debugging, a share of the samples (guard=<percent>) get guarded
 *    slots: the object against an inaccessible page, quarantined inaccessible once freed, the
 *    stacks kept for the fault handler's report (src/debug/pool-guard.c).
 * 4. Threads without a cache of a pool (no-cache, a pool without a slot, a thread past the
 *    registry) bring every allocation here: each is sampled with the chance that its bytes
 *    hold a point of the process, 1 - exp(-size / rate).
 * 5. Cost. The fast path: a decrement and a test in pool_alloc(), a subtraction and a compare
 *    in pool_free(); a sample: its stack, a slot (no system call once the region has freed
 *    slots to reuse), a record. doc/debugging.md, "Profiling where memory is held", has the
 *    figures.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "debug/pool-debug.h"
#include "debug/pool-debug-san.h"
#include "debug/pool-guard.h"
#include "debug/pool-profile.h"
#include "debug/pool-stack.h"
#include "os/pool-os.h"
#include "os/pool-region.h"
#include "tcache/pool-sample.h"

/* Draws of the threads without a cache (pool__sample_uncached()): a shared counter. */
static atomic_ulong uncached_seq;

static struct pool_sampler *sampler_new(struct pool_thread_caches *ctx)
{
	struct pool_sampler *sp = pool__os_meta_alloc(sizeof(*sp), POOL_CACHE_LINE);

	if (sp) {
		sp->rng = ((uint64_t)(uintptr_t)ctx * UINT64_C(0x9E3779B97F4A7C15)) | 1;
		ctx->sampler = sp;
	}
	return sp;
}

void pool__sample_release(struct pool_thread_caches *ctx)
{
	if (!ctx->sampler)
		return;
	pool__os_meta_free(ctx->sampler, sizeof(*ctx->sampler), POOL_CACHE_LINE);
	ctx->sampler = NULL;
}

/* The allocations of `pool` until its next sample (at least 1), or never for a pool left out. */
static long draw(struct pool_sampler *sp, const struct pool_head *pool)
{
	uint64_t n;

	if (!pool__prof_wants(pool))
		return POOL_SAMPLE_NEVER;
	n = pool__prof_interval(&sp->rng, pool->ro.size, pool__prof_rate());
	return n < (uint64_t)POOL_SAMPLE_NEVER ? (long)n : POOL_SAMPLE_NEVER;
}

int pool__sample_decide(struct pool_thread_caches *ctx, unsigned int s,
                        const struct pool_head *pool, unsigned int dbg)
{
	struct pool_tcache *tc = &ctx->tc[s];
	struct pool_sampler *sp = ctx->sampler;
	unsigned int gen = pool__prof_gen();
	long n;

	if (!(dbg & POOL_DBG_PROFILE) || (!sp && !(sp = sampler_new(ctx)))) {
		tc->left = POOL_SAMPLE_NEVER;
		return 0;
	}
	if (sp->gen[s] != gen || sp->pool[s] != pool) {
		/* a new profile, or a new pool in the slot: this allocation is the first counted */
		sp->gen[s] = gen;
		sp->pool[s] = pool;
		n = draw(sp, pool);
		if (n > 1) {
			tc->left = n - 2;
			return 0;
		}
	} else if (tc->left >= 0) {
		return 0;
	}
	/* this one is due: the next interval starts after it */
	tc->left = draw(sp, pool) - 1;
	return 1;
}

int pool__sample_bulk_due(const struct pool_thread_caches *ctx, unsigned int s,
                          const struct pool_head *pool, size_t n)
{
	const struct pool_sampler *sp = ctx->sampler;

	if (!sp || sp->gen[s] != pool__prof_gen() || sp->pool[s] != pool)
		return 1;
	return ctx->tc[s].left < 0 || (size_t)ctx->tc[s].left < n;
}

int pool__sample_uncached(const struct pool_head *pool)
{
	uint64_t x = atomic_fetch_add_explicit(&uncached_seq, 1, memory_order_relaxed);
	double w;

	if (!pool__prof_wants(pool))
		return 0;
	w = pool__prof_weight(pool->ro.size, pool__prof_rate());
	x = pool__splitmix64(x ^ (uint64_t)(uintptr_t)pool);
	return (double)(x >> 11) * 0x1.0p-53 * w < 1.0;
}

/* ------------------------------------------------------------------------------------------ */
/* A sample's life                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Draws of guard_roll(): a shared counter (one draw per sample, rare). */
static atomic_ulong guard_seq;

/* Is the sample about to be taken to be guarded? (guard=<percent> of them) */
static int guard_roll(unsigned int dbg)
{
	unsigned int percent;
	uint64_t x;

	if (!(dbg & POOL_DBG_GUARD))
		return 0;
	percent = pool__debug_guard_percent();
	if (percent >= 100)
		return 1;
	x = atomic_fetch_add_explicit(&guard_seq, 1, memory_order_relaxed);
	return (pool__splitmix64(x ^ UINT64_C(0x6A09E667F3BCC909)) >> 32) % 100 < percent;
}

void *pool__sample_alloc(struct pool_head *pool, unsigned int tid, const void *caller,
                         unsigned int dbg)
{
	uintptr_t frames[POOL_STACK_DEPTH_MAX];
	unsigned int n, slot;
	int guard;
	void *obj;

	if (pool->layout & (POOL_DBG_UAF | POOL_DBG_MALLOC))
		return NULL;
	if (pool__region_reserve() < 0) {
		pool__prof_dropped();
		return NULL;
	}
	guard = guard_roll(dbg);
	obj = pool__region_alloc(pool->os_size, pool->align, guard, pool, &slot);
	if (!obj) {
		pool__prof_dropped();
		return NULL;
	}
	/* at the limit, an object of the caches may still be there for the allocation */
	if (!pool__bucket_extra_get(pool, tid)) {
		pool__region_free(slot, obj);
		pool__prof_dropped();
		return NULL;
	}
	n = pool__stack_capture(frames, pool__stack_depth(), caller);
	if (pool__prof_record(pool, obj, n ? pool__stack_intern(frames, n) : 0,
	                      pool__clock_ns(CLOCK_MONOTONIC)) < 0) {
		/* the profile's table is full (counted as dropped): an ordinary object instead */
		pool__bucket_slab_uncount(pool, 1, tid);
		pool__region_free(slot, obj);
		return NULL;
	}
	if (guard)
		pool__guard_alloc(slot, pool, obj, frames, n);
	return obj;
}

void pool__sample_in_place(struct pool_head *pool, void *obj, const void *caller)
{
	pool__prof_record(pool, obj, pool__stack_here(caller), pool__clock_ns(CLOCK_MONOTONIC));
}

void pool__sample_free(struct pool_head *pool, unsigned int tid, void *ptr, const void *caller,
                       unsigned int dbg)
{
	struct pool_region_hit hit;
	uintptr_t frames[POOL_STACK_DEPTH_MAX];
	unsigned int n;

	if (pool__region_lookup(ptr, &hit) < 0 || hit.state != POOL_REGION_LIVE) {
		/* not a sampled object, or freed already: a guarded slot says which */
		if (hit.guard || (dbg & POOL_DBG_GUARD))
			pool__guard_bad_free(pool, ptr, caller, &hit);
		return;
	}
	if (hit.owner != pool) {
		if (hit.guard)
			pool__guard_bad_free(pool, ptr, caller, &hit);
		/* the object's own pool counts it back, as a merged pool would have */
		pool = (struct pool_head *)(uintptr_t)hit.owner;
	}
	if ((dbg & ~POOL_DBG_NO_OBJECT) | pool->layout)
		pool__debug_on_free(pool, ptr, caller);
	if (dbg & POOL_DBG_SANITIZER)
		pool__debug_san_freed(pool, ptr);
	if (hit.guard) {
		n = pool__stack_capture(frames, POOL_GUARD_DEPTH, caller);
		pool__guard_free(hit.slot, frames, n);
	}
	/* a second free racing this one loses the slot here and changes nothing */
	if (pool__region_free(hit.slot, ptr) < 0)
		return;
	pool__prof_credit(ptr);
	pool__bucket_slab_uncount(pool, 1, tid);
}
