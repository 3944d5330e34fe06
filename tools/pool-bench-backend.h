/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-backend.h - what a child program of pool-bench provides, and what every scenario
 * of a child shares: the parameters of a run, the backend hooks, failures, placement, and the
 * state of a worker.
 *
 * A child program includes pool-bench-child.h, which includes this header and every scenario,
 * and then defines the backend hooks declared below as static functions: the compiler inlines
 * them into the measured loops, so every backend is called the way a program using it directly
 * would call it. That is why the scenarios are headers of static functions, compiled into each
 * child program, and not a library of their own.
 *
 * Every thread scenario runs its workers the same way for every backend: worker 0 on the
 * child's main thread, workers 1..n-1 on threads the backend starts (pthread_create() for
 * libpool and the mallocs; rte_eal_remote_launch() on EAL lcores for DPDK), all meeting at a
 * barrier before the timed part and at another after it. Placement is the same for all: with a
 * pin list, worker i runs on CPU pin[i % n] (pthread_setaffinity_np() by the worker itself, or
 * the EAL's --lcores mapping for DPDK); without, every worker may run on every CPU the process
 * may use.
 */
#ifndef POOL_TOOLS_POOL_BENCH_BACKEND_H
#define POOL_TOOLS_POOL_BENCH_BACKEND_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pool-bench.h"

struct bench_params {
	const char *backend;
	enum bench_scenario scenario;
	size_t size;                /* object size in bytes (server, larson, xmalloc: unused) */
	size_t align;               /* object alignment in bytes, 0: the backend's default */
	uint64_t count;             /* units to time, over all threads */
	unsigned int threads;       /* workers (pair, batch, bulk: 1; false-sharing: 2;
	                               cache-scratch: 1..128) */
	unsigned int ncpus;         /* pin list length, 0: not pinned */
	int cpus[BENCH_MAX_CPUS];   /* pin list */
	double calibrate_ms;        /* > 0: grow count until a run lasts this long */
	uint64_t corrupt;           /* server self-test: > 0, see srv_thread_main() */
	unsigned int live;          /* server: live slots per thread */
	enum srv_lifetime lifetime; /* server */
	enum srv_teardown teardown; /* server */
	double seconds;             /* return: how long the light load runs after the burst */
	double idle;                /* return: how long the child then stays idle */
	unsigned int keep;          /* return: every keep-th object of the burst stays live
	                               through the curve (0: none) */
};

/* What one run measured. */
struct bench_result {
	double ns;                  /* ns per unit */
	uint64_t units;
	double elapsed_ns;
	double cpu_ns;              /* server, larson, xmalloc: user + system time of the child
	                               during the timed part */
	uint64_t os_warm, allocs_warm, os_all, allocs_all;   /* server, libpool only */
	int have_os;
	double shared;              /* false-sharing: share of lines both threads write, or -1 */
};

/* A thread's backend state (free for the backend to use). */
struct bk_thread {
	void *priv;
};

/*
 * Backend hooks, defined by the program that includes this header.
 * bk_setup: check the backend name and prepare for bp (pools, EAL); -1 with a reason when the
 * backend cannot run here. bk_run_workers: run fn(args + i * stride) for i in 0..n-1, worker 0
 * on the calling thread, and return once all have returned (0), or -1 if they cannot be
 * started. The server hooks serve server, larson and xmalloc: bk_server_zalloc allocates a
 * zero-filled object of size class cls (sizes given to bk_server_setup), bk_server_alloc one
 * whose contents are undefined; bk_server_os_allocs reports the objects the backend took from
 * its OS layer (-1: the backend does not count them).
 */
static int bk_setup(const struct bench_params *bp, char *why, size_t why_len);
static void bk_teardown(void);
static int bk_run_workers(unsigned int n, void *(*fn)(void *), char *args, size_t stride);
static void bk_thread_start(struct bk_thread *t);
static void bk_thread_stop(struct bk_thread *t);
static inline void *bk_alloc(struct bk_thread *t);
static inline void bk_free(struct bk_thread *t, void *p);
static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n);
static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n);
static int bk_server_setup(const size_t *sizes, unsigned int n, char *why, size_t why_len);
static inline void *bk_server_zalloc(unsigned int cls);
static inline void *bk_server_alloc(unsigned int cls);
static inline void bk_server_free(unsigned int cls, void *p);
static int bk_server_os_allocs(uint64_t *objects);
static void bk_server_teardown(void);
/* return: the bytes the backend holds for its objects (libpool: allocated x stride), or -1 */
static long long bk_held_bytes(void);

