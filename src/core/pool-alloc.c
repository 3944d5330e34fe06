/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slow paths of the inline fast path (pool__alloc_slow(), pool__free_slow(); the fast path
 * is told in pool-tcache.c) and the bulk calls: the checks of the pool head, fault injection, the
 * thread-cache tier, the debugging layer's hooks for every object handed out or taken back, and
 * the count of failures. A pool's first allocation closes it to merges that would grow its
 * layout (pool.c, grow_layout()).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "debug/pool-debug.h"
#include "debug/pool-debug-san.h"
#include "core/pool-fail-report.h"
#include "core/pool-int.h"
#include "core/pool-release.h"
#include "debug/pool-profile.h"
#include "tcache/pool-sample.h"
#include "tcache/pool-tcache.h"
#include "tcache/pool-thread.h"
#include "os/pool-malloc.h"
#include "os/pool-region.h"

/*
 * A call of the thread-cache tier failed: if that is because the pool was destroyed meanwhile
 * (its cache sections check, a thread racing pool_destroy(), which is forbidden), report it as
 * the slow paths' first check would have.
 */
static inline void check_still_live(const struct pool_head *pool, const void *obj,
                                    const void *caller)
{
	if (POOL_UNLIKELY(__atomic_load_n(&pool->magic, __ATOMIC_ACQUIRE) != POOL_HEAD_LIVE))
		pool__bad_head(pool, obj, caller);
}

/*
 * The pool's first allocation closes it to merges that would grow its layout; it waits while a
 * merge is rewriting the layout (ever_allocated 2: see grow_layout() in pool.c), which takes a
 * few instructions under the pool list lock.
 */
static void first_allocation(struct pool_head *pool)
{
	for (;;) {
		int v = 0;

		if (atomic_compare_exchange_weak_explicit(&pool->ever_allocated, &v, 1,
		                                          memory_order_acquire,
		                                          memory_order_acquire) || v == 1)
			return;
		if (v == 2)
			sched_yield();
	}
}

/* Before an allocation reads the layout: the pool's first one closes it to growing merges. */
static inline void open_for_allocation(struct pool_head *pool)
{
	if (POOL_UNLIKELY(atomic_load_explicit(&pool->ever_allocated, memory_order_acquire) != 1))
		first_allocation(pool);
	POOL_ASSERT(atomic_load_explicit(&pool->ever_allocated, memory_order_relaxed) == 1);
}

/* ------------------------------------------------------------------------------------------ */
/* Slow paths of pool_alloc() and pool_free()                                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * An allocation failed: count it, and report it when fail-report is on (pool-fail-report.c:
 * once per burst, from memory reserved beforehand).
 */
static void *failed(struct pool_head *pool, struct pool_thread *self, unsigned int dbg,
                    const void *caller, int injected)
{
	pool__count_failed(pool, pool__thread_id(self));
	if (POOL_UNLIKELY(dbg & POOL_DBG_FAIL_REPORT))
		pool__fail_report(pool, caller, injected);
	errno = ENOMEM;
	return NULL;
}

/*
 * The slow path of pool_alloc_flags(), for an allocation made by `caller`: the return address
 * of the inline function's call, or of pool_alloc_bulk()'s when the bulk call allocates object
 * by object.
 */
