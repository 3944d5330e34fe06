/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The bucket tier: magazines, the shared free lists with their BUSY protocol, the counters of
 * each bucket, the OS layer with the accounting of every backend, limits, demand tracking
 * (needed_avg) and memory return (the release pass at the end of each demand window, pool_gc(),
 * pool_flush()).
 *
 * Concurrency: lock-free, with one rule that carries everything. A thread owns a bucket from the
 * moment its atomic exchange of POOL_BUSY into the head returns something other than POOL_BUSY
 * until it stores a new head; the BUSY window holds no lock and calls nothing that can block.
 * Only the owner reads the `next` of a magazine in the bucket's stacks, and only the owner writes
 * the bucket's counters (plain relaxed loads and stores), so a magazine moved costs one atomic
 * read-modify-write (the head's exchange) and its counters land on the line that exchange
 * already took. Moves that own no head (the OS layer when every bucket was BUSY) count in the
 * pool's spill counters with fetch_add. Release passes are serialised by the pool's pass lock,
 * taken with trylock from slow paths.
 *
 * No function here reads or writes the memory of a free object: magazines hold the pointers, so
 * a move between tiers reads magazine headers and pointer arrays (library metadata) and nothing
 * else, and giving objects back to the OS layer reads their pointers from the magazines.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "pool-assert.h"
#include "pool-bucket.h"
#include "pool-os.h"
#include "pool-uaf.h"

#define PUSH_TRIES_PER_BUCKET 2u        /* a push tries each bucket twice before the OS layer */
#define FLUSH_BUSY_TRIES      100000u   /* pool_flush()/pool_gc() wait this many yields per head */
#define FORK_BUSY_TRIES       10000u    /* fork_prepare() waits this many yields per head */
#define PASS_MAGS_MAX         64u       /* magazines one automatic pass takes from one bucket */
#define GC_MAGS_PER_TURN      1024u     /* magazines a pass detaches per ownership of a head */
#define GC_FLOOR_BYTES        65536u    /* pool_gc() keeps at most this much beyond the need */
#define EMPTIES_MAX           16u       /* empty magazines a bucket keeps for threads to take */
#define EMPTIES_KEEP          4u        /* ... and what a release pass leaves it */
/*
 * A pool's magazine holds at most 1/MAG_BUDGET_SHARE of the thread budget in objects: a thread
 * keeps a loaded and a previous magazine per pool it uses, so a pool of large objects (16 KiB
 * buffers under a 512 KiB budget: 2 objects) gets small magazines rather than filling the
 * budget with two of them.
 */
#define MAG_BUDGET_SHARE      16u
#define LOW_MAX               UINT32_MAX

atomic_ulong pool__moved_objects;
atomic_ulong pool__touched_words;

/* ------------------------------------------------------------------------------------------ */
/* Owning a bucket                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Take ownership of bucket `b`: its head (NULL or a stack), or POOL_BUSY if another owns it. */
static inline struct pool_mag *bucket_own(struct pool_bucket *b)
{
	struct pool_mag *h = atomic_load_explicit(&b->free_list, memory_order_relaxed);

	if (h == POOL_BUSY)
		return POOL_BUSY;
	return atomic_exchange_explicit(&b->free_list, POOL_BUSY, memory_order_acquire);
}

/* Give ownership back with `head` as the new head (release: what we wrote is visible first). */
static inline void bucket_give(struct pool_bucket *b, struct pool_mag *head)
{
	/* nobody else may have changed a head we own (no ABA; tests/model/busy.pml) */
	POOL_ASSERT(atomic_load_explicit(&b->free_list, memory_order_relaxed) == POOL_BUSY);
	atomic_store_explicit(&b->free_list, head, memory_order_release);
}

/* Owner-only counter update: a plain load and store, no read-modify-write. */
static inline void own_add(atomic_ulong *c, unsigned long delta)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + delta,
	                      memory_order_relaxed);
}

