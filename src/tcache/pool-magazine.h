/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The magazines of one thread's cache of one pool (a slot: pool-magazine.c, pool-slot.c), for
 * the thread-cache tier's slow paths (pool-tcache.c) and the threads (pool-thread.c). Private
 * header. Unless said otherwise, a function here acts on the calling thread's caches `ctx`
 * inside one of its sections, on slot `s` (struct pool_head_ro.index of the pool), and takes
 * the debugging word `dbg` of the slow path that called it. The inline functions of a slot's
 * stacks and counts (pool__slot_*) are for the two files that change a slot.
 */
#ifndef POOL_SRC_POOL_MAGAZINE_H
#define POOL_SRC_POOL_MAGAZINE_H

#include <stdatomic.h>
#include <stdint.h>
#include <pool/pool.h>

#include "base/pool-assert.h"
#include "base/pool-head-t.h"
#include "debug/pool-debug.h"
#include "shared/pool-bucket.h"

/*
 * Pools by cache slot (struct pool_head_ro.index): written under the pool list lock of pool.c
 * (release stores), read without it by loops over every slot of a thread's caches (the
 * integrity fill), which may meet a slot that a pool is
 * taking or leaving: those read it with pool__slot_pool(). A slot whose thread holds magazines
 * of it cannot change under that thread (a pool is detached after its drain), so reads of such
 * a slot may be plain.
 */
extern struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];

/* The pool of slot `s` now, or NULL: an acquire load, so that the pool's head reads whole. */
static inline struct pool_head *pool__slot_pool(unsigned int s)
{
	return __atomic_load_n(&pool__slots[s], __ATOMIC_ACQUIRE);
}

/*
 * Full magazines a slot keeps on its stack while its thread has not allocated from the pool
 * (besides the loaded and previous ones): a thread that only frees (a consumer, a reaper) sends
 * them to the shared lists together once it has this many, rather than filling its budget with
 * objects it will not hand out. 4: one exchange per 4 magazines; without the bound, xmalloc's
 * consumers keep their whole budget of the producers' objects (doc/internals.md 4.6).
 */
#define POOL_FREE_ONLY_FULL 4u

/* A pool gets a cache slot in every thread (none when all are taken: index 0) / loses it. */
void pool__magazine_attach(struct pool_head *pool);
void pool__magazine_detach(struct pool_head *pool);

/* The highest pool slot ever used, plus one. */
unsigned int pool__magazine_max_slot(void);

/*
 * An entry closed by another thread (pool_destroy()'s drain): `base` at the highest address and
 * `end` NULL, so that no value of `top` passes the fast path's tests, not even a stale one the
 * owner stores after the drain (a pop or a push racing it, which is forbidden but must not make
 * the fast path use a magazine that is gone).
 */
#define POOL__TC_CLOSED_BASE ((void **)UINTPTR_MAX)

/*
 * The loaded magazine of slot `s` as the slow paths see it: its pointer array (NULL without
 * one), the pointers it holds and how many it may hold: the slot's depth, at most the
 * magazine's capacity (pool-magazine.c, deepen()). The bounds come from the magazine and the
 * slot, not from the entry's `base` and `end`, which a drain may have closed.
 */
static inline void **pool__tc_objs(const struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_mag *m = ctx->slot[s].loaded;

	return m ? m->obj : NULL;
}

static inline uint32_t pool__tc_count(const struct pool_thread_caches *ctx, unsigned int s)
{
	void **objs = pool__tc_objs(ctx, s), **top = ctx->tc[s].top;

	return objs && top > objs ? (uint32_t)(top - objs) : 0;
}

static inline uint32_t pool__tc_cap(const struct pool_thread_caches *ctx, unsigned int s)
{
	return ctx->slot[s].loaded ? ctx->slot[s].depth : 0;
}

/* The `end` of slot `s`'s entry (`m` is its loaded magazine). */
static inline void **pool__tc_open_end(const struct pool_thread_caches *ctx, unsigned int s,
                                       struct pool_mag *m)
{
	return m->obj + ctx->slot[s].depth;
}

/*
 * The `base` of slot `s`'s entry (`m` is its loaded magazine):
 * the magazine's first pointer, or its end while the thread has not allocated from the slot
 * (the fast path then pushes and never pops: pool__magazine_first_alloc()).
 */
static inline void **pool__tc_open_base(const struct pool_thread_caches *ctx, unsigned int s,
                                        struct pool_mag *m)
{
	return ctx->slot[s].took ? m->obj : pool__tc_open_end(ctx, s, m);
}

