/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slab tier, under the shared free lists as Bonwick's slabs (1994) are under his magazines
 * (2001); jemalloc's bins, mimalloc's pages and SLUB's slabs are the same idea. It decides
 * where a pool's objects lie; the tiers above decide who holds them. Pools off slabs (uaf,
 * malloc, objects over POOL_SLAB_OBJ_MAX: pool__slab_on()) pass to pool-limit.c.
 *
 * 1. Slabs. One block from the OS layer each, a power of two aligned on its size, so that an
 *    object's slab header is its address rounded down: nothing reads the object to find it.
 *    The header holds the owner, the counts and a bitmap of the objects given back; sizes,
 *    steps and colors are pool-geometry.c's; the map of slabs (pool-slab-map.c) says where
 *    headers are, so that a pointer of no pool is reported before a header is read there.
 * 2. Line groups. The fewest objects whose run ends on a cache line (64 / gcd(os_size, 64): 1,
 *    2 or 4) are handed out together (one object only to a request of fewer), so that objects
 *    of two refills never share a line. A group given back is handed out again once all of it
 *    is back; its free objects are "loose" until then.
 * 3. Dense refills. The slabs with a wholly free group are a min-heap keyed by (density class
 *    of 16, address): a slab moves in it only when it crosses a class. A take serves the
 *    densest slab, its given-back groups in address order, its fresh space last, so that the
 *    emptiest slabs drain; a slab whose objects are all free goes back to the OS layer at once
 *    (none is kept). The release passes (pool-demand.c) decide when objects come down.
 * 4. Zero. Slabs come zeroed, and pool_zalloc() clears every object all the same: a fresh
 *    object read before it is written maps the kernel's zero page, and the next write to that
 *    page copies it and shoots down the TLB of every CPU the process ran on.
 * 5. Counting, under a shard's lock: the carved objects given back (free_objs), the objects
 *    carved and those gone back with their slab, the slabs. `allocated` is the buckets' count
 *    plus free_objs; the limit counts what is above this tier: a take reserves it first.
 * 6. Shards. POOL_SLAB_SHARDS per pool, each with its lock, heap and counters; a slab belongs to
 *    one for life. A take uses its thread's shard or the next free one (pool-shard.c); a put
 *    locks the shard of each object's slab.
 * 7. Purge. A slab that keeps one live object keeps its memory: pool-purge.c gives the kernel
 *    the whole pages of its runs of free objects.
 *
 * Concurrency: a shard's lock is a leaf (after the pass lock), taken inside cache sections,
 * never in a BUSY window, one at a time but by fork(); the OS layer is called with it dropped,
 * but for the purge's madvise(). The tier reads a bitmap bit per object, never the object.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"
#include "debug/pool-debug.h"
#include "debug/pool-report.h"
#include "os/pool-os.h"
#include "os/pool-san.h"
#include "os/pool-malloc.h"
#include "os/pool-uaf.h"
#include "slab/pool-limit.h"
#include "slab/pool-shard.h"
#include "slab/pool-slab.h"
#include "slab/pool-slab-int.h"

#define SLAB_CLASSES    16u                  /* density classes of the heap */
#define SLAB_OFF_HEAP   UINT32_MAX
#define HEAP_MIN        16u                  /* heap entries first allocated */
#define BORROW_SCAN     64u                  /* heap entries a borrowing refill looks at */

static void walk_locked(struct pool_head *pool, struct pool_slab_shard *H);

/* ------------------------------------------------------------------------------------------ */
/* The heap of slabs with a wholly free group: densest first, then lowest address              */
/* ------------------------------------------------------------------------------------------ */

static struct pool_slab *slab_of(const struct pool_slabs *S, const void *obj)
{
	return (struct pool_slab *)((uintptr_t)obj & ~(uintptr_t)(S->bytes - 1));
}