static inline unsigned long own_get(const atomic_ulong *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static inline uint32_t clamp32(unsigned long v)
{
	return v > LOW_MAX ? LOW_MAX : (uint32_t)v;
}

/*
 * Owner: bring the bucket's low-water marks to the pool's demand window. low_cur, the least the
 * bucket held free since its last rotation, becomes low_prev; low_cur starts again from the
 * objects free now. Any pop or push rotates first, so low_cur covers every window since the last
 * rotation: one, or more when nothing was popped in the others.
 */
static void bucket_sync(struct pool_head *pool, struct pool_bucket *b)
{
	unsigned int e = atomic_load_explicit(&pool->demand.epoch, memory_order_relaxed);

	if (e == atomic_load_explicit(&b->epoch, memory_order_relaxed))
		return;
	atomic_store_explicit(&b->low_prev, atomic_load_explicit(&b->low_cur, memory_order_relaxed),
	                      memory_order_relaxed);
	atomic_store_explicit(&b->low_cur, clamp32(own_get(&b->free_objects)),
	                      memory_order_relaxed);
	atomic_store_explicit(&b->epoch, e, memory_order_relaxed);
}

/*
 * Owner, at the start of a release pass (the window just ended): the objects of this bucket that
 * stayed in its stack through the whole window, i.e. the least it held since the window began
 * (low_cur, or low_prev when a pop or push of the new window rotated the marks already), and no
 * more than it holds now. Then the marks rotate.
 */
static unsigned long bucket_idle_rotate(struct pool_head *pool, struct pool_bucket *b)
{
	unsigned int e = atomic_load_explicit(&pool->demand.epoch, memory_order_relaxed);
	unsigned long f = own_get(&b->free_objects), idle;

	if (e != atomic_load_explicit(&b->epoch, memory_order_relaxed))
		idle = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
	else
		idle = atomic_load_explicit(&b->low_prev, memory_order_relaxed);
	bucket_sync(pool, b);
	return idle < f ? idle : f;
}

/* Owner: `n` objects left the stack (a pop or a release): the low-water mark follows. */
static void bucket_took(struct pool_bucket *b, unsigned long n)
{
	unsigned long f = own_get(&b->free_objects);

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
SUM_FIELD(pool__sum_used, used,
          atomic_load_explicit(&pool->demand.spill_used, memory_order_relaxed))
static SUM_FIELD(sum_failed, failed, 0)
static SUM_FIELD(sum_shared_free, free_objects, 0)
static SUM_FIELD(sum_get_objects, get_objects, 0)
static SUM_FIELD(sum_get_clusters, get_clusters, 0)
static SUM_FIELD(sum_put_objects, put_objects, 0)
static SUM_FIELD(sum_put_clusters, put_clusters, 0)
static SUM_FIELD(sum_lost, lost, 0)
static SUM_FIELD(sum_os_allocs, os_allocs,
                 atomic_load_explicit(&pool->demand.spill_os_allocs, memory_order_relaxed))
static SUM_FIELD(sum_os_releases, os_releases,
                 atomic_load_explicit(&pool->demand.spill_os_releases, memory_order_relaxed))

/* needed_avg: the most objects used over the demand window (at the last pass), or used now. */
static unsigned long sum_needed(const struct pool_head *pool)
{
	unsigned long need = atomic_load_explicit(&pool->demand.need, memory_order_relaxed);
	unsigned long used = pool__sum_used(pool);

	/* used wraps below 0 while a move is half counted: such a sum is no need */
	if ((long)used > 0 && used > need)
		need = used;
	return need;
}

void pool__bucket_stats(const struct pool_head *pool, struct pool_stats *st)
{
	st->allocated = pool__sum_allocated(pool);
	st->used = pool__sum_used(pool);
	st->needed_avg = sum_needed(pool);
	st->failed = sum_failed(pool);
	st->shared_free = sum_shared_free(pool);
	st->shared_get_objects = sum_get_objects(pool);
	st->shared_get_clusters = sum_get_clusters(pool);
	st->shared_put_objects = sum_put_objects(pool);
	st->shared_put_clusters = sum_put_clusters(pool);
	st->os_allocs = sum_os_allocs(pool);
	st->os_releases = sum_os_releases(pool);
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
 * Count a move that owns no head: objects obtained from / given back to the OS layer
 * (`allocated` and `os_*`), and objects starting / stopping being used. One bucket is owned for
 * it, from the one `start` names, so the counts land on a line with the usual owner rule; if
 * every bucket stays BUSY, the spill counters of the pool take it with fetch_add.
 */
static void count_move(struct pool_head *pool, unsigned int start, long allocated, long used)
{
	unsigned int mask = pool->nbuckets - 1, i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *h = bucket_own(b);

		if (h == POOL_BUSY)
			continue;
		own_add(&b->allocated, (unsigned long)allocated);
		own_add(&b->used, (unsigned long)used);
		if (allocated > 0)
			own_add(&b->os_allocs, (unsigned long)allocated);
		else if (allocated < 0)
			own_add(&b->os_releases, (unsigned long)-allocated);
		bucket_give(b, h);
		return;
	}
	atomic_fetch_add_explicit(&pool->demand.spill_allocated, (unsigned long)allocated,
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->demand.spill_used, (unsigned long)used,
	                          memory_order_relaxed);
	if (allocated > 0)
		atomic_fetch_add_explicit(&pool->demand.spill_os_allocs, (unsigned long)allocated,
		                          memory_order_relaxed);
	else if (allocated < 0)
		atomic_fetch_add_explicit(&pool->demand.spill_os_releases,
		                          (unsigned long)-allocated, memory_order_relaxed);
}

static void limit_unreserve(struct pool_head *pool, unsigned int n);

void pool__bucket_count_lost(struct pool_head *pool, unsigned long n, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1, i;

	if (!n)
		return;
	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *h = bucket_own(b);

		if (h == POOL_BUSY)
			continue;
		own_add(&b->allocated, -n);
		own_add(&b->used, -n);
		own_add(&b->lost, n);
		bucket_give(b, h);
		limit_unreserve(pool, (unsigned int)n);
		return;
	}
	/* every head BUSY (a fork child whose heads were reset cannot get here): not counted */
}

/* ------------------------------------------------------------------------------------------ */
/* Limits and the OS layer                                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * The limit (pool_set_limit()) and its count. limit_count counts the objects reserved from the
 * OS layer: a move from the OS layer reserves its objects (limit_reserve()) before it asks for
 * them, and a move back unreserves them (limit_unreserve()) once its bucket has counted them out
 * of `allocated`. So the count is `allocated` plus the objects of the moves in flight, never
 * below `allocated` and never below 0. It is kept whether or not a limit is set, and
 * pool_set_limit() only stores the cap: nothing ever rebuilds the count from `allocated`, which
 * a move in flight would make wrong (the count went to -200 when a set_limit landed between a
 * release's two steps, and the pool then took its limit plus 200 from the OS layer). The cost
 * is one atomic add on the pool head per move to or from the OS layer, where there was none
 * without a limit; moves between the tiers are not counted. The cap is an atomic: set at any
 * moment from any thread, it applies to the reservations that read it afterwards. Caps are
 * compared as unsigned numbers: any size_t is a cap, SIZE_MAX ("unlimited") included.
 */
void (*pool__limit_test_hook)(struct pool_head *pool, int reserving);

/* Take up to `n` objects of the pool's limit: how many may be allocated (0 at the limit). */
static unsigned int limit_reserve(struct pool_head *pool, unsigned int n)
{
	size_t limit = atomic_load_explicit(&pool->limit, memory_order_relaxed);
	long cur;
	unsigned int k = n;

	if (!limit) {
		atomic_fetch_add_explicit(&pool->limit_count, (long)n, memory_order_relaxed);
	} else {
		cur = atomic_load_explicit(&pool->limit_count, memory_order_relaxed);
		do {
			/* never below 0 (see above); the clamp keeps a broken count from lifting
			 * the cap */
			size_t held = cur > 0 ? (size_t)cur : 0;

			POOL_ASSERT(cur >= 0);
			if (held >= limit)
				return 0;
			k = n > limit - held ? (unsigned int)(limit - held) : n;
		} while (!atomic_compare_exchange_weak_explicit(&pool->limit_count, &cur,
		                                                cur + (long)k,
		                                                memory_order_relaxed,
		                                                memory_order_relaxed));
	}
	if (POOL_UNLIKELY(pool__limit_test_hook != NULL))
		pool__limit_test_hook(pool, 1);
	return k;
}

static void limit_unreserve(struct pool_head *pool, unsigned int n)
{
	if (POOL_UNLIKELY(pool__limit_test_hook != NULL))
		pool__limit_test_hook(pool, 0);
	if (n)
		atomic_fetch_sub_explicit(&pool->limit_count, (long)n, memory_order_relaxed);
}

void pool__bucket_set_limit(struct pool_head *pool, size_t max_objects)
{
	atomic_store_explicit(&pool->limit, max_objects, memory_order_relaxed);
}

static void *os_alloc_one(struct pool_head *pool)
{
	if (pool->layout & POOL_DBG_UAF)
		return pool__uaf_alloc(pool->ro.size, pool->align, pool);
	return pool__os_alloc(pool->os_size, pool->align);
}

unsigned int pool__os_get(struct pool_head *pool, void **out, unsigned int want,
                          unsigned int start)
{
	unsigned int k, n = 0;

	k = limit_reserve(pool, want ? want : 1);
	if (!k)
		return 0;
	/* pool_alloc()'s slow path and the bulk call opened the pool (pool.c, open_for_allocation()) */
	POOL_ASSERT(atomic_load_explicit(&pool->ever_allocated, memory_order_relaxed) == 1);
	while (n < k) {
		void *obj = os_alloc_one(pool);

		if (!obj)
			break;
		out[n++] = obj;
	}
	limit_unreserve(pool, k - n);
	if (n)
		count_move(pool, start, n, n);
	pool__count_moved(n);
	return n;
}

/* Give `obj`, a free object already uncounted, to the OS layer (the uaf quarantine). */
static void os_free_one(struct pool_head *pool, void *obj, const void *caller)
{
	if (pool->layout & POOL_DBG_UAF) {
		pool__uaf_free(obj, caller);
		return;
	}
	if (pool__san_on())
		pool__san_access(obj, pool->os_size);
	pool__os_free(obj, pool->os_size, pool->align);
}

void pool__os_put(struct pool_head *pool, void *const *objs, unsigned int n, unsigned int start,
                  const void *caller)
{
	unsigned int i;

	if (!n)
		return;
	count_move(pool, start, -(long)n, -(long)n);
	limit_unreserve(pool, n);
	pool__count_moved(n);
	for (i = 0; i < n; i++)
		os_free_one(pool, objs[i], caller);
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
/* Shared free lists (step 4 of the essay)                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Owner: leave the empty magazines of *empties in bucket `b`, up to its bound. */
static void deposit_empties(struct pool_bucket *b, struct pool_mag **empties)
{
	unsigned int ne = atomic_load_explicit(&b->nempties, memory_order_relaxed);
	struct pool_mag *m;

	while ((m = *empties) && ne < EMPTIES_MAX) {
		*empties = m->next;
		m->next = b->empties;
		b->empties = m;
		ne++;
	}
	atomic_store_explicit(&b->nempties, ne, memory_order_relaxed);
}

/* Owner: take up to `want` empty magazines of bucket `b` onto *empties. */
static void withdraw_empties(struct pool_bucket *b, unsigned int want, struct pool_mag **empties)
{
	unsigned int ne = atomic_load_explicit(&b->nempties, memory_order_relaxed);
	struct pool_mag *m;

	while (want && (m = b->empties)) {
		b->empties = m->next;
		m->next = *empties;
		*empties = m;
		want--;
		ne--;
	}
	atomic_store_explicit(&b->nempties, ne, memory_order_relaxed);
}

struct pool_mag *pool__shared_pop(struct pool_head *pool, unsigned int start,
                                  unsigned int max_mags, struct pool_mag **empties,
                                  unsigned int *nobjs)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head, *last;
		unsigned int k, nm;

		if (!atomic_load_explicit(&b->free_list, memory_order_relaxed))
			continue;
		head = bucket_own(b);
		if (head == POOL_BUSY)
			continue;
		if (!head) {
			bucket_give(b, NULL);
			continue;
		}
		/*
		 * We own the head: nobody can pop these magazines, so their headers are ours to
		 * read. Up to max_mags of them.
		 */
		k = head->n;
		last = head;
		for (nm = 1; nm < max_mags && last->next; nm++) {
			last = last->next;
			k += last->n;
		}
		bucket_sync(pool, b);
		bucket_took(b, k);
		own_add(&b->used, k);
		own_add(&b->get_objects, k);
		own_add(&b->get_clusters, nm);
		if (empties)
			deposit_empties(b, empties);
		bucket_give(b, last->next);
		last->next = NULL;
		*nobjs = k;
		pool__count_moved(k);
		return head;
	}
	*nobjs = 0;
	return NULL;
}

