/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Run-time debugging switches are safe at any moment: 8 threads allocate, free and hand objects
 * to each other while the main thread flips every option that may change at run time, and the
 * documented recipes, on and off (through pool_parse_debugging() and through the CLI's
 * `pools debug`), with threads exiting and starting between flips. A check switched on must
 * never report an object that was cached before it was on (0 false reports: the process would
 * abort). Afterwards a real write after free is still caught.
 *
 * POOL_SWITCH_FLIPS sets the number of flips of each switch (default 20; make stress runs 100).
 *
 * Public-API test: it includes only <pool/pool.h>; the switches are public.
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

#include <pool/pool.h>

#include "testutil.h"

#define WORKERS 8
#define SLOTS   64

/* Each pair: the word that switches it on, the word that switches it off. */
static const char *const switches[][2] = {
	{ "integrity", "no-integrity" },
	{ "cold-first", "hot-first" },
	{ "poison", "no-poison" },
	{ "no-cache", "cache" },
	{ "no-global", "global" },
	{ "fail=3", "no-fail" },
	{ "no-merge", "merge" },
	/* the recipes of doc/debugging.md that apply at run time */
	{ "integrity,cold-first", "no-integrity,hot-first" },
	{ "integrity,no-cache", "no-integrity,cache" },
	{ "integrity,poison=0x41,cold-first", "no-integrity,no-poison,hot-first" },
};
#define NB_SWITCHES (sizeof(switches) / sizeof(switches[0]))

static struct pool_head *pools[2];
static _Atomic int stop[2];              /* workers with an even / odd id stop on it */
static void *_Atomic handoff[SLOTS];

/* Allocate, write, keep a while, hand some to other threads, free; until told to stop. */
static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	void *mine[SLOTS] = { 0 };
	unsigned int i = 0;

	while (!atomic_load(&stop[id & 1])) {
		struct pool_head *p = pools[i & 1];
		unsigned int s = ((i * 7 + (unsigned int)id) % (SLOTS / 2)) * 2 + (i & 1);
		unsigned char *o;

		if (mine[s]) {
			pool_free(p, mine[s]);
			mine[s] = NULL;
		}
		o = pool_alloc(p);
		if (o) {
			memset(o, (int)id, 96);
			if (i % 5 == 0) {
				/* hand it over: another thread frees it */
				o = atomic_exchange(&handoff[s], o);
				if (o)
					pool_free(pools[s & 1], o);
			} else {
				mine[s] = o;
			}
		}
		if (++i % 4096 == 0)
			pool_thread_flush();
	}
	for (i = 0; i < SLOTS; i++)
		if (mine[i])
			pool_free(pools[i & 1], mine[i]);
	return NULL;
}

/*
 * A thread that caches objects, then sits idle while a switch is flipped, then exits: its exit
 * flushes a cache that no slow path has seen since the switch (the case that reported objects
 * cached before `integrity` was on as written after free).
 */
static pthread_barrier_t park_bar;

static void *parker(void *arg)
{
	void *o[100];
	unsigned int i;

	(void)arg;
	for (i = 0; i < 100; i++)
		o[i] = pool_alloc_flags(pools[i & 1], POOL_F_NO_FAIL);
	for (i = 0; i < 100; i++)
		pool_free(pools[i & 1], o[i]);
	pthread_barrier_wait(&park_bar);      /* cached, idle */
	pthread_barrier_wait(&park_bar);      /* the switch is on: exit at once */
	return NULL;
}

static unsigned int flips(void)
{
	const char *e = getenv("POOL_SWITCH_FLIPS");
	unsigned int n = e ? (unsigned int)strtoul(e, NULL, 10) : 0;

	return n ? n : 20;
}

/* Apply one option string, alternately through the API and through the CLI. */
static void apply(const char *opts, unsigned int how)
{
	char *err = NULL;

	if (how & 1) {
		char line[128], *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		ck_assert_ptr_nonnull(f);
		snprintf(line, sizeof(line), "pools debug %s", opts);
		ck_assert_msg(pool_cli_exec(line, f) == 0, "'%s' refused", line);
		fclose(f);
		free(out);
	} else {
		ck_assert_msg(pool_parse_debugging(opts, &err) == 0, "'%s': %s", opts,
		              err ? err : "?");
	}
}

