/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The magazines of one thread's cache of one pool (a slot), after Bonwick & Adams ("Magazines
 * and Vmem", USENIX 2001, section 3): the loaded magazine, whose pointer array the fast path
 * pops and pushes through the slot's struct pool_tcache entry; the previous magazine; a stack of
 * full magazines and one of empty ones, the thread's own small depot. When the loaded magazine
 * runs empty, a full previous one takes its place, else the top of the full stack, else
 * magazines from a shared free list (one exchange), else new objects from the slab tier. When
 * it runs full, an empty previous one takes its place, else the previous one goes onto the
 * full stack and an empty magazine is loaded. Every move is of whole magazines: a pointer swap
 * or a stack operation on magazine headers, never a walk over objects.
 *
 * The budget: each slot counts `reserved_objs`, the objects of its previous and full magazines
 * plus the loaded magazine's depth, and the thread keeps sum(reserved_objs * cache_cost) ==
 * reserved - credit <= budget (asserted when a section ends). What does not fit is evicted: the
 * CLOCK (Corbato 1968: a reference bit, set when a slot's slow path moves a magazine, cleared by
 * the hand) picks the coldest other slot, which gives the bottom half of its full stack (its
 * coldest magazines) or, with none, all it holds; then this slot's own full stack; and a full
 * magazine that still does not fit goes to the shared free lists at once. The fast path counts
 * nothing, so a thread holds at most its budget: the topology's L2 share (pool_configure()), an
 * object costing its stride (under uaf, its pages); a pool of which one magazine exceeds the
 * budget is not cached. A thread destroying a pool drains the other threads' slots of it and
 * credits their `reserved` (ctx->credit, an atomic), which each owner takes back on its next
 * slow path.
 *
 * Every function here acts on the calling thread's own caches inside one of its sections
 * (pool-tcache.c), but the slot table's (under the pool list lock); a slot's stacks and counts
 * are inline in pool-magazine.h, and what is done to a slot outside its rotations (the bulk
 * calls, another thread's slot) is pool-slot.c's.
 * Only magazine headers and pointer arrays are read or written here: never a free object, but
 * for the debugging layer's fill and check of cached objects when integrity or backup is on.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "tcache/pool-magazine.h"
#include "slab/pool-slab.h"

/* Magazines a refill takes from a shared list with one exchange, when the budget holds them. */
#define REFILL_MAGS 2u

/* Empty magazines a slot keeps when it leaves others in a bucket during a refill. */
#define EMPTY_KEEP 2u

/*
 * A slot goes deeper only while its thread's budget stays at most 1/DEEPEN_BUDGET_SHARE used
 * (deepen()): deeper slots are for a thread whose budget is not in demand, and a server's mix
 * keeps the starting depths. Side by side on the `server` rows (12 pools of 8 B to 16 KiB)
 * the time is the same with and without the bound, and without it the short-burst rows at 8
 * threads peak 6-10% higher under a 512 KiB budget.
 */
#ifndef DEEPEN_BUDGET_SHARE
#define DEEPEN_BUDGET_SHARE 2u
#endif

struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];
static atomic_uint pool_max_slot = 1;   /* highest slot ever used + 1 */

/* ------------------------------------------------------------------------------------------ */
/* Pool slots                                                                                 */
/* ------------------------------------------------------------------------------------------ */

void pool__magazine_attach(struct pool_head *pool)
{
	unsigned int s;

	for (s = 1; s < POOL_MAX_CACHED_POOLS; s++) {
		if (!pool__slots[s]) {
			pool->ro.index = s;
			pool->ro.cache_off = (uint32_t)(s * sizeof(struct pool_tcache));
			/* published whole to the loops that read every slot without the lock */
			__atomic_store_n(&pool__slots[s], pool, __ATOMIC_RELEASE);
			if (s + 1 > atomic_load(&pool_max_slot))
				atomic_store(&pool_max_slot, s + 1);
			return;
		}
	}
}

void pool__magazine_detach(struct pool_head *pool)
{
	if (pool->ro.index)
		__atomic_store_n(&pool__slots[pool->ro.index], NULL, __ATOMIC_RELEASE);
}

