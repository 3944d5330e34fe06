/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Threads: the registry of threads with caches, each thread's context (struct pool_thread in
 * TLS: its state, registry id, fault-injection state and caches), registration on a thread's
 * first slow path, the flush at its exit (a pthread key destructor) and on request
 * (pool_thread_flush()), and what one thread does to the others' caches: pool_destroy()'s
 * drain, the statistics' count of cached objects, the releaser's take of what they kept unused
 * through a demand window (doc/internals.md 8.5), and fork(). Above the thread-cache tier
 * (pool-tcache.c), which handles one thread's magazines. A thread registers on its first slow
 * path: the lowest free id of POOL_MAX_THREADS, its caches (allocated, so that the library's
 * TLS block stays 40 bytes and it can be dlopen()ed), and a pthread key whose destructor
 * flushes them at exit; without an id or memory, or past its exit flush, it works without a
 * cache.
 *
 * Concurrency: the registry (registry[], ids) is guarded by registry_lock. A thread's caches are
 * written by that thread alone; the drain and fork() look at other threads' caches only while
 * those threads are kept out of their sections (pool__tcache_quiesce_begin()). Lock order: pool
 * list -> registry_lock (the lock order: pool.c).
 *
 * Unloading: a library that is unloaded with dlclose() (or a process that ends) takes back and
 * frees the calling thread's caches and deletes its thread-exit key, so that a thread that
 * outlives the library runs no destructor that is gone. The caches of other threads are theirs:
 * they are not touched (a thread that outlives the library leaves its caches' memory behind).
 * A thread that registers afterwards (at exit, while other destructors run) works without
 * caches. The rule is that no thread uses the library after dlclose() (doc/debugging.md, "Rules
 * of use").
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "shared/pool-demand.h"
#include "config/pool-config.h"
#include "os/pool-fault.h"
#include "base/pool-lock.h"
#include "os/pool-os.h"
#include "tcache/pool-magazine.h"
#include "debug/pool-profile.h"
#include "tcache/pool-sample.h"
#include "tcache/pool-tcache.h"
#include "tcache/pool-thread.h"
#include "base/pool-util.h"

/*
 * This thread as the library sees it, reached on slow paths. Initial-exec like pool__tls_cache:
 * a library with initial-exec TLS has its whole TLS block in static TLS anyway, and the
 * general-dynamic model would cost every slow path a call to __tls_get_addr() (3% of the
 * instructions of a workload that grows large live sets, under cachegrind). Its caches are
 * allocated, so that the block stays a few words (40 bytes with pool__tls_cache) for dlopen() to
 * find room for it.
 */
static __thread struct pool_thread pool_self __attribute__((tls_model("initial-exec")));

static struct pool_lock registry_lock = POOL_LOCK_INITIALIZER;
static struct pool_thread_caches *registry[POOL_MAX_THREADS];
static unsigned int registry_top;  /* the highest id ever taken + 1 (registry_lock): ids are
                                      the lowest free ones, so the releaser's scan stays short */
static pthread_key_t exit_key;
static atomic_int exit_key_made;   /* the key exists (cleared when the library unloads) */
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg);

/* The key's destructor: the thread really exits, and the OS layer may count its arena free. */
static void thread_gone(void *arg)
{
	thread_exit(arg);
	pool__os_thread_exit();
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_gone) != 0) {
		static const char msg[] = "libpool: cannot create the thread-exit key; "
		                          "threads will not flush their caches at exit\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			return;
		return;
	}
	atomic_store_explicit(&exit_key_made, 1, memory_order_release);
}

/* An id for a thread without a registry slot: spreads such threads over the buckets. */
static unsigned int hash_thread(const void *p)
{
	return pool__hash_bits((uint64_t)(uintptr_t)p, 24);
}

/* Free a thread's caches, whose slots hold no magazine any more. */
static void free_caches(struct pool_thread_caches *c)
{
	pool__sample_release(c);
	pool__os_meta_free(c, sizeof(*c), POOL_CACHE_LINE);
}

/* Close the inline fast path of the thread whose TLS slot is `tls`: it finds no cache there. */
static void close_fast_path(struct pool_tcache **tls)
{
	__atomic_store_n(tls, (struct pool_tcache *)pool__tcache_none, __ATOMIC_RELAXED);
}