/* The heap key: the density class (its free groups, in 16ths), then the address. */
static uint64_t slab_key(const struct pool_slabs *S, const struct pool_slab *slab)
{
	uint64_t cls = (uint64_t)slab->gfree * SLAB_CLASSES / (S->capacity / S->group + 1);

	return cls << 44 | ((uintptr_t)slab >> 14);
}

static void heap_set(struct pool_slab_shard *H, uint32_t i, struct pool_slab_ref r)
{
	H->heap[i] = r;
	r.slab->heap_idx = i;
}

static void heap_up(struct pool_slab_shard *H, uint32_t i)
{
	struct pool_slab_ref r = H->heap[i];

	while (i > 0 && H->heap[(i - 1) / 2].key > r.key) {
		heap_set(H, i, H->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(H, i, r);
}

static void heap_down(struct pool_slab_shard *H, uint32_t i)
{
	struct pool_slab_ref r = H->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= H->nheap)
			break;
		if (c + 1 < H->nheap && H->heap[c + 1].key < H->heap[c].key)
			c++;
		if (H->heap[c].key >= r.key)
			break;
		heap_set(H, i, H->heap[c]);
		i = c;
	}
	heap_set(H, i, r);
}

static void heap_remove(struct pool_slab_shard *H, struct pool_slab *slab)
{
	uint32_t i = slab->heap_idx;
	struct pool_slab *moved;

	POOL_ASSERT(i < H->nheap && H->heap[i].slab == slab);
	slab->heap_idx = SLAB_OFF_HEAP;
	if (i == --H->nheap)
		return;
	moved = H->heap[H->nheap].slab;
	heap_set(H, i, H->heap[H->nheap]);
	heap_up(H, i);
	heap_down(H, moved->heap_idx);
}

/*
 * The slab's free groups changed: it enters the heap (it had none), leaves it (it has none),
 * or moves when its density class changed.
 */
static void heap_fix(const struct pool_slabs *S, struct pool_slab_shard *H,
                     struct pool_slab *slab)
{
	uint64_t key;
	uint32_t i = slab->heap_idx;

	if (!slab->gfree) {
		if (i != SLAB_OFF_HEAP)
			heap_remove(H, slab);
		return;
	}
	key = slab_key(S, slab);
	if (i == SLAB_OFF_HEAP) {
		/* the heap has room for every slab held (slab_new() grew it) */
		POOL_ASSERT(H->nheap < H->heap_cap);
		i = H->nheap++;
		H->heap[i].key = key;
		H->heap[i].slab = slab;
		slab->heap_idx = i;
		heap_up(H, i);
		return;
	}
	if (H->heap[i].key == key)
		return;
	H->heap[i].key = key;
	heap_up(H, i);
	heap_down(H, slab->heap_idx);
}

/* ------------------------------------------------------------------------------------------ */
/* Slabs made and given back                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * H's lock held: a new slab for `pool` in shard H, into its heap; the OS layer is called with
 * the lock dropped (a slab another thread made meanwhile waits in the heap). Returns 1, or 0
 * when out of memory (the lock held again either way).
 */
