/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Internals of the core tiers that the public API cannot show: thread ids are recycled (5000
 * threads one after another need a couple of registry slots), fork() never hangs on a
 * shared-list head held BUSY by a thread that died inside its BUSY window (the child resets it
 * and counts what it held as lost), nor does a refill (it goes round the buckets a bounded
 * number of times, then grows the pool), and the pool head's caller table counts live objects.
 *
 * Internal test: it includes "pool-head-t.h" and "pool-tcache.h" to read a pool head's buckets
 * and caller table and a thread's registry id, and to hold a head BUSY, none of which the
 * public API shows.
 */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "tcache/pool-tcache.h"
#include "tcache/pool-thread.h"
#include "testutil.h"

static struct pool_head *churn_pool;
static _Atomic unsigned int churn_max_id;

static _Atomic unsigned int churn_null;

static void *churn_thread(void *arg)
{
	void *o = pool_alloc(churn_pool);
	unsigned int id;

	(void)arg;
	churn_null += !o;
	pool_free(churn_pool, o);
	id = pool__thread_id(pool__thread_self(&id));
	if (id > churn_max_id)
		churn_max_id = id;
	return NULL;
}

START_TEST(test_thread_churn_5000)
{
	unsigned int i, errors = 0;

	churn_pool = pool_create("churn", 64, 0);
	for (i = 0; i < 5000; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
			errors++;
	}
	ck_assert_uint_eq(errors, 0);
	ck_assert_uint_eq(churn_null, 0);
	/* ids are recycled: one thread at a time never needs more than a couple */
	ck_assert_uint_le(churn_max_id, 4);
	ck_assert_uint_eq(test_stats(churn_pool).used, 0);
	/* one refill from the slab tier went round from thread to thread */
	ck_assert_uint_le(test_stats(churn_pool).allocated, test_slab_refill(churn_pool));
}
END_TEST

/*
 * A thread died inside its BUSY window (asynchronous cancellation, a longjmp out of a signal
 * handler): bucket 0's head stays BUSY forever. fork() must not wait for it without bound: it
 * gives up after a bounded wait, the parent leaves the head to its (dead) owner, and the child
 * resets it, counting the objects its list held as lost, and allocates normally.
 */
/*
 * A pool named `name` whose 64 objects of 64 bytes lie in the shared lists, in bucket *b, whose
 * head this thread then holds BUSY, playing its dead owner: returns the pool, and the head it
 * swapped out in *saved.
 */
static struct pool_head *stock_and_hold(const char *name, int *b, struct pool_mag **saved)
{
	struct pool_head *p = pool_create_aligned(name, 64, 0, 0);
	void *o[64];
	int i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 64; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	for (i = 0; i < 64; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).shared_free, 64);
	ck_assert_uint_eq(test_stats(p).allocated, 64);
	for (i = 0; !p->buckets[i].free_objects; i++)
		;
	*b = i;
	*saved = atomic_exchange(&p->buckets[i].free_list, POOL_BUSY);
	ck_assert_ptr_ne(*saved, POOL_BUSY);
	return p;
}

START_TEST(test_fork_with_a_head_held_forever)
{
	struct pool_head *p;
	struct pool_mag *saved;
	struct pool_stats st;
	void *o[64];
	int status, i;
	pid_t pid;

	p = stock_and_hold("stuck", &i, &saved);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pool_stats cs;

		pool_get_stats(p, &cs, sizeof(cs));
		if (cs.lost == 0 || cs.lost > 64 || cs.shared_free + cs.lost != 64)
			_exit(2);
		for (i = 0; i < 64; i++)
			if (!(o[i] = pool_alloc(p)))
				_exit(3);
		for (i = 0; i < 64; i++)
			pool_free(p, o[i]);
		pool_thread_flush();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	/* the parent's head is still its owner's: nothing was lost here */
	ck_assert_ptr_eq(atomic_load(&p->buckets[i].free_list), POOL_BUSY);
	atomic_store(&p->buckets[i].free_list, saved);
	st = test_stats(p);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.shared_free, 64);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * A refill that meets the one stocked bucket BUSY goes round the buckets again, a bounded number
 * of times (pool-bucket.c, POP_BUSY_ROUNDS and POP_BUSY_YIELDS): held for ever by a dead owner,
 * the head does not hold the refill, which grows the pool from the slab tier instead and leaves
 * the stuck list as it was. (That the rounds keep a producer/consumer handover from growing is
 * check_shared.c's.)
 */
START_TEST(test_refill_passes_a_head_held_forever)
{
	struct pool_head *p;
	struct pool_mag *saved;
	struct pool_stats before, st;
	void *extra;
	int i;

	p = stock_and_hold("stuck-refill", &i, &saved);
	before = test_stats(p);
	ck_assert_ptr_nonnull(extra = pool_alloc(p));
	ck_assert_ptr_eq(atomic_load(&p->buckets[i].free_list), POOL_BUSY);
	atomic_store(&p->buckets[i].free_list, saved);
	st = test_stats(p);
	ck_assert_uint_gt(st.allocated, before.allocated);      /* grown from the slab tier */
	ck_assert_uint_eq(st.shared_free, 64);                  /* the stuck list untouched */
	ck_assert_uint_eq(st.shared_get_objects, before.shared_get_objects);
	pool_free(p, extra);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).used, 0);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

