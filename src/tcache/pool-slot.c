/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Slots outside their rotations (the slot and its rotations: pool-magazine.c): the magazines
 * the bulk calls take and put whole, cold-first's coldest object, and another thread's slot or
 * spare magazines taken back for pool-thread.c. The functions on the calling thread's own slot
 * run inside one of its sections; a slot of another thread is taken while that thread is kept
 * out of them, or vanished in a fork() child. Only magazine headers and pointer arrays are
 * read or written.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "tcache/pool-magazine.h"

/* ------------------------------------------------------------------------------------------ */
/* Whole magazines: the bulk calls, cold-first                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * The bulk calls' whole magazines (pool-magazine.h): the loaded magazine is left alone, and a
 * magazine moves between a stack and the caller's array in one copy, where a rotation per
 * magazine would load and unload it (DPDK's mempool cache serves a request larger than itself
 * from the ring the same way).
 */
uint32_t pool__magazine_take_whole(struct pool_thread_caches *ctx, unsigned int s, void **dst,
                                   uint32_t want)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m = sl->prev;
	uint32_t got = 0;

	pool__slot_check(ctx, s);
	if (m && m->n && m->n <= want) {
		memcpy(dst, m->obj, m->n * sizeof(*dst));
		got = m->n;
		pool__slot_set_held(sl, sl->held - m->n);
		m->n = 0;
	}
	if (sl->top && sl->top->n <= want - got) {
		/*
		 * The k magazines from the top down to `last` are emptied into dst[], then leave the
		 * full stack for the empty one in one splice (a pop and a push per magazine wrote
		 * the slot's fields k times).
		 */
		struct pool_mag *first = sl->top, *last;
		uint32_t k = 0, taken = 0;

		m = first;
		do {
			memcpy(dst + got, m->obj, m->n * sizeof(*dst));
			got += m->n;
			taken += m->n;
			m->n = 0;
			m->prev = NULL;
			last = m;
			m = m->next;
			k++;
		} while (m && m->n <= want - got);
		POOL_ASSERT(k <= sl->nfull && sl->held >= taken);
		sl->top = m;
		if (m)
			m->prev = NULL;
		else
			sl->bottom = NULL;
		last->next = sl->empty;
		sl->empty = first;
		sl->nempty += k;
		sl->nfull -= k;
		if (sl->nfull < sl->low_full)
			sl->low_full = sl->nfull;
		pool__slot_set_held(sl, sl->held - taken);
	}
	if (got) {
		sl->referenced = 1;
		pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
	}
	return got;
}

size_t pool__magazine_put_whole(struct pool_thread_caches *ctx, unsigned int s, void *const *src,
                                size_t n, size_t *put)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_head *pool = pool__slots[s];
	uint32_t cap = pool->cluster;
	size_t mag_cost = (size_t)cap * pool->cache_cost, room = ctx->budget - ctx->reserved;
	size_t used = 0;

	pool__slot_check(ctx, s);
	/* a slot that never allocated keeps few magazines: make_room's rotations trim them */
	if (!sl->took)
		return 0;
	/*
	 * What the budget holds now: no eviction for a bulk (make_room's path decides that). The
	 * room is counted down in a local (no division per call); the slot's count is set once,
	 * from what the stacks hold, at the end.
	 */
	while (n - used >= cap && room >= mag_cost) {
		struct pool_mag *m = pool__slot_empty_get(ctx, s);
		size_t took;
		uint32_t c;

		if (!m)
			break;
		room -= mag_cost;
		c = (uint32_t)pool__copy_skip_null(m->obj, cap, src + used, n - used, &took);
		used += took;
		m->n = c;
		*put += c;
		if (c)
			pool__slot_full_push(sl, m);
		else
			pool__slot_empty_push(sl, m);
	}
	if (used) {
		sl->referenced = 1;
		pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
	}
	POOL_ASSERT(ctx->reserved <= ctx->budget);
	return used;
}

/*
 * cold-first: the least recently freed object of slot `s`: the first pointer of the bottom of
 * its full stack, else of the previous magazine, else of the loaded one (the others shift down:
 * a memmove of at most POOL_CLUSTER_MAX pointers).
 */
