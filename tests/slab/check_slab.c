/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The slab tier (issue 27): objects carved from slabs, handed out by whole line groups of the
 * densest slab, given back to their slab, and a slab that became wholly free given back to the
 * OS layer.
 *   - exact counters after every shape: used == 0 and allocated == shared_free + cached +
 *     slab_free once the caches are flushed, allocated == os_allocs - os_releases - lost, and
 *     the slabs' own books (pool__slab_walk(), checked in the assertion builds);
 *   - a slab goes back only when every object in it is free: objects kept alive across
 *     flushes, collections and new slabs (jemalloc zeroes what it hands out again) keep their
 *     canaries;
 *   - no object handed out twice: 48 threads write their mark into every object they hold and
 *     check it, while another thread flushes the pool down to its slabs again and again;
 *   - placement: objects that two threads get fresh never share a cache line (8 and 16-byte
 *     objects), and a thread that freed another thread's objects before it first allocated
 *     does not get them back (false sharing);
 *   - shards: a thread makes its slabs in its own shard, and takes another shard's given-back
 *     groups before it makes one;
 *   - pool_zalloc() hands out zeroed objects from fresh slabs, from objects given back and from
 *     slabs made again after the first ones went back;
 *   - a pool hands out exactly its limit, whatever its line groups;
 *   - fork() while threads carve and slabs go back: the child allocates and its books balance;
 *   - which pools use slabs: uaf pools keep their own mappings, tag and caller pools use slabs;
 *   - misuse: pool_free() of a big malloc() block is reported, in every mode that reaches the
 *     slab tier.
 *
 * Internal test: it walks the slab tier (slab/pool-slab.h) and reads its geometry.
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "slab/pool-slab.h"
#include "tcache/pool-magazine.h"
#include "testutil.h"

#define LINE 64u

/*
 * A pool named `name` whose objects lie `stride` bytes apart in every build: a sanitizer's build
 * adds an 8-byte tag to each object, so the size asked for is smaller there (8 bytes less, or
 * 16 with the alignment's rounding).
 */
static struct pool_head *pool_of_stride(const char *name, size_t stride)
{
	size_t size;

	for (size = stride; size + 24 > stride; size -= 8) {
		struct pool_head *p = pool_create(name, size, 0);

		ck_assert_ptr_nonnull(p);
		if (p->os_size == stride)
			return p;
		ck_assert_int_eq(pool_destroy(p), 0);
	}
	ck_abort_msg("no pool of stride %zu", stride);
	return NULL;
}

/* The books of `p` once every thread is done and this one flushed. */
static void books(struct pool_head *p)
{
	struct pool_stats st;

	pool_thread_flush();
	st = test_stats(p);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_uint_eq(st.allocated, st.shared_free + st.cached + st.slab_free);
	ck_assert_uint_eq(st.allocated, st.os_allocs - st.os_releases - st.lost);
	ck_assert_uint_eq(st.slab_bytes, st.slabs * p->slabs.bytes);
	pool__slab_walk(p);
}

/* ------------------------------------------------------------------------------------------ */
/* Counters                                                                                   */
/* ------------------------------------------------------------------------------------------ */

struct xfer {
	struct pool_head *pool;
	void *_Atomic ring[256];
	unsigned int n;
};