unsigned int pool__magazine_max_slot(void)
{
	return atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------------ */
/* One slot: the entry and its loaded magazine (its stacks: pool-magazine.h)                  */
/* ------------------------------------------------------------------------------------------ */

/* Statistics read the depth of a slot whose thread only frees (pool-thread.c). */
static inline void set_depth(struct pool_tslot *sl, uint32_t depth)
{
	__atomic_store_n(&sl->depth, (uint8_t)depth, __ATOMIC_RELAXED);
}

/*
 * Tier 2, at the top of the calls that move magazines (a refill, making room, an eviction), and
 * for each slot of pool__tcache_walk_caches(): the whole slot. Its count in the budget; the full
 * stack walked, its links checked both ways, against nfull and its bottom; the empty stack
 * against nempty; held, the sum of the objects of the previous and full magazines; every
 * magazine with the pool's capacity. The loaded and previous magazines
 * hold no NULL (the fast path relies on it); the pointers of the full stack are checked when
 * one is loaded (load()), which keeps this walk at a header per magazine, not a word per
 * cached object.
 */
static void walk_slot(const struct pool_thread_caches *ctx, unsigned int s,
                      const struct pool_head *pool)
{
	const struct pool_tslot *sl = &ctx->slot[s];
	const struct pool_mag *m, *up = NULL;
	uint32_t cap = pool->cluster, n, i, held = 0;

	POOL_ASSERT(sl->reserved_objs == pool__slot_objs(ctx, s));
	for (m = sl->top, n = 0; m; up = m, m = m->next, n++) {
		POOL_ASSERT(n < sl->nfull && m->prev == up && m->cap == cap);
		POOL_ASSERT(m->n >= 1 && m->n <= m->cap);
		held += m->n;
	}
	POOL_ASSERT(n == sl->nfull && up == sl->bottom);
	if ((m = sl->prev) != NULL) {
		POOL_ASSERT(m->cap == cap);
		for (i = 0; i < m->n; i++)
			POOL_ASSERT(m->obj[i]);
		held += m->n;
	}
	POOL_ASSERT(held == sl->held);
	for (m = sl->empty, n = 0; m; m = m->next, n++)
		POOL_ASSERT(n < sl->nempty && m->n == 0 && m->cap == cap);
	POOL_ASSERT(n == sl->nempty);
	if (sl->loaded) {
		POOL_ASSERT(sl->loaded->cap == cap);
		for (i = 0; i < pool__tc_count(ctx, s); i++)
			POOL_ASSERT(sl->loaded->obj[i]);
	}
}

void pool__magazine_walk_slot(const struct pool_thread_caches *ctx, unsigned int s,
                              const struct pool_head *pool)
{
	walk_slot(ctx, s, pool);
}

/*
 * Make `m` the loaded magazine of slot `s` (there was none). A magazine holding more than the
 * slot's depth deepens it to what it holds: those objects were counted in the budget before
 * (as held, or by the refill that took them), so the slot's count does not grow.
 */
static void load(struct pool_thread_caches *ctx, unsigned int s, struct pool_mag *m)
{
	struct pool_tcache *tc = &ctx->tc[s];

	POOL_ASSERT(!ctx->slot[s].loaded && m->n <= m->cap && m->cap == pool__slots[s]->cluster);
	POOL_ASSERT(ctx->slot[s].depth >= 1 && ctx->slot[s].depth <= m->cap);
	if (m->n > ctx->slot[s].depth)
		set_depth(&ctx->slot[s], m->n);
	if (POOL_ASSERTS >= 2) {
		uint32_t i;

		/* tier 2: what the fast path will pop holds no NULL (a word per object loaded) */
		for (i = 0; i < m->n; i++)
			POOL_ASSERT(m->obj[i]);
	}
	ctx->slot[s].loaded = m;
	/* relaxed atomics: statistics read the entry from other threads (entry_count()) */
	__atomic_store_n(&tc->base, pool__tc_open_base(ctx, s, m), __ATOMIC_RELAXED);
	__atomic_store_n(&tc->end, pool__tc_open_end(ctx, s, m), __ATOMIC_RELAXED);
	pool__tc_set_count(ctx, s, m->n);
}

/* Take the loaded magazine out of slot `s` (its count written back); NULL if none. */
static struct pool_mag *unload(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tcache *tc = &ctx->tc[s];
	struct pool_mag *m = ctx->slot[s].loaded;

	POOL_ASSERT(!m || pool__tc_count(ctx, s) <= m->cap);
	if (m)
		m->n = pool__tc_count(ctx, s);
	__atomic_store_n(&tc->top, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->base, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->end, NULL, __ATOMIC_RELAXED);
	ctx->slot[s].loaded = NULL;
	return m;
}

/* ------------------------------------------------------------------------------------------ */
/* Debugging of cached objects                                                                */


/* Objects that enter the thread cache: the integrity pattern and the backup copy. */
static void fill_objs(struct pool_head *pool, void *const *objs, uint32_t n, int integrity)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pool__debug_fill_cached(pool, objs[i], integrity);
	pool__count_touched((unsigned long)n * ((pool->ro.size + 7) / 8));
}

