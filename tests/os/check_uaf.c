/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * `uaf` counts what it costs: every object is a mapping of pool__uaf_object_cost() bytes and two
 * of the process's vm.max_map_count mappings. Thread caches under `-dMuaf,cache` hold a budget's
 * worth of pages (not of strides), the backend keeps its mappings under a ceiling, trimming its
 * quarantine first, and fails only when live objects alone fill it.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

#include "os/pool-uaf.h"
#include "testutil.h"

#define CACHE_BYTES  (512u << 10)  /* each thread's budget, set before the first pool */
#define IDLE_THREADS 6
/*
 * Objects each idle thread allocates and frees. Counted at their stride (64 bytes), 512 KiB of
 * budget would keep all 6000 in each cache: 36000 objects, 72000 mappings, more than the 65530
 * Linux allows, and the sixth thread's allocations fail.
 */
#define PER_THREAD   6000u

static void set_flags(const char *s)
{
	char *err = NULL;

	ck_assert_msg(pool_parse_debugging(s, &err) == 0, "%s: %s", s, err ? err : "?");
}

/* Mappings the process holds now: the lines of /proc/self/maps. */
static size_t count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n = 0;
	int c;

	ck_assert_ptr_nonnull(f);
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static size_t max_map_count(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	unsigned long v = 65530;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65530;
		fclose(f);
	}
	return v;
}

/* ------------------------------------------------------------------------------------------ */

struct idle_thread {
	pthread_t tid;
	struct pool_head *pool;
	void **objs;
	unsigned int nulls;
	pthread_mutex_t *lock;
	pthread_cond_t *cond;
	int *done;                 /* set when this thread's objects are freed (its cache holds some) */
	int *quit;                 /* set by main: the thread may exit */
};

static void *idle_main(void *arg)
{
	struct idle_thread *t = arg;
	unsigned int i;

	for (i = 0; i < PER_THREAD; i++) {
		t->objs[i] = pool_alloc(t->pool);
		t->nulls += !t->objs[i];
	}
	for (i = 0; i < PER_THREAD; i++)
		pool_free(t->pool, t->objs[i]);
	/* now idle, its cache full, until main is done */
	pthread_mutex_lock(t->lock);
	*t->done = 1;
	pthread_cond_broadcast(t->cond);
	while (!*t->quit)
		pthread_cond_wait(t->cond, t->lock);
	pthread_mutex_unlock(t->lock);
	return NULL;
}