static POOL_NOINLINE void *alloc_slow(struct pool_head *pool, unsigned int flags,
                                      const void *caller)
{
	unsigned int dbg;
	struct pool_thread *self;
	int from_cache = 0, cached, sampled;
	void *obj = NULL;

	if (POOL_UNLIKELY(pool->magic != POOL_HEAD_LIVE))
		pool__bad_head(pool, NULL, caller);
	open_for_allocation(pool);
	/* registered first: a thread's first call into the OS layer may be its registration */
	self = pool__thread_self(&dbg);
	pool__release_poke();

	if ((dbg & POOL_DBG_FAIL) && !(flags & POOL_F_NO_FAIL) &&
	    pool__debug_fail_roll(pool__thread_rng(self), pool__thread_id(self)))
		return failed(pool, self, dbg, caller, 1);
	cached = pool__tcache_usable(pool, self, dbg);
	/* the profile's countdown, which the fast path counts down too */
	sampled = cached ? pool__sample_tick(self->caches, pool->ro.index, pool, dbg) :
	          (dbg & POOL_DBG_PROFILE) && pool__sample_uncached(pool);
	if (POOL_UNLIKELY(sampled)) {
		obj = pool__sample_alloc(pool, pool__thread_id(self), caller, dbg);
		if (obj)
			goto hand_out;
	}
	if (cached) {
		obj = pool__tcache_pop(pool, self, dbg);
		from_cache = obj != NULL;
	}
	if (!obj)
		obj = pool__tcache_refill(pool, self, dbg);
	if (POOL_UNLIKELY(!obj)) {
		check_still_live(pool, NULL, caller);
		return failed(pool, self, dbg, caller, 0);
	}
	/* a pool whose objects cannot live in the profile's region (uaf, malloc) keeps them */
	if (POOL_UNLIKELY(sampled))
		pool__sample_in_place(pool, obj, caller);
hand_out:
	/* whichever tier it came from, an object has the pool's alignment */
	POOL_ASSERT(((uintptr_t)obj & (pool->align - 1)) == 0);
	POOL_ASSERT(!from_cache || self->state == POOL_THREAD_CACHED);
	if (POOL_UNLIKELY(dbg | pool->layout)) {
		/* the profile and the failure report need nothing of the debugging layer */
		if ((dbg & ~POOL_DBG_NO_OBJECT) | pool->layout) {
			pool__debug_on_alloc(pool, obj, flags, caller, dbg, from_cache,
			                     from_cache && pool__tcache_integrity(self, dbg));
			return obj;
		}
	}
	/*
	 * Every object, even one carved fresh from a slab jemalloc zeroed: skipping its memset left
	 * its page unwritten, a program that read it first mapped the kernel's zero page there, and
	 * its next write to that page (or the inline path's memset of a neighbour) copied the page
	 * and flushed the TLB of every CPU the process runs on (pool-slab.c, step 4).
	 */
	if (flags & POOL_F_MUST_ZERO)
		memset(obj, 0, pool->ro.size);
	return obj;
}

POOL_API POOL_NOINLINE POOL_COLD void *pool__alloc_slow(struct pool_head *pool,
                                                         unsigned int flags)
{
	return alloc_slow(pool, flags, __builtin_return_address(0));
}

/*
 * The slow path of pool_free() for `caller`, on a live pool that is not of the `malloc` layout.
 * A free that overflows the thread's cache may be all a process does for a while (a fork() child
 * dropping what it inherited, then serving from its full magazines): it starts the releaser too.
 */
static POOL_NOINLINE void free_slow(struct pool_head *pool, void *ptr, const void *caller)
{
	unsigned int dbg;
	struct pool_thread *self = pool__thread_self(&dbg);

	pool__release_poke();
	/* a sampled object: back to the profile's region, never to a cache */
	if (POOL_UNLIKELY(pool__region_owns(ptr))) {
		pool__sample_free(pool, pool__thread_id(self), ptr, caller, dbg);
		return;
	}
	if (POOL_UNLIKELY(dbg | pool->layout)) {
		if ((dbg & ~POOL_DBG_NO_OBJECT) | pool->layout)
			pool__debug_on_free(pool, ptr, caller);
		/* a sample remembered in place (uaf) */
		if (pool->layout & POOL_DBG_UAF)
			pool__prof_credit(ptr);
	}
	if (dbg & POOL_DBG_SANITIZER)
		pool__debug_san_freed(pool, ptr);
	if (pool__tcache_usable(pool, self, dbg) && pool__tcache_push(pool, self, ptr, dbg))
		return;
	check_still_live(pool, ptr, caller);
	pool__tcache_put_uncached(pool, self, ptr, dbg, caller);
}

