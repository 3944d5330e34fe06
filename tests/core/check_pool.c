/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Core pool library tests: objects and alignment (also with every object from the OS layer),
 * reuse, merging, limits, bad input, counters, the cache budget, refill, threads
 * (producer/consumer with canaries, progress, a limited pool shared by 1000 threads), fork,
 * bulk, destroy. The configuration is check_config.c's.
 *
 * Public-API test: it includes only <pool/pool.h>, as users do.
 *
 * The Threads case also runs under POOL_DEBUG settings from tests/debug/test_debug_modes.sh.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "testutil.h"

/*
 * Scale for the threaded tests: smaller under uaf, whose every object is a mapping, and under
 * ThreadSanitizer, which makes each access several times slower and each mapping far slower
 * (its shadow is cleared at munmap(): test_debug_modes.sh's uaf run took 184 s at 1/16 of the
 * work, 26 s at 1/128).
 */
static unsigned int scale(unsigned int n)
{
	if (TEST_TSAN)
		n = n / 8 ? n / 8 : 1;
	if (pool_debugging & POOL_DBG_UAF)
		return n / 16 ? n / 16 : 1;
	if (pool_debugging & (POOL_DBG_SLOW & ~POOL_DBG_SANITIZER))
		return n / 4 ? n / 4 : 1;
	return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Core                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/*
 * Every alignment 8..4096 and sizes that are and are not multiples of it: objects are aligned
 * (on 16 at least), no object overlaps another, and objects that come back (from the thread
 * cache, the shared lists, or the OS layer) are aligned too.
 */
static void check_alignment_and_contents(void)
{
	static const size_t sizes[] = { 1, 24, 100, 192, 1000, 3000, 4096, 5000, 16384 };
	size_t align;

	for (align = 8; align <= 4096; align *= 2) {
		size_t want = align < 16 ? 16 : align;
		struct pool_head *p;
		unsigned char *objs[64];
		char name[32];
		size_t si, i, j, bad;

		for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			snprintf(name, sizeof(name), "al%zu-%zu", align, sizes[si]);
			p = pool_create_aligned(name, sizes[si], align, 0);
			ck_assert_ptr_nonnull(p);
			for (i = 0; i < 64; i++) {
				objs[i] = pool_alloc(p);
				ck_assert_ptr_nonnull(objs[i]);
				ck_assert_msg((uintptr_t)objs[i] % want == 0, "%s: %p not aligned on %zu",
				              name, (void *)objs[i], want);
				memset(objs[i], (int)i, sizes[si]);
			}
			/* no object overlaps another: each kept what was written into it */
			bad = 0;
			for (i = 0; i < 64; i++)
				for (j = 0; j < sizes[si]; j++)
					bad += objs[i][j] != (unsigned char)i;
			ck_assert_uint_eq(bad, 0);
			for (i = 0; i < 64; i++)
				pool_free(p, objs[i]);
			/* reused objects keep their alignment */
			for (i = 0; i < 64; i++) {
				objs[i] = pool_alloc(p);
				ck_assert_ptr_nonnull(objs[i]);
				ck_assert_uint_eq((uintptr_t)objs[i] % want, 0);
			}
			for (i = 0; i < 64; i++)
				pool_free(p, objs[i]);
			pool_thread_flush();
			ck_assert_int_eq(pool_destroy(p), 0);
		}
	}
}

START_TEST(test_alignment_and_contents)
{
	check_alignment_and_contents();
}
END_TEST

/* The same with every object from the OS layer and back to it (no thread cache nor shared list). */
START_TEST(test_alignment_without_caches)
{
	ck_assert_int_eq(pool_parse_debugging("no-cache,no-global", NULL), 0);
	check_alignment_and_contents();
}
END_TEST

START_TEST(test_zalloc_zeroes_reused)
{
	struct pool_head *p = pool_create("zero", 300, 0);
	unsigned char *a, *b;
	size_t i;

	ck_assert_ptr_nonnull(p);
	a = pool_alloc(p);
	memset(a, 0xEE, 300);
	pool_free(p, a);
	b = pool_zalloc(p);
	ck_assert_ptr_eq(a, b);           /* the same object came back... */
	for (i = 0; i < 300; i++)          /* ...zeroed */
		ck_assert_uint_eq(b[i], 0);
	memset(b, 0xEE, 300);
	pool_free(p, b);
	b = pool_alloc_flags(p, POOL_F_MUST_ZERO);
	for (i = 0; i < 300; i++)
		ck_assert_uint_eq(b[i], 0);
	pool_free(p, b);
}
END_TEST

