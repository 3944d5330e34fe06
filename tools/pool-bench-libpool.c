/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-libpool.c - the libpool backend of pool-bench's children: `pool-bench --child
 * libpool ...` runs the scenarios of pool-bench-child.h on libpool's inline fast path, as a
 * program linked with libpool.so calls it. Each run of a single-pool scenario creates one pool
 * of the run's size and alignment (pool_create_aligned()); server, larson and xmalloc create one
 * pool per size class (bk_server_setup()). Threads are plain pthreads; a thread's cache goes
 * back to the shared lists when it exits.
 *
 * Two environment variables print on stderr what the server's pools held, for diagnosis:
 * POOL_BENCH_PEAK (where the pools' bytes lay when their slabs held the most) and
 * POOL_BENCH_SLABS (the slabs taken and given back whole, at teardown).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <pool/pool.h>

#include "pool-bench-child.h"
#include "pool-bench-parent.h"

static struct pool_head *bk_pool;
static struct pool_head *bk_srv_pools[SRV_CLASSES];
static unsigned int bk_srv_n;

static int bk_setup(const struct bench_params *bp, char *why, size_t why_len)
{
	if (strcmp(bp->backend, "libpool") != 0) {
		snprintf(why, why_len, "pool-bench serves libpool, not '%s'", bp->backend);
		return -1;
	}
	if (bench_own_threads(bp->scenario))
		return 0;
	bk_pool = pool_create_aligned("bench", bp->size, bp->align, 0);
	if (!bk_pool) {
		snprintf(why, why_len, "pool_create_aligned(%zu, %zu): %s", bp->size, bp->align,
		         strerror(errno));
		return -1;
	}
	return 0;
}

static int bk_run_workers(unsigned int n, void *(*fn)(void *), char *args, size_t stride)
{
	return bench_run_pthreads(n, fn, args, stride);
}

static void bk_thread_start(struct bk_thread *t)
{
	(void)t;
}

static void bk_thread_stop(struct bk_thread *t)
{
	(void)t;   /* the thread's cache goes back to the shared lists when it exits */
}

static inline void *bk_alloc(struct bk_thread *t)
{
	(void)t;
	return pool_alloc(bk_pool);
}

static inline void bk_free(struct bk_thread *t, void *p)
{
	(void)t;
	pool_free(bk_pool, p);
}

static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	return (unsigned int)pool_alloc_bulk(bk_pool, objs, n);
}

static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	pool_free_bulk(bk_pool, objs, n);
}

/* Every object is back and every thread gone: the pool goes (LeakSanitizer checks it). */
static void bk_teardown(void)
{
	pool_thread_flush();
	if (bk_pool && pool_destroy(bk_pool) < 0)
		bench_fail("pool_destroy(bench): %s (objects still handed out)", strerror(errno));
	bk_pool = NULL;
}

/*
 * POOL_BENCH_PEAK (server, larson, xmalloc): where the pools' bytes lay when their slabs held
 * the most. A thread reads every pool's struct pool_stats each millisecond while the workload
 * runs and keeps the sample whose slab bytes (carved bytes for pools off slabs) were the
 * highest, the first of equals; the teardown samples once more, after the workers, and prints
 * the peak on stderr: the slabs' bytes, then the bytes of the objects carved from them, split
 * into those the program held, those in thread caches, in the shared lists and free in their
 * slabs (`used` counts the cached objects too: internals 8.1). Each pool is read in turn while
 * the workers run, so a sample's parts need not add up exactly, and the sampler takes CPU time
 * from them: figures for diagnosis, not timings.
 */
struct bk_peak_bytes {
	size_t slabs, carved, held, cached, shared, slab_free;
};

static struct {
	pthread_t thread;
	atomic_int stop;
	int running;
	unsigned long samples;
	struct bk_peak_bytes sum;                  /* at the peak */
	struct bk_peak_bytes pool[SRV_CLASSES];    /* at the peak */
} bk_peak;

static size_t bk_peak_key(const struct bk_peak_bytes *b)
{
	return b->slabs ? b->slabs : b->carved;
}

/* Read every pool once; keep the sample if its slabs hold more than the peak's did. */
static void bk_peak_sample(void)
{
	struct bk_peak_bytes sum, pool[SRV_CLASSES];
	struct pool_stats st;
	unsigned int i;

	memset(&sum, 0, sizeof(sum));
	memset(pool, 0, sizeof(pool));
	for (i = 0; i < bk_srv_n; i++) {
		if (pool_get_stats(bk_srv_pools[i], &st, sizeof(st)) < 0)
			continue;
		pool[i].slabs = st.slab_bytes;
		pool[i].carved = st.allocated * st.stride;
		pool[i].cached = st.cached * st.stride;
		pool[i].held = st.used > st.cached ? (st.used - st.cached) * st.stride : 0;
		pool[i].shared = st.shared_free * st.stride;
		pool[i].slab_free = st.slab_free * st.stride;
		sum.slabs += pool[i].slabs;
		sum.carved += pool[i].carved;
		sum.held += pool[i].held;
		sum.cached += pool[i].cached;
		sum.shared += pool[i].shared;
		sum.slab_free += pool[i].slab_free;
	}
	if (!bk_peak.samples++ || bk_peak_key(&sum) > bk_peak_key(&bk_peak.sum)) {
		bk_peak.sum = sum;
		memcpy(bk_peak.pool, pool, sizeof(pool));
	}
}

static void *bk_peak_main(void *arg)
{
	const struct timespec period = { 0, 1000000 };

	(void)arg;
	while (!atomic_load_explicit(&bk_peak.stop, memory_order_acquire)) {
		bk_peak_sample();
		nanosleep(&period, NULL);
	}
	return NULL;
}

/* Stop the sampler and print its peak (bk_server_teardown(), before the caches are flushed). */
static void bk_peak_report(void)
{
	const double mib = 1024.0 * 1024.0;
	const struct bk_peak_bytes *b = &bk_peak.sum;
	unsigned int i;

	if (!bk_peak.running)
		return;
	atomic_store_explicit(&bk_peak.stop, 1, memory_order_release);
	pthread_join(bk_peak.thread, NULL);
	bk_peak.running = 0;
	bk_peak_sample();    /* the workers are gone: a run shorter than a period is sampled too */
	fprintf(stderr, "peak (POOL_BENCH_PEAK, %lu samples): slabs %.2f MiB; carved objects %.2f "
	        "MiB: held by the program %.2f, thread caches %.2f, shared lists %.2f, free in "
	        "slabs %.2f\n", bk_peak.samples, b->slabs / mib, b->carved / mib, b->held / mib,
	        b->cached / mib, b->shared / mib, b->slab_free / mib);
	for (i = 0; i < bk_srv_n; i++) {
		b = &bk_peak.pool[i];
		fprintf(stderr, "peak %s: slabs %zu B, carved %zu B: held %zu, cached %zu, shared %zu, "
		        "slab free %zu\n", pool_name(bk_srv_pools[i]), b->slabs, b->carved, b->held,
		        b->cached, b->shared, b->slab_free);
	}
}

/*
 * server, larson, xmalloc: one pool per size class, not merged with each other (no
 * POOL_F_SHARED); with POOL_BENCH_PEAK set, the sampler above.
 */
static int bk_server_setup(const size_t *sizes, unsigned int n, char *why, size_t why_len)
{
	const char *peak = getenv("POOL_BENCH_PEAK");
	char name[32];
	int rc;

	for (bk_srv_n = 0; bk_srv_n < n; bk_srv_n++) {
		snprintf(name, sizeof(name), "server-%zu", sizes[bk_srv_n]);
		bk_srv_pools[bk_srv_n] = pool_create(name, sizes[bk_srv_n], 0);
		if (!bk_srv_pools[bk_srv_n]) {
			snprintf(why, why_len, "pool_create(%s): %s", name, strerror(errno));
			bk_server_teardown();
			return -1;
		}
	}
	if (peak && *peak && strcmp(peak, "0") != 0) {
		rc = pthread_create(&bk_peak.thread, NULL, bk_peak_main, NULL);
		if (rc != 0) {
			snprintf(why, why_len, "POOL_BENCH_PEAK: pthread_create(): %s", strerror(rc));
			bk_server_teardown();
			return -1;
		}
		bk_peak.running = 1;
	}
	return 0;
}

static inline void *bk_server_zalloc(unsigned int cls)
{
	return pool_zalloc(bk_srv_pools[cls]);
}

static inline void *bk_server_alloc(unsigned int cls)
{
	return pool_alloc(bk_srv_pools[cls]);
}

static inline void bk_server_free(unsigned int cls, void *p)
{
	pool_free(bk_srv_pools[cls], p);
}

/*
 * Objects the server's pools took from below their shared lists so far: from their slabs,
 * fresh or given back (struct pool_stats.slab_get_objects). The slabs taken and given back whole
 * are printed on stderr at teardown when POOL_BENCH_SLABS is set.
 */
static int bk_server_os_allocs(uint64_t *objects)
{
	struct pool_stats st;
	unsigned int i;

	*objects = 0;
	for (i = 0; i < bk_srv_n; i++) {
		if (pool_get_stats(bk_srv_pools[i], &st, sizeof(st)) < 0)
			return -1;
		*objects += st.slab_get_objects;
	}
	return 0;
}

static long long bk_held_bytes(void)
{
	struct pool_stats st;

	if (!bk_pool || pool_get_stats(bk_pool, &st, sizeof(st)) < 0)
		return -1;
	return (long long)(st.allocated * st.stride);
}

static void bk_server_teardown(void)
{
	bk_peak_report();
	pool_thread_flush();
	if (getenv("POOL_BENCH_SLABS")) {
		unsigned int i;

		for (i = 0; i < bk_srv_n; i++) {
			struct pool_stats st;

			if (pool_get_stats(bk_srv_pools[i], &st, sizeof(st)) == 0)
				fprintf(stderr, "slabs %s: held %zu (%zu bytes), given back %llu; objects "
				        "carved %llu, from the slabs %llu, to them %llu\n",
				        pool_name(bk_srv_pools[i]), st.slabs, st.slab_bytes,
				        (unsigned long long)st.slabs_released,
				        (unsigned long long)st.os_allocs,
				        (unsigned long long)st.slab_get_objects,
				        (unsigned long long)st.slab_put_objects);
		}
	}
	while (bk_srv_n > 0) {
		struct pool_head *p = bk_srv_pools[--bk_srv_n];

		if (pool_destroy(p) < 0)
			bench_fail("pool_destroy(%s): %s (objects still handed out)", pool_name(p),
			           strerror(errno));
	}
}

/* `pool-bench --child libpool ...`: the child's main for libpool (pool-bench-child.h). */
int libpool_child_main(int argc, char **argv)
{
	return bench_child_main(argc, argv);
}