int pool__shared_push(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                      unsigned int nmags, unsigned int nobjs, unsigned int start,
                      unsigned int want_empties, struct pool_mag **empties)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	for (i = 0; i < pool->nbuckets * PUSH_TRIES_PER_BUCKET; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head = bucket_own(b);

		if (head == POOL_BUSY)
			continue;
		bottom->next = head;
		bucket_sync(pool, b);
		own_add(&b->free_objects, nobjs);
		own_add(&b->used, -(unsigned long)nobjs);
		own_add(&b->put_objects, nobjs);
		own_add(&b->put_clusters, nmags);
		if (want_empties)
			withdraw_empties(b, want_empties, empties);
		bucket_give(b, top);
		pool__count_moved(nobjs);
		return 1;
	}
	return 0;
}

/* Give back every object of a stack of magazines (uncounted already) and free the magazines. */
static void release_mags(struct pool_head *pool, struct pool_mag *top, const void *caller)
{
	struct pool_mag *m;
	unsigned int i;

	for (m = top; m; m = m->next)
		for (i = 0; i < m->n; i++)
			os_free_one(pool, m->obj[i], caller);
	pool__mag_free_stack(pool, top);
}

void pool__push_mags(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                     unsigned int nmags, unsigned int nobjs, unsigned int start)
{
	if (!nmags)
		return;
	if (pool__shared_push(pool, top, bottom, nmags, nobjs, start, 0, NULL))
		return;
	/* every head stayed BUSY: the objects go to the OS layer rather than wait */
	bottom->next = NULL;
	count_move(pool, start, -(long)nobjs, -(long)nobjs);
	limit_unreserve(pool, nobjs);
	pool__count_moved(nobjs);
	release_mags(pool, top, NULL);
}

