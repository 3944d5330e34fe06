/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The bucket tier: magazines, the shared free lists and their BUSY protocol, each bucket's
 * empties and counters, moves to and from the slab tier, fork() (demand: pool-demand.c).
 *
 * A bucket's shared free list is a stack of magazines linked through their headers (`next`);
 * beside it, at most EMPTIES_MAX empty magazines, which a refill leaves there in the same
 * exchange (a consumer's slot fills with empties that a producer's lacks) and which a thread
 * without a cache, or without memory for a new magazine, takes.
 *
 * The protocol, with N buckets (a power of two, two cache lines each). A thread owns a bucket
 * from the moment its atomic exchange of POOL_BUSY into the head returns something else until
 * it stores a new head; the BUSY window holds no lock and calls nothing that can block.
 *   own:  read the head; if BUSY, go to the next bucket; else exchange BUSY in. BUSY back means
 *         another owns it: go on (BUSY over BUSY changed nothing).
 *   pop:  own; store a NULL head back; else read the top magazine's header (a second one when
 *         the budget holds it), leave the thread's surplus empties, count the move once, store
 *         the next magazine as the head (release). A pass that met only BUSY heads is made
 *         again after pauses, then yields (POP_BUSY_ROUNDS): the caller's next step grows the
 *         pool, and the BUSY owner is most often pushing the very magazines it wants.
 *   push: own; link the stack pushed above the head, take an empty magazine if the pusher
 *         wants one, count the move, store the top (release); after 2N tries, the slab tier.
 * A thread starts at its own bucket (registry id modulo N), where it finds its own magazines
 * first. Only an owner reads the `next` of a magazine in a bucket's stacks, changes its empties
 * (plain loads and stores: leaving an empty after giving the head back can put one magazine in
 * two places, tests/model/busy.pml) and writes its counters (relaxed loads and stores): while
 * the head is BUSY nobody can pop that magazine and free it (the race HAProxy met with musl, GH
 * #1275), and only an owner stores a head, so there is no ABA and no CAS. A moved magazine
 * costs one atomic (the head's exchange), and its counts land on the line that exchange took;
 * moves that own no head count in the pool's spill counters with fetch_add. A bucket keeps
 * `allocated` (objects above the slab tier) and free objects; used is their difference.
 * Every loop over the heads is bounded; no function here reads a free object, and the BUSY
 * window reads a few magazine headers (a release step: up to 1024, and part of one pointer
 * array). Totals are sums over the buckets, exact when the process is quiet. The model checks
 * the protocol for 3 threads and 2 buckets, empties included. Two waits are not counted but
 * cannot last: a first allocation waits out a merge rewriting its layout (pool.c), and the
 * limit's compare-and-swap retries only when another thread's succeeded.
 */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "os/pool-os.h"
#include "slab/pool-limit.h"
#include "slab/pool-slab.h"

#define PUSH_TRIES_PER_BUCKET 2u        /* a push tries each bucket twice before the slab tier */
#define FORK_BUSY_TRIES       10000u    /* fork_prepare() waits this many yields per head */
#define EMPTIES_MAX           16u       /* empty magazines a bucket keeps for threads to take */
/*
 * A pop that met BUSY heads and no stocked bucket goes round again, POP_BUSY_ROUNDS more times
 * with POP_BUSY_PAUSES pauses between rounds (about 4 us in all on an EPYC, 28-30 ns a pause),
 * then POP_BUSY_YIELDS more after a sched_yield() (an owner preempted inside its window outlasts
 * pauses), before its caller grows the pool from the slab tier; the bound also covers a head
 * BUSY for ever under a dead owner. On xmalloc's producer/consumer shape (2 threads, a live set
 * under 800 objects of 512 B) the 512 B pool holds 752-864 objects with these bounds, and up to
 * 34,208 when a pop passes by at once; with 8 threads on 2 CPUs the yields bring the pops that
 * give up from 277-490 to 0-1. -D for the measurements.
 */
#ifndef POP_BUSY_ROUNDS
#define POP_BUSY_ROUNDS       8u
#endif
#ifndef POP_BUSY_PAUSES
#define POP_BUSY_PAUSES       16u
#endif
#ifndef POP_BUSY_YIELDS
#define POP_BUSY_YIELDS       2u
#endif

atomic_ulong pool__moved_objects;
atomic_ulong pool__touched_words;

/* ------------------------------------------------------------------------------------------ */
/* The low-water mark                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* Owner: `n` objects left the stack (a pop or a release): the low-water mark follows. */
static void bucket_took(struct pool_bucket *b, unsigned long n)
{
	unsigned long f = pool__own_get(&b->free_objects);

	POOL_ASSERT(f >= n);
	f -= n;
	atomic_store_explicit(&b->free_objects, f, memory_order_relaxed);
	if (f < atomic_load_explicit(&b->low_cur, memory_order_relaxed))
		atomic_store_explicit(&b->low_cur, (uint32_t)f, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------------ */
/* Counters                                                                                   */
/* ------------------------------------------------------------------------------------------ */

#define SUM_FIELD(fn, field, spill)                                                 \
unsigned long fn(const struct pool_head *pool)                                    \
{                                                                                  \
	unsigned long sum = spill;                                                 \
	unsigned int i;                                                            \
	for (i = 0; i < pool->nbuckets; i++)                                       \
		sum += atomic_load_explicit(&pool->buckets[i].field,                \
		                            memory_order_relaxed);                  \
	return sum;                                                                \
}

SUM_FIELD(pool__sum_allocated, allocated,
          atomic_load_explicit(&pool->demand.spill_allocated, memory_order_relaxed))
static SUM_FIELD(sum_failed, failed, 0)
static SUM_FIELD(sum_shared_free, free_objects, 0)
static SUM_FIELD(sum_get_objects, get_objects, 0)
static SUM_FIELD(sum_get_clusters, get_clusters, 0)
static SUM_FIELD(sum_put_objects, put_objects, 0)
static SUM_FIELD(sum_put_clusters, put_clusters, 0)
static SUM_FIELD(sum_lost, lost, 0)
static SUM_FIELD(sum_slab_get_objects, slab_get_objects,
                 atomic_load_explicit(&pool->demand.spill_slab_get_objects, memory_order_relaxed))
static SUM_FIELD(sum_slab_put_objects, slab_put_objects,
                 atomic_load_explicit(&pool->demand.spill_slab_put_objects, memory_order_relaxed))

/* Objects handed out or cached: each bucket's allocated less its free objects (pool-head-t.h). */
unsigned long pool__sum_used(const struct pool_head *pool)
{
	unsigned long sum = atomic_load_explicit(&pool->demand.spill_used, memory_order_relaxed);
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++)
		sum += atomic_load_explicit(&pool->buckets[i].allocated, memory_order_relaxed) -
		       atomic_load_explicit(&pool->buckets[i].free_objects, memory_order_relaxed);
	return sum;
}

void pool__bucket_stats(const struct pool_head *pool, struct pool_stats *st)
{
	st->allocated = pool__sum_allocated(pool);
	st->used = pool__sum_used(pool);
	st->failed = sum_failed(pool);
	st->shared_free = sum_shared_free(pool);
	st->shared_get_objects = sum_get_objects(pool);
	st->shared_get_clusters = sum_get_clusters(pool);
	st->shared_put_objects = sum_put_objects(pool);
	st->shared_put_clusters = sum_put_clusters(pool);
	st->slab_get_objects = sum_slab_get_objects(pool);
	st->slab_put_objects = sum_slab_put_objects(pool);
	st->gc_released_bytes = atomic_load_explicit(&pool->demand.gc_released_bytes,
	                                             memory_order_relaxed);
	st->lost = sum_lost(pool);
}

void pool__count_failed(struct pool_head *pool, unsigned int id)
{
	atomic_fetch_add_explicit(&pool->buckets[id & (pool->nbuckets - 1)].failed, 1,
	                          memory_order_relaxed);
}

/*
 * Count a move to or from the slab tier that owns no head: `allocated` and slab_get_objects or
 * slab_put_objects change, and `used` with them. One bucket is owned for it, from the one
 * `start` names, so the counts land on a line with the usual owner rule; if every bucket stays
 * BUSY, the spill counters of the pool take it with fetch_add (this is their only writer).
 */
static void count_move(struct pool_head *pool, unsigned int start, long allocated, long used)
{
	unsigned int mask = pool->nbuckets - 1, i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *h = pool__bucket_own(b);

		if (h == POOL_BUSY)
			continue;
		/* used is allocated - free_objects: a move to or from the tier below changes both */
		POOL_ASSERT(allocated == used);
		if (allocated < 0) {
			pool__bucket_count_down(b, (unsigned long)-allocated);
		} else {
			pool__own_add(&b->allocated, (unsigned long)allocated);
			pool__own_add(&b->slab_get_objects, (unsigned long)allocated);
		}
		POOL_ASSERT(pool__bucket_books_ok(b));
		pool__bucket_give(b, h);
		return;
	}
	atomic_fetch_add_explicit(&pool->demand.spill_allocated, (unsigned long)allocated,
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->demand.spill_used, (unsigned long)used,
	                          memory_order_relaxed);
	if (allocated > 0)
		atomic_fetch_add_explicit(&pool->demand.spill_slab_get_objects,
		                          (unsigned long)allocated, memory_order_relaxed);
	else if (allocated < 0)
		atomic_fetch_add_explicit(&pool->demand.spill_slab_put_objects,
		                          (unsigned long)-allocated, memory_order_relaxed);
}

void pool__bucket_count_lost(struct pool_head *pool, unsigned long n, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1, i;

	if (!n)
		return;
	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *h = pool__bucket_own(b);

		if (h == POOL_BUSY)
			continue;
		pool__own_add(&b->allocated, -n);
		pool__own_add(&b->lost, n);
		POOL_ASSERT(pool__bucket_books_ok(b));
		pool__bucket_give(b, h);
		pool__limit_unreserve(pool, (unsigned int)n);
		return;
	}
	/* every head BUSY (a fork child whose heads were reset cannot get here): not counted */
}

/* ------------------------------------------------------------------------------------------ */
/* The slab tier below                                                                        */
/* ------------------------------------------------------------------------------------------ */

unsigned int pool__bucket_slab_get(struct pool_head *pool, void **out, unsigned int want,
                                   unsigned int start)
{
	unsigned int n;

	POOL_ASSERT(want >= 1 && out);
	/* pool_alloc()'s slow path and the bulk call opened the pool (pool.c, open_for_allocation()) */
	POOL_ASSERT(atomic_load_explicit(&pool->ever_allocated, memory_order_relaxed) == 1);
	n = pool__slab_get(pool, out, want, start);
	if (n)
		count_move(pool, start, n, n);
	pool__count_moved(n);
	return n;
}

int pool__bucket_extra_get(struct pool_head *pool, unsigned int start)
{
	if (!pool__limit_reserve(pool, 1))
		return 0;
	count_move(pool, start, 1, 1);
	pool__count_moved(1);
	return 1;
}

void pool__bucket_slab_uncount(struct pool_head *pool, unsigned int n, unsigned int start)
{
	count_move(pool, start, -(long)n, -(long)n);
	pool__limit_unreserve(pool, n);
	pool__count_moved(n);
}

void pool__bucket_slab_put(struct pool_head *pool, void *const *objs, unsigned int n,
                           unsigned int start, const void *caller)
{
	if (!n)
		return;
	pool__bucket_slab_uncount(pool, n, start);
	pool__slab_put(pool, objs, n, caller);
}

/* ------------------------------------------------------------------------------------------ */
/* Magazines                                                                                  */
/* ------------------------------------------------------------------------------------------ */

struct pool_mag *pool__mag_new(const struct pool_head *pool)
{
	struct pool_mag *m = pool__os_meta_alloc(pool->mag_bytes, POOL_CACHE_LINE);

	if (!m)
		return NULL;
	m->next = m->prev = NULL;
	m->n = 0;
	m->cap = pool->cluster;
	return m;
}

void pool__mag_free(const struct pool_head *pool, struct pool_mag *m)
{
	if (m)
		pool__os_meta_free(m, pool->mag_bytes, POOL_CACHE_LINE);
}

void pool__mag_free_stack(const struct pool_head *pool, struct pool_mag *top)
{
	struct pool_mag *next;

	for (; top; top = next) {
		next = top->next;
		pool__mag_free(pool, top);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Shared free lists (the protocol: the top of this file)                                     */
/* ------------------------------------------------------------------------------------------ */

/* Owner: leave the empty magazines of *empties in bucket `b`, up to its bound. */
static void deposit_empties(struct pool_bucket *b, struct pool_mag **empties)
{
	unsigned int ne = atomic_load_explicit(&b->nempties, memory_order_relaxed);
	struct pool_mag *m;

	POOL_ASSERT(ne <= EMPTIES_MAX);
	while ((m = *empties) && ne < EMPTIES_MAX) {
		POOL_ASSERT(m->n == 0);
		*empties = m->next;
		m->next = b->empties;
		b->empties = m;
		ne++;
	}
	atomic_store_explicit(&b->nempties, ne, memory_order_relaxed);
}

/* Owner: take up to `want` empty magazines of bucket `b` onto *empties. */
void pool__bucket_withdraw_empties(struct pool_bucket *b, unsigned int want,
                                   struct pool_mag **empties)
{
	unsigned int ne = atomic_load_explicit(&b->nempties, memory_order_relaxed);
	struct pool_mag *m;

	while (want && (m = b->empties)) {
		POOL_ASSERT(ne >= 1 && m->n == 0);
		b->empties = m->next;
		m->next = *empties;
		*empties = m;
		want--;
		ne--;
	}
	atomic_store_explicit(&b->nempties, ne, memory_order_relaxed);
}

/*
 * Own the first bucket with a stack, visiting each bucket from `start` (BUSY and empty ones are
 * passed by), once, or again after a pause or a yield while a pass met BUSY heads only:
 * returns it, its head (a stack) in *head, or NULL when none had one.
 */
static struct pool_bucket *own_stocked(struct pool_head *pool, unsigned int start,
                                       struct pool_mag **head)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i, round, busy;

	for (round = 0;; round++) {
		busy = 0;
		for (i = 0; i < pool->nbuckets; i++) {
			struct pool_bucket *b = &pool->buckets[(start + i) & mask];
			struct pool_mag *h;

			if (!atomic_load_explicit(&b->free_list, memory_order_relaxed))
				continue;
			h = pool__bucket_own(b);
			if (h == POOL_BUSY) {
				busy++;
				continue;
			}
			if (!h) {
				pool__bucket_give(b, NULL);
				continue;
			}
			*head = h;
			return b;
		}
		if (!busy || round >= POP_BUSY_ROUNDS + POP_BUSY_YIELDS)
			return NULL;
		if (round >= POP_BUSY_ROUNDS) {
			sched_yield();          /* the owner may be waiting for this CPU */
			continue;
		}
		for (i = 0; i < POP_BUSY_PAUSES; i++)
			pool__cpu_relax();
	}
}

struct pool_mag *pool__shared_pop(struct pool_head *pool, unsigned int start,
                                  unsigned int max_mags, unsigned int max_objs,
                                  struct pool_mag **empties, unsigned int *nobjs)
{
	struct pool_mag *head, *last;
	struct pool_bucket *b;
	unsigned int k, nm;

	POOL_ASSERT(max_mags >= 1 && nobjs);
	b = own_stocked(pool, start, &head);
	if (!b) {
		*nobjs = 0;
		return NULL;
	}
	/*
	 * We own the head: nobody can pop these magazines, so their headers are ours to
	 * read. Up to max_mags of them, the second and later within max_objs objects.
	 */
	k = head->n;
	last = head;
	POOL_ASSERT(head->n >= 1 && head->n <= head->cap);
	for (nm = 1; nm < max_mags && last->next && k + last->next->n <= max_objs; nm++) {
		last = last->next;
		POOL_ASSERT(last->n >= 1 && last->n <= last->cap);
		k += last->n;
	}
	pool__bucket_sync(pool, b);
	bucket_took(b, k);
	pool__own_add(&b->get_objects, k);
	pool__own_add(&b->get_clusters, nm);
	if (empties)
		deposit_empties(b, empties);
	pool__bucket_give(b, last->next);
	last->next = NULL;
	*nobjs = k;
	pool__count_moved(k);
	return head;
}

int pool__shared_push(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                      unsigned int nmags, unsigned int nobjs, unsigned int start,
                      unsigned int want_empties, struct pool_mag **empties)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	/* a shared stack holds no empty magazine: each of them holds 1..cluster objects */
	POOL_ASSERT(nmags >= 1 && top && bottom && top->n >= 1 && bottom->n >= 1);
	POOL_ASSERT(nobjs >= nmags && nobjs <= (unsigned long)nmags * pool->cluster);
	POOL_ASSERT(!want_empties || empties);
	for (i = 0; i < pool->nbuckets * PUSH_TRIES_PER_BUCKET; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head = pool__bucket_own(b);

		if (head == POOL_BUSY)
			continue;
		pool__bucket_push_owned(pool, b, head, bottom, nmags, nobjs);
		if (want_empties)
			pool__bucket_withdraw_empties(b, want_empties, empties);
		pool__bucket_give(b, top);
		pool__count_moved(nobjs);
		return 1;
	}
	return 0;
}

void pool__bucket_walk(const struct pool_head *pool, const struct pool_bucket *b,
                       const struct pool_mag *head)
{
	const struct pool_mag *m;
	unsigned long objs = 0;
	unsigned int n, i;

	POOL_ASSERT(head != POOL_BUSY);
	for (m = head; m; m = m->next) {
		POOL_ASSERT(m->cap == pool->cluster && m->n >= 1 && m->n <= m->cap);
		for (i = 0; i < m->n; i++)
			POOL_ASSERT(m->obj[i]);
		objs += m->n;
	}
	POOL_ASSERT(objs == pool__own_get(&b->free_objects));
	for (m = b->empties, n = 0; m; m = m->next, n++)
		POOL_ASSERT(m->n == 0 && n < EMPTIES_MAX);
	POOL_ASSERT(n == atomic_load_explicit(&b->nempties, memory_order_relaxed));
	POOL_ASSERT(pool__bucket_books_ok(b));
}

/* Give back every object of a stack of magazines (uncounted already) and free the magazines. */
void pool__bucket_release_mags(struct pool_head *pool, struct pool_mag *top, const void *caller)
{
	pool__slab_put_mags(pool, top, caller);
	pool__mag_free_stack(pool, top);
}

void pool__push_mags(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                     unsigned int nmags, unsigned int nobjs, unsigned int start)
{
	if (!nmags)
		return;
	if (pool__shared_push(pool, top, bottom, nmags, nobjs, start, 0, NULL))
		return;
	/* every head stayed BUSY: the objects go to the slab tier rather than wait */
	bottom->next = NULL;
	count_move(pool, start, -(long)nobjs, -(long)nobjs);
	pool__limit_unreserve(pool, nobjs);
	pool__count_moved(nobjs);
	pool__bucket_release_mags(pool, top, NULL);
}

void *pool__shared_get_one(struct pool_head *pool, unsigned int start)
{
	struct pool_mag *head;
	struct pool_bucket *b = own_stocked(pool, start, &head);
	void *obj;

	if (!b)
		return NULL;
	POOL_ASSERT(head->n > 0);
	obj = head->obj[--head->n];
	pool__bucket_sync(pool, b);
	bucket_took(b, 1);
	pool__own_add(&b->get_objects, 1);
	if (!head->n) {
		/* the magazine left the stack empty: it joins the empties, or goes */
		struct pool_mag *next = head->next, *spare = head;

		head->next = NULL;
		pool__own_add(&b->get_clusters, 1);
		deposit_empties(b, &spare);
		pool__bucket_give(b, next);
		pool__mag_free(pool, spare);
	} else {
		pool__bucket_give(b, head);
	}
	pool__count_moved(1);
	return obj;
}

void pool__shared_put_one(struct pool_head *pool, void *obj, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	POOL_ASSERT(obj);
	/* into a magazine a bucket already has, with one exchange */
	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head = pool__bucket_own(b);

		if (head == POOL_BUSY)
			continue;
		if (head && head->n < head->cap) {
			head->obj[head->n++] = obj;
		} else if (b->empties) {
			struct pool_mag *e = NULL;

			pool__bucket_withdraw_empties(b, 1, &e);
			e->obj[0] = obj;
			e->n = 1;
			e->next = head;
			head = e;
			pool__own_add(&b->put_clusters, 1);
		} else {
			pool__bucket_give(b, head);
			continue;
		}
		pool__bucket_sync(pool, b);
		pool__own_add(&b->free_objects, 1);
		pool__own_add(&b->put_objects, 1);
		pool__bucket_give(b, head);
		pool__count_moved(1);
		return;
	}
	pool__shared_put_array(pool, &obj, 1, start);
}