/* Set by a backend whose threads are placed by someone else (DPDK's EAL). */
static int bench_backend_places;

static atomic_int bench_failed;
static char bench_fail_msg[256];

/* Record the first failure; the child reports it and exits 1. */
static void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void bench_fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_exchange(&bench_failed, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(bench_fail_msg, sizeof(bench_fail_msg), fmt, ap);
	va_end(ap);
}

/* The calling thread's Cpus_allowed_list, as the kernel reports it in /proc. */
static void bench_cpus_allowed(char *buf, size_t len)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[512];

	snprintf(buf, len, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char *v = line + 18 + strspn(line + 18, " \t");

			v[strcspn(v, "\n")] = 0;
			snprintf(buf, len, "%s", v);
			break;
		}
	fclose(f);
}

/* Put the calling thread, worker `idx`, on its CPU of the pin list (unless not pinned). */
static void bench_place(const struct bench_params *bp, unsigned int idx)
{
	cpu_set_t set;
	int rc;

	if (!bp->ncpus || bench_backend_places)
		return;
	CPU_ZERO(&set);
	CPU_SET(bp->cpus[idx % bp->ncpus], &set);
	rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc)
		bench_fail("cannot pin worker %u to CPU %d: %s", idx, bp->cpus[idx % bp->ncpus],
		           strerror(rc));
}

/* Write the first word, as a program initialising its object would; keeps the pair alive. */
static inline void bench_touch(void *p)
{
	*(volatile uintptr_t *)p = (uintptr_t)p;
}

static inline int bench_check(void *p)
{
	if (__builtin_expect(!p, 0)) {
		bench_fail("an allocation returned NULL");
		return 0;
	}
	return 1;
}

struct bench_ring;   /* pipeline: pool-bench-threads.h */

/* State shared by the workers of one run. */
struct bench_shared {
	const struct bench_params *bp;
	pthread_barrier_t barrier;
	struct bench_ring *rings;           /* pipeline: threads / 2 */
	void *fs_objs[2 * BENCH_FS_OBJS];   /* false-sharing: carved by worker 0 */
	uintptr_t fs_lines[2][BENCH_FS_OBJS];
	uint64_t count;                     /* units of this run */
};

struct bench_worker {
	struct bench_shared *sh;
	struct bk_thread t;
	unsigned int idx;
	uint64_t done;
	double start_ns, end_ns;
	char cpus[128];                     /* Cpus_allowed_list once placed */
} __attribute__((aligned(64)));

static void bench_barrier(struct bench_shared *sh)
{
	pthread_barrier_wait(&sh->barrier);
}

/*
 * The placement line: each worker's Cpus_allowed_list, the strings at cpus, cpus + stride, ...
 * (the member of an array of per-thread structures).
 */
static void bench_print_placement(const char *cpus, size_t stride, unsigned int n)
{
	unsigned int i;

	printf("placement");
	for (i = 0; i < n; i++)
		printf(" %u:%s", i, cpus + i * stride);
	printf("\n");
}

/* User plus system time of every thread of this process so far (RUSAGE_SELF), in ns. */
static double bench_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

/* A "Vm...:  N kB" line of /proc/self/status (VmRSS: resident now, VmHWM: peak), or 0. */
static long bench_status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	size_t len = strlen(key);
	char line[256];
	long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			kb = strtol(line + len + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return kb;
}

/*
 * bk_run_workers for backends on plain pthreads: workers 1..n-1 on new threads, worker 0 on
 * the calling thread. Each worker places itself (bench_place()).
 */
static BENCH_UNUSED int bench_run_pthreads(unsigned int n, void *(*fn)(void *), char *args,
                                           size_t stride)
{
	pthread_t *tid = calloc(n, sizeof(*tid));
	unsigned int i, started;

	if (!tid)
		return -1;
	for (started = 1; started < n; started++)
		if (pthread_create(&tid[started], NULL, fn, args + started * stride) != 0)
			break;
	if (started < n) {
		/* the barrier expects n workers: the ones started cannot finish; give up */
		fprintf(stderr, "pool-bench: cannot create thread %u of %u\n", started, n);
		_exit(BENCH_EXIT_FAILED);
	}
	fn(args);
	for (i = 1; i < n; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_BACKEND_H */
