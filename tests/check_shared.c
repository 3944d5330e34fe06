/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The shared tier as users see it through the public API: counters that add up after heavy
 * cross-thread traffic, objects moved in clusters (the traffic counters), memory return by
 * pool_gc() with its floor in bytes, the demand window, bulk moves (all or nothing, also at a
 * limit and under fault injection), inline zalloc on a dirty cache, destroyed pools.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pool/pool.h>

#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* Counters after cross-thread traffic                                                        */
/* ------------------------------------------------------------------------------------------ */

#define XFER_PAIRS   4          /* producer/consumer pairs */
#define XFER_RING    1024       /* objects in flight per pair */
#define XFER_OBJECTS 200000     /* objects each producer hands over */

struct xfer {
	struct pool_head *pool;
	void *_Atomic ring[XFER_RING];
	unsigned int seed;
};

static void *producer(void *arg)
{
	struct xfer *x = arg;
	unsigned long i;

	for (i = 0; i < XFER_OBJECTS; i++) {
		uint64_t *o = pool_alloc(x->pool);
		void *expect = NULL;

		ck_assert_ptr_nonnull(o);
		o[0] = 0;
		o[1] = i ^ x->seed;
		while (!atomic_compare_exchange_weak(&x->ring[i % XFER_RING], &expect, o)) {
			expect = NULL;
			sched_yield();
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct xfer *x = arg;
	unsigned long i;

	for (i = 0; i < XFER_OBJECTS; i++) {
		uint64_t *o;

		while (!(o = atomic_exchange(&x->ring[i % XFER_RING], NULL)))
			sched_yield();
		ck_assert_uint_eq(o[1], i ^ x->seed);   /* nobody else had it meanwhile */
		pool_free(x->pool, o);
	}
	return NULL;
}

START_TEST(test_counters_add_up_after_cross_thread_traffic)
{
	static struct xfer x[XFER_PAIRS];
	pthread_t t[2 * XFER_PAIRS];
	struct pool_config cfg;
	struct pool_stats st;
	unsigned int i;
	uint64_t released;

	pool_get_config(&cfg);
	for (i = 0; i < XFER_PAIRS; i++) {
		x[i].pool = pool_create("xfer", 64, POOL_F_SHARED);
		x[i].seed = 0x5eed0000u + i;
		ck_assert_ptr_nonnull(x[i].pool);
	}
	ck_assert_ptr_eq(x[0].pool, x[XFER_PAIRS - 1].pool);    /* merged: one pool, 4 flows */
	for (i = 0; i < XFER_PAIRS; i++) {
		ck_assert_int_eq(pthread_create(&t[2 * i], NULL, producer, &x[i]), 0);
		ck_assert_int_eq(pthread_create(&t[2 * i + 1], NULL, consumer, &x[i]), 0);
	}
	for (i = 0; i < 2 * XFER_PAIRS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	st = test_stats(x[0].pool);
	/* every thread exited: their caches went to the shared lists */
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_uint_eq(st.allocated, st.shared_free);
	ck_assert_uint_eq(st.allocated, st.os_allocs - st.os_releases);
	released = st.gc_released_bytes / st.stride;
	ck_assert_uint_eq(st.shared_put_objects - st.shared_get_objects - released,
	                  st.shared_free);
	/*
	 * Objects crossed threads in clusters: the consumers' evictions and the producers' refills
	 * move whole clusters, so there is one head exchange for many objects (the budget of
	 * doc/internals.md: one atomic read-modify-write per cluster moved, none per object).
	 */
	ck_assert_uint_gt(st.shared_get_clusters, 0);
	ck_assert_uint_ge(st.shared_get_objects, st.shared_get_clusters * (cfg.cluster / 2));
	ck_assert_uint_ge(st.shared_put_objects, st.shared_put_clusters * (cfg.cluster / 2));
	/* and the OS layer saw a small share of it: the objects circulated */
	ck_assert_uint_lt(st.os_allocs, XFER_PAIRS * XFER_OBJECTS / 10);
	pool_gc(x[0].pool);
	pool_gc(x[0].pool);
	st = test_stats(x[0].pool);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.allocated, st.shared_free);
	ck_assert_uint_le(st.allocated, cfg.cluster);
	for (i = 0; i < XFER_PAIRS; i++)
		ck_assert_int_eq(pool_destroy(x[i].pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Memory return                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Allocate and free `n` objects, then flush: they all lie in the shared lists. */
static void churn(struct pool_head *p, unsigned int n)
{
	void **o = calloc(n, sizeof(*o));
	unsigned int i;

	ck_assert_ptr_nonnull(o);
	for (i = 0; i < n; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	free(o);
	pool_thread_flush();
}

START_TEST(test_gc_floor_in_bytes)
{
	static const struct { size_t size; size_t floor; } cases[] = {
		{ 64, 8 },               /* one cluster (8) is less than 64 KiB */
		{ 16384, 4 },            /* 64 KiB of 16 KiB objects */
		{ 512 * 1024, 1 },       /* at least one object */
	};
	unsigned int c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pool_head *p = pool_create("floor", cases[c].size, 0);
		struct pool_stats st;

		ck_assert_ptr_nonnull(p);
		churn(p, 40);
		ck_assert_uint_eq(test_stats(p).allocated, 40);
		pool_gc(p);          /* ends the half-window in which the 40 were needed */
		st = test_stats(p);
		ck_assert_uint_eq(st.allocated, 40);
		ck_assert_uint_eq(st.needed_avg, 40);
		pool_gc(p);          /* idle since: all but the floor goes back */
		st = test_stats(p);
		ck_assert_msg(st.allocated == cases[c].floor, "%zu-byte objects: %zu kept, floor %zu",
		              cases[c].size, st.allocated, cases[c].floor);
		ck_assert_uint_eq(st.needed_avg, 0);
		ck_assert_uint_eq(st.os_releases, 40 - cases[c].floor);
		ck_assert_uint_eq(st.gc_released_bytes, (40 - cases[c].floor) * st.stride);
		ck_assert_int_eq(pool_destroy(p), 0);
	}
}
END_TEST

START_TEST(test_objects_in_use_are_kept)
{
	struct pool_head *p = pool_create("inuse", 256, 0);
	void *o[100];
	unsigned int i;

	for (i = 0; i < 100; i++)
		o[i] = pool_alloc(p);
	for (i = 50; i < 100; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	pool_gc(p);
	pool_gc(p);
	pool_gc(p);
	ck_assert_uint_eq(test_stats(p).used, 50);
	ck_assert_uint_ge(test_stats(p).allocated, 50);
	for (i = 0; i < 50; i++) {
		memset(o[i], 0x77, 256);          /* still ours: no fault, no report */
		pool_free(p, o[i]);
	}
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * The demand window, with a short decay_ms (run in a child: the configuration is set before the
 * first pool): objects idle longer than the window come back without pool_gc(), as soon as the
 * pool is used again; a load that keeps coming back within the window keeps its objects.
 */
static void decay_child(void *arg)
{
	struct pool_config cfg = { .decay_ms = 100 };
	struct pool_head *p;
	struct pool_stats st;
	void *o[400];
	unsigned int i, round;

	(void)arg;
	if (pool_configure(&cfg) != 0)
		_exit(10);
	p = pool_create("decay", 128, 0);
	for (i = 0; i < 400; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 400; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	/*
	 * Idle for 3 windows, then in use again: the slow paths end the half-window (the marks
	 * rotate); one half-window later they end the next one, and what stayed free through both
	 * goes back. Nothing here calls pool_gc().
	 */
	usleep(300 * 1000);
	for (round = 0; round < 2; round++) {
		unsigned int k;

		for (k = 0; k < 64; k++) {
			void *a = pool_alloc(p);

			pool_free(p, a);
			pool_thread_flush();
		}
		usleep(60 * 1000);
	}
	for (i = 0; i < 64; i++) {
		void *a = pool_alloc(p);

		pool_free(p, a);
		pool_thread_flush();
	}
	st = test_stats(p);
	if (st.os_releases < 300) {
		fprintf(stderr, "released %llu of 400 idle objects\n",
		        (unsigned long long)st.os_releases);
		_exit(11);
	}
	_exit(0);
}

START_TEST(test_idle_memory_comes_back_after_the_window)
{
	struct death d;

	run_child(decay_child, NULL, &d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
	              "status 0x%x; stderr:\n%s", d.status, d.out);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Bulk                                                                                       */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_bulk_moves_clusters)
{
	struct pool_head *p = pool_create("bulkc", 64, 0);
	void *objs[256];
	struct pool_stats st;
	unsigned int i, j;

	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 256), 256);
	for (i = 0; i < 256; i++) {
		ck_assert_ptr_nonnull(objs[i]);
		for (j = 0; j < i; j++)
			ck_assert_ptr_ne(objs[i], objs[j]);
		memset(objs[i], (int)i, 64);
	}
	ck_assert_uint_eq(test_stats(p).used, 256);
	pool_free_bulk(p, objs, 256);
	pool_thread_flush();
	st = test_stats(p);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.allocated, 256);
	/* again: from the shared lists this time, in clusters */
	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 200), 200);
	st = test_stats(p);
	ck_assert_uint_eq(st.allocated, 256);
	ck_assert_uint_ge(st.shared_get_objects, 200);
	pool_free_bulk(p, objs, 200);
	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 0), 0);
	ck_assert_uint_eq(pool_alloc_bulk(NULL, objs, 4), 0);
	pool_free_bulk(p, NULL, 4);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_bulk_all_or_nothing_at_a_limit)
{
	struct pool_head *p = pool_create("bulkl", 64, 0);
	void *objs[32];
	struct pool_stats st;

	ck_assert_int_eq(pool_set_limit(p, 20), 0);
	errno = 0;
	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 32), 0);
	ck_assert_int_eq(errno, ENOMEM);
	st = test_stats(p);
	/* nothing stayed handed out (used counts this thread's cache too) */
	ck_assert_uint_eq(st.used, st.cached);
	ck_assert_uint_le(st.allocated, 20);
	ck_assert_uint_eq(st.failed, 1);
	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 20), 20);
	st = test_stats(p);
	ck_assert_uint_eq(st.used - st.cached, 20);
	pool_free_bulk(p, objs, 20);
	st = test_stats(p);
	ck_assert_uint_eq(st.used, st.cached);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * The bulk magazine (the bulk calls' fast path) holds cached objects like the list does: single
 * calls, eviction, flush, destroy and statistics see them.
 */
START_TEST(test_bulk_magazine_mixes_with_single_calls)
{
	struct pool_head *p = pool_create("bulkm", 64, 0);
	void *objs[32], *more[32], *one, *kept;
	struct pool_stats st;
	unsigned int i, round;

	for (round = 0; round < 100; round++) {
		ck_assert_uint_eq(pool_alloc_bulk(p, objs, 32), 32);
		for (i = 0; i < 32; i++)
			memset(objs[i], (int)round, 64);
		pool_free_bulk(p, objs, 32);          /* into the magazine after the first round */
	}
	st = test_stats(p);
	ck_assert_uint_eq(st.used, st.cached);
	ck_assert_uint_ge(st.cached, 32);
	/* single allocations drain the magazine once the list is empty */
	for (i = 0; i < 32; i++)
		ck_assert_ptr_nonnull(more[i] = pool_alloc(p));
	one = pool_alloc(p);
	ck_assert_ptr_nonnull(one);
	pool_free(p, one);
	for (i = 0; i < 32; i++)
		pool_free(p, more[i]);
	/* a NULL among them: the slow path skips it */
	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 32), 32);
	kept = objs[7];
	objs[7] = NULL;
	pool_free_bulk(p, objs, 32);
	st = test_stats(p);
	ck_assert_uint_eq(st.used - st.cached, 1);   /* `kept` is still handed out */
	pool_thread_flush();                          /* the magazine is flushed too */
	st = test_stats(p);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_uint_eq(st.used, 1);
	ck_assert_int_eq(pool_destroy(p), -1);        /* one object is still out */
	ck_assert_uint_eq(pool_alloc_bulk(p, objs, 16), 16);
	pool_free_bulk(p, objs, 16);                  /* cached in the magazine: destroy drains it */
	pool_free(p, kept);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