START_TEST(test_lifo_reuse)
{
	struct pool_head *p = pool_create("lifo", 64, 0);
	void *o[8];
	int i;

	for (i = 0; i < 8; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 8; i++)
		pool_free(p, o[i]);
	for (i = 7; i >= 0; i--)
		ck_assert_ptr_eq(pool_alloc(p), o[i]);
	pool_free(p, NULL);               /* no-op */
}
END_TEST

START_TEST(test_names_and_sizes)
{
	struct pool_head *p = pool_create("conn.v2_x-1", 13, 0);
	struct pool_head *e = pool_create("exact", 13, POOL_F_EXACT);

	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(pool_name(p), "conn.v2_x-1");
	ck_assert_uint_eq(pool_object_size(p), 16);   /* rounded up to 8 bytes */
	ck_assert_uint_eq(pool_object_size(e), 13);   /* kept as asked */
	ck_assert_ptr_null(pool_name(NULL));
	ck_assert_uint_eq(pool_object_size(NULL), 0);
}
END_TEST

static int count_pools(struct pool_head *pool, void *arg)
{
	(void)pool;
	(*(int *)arg)++;
	return 0;
}

static int stop_at_first(struct pool_head *pool, void *arg)
{
	*(struct pool_head **)arg = pool;
	return 1;
}

START_TEST(test_for_each)
{
	struct pool_head *a = pool_create("fe-a", 32, 0), *first = NULL;
	int n = 0;

	pool_create("fe-b", 64, 0);
	pool_for_each(count_pools, &n);
	ck_assert_int_eq(n, 2);
	pool_for_each(stop_at_first, &first);
	ck_assert_ptr_eq(first, a);
	pool_for_each(NULL, NULL);
}
END_TEST

START_TEST(test_bulk)
{
	struct pool_head *p = pool_create("bulk", 64, 0);
	void *objs[100];
	size_t i, n;

	n = pool_alloc_bulk(p, objs, 100);
	ck_assert_uint_eq(n, 100);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(objs[i]);
		memset(objs[i], 1, 64);
	}
	ck_assert_uint_eq(test_handed_out(p), 100);
	test_books(p);
	objs[50] = NULL;                 /* NULL entries are skipped */
	pool_free_bulk(p, objs, 100);
	pool_set_limit(p, 120);
	n = pool_alloc_bulk(p, objs, 100);
	ck_assert_uint_eq(n, 100);
	ck_assert_uint_eq(pool_alloc_bulk(p, objs + 100, 0), 0);
	pool_free_bulk(p, objs, n);
}
END_TEST

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/*
 * Bulk calls of many magazines at once, which move whole magazines between the caller's array
 * and the thread's stacks: every object once, NULL entries skipped wherever they fall (inside a
 * whole magazine too), the books exact, and what the budget holds kept by the thread.
 */
