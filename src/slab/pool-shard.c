/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Which shard of a pool's slab tier a take uses (pool-slab.c, 6. Shards): its thread's, or the
 * next whose lock is free; another's given-back objects before a new slab; under RLIMIT_AS,
 * another's fresh space. Each function returns a shard whose lock the caller then holds.
 */
#include <stdatomic.h>

#include "base/pool-lock.h"
#include "slab/pool-shard.h"

/* The i-th shard after H (i in 1..POOL_SLAB_SHARDS - 1), round the pool's shards. */
static struct pool_slab_shard *after(struct pool_slabs *S, const struct pool_slab_shard *H,
                                     unsigned int i)
{
	return &S->shard[((unsigned int)(H - S->shard) + i) % POOL_SLAB_SHARDS];
}

/* The shard a take of thread `start` uses, locked: its own (start modulo the shards), else the
 * first other whose lock is free, else its own once its holder lets it go. */
struct pool_slab_shard *pool__shard_lock(struct pool_slabs *S, unsigned int start)
{
	unsigned int i;

	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *H = &S->shard[(start + i) % POOL_SLAB_SHARDS];

		if (pool__lock_try(&H->lock) == 0)
			return H;
	}
	pool__lock(&S->shard[start % POOL_SLAB_SHARDS].lock);
	return &S->shard[start % POOL_SLAB_SHARDS];
}

/*
 * H's lock held, its heap empty: another shard that holds given-back objects and whose lock is
 * free, locked (H's kept), else NULL, so that shards hold no more memory than one tier would.
 * Its fresh space is left to it: not resident, and taking it would crowd its lock again.
 */
struct pool_slab_shard *pool__shard_with_free(struct pool_slabs *S, struct pool_slab_shard *H)
{
	unsigned int i;

	for (i = 1; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *O = after(S, H, i);

		if (pool__lock_try(&O->lock) != 0)
			continue;
		if (O->nheap && atomic_load_explicit(&O->free_objs, memory_order_relaxed) >= S->group)
			return O;
		pool__unlock(&O->lock);
	}
	return NULL;
}

/*
 * H's lock held, no slab to be had from the OS layer: H's lock given up, then the first other
 * shard that has a slab with a free group (fresh space too), locked; else NULL with H's lock
 * held again (a thread under RLIMIT_AS whose shard has no slab takes another's fresh space).
 */
struct pool_slab_shard *pool__shard_with_room(struct pool_slabs *S, struct pool_slab_shard *H)
{
	unsigned int i;

	pool__unlock(&H->lock);
	for (i = 1; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *O = after(S, H, i);

		pool__lock(&O->lock);
		if (O->nheap)
			return O;
		pool__unlock(&O->lock);
	}
	pool__lock(&H->lock);
	return NULL;
}