static void bulk_fail_child(void *arg)
{
	struct pool_head *p;
	void *objs[16];
	unsigned int i, full = 0, none = 0;

	(void)arg;
	if (pool_parse_debugging("fail=20", NULL) != 0)
		_exit(10);
	p = pool_create("bulkf", 64, 0);
	for (i = 0; i < 2000; i++) {
		size_t n = pool_alloc_bulk(p, objs, 16);

		if (n == 16) {
			full++;
			pool_free_bulk(p, objs, 16);
		} else if (n == 0) {
			none++;
		} else {
			_exit(11);                 /* neither all nor nothing */
		}
		if (test_stats(p).used != test_stats(p).cached)
			_exit(12);                 /* a failed call kept objects handed out */
	}
	/* 16 draws at 20% each: (0.8)^16 = 2.8% of the calls succeed */
	if (!full || !none)
		_exit(13);
	_exit(0);
}

START_TEST(test_bulk_all_or_nothing_under_fault_injection)
{
	struct death d;

	run_child(bulk_fail_child, NULL, &d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
	              "status 0x%x; stderr:\n%s", d.status, d.out);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* zalloc, destroyed pools                                                                    */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_zalloc_from_a_dirty_cache)
{
	struct pool_head *p = pool_create("zdirty", 200, 0);
	unsigned char *o[32];
	unsigned int i, j;

	for (i = 0; i < 32; i++) {
		o[i] = pool_alloc(p);
		memset(o[i], 0xA5, 200);
	}
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);             /* all in this thread's cache, dirty */
	for (i = 0; i < 32; i++) {
		o[i] = pool_zalloc(p);
		for (j = 0; j < 200; j++)
			ck_assert_uint_eq(o[i][j], 0);
	}
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_destroy_twice_is_an_error)
{
	struct pool_head *p = pool_create("twice", 64, 0);
	struct pool_head *a, *b;
	struct pool_stats st;

	pool_free(p, pool_alloc(p));
	ck_assert_int_eq(pool_destroy(p), 0);
	errno = 0;
	ck_assert_int_eq(pool_destroy(p), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_get_stats(p, &st), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pool_name(p));
	ck_assert_uint_eq(pool_object_size(p), 0);
	pool_gc(p);                      /* no-op */
	pool_flush(p);
	/* the next creations get heads of their own */
	a = pool_create("after1", 64, 0);
	b = pool_create("after2", 64, 0);
	ck_assert_ptr_ne(a, b);
	ck_assert_ptr_ne(a, p);
	ck_assert_ptr_ne(b, p);
	ck_assert_int_eq(pool_destroy(a), 0);
	ck_assert_int_eq(pool_destroy(b), 0);
}
END_TEST