/* Other threads read `top` for statistics: the store is a relaxed atomic. */
static inline void pool__tc_set_count(struct pool_thread_caches *ctx, unsigned int s,
                                      uint32_t count)
{
	__atomic_store_n(&ctx->tc[s].top, pool__tc_objs(ctx, s) + count, __ATOMIC_RELAXED);
}

/* Do every object of this thread's caches carry the integrity pattern, as `dbg` wants? */
static inline int pool__tc_integrity_on(const struct pool_thread_caches *ctx, unsigned int dbg)
{
	return (dbg & POOL_DBG_INTEGRITY) &&
	       ctx->integrity_epoch == pool__debug_integrity_epoch();
}

/* Do objects entering or leaving a thread cache of `pool` need the debugging layer? */
static inline int pool__tc_debug_cached(const struct pool_head *pool, int integrity)
{
	return integrity || pool->backup_off;
}

/* ------------------------------------------------------------------------------------------ */
/* One slot's stacks and counts: for pool-magazine.c and pool-slot.c only                     */
/* ------------------------------------------------------------------------------------------ */

/* The objects of the slot's previous and full magazines: statistics read them (relaxed). */
static inline void pool__slot_set_held(struct pool_tslot *sl, uint32_t held)
{
	__atomic_store_n(&sl->held, held, __ATOMIC_RELAXED);
}

/* What slot `s` holds, in objects counted by the budget. */
static inline uint32_t pool__slot_objs(const struct pool_thread_caches *ctx, unsigned int s)
{
	const struct pool_tslot *sl = &ctx->slot[s];

	return sl->held + (sl->loaded ? sl->depth : 0);
}

/*
 * Tier 1 (pool-assert.h), at the top of every call of this file on the calling thread's own
 * slot `s`: it is inside a section, the slot belongs to a pool, the fast path's entry spans the
 * loaded magazine (or is empty, or closed by a drain), the counts agree with the stacks' ends,
 * and the budget counts what the slot holds (the top of this file).
 */
static inline void pool__slot_check(const struct pool_thread_caches *ctx, unsigned int s)
{
	const struct pool_tslot *sl = &ctx->slot[s];
	const struct pool_tcache *tc = &ctx->tc[s];
	const struct pool_mag *m = sl->loaded;

	POOL_ASSERT(atomic_load_explicit(&ctx->busy, memory_order_relaxed) == 1);
	POOL_ASSERT(s >= 1 && s < POOL_MAX_CACHED_POOLS && pool__slots[s]);
	POOL_ASSERT(m ? tc->base >= m->obj && tc->base <= m->obj + m->cap &&
	                tc->end >= m->obj && tc->end <= m->obj + m->cap &&
	                tc->top >= m->obj && tc->top <= m->obj + m->cap :
	                !tc->base || tc->base == POOL__TC_CLOSED_BASE);
	POOL_ASSERT(!sl->top == !sl->nfull && !sl->bottom == !sl->nfull && !sl->empty == !sl->nempty);
	POOL_ASSERT(!sl->prev || sl->prev->n <= sl->prev->cap);
	/* the fast path fills the loaded magazine to the slot's depth, no further */
	POOL_ASSERT(!m || (sl->depth >= 1 && sl->depth <= m->cap &&
	                   pool__tc_count(ctx, s) <= sl->depth &&
	                   tc->end <= pool__tc_open_end(ctx, s, (struct pool_mag *)m)));
	POOL_ASSERT(sl->reserved_objs == pool__slot_objs(ctx, s) && ctx->reserved <= ctx->budget);
}

/* Push `m` on top of slot `s`'s full stack; its objects become `held`. */
static inline void pool__slot_full_push(struct pool_tslot *sl, struct pool_mag *m)
{
	POOL_ASSERT(m->n >= 1 && m->n <= m->cap);
	m->prev = NULL;
	m->next = sl->top;
	if (sl->top)
		sl->top->prev = m;
	else
		sl->bottom = m;
	sl->top = m;
	sl->nfull++;
	pool__slot_set_held(sl, sl->held + m->n);
}

/* Pop the top of slot `s`'s full stack (NULL if empty). */
static inline struct pool_mag *pool__slot_full_pop(struct pool_tslot *sl)
{
	struct pool_mag *m = sl->top;

	if (!m)
		return NULL;
	POOL_ASSERT(sl->nfull >= 1 && sl->held >= m->n && !m->prev);
	sl->top = m->next;
	if (sl->top)
		sl->top->prev = NULL;
	else
		sl->bottom = NULL;
	m->next = m->prev = NULL;
	sl->nfull--;
	if (sl->nfull < sl->low_full)
		sl->low_full = sl->nfull;
	pool__slot_set_held(sl, sl->held - m->n);
	return m;
}

