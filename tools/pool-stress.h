/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-stress.h - what the two files of pool-stress share: the options, a run of one workload
 * with its pools and worker threads, and what the driver (pool-stress.c) calls of the threads'
 * side (pool-stress-workloads.c).
 */
#ifndef POOL_TOOLS_POOL_STRESS_H
#define POOL_TOOLS_POOL_STRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <pool/pool.h>

#define MAX_POOLS_PER_WL 8u

enum workload { WL_LOCAL, WL_PIPELINE, WL_BLEED, WL_MIXED, WL_SPIKE, WL_SOAK, WL_COUNT };

/* The workloads' names, in enum order (pool-stress.c). */
extern const char *const wl_names[WL_COUNT];

struct options {
	unsigned int threads;
	double seconds;
	unsigned int workloads;     /* bit per enum workload, run in enum order */
	const char *json;
	long corrupt_after;         /* --self-test-corruption: ops before the deliberate overwrite */
	int bind;                   /* --bind: pin worker i to the i-th PU (cores first) */
};

/* A bounded single-producer single-consumer ring (pipeline). */
struct ring {
	_Atomic size_t head;        /* next slot to read, written by the consumer */
	char pad1[64 - sizeof(size_t)];
	_Atomic size_t tail;        /* next slot to write, written by the producer */
	char pad2[64 - sizeof(size_t)];
	size_t mask;
	void **slot;
};

/* A bounded multi-producer inbox (bleed), under a mutex. */
struct inbox {
	pthread_mutex_t lock;
	size_t count, cap;
	void **slot;
} __attribute__((aligned(64)));

struct run;

struct worker {
	pthread_t thread;
	unsigned int id;
	struct run *run;
	uint64_t rng;
	uint64_t seq;
	_Atomic uint64_t ops;       /* allocations plus frees; read by the progress line */
	_Atomic uint64_t failures;  /* allocations that returned NULL */
	_Atomic uint64_t allocs;    /* allocations that returned an object */
	void **live;                /* scratch array of live objects */
	size_t live_cap;
	atomic_int done;            /* soak: the thread returned (main joins and replaces it) */
	unsigned int lives;         /* soak: threads that ran in this slot */
} __attribute__((aligned(64)));

/* soak: what the chaos thread did, and the process's RSS. */
struct soak_counts {
	unsigned long flips, gcs, trims, flushes, limits, dumps, restarts;
	long rss_start_kb, rss_peak_kb, rss_end_kb;
	char error[160];            /* the first call that failed */
};

struct run {
	const struct options *opt;
	enum workload wl;
	unsigned int nthreads;
	struct pool_head *pools[MAX_POOLS_PER_WL];
	size_t sizes[MAX_POOLS_PER_WL];
	unsigned int npools;
	atomic_int stop;
	pthread_barrier_t barrier;
	struct worker *workers;
	struct ring *rings;         /* pipeline */
	struct inbox *inboxes;      /* bleed */
	size_t queue_cap;
	size_t depth;               /* local/mixed: batch depth at most */
	atomic_uint big_live;       /* mixed: 2 MiB objects live */
	size_t spike_per_thread;
	size_t spike_peak_allocated;   /* spike: written by worker 0 between barriers */
	long spike_rss_peak_kb;
	int spike_go;
	unsigned int spike_cycles;
	struct soak_counts soak;    /* soak: written by the chaos thread and main */
	unsigned int soak_flags;    /* soak: pool_debugging when the workload began */
	unsigned int soak_fail_pct; /* ... and the percentage of fail then */
};

/* --self-test-corruption: allocations left before the deliberate overwrite (set by main()). */
extern atomic_long corrupt_countdown;

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* pool-stress-workloads.c */
void *worker_main(void *arg);
void *soak_chaos(void *arg);
void soak_settle(struct run *r);
long rss_kb(void);

#endif /* POOL_TOOLS_POOL_STRESS_H */