static void alloc_destroyed(void *arg)
{
	struct pool_head *p = pool_create("gone", 64, 0);

	(void)arg;
	pool_destroy(p);
	(void)pool_alloc(p);
}

static void free_destroyed(void *arg)
{
	struct pool_head *p = pool_create("gone", 64, 0), *q = pool_create("other", 64, 0);
	void *o = pool_alloc(q);

	(void)arg;
	pool_destroy(p);
	pool_free(p, o);
}

START_TEST(test_use_after_destroy_is_reported)
{
	static const char *const words[] = { "libpool: FATAL: use of a destroyed pool",
	                                     "in pool 'gone'", "caller: ", NULL };

	expect_death(alloc_destroyed, NULL, SIGABRT, words);
	expect_death(free_destroyed, NULL, SIGABRT, words);
}
END_TEST

static Suite *shared_suite(void)
{
	Suite *s = suite_create("shared");
	TCase *tc;

	tc = tcase_create("Counters");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_counters_add_up_after_cross_thread_traffic);
	suite_add_tcase(s, tc);

	tc = tcase_create("Return");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_gc_floor_in_bytes);
	tcase_add_test(tc, test_objects_in_use_are_kept);
	tcase_add_test(tc, test_idle_memory_comes_back_after_the_window);
	suite_add_tcase(s, tc);

	tc = tcase_create("Bulk");
	tcase_add_test(tc, test_bulk_moves_clusters);
	tcase_add_test(tc, test_bulk_magazine_mixes_with_single_calls);
	tcase_add_test(tc, test_bulk_all_or_nothing_at_a_limit);
	tcase_add_test(tc, test_bulk_all_or_nothing_under_fault_injection);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_add_test(tc, test_zalloc_from_a_dirty_cache);
	tcase_add_test(tc, test_destroy_twice_is_an_error);
	tcase_add_test(tc, test_use_after_destroy_is_reported);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(shared_suite)