/*
 * Cut the `k` (>= 1, <= nfull) bottom magazines off slot `s`'s full stack: returned as a stack
 * linked by `next` from *top to its last one (*bottom), with their objects in *nobjs. Walks k
 * magazine headers up from the bottom.
 */
static inline void pool__slot_full_cut_bottom(struct pool_tslot *sl, uint32_t k,
                                              struct pool_mag **top, struct pool_mag **bottom,
                                              uint32_t *nobjs)
{
	struct pool_mag *cut = sl->bottom;
	uint32_t n = cut->n, i;

	POOL_ASSERT(k >= 1 && k <= sl->nfull);
	for (i = 1; i < k; i++) {
		cut = cut->prev;
		n += cut->n;
	}
	*top = cut;
	*bottom = sl->bottom;
	sl->bottom = cut->prev;
	if (sl->bottom)
		sl->bottom->next = NULL;
	else
		sl->top = NULL;
	cut->prev = NULL;
	sl->nfull -= k;
	if (sl->nfull < sl->low_full)
		sl->low_full = sl->nfull;
	pool__slot_set_held(sl, sl->held - n);
	*nobjs = n;
}

/* Keep `m`, empty, on slot `s`'s stack of empty magazines. */
static inline void pool__slot_empty_push(struct pool_tslot *sl, struct pool_mag *m)
{
	POOL_ASSERT(m->n == 0);
	m->prev = NULL;
	m->next = sl->empty;
	sl->empty = m;
	sl->nempty++;
}

/* An empty magazine for slot `s`: one it keeps, else a new one; NULL when out of memory. */
static inline struct pool_mag *pool__slot_empty_get(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m = sl->empty;

	POOL_ASSERT(!m == !sl->nempty);
	if (m) {
		sl->empty = m->next;
		sl->nempty--;
		m->next = NULL;
		return m;
	}
	return pool__mag_new(pool__slots[s]);
}

/* Set the prev magazine of slot `s` (the objects of the old and new ones move in `held`). */
static inline void pool__slot_set_prev(struct pool_tslot *sl, struct pool_mag *m)
{
	uint32_t held = sl->held;

	POOL_ASSERT(!sl->prev || held >= sl->prev->n);
	if (sl->prev)
		held -= sl->prev->n;
	if (m)
		held += m->n;
	sl->prev = m;
	pool__slot_set_held(sl, held);
}

/* Slot `s` now counts `objs` objects in the budget. */
static inline void pool__slot_set_reserved(struct pool_thread_caches *ctx, unsigned int s,
                                           uint32_t objs)
{
	struct pool_tslot *sl = &ctx->slot[s];

	/* the thread's reserved counts this slot's part (and credit): taking it back never wraps */
	POOL_ASSERT(ctx->reserved >= (size_t)sl->reserved_objs * pool__slots[s]->cache_cost);
	ctx->reserved += ((size_t)objs - sl->reserved_objs) * pool__slots[s]->cache_cost;
	sl->reserved_objs = objs;
}

/*
 * Put `m` (may be NULL) on top of the stack *top..*bottom (linked by `next`) when it holds
 * objects, counting it in *nm and its objects in *n, and return NULL; return it when it is
 * empty, for the caller to keep or free.
 */
