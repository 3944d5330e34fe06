/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The assertion tiers (src/base/pool-assert.h): an assertion's condition is compiled in every build
 * and evaluated only in its tier; a lock's owner word tells its holder; and, in builds with the
 * tiers, a state broken on purpose is caught with the assertion's one line on stderr and an
 * abort: a thread's budget count out of line with its slot (tier 1, pool__slot_check()), a function
 * whose contract wants the registry lock called without it, a bucket whose books do not balance,
 * and (tier 2) a NULL pointer in a magazine (the inline fast path relies on there being none).
 * The death tests are skipped, with the reason printed, in builds without their tier.
 *
 * Internal test: it includes "pool-head-t.h", "pool-lock.h" and "pool-thread.h" to reach a
 * thread's caches, a pool's buckets and the registry's drain, which the public API does not show.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <pool/pool.h>

#include "base/pool-assert.h"
#include "base/pool-head-t.h"
#include "base/pool-lock.h"
#include "tcache/pool-thread.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* Every build                                                                                */
/* ------------------------------------------------------------------------------------------ */

static int evaluated;

static int note_evaluated(void)
{
	evaluated++;
	return 1;
}

START_TEST(test_condition_compiled_and_evaluated_in_its_tier_only)
{
	evaluated = 0;
	POOL_ASSERT(note_evaluated());
	ck_assert_int_eq(evaluated, POOL_ASSERTS >= 1);
	evaluated = 0;
	if (POOL_ASSERTS >= 2)
		POOL_ASSERT(note_evaluated());
	ck_assert_int_eq(evaluated, POOL_ASSERTS >= 2);
}
END_TEST

static struct pool_lock test_lock = POOL_LOCK_INITIALIZER;

static void *held_elsewhere(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)pool__lock_held(&test_lock);
}

START_TEST(test_lock_owner_word_names_the_holder_only)
{
	pthread_t t;
	void *other;
	int took;

	ck_assert_int_eq(pool__lock_held(&test_lock), 0);
	pool__lock(&test_lock);
	ck_assert_int_eq(pool__lock_held(&test_lock), 1);
	ck_assert_int_eq(pthread_create(&t, NULL, held_elsewhere, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &other), 0);
	ck_assert_ptr_null(other);
	/* the holder goes on under its own hold, and its leave keeps the lock */
	took = pool__lock_enter(&test_lock);
	ck_assert_int_eq(took, 0);
	pool__lock_leave(&test_lock, took);
	ck_assert_int_eq(pool__lock_held(&test_lock), 1);
	pool__unlock(&test_lock);
	ck_assert_int_eq(pool__lock_held(&test_lock), 0);
	ck_assert_int_eq(pool__lock_try(&test_lock), 0);
	ck_assert_int_eq(pool__lock_held(&test_lock), 1);
	pool__unlock(&test_lock);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Tier 1: a broken state is caught                                                           */
/* ------------------------------------------------------------------------------------------ */

/* The calling thread's caches, registered by an allocation from `pool`. */
static struct pool_thread_caches *own_caches(struct pool_head *pool)
{
	struct pool_thread *self;
	unsigned int dbg;

	pool_free(pool, pool_alloc(pool));
	self = pool__thread_self(&dbg);
	ck_assert_ptr_nonnull(self->caches);
	ck_assert_uint_ne(pool->ro.index, 0);
	return self->caches;
}

static void slot_count_broken(void *arg)
{
	struct pool_head *pool = pool_create("assert_slot", 64, 0);
	struct pool_thread_caches *c = own_caches(pool);
	unsigned int i;

	(void)arg;
	/* the slot now counts an object it does not hold */
	c->slot[pool->ro.index].reserved_objs++;
	/* a refill loads part of a magazine: the allocation that empties it reloads, and checks */
	for (i = 0; i < 4096; i++)
		pool_alloc(pool);
}

START_TEST(test_slot_count_out_of_line_aborts)
{
	static const char *const words[] = {
		"libpool: assertion failed: sl->reserved_objs == pool__slot_objs(ctx, s)",
		"pool-magazine.h:", "in pool__slot_check)", NULL
	};

	expect_death(slot_count_broken, NULL, SIGABRT, words);
}
END_TEST

static void drain_end_unlocked(void *arg)
{
	(void)arg;
	pool__thread_drain_end();
}

START_TEST(test_contract_without_its_lock_aborts)
{
	static const char *const words[] = {
		"libpool: assertion failed: pool__lock_held(&registry_lock)",
		"in pool__thread_drain_end)", NULL
	};

	expect_death(drain_end_unlocked, NULL, SIGABRT, words);
}
END_TEST

static void books_broken(void *arg)
{
	struct pool_head *pool = pool_create("assert_books", 64, 0);
	unsigned int i;

	(void)arg;
	/* every bucket claims an object the OS layer never gave */
	for (i = 0; i < pool->nbuckets; i++)
		atomic_fetch_add(&pool->buckets[i].allocated, 1);
	/* the first allocation counts objects from the OS layer in one of them */
	pool_alloc(pool);
}

START_TEST(test_bucket_books_unbalanced_abort)
{
	static const char *const words[] = {
		"libpool: assertion failed: pool__bucket_books_ok(b)", "in count_move)", NULL
	};

	expect_death(books_broken, NULL, SIGABRT, words);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Tier 2: a walk finds what no count shows                                                   */
/* ------------------------------------------------------------------------------------------ */

static void null_in_magazine(void *arg)
{
	struct pool_head *pool = pool_create("assert_walk", 64, 0);
	struct pool_thread_caches *c = own_caches(pool);
	void *objs[POOL_CLUSTER_MAX + 1] = { NULL };
	unsigned int i, n = pool->cluster + 1;

	(void)arg;
	for (i = 0; i < n; i++)
		ck_assert_ptr_nonnull(objs[i] = pool_alloc(pool));
	pool_free(pool, objs[0]);
	/* the loaded magazine's one pointer is lost: every count still adds up */
	c->tc[pool->ro.index].base[0] = NULL;
	/* the magazine fills, and the free after that makes room: the slot is walked */
	for (i = 1; i < n; i++)
		pool_free(pool, objs[i]);
}

START_TEST(test_null_in_magazine_found_by_walk)
{
	static const char *const words[] = {
		"libpool: assertion failed: sl->loaded->obj[i]", "in walk_slot)", NULL
	};

	expect_death(null_in_magazine, NULL, SIGABRT, words);
}
END_TEST

static Suite *assert_suite(void)
{
	Suite *s = suite_create("assert");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_condition_compiled_and_evaluated_in_its_tier_only);
	tcase_add_test(tc, test_lock_owner_word_names_the_holder_only);
	suite_add_tcase(s, tc);

	tc = tcase_create("Misuse");
	tcase_set_timeout(tc, 60);
	if (POOL_ASSERTS >= 1) {
		tcase_add_test(tc, test_slot_count_out_of_line_aborts);
		tcase_add_test(tc, test_contract_without_its_lock_aborts);
		tcase_add_test(tc, test_bucket_books_unbalanced_abort);
	} else {
		printf("check_assert: Misuse skipped: no assertion tier in this build "
		       "(POOL_ASSERTS=0; make DEBUG=1, DEBUG=2 or SAN= have one)\n");
	}
	if (POOL_ASSERTS >= 2)
		tcase_add_test(tc, test_null_in_magazine_found_by_walk);
	else
		printf("check_assert: the tier-2 walk's case skipped: POOL_ASSERTS=%d "
		       "(make DEBUG=2 has it)\n", POOL_ASSERTS);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(assert_suite)
