/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The thread-cache tier: one thread's caches, reached by the inline fast path through the TLS
 * pointer pool__tls_cache, and the slow paths around a slot's magazines (pool-magazine.c tells
 * a slot, its budget and its eviction): refill, flush, bulk moves, and the sections. The
 * threads themselves (registry, context, exit, drain, fork()) are pool-thread.c's.
 *
 * The fast path (pool.h) sees a slot through its struct pool_tcache entry (top, base, end), in
 * the array the 8-byte initial-exec TLS pointer points to (debugging that needs the slow paths
 * points it at empty entries: no flag is tested), pool_alloc() pops *--top while top > base and
 * counts the profile's interval down, pool_free() stores *top++ while top < end once the
 * address is outside the profile's region.
 * No atomic, no lock, no call, no access to the object: a linked free list pops with a load
 * through the object, a dependent miss when it is cold; a magazine pops a pointer the thread
 * wrote itself. 19 instructions per alloc+free pair under callgrind, net of the loop. A thread
 * takes the slow paths until it has registered (its TLS pointer then points at entries of
 * NULLs) and after pool_destroy() closed its entry (base at the highest address, end NULL).
 *
 * Sections: a thread changes its slots only inside a section (a busy word set at its start and
 * cleared at its end). fork() and pool_destroy() quiesce: they raise a global flag, wait
 * (bounded) until no registered thread is inside a section, and look at other threads' slots
 * while the flag keeps new sections from starting, so that a fork() child never sees a slot cut
 * in the middle of a change and a drain never races one. The thread's side is a plain store and
 * a load: the quiescer issues membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), a full barrier on
 * every thread of the process, so that one side always sees the other (without membarrier,
 * each section entry uses a full fence). The releaser (pool-release.c) keeps a few threads out
 * the same way, each by a hold word beside its busy word, and waits for none: one found inside
 * a section is let go. Each section entry counts itself (`sections`), so that the releaser
 * tells a thread that entered none through a window. The fast path is not a section: its
 * changes are single stores (the pointer, then `top`), safe to be cut anywhere.
 *
 * Concurrency otherwise: a thread's caches are written by that thread alone; the slot table is
 * guarded by the pool list lock (pool.c). A section takes no lock but the uaf table's and the
 * OS layer's; a pool's pass lock is only tried, after the section.
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "shared/pool-demand.h"
#include "tcache/pool-magazine.h"
#include "tcache/pool-tcache.h"

/* A thread's slow paths look at the clock (demand tracking) once every this many calls. */
#define TICK_EVERY 16u

/* A quiescer waits this many yields for a thread to leave its section, then gives up on it. */
#define QUIESCE_TRIES 100000u

/*
 * The fast path's view of a thread: its caches when it is registered, otherwise this array of
 * empty entries (NULL pointers), on which pool_alloc() and pool_free() always take the slow
 * path. Never written.
 */
const struct pool_tcache pool__tcache_none[POOL_MAX_CACHED_POOLS];

/*
 * The TLS pointer the inline fast path reads (initial-exec: one load from the thread pointer).
 * It is 8 bytes, so that a program may load the library with dlopen(): glibc keeps a small
 * surplus of static TLS for initial-exec variables of libraries loaded late.
 */
POOL_API __thread struct pool_tcache *pool__tls_cache
	__attribute__((tls_model("initial-exec"))) = (struct pool_tcache *)pool__tcache_none;

/* Sections (see the head of this file). */
static atomic_int quiescing;            /* 1 while fork() or a drain looks at other threads */
static int section_fence;               /* 1: no membarrier, each section entry fences */