void pool__shared_put_array(struct pool_head *pool, void *const *objs, unsigned int n,
                            unsigned int start)
{
	while (n) {
		struct pool_mag *m = pool__mag_new(pool);
		unsigned int k;

		if (!m) {
			pool__bucket_slab_put(pool, objs, n, start, NULL);
			return;
		}
		k = n < m->cap ? n : m->cap;
		memcpy(m->obj, objs, k * sizeof(*objs));
		m->n = k;
		pool__push_mags(pool, m, m, 1, k, start);
		objs += k;
		n -= k;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* fork()                                                                                     */
/* ------------------------------------------------------------------------------------------ */

void pool__bucket_fork_prepare(struct pool_head *p)
{
	unsigned int i, tries;

	for (i = 0; i < p->nbuckets; i++) {
		struct pool_bucket *b = &p->buckets[i];
		struct pool_mag *h = POOL_BUSY;

		/* bounded: a head held BUSY this long belongs to a thread that is stuck or died
		 * inside its BUSY window (asynchronous cancellation, a longjmp out of a handler) */
		for (tries = 0; tries < FORK_BUSY_TRIES; tries++) {
			h = pool__bucket_own(b);
			if (h != POOL_BUSY)
				break;
			sched_yield();
		}
		b->fork_saved = h;
	}
}

void pool__bucket_fork_parent(struct pool_head *p)
{
	unsigned int i;

	/* the heads we could not own are their owners' to store back */
	for (i = 0; i < p->nbuckets; i++)
		if (p->buckets[i].fork_saved != POOL_BUSY)
			pool__bucket_give(&p->buckets[i], p->buckets[i].fork_saved);
}

void pool__bucket_fork_child(struct pool_head *p)
{
	unsigned int i;

	for (i = 0; i < p->nbuckets; i++) {
		struct pool_bucket *b = &p->buckets[i];

		if (b->fork_saved != POOL_BUSY) {
			pool__bucket_give(b, b->fork_saved);
			continue;
		}
		/*
		 * Its owner does not exist here: what the stack held is lost to this process, and so
		 * are the bucket's empty magazines, which that owner may have been changing. The
		 * counters say how much it held when last counted (an owner that died between
		 * taking the head and counting makes it approximate).
		 */
		pool__own_add(&b->lost, pool__own_get(&b->free_objects));
		pool__limit_unreserve(p, (unsigned int)pool__own_get(&b->free_objects));
		pool__own_add(&b->allocated, -pool__own_get(&b->free_objects));
		atomic_store_explicit(&b->free_objects, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_cur, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, 0, memory_order_relaxed);
		b->empties = NULL;
		atomic_store_explicit(&b->nempties, 0, memory_order_relaxed);
		atomic_store_explicit(&b->free_list, NULL, memory_order_release);
	}
}