/*
 * The fast path's view of the caches `c` of the calling thread: its entries, unless debugging
 * that needs the slow paths is on. pool__thread_kick() may point it at the empty entries at any
 * moment: each side stores first, fences, then looks at the other's word (the debugging flags
 * here, the pointer there), so that whichever comes second in the fences' order wins the
 * pointer (C11 7.17.4: a seq_cst fence orders the stores before it against the loads after the
 * other thread's).
 */
static void open_fast_path(struct pool_thread_caches *c)
{
	__atomic_store_n(&pool__tls_cache, c->tc, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&pool__debugging, __ATOMIC_RELAXED) & POOL_DBG_SLOW)
		close_fast_path(&pool__tls_cache);
}

static void thread_init(struct pool_thread *self)
{
	struct pool_thread_caches *c = NULL;
	unsigned int i, id = POOL_MAX_THREADS;

	POOL_ASSERT(self->state == POOL_THREAD_NEW && !self->caches);
	pthread_once(&exit_key_once, make_exit_key);
	self->rng = 0;
	self->state = POOL_THREAD_UNCACHED;
	self->id = hash_thread(self);
	if (!atomic_load_explicit(&exit_key_made, memory_order_acquire) ||
	    pool__fault(POOL_FAULT_THREAD))
		return;
	c = pool__os_meta_alloc(sizeof(*c), POOL_CACHE_LINE);
	if (!c)
		return;
	c->budget = pool__config_get()->cache_bytes;
	c->hand = 1;
	/*
	 * No epoch yet (they start at 1): `integrity` may have been switched on since this slow
	 * path read the flags, so only a sync that sees it on may say the caches are filled.
	 */
	c->integrity_epoch = 0;
	/* before the registry shows `c`: pool__thread_kick() stores through it */
	c->tls = &pool__tls_cache;
	/* the lowest free id: ids stay dense, so per-id tables and hashes stay small */
	pool__lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		if (!registry[i]) {
			id = i;
			registry[i] = c;
			if (i >= registry_top)
				registry_top = i + 1;
			break;
		}
	}
	pool__unlock(&registry_lock);
	if (id == POOL_MAX_THREADS) {
		free_caches(c);
		return;
	}
	c->id = id;
	self->id = id;
	self->caches = c;
	self->state = POOL_THREAD_CACHED;
	pthread_setspecific(exit_key, c);
	if (!(__atomic_load_n(&pool__debugging, __ATOMIC_ACQUIRE) & POOL_DBG_SLOW))
		open_fast_path(c);
}

/*
 * The pthread key destructor: flush, leave the registry, free the caches, and work without
 * them from now on (other destructors may still free objects).
 */
static void thread_exit(void *arg)
{
	struct pool_thread_caches *c = arg;
	struct pool_thread *self = &pool_self;

	if (self->state != POOL_THREAD_CACHED || self->caches != c)
		return;
	/* the fast path must not refill what is being flushed: empty entries from now on */
	close_fast_path(&pool__tls_cache);
	pool__tcache_flush_all(c, __atomic_load_n(&pool__debugging, __ATOMIC_ACQUIRE));
	pool__lock(&registry_lock);
	registry[c->id] = NULL;
	pool__unlock(&registry_lock);
	self->state = POOL_THREAD_EXITED;
	self->caches = NULL;
	self->id = hash_thread(self);
	free_caches(c);
}

struct pool_thread *pool__thread_self(unsigned int *dbg_out)
{
	struct pool_thread *self = &pool_self;
	struct pool_thread_caches *ctx;
	unsigned int dbg = __atomic_load_n(&pool__debugging, __ATOMIC_ACQUIRE);
	size_t credit;