/* ------------------------------------------------------------------------------------------ */
/* Sections                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void section_enter(struct pool_thread_caches *ctx)
{
	/* sections do not nest: a slow path never calls another one inside its section */
	POOL_ASSERT(atomic_load_explicit(&ctx->busy, memory_order_relaxed) == 0);
	/* the releaser tells a thread idle through a window by this count (owner: no RMW) */
	atomic_store_explicit(&ctx->sections,
	                      atomic_load_explicit(&ctx->sections, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	for (;;) {
		atomic_store_explicit(&ctx->busy, 1, memory_order_relaxed);
		if (section_fence)
			atomic_thread_fence(memory_order_seq_cst);
		else
			atomic_signal_fence(memory_order_seq_cst);
		if (POOL_LIKELY(!atomic_load_explicit(&quiescing, memory_order_acquire) &&
		                !atomic_load_explicit(&ctx->hold, memory_order_acquire)))
			return;
		/* a fork(), a drain or the releaser is looking: stay out until it is done */
		atomic_store_explicit(&ctx->busy, 0, memory_order_release);
		while (atomic_load_explicit(&quiescing, memory_order_acquire) ||
		       atomic_load_explicit(&ctx->hold, memory_order_acquire))
			sched_yield();
	}
}

static void section_exit(struct pool_thread_caches *ctx)
{
	POOL_ASSERT(atomic_load_explicit(&ctx->busy, memory_order_relaxed) == 1);
	atomic_store_explicit(&ctx->busy, 0, memory_order_release);
}

unsigned int pool__tcache_quiesce_begin(struct pool_thread_caches *const *threads, unsigned int n,
                                        const struct pool_thread_caches *own)
{
	unsigned int i, tries, stuck = 0;
	/* an exchange rather than a store, so that the serialisation of quiescers is checked */
	int was = atomic_exchange_explicit(&quiescing, 1, memory_order_seq_cst);

	POOL_ASSERT(!was);
	if (section_fence || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < n; i++) {
		struct pool_thread_caches *c = threads[i];

		if (!c || c == own)
			continue;
		for (tries = 0; tries < QUIESCE_TRIES &&
		     atomic_load_explicit(&c->busy, memory_order_acquire); tries++)
			sched_yield();
		/*
		 * Seen outside after the barrier: it stays out until quiesce_end(), whatever its busy
		 * word shows meanwhile (an entry that finds `quiescing` up sets it and clears it).
		 */
		c->stuck = tries == QUIESCE_TRIES;
		stuck += c->stuck;
	}
	return stuck;
}

int pool__tcache_stuck(const struct pool_thread_caches *c)
{
	/* one that left the section since the wait gave up cannot enter another: outside */
	return c->stuck && atomic_load_explicit(&c->busy, memory_order_acquire);
}

void pool__tcache_quiesce_end(void)
{
	POOL_ASSERT(atomic_load_explicit(&quiescing, memory_order_relaxed) == 1);
	atomic_store_explicit(&quiescing, 0, memory_order_release);
}

void pool__tcache_walk_caches(const struct pool_thread_caches *ctx)
{
	unsigned int max = pool__magazine_max_slot(), s;
	size_t sum = 0;

	for (s = 1; s < max; s++) {
		const struct pool_tslot *sl = &ctx->slot[s];
		/* read once: another thread may create or destroy the pool of an empty slot */
		const struct pool_head *pool = pool__slot_pool(s);

		if (!pool) {
			POOL_ASSERT(!sl->reserved_objs && !sl->nempty && !sl->loaded && !sl->prev);
			continue;
		}
		pool__magazine_walk_slot(ctx, s, pool);
		sum += (size_t)sl->reserved_objs * pool->cache_cost;
	}
	POOL_ASSERT(sum == ctx->reserved - atomic_load_explicit(&ctx->credit, memory_order_relaxed));
	POOL_ASSERT(ctx->reserved <= ctx->budget);
}

unsigned int pool__tcache_hold(struct pool_thread_caches *const *threads, unsigned int n)
{
	unsigned int i, out = 0;

	for (i = 0; i < n; i++)
		atomic_store_explicit(&threads[i]->hold, 1, memory_order_seq_cst);
	/* one barrier for them all: each either sees its hold or shows us its busy word */
	if (n && (section_fence ||
	          syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0))
		atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < n; i++)
		out += !atomic_load_explicit(&threads[i]->busy, memory_order_acquire);
	return out;
}

int pool__tcache_held_out(const struct pool_thread_caches *c)
{
	return !atomic_load_explicit(&c->busy, memory_order_acquire);
}

void pool__tcache_unhold(struct pool_thread_caches *c)
{
	atomic_store_explicit(&c->hold, 0, memory_order_release);
}

/*
 * Start-up: register for membarrier's private expedited command (Linux 4.14); where that fails
 * (an older kernel, a seccomp filter), sections fence instead.
 */
__attribute__((constructor(102))) static void sections_init(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		section_fence = 1;
}

/* ------------------------------------------------------------------------------------------ */
/* A thread and a pool                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * In a section, before a slow path touches the pool's slot: is the pool still live?
 * pool_destroy() marks it dead while it keeps every thread out of its sections, so a thread that
 * races the destruction (forbidden) finds it here, before the slot goes, and its slow path
 * reports it.
 */
static inline int pool_live(const struct pool_head *pool)
{
	return POOL_LIKELY(__atomic_load_n(&pool->magic, __ATOMIC_ACQUIRE) == POOL_HEAD_LIVE);
}