/* Objects that leave the thread cache for another tier: checked against both. */
static void check_objs(struct pool_head *pool, void *const *objs, uint32_t n, int integrity)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pool__debug_check_cached(pool, objs[i], NULL, integrity);
	pool__count_touched((unsigned long)n * ((pool->ro.size + 7) / 8));
}

void pool__magazine_fill_slot(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	/* read once: another thread may be creating or destroying the pool of this slot */
	struct pool_head *pool = pool__slot_pool(s);
	struct pool_mag *m;

	if (!pool || (!sl->loaded && !sl->prev && !sl->top))
		return;
	pool__slot_check(ctx, s);
	if (sl->loaded)
		fill_objs(pool, pool__tc_objs(ctx, s), pool__tc_count(ctx, s), 1);
	if (sl->prev)
		fill_objs(pool, sl->prev->obj, sl->prev->n, 1);
	for (m = sl->top; m; m = m->next)
		fill_objs(pool, m->obj, m->n, 1);
}

/* ------------------------------------------------------------------------------------------ */
/* Giving magazines to the tier below                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * A stack of magazines (`top` to `bottom` through `next`, holding `nobjs` objects, counted as
 * used) leaves the thread cache: checked first when debugging wants it, then pushed to the
 * shared lists with one exchange, or given to the OS layer when the shared lists are bypassed
 * (no-global, uaf), the magazines then kept empty by the slot. `want_empty`: take up to that
 * many empty magazines from that bucket in the same exchange, returned as a stack linked by
 * `next` (or NULL).
 */
static struct pool_mag *give_mags(struct pool_thread_caches *ctx, unsigned int s,
                                  struct pool_mag *top, struct pool_mag *bottom, uint32_t nmags,
                                  uint32_t nobjs, unsigned int dbg, unsigned int want_empty)
{
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *m, *next, *empty = NULL;
	unsigned int got = 0;
	int integrity;

	if (!nmags)
		return NULL;
	integrity = pool__tc_integrity_on(ctx, dbg);
	if (pool__tc_debug_cached(pool, integrity))
		for (m = top; m; m = m == bottom ? NULL : m->next)
			check_objs(pool, m->obj, m->n, integrity);
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF)) {
		if (pool__shared_push(pool, top, bottom, nmags, nobjs, ctx->id, want_empty, &empty))
			return empty;
		/* every head stayed BUSY: to the OS layer (the magazines are kept, empty) */
	}
	bottom->next = NULL;
	for (m = top; m; m = next) {
		next = m->next;
		pool__bucket_slab_put(pool, m->obj, m->n, ctx->id, NULL);
		m->n = 0;
		if (got < want_empty) {
			m->next = empty;
			empty = m;
			got++;
		} else {
			pool__slot_empty_push(&ctx->slot[s], m);
		}
	}
	return empty;
}

/* ------------------------------------------------------------------------------------------ */
/* The budget and eviction (the top of this file tells them)                                  */
/* ------------------------------------------------------------------------------------------ */

/* Evict the `k` coldest full magazines of slot `s` (the bottom of its stack). */
static void evict_full(struct pool_thread_caches *ctx, unsigned int s, uint32_t k,
                       unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *top, *bottom, *e;
	uint32_t n;

	if (!k)
		return;
	pool__slot_full_cut_bottom(sl, k, &top, &bottom, &n);
	/*
	 * As many empty magazines back from the bucket, in the same exchange: a consumer reuses
	 * those its producers left there, rather than making new ones while they free theirs.
	 */
	e = give_mags(ctx, s, top, bottom, k, n, dbg, k);
	while (e) {
		struct pool_mag *next = e->next;

		pool__slot_empty_push(sl, e);
		e = next;
	}
	pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
}

