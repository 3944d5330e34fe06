/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Statistics: a pool's counters (pool_get_stats()) and the OS layer's figures
 * (pool_get_os_stats()), in structures that may grow without breaking the ABI.
 *
 * How a structure grows. The caller says how many bytes it has (sizeof of the structure its
 * header declares); the library fills a whole structure of its own and copies what fits, and
 * zeroes what the caller has beyond it. Fields are only ever appended, so the first bytes mean
 * the same to both sides whatever their versions: an older program gets the fields it knows,
 * a newer one gets 0 where this library knows nothing. mimalloc's mi_stats_get(size, stats) and
 * the Linux system calls that take a structure and its size (perf_event_open(2),
 * sched_setattr(2), clone3(2)) grow the same way.
 *
 * pool_get_stats() has one form, in the version node LIBPOOL_0.2 (abi/libpool.map): programs
 * of the two-argument form of libpool 0.1 link libpool.so.0, which this library is not (its
 * inline fast path's data, struct pool_tcache, is not 0.1's; its soname: the Makefile).
 *
 * Locks: a pool's counters are relaxed loads of its buckets, and its cached objects a sum over
 * the thread registry under the registry lock, which the hot path never takes. The OS layer's
 * figures ask jemalloc to refresh its statistics (mallctl "epoch", which takes jemalloc's
 * control lock) or the C library for mallinfo2() (every arena's lock): process-wide and dearer,
 * so they have their own call, made once per report rather than once per pool.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "shared/pool-demand.h"
#include "core/pool-int.h"
#include "os/pool-os.h"
#include "debug/pool-profile.h"
#include "slab/pool-slab.h"
#include "tcache/pool-thread.h"

/*
 * Copy `have` bytes of a statistics structure to the caller's `size` bytes at `dst`: what fits,
 * then zeroes where the caller's structure is longer. Nothing past dst + size is written.
 */
static void copy_grown(void *dst, size_t size, const void *src, size_t have)
{
	size_t n = size < have ? size : have;

	POOL_ASSERT(dst && src && size);
	memcpy(dst, src, n);
	if (size > n)
		memset((char *)dst + n, 0, size - n);
}

/* The counters of a live pool, into a whole structure of this library's size. */
static void fill_stats(const struct pool_head *pool, struct pool_stats *st)
{
	POOL_ASSERT(pool->magic == POOL_HEAD_LIVE);
	memset(st, 0, sizeof(*st));
	st->size = pool->ro.size;
	st->align = pool->align;
	st->stride = pool->stride;
	pool__bucket_stats(pool, st);
	st->needed_avg = pool__demand_needed_avg(pool);
	pool__slab_stats(pool, st);
	st->cached = pool__thread_sum_cached(pool);
	st->limit = atomic_load_explicit(&pool->limit, memory_order_relaxed);
	st->reserve = atomic_load_explicit(&pool->reserve, memory_order_relaxed);
	st->creators = pool->creators;
	st->flags = pool->ro.flags;
	st->buckets = pool->nbuckets;
}

POOL_API int pool_get_stats(const struct pool_head *pool, struct pool_stats *st, size_t size)
{
	struct pool_stats full;

	if (!pool__live_head(pool) || !st || !size) {
		errno = EINVAL;
		return -1;
	}
	fill_stats(pool, &full);
	copy_grown(st, size, &full, sizeof(full));
	return 0;
}

POOL_API int pool_get_os_stats(struct pool_os_stats *st, size_t size)
{
	struct pool_os_stats full;

	if (!st || !size) {
		errno = EINVAL;
		return -1;
	}
	memset(&full, 0, sizeof(full));
	full.layer = pool__os_name();
	pool__os_usage(&full.allocated_bytes, &full.resident_bytes);
	copy_grown(st, size, &full, sizeof(full));
	return 0;
}
