/*
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
 * which prints one line on stdout: "ok <nanoseconds per pair>", "unavailable <why>" (exit 3)
 * or "error <why>" (exit 1). A pair is one allocation and one free of the same object.
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

enum bench_scenario { SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_COUNT };

static const char *const bench_scenario_names[SC_COUNT] = {
	"pair", "batch", "bulk", "pipeline", "threads"
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

static void bench_produce(struct bk_thread *t, struct bench_ring *q, uint64_t n)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint64_t i;
	unsigned int spins = 0;

	for (i = 0; i < n; i++) {
		void *p = bk_alloc(t);

		if (!bench_check(p))
			p = NULL;   /* the consumer skips it; the run reports the failure */
		else
			bench_touch(p);
		while (tail - atomic_load_explicit(&q->head, memory_order_acquire) >= BENCH_RING)
			bench_relax(&spins);
		q->slot[tail % BENCH_RING] = p;
		atomic_store_explicit(&q->tail, ++tail, memory_order_release);
	}
}

static void bench_consume(struct bk_thread *t, struct bench_ring *q, uint64_t n)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint64_t i;
	unsigned int spins = 0;

	for (i = 0; i < n; i++) {
		void *p;

		while (atomic_load_explicit(&q->tail, memory_order_acquire) == head)
			bench_relax(&spins);
		p = q->slot[head % BENCH_RING];
		atomic_store_explicit(&q->head, ++head, memory_order_release);
		if (p)
			bk_free(t, p);
	}
}

struct bench_worker {
	pthread_t thread;
	struct bk_thread t;
	const struct bench_params *bp;
	pthread_barrier_t *barrier;
	struct bench_ring *ring;
	int role;                   /* pipeline: 0 producer, 1 consumer */
	uint64_t pairs;
	double start_ns, end_ns;
} __attribute__((aligned(64)));

static void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	uint64_t warm = w->pairs / 10 + BENCH_BATCH;

	bk_thread_start(&w->t);
	if (w->bp->scenario == SC_PIPELINE) {
		if (w->role == 0)
			bench_produce(&w->t, w->ring, warm);
		else
			bench_consume(&w->t, w->ring, warm);
	} else {
		bench_batch_loop(&w->t, warm);
	}
	pthread_barrier_wait(w->barrier);
	w->start_ns = bench_now_ns();
	if (w->bp->scenario == SC_PIPELINE) {
		if (w->role == 0)
			bench_produce(&w->t, w->ring, w->pairs);
		else
			bench_consume(&w->t, w->ring, w->pairs);
	} else {
		bench_batch_loop(&w->t, w->pairs);
	}
	w->end_ns = bench_now_ns();
	bk_thread_stop(&w->t);
	return NULL;
}

/* Run the threads of `pipeline` (2) or `threads` (bp->threads); returns ns per pair or -1. */
static double bench_run_threads(const struct bench_params *bp)
{
	unsigned int n = bp->scenario == SC_PIPELINE ? 2 : bp->threads, i;
	struct bench_worker *w = aligned_alloc(64, sizeof(*w) * n);
	struct bench_ring *ring = aligned_alloc(64, sizeof(*ring));
	pthread_barrier_t barrier;
	double start, end = 0;
	uint64_t total = 0;

	if (!w || !ring)
		return -1;
	memset(w, 0, sizeof(*w) * n);
	memset(ring, 0, sizeof(*ring));
	pthread_barrier_init(&barrier, NULL, n + 1);
	for (i = 0; i < n; i++) {
		w[i].bp = bp;
		w[i].barrier = &barrier;
		w[i].ring = ring;
		w[i].role = (int)i;
		if (bp->scenario == SC_PIPELINE) {
			w[i].pairs = bp->pairs;
		} else {
			/* split the pairs evenly, in whole batches */
			w[i].pairs = (bp->pairs / n / BENCH_BATCH) * BENCH_BATCH;
			if (!w[i].pairs)
				w[i].pairs = BENCH_BATCH;
			total += w[i].pairs;
		}
		if (pthread_create(&w[i].thread, NULL, bench_worker_main, &w[i]) != 0)
			return -1;
	}
	if (bp->scenario == SC_PIPELINE)
		total = bp->pairs;
	/* wall time from the first thread's start to the last one's end: the main thread may
	 * well be descheduled when the barrier opens */
	pthread_barrier_wait(&barrier);
	start = 0;
	for (i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].end_ns > end)
			end = w[i].end_ns;
		if (!start || w[i].start_ns < start)
			start = w[i].start_ns;
	}
	pthread_barrier_destroy(&barrier);
	free(w);
	free(ring);
	return (end - start) / (double)total;
}

/* Run one scenario in this process; returns ns per pair, or -1 when allocations failed. */
static double bench_run(const struct bench_params *bp)
{
	struct bk_thread t = { NULL };
	uint64_t warm = bp->pairs / 10 + BENCH_BATCH;
	uint64_t n = bp->pairs;
	double start, end;

	if (bp->scenario == SC_PIPELINE || bp->scenario == SC_THREADS)
		return atomic_load(&bench_failed) ? -1 : bench_run_threads(bp);
	bk_thread_start(&t);
	switch (bp->scenario) {
	case SC_PAIR:
		bench_pair_warm(&t, warm);
		start = bench_now_ns();
		bench_pair_loop(&t, n);
		end = bench_now_ns();
		break;
	case SC_BATCH:
		n -= n % BENCH_BATCH;
		bench_batch_loop(&t, warm);
		start = bench_now_ns();
		bench_batch_loop(&t, n);
		end = bench_now_ns();
		break;
	default:
		n -= n % BENCH_BULK;
		bench_bulk_loop(&t, warm);
		start = bench_now_ns();
		bench_bulk_loop(&t, n);
		end = bench_now_ns();
		break;
	}
	bk_thread_stop(&t);
	return (end - start) / (double)n;
}

/* The child's main: parse "--child <backend> <scenario> <size> <pairs> <threads>" and run. */
static int bench_child_main(int argc, char **argv)
{
	struct bench_params bp;
	char why[256] = "";
	char *end;
	unsigned long long v;
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
	ns = bench_run(&bp);
	if (ns < 0 || atomic_load(&bench_failed)) {
		printf("error %s: allocation failed during the %s scenario\n", bp.backend, argv[3]);
		return 1;
	}
	printf("ok %.4f\n", ns);
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_H */