	*dbg_out = dbg;
	if (POOL_UNLIKELY(self->state == POOL_THREAD_NEW))
		thread_init(self);
	/* a thread has caches exactly while it is CACHED, and then the fast path may reach them */
	POOL_ASSERT(self->state == POOL_THREAD_CACHED ?
	            self->caches && (POOL__TLS_CACHE() == self->caches->tc ||
	                             POOL__TLS_CACHE() == pool__tcache_none) :
	            !self->caches);
	if (self->state != POOL_THREAD_CACHED)
		return self;
	ctx = self->caches;
	/* debugging took the fast path away and is off again: the entries back */
	if (POOL_UNLIKELY(POOL__TLS_CACHE() != ctx->tc) && !(dbg & POOL_DBG_SLOW))
		open_fast_path(ctx);
	/*
	 * Debugging that needs the slow paths is on and this thread saw it before the switch's
	 * kick reached it: it closes its fast path itself, before it fills its caches for
	 * `integrity` below, so that no object enters them unfilled after the fill.
	 */
	if (POOL_UNLIKELY(dbg & POOL_DBG_SLOW) && POOL__TLS_CACHE() != pool__tcache_none)
		close_fast_path(&pool__tls_cache);
	credit = atomic_load_explicit(&ctx->credit, memory_order_relaxed);
	if (credit)
		ctx->reserved -= atomic_exchange(&ctx->credit, 0);
	POOL_ASSERT(ctx->reserved <= ctx->budget);
	if (POOL_UNLIKELY(dbg & POOL_DBG_NO_CACHE)) {
		if (ctx->reserved)
			pool__tcache_flush_all(ctx, dbg);
	} else if (POOL_UNLIKELY((dbg & POOL_DBG_INTEGRITY) &&
	                         ctx->integrity_epoch != pool__debug_integrity_epoch())) {
		pool__tcache_fill_all(ctx);
	}
	return self;
}

unsigned int pool__thread_id(const struct pool_thread *self)
{
	return self->id;
}

uint64_t *pool__thread_rng(struct pool_thread *self)
{
	return &self->rng;
}

POOL_API void pool_thread_flush(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int dbg;

	if (self->state == POOL_THREAD_CACHED) {
		pool__thread_self(&dbg);
		pool__tcache_flush_all(self->caches, dbg);
	}
}

void pool__thread_unload(void)
{
	struct pool_thread *self = &pool_self;

	if (self->state == POOL_THREAD_CACHED)
		thread_exit(self->caches);
	pool__lock(&registry_lock);
	if (atomic_load_explicit(&exit_key_made, memory_order_relaxed)) {
		atomic_store_explicit(&exit_key_made, 0, memory_order_relaxed);
		pthread_key_delete(exit_key);
	}
	pool__unlock(&registry_lock);
}

/* ------------------------------------------------------------------------------------------ */
/* Other threads' caches: pool_destroy(), statistics, fork()                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * The registry lock, then every thread but the caller (`mine`: its caches, or NULL) kept out of
 * its sections: what pool_destroy()'s drain and fork() hold while they
 * look at other threads' caches. The lock is what makes the quiescer the only one.
 */
static void registry_quiesce(struct pool_thread_caches *mine)
{
	pool__lock(&registry_lock);
	pool__tcache_quiesce_begin(registry, POOL_MAX_THREADS, mine);
}

/* The end of registry_quiesce(): the threads let into their sections again, the lock dropped. */
static void registry_unquiesce(void)
{
	POOL_ASSERT(pool__lock_held(&registry_lock));
	pool__tcache_quiesce_end();
	pool__unlock(&registry_lock);
}

int pool__thread_drain_begin(struct pool_head *pool)
{
	unsigned int dbg, i, slot = pool->ro.index;
	struct pool_thread *self = pool__thread_self(&dbg);
	int stuck = 0;

	registry_quiesce(self->caches);
	if (!slot)
		return 0;
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *ctx = registry[i];
		size_t bytes;

		if (!ctx)
			continue;
		if (ctx != self->caches && pool__tcache_stuck(ctx)) {
			/* still inside a section after the bounded wait: its slot is not ours */
			stuck = 1;
			continue;
		}
		bytes = (size_t)pool__magazine_take_slot(ctx, slot, self->id) * pool->cache_cost;
		if (ctx == self->caches)
			ctx->reserved -= bytes;
		else
			atomic_fetch_add(&ctx->credit, bytes);
	}
	/* the caller's own caches, which no other thread changes, with its slot of the pool gone */
	if (POOL_ASSERTS >= 2 && self->caches)
		pool__tcache_walk_caches(self->caches);
	return stuck;
}

void pool__thread_drain_end(void)
{
	/* the contract of the call (check_assert.c names it), before the helper's own check */
	POOL_ASSERT(pool__lock_held(&registry_lock));
	registry_unquiesce();
}

/*
 * Another thread's count of pointers in its loaded magazine, read racily: the owner may be
 * swapping magazines, so a reading between two magazines is taken as 0.
 */