static int slab_new(struct pool_head *pool, struct pool_slab_shard *H)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab_ref *heap;
	struct pool_slab *slab;
	uint32_t cap;

	pool__unlock(&H->lock);
	slab = pool__os_slab_alloc(S->bytes);
	if (slab && pool__slab_map_add(slab) < 0) {
		pool__os_slab_free(slab, S->bytes);
		slab = NULL;
	}
	pool__lock(&H->lock);
	if (!slab)
		return 0;
	/* the heap holds every slab (a slab may enter it at any give): grown first if it must */
	while (atomic_load_explicit(&H->nslabs, memory_order_relaxed) + 1 > H->heap_cap) {
		cap = H->heap_cap ? 2 * H->heap_cap : HEAP_MIN;
		pool__unlock(&H->lock);
		heap = pool__os_meta_alloc(cap * sizeof(*heap), POOL_CACHE_LINE);
		pool__lock(&H->lock);
		if (!heap) {
			pool__slab_map_remove(slab);
			pool__os_slab_free(slab, S->bytes);
			return 0;
		}
		if (cap > H->heap_cap) {
			if (H->nheap)
				memcpy(heap, H->heap, H->nheap * sizeof(*heap));
			pool__os_meta_free(H->heap, H->heap_cap * sizeof(*heap), POOL_CACHE_LINE);
			H->heap = heap;
			H->heap_cap = cap;
		} else {
			/* another thread grew it meanwhile */
			pool__os_meta_free(heap, cap * sizeof(*heap), POOL_CACHE_LINE);
		}
	}
	memset(slab, 0, pool__slab_header_bytes(S->words));
	slab->pool = pool;
	slab->heap_idx = SLAB_OFF_HEAP;
	slab->nfree = S->capacity;
	slab->gfree = S->capacity / S->group;
	/* consecutive slabs, consecutive colors: the same object of each on another cache set */
	slab->color = (uint8_t)(((uintptr_t)slab / S->bytes) % S->colors);
	slab->shard = (uint16_t)(H - S->shard);
	slab->next = H->all;
	if (H->all)
		H->all->prev = slab;
	H->all = slab;
	/* the sanitizers: nothing may touch an object of this tier */
	if (pool__san_on())
		pool__san_noaccess(pool__slab_base(S, slab), (size_t)S->capacity * S->step);
	pool__slab_count(&H->nslabs, 1);
	heap_fix(S, H, slab);
	return 1;
}

/* H's lock held: `slab` leaves the pool, onto the list *gone (freed once the lock is dropped). */
static void slab_drop(const struct pool_slabs *S, struct pool_slab_shard *H,
                      struct pool_slab *slab, struct pool_slab **gone)
{
	uint32_t given;

	if (slab->heap_idx != SLAB_OFF_HEAP)
		heap_remove(H, slab);
	if (slab->prev)
		slab->prev->next = slab->next;
	else
		H->all = slab->next;
	if (slab->next)
		slab->next->prev = slab->prev;
	pool__slab_count(&H->nslabs, -1);
	pool__slab_count(&H->released, 1);
	/* its carved objects free here leave `allocated` (all of them, but after a fork() child
	 * lost some, pool__slab_fini()) */
	given = slab->nfree - (S->capacity - slab->carved) - (slab->spare_hi - slab->spare_lo);
	pool__slab_count(&H->free_objs, -(long)given);
	pool__slab_count(&H->released_objs, given);
	slab->prev = NULL;
	slab->next = *gone;
	*gone = slab;
}

