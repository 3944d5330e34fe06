/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench.h - the measuring side of tools/pool-bench, shared by its child programs.
 *
 * pool-bench measures every backend in a child process of its own (see doc/benchmarks.md):
 *   pool-bench        --child libpool  ...   libpool, inline fast path, linked statically
 *   pool-bench-malloc --child glibc|jemalloc|tcmalloc|mimalloc ...
 *                                            malloc()/free() of whatever allocator the parent
 *                                            put in LD_PRELOAD (none: glibc); this program does
 *                                            not link libpool nor jemalloc
 *   pool-bench-dpdk   --child dpdk ...       rte_mempool with a per-thread cache
 *
 * Each child program includes this header once and then defines the backend hooks declared
 * below (static functions; the compiler inlines them into the measured loops, so every backend
 * is called the way a program using it directly would call it). The header holds the scenarios,
 * the timing and the child's command line:
 *
 *   <program> --child <backend> <scenario> <size> <pairs> <threads>
 *
 * which prints one line on stdout: "ok <nanoseconds per pair> <pairs timed>", "unavailable
 * <why>" (exit 3) or "error <why>" (exit 1). A pair is one allocation and one free of the same
 * object. A measurement times <pairs>, or fewer when it has run for BENCH_BUDGET_NS, after a
 * warm-up of a tenth of that (at most BENCH_WARM_NS).
 */
#ifndef POOL_TOOLS_POOL_BENCH_H
#define POOL_TOOLS_POOL_BENCH_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NOINLINE   __attribute__((noinline))
#define BENCH_BATCH      64u      /* batch: live objects, freed LIFO */
#define BENCH_BULK       32u      /* bulk: objects per bulk call */
#define BENCH_RING       1024u    /* pipeline: producer/consumer queue slots */
#define BENCH_MAX_THREADS 1024u
#define BENCH_EXIT_UNAVAILABLE 3
#define BENCH_CHUNK      4096u    /* pairs between two looks at the clock */
#define BENCH_BUDGET_NS  400e6    /* a measurement stops after this long, pairs or not */
#define BENCH_WARM_NS    50e6     /* and its warm-up after this long */

enum bench_scenario { SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_LOOP, SC_COUNT };

/* "loop" is not a scenario of the table: the pair loop without an allocator (see below). */
static const char *const bench_scenario_names[SC_COUNT] = {
	"pair", "batch", "bulk", "pipeline", "threads", "loop"
};

struct bench_params {
	const char *backend;
	enum bench_scenario scenario;
	size_t size;                /* object size in bytes */
	uint64_t pairs;             /* allocation+free pairs to time, over all threads */
	unsigned int threads;       /* threads scenario: threads running batch */
};

/* A thread's backend state (DPDK: its mempool cache). */
struct bk_thread {
	void *priv;
};

/* Backend hooks, defined by the program that includes this header. */
static int bk_setup(const struct bench_params *bp, char *why, size_t why_len);
static void bk_thread_start(struct bk_thread *t);
static void bk_thread_stop(struct bk_thread *t);
static inline void *bk_alloc(struct bk_thread *t);
static inline void bk_free(struct bk_thread *t, void *p);
static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n);
static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n);
static void bk_teardown(void);

static atomic_int bench_failed;

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Write the first word, as a program initialising its object would; keeps the pair alive. */
static inline void bench_touch(void *p)
{
	*(volatile uintptr_t *)p = (uintptr_t)p;
}

static inline int bench_check(void *p)
{
	if (__builtin_expect(!p, 0)) {
		atomic_store(&bench_failed, 1);
		return 0;
	}
	return 1;
}

static inline __attribute__((always_inline)) void bench_pair_body(struct bk_thread *t,
                                                                  uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		void *p = bk_alloc(t);

		if (!bench_check(p))
			return;
		bench_touch(p);
		bk_free(t, p);
	}
}

/* The measured pair loop: its own symbol, so that callgrind can count just it. */
static BENCH_NOINLINE void bench_pair_loop(struct bk_thread *t, uint64_t n)
{
	bench_pair_body(t, n);
}