/*
 * Everything slot `s` holds leaves the thread: its full stack, previous and loaded magazines
 * (with objects) to the tier below in one exchange, and its empty magazines are freed. The
 * slot's entry is left empty (the fast path falls to the slow path).
 */
void pool__magazine_evict_slot(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *top = NULL, *bottom = NULL, *mags[2];
	uint32_t nm = 0, n = 0, i;

	pool__slot_check(ctx, s);
	if (POOL_ASSERTS >= 2)
		walk_slot(ctx, s, pool__slots[s]);
	mags[0] = unload(ctx, s);
	mags[1] = sl->prev;
	pool__slot_set_prev(sl, NULL);
	if (sl->nfull) {
		nm = sl->nfull;
		pool__slot_full_cut_bottom(sl, nm, &top, &bottom, &n);
	}
	/* the loaded and previous magazines go on top of the stack when they hold objects */
	for (i = 0; i < 2; i++) {
		struct pool_mag *e = pool__slot_stack_if_stocked(mags[i], &top, &bottom, &nm, &n);

		if (e)
			pool__slot_empty_push(sl, e);
	}
	give_mags(ctx, s, top, bottom, nm, n, dbg, 0);
	pool__mag_free_stack(pool__slots[s], sl->empty);
	sl->empty = NULL;
	sl->nempty = 0;
	set_depth(sl, 0);
	pool__slot_set_reserved(ctx, s, 0);
}

/*
 * The loaded magazine of slot `s` now shows the fast path `depth` pointers: the entry's `end`
 * (and `base`, where it sits at the end for a slot that only frees) move with the depth, and
 * the slot counts the new depth in the budget.
 */
static void set_loaded_depth(struct pool_thread_caches *ctx, unsigned int s, uint32_t depth)
{
	struct pool_tcache *tc = &ctx->tc[s];
	struct pool_mag *m = ctx->slot[s].loaded;
	void **was = pool__tc_open_end(ctx, s, m);

	POOL_ASSERT(depth >= 1 && depth <= m->cap && pool__tc_count(ctx, s) <= depth);
	set_depth(&ctx->slot[s], depth);
	if (tc->end == was)
		__atomic_store_n(&tc->end, pool__tc_open_end(ctx, s, m), __ATOMIC_RELAXED);
	if (!ctx->slot[s].took && tc->base == was)
		__atomic_store_n(&tc->base, pool__tc_open_end(ctx, s, m), __ATOMIC_RELAXED);
	pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
}

/*
 * The CLOCK chose slot `s` to give room back: a loaded magazine deeper than the pool's starting
 * depth and than what it holds is made shallower first, which evicts nothing (a reservation
 * unused goes before objects cached). Returns 1 when the slot gave room back that way.
 */
static int make_shallower(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	uint32_t keep = pool__tc_count(ctx, s);

	if (!sl->loaded)
		return 0;
	if (keep < pool__slots[s]->depth)
		keep = pool__slots[s]->depth;
	if (sl->depth <= keep)
		return 0;
	set_loaded_depth(ctx, s, keep);
	return 1;
}

/*
 * The clock hand's next victim other than `keep`: a slot holding something in the budget whose
 * reference bit is clear (the bit is cleared on the way); 0 if none.
 */
static unsigned int clock_victim(struct pool_thread_caches *ctx, unsigned int keep)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int step;

	POOL_ASSERT(ctx->hand >= 1 && ctx->hand < max);
	for (step = 0; step < 2 * max; step++) {
		unsigned int s = ctx->hand;
		struct pool_tslot *sl = &ctx->slot[s];

		ctx->hand = s + 1 < max ? s + 1 : 1;
		if (!s || s == keep || !sl->reserved_objs)
			continue;
		if (sl->referenced) {
			sl->referenced = 0;
			continue;
		}
		return s;
	}
	return 0;
}

/*
 * slot_grow()'s way when the budget cannot hold `more` objects more for slot `s` as it is:
 * colder slots give their full magazines first, then all they hold, then slot `s` gives its own
 * coldest full magazines. Returns 1 (counted), or 0 when even that is not enough (nothing is
 * counted; what was evicted stays evicted).
 */