/* The slabs of *gone, dropped under the lock, go back to the OS layer now that it is not held. */
static void slabs_to_os(struct pool_head *pool, struct pool_slab *gone)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab *next;

	for (; gone; gone = next) {
		next = gone->next;
		if (pool__san_on())
			pool__san_access(gone, S->bytes);
		pool__slab_map_remove(gone);
		pool__os_slab_free(gone, S->bytes);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Taking objects                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* The first bit of each wholly set group of `g` bits of `w` (groups start at multiples of g). */
static inline uint64_t groups_of(uint64_t w, uint32_t g)
{
	uint64_t t;

	switch (g) {
	case 1:
		return w;
	case 2:
		return w & (w >> 1) & UINT64_C(0x5555555555555555);
	default:
		t = w & (w >> 1);
		return t & (t >> 2) & UINT64_C(0x1111111111111111);
	}
}

/* The g bits of each group whose first bit is set in `m`. */
static inline uint64_t spread(uint64_t m, uint32_t g)
{
	return m * ((UINT64_C(1) << g) - 1);
}

/* Bitmap words that cover the carved objects of `slab`. */
static inline uint32_t carved_words(const struct pool_slab *slab)
{
	return (slab->carved + 63) / 64;
}

/* Does `slab` have a wholly free group among its carved objects (not its fresh space)? */
static inline int has_given_group(const struct pool_slabs *S, const struct pool_slab *slab)
{
	return slab->gfree > (S->capacity - slab->carved) / S->group;
}

static void hint_forward(struct pool_slab *slab)
{
	uint32_t last = carved_words(slab);

	while (slab->hint < last && !slab->free[slab->hint])
		slab->hint++;
}

/* H's lock held: up to `want` fresh objects of `slab` (whole groups) into out[]. */
static unsigned int take_fresh(struct pool_head *pool, struct pool_slab_shard *H,
                               struct pool_slab *slab, void **out, unsigned int want)
{
	struct pool_slabs *S = &pool->slabs;
	unsigned int k = S->capacity - slab->carved, i;

	if (k > want)
		k = want;
	k -= k % S->group;
	for (i = 0; i < k; i++)
		out[i] = pool__slab_obj_at(pool, slab, slab->carved + i);
	slab->carved += k;
	slab->gfree -= k / S->group;
	slab->nfree -= k;
	pool__slab_count(&H->carved, k);
	return k;
}

/*
 * The lock held: up to `want` (>= the group) objects of `slab` into out[] in ascending address
 * order, whole groups: those given back first, then fresh space.
 */
static unsigned int take_groups(struct pool_head *pool, struct pool_slab_shard *H,
                                struct pool_slab *slab, void **out, unsigned int want,
                                int fresh)
{
	struct pool_slabs *S = &pool->slabs;
	uint32_t g = S->group, w, last = carved_words(slab), j;
	unsigned int n = 0;

	want -= want % g;
	for (w = slab->hint; w < last && n < want && has_given_group(S, slab); w++) {
		uint64_t m = groups_of(slab->free[w], g);

		while (m && n < want) {
			uint32_t b = (uint32_t)__builtin_ctzll(m), spares = 0;

			slab->free[w] &= ~(((UINT64_C(1) << g) - 1) << b);
			for (j = 0; j < g; j++)
				out[n++] = pool__slab_obj_at(pool, slab, w * 64 + b + j);
			if (slab->spare_lo < slab->spare_hi && slab->spare_lo >= w * 64 + b &&
			    slab->spare_lo < w * 64 + b + g) {
				/* the group of the spares: they are handed out for the first time */
				spares = slab->spare_hi - slab->spare_lo;
				slab->spare_lo = slab->spare_hi = 0;
				pool__slab_count(&H->carved, spares);
			}
			slab->gfree--;
			slab->nfree -= g;
			pool__slab_count(&H->free_objs, -(long)(g - spares));
			m &= m - 1;
		}
	}
	hint_forward(slab);
	if (n < want && fresh)
		n += take_fresh(pool, H, slab, out + n, want - n);
	return n;
}

/*
 * The lock held: one object of `slab` (a request smaller than a group: a thread without a
 * cache, or the last objects the limit allows): a loose one (given back, its group not wholly
 * free), else the first of a wholly free group, else the first of a fresh group, whose others
 * are left here as given back (loose).
 */
static unsigned int take_one(struct pool_head *pool, struct pool_slab_shard *H,
                             struct pool_slab *slab, void **out)
{
	struct pool_slabs *S = &pool->slabs;
	uint32_t g = S->group, w, last = carved_words(slab), b, i;

	for (w = slab->hint; w < last; w++) {
		uint64_t loose = slab->free[w] & ~spread(groups_of(slab->free[w], g), g);

		if (loose) {
			b = (uint32_t)__builtin_ctzll(loose);
			goto found;
		}
	}
	for (w = slab->hint; w < last && has_given_group(S, slab); w++) {
		uint64_t m = groups_of(slab->free[w], g);

		if (m) {
			b = (uint32_t)__builtin_ctzll(m);
			slab->gfree--;
			goto found;
		}
	}
	if (slab->carved == S->capacity)
		return 0;
	/* spares are loose until their group is whole again, so none is left now */
	POOL_ASSERT(slab->spare_lo == slab->spare_hi);
	w = slab->carved / 64;
	b = slab->carved % 64;
	out[0] = pool__slab_obj_at(pool, slab, slab->carved);
	for (i = 1; i < g; i++)
		slab->free[w] |= UINT64_C(1) << (b + i);
	if (g > 1 && w < slab->hint)
		slab->hint = w;
	slab->spare_lo = slab->carved + 1;
	slab->spare_hi = slab->carved + g;
	slab->carved += g;
	slab->gfree--;
	slab->nfree--;
	pool__slab_count(&H->carved, 1);
	return 1;
found:
	slab->free[w] &= ~(UINT64_C(1) << b);
	slab->nfree--;
	b += w * 64;
	if (b >= slab->spare_lo && b < slab->spare_hi) {
		/* the lowest spare (the lowest loose object is taken first): handed out at last */
		POOL_ASSERT(b == slab->spare_lo);
		slab->spare_lo++;
		pool__slab_count(&H->carved, 1);
	} else {
		pool__slab_count(&H->free_objs, -1);
	}
	out[0] = pool__slab_obj_at(pool, slab, b);
	hint_forward(slab);
	return 1;
}

/*
 * H's lock held: among the BORROW_SCAN densest slabs of H's heap, one with a wholly free group
 * among its carved objects, or NULL. A refill that borrows another shard takes those only,
 * never the shard's fresh space: that space is the next refill of the shard's own threads, and
 * two threads' objects carved one after the other lie on neighbouring lines, a few percent
 * dearer than lines apart (doc/internals.md 4.6).
 */
static struct pool_slab *given_slab(const struct pool_slabs *S, const struct pool_slab_shard *H)
{
	uint32_t i, n = H->nheap < BORROW_SCAN ? H->nheap : BORROW_SCAN;

	for (i = 0; i < n; i++)
		if (has_given_group(S, H->heap[i].slab))
			return H->heap[i].slab;
	return NULL;
}

unsigned int pool__slab_get(struct pool_head *pool, void **out, unsigned int want,
                            unsigned int start)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab_shard *H, *O, *home, *borrowed = NULL;
	unsigned int n = 0, i, r;
	int looked = 0, oom = 0;

	POOL_ASSERT(want >= 1 && out);
	if (!pool__slab_on(pool))
		return pool__off_slab_get(pool, out, want);
	POOL_ASSERT(S->bytes && S->capacity >= 7);
	/* the limit counts the objects above this tier: a take reserves them first */
	r = pool__limit_reserve(pool, want);
	if (!r)
		return 0;
	H = home = pool__shard_lock(S, start);
	while (n < r) {
		struct pool_slab *slab;
		unsigned int k;

		if (H != borrowed)
			slab = H->nheap ? H->heap[0].slab : NULL;
		else
			slab = given_slab(S, H);
		if (!slab) {
			if (H == borrowed) {
				/* its given-back groups taken: a slab of our own for the rest */
				pool__unlock(&H->lock);
				H = home;
				borrowed = NULL;
				pool__lock(&H->lock);
				continue;
			}
			if (!looked++ && (O = pool__shard_with_free(S, H)) != NULL) {
				pool__unlock(&H->lock);
				H = borrowed = O;
				continue;
			}
			if (!oom && slab_new(pool, H))
				continue;
			/* out of memory (RLIMIT_AS): the fresh space of any shard, once */
			if (oom++ || !(O = pool__shard_with_room(S, H)))
				break;
			H = O;
			continue;
		}
		/* whole groups while they fit, then single objects for the last few the limit
		 * allows (a request of fewer than a group: one) */
		if (r - n < S->group)
			k = take_one(pool, H, slab, out + n);
		else
			k = take_groups(pool, H, slab, out + n, r - n, H != borrowed);
		heap_fix(S, H, slab);
		POOL_ASSERT(k);
		n += k;
		/* a group's worth short of `want` that the limit did not cause is left out */
		if (r == want && want - n < S->group && n)
			break;
	}
	pool__unlock(&H->lock);
	if (n < r)
		pool__limit_release(pool, r - n, 0);
	/* the magazine pops out[n - 1] first: the lowest address */
	for (i = 0; i < n / 2; i++) {
		void *t = out[i];

		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	if (pool__san_on())
		for (i = 0; i < n; i++)
			pool__san_access(out[i], pool->os_size);
	return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Giving objects back                                                                        */
/* ------------------------------------------------------------------------------------------ */

static __attribute__((noreturn, cold)) void bad_object(const struct pool_head *pool, void *obj,
                                                       const char *what)
{
	struct pool_report r;

	memset(&r, 0, sizeof(r));
	r.what = what;
	r.pool = pool;
	r.obj = obj;
	pool__report(&r);
}

#define NOT_OURS "an object given back to the slab tier is not an object of this pool (freed " \
                 "into the wrong pool, or not the start of an object)"

/* What a put knows as it gives objects back one by one. */
struct give_state {
	struct pool_slab_shard *held;   /* the shard whose lock it holds, or NULL */
	struct pool_slab *gone;         /* slabs now wholly free, to free once the lock is dropped */
	const struct pool_slab *known;  /* the last slab found in the map and owned by the pool */
};

/*
 * `obj` is free in its slab, under the lock of the slab's shard, which st->held (NULL: none, or
 * the lock of another shard, given up first) becomes; a slab now wholly free joins st->gone.
 * The header is read once the map says a slab starts there (a pointer of no pool's rounds down
 * to memory that may not be mapped); consecutive objects of one slab look it up once.
 */
static void give(struct pool_head *pool, void *obj, struct give_state *st)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab *slab = slab_of(S, obj);
	uintptr_t off;
	uint32_t idx, g = S->group, w, b;
	struct pool_slab_shard *H;
	uint64_t gm;

	/* `pool` and `shard` do not change while the slab holds an object given out */
	if (slab != st->known) {
		if (!pool__slab_map_has(slab) || slab->pool != pool ||
		    slab->shard >= POOL_SLAB_SHARDS)
			bad_object(pool, obj, NOT_OURS);
		st->known = slab;
	}
	off = (uintptr_t)obj - (uintptr_t)pool__slab_base(S, slab);
	idx = (uint32_t)(((uint64_t)(off & 0xffffffffu) * S->div_magic) >> 32);
	w = idx / 64;
	b = idx % 64;
	H = &S->shard[slab->shard];
	if (H != st->held) {
		if (st->held)
			pool__unlock(&st->held->lock);
		pool__lock(&H->lock);
		st->held = H;
	}
	if (off >= (uintptr_t)S->capacity * S->step ||
	    (uintptr_t)idx * S->step != off || idx >= slab->carved)
		bad_object(pool, obj, NOT_OURS);
	if (slab->free[w] & (UINT64_C(1) << b))
		bad_object(pool, obj, "double free (the slab tier holds the object free already)");
	slab->free[w] |= UINT64_C(1) << b;
	slab->nfree++;
	slab->purge = 1;
	pool__slab_count(&H->free_objs, 1);
	if (w < slab->hint)
		slab->hint = w;
	gm = ((UINT64_C(1) << g) - 1) << (b & ~(g - 1));
	if ((slab->free[w] & gm) != gm)
		return;
	slab->gfree++;
	if (slab->nfree == S->capacity)
		slab_drop(S, H, slab, &st->gone);
	else
		heap_fix(S, H, slab);
}

void pool__slab_put(struct pool_head *pool, void *const *objs, unsigned int n,
                    const void *caller)
{
	struct give_state st = { NULL, NULL, NULL };
	unsigned int i;

	if (!n)
		return;
	if (!pool__slab_on(pool)) {
		for (i = 0; i < n; i++)
			pool__off_slab_free(pool, objs[i], caller);
		return;
	}
	if (pool__san_on())
		for (i = 0; i < n; i++)
			pool__san_noaccess(objs[i], pool->os_size);
	for (i = 0; i < n; i++)
		give(pool, objs[i], &st);
	pool__unlock(&st.held->lock);
	slabs_to_os(pool, st.gone);
}

void pool__slab_put_mags(struct pool_head *pool, const struct pool_mag *top, const void *caller)
{
	struct give_state st = { NULL, NULL, NULL };
	const struct pool_mag *m;
	unsigned int i;

	if (!pool__slab_on(pool)) {
		for (m = top; m; m = m->next)
			for (i = 0; i < m->n; i++)
				pool__off_slab_free(pool, m->obj[i], caller);
		return;
	}
	if (pool__san_on())
		for (m = top; m; m = m->next)
			for (i = 0; i < m->n; i++)
				pool__san_noaccess(m->obj[i], pool->os_size);
	for (m = top; m; m = m->next)
		for (i = 0; i < m->n; i++)
			give(pool, m->obj[i], &st);
	if (st.held)
		pool__unlock(&st.held->lock);
	slabs_to_os(pool, st.gone);
}

void pool__slab_trim(struct pool_head *pool)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab *gone = NULL, *slab, *next;
	unsigned int i;

	if (!pool__slab_on(pool))
		return;
	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *H = &S->shard[i];

		pool__lock(&H->lock);
		if (POOL_ASSERTS >= 2)
			walk_locked(pool, H);
		for (slab = H->all; slab; slab = next) {
			next = slab->next;
			if (slab->nfree == S->capacity)
				slab_drop(S, H, slab, &gone);
		}
		pool__unlock(&H->lock);
	}
	slabs_to_os(pool, gone);
}