void *alloc_from_here(struct pool_head *p) __attribute__((noinline));
void *alloc_from_here(struct pool_head *p)
{
	return pool_alloc(p);
}

/*
 * The caller table of `-dM caller` (the pool head's callers[]): the live count of the function
 * that allocated rises with each object it holds and comes back to 0 as they are freed.
 * (check_dump.c checks what `pools show detailed` prints from it.)
 */
START_TEST(test_caller_live_table)
{
	struct pool_head *p;
	void *o[5];
	int i, found = 0;

	ck_assert_int_eq(pool_parse_debugging("caller", NULL), 0);
	p = pool_create("traced", 64, 0);
	for (i = 0; i < 5; i++)
		o[i] = alloc_from_here(p);
	for (i = 0; i < (int)POOL_CALLER_SLOTS; i++) {
		uintptr_t c = atomic_load(&p->callers[i].caller);
		Dl_info info;

		if (c && dladdr((void *)c, &info) && info.dli_sname &&
		    !strcmp(info.dli_sname, "alloc_from_here")) {
			ck_assert_int_eq(atomic_load(&p->callers[i].live), 5);
			found = 1;
		}
	}
	ck_assert(found);
	for (i = 0; i < 5; i++)
		pool_free(p, o[i]);
	for (i = 0; i < (int)POOL_CALLER_SLOTS; i++)
		ck_assert_int_eq(atomic_load(&p->callers[i].live), 0);
}
END_TEST

/*
 * pool__copy_nonnull(), the bulk calls' copy into a magazine: for every length up to three
 * blocks of four and a tail, 1 and an exact copy when no pointer is NULL; 0 wherever the one
 * NULL falls (first, inside or after a block of four, last).
 */
START_TEST(test_copy_nonnull)
{
	void *src[13], *dst[13];
	size_t n, i, at;

	for (i = 0; i < 13; i++)
		src[i] = (char *)dst + 8 * (i + 1);
	for (n = 0; n <= 13; n++) {
		memset(dst, 0, sizeof(dst));
		ck_assert_int_eq(pool__copy_nonnull(dst, src, n), 1);
		ck_assert_int_eq(memcmp(dst, src, n * sizeof(*src)), 0);
		for (i = n; i < 13; i++)
			ck_assert_ptr_null(dst[i]);
		for (at = 0; at < n; at++) {
			void *keep = src[at];

			src[at] = NULL;
			ck_assert_msg(pool__copy_nonnull(dst, src, n) == 0, "n %zu, NULL at %zu", n, at);
			src[at] = keep;
		}
	}
}
END_TEST

/*
 * pool__copy_skip_null(): NULL entries skipped wherever they fall, at most `room` written, and
 * *consumed the entries up to the last one written (all of src[] when room was left); without
 * NULL, a plain copy of min(n, room).
 */
START_TEST(test_copy_skip_null)
{
	void *src[13], *dst[13];
	size_t n, room, at, w, used, i, j;

	for (i = 0; i < 13; i++)
		src[i] = (char *)dst + 8 * (i + 1);
	for (n = 0; n <= 13; n++)
		for (room = 0; room <= 13; room++) {
			w = pool__copy_skip_null(dst, room, src, n, &used);
			ck_assert_uint_eq(w, n < room ? n : room);
			ck_assert_uint_eq(used, w);
			ck_assert_int_eq(memcmp(dst, src, w * sizeof(*src)), 0);
			for (at = 0; at < n; at++) {
				void *keep = src[at];
				size_t want = room < n - 1 ? room : n - 1;

				src[at] = NULL;
				memset(dst, 0, sizeof(dst));
				w = pool__copy_skip_null(dst, room, src, n, &used);
				ck_assert_msg(w == want, "n %zu, room %zu, NULL at %zu: %zu written", n, room,
				              at, w);
				/* what was written is src[] without the NULL, in order */
				for (i = 0, j = 0; j < w; i++)
					if (src[i])
						ck_assert_ptr_eq(dst[j++], src[i]);
				/* to the end of src[] when room was left, else just past the last one */
				ck_assert_uint_eq(used, w < room ? n : i);
				src[at] = keep;
			}
		}
}
END_TEST

static Suite *tier_suite(void)
{
	Suite *s = suite_create("tier");
	TCase *tc = tcase_create("Threads");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_thread_churn_5000);
	tcase_add_test(tc, test_fork_with_a_head_held_forever);
	tcase_add_test(tc, test_refill_passes_a_head_held_forever);
	suite_add_tcase(s, tc);

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_caller_live_table);
	tcase_add_test(tc, test_copy_nonnull);
	tcase_add_test(tc, test_copy_skip_null);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(tier_suite)