/*
 * The pair loop with no allocator: the same object every time, its address passed through an
 * empty asm so that the compiler cannot see it is constant. pool-bench --instructions counts it
 * to subtract what the loop costs by itself (increment, compare, branch, the store).
 */
static BENCH_NOINLINE void bench_loop_loop(struct bk_thread *t, uint64_t n)
{
	static uint64_t object[8] __attribute__((aligned(64)));
	uint64_t i;

	(void)t;
	for (i = 0; i < n; i++) {
		void *p = object;

		__asm__ __volatile__("" : "+r"(p));
		bench_touch(p);
	}
}

/*
 * The warm-up must not be folded into bench_pair_loop by identical code folding (-fipa-icf),
 * or callgrind would count it too: the empty asm makes the two functions differ.
 */
static BENCH_NOINLINE void bench_pair_warm(struct bk_thread *t, uint64_t n)
{
	bench_pair_body(t, n);
	__asm__ __volatile__("" ::: "memory");
}

static BENCH_NOINLINE void bench_batch_loop(struct bk_thread *t, uint64_t n)
{
	void *objs[BENCH_BATCH];
	uint64_t r;
	unsigned int j;

	for (r = 0; r < n / BENCH_BATCH; r++) {
		for (j = 0; j < BENCH_BATCH; j++) {
			objs[j] = bk_alloc(t);
			if (!bench_check(objs[j]))
				return;
			bench_touch(objs[j]);
		}
		for (j = BENCH_BATCH; j-- > 0;)
			bk_free(t, objs[j]);
	}
}

static BENCH_NOINLINE void bench_bulk_loop(struct bk_thread *t, uint64_t n)
{
	void *objs[BENCH_BULK];
	uint64_t r;
	unsigned int j, got;

	for (r = 0; r < n / BENCH_BULK; r++) {
		got = bk_alloc_bulk(t, objs, BENCH_BULK);
		if (got != BENCH_BULK) {
			atomic_store(&bench_failed, 1);
			bk_free_bulk(t, objs, got);
			return;
		}
		for (j = 0; j < BENCH_BULK; j++)
			bench_touch(objs[j]);
		bk_free_bulk(t, objs, BENCH_BULK);
	}
}

/* pipeline: a single-producer single-consumer ring between two threads. */
struct bench_ring {
	_Atomic uint64_t head __attribute__((aligned(64)));
	_Atomic uint64_t tail __attribute__((aligned(64)));
	void *slot[BENCH_RING] __attribute__((aligned(64)));
};

static inline void bench_relax(unsigned int *spins)
{
	if (++*spins < 1000) {
		__asm__ __volatile__("" ::: "memory");
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else {
		*spins = 0;
		sched_yield();
	}
}

static char bench_end_marker;   /* pipeline: the producer's last message */

static void bench_push(struct bench_ring *q, uint64_t *tail, void *p)
{
	unsigned int spins = 0;

	while (*tail - atomic_load_explicit(&q->head, memory_order_acquire) >= BENCH_RING)
		bench_relax(&spins);
	q->slot[*tail % BENCH_RING] = p;
	atomic_store_explicit(&q->tail, ++*tail, memory_order_release);
}

/* Produce up to n objects, until the deadline; returns how many were sent. */
static uint64_t bench_produce(struct bk_thread *t, struct bench_ring *q, uint64_t n,
                              double deadline)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint64_t i;

	for (i = 0; i < n; i++) {
		void *p;

		if (!(i % BENCH_CHUNK) && i && bench_now_ns() >= deadline)
			break;
		p = bk_alloc(t);
		if (!bench_check(p))
			break;
		bench_touch(p);
		bench_push(q, &tail, p);
	}
	bench_push(q, &tail, &bench_end_marker);
	return i;
}

static void bench_consume(struct bk_thread *t, struct bench_ring *q)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	unsigned int spins = 0;

	for (;;) {
		void *p;

		while (atomic_load_explicit(&q->tail, memory_order_acquire) == head)
			bench_relax(&spins);
		p = q->slot[head % BENCH_RING];
		atomic_store_explicit(&q->head, ++head, memory_order_release);
		if (p == &bench_end_marker)
			return;
		bk_free(t, p);
	}
}