/* ------------------------------------------------------------------------------------------ */
/* Life, statistics, checks, fork()                                                           */
/* ------------------------------------------------------------------------------------------ */

void pool__slab_init(struct pool_head *pool)
{
	unsigned int i;

	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *H = &pool->slabs.shard[i];

		pool__lock_init(&H->lock);
		H->heap = NULL;
		H->nheap = H->heap_cap = 0;
		H->all = NULL;
	}
}

void pool__slab_fini(struct pool_head *pool)
{
	struct pool_slabs *S = &pool->slabs;
	struct pool_slab *gone = NULL;
	unsigned int i;

	/* pool_destroy(): no object is in use; a slab still held is wholly free, or holds what a
	 * fork() child lost */
	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		struct pool_slab_shard *H = &S->shard[i];

		pool__lock(&H->lock);
		while (H->all)
			slab_drop(S, H, H->all, &gone);
		pool__unlock(&H->lock);
		pool__os_meta_free(H->heap, H->heap_cap * sizeof(*H->heap), POOL_CACHE_LINE);
		H->heap = NULL;
		H->nheap = H->heap_cap = 0;
		pool__lock_destroy(&H->lock);
	}
	slabs_to_os(pool, gone);
}

void pool__slab_stats(const struct pool_head *pool, struct pool_stats *st)
{
	const struct pool_slabs *S = &pool->slabs;
	unsigned int i;

	if (!pool__slab_on(pool)) {
		/* every object that crosses into this tier crosses into the OS layer, one by one */
		st->os_allocs = st->slab_get_objects;
		st->os_releases = st->slab_put_objects;
		return;
	}
	st->slabs = st->slab_free = 0;
	st->slabs_released = st->os_allocs = st->os_releases = st->slab_purged_bytes = 0;
	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		const struct pool_slab_shard *H = &S->shard[i];

		st->slabs += atomic_load_explicit(&H->nslabs, memory_order_relaxed);
		st->slab_free += atomic_load_explicit(&H->free_objs, memory_order_relaxed);
		st->slabs_released += atomic_load_explicit(&H->released, memory_order_relaxed);
		st->os_allocs += atomic_load_explicit(&H->carved, memory_order_relaxed);
		st->os_releases += atomic_load_explicit(&H->released_objs, memory_order_relaxed);
		st->slab_purged_bytes += atomic_load_explicit(&H->purged, memory_order_relaxed);
	}
	st->slab_bytes = st->slabs * S->bytes;
	/* carved objects free in their slab are the pool's too (5. Counting, above) */
	st->allocated += st->slab_free;
}