static inline struct pool_mag *pool__slot_stack_if_stocked(struct pool_mag *m,
                                                           struct pool_mag **top,
                                                           struct pool_mag **bottom,
                                                           uint32_t *nm, uint32_t *n)
{
	if (!m || !m->n)
		return m;
	m->next = *top;
	*top = m;
	if (!*bottom)
		*bottom = m;
	(*nm)++;
	*n += m->n;
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The slow paths of a slot                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * The loaded magazine of slot `s` is empty (or there is none): load the previous magazine if it
 * holds objects, else the top of the full stack. Returns 1 when the loaded magazine now holds
 * objects, 0 when the slot has none left. Touches no shared line.
 */
int pool__magazine_reload_local(struct pool_thread_caches *ctx, unsigned int s);

/*
 * The slot has no object left: fill its loaded magazine (giving it one, within the budget, if
 * it has none) from a shared free list, with up to two magazines in one exchange (the second
 * onto the full stack when the budget holds it), leaving the slot's surplus empty magazines in
 * that bucket; else with half a magazine from the slab tier, or `want` (>= 1) if more (for a
 * pool off slabs, `want` new objects from the OS layer), at most a magazine. Returns 1 when the
 * loaded magazine holds objects; 0 at the pool's limit, out of memory, or when the budget
 * cannot hold a magazine (then the slot has no loaded magazine).
 */
int pool__magazine_reload_remote(struct pool_thread_caches *ctx, unsigned int s,
                                 unsigned int dbg, uint32_t want);

/*
 * The loaded magazine of slot `s` is full (or there is none): make room in it (a slot that
 * allocates goes deeper while the budget has room, else magazines rotate; a full one the budget cannot hold goes to the shared lists, and so does the full
 * stack of a slot whose thread has not allocated from it once it holds POOL_FREE_ONLY_FULL).
 * Returns 1 when the loaded magazine has room, 0 when the slot cannot cache (no budget, no
 * memory).
 */
int pool__magazine_make_room(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg);

/*
 * pool_alloc_bulk()'s whole magazines: while `want` objects still wanted hold all of the
 * previous magazine's or of the full stack's top one, copy them to dst[] (the magazine, empty,
 * stays the previous one or goes to the empty stack). The loaded magazine is not touched.
 * Returns the objects copied (0: none fitted). Touches no shared line, no object.
 */
uint32_t pool__magazine_take_whole(struct pool_thread_caches *ctx, unsigned int s, void **dst,
                                   uint32_t want);

/*
 * pool_free_bulk()'s whole magazines: as many of the n / capacity magazines as the budget
 * holds now (no eviction) are filled from src[] (NULL entries skipped) and pushed on the full
 * stack, the loaded magazine not touched; *put grows by the objects pushed. Returns the entries
 * of src[] consumed, from the first: 0 when the budget holds no whole magazine more or the
 * thread has not allocated from the slot (make_room keeps that one's magazines few); fewer than
 * asked when there is no memory for an empty magazine.
 */
size_t pool__magazine_put_whole(struct pool_thread_caches *ctx, unsigned int s, void *const *src,
                                size_t n, size_t *put);

/*
 * cold-first: the least recently freed object of slot `s` (the first pointer of the bottom of
 * its full stack, else of the previous magazine, else of the loaded one); NULL if it has none.
 */
void *pool__magazine_pop_coldest(struct pool_thread_caches *ctx, unsigned int s);

/*
 * Everything slot `s` holds leaves the thread: its magazines with objects to the tier below in
 * one exchange (checked first when debugging wants it), its empty ones freed; the entry is left
 * empty (the fast path falls to the slow path).
 */
void pool__magazine_evict_slot(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg);

/*
 * The first allocation through slot `s`: what the slot holds was freed by this thread before
 * it ever allocated from the pool, so it was all made by other threads. For a pool on slabs it
 * goes back to its slabs (whose line groups it shares with the objects their makers still
 * use); the fast path may pop from then on. Call it inside a section, before the allocation.
 */
void pool__magazine_first_alloc(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg);

/* Integrity was switched on: fill every object slot `s` holds with the pattern. */
void pool__magazine_fill_slot(struct pool_thread_caches *ctx, unsigned int s);

/*
 * Slot `s` of another thread's caches `c`, kept out of its sections (or vanished in a fork()
 * child), is taken back: its magazines with objects go to the shared lists as they are (near
 * bucket `start`), the empty ones are freed, the entry is left empty; a `top` the owner's fast
 * path moved while it was read is clamped to the magazine. Returns the objects the slot counted
 * in its thread's budget.
 */
uint32_t pool__magazine_take_slot(struct pool_thread_caches *c, unsigned int s,
                                  unsigned int start);

/*
 * The spare magazines of slot `s` of a thread's caches `c`, kept out of its sections by the
 * releaser (or the caller's own, outside a section): with `all` (the thread entered no section
 * through the window), the previous magazine, the full stack and the empty magazines, which the
 * inline fast path never touches (it uses the loaded magazine only, which stays); else the full
 * magazines at the bottom of the stack that stayed there through the window (low_full). Those
 * holding objects are returned as a stack *top..*bottom linked by `next` (*nmags magazines,
 * *nobjs objects, counted as used); the empty ones are freed; low_full starts again. Reads
 * magazine headers only. Returns the objects the slot no longer counts in its thread's budget
 * (the caller credits the owner).
 */
uint32_t pool__magazine_take_spares(struct pool_thread_caches *c, unsigned int s, int all,
                                    struct pool_mag **top, struct pool_mag **bottom,
                                    uint32_t *nmags, uint32_t *nobjs);

/*
 * Tier 2 of the assertions (pool-assert.h): walk slot `s` of the caches `ctx` (the calling
 * thread's, or ones no other thread changes), of `pool`: its count in the budget, its stacks
 * against their counts and links, its magazines against the pool's capacity. For
 * pool__tcache_walk_caches(); under `if (POOL_ASSERTS >= 2)`.
 */
void pool__magazine_walk_slot(const struct pool_thread_caches *ctx, unsigned int s,
                              const struct pool_head *pool);


#endif
