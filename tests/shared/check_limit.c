/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_set_limit() and `pools limit`: the cap on the objects a pool holds from the OS layer is
 * exact, whatever it races with, and any size_t is a cap (SIZE_MAX, "unlimited", included).
 *
 * - The race with a release or a refill is placed, not left to chance: the test hook of the
 *   limit's accounting (pool__limit_test_hook, pool-bucket.h) runs pool_set_limit() exactly
 *   between the two steps of a move (a release has taken objects out of `allocated` and not yet
 *   out of the limit's count; a refill has reserved objects of the limit and not yet counted
 *   them in `allocated`). Before, set_limit rebuilt the count from `allocated` there and the
 *   count went below the truth (to -200 in the release case), so the pool then took more than
 *   its limit from the OS layer.
 * - A limit above LONG_MAX was compared as a signed number and refused every allocation.
 * - Threads allocate while another changes the limit: the count stays exact (ThreadSanitizer
 *   checks the cap's store and loads in its build).
 *
 * Internal test: it sets the hook and reads the limit's count (pool-bucket.h, pool-head-t.h);
 * everything else goes through the public API.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

#include "shared/pool-bucket.h"
#include "slab/pool-limit.h"
#include "base/pool-head-t.h"
#include "testutil.h"

#define LIMIT 1000u

static long limit_count(const struct pool_head *pool)
{
	return atomic_load(&pool->limit_count);
}

/* Allocate from `pool` until NULL (at most `max`), keeping the objects in objs[]; how many. */
static size_t fill(struct pool_head *pool, void **objs, size_t max)
{
	size_t n = 0;

	while (n < max && (objs[n] = pool_alloc(pool)) != NULL)
		n++;
	return n;
}

static void free_all(struct pool_head *pool, void **objs, size_t n)
{
	while (n)
		pool_free(pool, objs[--n]);
}

/* ------------------------------------------------------------------------------------------ */
/* Threads: pool_set_limit() between the two steps of a move                                  */
/* ------------------------------------------------------------------------------------------ */

struct hook_plan {
	struct pool_head *pool;
	int when;                /* 1: after a reservation, 0: before an unreservation */
	size_t limit;            /* what the hook sets */
	int fired;
};

static struct hook_plan plan;

static void set_limit_between(struct pool_head *pool, int reserving)
{
	if (plan.fired || pool != plan.pool || reserving != plan.when)
		return;
	plan.fired = 1;
	ck_assert_int_eq(pool_set_limit(pool, plan.limit), 0);
}

/*
 * pool_flush() takes 200 objects out of `allocated`, then out of the limit's count; the limit
 * is set again in between. The count must stay at `allocated` (0), and the pool must then
 * hand out exactly its limit.
 */
START_TEST(test_set_limit_during_release)
{
	struct pool_head *pool = pool_create("lim-release", 64, 0);
	static void *objs[2 * LIMIT];
	size_t n;

	ck_assert_ptr_nonnull(pool);
	ck_assert_int_eq(pool_set_limit(pool, LIMIT), 0);
	ck_assert_uint_eq(fill(pool, objs, 200), 200);
	free_all(pool, objs, 200);
	pool_thread_flush();
	/* 200 taken in refills from the slab tier of half a magazine (16), but no take reserves
	 * more than 1/64 of the limit (15 of 1,000): 14 takes, 210 */
	ck_assert_uint_eq(test_stats(pool).shared_free, (200 + LIMIT / 64 - 1) / (LIMIT / 64) *
	                  (LIMIT / 64));

	plan = (struct hook_plan){ pool, 0, LIMIT, 0 };
	pool__limit_test_hook = set_limit_between;
	pool_flush(pool);
	pool__limit_test_hook = NULL;
	ck_assert(plan.fired);
	ck_assert_uint_eq(test_stats(pool).allocated, 0);
	ck_assert_int_eq(limit_count(pool), 0);

	n = fill(pool, objs, 2 * LIMIT);
	ck_assert_uint_eq(n, LIMIT);
	ck_assert_uint_eq(test_stats(pool).allocated, LIMIT);
	ck_assert_uint_eq(test_stats(pool).failed, 1);
	free_all(pool, objs, n);
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

/*
 * A refill from the OS layer reserves its objects, then counts them in `allocated`; a limit
 * set for the first time in between must count them too.
 */
START_TEST(test_set_limit_during_refill)
{
	struct pool_head *pool = pool_create("lim-refill", 64, 0);
	static void *objs[2 * LIMIT];
	size_t n;

	ck_assert_ptr_nonnull(pool);
	plan = (struct hook_plan){ pool, 1, LIMIT, 0 };
	pool__limit_test_hook = set_limit_between;
	objs[0] = pool_alloc(pool);
	pool__limit_test_hook = NULL;
	ck_assert_ptr_nonnull(objs[0]);
	ck_assert(plan.fired);
	ck_assert_uint_eq(test_stats(pool).limit, LIMIT);
	ck_assert_int_eq(limit_count(pool), (long)test_stats(pool).allocated);

	n = 1 + fill(pool, objs + 1, 2 * LIMIT - 1);
	ck_assert_uint_eq(n, LIMIT);
	ck_assert_uint_eq(test_stats(pool).allocated, LIMIT);
	free_all(pool, objs, n);
	pool_thread_flush();
	pool_flush(pool);
	ck_assert_int_eq(limit_count(pool), 0);
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

struct churn {
	struct pool_head *pool;
	atomic_int stop;
	size_t got, nulls;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	void *objs[64];
	size_t n;

	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		n = fill(c->pool, objs, 64);
		c->got += n;
		c->nulls += n < 64;
		free_all(c->pool, objs, n);
		if (c->got % 4096 < 64)
			pool_thread_flush();
	}
	pool_thread_flush();
	return NULL;
}

/*
 * Four threads allocate and free while the main thread sets the limit, flushes and collects,
 * 2000 times: at the end, once quiet, the limit's count is exactly what the pool holds above
 * its slabs.
 */
START_TEST(test_set_limit_while_threads_allocate)
{
	static const size_t limits[] = { 0, 50, 300, SIZE_MAX, (size_t)LONG_MAX + 1, 10 };
	struct pool_head *pool = pool_create("lim-threads", 64, 0);
	struct churn c[4];
	pthread_t t[4];
	int i;

	ck_assert_ptr_nonnull(pool);
	for (i = 0; i < 4; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].pool = pool;
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn_main, &c[i]), 0);
	}
	for (i = 0; i < 2000; i++) {
		ck_assert_int_eq(pool_set_limit(pool, limits[i % 6]), 0);
		if (i % 7 == 0)
			pool_flush(pool);
		if (i % 97 == 0)
			pool_gc(pool);
		ck_assert_int_ge(limit_count(pool), 0);
	}
	for (i = 0; i < 4; i++) {
		atomic_store(&c[i].stop, 1);
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	}
	/* the limit counts what the pool holds above its slabs: allocated less what is free there */
	ck_assert_int_eq(limit_count(pool),
	                 (long)(test_stats(pool).allocated - test_stats(pool).slab_free));
	pool_flush(pool);
	ck_assert_uint_eq(test_stats(pool).allocated, 0);
	ck_assert_int_eq(limit_count(pool), 0);
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Limits: caps above LONG_MAX, from the API and from the CLI                                 */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_limit_above_long_max)
{
	static const size_t caps[] = { SIZE_MAX, (size_t)LONG_MAX + 1, LONG_MAX, SIZE_MAX - 1 };
	struct pool_head *pool = pool_create("lim-huge", 64, 0);
	unsigned int i;

	ck_assert_ptr_nonnull(pool);
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		void *o;

		ck_assert_int_eq(pool_set_limit(pool, caps[i]), 0);
		ck_assert_uint_eq(test_stats(pool).limit, caps[i]);
		o = pool_alloc(pool);
		ck_assert_msg(o != NULL, "limit %zu refused an allocation", caps[i]);
		pool_free(pool, o);
		pool_thread_flush();
		pool_flush(pool);
	}
	ck_assert_uint_eq(test_stats(pool).failed, 0);
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