START_TEST(test_uaf_caches_pay_pages)
{
	static struct idle_thread th[IDLE_THREADS];
	static void *objs[IDLE_THREADS][PER_THREAD];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	struct pool_config cfg;
	struct pool_stats st;
	struct pool_head *p;
	size_t cost, maps;
	int done[IDLE_THREADS] = { 0 }, quit = 0, i;
	void *mine[1000];
	unsigned int k;

	memset(&cfg, 0, sizeof(cfg));
	cfg.cache_bytes = CACHE_BYTES;
	ck_assert_int_eq(pool_configure(&cfg), 0);
	set_flags("uaf,cache");
	p = pool_create("uaf-idle", 64, 0);
	ck_assert_ptr_nonnull(p);
	cost = pool__uaf_object_cost(64, 16);
	ck_assert_uint_gt(cost, 64);
	/* one thread after the other, each left idle with a full cache */
	for (i = 0; i < IDLE_THREADS; i++) {
		th[i] = (struct idle_thread){ .pool = p, .objs = objs[i], .lock = &lock,
		                               .cond = &cond, .done = &done[i], .quit = &quit };
		ck_assert_int_eq(pthread_create(&th[i].tid, NULL, idle_main, &th[i]), 0);
		pthread_mutex_lock(&lock);
		while (!done[i])
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
		ck_assert_msg(th[i].nulls == 0, "thread %d: %u of %u allocations returned NULL", i,
		              th[i].nulls, PER_THREAD);
	}
	/* the idle caches hold a budget of pages each, not a budget of 64-byte strides */
	st = test_stats(p);
	ck_assert_msg(st.cached * cost <= (size_t)IDLE_THREADS * CACHE_BYTES,
	              "%zu objects of %zu bytes cached by %d threads of %u bytes", (size_t)st.cached,
	              cost, IDLE_THREADS, CACHE_BYTES);
	/* and the process still has mappings for itself and for new objects */
	for (k = 0; k < 1000; k++) {
		mine[k] = pool_alloc(p);
		ck_assert_msg(mine[k] != NULL, "allocation %u failed with idle caches", k);
	}
	maps = count_maps();
	ck_assert_msg(maps < max_map_count() - max_map_count() / 8,
	              "%zu mappings of at most %zu", maps, max_map_count());
	for (k = 0; k < 1000; k++)
		pool_free(p, mine[k]);
	st = test_stats(p);
	ck_assert_uint_eq(st.failed, 0);

	pthread_mutex_lock(&lock);
	quit = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < IDLE_THREADS; i++)
		pthread_join(th[i].tid, NULL);
	pool_thread_flush();
	st = test_stats(p);
	ck_assert_uint_eq(st.used, 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */

#define CEILING      202u          /* the two tables and 100 objects */
#define CEILING_OBJS 100u
#define OTHER_MAPS   16u           /* mappings the rest of the process may add meanwhile (the
                                      sanitizers' allocators map on demand) */

START_TEST(test_uaf_quarantine_yields_to_new_objects)
{
	struct pool_stats st;
	struct pool_head *p;
	void *live[CEILING_OBJS + 1];
	size_t before;
	unsigned int i;

	struct pool_config cfg = { .release = POOL_RELEASE_CALLER };

	/*
	 * No releaser thread, whose stack (and a sanitizer's state for it) would be mapped while
	 * the mappings are counted (where a pool exists already, CK_FORK=no, this is refused and
	 * OTHER_MAPS covers it).
	 */
	pool_configure(&cfg);
	set_flags("uaf");
	pool__uaf_set_map_ceiling(CEILING);
	p = pool_create("uaf-ceiling", 64, 0);
	ck_assert_ptr_nonnull(p);
	before = count_maps();
	/* ten times the ceiling, freed one by one: the quarantine must make room each time */
	for (i = 0; i < 10 * CEILING_OBJS; i++) {
		void *o = pool_alloc(p);

		ck_assert_msg(o != NULL, "allocation %u failed with nothing live", i);
		pool_free(p, o);
	}
	ck_assert_msg(count_maps() <= before + CEILING + OTHER_MAPS,
	              "%zu mappings, %zu before, ceiling %u", count_maps(), before, CEILING);
	/* live objects alone fill it: then, and only then, NULL */
	for (i = 0; i < CEILING_OBJS; i++) {
		live[i] = pool_alloc(p);
		ck_assert_msg(live[i] != NULL, "live object %u of %u failed", i, CEILING_OBJS);
	}
	errno = 0;
	live[CEILING_OBJS] = pool_alloc(p);
	ck_assert_ptr_null(live[CEILING_OBJS]);
	ck_assert_int_eq(errno, ENOMEM);
	st = test_stats(p);
	ck_assert_uint_eq(st.failed, 1);
	ck_assert_uint_eq(st.used, CEILING_OBJS);
	ck_assert_msg(count_maps() <= before + CEILING + OTHER_MAPS,
	              "%zu mappings, %zu before, ceiling %u", count_maps(), before, CEILING);
	/* one freed object makes room for the next */
	pool_free(p, live[0]);
	live[0] = pool_alloc(p);
	ck_assert_ptr_nonnull(live[0]);
	for (i = 0; i < CEILING_OBJS; i++)
		pool_free(p, live[i]);
	st = test_stats(p);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

static Suite *uaf_suite(void)
{
	Suite *s = suite_create("uaf");
	TCase *tc = tcase_create("Mappings");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_uaf_caches_pay_pages);
	tcase_add_test(tc, test_uaf_quarantine_yields_to_new_objects);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(uaf_suite)