static uint32_t entry_count(const struct pool_tcache *tc)
{
	void **base = __atomic_load_n(&tc->base, __ATOMIC_RELAXED);
	void **top = __atomic_load_n(&tc->top, __ATOMIC_RELAXED);
	void **end = __atomic_load_n(&tc->end, __ATOMIC_RELAXED);

	return base && top >= base && top <= end ? (uint32_t)(top - base) : 0;
}

/*
 * Objects cached by slot `s` of the caches `c` of any thread (racy reads: an estimate). A slot
 * whose thread has not allocated from it shows the fast path an empty window (base at the
 * magazine's end: pool-magazine.c, pool__magazine_first_alloc()): its objects lie below it.
 */
static unsigned long slot_cached(const struct pool_thread_caches *c, unsigned int s)
{
	unsigned long held = __atomic_load_n(&c->slot[s].held, __ATOMIC_RELAXED);
	const struct pool_head *p = __atomic_load_n(&pool__slots[s], __ATOMIC_RELAXED);

	if (!__atomic_load_n(&c->slot[s].took, __ATOMIC_RELAXED) && p) {
		void **top = __atomic_load_n(&c->tc[s].top, __ATOMIC_RELAXED);
		void **end = __atomic_load_n(&c->tc[s].end, __ATOMIC_RELAXED);
		uint32_t depth = __atomic_load_n(&c->slot[s].depth, __ATOMIC_RELAXED);

		/* the entry's end is the magazine's first pointer plus the slot's depth */
		return held + (end && top <= end && top >= end - depth ?
		               (unsigned long)(top - (end - depth)) : 0);
	}
	return entry_count(&c->tc[s]) + held;
}

/* Registry lock held: the sum of pool__thread_sum_cached(). */
static unsigned long sum_cached(unsigned int slot)
{
	unsigned long sum = 0;
	unsigned int i;

	POOL_ASSERT(pool__lock_held(&registry_lock));
	for (i = 0; i < POOL_MAX_THREADS; i++)
		if (registry[i])
			sum += slot_cached(registry[i], slot);
	return sum;
}

unsigned long pool__thread_sum_cached(const struct pool_head *pool)
{
	unsigned long sum;

	if (!pool->ro.index)
		return 0;
	pool__lock(&registry_lock);
	sum = sum_cached(pool->ro.index);
	pool__unlock(&registry_lock);
	return sum;
}

/*
 * The releaser's threads to look at, under the registry lock (only the releaser's step calls
 * pool__thread_reclaim(), and that lock serialises it): a table rather than 32 KiB of its small
 * stack, with whether each entered no section since the last look.
 */
static struct pool_thread_caches *look_at[POOL_MAX_THREADS];
static unsigned char look_idle[POOL_MAX_THREADS];

/* Take what the releaser may of every slot of `c` (held out, or the caller's own). */
static unsigned long take_spares(struct pool_thread_caches *c, int all, unsigned int dbg)
{
	unsigned int s, max = pool__magazine_max_slot();
	unsigned long taken = 0;
	size_t credit = 0;

	for (s = 1; s < max; s++) {
		struct pool_head *pool = pool__slots[s];
		struct pool_tslot *sl = &c->slot[s];
		struct pool_mag *top, *bottom, *m, *next;
		uint32_t nm, no;

		/* integrity and backup check cached objects as they leave: the owner's business */
		if (!pool || pool__tc_debug_cached(pool, (dbg & POOL_DBG_INTEGRITY) != 0) ||
		    !(all ? sl->prev || sl->nfull || sl->nempty : sl->low_full && sl->nfull)) {
			sl->low_full = sl->nfull;
			continue;
		}
		credit += (size_t)pool__magazine_take_spares(c, s, all, &top, &bottom, &nm, &no) *
		          pool->cache_cost;
		taken += no;
		if (!nm)
			continue;
		if (!(pool->layout & POOL_DBG_UAF) && !(dbg & POOL_DBG_NO_GLOBAL)) {
			pool__demand_push_idle(pool, top, bottom, nm, no, c->id);
			continue;
		}
		/* the shared lists are bypassed: to the OS layer (the uaf quarantine) */
		for (m = top; m; m = next) {
			next = m->next;
			pool__bucket_slab_put(pool, m->obj, m->n, c->id, NULL);
			pool__mag_free(pool, m);
		}
	}
	if (credit)
		atomic_fetch_add(&c->credit, credit);
	return taken;
}