static POOL_NOINLINE int slot_grow_evict(struct pool_thread_caches *ctx, unsigned int s,
                                         uint32_t more, unsigned int dbg)
{
	size_t cost = pool__slots[s]->cache_cost;
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed), rounds;

	for (rounds = 0; ctx->reserved + (size_t)more * cost > ctx->budget; rounds++) {
		unsigned int v = rounds < 4 * max ? clock_victim(ctx, s) : 0;

		if (v) {
			struct pool_tslot *vs = &ctx->slot[v];

			if (make_shallower(ctx, v))
				continue;
			if (vs->nfull)
				evict_full(ctx, v, (vs->nfull + 1) / 2, dbg);
			else
				pool__magazine_evict_slot(ctx, v, dbg);
			continue;
		}
		if (!ctx->slot[s].nfull)
			return 0;
		evict_full(ctx, s, (ctx->slot[s].nfull + 1) / 2, dbg);
	}
	pool__slot_set_reserved(ctx, s, ctx->slot[s].reserved_objs + more);
	POOL_ASSERT(ctx->reserved <= ctx->budget);
	return 1;
}

/*
 * Make the budget hold `more` objects more for slot `s` (its reserved_objs grows by `more`):
 * counted at once when it holds them (a bulk call's whole magazines, most rotations), else by
 * evictions (slot_grow_evict()). Returns 1 (counted), or 0 when it cannot.
 */
static inline int slot_grow(struct pool_thread_caches *ctx, unsigned int s, uint32_t more,
                            unsigned int dbg)
{
	if (POOL_LIKELY(ctx->reserved + (size_t)more * pool__slots[s]->cache_cost <= ctx->budget)) {
		pool__slot_set_reserved(ctx, s, ctx->slot[s].reserved_objs + more);
		POOL_ASSERT(ctx->reserved <= ctx->budget);
		return 1;
	}
	return slot_grow_evict(ctx, s, more, dbg);
}

/* ------------------------------------------------------------------------------------------ */
/* Rotations: what a slot does when its loaded magazine runs empty or full                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * The loaded magazine of slot `s` is empty (or there is none): load the previous one if it holds
 * objects, else the top of the full stack. Returns 1 when the loaded magazine now holds
 * objects, 0 when the slot has none left.
 */
int pool__magazine_reload_local(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m, *old;

	pool__slot_check(ctx, s);
	if (!sl->loaded)
		return 0;
	if (sl->prev && sl->prev->n) {
		m = sl->prev;
		old = unload(ctx, s);
		pool__slot_set_prev(sl, old);
	} else if (sl->top) {
		m = pool__slot_full_pop(sl);
		old = unload(ctx, s);
		if (!sl->prev)
			pool__slot_set_prev(sl, old);
		else
			pool__slot_empty_push(sl, old);
	} else {
		return 0;
	}
	load(ctx, s, m);
	sl->referenced = 1;
	pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
	return 1;
}

/*
 * Give slot `s` a loaded magazine (empty) if it has none, within the budget, at the pool's
 * starting depth. Returns 1, or 0 when the budget cannot hold one or there is no memory for it.
 */
static int ensure_loaded(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_head *pool = pool__slots[s];
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m;

	if (sl->loaded)
		return 1;
	set_depth(sl, pool->depth);
	if (!slot_grow(ctx, s, sl->depth, dbg))
		return 0;
	m = pool__slot_empty_get(ctx, s);
	if (!m) {
		pool__slot_set_reserved(ctx, s, sl->reserved_objs - sl->depth);
		return 0;
	}
	load(ctx, s, m);
	return 1;
}

/*
 * The loaded magazine of slot `s` is full to its depth and the thread allocates from the slot:
 * twice as deep (at most the magazine's capacity) while the thread's budget stays at most
 * 1/DEEPEN_BUDGET_SHARE used, so that nothing is evicted for it and a thread whose budget is
 * in demand (a server's mix of pools) keeps the starting depths. A rotation is a slow path per
 * magazine; a slot that fills a deeper one rotates less often (pool-demand.c, MAG_DEEP_SHARE).
 * Returns 1 when it went deeper.
 */
static int deepen(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	uint32_t more = sl->loaded->cap - sl->depth;

	if (more > sl->depth)
		more = sl->depth;
	if (ctx->reserved + (size_t)more * pool__slots[s]->cache_cost >
	    ctx->budget / DEEPEN_BUDGET_SHARE)
		return 0;
	set_loaded_depth(ctx, s, sl->depth + more);
	POOL_ASSERT(ctx->reserved <= ctx->budget);
	return 1;
}

