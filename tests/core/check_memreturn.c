/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Memory return: after a spike, one pool_gc(NULL) gives back everything not in use, keeping no
 * floor, and the process's resident memory falls; objects still in use are never released,
 * by pool_gc() nor by pool_trim(); pool_trim() returns the pages of what went back.
 *
 * Public-API test: it includes only <pool/pool.h>; what it checks is in pool_get_stats() and
 * the process's RSS.
 *
 * The spike: 8 threads allocate 34 MiB each (272 MiB of 16 KiB buffers, 4 KiB pages, 1 KiB
 * connections and 256-byte tasks), touching every byte, then each frees the objects another
 * thread allocated. Half of the threads then exit (their caches are flushed by the thread-exit
 * destructor); the other half call pool_thread_flush() and park. Then pool_gc(NULL).
 *
 * Under AddressSanitizer or ThreadSanitizer the process's RSS does not reflect what the library
 * gave back: the sanitizer maps shadow memory for every byte touched and keeps it, and with
 * USE_JEMALLOC=0 its allocator replaces the C library's and quarantines freed memory. So only
 * the RSS assertion is skipped there (with a message); every counter assertion still runs.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pool/pool.h>

#include "testutil.h"

#if TEST_ASAN || TEST_TSAN
#define SAN_REPLACES_MALLOC 1
#endif

/*
 * ThreadSanitizer's shadow memory made the 272 MiB spike cost 1.5 GiB of RSS, too much for the
 * shared test machine: under it the spike is a quarter as big (the RSS assertion is skipped
 * there anyway; every counter assertion runs).
 */
#define SPIKE_DIVISOR (TEST_TSAN ? 4 : 1)

#define NTHREADS 8
#define MiB (1024ul * 1024ul)

static const struct spike_pool {
	const char *name;
	size_t size;
	size_t bytes_per_thread;
} spike_pools[] = {
	{ "buf16k", 16384, 16 * MiB },
	{ "buf4k", 4096, 8 * MiB },
	{ "conn", 1024, 6 * MiB },
	{ "task", 256, 4 * MiB },
};
#define NPOOLS (sizeof(spike_pools) / sizeof(spike_pools[0]))

static struct pool_head *pools[NPOOLS];
static void **objs[NTHREADS][NPOOLS];
static size_t nobjs[NPOOLS];
static pthread_barrier_t allocated_bar, peak_bar, freed_bar, measured_bar;

/* Resident bytes of this process (second field of /proc/self/statm, in pages). */
static size_t rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%lu %lu", &size, &resident), 2);
	fclose(f);
	return resident * (size_t)sysconf(_SC_PAGESIZE);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *spike_thread(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	unsigned int victim = (id + 1) % NTHREADS;
	size_t p, i;

	for (p = 0; p < NPOOLS; p++) {
		for (i = 0; i < nobjs[p]; i++) {
			void *o = pool_alloc(pools[p]);

			if (!o)
				abort();
			memset(o, (int)(id + 1), spike_pools[p].size);
			objs[id][p][i] = o;
		}
	}
	pthread_barrier_wait(&allocated_bar);
	pthread_barrier_wait(&peak_bar);        /* the main thread measured the peak */
	/* free what the next thread allocated: the objects cross threads */
	for (p = 0; p < NPOOLS; p++)
		for (i = 0; i < nobjs[p]; i++)
			pool_free(pools[p], objs[victim][p][i]);
	if (id < NTHREADS / 2)
		return NULL;            /* exits: the thread-exit destructor flushes its caches */
	pool_thread_flush();            /* goes idle: flushes, then parks */
	pthread_barrier_wait(&freed_bar);
	pthread_barrier_wait(&measured_bar);
	return NULL;
}

static void log_stats(const char *when)
{
	struct pool_stats st;
	size_t p;

	for (p = 0; p < NPOOLS; p++) {
		ck_assert_int_eq(pool_get_stats(pools[p], &st, sizeof(st)), 0);
		printf("check_memreturn: %-9s %-7s allocated %7zu used %7zu needed_avg %7zu "
		       "shared_free %7zu slab_free %7zu (%zu MiB in %zu slabs)\n", when,
		       spike_pools[p].name, st.allocated, st.used, st.needed_avg, st.shared_free,
		       st.slab_free, st.slab_bytes / MiB, st.slabs);
	}
}