/*
 * Run `loop` over up to n pairs in chunks of BENCH_CHUNK, until the deadline passes (so that a
 * slow backend does not take minutes); returns the pairs done. n is a multiple of the loop's
 * batch, and so is BENCH_CHUNK.
 */
static uint64_t bench_chunks(void (*loop)(struct bk_thread *, uint64_t), struct bk_thread *t,
                             uint64_t n, double deadline)
{
	uint64_t done = 0, c;

	while (done < n && !atomic_load_explicit(&bench_failed, memory_order_relaxed)) {
		c = n - done < BENCH_CHUNK ? n - done : BENCH_CHUNK;
		loop(t, c);
		done += c;
		if (bench_now_ns() >= deadline)
			break;
	}
	return done;
}

struct bench_worker {
	pthread_t thread;
	struct bk_thread t;
	const struct bench_params *bp;
	pthread_barrier_t *barriers;  /* [0]: warmed up, [1]: pipeline warm-up drained */
	struct bench_ring *ring;
	int role;                   /* pipeline: 0 producer, 1 consumer */
	uint64_t pairs, done;
	double start_ns, end_ns;
} __attribute__((aligned(64)));

static void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t warm = (w->pairs / 10 / BENCH_BATCH + 1) * BENCH_BATCH;
	double now = bench_now_ns();

	bk_thread_start(&w->t);
	if (w->bp->scenario == SC_PIPELINE) {
		if (w->role == 0)
			bench_produce(&w->t, w->ring, warm, now + BENCH_WARM_NS);
		else
			bench_consume(&w->t, w->ring);
	} else {
		bench_chunks(bench_batch_loop, &w->t, warm, now + BENCH_WARM_NS);
	}
	pthread_barrier_wait(w->barriers);
	w->start_ns = bench_now_ns();
	if (w->bp->scenario == SC_PIPELINE) {
		if (w->role == 0)
			w->done = bench_produce(&w->t, w->ring, w->pairs,
			                        w->start_ns + BENCH_BUDGET_NS);
		else
			bench_consume(&w->t, w->ring);
	} else {
		w->done = bench_chunks(bench_batch_loop, &w->t, w->pairs,
		                       w->start_ns + BENCH_BUDGET_NS);
	}
	w->end_ns = bench_now_ns();
	bk_thread_stop(&w->t);
	return NULL;
}

/* Run the threads of `pipeline` (2) or `threads` (bp->threads); ns per pair or -1. */
static double bench_run_threads(const struct bench_params *bp, uint64_t *done)
{
	unsigned int n = bp->scenario == SC_PIPELINE ? 2 : bp->threads, i;
	struct bench_worker *w = aligned_alloc(64, sizeof(*w) * n);
	struct bench_ring *ring = aligned_alloc(64, sizeof(*ring));
	pthread_barrier_t barrier;
	double start = 0, end = 0;

	*done = 0;
	if (!w || !ring)
		return -1;
	memset(w, 0, sizeof(*w) * n);
	memset(ring, 0, sizeof(*ring));
	pthread_barrier_init(&barrier, NULL, n + 1);
	for (i = 0; i < n; i++) {
		w[i].bp = bp;
		w[i].barriers = &barrier;
		w[i].ring = ring;
		w[i].role = (int)i;
		if (bp->scenario == SC_PIPELINE) {
			w[i].pairs = bp->pairs;
		} else {
			/* split the pairs evenly, in whole batches */
			w[i].pairs = (bp->pairs / n / BENCH_BATCH) * BENCH_BATCH;
			if (!w[i].pairs)
				w[i].pairs = BENCH_BATCH;
		}
		if (pthread_create(&w[i].thread, NULL, bench_worker_main, &w[i]) != 0)
			return -1;
	}
	/* wall time from the first thread's start to the last one's end: the main thread may
	 * well be descheduled when the barrier opens */
	pthread_barrier_wait(&barrier);
	for (i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].end_ns > end)
			end = w[i].end_ns;
		if (!start || w[i].start_ns < start)
			start = w[i].start_ns;
		*done += w[i].done;
	}
	pthread_barrier_destroy(&barrier);
	free(w);
	free(ring);
	return *done ? (end - start) / (double)*done : -1;
}