/* H's lock held: each of its slabs against its bitmap, its heap against its order, the sums. */
static void walk_locked(struct pool_head *pool, struct pool_slab_shard *H)
{
	struct pool_slabs *S = &pool->slabs;
	const struct pool_slab *slab;
	unsigned long given_sum = 0, n = 0;
	uint32_t i, w;

	POOL_ASSERT(pool__lock_held(&H->lock));
	for (slab = H->all; slab; slab = slab->next, n++) {
		uint32_t given = 0, groups = 0;

		POOL_ASSERT(slab->pool == pool && (!slab->next || slab->next->prev == slab));
		POOL_ASSERT(&S->shard[slab->shard] == H);
		POOL_ASSERT(slab->carved <= S->capacity && slab->carved % S->group == 0);
		for (w = 0; w < S->words; w++) {
			uint64_t m = slab->free[w];

			/* no bit past the carved objects, none below the hint */
			POOL_ASSERT(!m || (w >= slab->hint && w < carved_words(slab)));
			if (w == slab->carved / 64 && slab->carved % 64)
				POOL_ASSERT(!(m >> (slab->carved % 64)));
			given += (uint32_t)__builtin_popcountll(m);
			groups += (uint32_t)__builtin_popcountll(groups_of(m, S->group));
		}
		POOL_ASSERT(slab->spare_lo <= slab->spare_hi && slab->spare_hi <= slab->carved);
		POOL_ASSERT(slab->spare_hi - slab->spare_lo < S->group);
		POOL_ASSERT(slab->nfree == S->capacity - slab->carved + given);
		given -= slab->spare_hi - slab->spare_lo;
		POOL_ASSERT(slab->gfree == (S->capacity - slab->carved) / S->group + groups);
		POOL_ASSERT(slab->nfree < S->capacity || !slab->carved);
		POOL_ASSERT((slab->heap_idx == SLAB_OFF_HEAP) == !slab->gfree);
		given_sum += given;
	}
	POOL_ASSERT(n == atomic_load_explicit(&H->nslabs, memory_order_relaxed));
	POOL_ASSERT(given_sum == atomic_load_explicit(&H->free_objs, memory_order_relaxed));
	for (i = 0; i < H->nheap; i++) {
		POOL_ASSERT(H->heap[i].slab->heap_idx == i);
		POOL_ASSERT(H->heap[i].key == slab_key(S, H->heap[i].slab));
		POOL_ASSERT(!i || H->heap[(i - 1) / 2].key <= H->heap[i].key);
	}
}

void pool__slab_walk(struct pool_head *pool)
{
	unsigned int i;

	if (!pool__slab_on(pool))
		return;
	for (i = 0; i < POOL_SLAB_SHARDS; i++) {
		pool__lock(&pool->slabs.shard[i].lock);
		walk_locked(pool, &pool->slabs.shard[i]);
		pool__unlock(&pool->slabs.shard[i].lock);
	}
}

/* fork(): every shard's lock, in order (the only place two are held with waits). */
void pool__slab_fork_prepare(struct pool_head *pool)
{
	unsigned int i;

	for (i = 0; i < POOL_SLAB_SHARDS; i++)
		pool__lock(&pool->slabs.shard[i].lock);
}

void pool__slab_fork_after(struct pool_head *pool)
{
	unsigned int i;

	for (i = POOL_SLAB_SHARDS; i-- > 0;)
		pool__unlock(&pool->slabs.shard[i].lock);
}