/* The same for a pool of the `malloc` layout, but for the free() itself: checks and counts. */
static POOL_NOINLINE void free_malloc_uncount(struct pool_head *pool, void *ptr,
                                             const void *caller)
{
	unsigned int dbg;
	struct pool_thread *self = pool__thread_self(&dbg);

	pool__release_poke();
	pool__debug_on_free(pool, ptr, caller);
	/* a sample remembered in place */
	pool__prof_credit(ptr);
	pool__bucket_slab_uncount(pool, 1, pool__thread_id(self));
}

POOL_API POOL_NOINLINE POOL_COLD void pool__free_slow(struct pool_head *pool, void *ptr)
{
	const void *caller = __builtin_return_address(0);

	if (!ptr)
		return;
	if (POOL_UNLIKELY(pool->magic != POOL_HEAD_LIVE))
		pool__bad_head(pool, ptr, caller);
	if (POOL_UNLIKELY(pool->layout & POOL_DBG_MALLOC)) {
		/*
		 * free() is this function's last call, a jump (no local of this function has its
		 * address taken, which would forbid it: hence the two functions above): no frame
		 * of the library lies between the tool's free() and the program's function that
		 * called pool_free(), so that even a sanitizer's fast unwinder, which follows frame
		 * pointers that the library's code does not keep, records the program's stack.
		 */
		free_malloc_uncount(pool, ptr, caller);
		pool__malloc_free(ptr);
		return;
	}
	free_slow(pool, ptr, caller);
}

POOL_API size_t pool_alloc_bulk(struct pool_head *pool, void **objs, size_t n)
{
	const void *caller = __builtin_return_address(0);
	unsigned int dbg;
	struct pool_thread *self;
	size_t i;

	if (!pool || !objs || !n)
		return 0;
	if (POOL_UNLIKELY(pool->magic != POOL_HEAD_LIVE))
		pool__bad_head(pool, NULL, caller);
	if (pool__tcache_alloc_bulk_fast(pool, objs, n))
		return n;
	open_for_allocation(pool);
	self = pool__thread_self(&dbg);
	pool__release_poke();
	if (!(dbg & POOL_DBG_SLOW) && pool__tcache_usable(pool, self, dbg) &&
	    (!(dbg & POOL_DBG_PROFILE) ||
	     !pool__sample_bulk_due(self->caches, pool->ro.index, pool, n))) {
		if (pool__tcache_alloc_bulk(pool, self, objs, n, dbg) == n) {
			/* counted down by the countdown, which had room for them all */
			self->caches->tc[pool->ro.index].left -= (long)n;
			return n;
		}
		check_still_live(pool, NULL, caller);
		failed(pool, self, dbg, caller, 0);
		return 0;
	}
	/* debugging, no cache or a sample due: object by object; all or nothing all the same */
	for (i = 0; i < n; i++) {
		objs[i] = alloc_slow(pool, 0, caller);
		if (!objs[i]) {
			while (i-- > 0)
				pool_free(pool, objs[i]);
			errno = ENOMEM;
			return 0;
		}
	}
	return n;
}

POOL_API void pool_free_bulk(struct pool_head *pool, void **objs, size_t n)
{
	unsigned int dbg;
	struct pool_thread *self;
	size_t i;

	if (!pool || !objs || !n)
		return;
	if (POOL_UNLIKELY(pool->magic != POOL_HEAD_LIVE))
		pool__bad_head(pool, NULL, __builtin_return_address(0));
	/* a sampled object among them: each through pool_free(), which sees it */
	for (i = 0; i < n && !pool__region_owns(objs[i]); i++)
		;
	if (i == n && pool__tcache_free_bulk_fast(pool, objs, n))
		return;
	self = pool__thread_self(&dbg);
	pool__release_poke();
	if (i == n && !(dbg & POOL_DBG_SLOW) && pool__tcache_usable(pool, self, dbg)) {
		if (!pool__tcache_free_bulk(pool, self, objs, n, dbg))
			check_still_live(pool, NULL, __builtin_return_address(0));
		return;
	}
	for (i = 0; i < n; i++)
		pool_free(pool, objs[i]);
}