/* Run one scenario in this process; ns per pair (and *done pairs), or -1 on failure. */
static double bench_run(const struct bench_params *bp, uint64_t *done)
{
	struct bk_thread t = { NULL };
	uint64_t n = bp->pairs, warm = bp->pairs / 10 + BENCH_BATCH;
	void (*loop)(struct bk_thread *, uint64_t);
	void (*warm_loop)(struct bk_thread *, uint64_t);
	unsigned int unit;
	double start, end;

	if (bp->scenario == SC_PIPELINE || bp->scenario == SC_THREADS)
		return bench_run_threads(bp, done);
	switch (bp->scenario) {
	case SC_PAIR:
		loop = bench_pair_loop;
		warm_loop = bench_pair_warm;
		unit = 1;
		break;
	case SC_LOOP:
		loop = warm_loop = bench_loop_loop;
		unit = 1;
		warm = 0;   /* nothing to warm, and callgrind would count it in the loop */
		break;
	case SC_BATCH:
		loop = warm_loop = bench_batch_loop;
		unit = BENCH_BATCH;
		break;
	default:
		loop = warm_loop = bench_bulk_loop;
		unit = BENCH_BULK;
		break;
	}
	n -= n % unit;
	if (!n)
		n = unit;
	warm -= warm % unit;
	bk_thread_start(&t);
	bench_chunks(warm_loop, &t, warm, bench_now_ns() + BENCH_WARM_NS);
	start = bench_now_ns();
	*done = bench_chunks(loop, &t, n, start + BENCH_BUDGET_NS);
	end = bench_now_ns();
	bk_thread_stop(&t);
	return (end - start) / (double)*done;
}

/* The child's main: parse "--child <backend> <scenario> <size> <pairs> <threads>" and run. */
static int bench_child_main(int argc, char **argv)
{
	struct bench_params bp;
	char why[256] = "";
	char *end;
	unsigned long long v;
	uint64_t done = 0;
	double ns;
	int i;

	if (argc != 7 || strcmp(argv[1], "--child") != 0) {
		fprintf(stderr, "usage: %s --child <backend> <scenario> <size> <pairs> <threads>\n"
		        "(an internal program of pool-bench; run pool-bench instead)\n", argv[0]);
		return 2;
	}
	memset(&bp, 0, sizeof(bp));
	bp.backend = argv[2];
	for (i = 0; i < SC_COUNT; i++)
		if (strcmp(argv[3], bench_scenario_names[i]) == 0)
			break;
	if (i == SC_COUNT) {
		printf("error unknown scenario '%s'\n", argv[3]);
		return 2;
	}
	bp.scenario = (enum bench_scenario)i;
	errno = 0;
	v = strtoull(argv[4], &end, 10);
	if (errno || *end || v < 16 || v > (1u << 30)) {
		printf("error bad size '%s'\n", argv[4]);
		return 2;
	}
	bp.size = (size_t)v;
	v = strtoull(argv[5], &end, 10);
	if (errno || *end || v < 1) {
		printf("error bad pair count '%s'\n", argv[5]);
		return 2;
	}
	bp.pairs = v;
	v = strtoull(argv[6], &end, 10);
	if (errno || *end || v < 1 || v > BENCH_MAX_THREADS) {
		printf("error bad thread count '%s'\n", argv[6]);
		return 2;
	}
	bp.threads = (unsigned int)v;
	if (bk_setup(&bp, why, sizeof(why)) < 0) {
		printf("unavailable %s\n", why);
		return BENCH_EXIT_UNAVAILABLE;
	}
	ns = bench_run(&bp, &done);
	bk_teardown();
	if (ns < 0 || atomic_load(&bench_failed)) {
		printf("error %s: allocation failed during the %s scenario\n", bp.backend, argv[3]);
		return 1;
	}
	printf("ok %.4f %llu\n", ns, (unsigned long long)done);
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_H */