/* Every pool holds no more than max(used, needed_avg * 5/4) plus a magazine (a loose bound). */
static void check_gc_bound(const struct pool_config *cfg)
{
	size_t p;

	for (p = 0; p < NPOOLS; p++) {
		struct pool_stats st;
		size_t keep;

		ck_assert_int_eq(pool_get_stats(pools[p], &st, sizeof(st)), 0);
		ck_assert_uint_eq(st.used, 0);
		ck_assert_uint_eq(st.cached, 0);
		keep = st.needed_avg + st.needed_avg / 4;
		if (keep < st.used)
			keep = st.used;
		/* above the slabs: what went down is free in its slab until the slab goes */
		ck_assert_msg(st.allocated - st.slab_free <= keep + cfg->cluster,
		              "%s: allocated %zu (%zu free in slabs) > max(used %zu, needed_avg %zu "
		              "* 5/4) + %u", spike_pools[p].name, st.allocated, st.slab_free, st.used,
		              st.needed_avg, cfg->cluster);
		ck_assert_uint_eq(st.allocated, st.shared_free + st.slab_free);
	}
}

START_TEST(test_spike)
{
	pthread_t th[NTHREADS];
	struct pool_config cfg;
	size_t base, peak, after, spike_bytes = 0;
	double t0, t1, t2, t3, t4, t5;
	const char *os_layer;
	size_t p;
	unsigned int t;

	pool_get_config(&cfg);
	for (p = 0; p < NPOOLS; p++) {
		pools[p] = pool_create(spike_pools[p].name, spike_pools[p].size, 0);
		ck_assert_ptr_nonnull(pools[p]);
		nobjs[p] = spike_pools[p].bytes_per_thread / SPIKE_DIVISOR / spike_pools[p].size;
		spike_bytes += NTHREADS * spike_pools[p].bytes_per_thread / SPIKE_DIVISOR;
		for (t = 0; t < NTHREADS; t++) {
			objs[t][p] = calloc(nobjs[p], sizeof(void *));
			ck_assert_ptr_nonnull(objs[t][p]);
		}
	}
	ck_assert_uint_ge(spike_bytes, 256 * MiB / SPIKE_DIVISOR);
	os_layer = test_os_stats().layer;
	pthread_barrier_init(&allocated_bar, NULL, NTHREADS + 1);
	pthread_barrier_init(&peak_bar, NULL, NTHREADS + 1);
	pthread_barrier_init(&freed_bar, NULL, NTHREADS / 2 + 1);
	pthread_barrier_init(&measured_bar, NULL, NTHREADS / 2 + 1);
	pool_trim();
	base = rss_bytes();
	for (t = 0; t < NTHREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, spike_thread, (void *)(uintptr_t)t),
		                 0);
	pthread_barrier_wait(&allocated_bar);
	peak = rss_bytes();
	log_stats("peak");
	pthread_barrier_wait(&peak_bar);
	for (t = 0; t < NTHREADS / 2; t++)
		ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	pthread_barrier_wait(&freed_bar);
	/* every thread is now gone or idle with empty caches */
	log_stats("idle");
	/*
	 * Nothing is in use any more: the first call gives everything back, with no floor (it
	 * ends the demand window at once, and the need is what is in use); a second one finds
	 * nothing more to do.
	 */
	t0 = now_us();
	pool_gc(NULL);
	t1 = now_us();
	after = rss_bytes();
	log_stats("gc 1");
	check_gc_bound(&cfg);
	t2 = now_us();
	pool_gc(NULL);
	t3 = now_us();
	log_stats("gc 2");
	check_gc_bound(&cfg);
	t4 = now_us();
	pool_trim();
	t5 = now_us();
	/* measurements for doc/tuning.md, printed, never asserted */
	printf("check_memreturn: cost (%s): pool_gc(NULL) pass 1 (releases the spike, then "
	       "trims) %.2f ms, pass 2 (nothing left) %.2f ms, pool_trim() with nothing left to "
	       "return %.3f ms\n",
	       os_layer, (t1 - t0) / 1000.0, (t3 - t2) / 1000.0, (t5 - t4) / 1000.0);
	printf("check_memreturn: spike of %zu MiB of objects; RSS %zu MiB before, %zu MiB at the "
	       "peak, %zu MiB after pool_gc(NULL): %.1f%% of the spike given back (OS layer %s)\n",
	       spike_bytes / MiB, base / MiB, peak / MiB, after / MiB,
	       peak > base ? 100.0 * (double)(peak - (after < peak ? after : peak)) /
	                     (double)(peak - base) : 0.0,
	       os_layer);

	for (p = 0; p < NPOOLS; p++) {
		struct pool_stats st;

		ck_assert_int_eq(pool_get_stats(pools[p], &st, sizeof(st)), 0);
		/* idle: needed_avg came down to used (0), and pool_gc() keeps no floor */
		ck_assert_uint_eq(st.needed_avg, 0);
		ck_assert_uint_eq(st.allocated - st.slab_free, 0);
	}