int pool__tcache_integrity(const struct pool_thread *self, unsigned int dbg)
{
	return self->caches && pool__tc_integrity_on(self->caches, dbg);
}

int pool__tcache_usable(const struct pool_head *pool, const struct pool_thread *self,
                        unsigned int dbg)
{
	return self->state == POOL_THREAD_CACHED && pool->ro.index &&
	       !(dbg & POOL_DBG_NO_CACHE) && pool->cache_cost * pool->cluster <= self->caches->budget;
}

/* Every `TICK_EVERY` slow-path calls of this thread, give the pool's demand clock a look. */
static inline void tick(struct pool_thread *self, struct pool_head *pool)
{
	if (++self->ticks >= TICK_EVERY) {
		self->ticks = 0;
		pool__demand_tick(pool);
	}
}

void pool__tcache_flush_all(struct pool_thread_caches *ctx, unsigned int dbg)
{
	unsigned int max = pool__magazine_max_slot();
	unsigned int s;

	section_enter(ctx);
	if (POOL_ASSERTS >= 2)
		pool__tcache_walk_caches(ctx);
	for (s = 1; s < max; s++)
		if (ctx->slot[s].reserved_objs || ctx->slot[s].nempty)
			pool__magazine_evict_slot(ctx, s, dbg);
	/* everything went: what the thread still counts is what other threads credited it */
	POOL_ASSERT(ctx->reserved == atomic_load_explicit(&ctx->credit, memory_order_relaxed));
	section_exit(ctx);
}

void pool__tcache_fill_all(struct pool_thread_caches *ctx)
{
	unsigned int max = pool__magazine_max_slot();
	unsigned int epoch = pool__debug_integrity_epoch();
	unsigned int s;

	section_enter(ctx);
	if (POOL_ASSERTS >= 2)
		pool__tcache_walk_caches(ctx);
	for (s = 1; s < max; s++)
		pool__magazine_fill_slot(ctx, s);
	section_exit(ctx);
	ctx->integrity_epoch = epoch;
}

/* ------------------------------------------------------------------------------------------ */
/* The slow paths' calls                                                                      */
/* ------------------------------------------------------------------------------------------ */

void *pool__tcache_pop(struct pool_head *pool, struct pool_thread *self, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	void *obj = NULL;

	POOL_ASSERT(self->state == POOL_THREAD_CACHED && ctx);
	section_enter(ctx);
	if (pool_live(pool)) {
		if (POOL_UNLIKELY(!ctx->slot[s].took))
			pool__magazine_first_alloc(ctx, s, dbg);
		if (dbg & POOL_DBG_COLD_FIRST)
			obj = pool__magazine_pop_coldest(ctx, s);
		else if (pool__tc_count(ctx, s) || pool__magazine_reload_local(ctx, s))
			obj = pool__tc_objs(ctx, s)[pool__tc_count(ctx, s) - 1],
			pool__tc_set_count(ctx, s, pool__tc_count(ctx, s) - 1);
	}
	section_exit(ctx);
	return obj;
}

int pool__tcache_push(struct pool_head *pool, struct pool_thread *self, void *obj,
                      unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	int live, ok;

	/* a magazine never holds NULL: the inline fast path's pop relies on it */
	POOL_ASSERT(self->state == POOL_THREAD_CACHED && ctx && obj);
	section_enter(ctx);
	live = pool_live(pool);
	ok = live &&
	     (pool__tc_count(ctx, s) < pool__tc_cap(ctx, s) || pool__magazine_make_room(ctx, s, dbg));
	if (ok) {
		int integrity = pool__tc_integrity_on(ctx, dbg);

		if (pool__tc_debug_cached(pool, integrity))
			pool__debug_fill_cached(pool, obj, integrity);
		pool__tc_objs(ctx, s)[pool__tc_count(ctx, s)] = obj;
		pool__tc_set_count(ctx, s, pool__tc_count(ctx, s) + 1);
	}
	section_exit(ctx);
	tick(self, pool);
	return ok;
}

