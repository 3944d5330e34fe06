/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * What sits beside the slab tier (pool-slab.c), in the same place of the tiers: the limit's
 * count, which every object taken from below the shared lists reserves first and every object
 * that goes down releases (pool-slab.h tells what it counts), and the pools off slabs (uaf,
 * malloc, objects over POOL_SLAB_OBJ_MAX), whose objects come from the OS layer one by one.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "base/pool-assert.h"
#include "debug/pool-debug.h"
#include "os/pool-malloc.h"
#include "os/pool-os.h"
#include "os/pool-san.h"
#include "os/pool-uaf.h"
#include "slab/pool-limit.h"

void (*pool__limit_test_hook)(struct pool_head *pool, int reserving);

/* ------------------------------------------------------------------------------------------ */
/* The limit's count                                                                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * Under a limit, one take reserves at most limit / LIMIT_SPREAD objects (at least one), so that
 * the caches of LIMIT_SPREAD threads share a small limit: a refill of a whole magazine (32
 * objects of 64 bytes) would let 4 threads of 1,000 hold all of a limit of 128 in their caches,
 * each using one, while the others fail (tests/core/check_pool.c, test_limited_pool_1000_threads:
 * 8 s of retries that way, 0.5 s without caches). A limit of 64 refills or more (2,048 objects
 * of 64 bytes) is not touched by it.
 */
#define LIMIT_SPREAD 64u

void pool__limit_set(struct pool_head *pool, size_t max_objects)
{
	atomic_store_explicit(&pool->limit, max_objects, memory_order_relaxed);
}

/*
 * Take up to `n` objects of the pool's limit: how many may be taken (0 at the limit). The count
 * is kept with or without a limit and never rebuilt from `allocated`, which a move in flight
 * makes wrong (a count rebuilt so can reach -200 and let the pool take its limit plus 200);
 * caps are compared as unsigned numbers, SIZE_MAX ("unlimited") included.
 */
unsigned int pool__limit_reserve(struct pool_head *pool, unsigned int n)
{
	size_t limit = atomic_load_explicit(&pool->limit, memory_order_relaxed);
	long cur;
	unsigned int k = n;

	if (!limit) {
		atomic_fetch_add_explicit(&pool->limit_count, (long)n, memory_order_relaxed);
	} else {
		if (n > limit / LIMIT_SPREAD)
			n = limit / LIMIT_SPREAD ? (unsigned int)(limit / LIMIT_SPREAD) : 1;
		cur = atomic_load_explicit(&pool->limit_count, memory_order_relaxed);
		do {
			/* never below 0; the clamp keeps a broken count from lifting the cap */
			size_t held = cur > 0 ? (size_t)cur : 0;

			POOL_ASSERT(cur >= 0);
			if (held >= limit)
				return 0;
			k = n > limit - held ? (unsigned int)(limit - held) : n;
		} while (!atomic_compare_exchange_weak_explicit(&pool->limit_count, &cur,
		                                                cur + (long)k,
		                                                memory_order_relaxed,
		                                                memory_order_relaxed));
	}
	if (POOL_UNLIKELY(pool__limit_test_hook != NULL))
		pool__limit_test_hook(pool, 1);
	return k;
}

/* `n` reserved objects leave the count (they left `allocated`, or were never obtained). */
void pool__limit_release(struct pool_head *pool, unsigned long n, int hook)
{
	if (hook && POOL_UNLIKELY(pool__limit_test_hook != NULL))
		pool__limit_test_hook(pool, 0);
	if (n) {
		long was = atomic_fetch_sub_explicit(&pool->limit_count, (long)n,
		                                     memory_order_relaxed);

		/* never below 0: what leaves was reserved */
		POOL_ASSERT(was >= (long)n);
		(void)was;
	}
}

void pool__limit_unreserve(struct pool_head *pool, unsigned int n)
{
	pool__limit_release(pool, n, 1);
}


/* ------------------------------------------------------------------------------------------ */
/* Pools off slabs: objects from the OS layer one by one                                      */
/* ------------------------------------------------------------------------------------------ */

static void *os_alloc_one(struct pool_head *pool)
{
	if (pool->layout & POOL_DBG_UAF)
		return pool__uaf_alloc(pool->ro.size, pool->align, pool);
	if (pool->layout & POOL_DBG_MALLOC)
		return pool__malloc_alloc(pool->os_size, pool->align);
	return pool__os_alloc(pool->os_size, pool->align);
}

void pool__off_slab_free(struct pool_head *pool, void *obj, const void *caller)
{
	if (pool->layout & POOL_DBG_UAF) {
		pool__uaf_free(obj, caller);
		return;
	}
	if (pool->layout & POOL_DBG_MALLOC) {
		pool__malloc_free(obj);
		return;
	}
	if (pool__san_on())
		pool__san_access(obj, pool->os_size);
	pool__os_free(obj, pool->os_size, pool->align);
}

unsigned int pool__off_slab_get(struct pool_head *pool, void **out, unsigned int want)
{
	unsigned int k = pool__limit_reserve(pool, want), n = 0;

	while (n < k) {
		void *obj = os_alloc_one(pool);

		if (!obj)
			break;
		out[n++] = obj;
	}
	if (k > n)
		pool__limit_release(pool, k - n, 0);
	return n;
}