/*
 * The loaded magazine of slot `s` is empty (and so are the previous one and the full stack):
 * fill it from a shared free list, with up to REFILL_MAGS magazines in one exchange (those
 * beyond the first go onto the full stack, taken when the budget holds their objects), leaving
 * the slot's surplus empty magazines in that bucket; else half the slot's depth from the slab
 * tier, or `want` if more (for a pool off slabs, `want` new objects from the OS layer), at most
 * the depth: one for pool_alloc(), what a bulk call still needs for it. A magazine from the
 * shared lists may hold more than the slot's depth (a deeper slot of another thread filled
 * it): the slot goes as deep, counted in the budget first, by evictions when it must. Returns 1
 * when the loaded magazine holds objects, 0 at the limit or out of memory.
 */
int pool__magazine_reload_remote(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg,
                                 uint32_t want)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_head *pool = pool__slots[s];
	int integrity = pool__tc_integrity_on(ctx, dbg);
	uint32_t n;

	pool__slot_check(ctx, s);
	if (POOL_ASSERTS >= 2)
		walk_slot(ctx, s, pool__slots[s]);
	if (!ensure_loaded(ctx, s, dbg))
		return 0;
	sl->referenced = 1;
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF)) {
		/* the objects the budget holds now: the loaded magazine's depth and the room */
		size_t fit = (ctx->budget - ctx->reserved) / pool->cache_cost + sl->depth;
		struct pool_mag *deposit = NULL, *top, *m, *next, *old;
		unsigned int nobjs;

		/* the empty magazines beyond what the slot keeps are left in the bucket */
		while (sl->nempty > EMPTY_KEEP) {
			m = sl->empty;
			sl->empty = m->next;
			sl->nempty--;
			m->next = deposit;
			deposit = m;
		}
		if (fit > UINT_MAX)
			fit = UINT_MAX;
		top = pool__shared_pop(pool, ctx->id, REFILL_MAGS, (unsigned int)fit, &deposit, &nobjs);
		pool__mag_free_stack(pool, deposit);
		/*
		 * What the slot counts beyond `held` once they are in: the first one loaded (its
		 * depth, or more if it holds more), the others whole. Over the room (the first alone
		 * holds more, or it holds less than the depth): counted by evictions, else back.
		 */
		if (top) {
			size_t need = nobjs + (top->n < sl->depth ? sl->depth - top->n : 0);

			if (need > fit && !slot_grow(ctx, s, (uint32_t)(need - sl->depth), dbg)) {
				uint32_t nm = 1;

				for (m = top; m->next; m = m->next)
					nm++;
				give_mags(ctx, s, top, m, nm, nobjs, dbg, 0);
				top = NULL;
			}
		}
		/* load() deepens the slot to what the first one holds */
		if (top) {
			old = unload(ctx, s);
			if (!sl->prev)
				pool__slot_set_prev(sl, old);
			else
				pool__slot_empty_push(sl, old);
			next = top->next;
			top->next = NULL;
			if (pool__tc_debug_cached(pool, integrity))
				fill_objs(pool, top->obj, top->n, integrity);
			load(ctx, s, top);
			for (m = next; m; m = next) {
				next = m->next;
				if (pool__tc_debug_cached(pool, integrity))
					fill_objs(pool, m->obj, m->n, integrity);
				pool__slot_full_push(sl, m);
			}
			pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
			return pool__tc_count(ctx, s) > 0 || pool__magazine_reload_local(ctx, s);
		}
	}
	/*
	 * Growing: half the slot's depth from the slab tier (a bulk call may want more), as
	 * jemalloc's tcache fills half a bin: one filled to the brim is full at the next free, and
	 * pairs around that count swap the loaded and previous magazines at every pair. Off slabs, what
	 * is wanted, one OS-layer call per object: such a pool takes no more than it hands out.
	 */
	POOL_ASSERT(want >= 1 && pool__tc_count(ctx, s) == 0);
	if (pool__slab_on(pool) && want < pool__tc_cap(ctx, s) / 2)
		want = pool__tc_cap(ctx, s) / 2;
	if (want > pool__tc_cap(ctx, s))
		want = pool__tc_cap(ctx, s);
	n = pool__bucket_slab_get(pool, pool__tc_objs(ctx, s), want, ctx->id);
	if (!n)
		return 0;
	if (pool__tc_debug_cached(pool, integrity))
		fill_objs(pool, pool__tc_objs(ctx, s), n, integrity);
	pool__tc_set_count(ctx, s, n);
	return 1;
}