START_TEST(test_cli_limit_above_long_max)
{
	struct pool_head *pool = pool_create("lim-cli", 64, 0);
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	void *o;

	ck_assert_ptr_nonnull(pool);
	f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pool_cli_exec("pools limit lim-cli 18446744073709551615", f), 0);
	ck_assert_int_eq(pool_cli_exec("pools limit lim-cli 9223372036854775808", f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(strstr(out, "Limit of pool 'lim-cli' now 18446744073709551615 objects "
	                     "(was none).") &&
	              strstr(out, "Limit of pool 'lim-cli' now 9223372036854775808 objects "
	                     "(was 18446744073709551615)."), "%s", out);
	free(out);
	ck_assert_uint_eq(test_stats(pool).limit, (size_t)LONG_MAX + 1);
	o = pool_alloc(pool);
	ck_assert_msg(o != NULL, "the CLI's limit refused an allocation");
	pool_free(pool, o);
	pool_thread_flush();
	/* and a number past SIZE_MAX is refused, changing nothing */
	f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pool_cli_exec("pools limit lim-cli 18446744073709551616", f), -1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(strstr(out, "Invalid number of objects"), "%s", out);
	free(out);
	ck_assert_uint_eq(test_stats(pool).limit, (size_t)LONG_MAX + 1);
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

static Suite *limit_suite(void)
{
	Suite *s = suite_create("limit");
	TCase *tc;

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_set_limit_during_release);
	tcase_add_test(tc, test_set_limit_during_refill);
	tcase_add_test(tc, test_set_limit_while_threads_allocate);
	suite_add_tcase(s, tc);

	tc = tcase_create("Limits");
	tcase_add_test(tc, test_limit_above_long_max);
	tcase_add_test(tc, test_cli_limit_above_long_max);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(limit_suite, test_clear_environment)