START_TEST(test_bulk_whole_magazines)
{
	struct pool_head *p = pool_create("bulk-whole", 256, 0);
	size_t mag = test_magazine(p), n = 6 * mag + 3, i, round;
	void **objs = calloc(n, sizeof(*objs)), **sorted = calloc(n, sizeof(*objs));
	void *held[3];

	ck_assert_ptr_nonnull(objs);
	ck_assert_ptr_nonnull(sorted);
	for (round = 0; round < 4; round++) {
		ck_assert_uint_eq(pool_alloc_bulk(p, objs, n), n);
		memcpy(sorted, objs, n * sizeof(*objs));
		qsort(sorted, n, sizeof(*sorted), ptr_cmp);
		for (i = 0; i < n; i++) {
			ck_assert_ptr_nonnull(sorted[i]);
			ck_assert(i == 0 || sorted[i] != sorted[i - 1]);
			memset(objs[i], (int)round, 256);
		}
		ck_assert_uint_eq(test_handed_out(p), n);
		test_books(p);
		/* NULL in the loaded magazine's part, in a whole magazine, and in the tail */
		held[0] = objs[1];
		held[1] = objs[2 * mag + 1];
		held[2] = objs[n - 1];
		objs[1] = objs[2 * mag + 1] = objs[n - 1] = NULL;
		pool_free_bulk(p, objs, n);
		ck_assert_uint_eq(test_handed_out(p), 3);
		for (i = 0; i < 3; i++)
			pool_free(p, held[i]);
		ck_assert_uint_eq(test_handed_out(p), 0);
		test_books(p);
	}
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).used, 0);
	free(objs);
	free(sorted);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_destroy)
{
	struct pool_head *p = pool_create("destroy", 64, 0);
	void *a = pool_alloc(p), *b = pool_alloc(p);

	pool_free(p, b);
	errno = 0;
	ck_assert_int_eq(pool_destroy(p), -1);   /* `a` is still handed out */
	ck_assert_int_eq(errno, EBUSY);
	/* intact and usable */
	b = pool_alloc(p);
	ck_assert_ptr_nonnull(b);
	pool_free(p, b);
	pool_free(p, a);
	ck_assert_int_eq(pool_destroy(p), 0);    /* drains this thread's cache itself */
	errno = 0;
	ck_assert_int_eq(pool_destroy(NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* the slot is reused by a new pool, whose cache starts empty */
	p = pool_create("destroy2", 64, 0);
	a = pool_alloc(p);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(test_handed_out(p), 1);
	/* half a magazine from the slab tier: nothing of the old pool */
	ck_assert_uint_eq(test_stats(p).allocated, test_slab_refill(p));
	ck_assert_uint_eq(test_stats(p).shared_free, 0);
	pool_free(p, a);
}
END_TEST

static void *cache_some(void *arg)
{
	struct pool_head *p = arg;
	void *o[10];
	int i;

	for (i = 0; i < 10; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 10; i++)
		pool_free(p, o[i]);
	return NULL;
}

struct parked {
	struct pool_head *pool;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int cached, release;
};

static void *cache_and_park(void *arg)
{
	struct parked *pk = arg;

	cache_some(pk->pool);
	pthread_mutex_lock(&pk->lock);
	pk->cached = 1;
	pthread_cond_broadcast(&pk->cond);
	while (!pk->release)
		pthread_cond_wait(&pk->cond, &pk->lock);
	pthread_mutex_unlock(&pk->lock);
	return NULL;
}

START_TEST(test_destroy_drains_other_threads)
{
	struct parked pk = { .pool = pool_create("drain", 64, 0) };
	pthread_t t;

	pthread_mutex_init(&pk.lock, NULL);
	pthread_cond_init(&pk.cond, NULL);
	ck_assert_int_eq(pthread_create(&t, NULL, cache_and_park, &pk), 0);
	pthread_mutex_lock(&pk.lock);
	while (!pk.cached)
		pthread_cond_wait(&pk.cond, &pk.lock);
	pthread_mutex_unlock(&pk.lock);
	/* what the thread took (half a magazine) is all in its cache */
	ck_assert_uint_eq(test_stats(pk.pool).cached, test_slab_refill(pk.pool));
	ck_assert_uint_eq(test_handed_out(pk.pool), 0);
	ck_assert_int_eq(pool_destroy(pk.pool), 0);    /* the parked thread's cache is drained */
	pk.pool = pool_create("drain2", 64, 0);         /* reuses the slot */
	pthread_mutex_lock(&pk.lock);
	pk.release = 1;
	pthread_cond_broadcast(&pk.cond);
	pthread_mutex_unlock(&pk.lock);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(test_stats(pk.pool).used, 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Merging                                                                                    */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_merging)
{
	struct pool_head *a = pool_create("m-a", 1000, POOL_F_SHARED);
	struct pool_head *b = pool_create("m-b", 1008, POOL_F_SHARED);    /* within 1% / 16 B */
	struct pool_head *c = pool_create("m-c", 1100, POOL_F_SHARED);    /* too far */
	struct pool_head *d = pool_create_aligned("m-d", 1000, 64, POOL_F_SHARED); /* alignment */
	struct pool_head *e = pool_create("m-e", 1000, 0);                /* not shared */
	struct pool_head *f = pool_create("m-f", 24, POOL_F_SHARED);
	struct pool_head *g = pool_create("m-g", 40, POOL_F_SHARED);      /* 16 bytes apart */
	void *o;

	ck_assert_ptr_eq(a, b);
	ck_assert_uint_eq(test_stats(a).creators, 2);
	ck_assert_uint_eq(pool_object_size(a), 1008);   /* the larger size */
	ck_assert_ptr_ne(a, c);
	ck_assert_ptr_ne(a, d);
	ck_assert_ptr_ne(a, e);
	ck_assert_ptr_eq(f, g);
	ck_assert_uint_eq(pool_object_size(f), 40);

	/* once a pool allocated, only an exact size merges */
	o = pool_alloc(a);
	ck_assert_ptr_ne(pool_create("m-h", 1000, POOL_F_SHARED), a);
	ck_assert_ptr_eq(pool_create("m-i", 1008, POOL_F_SHARED), a);
	ck_assert_uint_eq(test_stats(a).creators, 3);
	pool_free(a, o);

	/* destroy drops users one at a time */
	ck_assert_int_eq(pool_destroy(a), 0);
	ck_assert_uint_eq(test_stats(a).creators, 2);
}
END_TEST

START_TEST(test_no_merge)
{
	struct pool_head *a, *b, *c;

	ck_assert_int_eq(pool_parse_debugging("no-merge", NULL), 0);
	a = pool_create("nm", 100, POOL_F_SHARED);
	b = pool_create("nm-other", 100, POOL_F_SHARED);
	c = pool_create("nm", 100, POOL_F_SHARED);
	ck_assert_ptr_ne(a, b);
	ck_assert_ptr_eq(a, c);
	ck_assert_int_eq(pool_parse_debugging("merge", NULL), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Limits and errors                                                                          */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_limit)
{
	struct pool_head *p = pool_create("limited", 64, 0);
	void *o[20];
	int i;

	ck_assert_int_eq(pool_set_limit(p, 10), 0);
	for (i = 0; i < 10; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	errno = 0;
	ck_assert_ptr_null(pool_alloc(p));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_ptr_null(pool_alloc(p));
	ck_assert_uint_eq(test_stats(p).failed, 2);
	ck_assert_uint_eq(test_stats(p).allocated, 10);   /* no OS allocation past the limit */
	/* recovers as soon as an object comes back */
	pool_free(p, o[0]);
	ck_assert_ptr_nonnull(o[0] = pool_alloc(p));
	ck_assert_int_eq(pool_set_limit(p, 0), 0);
	ck_assert_ptr_nonnull(o[10] = pool_alloc(p));
	ck_assert_int_eq(pool_set_limit(NULL, 1), -1);
	for (i = 0; i <= 10; i++)
		pool_free(p, o[i]);
}
END_TEST

START_TEST(test_bad_input)
{
	char longname[40];

	memset(longname, 'a', 32);
	longname[32] = 0;
#define EXPECT_EINVAL(call)                                         \
	do {                                                        \
		errno = 0;                                          \
		ck_assert_ptr_null(call);                           \
		ck_assert_int_eq(errno, EINVAL);                    \
	} while (0)
	EXPECT_EINVAL(pool_create(NULL, 64, 0));
	EXPECT_EINVAL(pool_create("", 64, 0));
	EXPECT_EINVAL(pool_create(longname, 64, 0));
	EXPECT_EINVAL(pool_create("has space", 64, 0));
	EXPECT_EINVAL(pool_create("slash/", 64, 0));
	EXPECT_EINVAL(pool_create("ok", 0, 0));
	EXPECT_EINVAL(pool_create("ok", (size_t)1 << 30 | 1, 0));
	EXPECT_EINVAL(pool_create("ok", SIZE_MAX, 0));
	EXPECT_EINVAL(pool_create("ok", SIZE_MAX - 3, POOL_F_EXACT));
	EXPECT_EINVAL(pool_create("ok", 64, 0x8000));
	EXPECT_EINVAL(pool_create_aligned("ok", 64, 24, 0));
	EXPECT_EINVAL(pool_create_aligned("ok", 64, 3, 0));
	EXPECT_EINVAL(pool_create_aligned("ok", 64, 8192, 0));
	longname[31] = 0;
	ck_assert_ptr_nonnull(pool_create(longname, 64, 0));      /* 31 bytes is fine */
	ck_assert_ptr_nonnull(pool_create("big", (size_t)1 << 29, 0));
	ck_assert_int_eq(pool_get_stats(NULL, NULL, 0), -1);
#undef EXPECT_EINVAL
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Counters, budget, refill                                                                   */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_counters)
{
	struct pool_head *p = pool_create("count", 128, 0);
	struct pool_stats st;
	void *o[500];
	int i;

	for (i = 0; i < 500; i++)
		o[i] = pool_alloc(p);
	st = test_stats(p);
	/* refills of half a magazine from the slab tier: what is not handed out is cached */
	ck_assert_uint_eq(st.used - st.cached, 500);
	ck_assert_uint_lt(st.cached, test_slab_refill(p));
	ck_assert_uint_eq(st.allocated, st.used);
	/* 128-byte objects: 16 KiB slabs of 127 */
	ck_assert_uint_eq(st.slab_bytes, st.slabs * 16384);
	ck_assert_uint_eq(st.slabs, (512 + 126) / 127);
	test_books(p);
	for (i = 0; i < 500; i++)
		pool_free(p, o[i]);
	st = test_stats(p);
	ck_assert_uint_ge(st.allocated, st.used);
	ck_assert_uint_eq(st.used, st.cached);          /* nothing handed out */
	ck_assert_uint_eq(st.allocated, st.used + st.shared_free);
	ck_assert_uint_gt(st.needed_avg, 0);
	pool_thread_flush();
	st = test_stats(p);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_uint_eq(st.allocated, st.shared_free);
	pool_flush(p);
	st = test_stats(p);
	/* every object back in its slab: the slabs went back whole */
	ck_assert_uint_eq(st.allocated, 0);
	ck_assert_uint_eq(st.shared_free, 0);
	ck_assert_uint_eq(st.slabs, 0);
	ck_assert_uint_eq(st.slab_free, 0);
	ck_assert_uint_gt(st.slabs_released, 0);
	ck_assert_uint_eq(st.os_releases, st.os_allocs);
	pool_flush(NULL);
}
END_TEST

START_TEST(test_budget)
{
	struct pool_config cfg = { .cache_bytes = 64 * 1024 };
	struct pool_head *a, *b;
	static void *o[4000];
	struct pool_stats sa, sb;
	int i;

	ck_assert_int_eq(pool_configure(&cfg), 0);
	a = pool_create("budget-a", 256, 0);
	b = pool_create("budget-b", 1024, 0);
	for (i = 0; i < 2000; i++)
		o[i] = pool_alloc(a);
	for (i = 2000; i < 4000; i++)
		o[i] = pool_alloc(b);
	for (i = 0; i < 4000; i++)
		pool_free(i < 2000 ? a : b, o[i]);
	sa = test_stats(a);
	sb = test_stats(b);
	ck_assert_uint_le(sa.cached * sa.stride + sb.cached * sb.stride, cfg.cache_bytes);
	ck_assert_uint_gt(sa.cached + sb.cached, 0);
	/* the coldest went first: pool a was freed into before pool b */
	ck_assert_uint_gt(sb.cached * sb.stride, sa.cached * sa.stride);
	/* an object larger than the budget is never cached */
	a = pool_create("budget-huge", 128 * 1024, 0);
	o[0] = pool_alloc(a);
	pool_free(a, o[0]);
	ck_assert_uint_eq(test_stats(a).cached, 0);
	ck_assert_uint_eq(test_stats(a).shared_free + (test_stats(a).allocated == 0), 1);
}
END_TEST

struct refill_arg {
	struct pool_head *pool;
	void **objs;
	int n;
};

static void *alloc_n(void *arg)
{
	struct refill_arg *ra = arg;
	int i;

	for (i = 0; i < ra->n; i++)
		ra->objs[i] = pool_alloc(ra->pool);
	return NULL;
}

static void *free_n(void *arg)
{
	struct refill_arg *ra = arg;
	int i;

	for (i = 0; i < ra->n; i++)
		pool_free(ra->pool, ra->objs[i]);
	return NULL;
}

START_TEST(test_refill)
{
	static void *objs[2000];
	struct refill_arg ra = { pool_create("refill", 64, 0), objs, 2000 };
	unsigned long before;
	pthread_t t;

	pthread_create(&t, NULL, alloc_n, &ra);   /* thread A allocates... */
	pthread_join(t, NULL);
	pthread_create(&t, NULL, free_n, &ra);    /* ...thread B frees and exits (flush) */
	pthread_join(t, NULL);
	before = test_stats(ra.pool).allocated;
	/* refills of half a magazine from the slab tier */
	ck_assert_uint_ge(before, 2000);
	ck_assert_uint_lt(before, 2000 + test_slab_refill(ra.pool));
	ck_assert_uint_gt(test_stats(ra.pool).shared_free, 0);
	pthread_create(&t, NULL, alloc_n, &ra);   /* thread C is served from the shared lists */
	pthread_join(t, NULL);
	ck_assert_uint_le(test_stats(ra.pool).allocated, before);
	ck_assert_uint_eq(test_stats(ra.pool).used, 2000);
	free_n(&ra);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                    */
/* ------------------------------------------------------------------------------------------ */

#define PC_PAIRS 24
#define PC_QUEUE 64

struct canary_obj {
	uint32_t producer;
	uint32_t seq;
	uint64_t sum;
};

struct pc_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *ring[PC_QUEUE];
	unsigned int head, count;
	int done;
};

static struct pool_head *pc_pool;
static size_t pc_size;
static unsigned int pc_per_producer;
static struct pc_queue pc_queues[PC_PAIRS];
static _Atomic unsigned long pc_bad, pc_consumed, pc_null;

static uint64_t canary_sum(const unsigned char *o, size_t size)
{
	uint64_t h = UINT64_C(1469598103934665603);   /* FNV-1a (Fowler, Noll, Vo) */
	size_t i;

	for (i = sizeof(struct canary_obj); i < size; i++)
		h = (h ^ o[i]) * UINT64_C(1099511628211);
	return h;
}

static void *pc_producer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, i;
	struct pc_queue *q = &pc_queues[id];

	for (i = 0; i < pc_per_producer; i++) {
		unsigned char *o = pool_alloc(pc_pool);
		struct canary_obj *c = (struct canary_obj *)o;
		size_t k;

		if (!o) {
			pc_null++;
			i--;
			sched_yield();
			continue;
		}
		c->producer = id;
		c->seq = i;
		for (k = sizeof(*c); k < pc_size; k++)
			o[k] = (unsigned char)(id * 31 + i + k);
		c->sum = canary_sum(o, pc_size);
		pthread_mutex_lock(&q->lock);
		while (q->count == PC_QUEUE)
			pthread_cond_wait(&q->cond, &q->lock);
		q->ring[(q->head + q->count++) % PC_QUEUE] = o;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
	pthread_mutex_lock(&q->lock);
	q->done = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *pc_consumer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, expect = 0;
	struct pc_queue *q = &pc_queues[id];

	for (;;) {
		struct canary_obj *c;

		pthread_mutex_lock(&q->lock);
		while (!q->count && !q->done)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->count) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		c = q->ring[q->head];
		q->head = (q->head + 1) % PC_QUEUE;
		q->count--;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		if (c->producer != id || c->seq != expect++ ||
		    c->sum != canary_sum((unsigned char *)c, pc_size))
			pc_bad++;
		pool_free(pc_pool, c);
		pc_consumed++;
	}
	return NULL;
}

START_TEST(test_producer_consumer_48)
{
	pthread_t prod[PC_PAIRS], cons[PC_PAIRS];
	struct pool_stats st;
	unsigned int i;

	pc_size = 200;
	pc_pool = pool_create("pc", pc_size, 0);
	pc_per_producer = scale(20000);
	for (i = 0; i < PC_PAIRS; i++) {
		pthread_mutex_init(&pc_queues[i].lock, NULL);
		pthread_cond_init(&pc_queues[i].cond, NULL);
	}
	for (i = 0; i < PC_PAIRS; i++) {
		ck_assert_int_eq(pthread_create(&cons[i], NULL, pc_consumer, (void *)(uintptr_t)i), 0);
		ck_assert_int_eq(pthread_create(&prod[i], NULL, pc_producer, (void *)(uintptr_t)i), 0);
	}
	for (i = 0; i < PC_PAIRS; i++) {
		pthread_join(prod[i], NULL);
		pthread_join(cons[i], NULL);
	}
	ck_assert_uint_eq(pc_bad, 0);
	ck_assert_uint_eq(pc_consumed, (unsigned long)PC_PAIRS * pc_per_producer);
	st = test_stats(pc_pool);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_uint_eq(st.allocated, st.shared_free);
	ck_assert_uint_eq(st.failed, pc_null);
}
END_TEST


#define HAMMER_THREADS 48

static struct pool_head *hammer_pool;
static _Atomic unsigned long hammer_done[HAMMER_THREADS], hammer_bad;

/* Check's assertions are not thread-safe: threads count what is wrong, the test asserts. */
static void *hammer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, i, j, n = scale(20000);
	void *o[16];

	for (i = 0; i < n; i++) {
		unsigned int k = 1 + (i * 7 + id) % 16;

		for (j = 0; j < k; j++) {
			o[j] = pool_alloc(hammer_pool);
			if (!o[j]) {
				hammer_bad++;
				return NULL;
			}
			*(unsigned int *)o[j] = id;
		}
		for (j = 0; j < k; j++) {
			hammer_bad += *(unsigned int *)o[j] != id;
			pool_free(hammer_pool, o[j]);
		}
		hammer_done[id]++;
	}
	return NULL;
}

START_TEST(test_hammer_48_progress)
{
	struct pool_config cfg = { .cache_bytes = 4096 };   /* tiny: forces the shared lists */
	pthread_t t[HAMMER_THREADS];
	unsigned int i;

	pool_configure(&cfg);
	hammer_pool = pool_create("hammer", 64, 0);
	for (i = 0; i < HAMMER_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer, (void *)(uintptr_t)i), 0);
	for (i = 0; i < HAMMER_THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(hammer_bad, 0);
	for (i = 0; i < HAMMER_THREADS; i++)
		ck_assert_uint_eq(hammer_done[i], scale(20000));   /* every thread completed */
	ck_assert_uint_eq(test_stats(hammer_pool).used, 0);
	ck_assert_uint_eq(test_stats(hammer_pool).allocated, test_stats(hammer_pool).shared_free);
}
END_TEST

#define SLOT_THREADS 1000

static struct pool_head *slot_pool;
static _Atomic unsigned int slot_completed;
static _Atomic unsigned long slot_retries;
static unsigned int slot_rounds;        /* each thread's allocations: 100, fewer when scaled */

static void *slot_client(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < slot_rounds; i++) {
		void *o;

		while (!(o = pool_alloc(slot_pool))) {
			slot_retries++;
			sched_yield();
		}
		memset(o, 0x5A, 64);
		sched_yield();             /* hold it briefly */
		pool_free(slot_pool, o);
	}
	slot_completed++;
	return NULL;
}

START_TEST(test_limited_pool_1000_threads)
{
	pthread_t *t = calloc(SLOT_THREADS, sizeof(*t));
	unsigned int i, started = 0;

	slot_rounds = scale(3200) < 100 ? scale(3200) : 100;
	slot_pool = pool_create("slots", 64, 0);
	pool_set_limit(slot_pool, 128);
	for (i = 0; i < SLOT_THREADS; i++)
		if (pthread_create(&t[i], NULL, slot_client, NULL) == 0)
			started++;
	ck_assert_uint_ge(started, SLOT_THREADS / 2);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(slot_completed, started);              /* all served, none dropped */
	ck_assert_uint_le(test_stats(slot_pool).allocated, 128);   /* never past the limit */
	ck_assert_uint_eq(test_stats(slot_pool).used, 0);
	free(t);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* fork                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* objects of each pool made before the fork test's load: what a child needs, and what 4 threads
 * can have in flight (a refill takes up to 4 clusters), with room to spare */
#define FORK_STOCK 600

static struct pool_head *fork_pools[3];
static _Atomic int fork_stop;
static _Atomic int fork_ready;
static _Atomic int fork_park, fork_parked;   /* ThreadSanitizer builds: see below */

static void *fork_busy(void *arg)
{
	unsigned int n = 0;

	(void)arg;
	/* a thread's first use of a pool allocates its caches: done before the first fork() */
	for (n = 0; n < 3; n++)
		pool_free(fork_pools[n], pool_alloc(fork_pools[n]));
	fork_ready++;
	while (!fork_stop) {
		void *o;

		if (fork_park) {
			fork_parked++;
			while (fork_park && !fork_stop)
				sched_yield();
			fork_parked--;
			continue;
		}
		o = pool_alloc(fork_pools[n % 3]);
		pool_free(fork_pools[n % 3], o);
		n++;
		if (n % 64 == 0)
			pool_thread_flush();     /* keep the shared lists busy too */
	}
	return NULL;
}

START_TEST(test_fork_child_allocates)
{
	pthread_t t[4];
	int i, status;
	pid_t pid;

	fork_pools[0] = pool_create("fork-a", 64, 0);
	fork_pools[1] = pool_create("fork-b", 1024, 0);
	fork_pools[2] = pool_create("fork-c", 16384, 0);
	/*
	 * Stock the pools before the load starts, and let each busy thread make its caches before
	 * the first fork(), so that neither the busy threads nor the children need the OS layer:
	 * a child that calls malloc() while a parent thread was inside it may wait forever under
	 * ThreadSanitizer (seen once in 7 runs of the libc build without the stock). The children
	 * still find every object that the threads' caches held at the fork given back to the
	 * shared lists.
	 */
	for (i = 0; i < 3; i++) {
		void *o[FORK_STOCK];
		int j;

		for (j = 0; j < FORK_STOCK; j++)
			ck_assert_ptr_nonnull(o[j] = pool_alloc(fork_pools[i]));
		for (j = 0; j < FORK_STOCK; j++)
			pool_free(fork_pools[i], o[j]);
	}
	pool_thread_flush();
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, fork_busy, NULL), 0);
	while (fork_ready < 4)
		sched_yield();
	for (i = 0; i < 20; i++) {
		/*
		 * ThreadSanitizer's runtime before LLVM 19 (GCC 12's among them) locks neither its
		 * allocator nor its other internal state around fork(), and a child can wait forever
		 * on a lock that a parent thread held inside the runtime, whatever the program does
		 * (llvm/llvm-project pull request 96600; google/sanitizers issues 453 and 945): this
		 * test hung about once in 100 runs of the libc build under it, once in CI. There the
		 * busy threads wait, outside the library and the allocator, while fork() runs: the
		 * child still finds their caches full and must take them back.
		 */
		if (TEST_TSAN) {
			fork_park = 1;
			while (fork_parked < 4)
				sched_yield();
		}
		pid = fork();
		if (pid != 0)
			fork_park = 0;
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int k, j;

			for (k = 0; k < 3; k++) {
				void *o[100];

				for (j = 0; j < 100; j++)
					if (!(o[j] = pool_alloc(fork_pools[k])))
						_exit(2);
				for (j = 0; j < 100; j++)
					pool_free(fork_pools[k], o[j]);
			}
			pool_thread_flush();
			/* only the objects the other threads held at the fork (in hand, or moving in
			 * a slow path: a refill takes up to 4 clusters) stay used: they cannot come
			 * back in the child */
			for (k = 0; k < 3; k++)
				if (test_stats(fork_pools[k]).used > 4 * 5 * POOL_CLUSTER_DEFAULT)
					_exit(3);
			_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x",
		              status);
	}
	fork_stop = 1;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}
END_TEST

static Suite *pool_suite(void)
{
	Suite *s = suite_create("pool");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_alignment_and_contents);
	tcase_add_test(tc, test_alignment_without_caches);
	tcase_add_test(tc, test_zalloc_zeroes_reused);
	tcase_add_test(tc, test_lifo_reuse);
	tcase_add_test(tc, test_names_and_sizes);
	tcase_add_test(tc, test_for_each);
	tcase_add_test(tc, test_bulk);
	tcase_add_test(tc, test_bulk_whole_magazines);
	tcase_add_test(tc, test_destroy);
	tcase_add_test(tc, test_destroy_drains_other_threads);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_refill);
	suite_add_tcase(s, tc);

	tc = tcase_create("Merge");
	tcase_add_test(tc, test_merging);
	tcase_add_test(tc, test_no_merge);
	suite_add_tcase(s, tc);

	tc = tcase_create("Limits");
	tcase_add_test(tc, test_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_producer_consumer_48);
	tcase_add_test(tc, test_hammer_48_progress);
	tcase_add_test(tc, test_limited_pool_1000_threads);
	tcase_add_test(tc, test_fork_child_allocates);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(pool_suite)