unsigned long pool__thread_reclaim(void)
{
	unsigned int dbg = __atomic_load_n(&pool__debugging, __ATOMIC_ACQUIRE);
	struct pool_thread_caches *own = pool_self.caches;
	unsigned long taken = 0;
	unsigned int i, n = 0;

	pool__lock(&registry_lock);
	for (i = 0; i < registry_top; i++) {
		struct pool_thread_caches *c = registry[i];
		unsigned int sec;
		int idle;

		if (!c)
			continue;
		sec = atomic_load_explicit(&c->sections, memory_order_relaxed);
		idle = sec == c->seen_sections;
		c->seen_sections = sec;
		/* idle since everything was taken: nothing can have come since */
		if (idle && sec == c->taken_sections)
			continue;
		if (c == own) {
			/* outside any section (the releaser's step is none): ours to change */
			taken += take_spares(c, idle, dbg);
			if (idle)
				c->taken_sections = sec;
			continue;
		}
		look_idle[n] = (unsigned char)idle;
		look_at[n++] = c;
	}
	if (n)
		pool__tcache_hold(look_at, n);
	for (i = 0; i < n; i++) {
		struct pool_thread_caches *c = look_at[i];

		/* one inside a section (a slow path right now) is left for the next window */
		if (pool__tcache_held_out(c)) {
			taken += take_spares(c, look_idle[i], dbg);
			if (look_idle[i])
				c->taken_sections = c->seen_sections;
		}
		pool__tcache_unhold(c);
	}
	pool__unlock(&registry_lock);
	return taken;
}

void pool__thread_cache_view(const struct pool_head *pool, struct pool_cache_view *v)
{
	unsigned int i, s = pool->ro.index;

	memset(v, 0, sizeof(*v));
	v->slot = s;
	pool__lock(&registry_lock);
	for (i = 0; i < registry_top; i++) {
		const struct pool_thread_caches *c = registry[i];
		unsigned long n;
		unsigned int depth;

		if (!c)
			continue;
		v->threads++;
		if (!s)
			continue;
		n = slot_cached(c, s);
		v->objects += n;
		v->caching += n > 0;
		depth = __atomic_load_n(&c->slot[s].depth, __ATOMIC_RELAXED);
		if (!depth)
			continue;
		if (!v->depth_min || depth < v->depth_min)
			v->depth_min = depth;
		if (depth > v->depth_max)
			v->depth_max = depth;
	}
	pool__unlock(&registry_lock);
}

int pool__thread_sum_cached_try(const struct pool_head *pool, unsigned long *sum)
{
	if (!pool->ro.index) {
		*sum = 0;
		return 0;
	}
	if (pool__lock_try(&registry_lock) != 0)
		return -1;
	*sum = sum_cached(pool->ro.index);
	pool__unlock(&registry_lock);
	return 0;
}

void pool__thread_kick(void)
{
	unsigned int i;

	/* the flags were stored before: see open_fast_path() for the other side */
	atomic_thread_fence(memory_order_seq_cst);
	pool__lock(&registry_lock);
	for (i = 0; i < registry_top; i++)
		if (registry[i])
			close_fast_path(registry[i]->tls);
	pool__unlock(&registry_lock);
}

void pool__thread_fork_prepare(void)
{
	registry_quiesce(pool_self.caches);
}

void pool__thread_fork_parent(void)
{
	registry_unquiesce();
}

void pool__thread_fork_child(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int i, s, max;

	POOL_ASSERT(pool__lock_held(&registry_lock));
	max = pool__magazine_max_slot();
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *ctx = registry[i];

		if (!ctx || ctx == self->caches)
			continue;
		for (s = 1; s < max; s++) {
			struct pool_tslot *sl = &ctx->slot[s];

			if (!pool__slots[s] || (!sl->reserved_objs && !sl->nempty))
				continue;
			if (pool__tcache_stuck(ctx)) {
				/* its thread was stuck inside a section: nothing of it can be trusted */
				pool__bucket_count_lost(pool__slots[s],
				                        slot_cached(ctx, s), self->id);
				continue;
			}
			pool__magazine_take_slot(ctx, s, self->id);
		}
		registry[i] = NULL;
		/* its thread does not exist here: its caches go */
		free_caches(ctx);
	}
	/* the forking thread took the lock in fork_prepare(): it owns it in the child too */
	registry_unquiesce();
}