static void *producer(void *arg)
{
	struct xfer *x = arg;
	unsigned int i;

	for (i = 0; i < x->n; i++) {
		void *o = pool_alloc(x->pool);

		ck_assert_ptr_nonnull(o);
		while (atomic_load(&x->ring[i % 256]))
			sched_yield();
		atomic_store(&x->ring[i % 256], o);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct xfer *x = arg;
	unsigned int i;

	for (i = 0; i < x->n; i++) {
		void *o;

		while (!(o = atomic_exchange(&x->ring[i % 256], NULL)))
			sched_yield();
		pool_free(x->pool, o);
	}
	return NULL;
}

/*
 * Shapes: one thread, LIFO and FIFO, in bulk, a producer and a consumer, everything given back
 * (pool_flush()), collected (pool_gc()), and with no-global and no-cache: after each, the books
 * balance.
 */
START_TEST(test_counters_after_every_shape)
{
	static const size_t sizes[] = { 8, 24, 64, 96, 1000, 16384 };
	unsigned int c, i;

	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		struct pool_head *p = pool_create("shapes", sizes[c], 0);
		static void *o[3000];
		struct xfer x = { .pool = p, .n = 20000 };
		pthread_t t[2];

		ck_assert_ptr_nonnull(p);
		ck_assert(pool__slab_on(p));
		for (i = 0; i < 3000; i++)
			ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
		ck_assert_uint_eq(test_handed_out(p), 3000);
		for (i = 0; i < 3000; i++)
			pool_free(p, o[i]);            /* FIFO */
		books(p);
		ck_assert_uint_eq(pool_alloc_bulk(p, o, 3000), 3000);
		pool_free_bulk(p, o, 3000);
		books(p);
		ck_assert_int_eq(pthread_create(&t[0], NULL, producer, &x), 0);
		ck_assert_int_eq(pthread_create(&t[1], NULL, consumer, &x), 0);
		ck_assert_int_eq(pthread_join(t[0], NULL), 0);
		ck_assert_int_eq(pthread_join(t[1], NULL), 0);
		books(p);
		pool_gc(p);
		books(p);
		pool_gc(p);
		books(p);
		ck_assert_int_eq(pool_parse_debugging("no-global", NULL), 0);
		for (i = 0; i < 3000; i++)
			o[i] = pool_alloc(p);
		for (i = 3000; i-- > 0;)
			pool_free(p, o[i]);      /* LIFO */
		books(p);
		ck_assert_uint_gt(test_stats(p).slab_free + test_stats(p).slabs_released, 0);
		ck_assert_int_eq(pool_parse_debugging("global,no-cache", NULL), 0);
		for (i = 0; i < 300; i++)
			o[i] = pool_alloc(p);
		ck_assert_uint_eq(test_stats(p).used, 300);
		for (i = 0; i < 300; i++)
			pool_free(p, o[i]);
		books(p);
		ck_assert_int_eq(pool_parse_debugging("cache", NULL), 0);
		pool_flush(p);
		books(p);
		/* everything back in its slabs: the slabs went back whole */
		ck_assert_uint_eq(test_stats(p).allocated, 0);
		ck_assert_uint_eq(test_stats(p).slabs, 0);
		ck_assert_uint_eq(test_stats(p).slab_bytes, 0);
		ck_assert_uint_gt(test_stats(p).slabs_released, 0);
		ck_assert_int_eq(pool_destroy(p), 0);
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Slabs go back whole, and only whole                                                        */
/* ------------------------------------------------------------------------------------------ */

static uint64_t canary(const void *o)
{
	return (uint64_t)(uintptr_t)o * 0x9e3779b97f4a7c15ull ^ 0xc0ffee;
}

/*
 * One live object per slab keeps its slab, whatever else goes: after flushes and collections
 * and after new slabs were made (jemalloc zeroes the memory it hands out again, so a slab
 * given back early would have zeroed a live canary), every live object keeps its canary, and
 * the slab count falls to the slabs that hold one. Once they are freed too, nothing is left.
 */
START_TEST(test_slab_goes_back_only_whole)
{
	struct pool_head *p = pool_create("whole", 64, 0);
	static void *o[4096], *keep[64];
	size_t cap, nkeep = 0, i, k;
	struct pool_stats st;

	ck_assert_ptr_nonnull(p);
	cap = p->slabs.capacity;
	ck_assert_uint_ge(cap, 8);
	for (i = 0; i < 4096; i++) {
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
		*(uint64_t *)o[i] = canary(o[i]);
	}
	/* keep the object at the middle of each slab's run of addresses, free the rest */
	for (i = 0; i < 4096; i++) {
		uintptr_t slab = (uintptr_t)o[i] & ~(uintptr_t)(p->slabs.bytes - 1);
		int kept = 0;

		for (k = 0; k < nkeep; k++)
			kept |= ((uintptr_t)keep[k] & ~(uintptr_t)(p->slabs.bytes - 1)) == slab;
		if (!kept && (uintptr_t)o[i] - slab > p->slabs.bytes / 2 && nkeep < 64)
			keep[nkeep++] = o[i];
		else
			pool_free(p, o[i]);
	}
	ck_assert_uint_gt(nkeep, 4);
	pool_thread_flush();
	pool_flush(p);
	pool_gc(p);
	pool_gc(p);
	st = test_stats(p);
	ck_assert_uint_eq(st.used, nkeep);
	/* the kept objects' slabs, and none more */
	ck_assert_uint_eq(st.slabs, nkeep);
	ck_assert_uint_eq(st.slab_free, nkeep * cap - nkeep);
	/* new slabs, from the memory the others gave back */
	for (i = 0; i < 4096; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	for (k = 0; k < nkeep; k++)
		ck_assert_msg(*(uint64_t *)keep[k] == canary(keep[k]), "a live object's canary "
		              "changed: its slab went back");
	for (i = 0; i < 4096; i++)
		pool_free(p, o[i]);
	for (k = 0; k < nkeep; k++)
		pool_free(p, keep[k]);
	books(p);
	pool_flush(p);
	st = test_stats(p);
	ck_assert_uint_eq(st.slabs, 0);
	ck_assert_uint_eq(st.allocated, 0);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* No object handed out twice                                                                 */
/* ------------------------------------------------------------------------------------------ */

#define DUP_THREADS 48
#define DUP_LIVE    200
#define DUP_ROUNDS  300

static struct pool_head *dup_pool;
static atomic_int dup_stop;
static atomic_uint dup_bad;

static void *dup_worker(void *arg)
{
	uint64_t mark = (uint64_t)(uintptr_t)arg << 32;
	void *o[DUP_LIVE];
	unsigned int r, i;

	for (r = 0; r < DUP_ROUNDS; r++) {
		unsigned int n = (r * 37 + (unsigned int)(uintptr_t)arg * 11) % DUP_LIVE + 1;

		for (i = 0; i < n; i++) {
			uint64_t *w = pool_alloc(dup_pool);

			if (!w) {
				atomic_fetch_add(&dup_bad, 1);
				n = i;
				break;
			}
			w[0] = mark | i;
			w[1] = ~(mark | i);
			o[i] = w;
		}
		sched_yield();
		for (i = 0; i < n; i++) {
			uint64_t *w = o[i];

			if (w[0] != (mark | i) || w[1] != ~(mark | i))
				atomic_fetch_add(&dup_bad, 1);
			/* half of them freed in bulk, the rest one by one */
			if (r & 1)
				pool_free(dup_pool, w);
		}
		if (!(r & 1))
			pool_free_bulk(dup_pool, o, n);
		if (r % 50 == 49)
			pool_thread_flush();
	}
	return NULL;
}

static void *dup_flusher(void *arg)
{
	(void)arg;
	while (!atomic_load(&dup_stop)) {
		pool_flush(dup_pool);
		pool_gc(dup_pool);
		usleep(200);
	}
	return NULL;
}

START_TEST(test_no_object_handed_out_twice)
{
	pthread_t t[DUP_THREADS], f;
	unsigned int i, rounds = TEST_TSAN ? 1 : 3, k;

	for (k = 0; k < rounds; k++) {
		dup_pool = pool_create("dup", 16, 0);
		ck_assert_ptr_nonnull(dup_pool);
		atomic_store(&dup_stop, 0);
		ck_assert_int_eq(pthread_create(&f, NULL, dup_flusher, NULL), 0);
		for (i = 0; i < DUP_THREADS; i++)
			ck_assert_int_eq(pthread_create(&t[i], NULL, dup_worker,
			                                (void *)(uintptr_t)(i + 1)), 0);
		for (i = 0; i < DUP_THREADS; i++)
			ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		atomic_store(&dup_stop, 1);
		ck_assert_int_eq(pthread_join(f, NULL), 0);
		ck_assert_uint_eq(atomic_load(&dup_bad), 0);
		books(dup_pool);
		/* the flusher may or may not have found a slab wholly free: the last flush does */
		pool_flush(dup_pool);
		ck_assert_uint_eq(test_stats(dup_pool).slabs, 0);
		ck_assert_uint_gt(test_stats(dup_pool).slabs_released, 0);
		ck_assert_int_eq(pool_destroy(dup_pool), 0);
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Placement                                                                                  */
/* ------------------------------------------------------------------------------------------ */

#define PLACE_OBJS 64

struct place {
	struct pool_head *pool;
	void *mine[PLACE_OBJS];
	void *const *theirs;        /* objects of the other thread this one frees first, or NULL */
	pthread_barrier_t *bar;
};

static void *place_worker(void *arg)
{
	struct place *pl = arg;
	unsigned int i;

	if (pl->theirs)
		for (i = 1; i < 2 * PLACE_OBJS; i += 2)
			pool_free(pl->pool, pl->theirs[i]);
	for (i = 0; i < PLACE_OBJS; i++)
		ck_assert_ptr_nonnull(pl->mine[i] = pool_alloc(pl->pool));
	if (pl->bar)
		pthread_barrier_wait(pl->bar);
	return NULL;
}

/*
 * Objects of a[] on a line that holds an object of b[] (near 0), or within `near` lines of one.
 * The layout keeps two threads' fresh objects lines apart (the prefetchers fetch the lines
 * beside the ones a core writes: a neighbouring line costs a few percent), so NEAR_LINES.
 */
#define NEAR_LINES 2u
static unsigned int shared_lines(void *const *a, unsigned int na, void *const *b, unsigned int nb,
                                 size_t size, unsigned int near)
{
	unsigned int i, j, shared = 0;

	for (i = 0; i < na; i++) {
		uintptr_t a0 = (uintptr_t)a[i] / LINE, a1 = ((uintptr_t)a[i] + size - 1) / LINE;

		for (j = 0; j < nb; j++) {
			uintptr_t b0 = (uintptr_t)b[j] / LINE, b1 = ((uintptr_t)b[j] + size - 1) / LINE;

			if (a0 <= b1 + near && b0 <= a1 + near) {
				shared++;
				break;
			}
		}
	}
	return shared;
}

/*
 * This thread makes a run of 2 x PLACE_OBJS objects of `pool`; another frees its odd ones, then
 * allocates PLACE_OBJS: none on a line of the run's even ones, nor within `near` lines of one.
 */
static void odd_freed_elsewhere(struct pool_head *pool, size_t size, unsigned int near)
{
	struct place b = { .pool = pool };
	void *run[2 * PLACE_OBJS], *even[PLACE_OBJS];
	pthread_t tb;
	unsigned int i;

	for (i = 0; i < 2 * PLACE_OBJS; i++)
		ck_assert_ptr_nonnull(run[i] = pool_alloc(pool));
	b.theirs = run;
	ck_assert_int_eq(pthread_create(&tb, NULL, place_worker, &b), 0);
	ck_assert_int_eq(pthread_join(tb, NULL), 0);
	for (i = 0; i < PLACE_OBJS; i++)
		even[i] = run[2 * i];
	ck_assert_msg(shared_lines(b.mine, PLACE_OBJS, even, PLACE_OBJS, size, near) == 0,
	              "%zu-byte objects: a line shared with the thread that made them, or within "
	              "%u lines of one", size, near);
	for (i = 0; i < PLACE_OBJS; i++) {
		pool_free(pool, run[2 * i]);
		pool_free(pool, b.mine[i]);
	}
}

/*
 * Two threads that allocate at the same time get objects on lines of their own (8, 16 and
 * 48-byte objects: 4, 4 and 4 to a line group); and a thread that first frees the odd objects
 * of another thread's run (the false-sharing row of pool-bench, the cache-scratch shape), then
 * allocates, gets none of them back, nor any on their lines; in a new pool whose objects go
 * in line groups of more than one, none within NEAR_LINES of them either: its shard has no
 * slab, and the other shard's fresh space, right after the run, is not for it. (Objects a line
 * apart, a group each, are given back whole groups and taken again, their neighbours the run's:
 * 64-byte objects, and 48 with ASan's redzones; in a pool whose objects went round, a shard's
 * fresh space may lie after objects its earlier threads carved and passed on.)
 */
START_TEST(test_placement)
{
	static const size_t sizes[] = { 8, 16, 48, 64 };
	unsigned int c, i;

	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		struct place a = { 0 }, b = { 0 };
		pthread_barrier_t bar;
		pthread_t ta, tb;

		a.pool = b.pool = pool_create("place", sizes[c], 0);
		ck_assert_ptr_nonnull(a.pool);
		pthread_barrier_init(&bar, NULL, 2);
		a.bar = b.bar = &bar;
		ck_assert_int_eq(pthread_create(&ta, NULL, place_worker, &a), 0);
		ck_assert_int_eq(pthread_create(&tb, NULL, place_worker, &b), 0);
		ck_assert_int_eq(pthread_join(ta, NULL), 0);
		ck_assert_int_eq(pthread_join(tb, NULL), 0);
		ck_assert_uint_eq(shared_lines(a.mine, PLACE_OBJS, b.mine, PLACE_OBJS, sizes[c],
		                               NEAR_LINES), 0);
		for (i = 0; i < PLACE_OBJS; i++) {
			pool_free(a.pool, a.mine[i]);
			pool_free(a.pool, b.mine[i]);
		}
		pthread_barrier_destroy(&bar);

		/* this thread makes a run; another frees its odd objects, then allocates: in a pool
		 * whose objects went round, and in a new one (the other thread's shard has no slab) */
		odd_freed_elsewhere(a.pool, sizes[c], 0);
		books(a.pool);
		ck_assert_int_eq(pool_destroy(a.pool), 0);
		a.pool = pool_create("place-new", sizes[c], 0);
		ck_assert_ptr_nonnull(a.pool);
		odd_freed_elsewhere(a.pool, sizes[c], a.pool->slabs.group > 1 ? NEAR_LINES : 0);
		books(a.pool);
		ck_assert_int_eq(pool_destroy(a.pool), 0);
	}
}
END_TEST

struct free_only {
	struct pool_head *pool;
	void **objs;
	size_t n;
	pthread_barrier_t bar;
};

static void *free_only_worker(void *arg)
{
	struct free_only *fo = arg;
	void *o;
	size_t i;

	for (i = 0; i < fo->n; i++)
		pool_free(fo->pool, fo->objs[i]);
	pthread_barrier_wait(&fo->bar);     /* the main thread counts what this one caches */
	pthread_barrier_wait(&fo->bar);
	o = pool_alloc(fo->pool);
	ck_assert_ptr_nonnull(o);
	pool_free(fo->pool, o);
	return NULL;
}

/*
 * A thread that only frees a pool's objects (a consumer, a reaper) keeps a few magazines of
 * them (the loaded, the previous and POOL_FREE_ONLY_FULL full ones), not its whole budget: the
 * rest goes to the shared lists for the threads that allocate.
 * Its first allocation then works as before, and the books balance.
 */
START_TEST(test_free_only_thread)
{
	struct free_only fo;
	struct pool_stats st;
	pthread_t t;
	size_t mag, i;

	fo.pool = pool_of_stride("free-only", 64);
	mag = test_magazine(fo.pool);
	fo.n = 4 * (2 + POOL_FREE_ONLY_FULL) * mag;
	fo.objs = calloc(fo.n, sizeof(*fo.objs));
	ck_assert_ptr_nonnull(fo.objs);
	for (i = 0; i < fo.n; i++)
		ck_assert_ptr_nonnull(fo.objs[i] = pool_alloc(fo.pool));
	pool_thread_flush();                 /* what this thread's refills left over */
	pthread_barrier_init(&fo.bar, NULL, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, free_only_worker, &fo), 0);
	pthread_barrier_wait(&fo.bar);
	st = test_stats(fo.pool);
	ck_assert_uint_eq(st.used, st.cached);
	ck_assert_uint_le(st.cached, (2 + POOL_FREE_ONLY_FULL) * mag);
	ck_assert_uint_ge(st.cached, mag);
	ck_assert_uint_ge(st.shared_free + st.slab_free, fo.n - (2 + POOL_FREE_ONLY_FULL) * mag);
	pthread_barrier_wait(&fo.bar);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	pthread_barrier_destroy(&fo.bar);
	free(fo.objs);
	books(fo.pool);
	ck_assert_int_eq(pool_destroy(fo.pool), 0);
}
END_TEST

/* Objects come out in address order, densest slab first: a refill's run is ascending. */
START_TEST(test_dense_in_address_order)
{
	struct pool_head *p = pool_of_stride("order", 64);
	void *o[64];
	unsigned int i;

	for (i = 0; i < 64; i++)
		o[i] = pool_alloc(p);
	for (i = 1; i < test_slab_refill(p); i++)
		ck_assert_ptr_eq((char *)o[i], (char *)o[i - 1] + 64);
	/* two thirds given back to the slab: the next refills take them, lowest first */
	for (i = 0; i < 64; i++)
		if (i % 3)
			pool_free(p, o[i]);
	pool_thread_flush();
	pool_flush(p);
	ck_assert_uint_gt(test_stats(p).slab_free, 0);
	{
		void *again = pool_alloc(p);

		ck_assert_ptr_eq(again, o[1]);
		pool_free(p, again);
	}
	for (i = 0; i < 64; i += 3)
		pool_free(p, o[i]);
	books(p);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * The step: objects a multiple of 2 KiB long lie a line further apart, in the slack their slab
 * had anyway (no object lost), so that the first lines of a slab's objects fall on as many L1
 * sets (64 lines of 64 bytes) as there are objects, up to 64; at the bare stride 4 KiB objects
 * all fall on one. Other sizes, and pools aligned past a line, keep their stride.
 */
START_TEST(test_step)
{
	static const size_t strides[] = { 2048, 4096, 6144, 8192, 16384, 1024, 3072, 192 };
	unsigned int k, i;

	for (k = 0; k < sizeof(strides) / sizeof(strides[0]); k++) {
		char name[32];
		struct pool_head *p;
		const struct pool_slabs *S;
		int padded = strides[k] % 2048 == 0;
		void *o[64];
		uintptr_t slab0 = 0;
		uint64_t sets = 0;
		unsigned int n, in_slab0 = 0, distinct = 0;

		snprintf(name, sizeof(name), "step-%zu", strides[k]);
		p = pool_of_stride(name, strides[k]);
		S = &p->slabs;
		ck_assert_uint_eq(S->step, strides[k] + (padded ? LINE : 0));
		if (padded)
			ck_assert_uint_eq(S->capacity, (S->bytes - S->first) / strides[k]);
		n = S->capacity < 64 ? S->capacity : 64;
		for (i = 0; i < n; i++) {
			uintptr_t a;

			o[i] = pool_alloc(p);
			ck_assert_ptr_nonnull(o[i]);
			a = (uintptr_t)o[i];
			if (!i)
				slab0 = a & ~(uintptr_t)(S->bytes - 1);
			if ((a & ~(uintptr_t)(S->bytes - 1)) != slab0)
				continue;
			in_slab0++;
			sets |= UINT64_C(1) << ((a / LINE) % 64);
		}
		for (i = 0; i < 64; i++)
			distinct += (unsigned int)((sets >> i) & 1);
		/* a fresh pool's first objects come from its first slab */
		ck_assert_uint_ge(in_slab0, n / 2);
		if (padded)
			ck_assert_uint_eq(distinct, in_slab0);
		for (i = 0; i < n; i++)
			pool_free(p, o[i]);
		books(p);
		ck_assert_int_eq(pool_destroy(p), 0);
	}
	/* aligned past a line: the step would break the alignment */
	{
		struct pool_head *p = pool_create_aligned("step-aligned", 4096, 4096, 0);

		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(p->slabs.step, p->os_size);
		ck_assert_int_eq(pool_destroy(p), 0);
	}
}
END_TEST

/*
 * Slab coloring: the objects of a slab start color * color_unit bytes past the header, the
 * color fixed per slab and below `colors`, which the slab's slack bounds; slabs of 16 KiB
 * objects (31 to a slab, 14 KiB to spare) spread their first objects over many cache sets,
 * where without colors every object of the pool would start on the same one. Slabs of 64-byte
 * objects have no slack for a second color.
 */
START_TEST(test_colors)
{
	struct pool_head *big = pool_of_stride("colors-16k", 16384);
	struct pool_head *small = pool_of_stride("colors-64", 64);
	const struct pool_slabs *S = &big->slabs;
	enum { N = 160 };
	void *o[N];
	uint64_t sets = 0;
	unsigned int i, distinct = 0;

	ck_assert_uint_eq(S->color_unit, LINE);
	ck_assert_uint_gt(S->colors, 1);
	ck_assert_uint_le(S->first + (size_t)(S->colors - 1) * S->color_unit +
	                  (size_t)S->capacity * S->step, S->bytes);
	ck_assert_uint_eq(small->slabs.colors,
	                  (small->slabs.bytes - small->slabs.first -
	                   (size_t)small->slabs.capacity * small->slabs.step) / LINE + 1);
	ck_assert_uint_eq(small->slabs.colors, 1);
	for (i = 0; i < N; i++) {
		uintptr_t a, slab;
		const struct pool_slab *h;
		size_t off;

		o[i] = pool_alloc(big);
		ck_assert_ptr_nonnull(o[i]);
		a = (uintptr_t)o[i];
		slab = a & ~(uintptr_t)(S->bytes - 1);
		h = (const struct pool_slab *)slab;
		ck_assert_ptr_eq(h->pool, big);
		ck_assert_uint_lt(h->color, S->colors);
		off = a - slab - S->first - (size_t)h->color * S->color_unit;
		ck_assert_uint_eq(off % S->step, 0);
		ck_assert_uint_lt(off / S->step, S->capacity);
		ck_assert_uint_le(a + big->os_size, slab + S->bytes);
		/* the L1 set (64 sets of 64-byte lines) of the slab's first object */
		sets |= UINT64_C(1) << (((slab + S->first + (size_t)h->color * S->color_unit) /
		                         LINE) % 64);
	}
	for (i = 0; i < 64; i++)
		distinct += (unsigned int)((sets >> i) & 1);
	/* N objects fill at least N / capacity slabs, consecutive colors where addresses are */
	ck_assert_uint_ge(distinct, 4);
	for (i = 0; i < N; i++)
		pool_free(big, o[i]);
	books(big);
	books(small);
	ck_assert_int_eq(pool_destroy(big), 0);
	ck_assert_int_eq(pool_destroy(small), 0);
}
END_TEST

/* The shard of the slab that holds `obj`. */
static unsigned int shard_of(const struct pool_head *p, const void *obj)
{
	const struct pool_slab *slab =
		(const struct pool_slab *)((uintptr_t)obj & ~(uintptr_t)(p->slabs.bytes - 1));

	ck_assert_ptr_eq(slab->pool, p);
	ck_assert_uint_lt(slab->shard, POOL_SLAB_SHARDS);
	return slab->shard;
}

struct one_alloc {
	struct pool_head *pool;
	void *obj;
};

/* A thread that allocates one object and exits (its cache goes to the shared lists). */
static void *alloc_one(void *arg)
{
	struct one_alloc *a = arg;

	a->obj = pool_alloc(a->pool);
	return NULL;
}

/* One object of `p` allocated by another thread, which has exited. */
static void *other_thread_alloc(struct pool_head *p)
{
	struct one_alloc a = { p, NULL };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, alloc_one, &a), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_ptr_nonnull(a.obj);
	return a.obj;
}

/*
 * Shards: a thread with a shard of its own (this thread's id is 0, the next one's 1) makes its
 * slab there while the other shard has only fresh space, and takes the other shard's
 * given-back groups before it makes a slab.
 */
START_TEST(test_shards)
{
	struct pool_head *p = pool_of_stride("shards", 64);
	unsigned int i, home;
	void *o[64], *theirs;

	for (i = 0; i < 64; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	home = shard_of(p, o[0]);
	ck_assert_uint_eq(test_stats(p).slabs, 1);

	/* the other shard has no slab, and this one nothing given back: a slab of its own */
	theirs = other_thread_alloc(p);
	ck_assert_uint_ne(shard_of(p, theirs), home);
	ck_assert_uint_eq(test_stats(p).slabs, 2);
	pool_free(p, theirs);
	pool_thread_flush();
	pool_flush(p);                   /* its slab is wholly free again: it goes back */
	ck_assert_uint_eq(test_stats(p).slabs, 1);

	/* objects of this shard given back: the next thread takes them, no new slab */
	for (i = 1; i < 64; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	pool_flush(p);
	ck_assert_uint_gt(test_stats(p).slab_free, 0);
	theirs = other_thread_alloc(p);
	ck_assert_uint_eq(shard_of(p, theirs), home);
	ck_assert_uint_eq(test_stats(p).slabs, 1);
	pool_free(p, theirs);
	pool_free(p, o[0]);
	books(p);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* pool_zalloc(), the limit                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void check_zeroed(const unsigned char *o, size_t size)
{
	size_t i = 0;

	while (i < size && !o[i])
		i++;
	ck_assert_msg(i == size, "byte %zu of %zu is 0x%02x", i, size, i < size ? o[i] : 0);
}

/*
 * The pages of free objects go back to the kernel while their slab keeps live objects
 * (pool__slab_purge(), here at pool_flush()): of 1 KiB objects every 9th kept (runs of 8 free
 * objects, a whole page at least), of 8 KiB every other one. Every page covered wholly by free
 * objects leaves the resident set, every page under a live object stays and the object keeps
 * its bytes; the pool then hands out the free objects again, zeroed by pool_zalloc(), and its
 * books balance.
 */
START_TEST(test_purge_pages_of_free_objects)
{
	static const size_t strides[] = { 1024, 8192 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned int k;

	for (k = 0; k < 2; k++) {
		struct pool_head *p = pool_of_stride("purge", strides[k]);
		size_t size = test_stats(p).size, j;
		unsigned int n = 3 * p->slabs.capacity, keep = (unsigned int)(2 * page / strides[k]) + 1;
		unsigned int i, pages[3], before[3];
		uint64_t purged;
		void **o = calloc(n, sizeof(*o));
		unsigned char *live = calloc(n, 1);

		ck_assert(o && live && pool__slab_on(p));
		for (i = 0; i < n; i++) {
			o[i] = pool_alloc(p);
			ck_assert_ptr_nonnull(o[i]);
			memset(o[i], 0xa5, size);
		}
		ck_assert_int_eq(test_pages(o, live, n, strides[k], size, pages), 0);
		ck_assert_uint_eq(pages[1], 0);
		for (i = 0; i < n; i++) {
			live[i] = i % keep == 0;
			if (!live[i])
				pool_free(p, o[i]);
		}
		pool_thread_flush();
		pool_flush(p);
		ck_assert_int_eq(test_pages(o, live, n, strides[k], size, pages), 0);
		ck_assert_msg(pages[0] == 0 && pages[1] > 0 && pages[2] == 0,
		              "stride %zu: pages of free objects %u resident, %u given back; %u pages "
		              "of live objects gone", strides[k], pages[0], pages[1], pages[2]);
		/* the statistics count the resident bytes given, once */
		purged = test_stats(p).slab_purged_bytes;
		ck_assert_uint_eq(purged, (uint64_t)pages[1] * page);
		pool_flush(p);
		ck_assert_uint_eq(test_stats(p).slab_purged_bytes, purged);
		for (i = 0; i < n; i++)
			for (j = 0; live[i] && j < size; j++)
				ck_assert_uint_eq(((unsigned char *)o[i])[j], 0xa5);
		/*
		 * One more object free: its slab is purged again, and only its pages count, at most
		 * its stride and a page (its neighbours were free and given already), but for pages
		 * of free objects that something else in the process touched since, which count
		 * again, as they should (seen once, in a whole make check under TSan; 0 of 32 runs
		 * alone): those are measured before.
		 */
		ck_assert_int_eq(test_pages(o, live, n, strides[k], size, before), 0);
		pool_free(p, o[keep]);
		live[keep] = 0;
		pool_thread_flush();
		pool_flush(p);
		purged = test_stats(p).slab_purged_bytes - purged;
		ck_assert_int_eq(test_pages(o, live, n, strides[k], size, pages), 0);
		ck_assert_msg(purged > 0 && purged % page == 0 &&
		              purged <= strides[k] + page + (uint64_t)before[0] * page &&
		              pages[0] == 0 && pages[2] == 0,
		              "stride %zu: %" PRIu64 " bytes more given for one object (%u pages of "
		              "other free objects were resident again); after, %u pages of free "
		              "objects resident, %u of live objects gone", strides[k], purged,
		              before[0], pages[0], pages[2]);
		for (i = 0; i < n; i++)
			if (!live[i]) {
				o[i] = pool_zalloc(p);
				ck_assert_ptr_nonnull(o[i]);
				check_zeroed(o[i], size);
			}
		for (i = 0; i < n; i++)
			pool_free(p, o[i]);
		books(p);
		ck_assert_int_eq(pool_destroy(p), 0);
		free(o);
		free(live);
	}
}
END_TEST

/*
 * pool_zalloc(): from fresh slabs, from objects given back to their slab and handed out again
 * (written first), and from slabs made again once the first ones went back.
 */
START_TEST(test_zalloc_fresh_and_reused)
{
	static const size_t sizes[] = { 16, 200, 4096, 16384 };
	unsigned int c, i, round;

	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		struct pool_head *p = pool_create("zero", sizes[c], 0);
		static void *o[400];

		for (round = 0; round < 3; round++) {
			for (i = 0; i < 400; i++) {
				ck_assert_ptr_nonnull(o[i] = pool_zalloc(p));
				check_zeroed(o[i], sizes[c]);
				memset(o[i], 0xa5, sizes[c]);
			}
			for (i = 0; i < 400; i++)
				pool_free(p, o[i]);
			pool_thread_flush();
			if (round == 0)
				pool_flush(p);             /* down to their slabs, which go back */
			else if (round == 1)
				pool_gc(p);                /* kept in the shared lists a window */
		}
		books(p);
		ck_assert_int_eq(pool_destroy(p), 0);
	}
}
END_TEST

/* Minor page faults of the calling thread so far. */
static long thread_minflt(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_minflt;
}

/*
 * pool_zalloc() writes every object it hands out, even one carved fresh from a slab jemalloc
 * zeroed: a program that reads such an object first and then writes it takes no page fault.
 * Were the memset skipped, the read would map the kernel's zero page and the write copy it (a
 * fault and a TLB flush of every CPU the process ran on: 5 times the TLB shootdowns on the
 * server rows, doc/benchmarks.md's zero-page diagnosis). Most of the objects' last bytes lie on
 * pages the slab header does not share (all but the first page of a slab). Two faults are
 * allowed for the kernel's own (NUMA balancing unmaps pages to sample where they are used); a
 * skipped memset takes 34. Not under ASan or TSan,
 * whose shadow pages fault on their own.
 */
START_TEST(test_zalloc_writes_fresh_objects)
{
	static const size_t sizes[] = { 64, 1024, 16384 };
	unsigned int c, i;
	long faults = 0;

	if (TEST_ASAN || TEST_TSAN)
		return;
	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		struct pool_head *p = pool_create("zero-page", sizes[c], 0);
		static unsigned char *o[64];

		ck_assert_ptr_nonnull(p);
		for (i = 0; i < 64; i++) {
			volatile unsigned char *last;
			long before;

			ck_assert_ptr_nonnull(o[i] = pool_zalloc(p));
			last = o[i] + sizes[c] - 1;
			before = thread_minflt();
			ck_assert_uint_eq(*last, 0);
			*last = 1;
			faults += thread_minflt() - before;
		}
		for (i = 0; i < 64; i++)
			pool_free(p, o[i]);
		pool_thread_flush();
		ck_assert_int_eq(pool_destroy(p), 0);
	}
	ck_assert_msg(faults <= 2, "%ld page faults reading and writing objects pool_zalloc() "
	              "handed out", faults);
}
END_TEST

/*
 * A limit is exact with line groups: 96-byte objects go two to a group, and an odd limit is
 * handed out to the last object (the last one comes alone). The limit counts what a pool
 * holds above its slabs; objects it took but never handed out (the rest of that group) stay
 * in their slab, not counted.
 */
START_TEST(test_limit_exact_with_groups)
{
	struct pool_head *p = pool_of_stride("limit", 96);
	static void *o[200];
	unsigned int i, n = 0;

	ck_assert_uint_eq(p->slabs.group, 2);
	ck_assert_int_eq(pool_set_limit(p, 101), 0);
	while (n < 200 && (o[n] = pool_alloc(p)) != NULL)
		n++;
	ck_assert_uint_eq(n, 101);
	ck_assert_uint_eq(test_stats(p).allocated, 101);
	ck_assert_uint_eq(test_stats(p).failed, 1);
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	books(p);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* fork() while slabs are carved and given back                                               */
/* ------------------------------------------------------------------------------------------ */

static struct pool_head *fork_pool;
static atomic_int fork_stop;

static void *fork_churn(void *arg)
{
	void *o[300];
	unsigned int i, n;

	(void)arg;
	while (!atomic_load(&fork_stop)) {
		n = (unsigned int)(rand() % 300) + 1;
		for (i = 0; i < n; i++)
			o[i] = pool_alloc(fork_pool);
		for (i = 0; i < n; i++)
			pool_free(fork_pool, o[i]);
		pool_thread_flush();
		pool_flush(fork_pool);      /* the slabs go back: a release in flight at any time */
	}
	return NULL;
}

START_TEST(test_fork_during_carve_and_release)
{
	pthread_t t[4];
	unsigned int i, forks = TEST_TSAN ? 20 : 150, bad = 0;

	fork_pool = pool_create("forked", 48, 0);
	atomic_store(&fork_stop, 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, fork_churn, NULL), 0);
	for (i = 0; i < forks; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			/* the child: no lock held, no slab half carved; it allocates, and balances */
			struct pool_stats s;
			void *o[500];
			unsigned int k;

			for (k = 0; k < 500; k++)
				if (!(o[k] = pool_alloc(fork_pool)))
					_exit(2);
			for (k = 0; k < 500; k++)
				pool_free(fork_pool, o[k]);
			pool_thread_flush();
			pool__slab_walk(fork_pool);
			if (pool_get_stats(fork_pool, &s, sizeof(s)) != 0)
				_exit(3);
			/* objects the vanished threads held stay counted as used */
			if (s.allocated != s.used + s.shared_free + s.slab_free)
				_exit(4);
			if (s.allocated != s.os_allocs - s.os_releases - s.lost)
				_exit(5);
			_exit(0);
		}
		ck_assert_int_ge(pid, 0);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fprintf(stderr, "check_slab: fork %u: child status 0x%x\n", i, st);
			bad++;
		}
	}
	atomic_store(&fork_stop, 1);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_uint_eq(bad, 0);
	books(fork_pool);
	ck_assert_int_eq(pool_destroy(fork_pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Which pools use slabs                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* In a child: `mode` set at start (a layout option), a pool, its slab figures. */
static void layout_child(void *arg)
{
	const char *mode = arg;
	struct pool_head *p;
	struct pool_stats st;
	void *o[100];
	int i;

	if (pool_parse_debugging(mode, NULL) != 0)
		_exit(10);
	p = pool_create("layout", 200, 0);
	for (i = 0; i < 100; i++)
		if (!(o[i] = pool_alloc(p)))
			_exit(11);
	if (pool_get_stats(p, &st, sizeof(st)) != 0)
		_exit(12);
	for (i = 0; i < 100; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	pool_flush(p);
	/* uaf: its own mappings, no slab; tag, caller: slabs, at the stride with the extras */
	if (!strcmp(mode, "uaf"))
		_exit(st.slabs == 0 && !pool__slab_on(p) && st.os_allocs >= 100 ? 0 : 13);
	_exit(st.slabs > 0 && pool__slab_on(p) && test_stats(p).slabs == 0 ? 0 : 14);
}

START_TEST(test_which_pools_use_slabs)
{
	static const char *const modes[] = { "uaf", "tag", "caller", "tag,caller,integrity" };
	struct pool_head *big;
	unsigned int i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct death d;

		run_child(layout_child, (void *)modes[i], &d);
		ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
		              "%s: status 0x%x: %s", modes[i], d.status, d.out);
	}
	/* objects larger than POOL_SLAB_OBJ_MAX come from the OS layer one by one */
	big = pool_create("big", POOL_SLAB_OBJ_MAX + 16, 0);
	ck_assert(!pool__slab_on(big));
	pool_free(big, pool_alloc(big));
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(big).slabs, 0);
	ck_assert_uint_eq(test_stats(big).slab_get_objects, test_stats(big).os_allocs);
	ck_assert_int_eq(pool_destroy(big), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Misuse                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * A 1 MiB block as the C library's malloc() makes one (glibc maps a block that large on its
 * own, 16 bytes of header before it): in a mapping of its own, whose start rounded down to any
 * slab size (16 KiB to 4 MiB, aligned on their size) lies in an inaccessible page, so that
 * reading a slab header there faults whatever malloc() this build links (jemalloc's blocks lie
 * among its own mapped extents).
 */
static void *big_mapped_block(void)
{
	size_t slab_max = (size_t)4 << 20, len = 2 * slab_max + ((size_t)1 << 20);
	char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (r == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)r + slab_max - 1) & ~(uintptr_t)(slab_max - 1));
	if (mprotect(a + 4096, ((size_t)1 << 20) + 4096, PROT_READ | PROT_WRITE) != 0)
		return NULL;
	return a + 4096 + 16;
}

struct big_free {
	const char *mode;
	int mapped;                         /* big_mapped_block() rather than malloc() */
};

/*
 * In a child: `mode` set before the pool exists, then pool_free() of a 1 MiB block, which the
 * thread cache, the shared lists or nothing holds until the slab tier takes it back
 * (pool_thread_flush(), pool_flush()). The slab header of that pointer, its address rounded
 * down to the slab size, is no slab of the pool's, and may not even be mapped.
 */
static void big_free_child(void *arg)
{
	const struct big_free *b = arg;
	struct pool_head *p;
	void *o, *big;

	if (pool_parse_debugging(b->mode, NULL) != 0)
		_exit(10);
	p = pool_create("conn", 64, 0);
	o = pool_alloc(p);                  /* the pool holds a slab of its own */
	big = b->mapped ? big_mapped_block() : malloc((size_t)1 << 20);
	if (!p || !o || !big)
		_exit(11);
	memset(big, 0, (size_t)1 << 20);
	pool_free(p, big);
	pool_thread_flush();
	pool_flush(p);
	pool_gc(NULL);
	_exit(12);                          /* not reported */
}

/*
 * pool_free() of a 1 MiB malloc() block, in every mode whose objects reach the slab tier: the
 * report pool-slab.h promises and an abort, never a fault in the slab tier's own check. (An
 * ASan build gives every object a tag, whose check reports the block first.)
 */
START_TEST(test_free_of_big_malloc_block_reported)
{
	static const char *const modes[] = {
		"", "no-cache", "no-global", "no-cache,no-global", "integrity", "poison",
		"cold-first", "caller", "backup",
	};
	static const char *const words[] = { "libpool: FATAL: ", "in pool 'conn'",
#if !TEST_ASAN
	                                     "not an object of this pool",
#endif
	                                     NULL };
	unsigned int i;
	int mapped;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		for (mapped = 0; mapped < 2; mapped++) {
			struct big_free b = { modes[i], mapped };
			struct death d;
			const char *const *w;

			run_child(big_free_child, &b, &d);
			ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == SIGABRT,
			              "-dM%s, %s block: expected the report and SIGABRT, got status "
			              "0x%x; stderr:\n%s", modes[i], mapped ? "mapped" : "malloc()",
			              d.status, d.out);
			for (w = words; *w; w++)
				ck_assert_msg(strstr(d.out, *w) != NULL, "-dM%s, %s block: report "
				              "lacks '%s':\n%s", modes[i],
				              mapped ? "mapped" : "malloc()", *w, d.out);
		}
	}
}
END_TEST

static Suite *slab_suite(void)
{
	Suite *s = suite_create("slab");
	TCase *tc = tcase_create("Core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_counters_after_every_shape);
	tcase_add_test(tc, test_slab_goes_back_only_whole);
	tcase_add_test(tc, test_placement);
	tcase_add_test(tc, test_dense_in_address_order);
	tcase_add_test(tc, test_shards);
	tcase_add_test(tc, test_zalloc_fresh_and_reused);
	tcase_add_test(tc, test_purge_pages_of_free_objects);
	tcase_add_test(tc, test_zalloc_writes_fresh_objects);
	tcase_add_test(tc, test_limit_exact_with_groups);
	tcase_add_test(tc, test_which_pools_use_slabs);
	tcase_add_test(tc, test_colors);
	tcase_add_test(tc, test_step);
	tcase_add_test(tc, test_free_only_thread);
	tcase_add_test(tc, test_free_of_big_malloc_block_reported);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_no_object_handed_out_twice);
	tcase_add_test(tc, test_fork_during_carve_and_release);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(slab_suite)
