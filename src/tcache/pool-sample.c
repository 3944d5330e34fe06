/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's sampler: which allocations each thread samples, and how it sees the frees of
 * what it sampled while the inline fast path, unchanged, serves most of them (the tables and
 * what the profile counts: pool-profile.c).
 *
 * 1. The window. The slow paths read the loaded magazine's bounds from the magazine and the
 *    slot's depth (pool__tc_objs(), pool__tc_cap()), so the entry's `base` and `end` may show the
 *    fast path a narrower window of the same array: a raised `base` stops its pops there, a
 *    lowered `end` its pushes. Only the owning thread changes them, inside its sections.
 * 2. The countdown. Per slot, the allocations until the next sample, drawn so that samples are a
 *    Poisson process over the bytes allocated (pool__prof_interval(): exponential intervals of
 *    mean `rate` bytes, as jemalloc and tcmalloc draw theirs). Each slow path charges it with
 *    what the fast path handed out since, net (how far `top` moved down, or what was above the
 *    mark in the magazine a reload replaced), and `base` lets the fast path hand out one object
 *    less than the countdown allows, so that the allocation due comes here. An object allocated
 *    and freed again before the cache goes deeper than it (a pair) is never sampled: it holds no
 *    memory between those calls.
 * 3. Candidates. The object due is a candidate: `end` is lowered to its position, so that the
 *    first free that reaches its depth comes to a slow path. If that free is the candidate's
 *    own, its life was short, and the event tries the next allocation instead for as long as
 *    its hunt lasts (HUNT_SHARE_PERMILLE of the thread's time since its previous event); if it
 *    is another's, the candidate becomes a sample (pool-profile.c), born when the event began.
 *    A candidate's stack is taken when it is handed out (pool__sample_handout()), since it may
 *    become a sample after its allocation returned. Undecided, a candidate is the thread's own
 *    until its slot's next free, the next event, the thread's exit or a view it makes. With the
 *    fast path off (POOL_DBG_SLOW), every call comes here and a sample is remembered at once.
 * 4. Frees. A sample's free is credited to its site, whatever thread frees it, when the profile
 *    sees it free: a free through a slow path, a magazine leaving the loaded position or the
 *    thread (a counting filter checks its pointers: unload() in pool-magazine.c), a hand-out by
 *    a slow path, or the audit of every view (pool__sample_audit(): each thread kept out of its
 *    sections a moment, its magazines' pointers checked, never an object). A fast-path free
 *    followed by a fast-path hand-out of the same object is not seen (a "rebirth"): the record
 *    then stands for the object's next life in the same pool, so per-pool figures stay exact.
 * 5. Cost: the fast path is the same 16 instructions, profile on or off; doc/debugging.md,
 *    "Profiling where memory is held", has the figures of the sampled paths.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "tcache/pool-magazine.h"
#include "os/pool-os.h"
#include "debug/pool-profile.h"
#include "debug/pool-stack.h"
#include "tcache/pool-sample.h"

/*
 * An event may try samples one after the other, to find one that outlives its first free,
 * for at most this share of the thread's time since its previous event (in 1/1000): each try
 * takes an allocation and its free through the slow paths.
 */
#define HUNT_SHARE_PERMILLE 10u

/* The countdown of a pool the profile does not sample (pool__prof_wants()): never due. */
#define LEFT_NEVER (INT64_MAX / 4)

_Static_assert(sizeof(struct sample_countdown) == 32, "two countdowns to a cache line");

/* Draws of the threads without a cache (pool__sample_handout()): a shared counter. */
static atomic_ulong uncached_seq;

/* ------------------------------------------------------------------------------------------ */
/* The state's checks                                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * The flags of slot `s` agree with each other, whenever the sampler is not inside one of its
 * transitions: a quiet slot has no candidate, no retry and no narrowed window; a retry belongs
 * to a hunt and has no candidate yet; a candidate's stack is taken only while it is watched.
 */
static void check_flags(const struct pool_sampler *sampler, unsigned int s)
{
	const struct sample_countdown *cd = &sampler->countdown[s];
	const struct sample_event *ev = &sampler->event[s];

	POOL_ASSERT(cd->narrowed <= 1 && cd->quiet <= 1 && cd->retry <= 1 && cd->hunt <= 1);
	POOL_ASSERT(!cd->quiet || (!ev->watch && !cd->retry && !cd->narrowed));
	POOL_ASSERT(!cd->retry || (cd->hunt && !ev->watch));
	POOL_ASSERT(!ev->watch_named || ev->watch);
	POOL_ASSERT(sampler->narrowed < POOL_MAX_CACHED_POOLS);
}

/*
 * Tier 1, at the end of every transition of slot `s`: its flags, and its marks on the loaded
 * magazine (which another slot's slow path may unload later: the marks of the other slots are
 * not checked).
 */
static void check_slot(const struct pool_thread_caches *ctx, const struct pool_sampler *sampler,
                       unsigned int s)
{
	const struct sample_countdown *cd = &sampler->countdown[s];
	void **objs = pool__tc_objs(ctx, s);

	check_flags(sampler, s);
	POOL_ASSERT(!cd->mark_base || cd->mark_base == objs);
	POOL_ASSERT(!cd->mark_base ||
	            (cd->mark >= objs && cd->mark <= objs + pool__tc_cap(ctx, s)));
}

/*
 * Tier 2, the walk of a thread's sampler, where it is quiet (a new profile or pool in a slot,
 * each view the thread makes, its exit, the profile off): the flags of every slot, and the count
 * of narrowed windows recounted. Not at events: a hunt lasts 1% of the time between two, and
 * the walk's own time would shorten it.
 */
static void walk_sampler(const struct pool_sampler *sampler)
{
	unsigned int s, narrowed = 0;

	for (s = 0; s < POOL_MAX_CACHED_POOLS; s++) {
		check_flags(sampler, s);
		narrowed += sampler->countdown[s].narrowed;
	}
	POOL_ASSERT(narrowed == sampler->narrowed);
}

/* ------------------------------------------------------------------------------------------ */
/* The window                                                                                 */
/* ------------------------------------------------------------------------------------------ */

static struct pool_sampler *sampler_new(struct pool_thread_caches *ctx)
{
	struct pool_sampler *sampler = pool__os_meta_alloc(sizeof(*sampler), POOL_CACHE_LINE);

	if (sampler) {
		sampler->rng = ((uint64_t)(uintptr_t)ctx * UINT64_C(0x9E3779B97F4A7C15)) | 1;
		ctx->sampler = sampler;
	}
	return sampler;
}

/*
 * The candidate of a slot outlived its first free (or no free came before the next event, the
 * end of the profile or of the thread): it becomes a sample the profile remembers.
 */
static void keep_candidate(struct sample_event *ev, struct pool_head *pool)
{
	if (ev->watch && ev->watch_named)
		pool__prof_record(pool, ev->watch, ev->watch_stack, ev->event_ns);
	ev->watch = NULL;
	ev->watch_named = 0;
}

/* The allocations of `pool` until the next sample: an interval, or never for a pool left out. */
static int64_t draw(struct pool_sampler *sampler, const struct pool_head *pool)
{
	if (!pool__prof_wants(pool))
		return LEFT_NEVER;
	return (int64_t)pool__prof_interval(&sampler->rng, pool->ro.size, pool__prof_rate());
}

void pool__sample_keep_candidates(struct pool_thread_caches *ctx)
{
	struct pool_sampler *sampler = ctx->sampler;
	unsigned int s, max = pool__magazine_max_slot();

	if (POOL_ASSERTS >= 2 && sampler)
		walk_sampler(sampler);
	for (s = 1; sampler && s < max; s++) {
		struct sample_event *ev = &sampler->event[s];
		struct pool_head *pool = ev->watch ? pool__slot_pool(s) : NULL;

		if (pool && pool == ev->pool && sampler->countdown[s].gen == pool__prof_gen())
			keep_candidate(ev, pool);
	}
}

void pool__sample_release(struct pool_thread_caches *ctx)
{
	struct pool_sampler *sampler = ctx->sampler;

	if (!sampler)
		return;
	pool__sample_keep_candidates(ctx);
	pool__os_meta_free(sampler, sizeof(*sampler), POOL_CACHE_LINE);
	ctx->sampler = NULL;
}

static void set_narrowed(struct pool_sampler *sampler, struct sample_countdown *cd, int on)
{
	if (cd->narrowed == !!on)
		return;
	cd->narrowed = !!on;
	if (on) {
		POOL_ASSERT(sampler->narrowed < POOL_MAX_CACHED_POOLS - 1);
		sampler->narrowed++;
	} else {
		POOL_ASSERT(sampler->narrowed > 0);
		sampler->narrowed--;
	}
}

/* The entry of slot `s` shows the fast path [base, end) of its loaded magazine. */
static void show(struct pool_thread_caches *ctx, unsigned int s, void **base, void **end)
{
	struct pool_tcache *tc = &ctx->tc[s];
	void **objs = pool__tc_objs(ctx, s);
	void **top = tc->top;

	/* the window lies within the loaded magazine, and so does the fast path's top */
	POOL_ASSERT(objs && base >= objs && end >= objs && top >= objs);
	POOL_ASSERT(base <= objs + pool__tc_cap(ctx, s) && end <= objs + pool__tc_cap(ctx, s) &&
	            top <= objs + pool__tc_cap(ctx, s));
	__atomic_store_n(&tc->base, base, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->end, end, __ATOMIC_RELAXED);
	/* statistics count top - base of the entry: the rest of the magazine's objects here */
	__atomic_store_n(&ctx->slot[s].hidden, (uint8_t)((base < top ? base : top) - objs),
	                 __ATOMIC_RELAXED);
}

/* The whole loaded magazine back to the fast path of slot `s` (none loaded: nothing to do). */
static void open_slot(struct pool_thread_caches *ctx, struct pool_sampler *sampler,
                      unsigned int s)
{
	struct sample_countdown *cd = &sampler->countdown[s];
	struct pool_mag *m = ctx->slot[s].loaded;

	if (cd->narrowed && m)
		show(ctx, s, pool__tc_open_base(ctx, s, m), pool__tc_open_end(ctx, s, m));
	set_narrowed(sampler, cd, 0);
	sampler->event[s].watch = NULL;
	cd->retry = 0;
	cd->mark_base = NULL;
}

/*
 * The base of the window that lets the fast path hand out, net, one object less than the
 * countdown allows (or none, while an event tries again): the allocation due comes here.
 */
static void **window_base(const struct sample_countdown *cd, void **top, void **open,
                          void **end)
{
	int64_t allowed = cd->left > 0 ? cd->left - 1 : 0;

	if (cd->retry)
		return end;
	return allowed < top - open ? top - allowed : open;
}

/*
 * After a slow path: the fast path of slot `s` may hand out `left - 1` more objects, net (the
 * next one is due, and finds the window empty; what the thread frees into the magazine
 * meanwhile it may hand out again), and push nothing at or above the position of a candidate
 * waiting for its first free. While an event tries again, the next allocation goes to the slow
 * path whatever the thread frees first: the window's base is the magazine's end.
 */
static void set_window(struct pool_thread_caches *ctx, struct pool_sampler *sampler,
                       unsigned int s)
{
	struct sample_countdown *cd = &sampler->countdown[s];
	struct pool_mag *m = ctx->slot[s].loaded;
	int watching = sampler->event[s].watch != NULL;
	void **top, **base, **end, **open;

	if (!m) {
		cd->mark_base = NULL;
		set_narrowed(sampler, cd, 0);
		return;
	}
	top = ctx->tc[s].top;
	open = pool__tc_open_base(ctx, s, m);
	end = pool__tc_open_end(ctx, s, m);
	base = window_base(cd, top, open, end);
	if (watching)
		end = top;
	if (base != open || end != pool__tc_open_end(ctx, s, m) || cd->narrowed) {
		show(ctx, s, base, end);
		set_narrowed(sampler, cd, base != open || end != pool__tc_open_end(ctx, s, m));
	}
	cd->mark = top;
	cd->mark_base = m->obj;
	cd->quiet = !watching && !cd->retry && !cd->narrowed;
}

/* ------------------------------------------------------------------------------------------ */
/* The transitions of a slot                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The profile is off: the slot's whole window back; the state goes once no window is narrow. */
static void profile_off(struct pool_thread_caches *ctx, struct pool_sampler *sampler,
                        unsigned int s, struct pool_head *pool)
{
	if (sampler->event[s].pool == pool)
		keep_candidate(&sampler->event[s], pool);
	open_slot(ctx, sampler, s);
	check_slot(ctx, sampler, s);
	if (!sampler->narrowed)
		pool__sample_release(ctx);
}

/* A new profile, or a new pool in this slot: a countdown of its own. */
static void restart_slot(struct pool_thread_caches *ctx, struct pool_sampler *sampler,
                         unsigned int s, struct pool_head *pool)
{
	struct sample_countdown *cd = &sampler->countdown[s];
	struct sample_event *ev = &sampler->event[s];

	if (POOL_ASSERTS >= 2)
		walk_sampler(sampler);
	open_slot(ctx, sampler, s);
	ev->watch_named = 0;
	ev->pool = pool;
	/* the first event's hunt: 1% of the time until then */
	ev->event_ns = pool__clock_ns(CLOCK_MONOTONIC);
	cd->gen = pool__prof_gen();
	cd->hunt = 0;
	cd->left = draw(sampler, pool);
	POOL_ASSERT(!ev->watch && !cd->retry && !cd->narrowed && !cd->mark_base);
}

/* The countdown charged with what the fast path handed out, net, since the sampler left. */
static void charge_fast_path(struct pool_thread_caches *ctx, struct sample_countdown *cd,
                             unsigned int s, int delta)
{
	int64_t popped;

	if (!cd->mark_base)
		return;
	if (cd->mark_base == pool__tc_objs(ctx, s))
		popped = (cd->mark - ctx->tc[s].top) + delta;
	else
		popped = delta < 0 ? cd->mark - cd->mark_base : 0;
	if (popped > 0)
		cd->left -= popped;
}

/*
 * No fast path (debugging that takes every call to the slow paths): the countdown sees every
 * allocation, and a sample is remembered at once; no window, no candidate.
 */
static void allocated_slow(struct pool_sampler *sampler, unsigned int s,
                           struct pool_head *pool, void *obj, int delta)
{
	struct sample_countdown *cd = &sampler->countdown[s];

	cd->left += delta;
	if (obj && cd->left <= 0) {
		cd->left += draw(sampler, pool);
		sampler->due = obj;
		sampler->due_now = 1;
	}
}

/* A new event: the next interval, counted from where this one ended, and a new hunt. */
static void begin_event(struct pool_sampler *sampler, unsigned int s, struct pool_head *pool)
{
	struct sample_countdown *cd = &sampler->countdown[s];
	struct sample_event *ev = &sampler->event[s];
	uint64_t now = pool__clock_ns(CLOCK_MONOTONIC);

	keep_candidate(ev, pool);
	cd->left += draw(sampler, pool);
	cd->hunt = 1;
	ev->hunt_until_ns = now + (now > ev->event_ns ?
	                           (now - ev->event_ns) / 1000u * HUNT_SHARE_PERMILLE : 0);
	ev->event_ns = now;
	POOL_ASSERT(ev->hunt_until_ns >= ev->event_ns && !ev->watch);
}

/* An allocation through the slot's slow path: charged; when due, `obj` the new candidate. */
static void allocated(struct pool_sampler *sampler, unsigned int s, struct pool_head *pool,
                      void *obj, int delta)
{
	struct sample_countdown *cd = &sampler->countdown[s];
	struct sample_event *ev = &sampler->event[s];

	cd->left += delta;
	if (!obj || (!cd->retry && cd->left > 0))
		return;
	if (!cd->retry)
		begin_event(sampler, s, pool);
	cd->retry = 0;
	ev->watch = obj;
	ev->watch_named = 0;
	sampler->due = obj;
	sampler->due_now = 0;
	POOL_ASSERT(cd->hunt);
}

/* The candidate's first free since it was handed out: its own (try another) or another's. */
static void candidate_freed(struct pool_sampler *sampler, unsigned int s,
                            struct pool_head *pool, void *obj)
{
	struct sample_countdown *cd = &sampler->countdown[s];
	struct sample_event *ev = &sampler->event[s];

	POOL_ASSERT(ev->watch && !cd->retry);
	if (obj == ev->watch) {
		if (ev->watch_named)
			pool__prof_count(pool, ev->watch_stack, 1, 1);
		ev->watch = NULL;
		ev->watch_named = 0;
		cd->retry = cd->hunt && pool__clock_ns(CLOCK_MONOTONIC) < ev->hunt_until_ns;
		cd->hunt = cd->retry;
	} else {
		keep_candidate(ev, pool);
		cd->hunt = 0;
	}
	POOL_ASSERT(!ev->watch && cd->retry == cd->hunt);
}

/* ------------------------------------------------------------------------------------------ */
/* The slow paths' calls                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* One slow path's call with the profile on: the countdown charged, then the slot's transition. */
static void step(struct pool_thread_caches *ctx, struct pool_sampler *sampler, unsigned int s,
                 unsigned int dbg, void *obj, int delta)
{
	struct pool_head *pool = pool__slots[s];

	if (sampler->countdown[s].gen != pool__prof_gen() || sampler->event[s].pool != pool)
		restart_slot(ctx, sampler, s, pool);
	else
		charge_fast_path(ctx, &sampler->countdown[s], s, delta);
	if (delta <= 0 && (dbg & POOL_DBG_SLOW))
		allocated_slow(sampler, s, pool, obj, delta);
	else if (delta <= 0)
		allocated(sampler, s, pool, obj, delta);
	else if (sampler->event[s].watch)
		candidate_freed(sampler, s, pool, obj);
}

void pool__sample_after(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg,
                        void *obj, int delta)
{
	struct pool_sampler *sampler = ctx->sampler;
	struct pool_head *pool = pool__slots[s];

	if (sampler) {
		sampler->countdown[s].quiet = 0;    /* set_window() says again whether it may be */
		sampler->due = NULL;
	}
	/* handed out again: an earlier sample of this address was freed unseen */
	if (obj && delta < 0 && pool__prof_maybe(obj))
		pool__prof_credit(obj);
	if (!(dbg & POOL_DBG_PROFILE)) {
		if (sampler)
			profile_off(ctx, sampler, s, pool);
		return;
	}
	if (!sampler && !(sampler = sampler_new(ctx)))
		return;
	step(ctx, sampler, s, dbg, obj, delta);
	set_window(ctx, sampler, s);
	check_slot(ctx, sampler, s);
}

/*
 * No cache (no-cache, uaf, a pool without a slot, a thread past the registry): every
 * allocation and free comes to the slow paths, where this samples each allocation with the
 * chance that its bytes hold a point of the Poisson process, 1 - exp(-size / rate).
 */
static void handout_uncached(struct pool_head *pool, void *obj, const void *caller)
{
	uint64_t x = atomic_fetch_add_explicit(&uncached_seq, 1, memory_order_relaxed);
	double w = pool__prof_weight(pool->ro.size, pool__prof_rate());

	/* handed out again: an earlier sample of this address was freed unseen */
	if (pool__prof_maybe(obj))
		pool__prof_credit(obj);
	if (!pool__prof_wants(pool))
		return;
	x = pool__splitmix64(x);
	if ((double)(x >> 11) * 0x1.0p-53 * w < 1.0)
		pool__prof_record(pool, obj, pool__stack_here(caller),
		                  pool__clock_ns(CLOCK_MONOTONIC));
}

void pool__sample_handout(struct pool_head *pool, struct pool_thread *self, void *obj,
                          const void *caller, int cached)
{
	struct pool_sampler *sampler = self->caches ? self->caches->sampler : NULL;
	struct sample_event *ev;

	if (!cached) {
		handout_uncached(pool, obj, caller);
		return;
	}
	if (!sampler || sampler->due != obj)
		return;
	/* a candidate: the sampler remembers it if it outlives its first free */
	ev = &sampler->event[pool->ro.index];
	sampler->due = NULL;
	if (sampler->due_now) {
		pool__prof_record(pool, obj, pool__stack_here(caller),
		                  pool__clock_ns(CLOCK_MONOTONIC));
	} else if (ev->watch == obj) {
		/* its stack now: the candidate may become a sample after this returns */
		ev->watch_stack = pool__stack_here(caller);
		ev->watch_named = 1;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* The audit                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * Copy the pointers another thread's fast path may be moving: a racy read by design (the owner
 * writes them with plain stores), which ThreadSanitizer is told not to watch.
 */
__attribute__((no_sanitize("thread")))
static void copy_racy(void **dst, void *const *src, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		dst[i] = src[i];
}

void pool__sample_audit(struct pool_thread_caches *c)
{
	unsigned int max = pool__magazine_max_slot(), s;
	void *copy[POOL_CLUSTER_MAX];

	for (s = 1; s < max; s++) {
		struct pool_tslot *slot = &c->slot[s];
		struct pool_head *pool = pool__slot_pool(s);
		struct pool_mag *m = slot->loaded;
		uint32_t i;

		if (!pool || !atomic_load_explicit(&pool->prof_live, memory_order_relaxed))
			continue;
		if (m) {
			void **top = __atomic_load_n(&c->tc[s].top, __ATOMIC_RELAXED);
			uint32_t n = top > m->obj && top <= m->obj + m->cap ?
			             (uint32_t)(top - m->obj) : 0;

			copy_racy(copy, m->obj, n);
			pool__prof_scan(copy, n);
		}
		if (slot->prev)
			pool__prof_scan(slot->prev->obj, slot->prev->n);
		for (m = slot->top, i = 0; m && i < slot->nfull; m = m->next, i++)
			pool__prof_scan(m->obj, m->n);
	}
}