START_TEST(test_every_switch_at_any_moment)
{
	pthread_t t[WORKERS], park[2];
	unsigned int n = flips(), sw, k, w, round = 0;
	size_t i;

	pools[0] = pool_create("sw-a", 96, 0);
	pools[1] = pool_create("sw-b", 96, 0);
	pthread_barrier_init(&park_bar, NULL, 3);
	for (sw = 0; sw < NB_SWITCHES; sw++) {
		for (k = 0; k < n; k++, round++) {
			atomic_store(&stop[0], 0);
			atomic_store(&stop[1], 0);
			for (w = 0; w < WORKERS; w++)
				ck_assert_int_eq(pthread_create(&t[w], NULL, worker,
				                                 (void *)(uintptr_t)w), 0);
			for (w = 0; w < 2; w++)
				ck_assert_int_eq(pthread_create(&park[w], NULL, parker, NULL), 0);
			pthread_barrier_wait(&park_bar);
			apply(switches[sw][0], round);
			pthread_barrier_wait(&park_bar);
			for (w = 0; w < 2; w++)
				ck_assert_int_eq(pthread_join(park[w], NULL), 0);
			/* half the threads exit (flushing their caches) with the switch on */
			atomic_store(&stop[0], 1);
			for (w = 0; w < WORKERS; w += 2)
				ck_assert_int_eq(pthread_join(t[w], NULL), 0);
			apply(switches[sw][1], round >> 1);
			atomic_store(&stop[1], 1);
			for (w = 1; w < WORKERS; w += 2)
				ck_assert_int_eq(pthread_join(t[w], NULL), 0);
		}
	}
	for (i = 0; i < SLOTS; i++) {
		void *o = atomic_exchange(&handoff[i], NULL);

		if (o)
			pool_free(pools[i & 1], o);
	}
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(pools[0]).used, 0);
	ck_assert_uint_eq(test_stats(pools[1]).used, 0);
}
END_TEST

/*
 * Integrity switched on while another thread creates and destroys pools: a thread that sees
 * the new epoch fills every slot of its caches (pool__tcache_fill_all()), reading the table of
 * pool slots that pool_create() writes under the pool list lock, which the filling thread does
 * not hold. ThreadSanitizer reported that race (make check SAN=thread) until the table's
 * entries were read and written atomically; in the other builds this checks that the fill
 * neither crashes nor reports an object that was cached before the switch.
 */
static _Atomic int churn_stop;

static void *pool_churn(void *arg)
{
	char name[32];
	unsigned int i = 0;

	(void)arg;
	while (!atomic_load(&churn_stop)) {
		struct pool_head *p;
		void *o;

		snprintf(name, sizeof(name), "churn-%u", i++ % 8);
		p = pool_create(name, 64 + 16 * (i % 8), 0);
		ck_assert_ptr_nonnull(p);
		o = pool_alloc(p);
		pool_free(p, o);
		pool_thread_flush();
		/* EBUSY: a filler stayed in its cache section through the drain's bounded wait (a
		 * loaded machine, or TSan): the pool stays usable, and the next try destroys it */
		while (pool_destroy(p) != 0) {
			ck_assert_int_eq(errno, EBUSY);
			sched_yield();
		}
	}
	return NULL;
}

static void *integrity_filler(void *arg)
{
	struct pool_head *p = arg;
	void *o[8];
	unsigned int i;

	while (!atomic_load(&churn_stop)) {
		for (i = 0; i < 8; i++)
			o[i] = pool_alloc_flags(p, POOL_F_NO_FAIL);
		for (i = 0; i < 8; i++)
			pool_free(p, o[i]);
	}
	pool_thread_flush();
	return NULL;
}

START_TEST(test_integrity_switched_while_pools_are_created)
{
	struct pool_head *p = pool_create("sw-fill", 96, 0);
	pthread_t churn, fill[2];
	unsigned int k, w, n = flips() * 10;

	atomic_store(&churn_stop, 0);
	ck_assert_int_eq(pthread_create(&churn, NULL, pool_churn, NULL), 0);
	for (w = 0; w < 2; w++)
		ck_assert_int_eq(pthread_create(&fill[w], NULL, integrity_filler, p), 0);
	for (k = 0; k < n; k++) {
		apply("integrity", 0);
		sched_yield();
		apply("no-integrity", 0);
	}
	atomic_store(&churn_stop, 1);
	ck_assert_int_eq(pthread_join(churn, NULL), 0);
	for (w = 0; w < 2; w++)
		ck_assert_int_eq(pthread_join(fill[w], NULL), 0);
	ck_assert_uint_eq(test_stats(p).used, 0);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* Integrity switched on at run time still catches a real write after free. */
static void write_after_free(void *arg)
{
	struct pool_head *p = pool_create("waf", 128, 0);
	unsigned char *o = pool_alloc(p), *q;

	(void)arg;
	pool_free(p, o);                       /* cached before the switch */
	pool_parse_debugging("integrity", NULL);
	q = pool_alloc(p);                     /* the cache was filled when the switch was seen */
	pool_free(p, q);
	q[40] = 0x66;                          /* the bug */
	(void)pool_alloc(p);
}

START_TEST(test_real_write_after_free_still_caught)
{
	static const char *const words[] = { "write after free detected by the integrity check",
	                                     "pool 'waf'", NULL };

	test_expect_write_after_free(write_after_free, words);
}
END_TEST

static Suite *switches_suite(void)
{
	Suite *s = suite_create("switches");
	TCase *tc = tcase_create("Threads");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_every_switch_at_any_moment);
	tcase_add_test(tc, test_integrity_switched_while_pools_are_created);
	tcase_add_test(tc, test_real_write_after_free_still_caught);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(switches_suite)