void *pool__shared_get_one(struct pool_head *pool, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head;
		void *obj;

		if (!atomic_load_explicit(&b->free_list, memory_order_relaxed))
			continue;
		head = bucket_own(b);
		if (head == POOL_BUSY)
			continue;
		if (!head) {
			bucket_give(b, NULL);
			continue;
		}
		POOL_ASSERT(head->n > 0);
		obj = head->obj[--head->n];
		bucket_sync(pool, b);
		bucket_took(b, 1);
		own_add(&b->used, 1);
		own_add(&b->get_objects, 1);
		if (!head->n) {
			/* the magazine left the stack empty: it joins the empties, or goes */
			struct pool_mag *next = head->next, *spare = head;

			head->next = NULL;
			own_add(&b->get_clusters, 1);
			deposit_empties(b, &spare);
			bucket_give(b, next);
			pool__mag_free(pool, spare);
		} else {
			bucket_give(b, head);
		}
		pool__count_moved(1);
		return obj;
	}
	return NULL;
}

void pool__shared_put_one(struct pool_head *pool, void *obj, unsigned int start)
{
	unsigned int mask = pool->nbuckets - 1;
	unsigned int i;

	/* into a magazine a bucket already has, with one exchange */
	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[(start + i) & mask];
		struct pool_mag *head = bucket_own(b);

		if (head == POOL_BUSY)
			continue;
		if (head && head->n < head->cap) {
			head->obj[head->n++] = obj;
		} else if (b->empties) {
			struct pool_mag *e = b->empties;

			b->empties = e->next;
			atomic_store_explicit(&b->nempties,
			                      atomic_load_explicit(&b->nempties,
			                                           memory_order_relaxed) - 1,
			                      memory_order_relaxed);
			e->obj[0] = obj;
			e->n = 1;
			e->next = head;
			head = e;
			own_add(&b->put_clusters, 1);
		} else {
			bucket_give(b, head);
			continue;
		}
		bucket_sync(pool, b);
		own_add(&b->free_objects, 1);
		own_add(&b->used, -1ul);
		own_add(&b->put_objects, 1);
		bucket_give(b, head);
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
			pool__os_put(pool, objs, n, start, NULL);
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
/* Memory return (step 6 of the essay)                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * Owner: detach up to `want` objects, at most `max_mags` magazines, from the top of bucket `b`'s
 * stack: whole magazines, and when the last one holds more than what is left to take, the
 * pointers of its last objects are copied into split[] (at most POOL_CLUSTER_MAX) and *nsplit
 * receives their number. The detached magazines are returned as a stack linked by `next`;
 * *took gets the objects detached in all. Reads magazine headers and, for the split, part of
 * one pointer array; no object. The bucket's counters lose them (free, allocated, both marks)
 * and os_releases gains them.
 */
static struct pool_mag *bucket_detach(struct pool_bucket *b, struct pool_mag **head,
                                      unsigned long want, unsigned long max_mags,
                                      void **split, unsigned int *nsplit, unsigned long *took)
{
	struct pool_mag *h = *head, *top = NULL, *last = NULL;
	unsigned long n = 0, nm = 0;

	*nsplit = 0;
	while (h && nm < max_mags && n < want) {
		if (n + h->n > want) {
			unsigned int r = (unsigned int)(want - n);

			h->n -= r;
			memcpy(split, &h->obj[h->n], r * sizeof(*split));
			*nsplit = r;
			n += r;
			break;
		}
		n += h->n;
		nm++;
		if (last)
			last->next = h;
		else
			top = h;
		last = h;
		h = h->next;
	}
	*took = n;
	if (!n)
		return NULL;
	if (last)
		last->next = NULL;
	*head = h;
	{
		uint32_t lc = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
		uint32_t lp = atomic_load_explicit(&b->low_prev, memory_order_relaxed);

		/* they were idle through the window: the marks lose them as well */
		POOL_ASSERT(own_get(&b->free_objects) >= n);
		own_add(&b->free_objects, -n);
		atomic_store_explicit(&b->low_cur, lc > n ? lc - (uint32_t)n : 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, lp > n ? lp - (uint32_t)n : 0,
		                      memory_order_relaxed);
	}
	own_add(&b->allocated, -n);
	own_add(&b->os_releases, n);
	return top;
}

/*
 * Give back the objects of a detached stack of magazines and of split[] (uncounted by
 * bucket_detach()), and free the magazines.
 */
static void release_detached(struct pool_head *pool, struct pool_mag *top, void *const *split,
                             unsigned int nsplit, unsigned long n)
{
	unsigned int i;

	limit_unreserve(pool, (unsigned int)n);
	pool__count_moved(n);
	for (i = 0; i < nsplit; i++)
		os_free_one(pool, split[i], NULL);
	release_mags(pool, top, NULL);
	atomic_fetch_add_explicit(&pool->demand.gc_released_bytes, n * pool->stride,
	                          memory_order_relaxed);
}

/*
 * Owner: the bucket's empty magazines beyond `keep` are taken off it; returned as a stack for
 * the caller to free after the window.
 */
static struct pool_mag *trim_empties(struct pool_bucket *b, unsigned int keep)
{
	unsigned int ne = atomic_load_explicit(&b->nempties, memory_order_relaxed);
	struct pool_mag *out = NULL;

	if (ne > keep)
		withdraw_empties(b, ne - keep, &out);
	return out;
}

/*
 * Own bucket `b` for a pass: an automatic pass skips a BUSY head, pool_gc() waits a while.
 * Returns the head, or POOL_BUSY.
 */
static struct pool_mag *pass_own(struct pool_bucket *b, int gc)
{
	struct pool_mag *head = POOL_BUSY;
	unsigned int tries;

	for (tries = 0; tries < (gc ? FLUSH_BUSY_TRIES : 1); tries++) {
		head = bucket_own(b);
		if (head != POOL_BUSY)
			break;
		sched_yield();
	}
	return head;
}

/*
 * The release pass, run when a demand window ends: every bucket tells what stayed free through
 * the whole window and its marks rotate; what stayed free, beyond a floor of pool->floor objects
 * for the pool, goes back to the OS layer, and needed_avg becomes what the pool held minus it.
 * Two rounds of exchanges per bucket (count and rotate, then release), once per window; the
 * first also trims the bucket's empty magazines to EMPTIES_KEEP.
 * `gc`: a pool_gc() call waits for BUSY heads a while and releases all that it may, in turns of
 * at most GC_MAGS_PER_TURN magazines per ownership so that no BUSY window grows long; an
 * automatic pass skips BUSY buckets and takes at most PASS_MAGS_MAX magazines a bucket (the
 * rest goes at the next window). The caller holds the pass lock.
 */
static void release_pass(struct pool_head *pool, int gc)
{
	unsigned long idle_of[POOL_BUCKETS_MAX];
	unsigned long idle = 0, alloc, excess;
	void *split[POOL_CLUSTER_MAX];
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *head = pass_own(b, gc), *extra;

		idle_of[i] = 0;
		if (head == POOL_BUSY)
			continue;
		idle_of[i] = bucket_idle_rotate(pool, b);
		idle += idle_of[i];
		extra = trim_empties(b, EMPTIES_KEEP);
		bucket_give(b, head);
		pool__mag_free_stack(pool, extra);
	}
	alloc = pool__sum_allocated(pool);
	atomic_store_explicit(&pool->demand.need, alloc > idle ? alloc - idle : 0,
	                      memory_order_relaxed);
	excess = idle > pool->floor ? idle - pool->floor : 0;
	for (i = 0; excess && i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		unsigned long budget = gc ? ULONG_MAX : PASS_MAGS_MAX;

		while (excess && idle_of[i] && budget) {
			struct pool_mag *head = pass_own(b, gc), *top;
			unsigned long take, took = 0, turn;
			unsigned int nsplit;

			if (head == POOL_BUSY)
				break;
			/* what was idle, and is still there (pops since the count took from it) */
			take = idle_of[i] < excess ? idle_of[i] : excess;
			if (take > atomic_load_explicit(&b->low_cur, memory_order_relaxed))
				take = atomic_load_explicit(&b->low_cur, memory_order_relaxed);
			turn = budget < GC_MAGS_PER_TURN ? budget : GC_MAGS_PER_TURN;
			top = bucket_detach(b, &head, take, turn, split, &nsplit, &took);
			bucket_give(b, head);
			if (!took)
				break;
			release_detached(pool, top, split, nsplit, took);
			excess -= took;
			idle_of[i] -= took;
			budget -= budget == ULONG_MAX ? 0 : (took + pool->cluster - 1) / pool->cluster;
		}
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* End the current demand window: the epoch moves and every bucket's marks follow lazily. */
static void end_window(struct pool_head *pool, uint64_t now)
{
	atomic_store_explicit(&pool->demand.epoch_ns, now, memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->demand.epoch, 1, memory_order_relaxed);
}

void pool__bucket_init(struct pool_head *pool, unsigned int cluster, size_t cache_bytes,
                       unsigned int decay_ms)
{
	size_t share = cache_bytes / MAG_BUDGET_SHARE / pool->cache_cost;
	size_t floor_objs;

	pool->cluster = share < cluster ? (share ? (unsigned int)share : 1) : cluster;
	pool->mag_bytes = sizeof(struct pool_mag) + (size_t)pool->cluster * sizeof(void *);
	/* the floor is bytes: a pool of objects over 64 KiB keeps none beyond its need */
	floor_objs = GC_FLOOR_BYTES / pool->stride;
	pool->floor = floor_objs < pool->cluster ? (unsigned int)floor_objs : pool->cluster;
	pthread_mutex_init(&pool->demand.pass_lock, NULL);
	pool->demand.window_ns = (uint64_t)decay_ms * 1000000u;
	atomic_store(&pool->demand.epoch_ns, now_ns());
}

void pool__bucket_fini(struct pool_head *pool)
{
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *head = pass_own(b, 1), *extra;

		/* owned: a thread racing the destruction (forbidden) cannot be taking one */
		if (head == POOL_BUSY)
			continue;
		extra = trim_empties(b, 0);
		bucket_give(b, head);
		pool__mag_free_stack(pool, extra);
	}
	pthread_mutex_destroy(&pool->demand.pass_lock);
}

void pool__bucket_tick(struct pool_head *pool)
{
	uint64_t now = now_ns();
	uint64_t begun = atomic_load_explicit(&pool->demand.epoch_ns, memory_order_relaxed);

	if (now - begun < pool->demand.window_ns)
		return;
	if (pthread_mutex_trylock(&pool->demand.pass_lock) != 0)
		return;
	/* another thread may have ended this window while we took the lock */
	if (atomic_load_explicit(&pool->demand.epoch_ns, memory_order_relaxed) == begun) {
		end_window(pool, now);
		release_pass(pool, 0);
	}
	pthread_mutex_unlock(&pool->demand.pass_lock);
}

void pool__bucket_gc(struct pool_head *pool)
{
	pthread_mutex_lock(&pool->demand.pass_lock);
	end_window(pool, now_ns());
	release_pass(pool, 1);
	pthread_mutex_unlock(&pool->demand.pass_lock);
}

void pool__bucket_flush(struct pool_head *pool)
{
	unsigned int i;

	for (i = 0; i < pool->nbuckets; i++) {
		struct pool_bucket *b = &pool->buckets[i];
		struct pool_mag *top = pass_own(b, 1), *extra;
		unsigned long n;

		if (top == POOL_BUSY)
			continue;
		/*
		 * The whole stack, without a walk: its count is the bucket's free_objects. Count
		 * while we own it (a flush that counts after giving the head back loses updates:
		 * tests/model/busy.pml).
		 */
		n = own_get(&b->free_objects);
		atomic_store_explicit(&b->free_objects, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_cur, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, 0, memory_order_relaxed);
		own_add(&b->allocated, -n);
		own_add(&b->os_releases, n);
		extra = trim_empties(b, 0);
		bucket_give(b, NULL);
		pool__mag_free_stack(pool, extra);
		if (n)
			release_detached(pool, top, NULL, 0, n);
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
			h = bucket_own(b);
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
			bucket_give(&p->buckets[i], p->buckets[i].fork_saved);
}

void pool__bucket_fork_child(struct pool_head *p)
{
	unsigned int i;

	for (i = 0; i < p->nbuckets; i++) {
		struct pool_bucket *b = &p->buckets[i];

		if (b->fork_saved != POOL_BUSY) {
			bucket_give(b, b->fork_saved);
			continue;
		}
		/*
		 * Its owner does not exist here: what the stack held is lost to this process, and so
		 * are the bucket's empty magazines, which that owner may have been changing. The
		 * counters say how much it held when last counted (an owner that died between
		 * taking the head and counting makes it approximate).
		 */
		own_add(&b->lost, own_get(&b->free_objects));
		limit_unreserve(p, (unsigned int)own_get(&b->free_objects));
		own_add(&b->allocated, -own_get(&b->free_objects));
		atomic_store_explicit(&b->free_objects, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_cur, 0, memory_order_relaxed);
		atomic_store_explicit(&b->low_prev, 0, memory_order_relaxed);
		b->empties = NULL;
		atomic_store_explicit(&b->nempties, 0, memory_order_relaxed);
		atomic_store_explicit(&b->free_list, NULL, memory_order_release);
	}
}