/*
 * The loaded magazine of slot `s` is full (or there is none): make room in it. A slot that
 * allocates goes deeper while the budget has room (deepen()); else an empty
 * previous magazine takes its place; else the previous one goes onto the full stack and an empty
 * magazine is loaded, within the budget; when the budget cannot hold the full one, it goes to the
 * shared free lists (taking an empty magazine back in the same exchange). A slot that has not
 * allocated first sends its full stack there when it holds POOL_FREE_ONLY_FULL magazines.
 * Returns 1 when the loaded magazine has room, 0 when the slot cannot cache (no budget or no
 * memory).
 */
int pool__magazine_make_room(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *full, *e;
	uint32_t nfull;

	pool__slot_check(ctx, s);
	if (POOL_ASSERTS >= 2)
		walk_slot(ctx, s, pool__slots[s]);
	if (!sl->loaded)
		return ensure_loaded(ctx, s, dbg);
	sl->referenced = 1;
	/* full to its depth: deeper while the budget has room, before any rotation */
	if (sl->took && sl->depth < sl->loaded->cap && deepen(ctx, s))
		return 1;
	/* a rotation keeps the depth: the full one's objects are what the slot counts more */
	nfull = pool__tc_count(ctx, s);
	if (sl->prev && !sl->prev->n) {
		/*
		 * Bonwick's exchange: the empty previous magazine is loaded, and the full one becomes
		 * the previous, or leaves for the shared lists when the budget cannot hold it
		 */
		int keep = slot_grow(ctx, s, nfull, dbg);

		e = sl->prev;
		full = unload(ctx, s);
		pool__slot_set_prev(sl, keep ? full : NULL);
		load(ctx, s, e);
		if (!keep)
			give_mags(ctx, s, full, full, 1, full->n, dbg, 0);
		pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
		return 1;
	}
	/*
	 * A slot that never allocated keeps POOL_FREE_ONLY_FULL full magazines at most: what a
	 * thread only frees is for the threads that allocate (a consumer, a reaper), not for its
	 * budget; they leave together, in one exchange (4.6 of internals.md)
	 */
	if (!sl->took && sl->nfull >= POOL_FREE_ONLY_FULL)
		evict_full(ctx, s, sl->nfull, dbg);
	e = pool__slot_empty_get(ctx, s);
	if (e && slot_grow(ctx, s, nfull, dbg)) {
		full = unload(ctx, s);
		if (sl->prev) {
			struct pool_mag *p = sl->prev;

			pool__slot_set_prev(sl, NULL);
			pool__slot_full_push(sl, p);
		}
		pool__slot_set_prev(sl, full);
		load(ctx, s, e);
		pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
		return 1;
	}
	/* over budget, or no memory for an empty magazine: the full one goes to the shared lists */
	full = unload(ctx, s);
	if (e) {
		give_mags(ctx, s, full, full, 1, full->n, dbg, 0);
	} else {
		e = give_mags(ctx, s, full, full, 1, full->n, dbg, 1);
		if (!e)
			e = pool__mag_new(pool);
	}
	if (!e) {
		pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
		return 0;
	}
	e->n = 0;
	load(ctx, s, e);
	pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
	return 1;
}

/*
 * Placement of objects freed by another thread (doc/internals.md, "The slab tier"): the fast
 * path keeps what a thread frees, whoever made it (asking would cost the pair a load of the
 * slab header, a line other threads write). But at a slot's first allocation everything the
 * slot holds was freed by this thread before it ever allocated from the pool, so it is all
 * other threads' objects: it goes back to its slabs, and this thread's refill gets lines of its
 * own. Until then the fast path only pushes (pool__tc_open_base()).
 */
void pool__magazine_first_alloc(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];

	POOL_ASSERT(!sl->took);
	__atomic_store_n(&sl->took, 1, __ATOMIC_RELAXED);   /* statistics read it */
	if (sl->loaded && pool__slab_on(pool__slots[s]))
		pool__magazine_evict_slot(ctx, s, dbg | POOL_DBG_NO_GLOBAL);
	else if (sl->loaded)
		__atomic_store_n(&ctx->tc[s].base, sl->loaded->obj, __ATOMIC_RELAXED);
}