#ifdef SAN_REPLACES_MALLOC
	printf("check_memreturn: RSS assertion skipped: %s\n", POOL_USE_JEMALLOC ?
	       "the sanitizer's shadow of every byte the spike touched stays mapped, so RSS "
	       "does not show only what was returned (the share above is printed for the record)" :
	       "the sanitizer's allocator keeps freed memory in quarantine and maps shadow "
	       "memory, so RSS does not show what was returned");
#else
	ck_assert_uint_gt(peak, base + spike_bytes / 2);
	ck_assert_msg(peak - after >= (peak - base) / 10 * 8,
	              "RSS fell by %zu MiB, less than 80%% of the spike's %zu MiB",
	              (peak - after) / MiB, (peak - base) / MiB);
#endif
	pthread_barrier_wait(&measured_bar);
	for (t = NTHREADS / 2; t < NTHREADS; t++)
		ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	for (p = 0; p < NPOOLS; p++) {
		for (t = 0; t < NTHREADS; t++)
			free(objs[t][p]);
		ck_assert_int_eq(pool_destroy(pools[p]), 0);
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Objects in use are never released                                                           */
/* ------------------------------------------------------------------------------------------ */

#define LIVE 3000

struct holder {
	struct pool_head *pool;
	unsigned char **live;
	size_t size;
	unsigned int seed;
	pthread_barrier_t *bar;
};

static void fill(unsigned char *o, size_t size, unsigned int seed, size_t i)
{
	size_t k;

	for (k = 0; k < size; k++)
		o[k] = (unsigned char)(seed + i * 7 + k);
}

static int intact(const unsigned char *o, size_t size, unsigned int seed, size_t i)
{
	size_t k;

	for (k = 0; k < size; k++)
		if (o[k] != (unsigned char)(seed + i * 7 + k))
			return 0;
	return 1;
}

/* Holds LIVE objects while another thread collects; churns a second batch meanwhile. */
static void *holder_thread(void *arg)
{
	struct holder *h = arg;
	size_t i, round;
	void *tmp[256];

	for (i = 0; i < LIVE; i++) {
		h->live[i] = pool_alloc(h->pool);
		if (!h->live[i])
			abort();
		fill(h->live[i], h->size, h->seed, i);
	}
	pthread_barrier_wait(h->bar);
	for (round = 0; round < 200; round++) {
		for (i = 0; i < 256; i++)
			tmp[i] = pool_alloc(h->pool);
		for (i = 0; i < 256; i++)
			pool_free(h->pool, tmp[i]);
		if (round % 50 == 0)
			pool_thread_flush();
	}
	pthread_barrier_wait(h->bar);
	return NULL;
}

START_TEST(test_in_use_never_released)
{
	static const size_t sizes[] = { 64, 1000, 16384 };
	struct holder h[3];
	pthread_t th[3];
	pthread_barrier_t bar;
	unsigned int n, g;
	size_t i;

	pthread_barrier_init(&bar, NULL, 4);
	for (n = 0; n < 3; n++) {
		char name[32];

		snprintf(name, sizeof(name), "live%zu", sizes[n]);
		h[n].pool = pool_create(name, sizes[n], 0);
		ck_assert_ptr_nonnull(h[n].pool);
		h[n].live = calloc(LIVE, sizeof(*h[n].live));
		ck_assert_ptr_nonnull(h[n].live);
		h[n].size = sizes[n];
		h[n].seed = n * 31 + 1;
		h[n].bar = &bar;
		ck_assert_int_eq(pthread_create(&th[n], NULL, holder_thread, &h[n]), 0);
	}
	pthread_barrier_wait(&bar);
	/* collect hard while the holders churn: gc, flush of the shared lists, trim */
	for (g = 0; g < 50; g++) {
		pool_gc(NULL);
		for (n = 0; n < 3; n++)
			pool_flush(h[n].pool);
		pool_trim();
	}
	pthread_barrier_wait(&bar);
	for (n = 0; n < 3; n++)
		ck_assert_int_eq(pthread_join(th[n], NULL), 0);
	pool_gc(NULL);
	for (n = 0; n < 3; n++) {
		struct pool_stats st;
		void **fresh = calloc(LIVE, sizeof(void *));

		ck_assert_int_eq(pool_get_stats(h[n].pool, &st, sizeof(st)), 0);
		ck_assert_uint_eq(st.used, LIVE);
		ck_assert_uint_ge(st.allocated, LIVE);
		for (i = 0; i < LIVE; i++)
			ck_assert_msg(intact(h[n].live[i], sizes[n], h[n].seed, i),
			              "pool %zu: object %zu was changed", sizes[n], i);
		/* new objects never alias one in use */
		ck_assert_ptr_nonnull(fresh);
		for (i = 0; i < LIVE; i++) {
			fresh[i] = pool_alloc(h[n].pool);
			ck_assert_ptr_nonnull(fresh[i]);
			memset(fresh[i], 0xee, sizes[n]);
		}
		for (i = 0; i < LIVE; i++)
			ck_assert(intact(h[n].live[i], sizes[n], h[n].seed, i));
		for (i = 0; i < LIVE; i++) {
			pool_free(h[n].pool, fresh[i]);
			pool_free(h[n].pool, h[n].live[i]);
		}
		free(fresh);
		free(h[n].live);
		pool_thread_flush();
		ck_assert_int_eq(pool_destroy(h[n].pool), 0);
	}
	pthread_barrier_destroy(&bar);
}
END_TEST

/*
 * pool_trim() alone: 64 MiB of 16 KiB objects go back to the OS layer with pool_flush() (which
 * does not trim), then pool_trim() returns the pages. Its cost is printed for doc/tuning.md.
 */
START_TEST(test_trim_returns_pages)
{
	size_t n = 64 * MiB / 16384, i;
	struct pool_head *p = pool_create("trim16k", 16384, 0);
	void **o = calloc(n, sizeof(void *));
	size_t base, peak, flushed, trimmed;
	double t0, t1;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(o);
	pool_trim();
	base = rss_bytes();
	for (i = 0; i < n; i++) {
		o[i] = pool_alloc(p);
		ck_assert_ptr_nonnull(o[i]);
		memset(o[i], 0x3c, 16384);
	}
	peak = rss_bytes();
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	pool_flush(p);
	flushed = rss_bytes();
	t0 = now_us();
	pool_trim();
	t1 = now_us();
	trimmed = rss_bytes();
	printf("check_memreturn: cost (%s): pool_trim() after 64 MiB went back to the OS layer "
	       "%.2f ms; RSS %zu MiB before, %zu MiB allocated, %zu MiB flushed, %zu MiB trimmed\n",
	       test_os_stats().layer, (t1 - t0) / 1000.0, base / MiB, peak / MiB, flushed / MiB,
	       trimmed / MiB);
#ifdef SAN_REPLACES_MALLOC
	printf("check_memreturn: RSS assertion skipped under the sanitizer (shadow memory)\n");
#else
	ck_assert_uint_le(trimmed, base + 16 * MiB);
#endif
	free(o);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* pool_trim() gives back what was freed; it never touches pool objects in use. */
START_TEST(test_trim_keeps_objects_in_use)
{
	struct pool_head *p = pool_create("trim", 4096, 0);
	void *keep[64];
	unsigned int i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 64; i++) {
		keep[i] = pool_alloc(p);
		ck_assert_ptr_nonnull(keep[i]);
		memset(keep[i], (int)i, 4096);
	}
	pool_trim();
	pool_gc(NULL);
	pool_flush(p);
	pool_trim();
	for (i = 0; i < 64; i++) {
		unsigned char *c = keep[i];

		ck_assert_uint_eq(c[0], i);
		ck_assert_uint_eq(c[4095], i);
		pool_free(p, keep[i]);
	}
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
	pool_trim();
}
END_TEST

static Suite *memreturn_suite(void)
{
	Suite *s = suite_create("memreturn");
	TCase *tc;

	tc = tcase_create("Spike");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_spike);
	suite_add_tcase(s, tc);

	tc = tcase_create("Trim");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_trim_returns_pages);
	tcase_add_test(tc, test_trim_keeps_objects_in_use);
	suite_add_tcase(s, tc);

	tc = tcase_create("InUse");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_in_use_never_released);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(memreturn_suite)