void *pool__magazine_pop_coldest(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m = sl->bottom ? sl->bottom : (sl->prev && sl->prev->n ? sl->prev : NULL);
	void *obj;

	pool__slot_check(ctx, s);
	if (m) {
		obj = m->obj[0];
		memmove(m->obj, m->obj + 1, (m->n - 1) * sizeof(void *));
		m->n--;
		pool__slot_set_held(sl, sl->held - 1);
		if (!m->n && m == sl->bottom) {
			struct pool_mag *t, *b;
			uint32_t n;

			pool__slot_full_cut_bottom(sl, 1, &t, &b, &n);
			pool__slot_empty_push(sl, t);
		}
		pool__slot_set_reserved(ctx, s, pool__slot_objs(ctx, s));
		return obj;
	}
	if (!pool__tc_count(ctx, s))
		return NULL;
	obj = pool__tc_objs(ctx, s)[0];
	memmove(pool__tc_objs(ctx, s), pool__tc_objs(ctx, s) + 1,
	        (pool__tc_count(ctx, s) - 1) * sizeof(void *));
	pool__tc_set_count(ctx, s, pool__tc_count(ctx, s) - 1);
	return obj;
}

/* ------------------------------------------------------------------------------------------ */
/* Another thread's caches (pool-thread.c: pool_destroy(), statistics, fork())                */
/* ------------------------------------------------------------------------------------------ */

/*
 * Slot `s` of another thread's caches (quiesced, or vanished in a fork() child) is taken back:
 * every magazine with objects goes to the shared lists as it is (no pointer is copied), the
 * empty ones are freed, the entry is left empty. A count the owner's fast path was changing
 * while it was read is clamped to the capacity. Returns the objects the slot counted in the
 * budget, for the owner's books.
 */
uint32_t pool__magazine_take_slot(struct pool_thread_caches *c, unsigned int s, unsigned int start)
{
	struct pool_tslot *sl = &c->slot[s];
	struct pool_tcache *tc = &c->tc[s];
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *top = NULL, *bottom = NULL, *m, *l = sl->loaded, *p = sl->prev;
	uint32_t nm = 0, n = 0, reserved = sl->reserved_objs, i;

	if (l) {
		void **t = __atomic_load_n(&tc->top, __ATOMIC_RELAXED);

		l->n = t >= l->obj && t <= l->obj + l->cap ? (uint32_t)(t - l->obj) : 0;
	}
	/* closed: no top passes the fast path's tests, even one its owner stores late */
	__atomic_store_n(&tc->base, POOL__TC_CLOSED_BASE, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->end, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->top, NULL, __ATOMIC_RELAXED);
	/* the full stack, bounded by its count (a stack cut by a stuck owner is not followed) */
	for (m = sl->top, i = 0; m && i < sl->nfull; m = m->next, i++) {
		n += m->n;
		nm++;
		bottom = m;
	}
	if (nm)
		top = sl->top;
	for (i = 0; i < 2; i++)
		pool__mag_free(pool, pool__slot_stack_if_stocked(i ? l : p, &top, &bottom, &nm, &n));
	pool__push_mags(pool, top, bottom, nm, n, start);
	pool__mag_free_stack(pool, sl->empty);
	memset(sl, 0, sizeof(*sl));
	return reserved;
}

uint32_t pool__magazine_take_spares(struct pool_thread_caches *c, unsigned int s, int all,
                                    struct pool_mag **top, struct pool_mag **bottom,
                                    uint32_t *nmags, uint32_t *nobjs)
{
	struct pool_tslot *sl = &c->slot[s];
	uint32_t was = sl->reserved_objs;
	uint32_t k = all || sl->low_full > sl->nfull ? sl->nfull : sl->low_full;

	*top = *bottom = NULL;
	*nmags = *nobjs = 0;
	if (k)
		pool__slot_full_cut_bottom(sl, k, top, bottom, nobjs);
	*nmags = k;
	if (all) {
		pool__mag_free(pool__slots[s], pool__slot_stack_if_stocked(sl->prev, top, bottom, nmags, nobjs));
		pool__mag_free_stack(pool__slots[s], sl->empty);
		sl->prev = sl->empty = NULL;
		sl->nempty = 0;
		pool__slot_set_held(sl, 0);
	}
	sl->low_full = sl->nfull;
	sl->reserved_objs = pool__slot_objs(c, s);
	return was - sl->reserved_objs;
}
