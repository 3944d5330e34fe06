/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slab tier's purge (pool__slab_purge(), whose contract pool-slab.h gives): a slab that
 * keeps one live object keeps all its memory, so in each slab that objects came back to since
 * its last purge (slab->purge), the whole pages of every run of free objects go to the kernel
 * (pool__os_purge(): madvise(MADV_DONTNEED), out of the resident set at once, zero at their
 * next touch). jemalloc and Linux's SLUB give back whole slabs only. It holds the shard's lock
 * while it purges, so that no refill takes one of those objects meanwhile, for
 * PURGE_SLABS_PER_LOCK slabs at a time, since refills wait for that lock. What stays resident
 * (pool__slab_resident(), for `pools show`) is asked of the kernel the same way, mincore(2).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool-lock.h"
#include "os/pool-os.h"
#include "slab/pool-slab.h"
#include "slab/pool-slab-int.h"

#define PURGE_SLABS_PER_LOCK 16u             /* slabs a purge does per hold of a shard's lock */

/*
 * H's lock held: the whole pages of each run of free carved objects of `slab` go to the kernel
 * (the page of the header never: an object starts past it). Returns the bytes that were
 * resident (a run purged before and untouched since costs a mincore() and counts nothing).
 */
static size_t purge_slab(const struct pool_head *pool, struct pool_slab *slab, size_t page)
{
	uintptr_t lo, hi;
	uint32_t i = 0, j;
	size_t bytes = 0;
	long got;

	slab->purge = 0;
	while (i < slab->carved) {
		if (!(slab->free[i / 64] & (UINT64_C(1) << (i % 64)))) {
			i++;
			continue;
		}
		for (j = i + 1; j < slab->carved && (slab->free[j / 64] & (UINT64_C(1) << (j % 64)));
		     j++)
			;
		lo = ((uintptr_t)pool__slab_obj_at(pool, slab, i) + page - 1) & ~(uintptr_t)(page - 1);
		hi = ((uintptr_t)pool__slab_obj_at(pool, slab, j - 1) + pool->os_size) & ~(uintptr_t)(page - 1);
		if (hi > lo && (got = pool__os_purge((void *)lo, hi - lo)) > 0)
			bytes += (size_t)got;
		i = j;
	}
	return bytes;
}

void pool__slab_purge(struct pool_head *pool)
{
	struct pool_slabs *S = &pool->slabs;
	size_t page = pool__os_page_size();
	struct pool_slab *slab;
	unsigned int i;

	if (!pool__slab_on(pool))
		return;
	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *H = &S->shard[i];
		unsigned int done;

		/* a racy look first: a shard nothing came back to is not locked */
		if (!atomic_load_explicit(&H->free_objs, memory_order_relaxed))
			continue;
		/* a few slabs per hold of the lock, which refills wait for: then from the top again */
		do {
			done = 0;
			pool__lock(&H->lock);
			for (slab = H->all; slab && done < PURGE_SLABS_PER_LOCK; slab = slab->next)
				if (slab->purge && slab->nfree < S->capacity) {
					pool__slab_count(&H->purged, (long)purge_slab(pool, slab, page));
					done++;
				}
			pool__unlock(&H->lock);
		} while (done == PURGE_SLABS_PER_LOCK);
	}
}

size_t pool__slab_resident(struct pool_head *pool)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab *slab;
	size_t bytes = 0;
	unsigned int i;

	if (!pool__slab_on(pool))
		return 0;
	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *H = &S->shard[i];

		/* a racy look first: a shard without slabs is not locked */
		if (!atomic_load_explicit(&H->nslabs, memory_order_relaxed))
			continue;
		pool__lock(&H->lock);
		for (slab = H->all; slab; slab = slab->next)
			bytes += pool__os_resident(slab, S->bytes);
		pool__unlock(&H->lock);
	}
	return bytes;
}