void *pool__tcache_refill(struct pool_head *pool, struct pool_thread *self, unsigned int dbg)
{
	unsigned int s = pool->ro.index;
	void *obj = NULL;

	if (pool__tcache_usable(pool, self, dbg)) {
		struct pool_thread_caches *ctx = self->caches;
		int loaded;

		section_enter(ctx);
		if (!pool_live(pool)) {
			section_exit(ctx);
			return NULL;
		}
		if (POOL_UNLIKELY(!ctx->slot[s].took))
			pool__magazine_first_alloc(ctx, s, dbg);
		if (pool__magazine_reload_remote(ctx, s, dbg, 1)) {
			obj = pool__tc_objs(ctx, s)[pool__tc_count(ctx, s) - 1];
			pool__tc_set_count(ctx, s, pool__tc_count(ctx, s) - 1);
		}
		loaded = ctx->slot[s].loaded != NULL;
		section_exit(ctx);
		tick(self, pool);
		/* with a magazine, a failed refill is the limit or no memory: the answer */
		if (obj || loaded)
			return obj;
		/* the budget could not hold a magazine: as a thread without a cache */
	}
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & (POOL_DBG_UAF | POOL_DBG_MALLOC)))
		obj = pool__shared_get_one(pool, self->id);
	if (!obj && !pool__bucket_slab_get(pool, &obj, 1, self->id))
		obj = NULL;
	tick(self, pool);
	return obj;
}

void pool__tcache_put_uncached(struct pool_head *pool, struct pool_thread *self, void *obj,
                               unsigned int dbg, const void *caller)
{
	if ((pool->layout & (POOL_DBG_UAF | POOL_DBG_MALLOC)) || (dbg & POOL_DBG_NO_GLOBAL))
		pool__bucket_slab_put(pool, &obj, 1, self->id, caller);
	else
		pool__shared_put_one(pool, obj, self->id);
	/* threads without caches (no-cache, past the registry) look at the demand clock too */
	tick(self, pool);
}

size_t pool__tcache_alloc_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                               size_t n, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	size_t got = 0;

	POOL_ASSERT(self->state == POOL_THREAD_CACHED && ctx && n >= 1);
	section_enter(ctx);
	if (pool_live(pool) && POOL_UNLIKELY(!ctx->slot[s].took))
		pool__magazine_first_alloc(ctx, s, dbg);
	while (got < n && pool_live(pool)) {
		uint32_t c = pool__tc_count(ctx, s), k;

		uint32_t want = n - got < UINT32_MAX ? (uint32_t)(n - got) : UINT32_MAX;

		if (!c) {
			/* whole magazines that fit straight into objs[], then a rotation for the rest */
			k = pool__magazine_take_whole(ctx, s, objs + got, want);
			if (k) {
				got += k;
				continue;
			}
			if (!pool__magazine_reload_local(ctx, s) &&
			    !pool__magazine_reload_remote(ctx, s, dbg, want))
				break;
		}
		c = pool__tc_count(ctx, s);
		k = n - got < c ? (uint32_t)(n - got) : c;
		pool__tc_set_count(ctx, s, c - k);
		memcpy(objs + got, pool__tc_objs(ctx, s) + (c - k), k * sizeof(*objs));
		got += k;
	}
	section_exit(ctx);
	tick(self, pool);
	if (got == n)
		return n;
	/* all or nothing: what was taken goes back (a pool found dead keeps them) */
	pool__tcache_free_bulk(pool, self, objs, got, dbg);
	return 0;
}

int pool__tcache_free_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                           size_t n, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	size_t i = 0;

	POOL_ASSERT(self->state == POOL_THREAD_CACHED && ctx);
	section_enter(ctx);
	if (!pool_live(pool)) {
		section_exit(ctx);
		return 0;
	}
	while (i < n) {
		uint32_t c = pool__tc_count(ctx, s), cap;
		size_t took;
		void **dst;

		if (c == pool__tc_cap(ctx, s)) {
			/* whole magazines onto the full stack, then a rotation for the rest */
			size_t put = 0, used = c && n - i >= c ?
			             pool__magazine_put_whole(ctx, s, objs + i, n - i, &put) : 0;

			if (used) {
				i += used;
				continue;
			}
			if (!pool__magazine_make_room(ctx, s, dbg))
				break;
		}
		/* in locals: a store through dst could alias the slot's fields for the compiler */
		dst = pool__tc_objs(ctx, s);
		c = pool__tc_count(ctx, s);
		cap = pool__tc_cap(ctx, s);
		c += (uint32_t)pool__copy_skip_null(dst + c, cap - c, objs + i, n - i, &took);
		i += took;
		pool__tc_set_count(ctx, s, c);
	}
	section_exit(ctx);
	tick(self, pool);
	/* what the budget cannot hold goes to the shared lists */
	for (; i < n; i++)
		if (objs[i])
			pool__tcache_put_uncached(pool, self, objs[i], dbg, NULL);
	return 1;
}

