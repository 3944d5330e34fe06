/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench.h - the measuring side of tools/pool-bench, shared by its child programs.
 *
 * pool-bench measures every backend in a child process of its own (see doc/benchmarks.md):
 *   pool-bench        --child libpool  ...   libpool (libpool.so, as pkg-config links it), inline
 *                                            fast path
 *   pool-bench-malloc --child glibc|jemalloc|tcmalloc|mimalloc ...
 *                                            malloc()/calloc()/free() of whatever allocator the
 *                                            parent put in LD_PRELOAD (none: glibc); this
 *                                            program links neither libpool nor jemalloc
 *   pool-bench-dpdk   --child dpdk ...       rte_mempool, each thread an EAL lcore with its
 *                                            built-in per-lcore cache
 *
 * Each child program includes this header once and then defines the backend hooks declared
 * below (static functions; the compiler inlines them into the measured loops, so every backend
 * is called the way a program using it directly would call it). The header holds the
 * scenarios, the timing, the thread placement and the child's command line:
 *
 *   <program> --child <backend> <scenario> <size> <count> <threads> [key=value...]
 *
 * keys: pin=<cpu list> (thread i runs on the i-th CPU of the list, modulo its length; absent:
 * threads keep the affinity they inherit), align=<bytes> (object alignment, false-sharing),
 * calibrate=<ms> (run with growing counts until one run lasts that long, and report that run),
 * corrupt=<n> (server, a self-test of the object check: thread 0 flips a bit of its n-th
 * allocation in the first round, which must make the run fail), live=<n> (server: live
 * objects per thread, 64..1048576, default 2048), lifetime=short|long (server: threads created
 * and joined in rounds, or one round of threads that live the whole run; default short),
 * teardown=burst|handover (server: a thread frees its whole live set before it exits, or
 * leaves it to the next thread of its lineage; default burst), seconds=<s> and idle=<s>
 * (return: how long the light load runs after the burst, 30 by default, and how long the child
 * then stays idle, 0 by default), keep=<n> (return: every n-th object of each burst stays live
 * through the curve, 2..1000000; 0, the default: none).
 * <count> is the number of units timed, over all threads: alloc+free pairs (pair, batch,
 * bulk, threads), objects passed (pipeline), allocations (server, larson, xmalloc) or writes
 * (false-sharing, cache-scratch); for return, the objects of each thread's burst (nothing is
 * timed: it prints its curve, see bench_run_return_once()).
 *
 * The child prints zero or more "placement <thread>:<Cpus_allowed_list> ..." lines (read from
 * /proc/thread-self/status by each thread once it is placed), then one result line:
 *   ok ns=<ns per unit> units=<units> elapsed_ms=<ms> rss_kb=<VmHWM> base_kb=<VmRSS before>
 *      [cpu_ms=<user+sys>] [os_warm=.. allocs_warm=.. os_all=.. allocs_all=..]
 *      [shared=<fraction>]
 * or "unavailable <why>" (exit 3) or "error <why>" (exit 1: an allocation failed or an object
 * came back corrupted). Bad arguments: exit 2. cpu_ms (server, larson, xmalloc) is the CPU
 * time of the timed part, user plus system, from getrusage(RUSAGE_SELF) at its start and end:
 * every thread of the child, those that have exited included, beside the wall time elapsed_ms.
 *
 * Every thread scenario runs its workers the same way for every backend: worker 0 on the
 * child's main thread, workers 1..n-1 on threads the backend starts (pthread_create() for
 * libpool and the mallocs; rte_eal_remote_launch() on EAL lcores for DPDK), all meeting at a
 * barrier before the timed part and at another after it. Placement is the same for all: with a
 * pin list, worker i runs on CPU pin[i % n] (pthread_setaffinity_np() by the worker itself, or
 * the EAL's --lcores mapping for DPDK); without, every worker may run on every CPU the process
 * may use.
 */
#ifndef POOL_TOOLS_POOL_BENCH_H
#define POOL_TOOLS_POOL_BENCH_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NOINLINE    __attribute__((noinline))
#define BENCH_UNUSED      __attribute__((unused))   /* not every child needs it */
#define BENCH_BATCH       64u      /* batch: live objects, freed LIFO */
#define BENCH_BULK        32u      /* bulk: objects per bulk call */
#define BENCH_RING        1024u    /* pipeline: producer/consumer queue slots */
#define BENCH_MAX_THREADS 1024u
#define BENCH_MAX_CPUS    1024u
#define BENCH_EXIT_FAILED 1
#define BENCH_EXIT_USAGE  2
#define BENCH_EXIT_UNAVAILABLE 3
#define BENCH_CHUNK       4096u    /* pairs per call of a measured loop */
#define BENCH_LINE        64u      /* cache line size assumed by false-sharing */
#define BENCH_FS_OBJS     64u      /* false-sharing: objects per thread */
#define BENCH_ALIAS       4096u    /* loads match stores in flight on these low address bits */

/*
 * server: the shape of mimalloc's test-stress (test/test-stress.c in microsoft/mimalloc),
 * adapted to pools, swept over what users with large live sets see (issue 20). One pool per
 * power-of-two size from 8 B to 16 KiB; sizes 8 B-1 KiB are drawn uniformly 125 times in 128
 * and 2-16 KiB otherwise ("linear in powers of two, some extra large", as test-stress draws
 * them). Each thread owns `live` slots (key live=, default SRV_LIVE): an allocation replaces
 * the object of a random slot (freeing it), so lifetimes are random; one allocation in 16 is
 * retained longer (up to live/2 objects); a quarter of the slot allocations are swapped with a
 * random entry of a shared transfer array (one per size), so that the object is freed by
 * whichever thread takes it, and may outlive the thread that made it.
 *
 * Thread i of every round continues lineage i: its slots and retained objects. Two dimensions:
 *   lifetime=short  threads are created and joined in rounds of srv_steps(live) allocations per
 *                   thread (test-stress: about 22,500 allocations per thread and round at its
 *                   default scale, 50 rounds); the count sets the number of rounds (at least 2),
 *                   never the work per thread, so that thread start and exit weigh the same for
 *                   every backend;
 *   lifetime=long   one round: each thread makes count/threads allocations (at least what two
 *                   short rounds make) and then ends;
 *   teardown=burst  before it exits, each thread frees its whole live set (slots and retained
 *                   objects) in one burst, as a server does when a connection storm ends;
 *   teardown=handover
 *                   a thread exits leaving its live set to the next thread of its lineage, which
 *                   frees those objects as it replaces them; what is live after the last round
 *                   is freed by the main thread after the timed part (the same objects for every
 *                   backend).
 * The first round is the warm-up of the OS-layer share.
 */
#define SRV_CLASSES       12u      /* 8 B .. 16 KiB */
#define SRV_LIVE          2048u    /* default live slots per thread */
#define SRV_LIVE_MIN      64u
#define SRV_LIVE_MAX      (1u << 20)
#define SRV_TRANSFER      256u     /* per size class */
#define SRV_STEPS         20000u   /* least allocations per thread and round */
#define SRV_MIN_ROUNDS    2u
#define SRV_COOKIE        0x5bd1e9955bd1e995ull

/*
 * larson: the shape of the server simulation of Larson & Krishnan, "Memory allocation for
 * long-running server applications" (ISMM 1998), written from its description. Each of the
 * `threads` lineages owns an array of LAR_OBJECTS objects, filled by the main thread before
 * the timed part; a thread replaces LAR_STEPS random objects of its array (frees the one in
 * the slot, allocates a new one), then starts its successor, hands it the array and exits; the
 * successor collects it (pthread_join()) and goes on. So most objects are freed by a thread
 * other than the one that made them, and threads keep being replaced, each lineage at its own
 * pace. Sizes are drawn uniformly in bytes from LAR_MIN_SIZE to LAR_MAX_SIZE (Larson draws
 * "random sizes between a minimum and a maximum"); the object comes from the smallest of the
 * six pools of 16..512 B that holds it (the mallocs get that pool's size too). The count sets
 * the generations (at least 2).
 *
 * xmalloc: the shape of xmalloc-test (Lever & Boreham, "malloc() Performance in a Multithreaded
 * Linux Environment", USENIX 2000, FREENIX track), written from its description: half the
 * threads (rounded up) produce, the others consume. A producer allocates objects (sizes as in
 * larson) in batches of XM_BATCH and queues each full batch; a consumer takes any queued batch
 * and frees its objects. At most XM_INFLIGHT batches per thread are in flight (a producer waits
 * for an empty batch), so memory stays bounded. The count is the allocations of all producers.
 */
#define LAR_OBJECTS       10000u   /* objects per lineage (the Hoard distribution's example) */
#define LAR_STEPS         20000u   /* replacements per thread before it hands over */
#define LAR_MIN_SIZE      16u
#define LAR_MAX_SIZE      512u
#define XM_BATCH          64u
#define XM_INFLIGHT       4u

/*
 * cache-scratch: the shape of Hoard's cache-scratch (Berger et al., "Hoard: a scalable memory
 * allocator for multithreaded applications", ASPLOS 2000), written from its description:
 * worker 0 allocates one object per worker in a row and hands object i to worker i; each worker
 * frees the object it was handed, then, round after round, allocates an object, writes its
 * first word SCRATCH_WRITES times and frees it. An allocator that hands a worker the object it
 * freed, or a neighbour of another worker's, puts the workers' objects on shared cache lines,
 * and every write is a transfer between cores (passive false sharing). The count is writes.
 *
 * scaling: a parent-side scenario, the server at 8 threads pinned to one CPU and to two (the
 * child runs `server` with a pin list), beside the round trip of a cache line between the two.
 */
#define SCRATCH_WRITES    256u

enum bench_scenario { SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_SERVER,
                      SC_FSHARE, SC_LARSON, SC_XMALLOC, SC_SCRATCH, SC_SCALING, SC_LOOP,
                      SC_RETURN, SC_COUNT };

enum srv_lifetime { SRV_SHORT, SRV_LONG };
enum srv_teardown { SRV_BURST, SRV_HANDOVER };

/*
 * "loop" and "return" are not scenarios of the table: the pair loop without an allocator, and
 * the return curve of `pool-bench --return-curve` (see below).
 */
static const char *const bench_scenario_names[SC_COUNT] = {
	"pair", "batch", "bulk", "pipeline", "threads", "server", "false-sharing", "larson",
	"xmalloc", "cache-scratch", "scaling", "loop", "return"
};

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

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Parse a CPU list ("0-3,6,8-9") into cpus[] in the order written. Returns the count, or -1
 * for a malformed list, a CPU number >= CPU_SETSIZE, or more than `max` entries.
 */
static int bench_parse_cpulist(const char *s, int *cpus, unsigned int max)
{
	unsigned int n = 0;
	const char *p = s;

	if (!*p)
		return -1;
	while (*p) {
		char *end;
		long a, b;

		if (*p < '0' || *p > '9')
			return -1;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -1;
			b = strtol(end + 1, &end, 10);
		}
		if (a < 0 || b < a || b >= CPU_SETSIZE || (*end && *end != ','))
			return -1;
		for (; a <= b; a++) {
			if (n == max)
				return -1;
			cpus[n++] = (int)a;
		}
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			return -1;
	}
	return (int)n;
}

/* Format a CPU set as a list ("0-1,4"). */
static BENCH_UNUSED void bench_format_cpuset(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;
	int c, start = -1;

	buf[0] = 0;
	for (c = 0; c <= CPU_SETSIZE && used < len; c++) {
		int in = c < CPU_SETSIZE && CPU_ISSET(c, set);

		if (in && start < 0)
			start = c;
		if (!in && start >= 0) {
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", start);
			if (c - 1 > start && used < len)
				used += (size_t)snprintf(buf + used, len - used, "-%d", c - 1);
			start = -1;
		}
	}
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
			if (!bench_check(objs[j])) {
				while (j-- > 0)
					bk_free(t, objs[j]);
				return;
			}
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
			bench_fail("a bulk allocation of %u objects returned %u", BENCH_BULK, got);
			bk_free_bulk(t, objs, got);
			return;
		}
		for (j = 0; j < BENCH_BULK; j++)
			bench_touch(objs[j]);
		bk_free_bulk(t, objs, BENCH_BULK);
	}
}

/* Run `loop` over n units in calls of at most BENCH_CHUNK (n: a multiple of the loop's unit). */
static void bench_chunks(void (*loop)(struct bk_thread *, uint64_t), struct bk_thread *t,
                         uint64_t n)
{
	uint64_t done = 0, c;

	while (done < n && !atomic_load_explicit(&bench_failed, memory_order_relaxed)) {
		c = n - done < BENCH_CHUNK ? n - done : BENCH_CHUNK;
		loop(t, c);
		done += c;
	}
}

/* pipeline: single-producer single-consumer rings between pairs of threads. */
struct bench_ring {
	_Atomic uint64_t head __attribute__((aligned(64)));
	_Atomic uint64_t tail __attribute__((aligned(64)));
	void *slot[BENCH_RING] __attribute__((aligned(64)));
};

/*
 * Wait a little: 1000 `pause`s (about 10-40 µs), then give the CPU away. The same for every
 * backend; on a loaded machine each sched_yield() may hand a whole time slice to another
 * process, which is why pipeline figures need a quiet machine (doc/benchmarks.md).
 */
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

/* Produce n objects, then the end marker. */
static void bench_produce(struct bk_thread *t, struct bench_ring *q, uint64_t n)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint64_t i;

	for (i = 0; i < n; i++) {
		void *p = bk_alloc(t);

		if (!bench_check(p))
			break;
		bench_touch(p);
		bench_push(q, &tail, p);
	}
	bench_push(q, &tail, &bench_end_marker);
}

/* Free what comes through the ring until the end marker. */
static void bench_consume(struct bk_thread *t, struct bench_ring *q)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	unsigned int spins = 0;

	for (;;) {
		void *p;

		while (atomic_load_explicit(&q->tail, memory_order_acquire) == head)
			bench_relax(&spins);
		spins = 0;
		p = q->slot[head % BENCH_RING];
		atomic_store_explicit(&q->head, ++head, memory_order_release);
		if (p == &bench_end_marker)
			return;
		bk_free(t, p);
	}
}

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

/* aligned_alloc() on cache lines; C11 wants the size to be a multiple of the alignment. */
static void *bench_line_alloc(size_t size)
{
	return aligned_alloc(64, (size + 63) / 64 * 64);
}

static void bench_barrier(struct bench_shared *sh)
{
	pthread_barrier_wait(&sh->barrier);
}

/* pair, batch, bulk, loop: worker 0 alone. */
static void bench_single(struct bench_worker *w)
{
	const struct bench_params *bp = w->sh->bp;
	uint64_t n = w->sh->count, warm = n / 10;
	void (*loop)(struct bk_thread *, uint64_t);
	void (*warm_loop)(struct bk_thread *, uint64_t);
	unsigned int unit;

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
	bench_chunks(warm_loop, &w->t, warm);
	w->start_ns = bench_now_ns();
	bench_chunks(loop, &w->t, n);
	w->end_ns = bench_now_ns();
	w->done = n;
}

/* pipeline: even workers produce, odd ones consume, one ring per pair. */
static void bench_pipeline(struct bench_worker *w)
{
	struct bench_shared *sh = w->sh;
	struct bench_ring *q = &sh->rings[w->idx / 2];
	uint64_t n = sh->count / (sh->bp->threads / 2);

	if (!n)
		n = 1;
	if (w->idx % 2 == 0)
		bench_produce(&w->t, q, n / 10 + 1);
	else
		bench_consume(&w->t, q);
	bench_barrier(sh);
	w->start_ns = bench_now_ns();
	if (w->idx % 2 == 0) {
		bench_produce(&w->t, q, n);
		w->done = n;
	} else {
		bench_consume(&w->t, q);
	}
	w->end_ns = bench_now_ns();
}

/* threads: batch on every worker, the count split evenly in whole batches. */
static void bench_threads(struct bench_worker *w)
{
	struct bench_shared *sh = w->sh;
	uint64_t n = (sh->count / sh->bp->threads / BENCH_BATCH) * BENCH_BATCH;

	if (!n)
		n = BENCH_BATCH;
	bench_chunks(bench_batch_loop, &w->t, (n / 10 / BENCH_BATCH + 1) * BENCH_BATCH);
	bench_barrier(sh);
	w->start_ns = bench_now_ns();
	bench_chunks(bench_batch_loop, &w->t, n);
	w->end_ns = bench_now_ns();
	w->done = n;
}

static int bench_uintptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return (x > y) - (x < y);
}

/*
 * Where the false-sharing loop's array of pointers lies: the loop loads mine[i + 1] right after
 * it stores to *mine[i], and on Intel cores a load whose address matches that of a store still
 * in flight in its low 12 bits is re-issued after it ("4K aliasing": Intel 64 and IA-32
 * Architectures Optimization Reference Manual; VTune counts it). An array whose page offsets
 * cover those of the objects then costs 10-20% of the row's time for any allocator, by the luck
 * of the stack's address (measured in round 14, doc/benchmarks.md). This returns the index in
 * slots[] (BENCH_FS_SLOTS entries) of an array of n pointers whose offsets modulo BENCH_ALIAS,
 * widened by a line on each side, hold as few of the objects' first words as possible: the
 * first such index in address order. Every backend gets the same rule.
 */
#define BENCH_FS_SLOTS (BENCH_FS_OBJS + BENCH_ALIAS / sizeof(void *))

static unsigned int bench_fs_place(void *const *slots, void *const *objs, unsigned int n)
{
	unsigned int best = 0, best_hits = n + 1, s, i;

	for (s = 0; s + n <= BENCH_FS_SLOTS && s < BENCH_ALIAS / sizeof(void *); s++) {
		uintptr_t lo = ((uintptr_t)(slots + s) - BENCH_LINE) % BENCH_ALIAS;
		uintptr_t span = n * sizeof(void *) + 2 * BENCH_LINE;
		unsigned int hits = 0;

		for (i = 0; i < n; i++)
			hits += ((uintptr_t)objs[i] - lo) % BENCH_ALIAS < span;
		if (hits < best_hits) {
			best_hits = hits;
			best = s;
			if (!hits)
				break;
		}
	}
	return best;
}

/*
 * false-sharing: worker 0 allocates 2 x BENCH_FS_OBJS objects in a row; worker w frees the
 * ones of parity w (into its own cache, as a server thread frees what another allocated); each
 * then allocates BENCH_FS_OBJS objects (getting those back, if its allocator keeps freed
 * objects on the freeing thread) and increments a word of each, round after round. Objects of
 * the two workers that share a cache line make every increment a line transfer between cores.
 * Worker 0 records the share of its objects whose line holds an object of worker 1.
 */
static void bench_fshare(struct bench_worker *w)
{
	struct bench_shared *sh = w->sh;
	void *got_objs[BENCH_FS_OBJS], *slots[BENCH_FS_SLOTS], **mine = got_objs;
	uint64_t rounds = sh->count / 2 / BENCH_FS_OBJS, r;
	unsigned int i, got = 0;

	if (!rounds)
		rounds = 1;
	if (w->idx == 0)
		for (i = 0; i < 2 * BENCH_FS_OBJS; i++) {
			sh->fs_objs[i] = bk_alloc(&w->t);
			if (!bench_check(sh->fs_objs[i]))
				break;
			bench_touch(sh->fs_objs[i]);
		}
	bench_barrier(sh);
	/* every worker passes every barrier, failed or not, so that none waits forever */
	for (i = w->idx; i < 2 * BENCH_FS_OBJS && sh->fs_objs[i]; i += 2)
		bk_free(&w->t, sh->fs_objs[i]);
	bench_barrier(sh);
	for (; got < BENCH_FS_OBJS && !atomic_load(&bench_failed); got++) {
		mine[got] = bk_alloc(&w->t);
		if (!bench_check(mine[got]))
			break;
		*(volatile uint64_t *)mine[got] = 0;
		sh->fs_lines[w->idx][got] = (uintptr_t)mine[got] / BENCH_LINE;
	}
	if (got == BENCH_FS_OBJS) {
		mine = slots + bench_fs_place(slots, got_objs, got);
		memcpy(mine, got_objs, sizeof(got_objs));
	}
	bench_barrier(sh);
	w->start_ns = bench_now_ns();
	if (got == BENCH_FS_OBJS)
		for (r = 0; r < rounds; r++)
			for (i = 0; i < BENCH_FS_OBJS; i++)
				(*(volatile uint64_t *)mine[i])++;
	w->end_ns = bench_now_ns();
	w->done = rounds * BENCH_FS_OBJS;
	for (i = 0; i < got; i++) {
		if (got == BENCH_FS_OBJS && *(volatile uint64_t *)mine[i] != rounds)
			bench_fail("false-sharing: an object was written by another thread");
		bk_free(&w->t, mine[i]);
	}
}

/* cache-scratch (see SCRATCH_WRITES): ns per write. */
static void bench_scratch(struct bench_worker *w)
{
	struct bench_shared *sh = w->sh;
	unsigned int n = sh->bp->threads, i;
	uint64_t rounds = sh->count / n / SCRATCH_WRITES, r, k;

	if (!rounds)
		rounds = 1;
	if (w->idx == 0)
		for (i = 0; i < n; i++) {
			sh->fs_objs[i] = bk_alloc(&w->t);
			if (!bench_check(sh->fs_objs[i]))
				break;
			bench_touch(sh->fs_objs[i]);
		}
	bench_barrier(sh);
	if (sh->fs_objs[w->idx])
		bk_free(&w->t, sh->fs_objs[w->idx]);
	bench_barrier(sh);
	w->start_ns = bench_now_ns();
	for (r = 0; r < rounds && !atomic_load(&bench_failed); r++) {
		volatile uint64_t *p = bk_alloc(&w->t);

		if (!bench_check((void *)p))
			break;
		for (k = 0; k < SCRATCH_WRITES; k++)
			p[0] = k;
		bk_free(&w->t, (void *)p);
	}
	w->end_ns = bench_now_ns();
	w->done = r * SCRATCH_WRITES;
}

/* Share of worker 0's objects whose cache line also holds one of worker 1's. */
static double bench_fshare_shared(struct bench_shared *sh)
{
	uintptr_t other[BENCH_FS_OBJS];
	unsigned int i, shared = 0;

	memcpy(other, sh->fs_lines[1], sizeof(other));
	qsort(other, BENCH_FS_OBJS, sizeof(other[0]), bench_uintptr_cmp);
	for (i = 0; i < BENCH_FS_OBJS; i++)
		if (bsearch(&sh->fs_lines[0][i], other, BENCH_FS_OBJS, sizeof(other[0]),
		            bench_uintptr_cmp))
			shared++;
	return (double)shared / BENCH_FS_OBJS;
}

static void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	const struct bench_params *bp = w->sh->bp;

	bench_place(bp, w->idx);
	bench_cpus_allowed(w->cpus, sizeof(w->cpus));
	bk_thread_start(&w->t);
	switch (bp->scenario) {
	case SC_PIPELINE:
		bench_pipeline(w);
		break;
	case SC_THREADS:
		bench_threads(w);
		break;
	case SC_FSHARE:
		bench_fshare(w);
		break;
	case SC_SCRATCH:
		bench_scratch(w);
		break;
	default:
		bench_single(w);
		break;
	}
	bk_thread_stop(&w->t);
	/* all leave together: nobody waits for the others by spinning (DPDK's main lcore) */
	bench_barrier(w->sh);
	return NULL;
}

/* Workers of every scenario but server. */
static unsigned int bench_workers_of(const struct bench_params *bp)
{
	switch (bp->scenario) {
	case SC_PIPELINE:
	case SC_THREADS:
	case SC_SCRATCH:
		return bp->threads;
	case SC_FSHARE:
		return 2;
	default:
		return 1;
	}
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

/* One run of a worker scenario over `count` units. */
static int bench_run_workers_once(const struct bench_params *bp, uint64_t count,
                                  struct bench_result *res, int report_placement)
{
	unsigned int n = bench_workers_of(bp), i;
	struct bench_worker *w = bench_line_alloc(sizeof(*w) * n);
	struct bench_shared *sh = bench_line_alloc(sizeof(*sh));
	double start = 0, end = 0;
	int rc = 0;

	if (!w || !sh) {
		free(w);
		free(sh);
		bench_fail("out of memory for %u workers", n);
		return -1;
	}
	memset(w, 0, sizeof(*w) * n);
	memset(sh, 0, sizeof(*sh));
	sh->bp = bp;
	sh->count = count;
	if (bp->scenario == SC_PIPELINE) {
		sh->rings = bench_line_alloc(sizeof(*sh->rings) * (n / 2));
		if (!sh->rings) {
			free(w);
			free(sh);
			bench_fail("out of memory for %u rings", n / 2);
			return -1;
		}
		memset(sh->rings, 0, sizeof(*sh->rings) * (n / 2));
	}
	pthread_barrier_init(&sh->barrier, NULL, n);
	for (i = 0; i < n; i++) {
		w[i].sh = sh;
		w[i].idx = i;
	}
	if (bk_run_workers(n, bench_worker_main, (char *)w, sizeof(*w)) < 0) {
		bench_fail("cannot start %u threads", n);
		rc = -1;
	}
	res->units = 0;
	for (i = 0; i < n && !rc; i++) {
		if (w[i].end_ns > end)
			end = w[i].end_ns;
		if (w[i].start_ns && (!start || w[i].start_ns < start))
			start = w[i].start_ns;
		res->units += w[i].done;
	}
	res->elapsed_ns = end - start;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = bp->scenario == SC_FSHARE ? bench_fshare_shared(sh) : -1;
	if (report_placement && !rc)
		bench_print_placement(w[0].cpus, sizeof(*w), n);
	pthread_barrier_destroy(&sh->barrier);
	free(sh->rings);
	free(sh);
	free(w);
	return rc;
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

/* ------------------------------------------------------------------------------------------ */
/* server, larson, xmalloc: objects of several pools, checked when freed                     */
/* ------------------------------------------------------------------------------------------ */

struct srv_slot {
	void *p;
	unsigned int cls;
};

/* The object size of each pool (size class), set by bench_child_main(). */
static size_t srv_sizes[SRV_CLASSES];

/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators"). */
static inline uint64_t srv_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* A seed per thread and round (or generation), never 0 (xorshift would stay at 0). */
static inline uint64_t srv_seed(unsigned int round, unsigned int idx)
{
	return ((uint64_t)round + 1) * 0x9e3779b97f4a7c15ull ^ (idx + 1);
}

/* The pattern an object of class cls at p carries while it is live. */
static inline uint64_t srv_pattern(const void *p, unsigned int cls)
{
	return ((uint64_t)(uintptr_t)p ^ SRV_COOKIE) + cls;
}

/*
 * Allocate an object of class cls: zero-filled (zero != 0: checked, first, middle and last
 * word) or not; then write its pattern into the first word and the complement into the last
 * one. Returns NULL (and records the failure) when the backend returned NULL.
 */
static inline void *srv_alloc(unsigned int cls, int zero)
{
	size_t words = srv_sizes[cls] / 8;
	uint64_t *p = zero ? bk_server_zalloc(cls) : bk_server_alloc(cls);

	if (!p) {
		bench_fail("an allocation of %zu bytes returned NULL", srv_sizes[cls]);
		return NULL;
	}
	if (zero && (p[0] || p[words / 2] || p[words - 1])) {
		bench_fail("an object of %zu bytes at %p was not zero-filled", srv_sizes[cls],
		           (void *)p);
		return p;
	}
	p[0] = srv_pattern(p, cls);
	if (words > 1)
		p[words - 1] = ~srv_pattern(p, cls);
	return p;
}

/*
 * Check an object's pattern (and, if it came zero-filled, that its middle word still is), then
 * free it.
 */
static inline void srv_free(void *obj, unsigned int cls, int zeroed)
{
	size_t words = srv_sizes[cls] / 8;
	uint64_t *p = obj;

	if (p[0] != srv_pattern(p, cls) || (words > 1 && p[words - 1] != ~srv_pattern(p, cls)) ||
	    (zeroed && words > 2 && p[words / 2]))
		bench_fail("an object of %zu bytes at %p was corrupted while live (first word "
		           "%#llx, expected %#llx)", srv_sizes[cls], obj, (unsigned long long)p[0],
		           (unsigned long long)srv_pattern(p, cls));
	bk_server_free(cls, obj);
}

/* Harness memory, taken and touched before the timed part, so that no backend pays its faults. */
static void *srv_harness_alloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p)
		memset(p, 0, size);
	return p;
}

/* 125 times in 128: 8 B..1 KiB, uniformly; else 2..16 KiB. */
static inline unsigned int srv_class(uint64_t r)
{
	return (r & 127) < 125 ? (unsigned int)((r >> 8) % 8) : 8 + (unsigned int)((r >> 8) % 4);
}

/*
 * larson, xmalloc: a size drawn uniformly in LAR_MIN_SIZE..LAR_MAX_SIZE, as the smallest class
 * that holds it (8 << cls >= size).
 */
static inline unsigned int lar_class(uint64_t r)
{
	unsigned int span = LAR_MAX_SIZE - LAR_MIN_SIZE + 1;
	unsigned int size = LAR_MIN_SIZE + (unsigned int)((r >> 32) % span);
	unsigned int cls = 0;

	while (((size_t)8 << cls) < size)
		cls++;
	return cls;
}

/* server: allocations per thread and round. */
static uint64_t srv_steps(unsigned int live)
{
	return 2ull * live > SRV_STEPS ? 2ull * live : SRV_STEPS;
}

/* What a thread of the server holds, handed from round to round (teardown=handover). */
struct srv_lineage {
	struct srv_slot *slot;      /* live slots, random lifetimes */
	struct srv_slot *retain;    /* live / 2 slots, kept until the teardown */
	unsigned int nretain;
};

struct srv_state {
	const struct bench_params *bp;
	_Atomic(void *) transfer[SRV_CLASSES][SRV_TRANSFER];
	struct srv_lineage *lin;    /* one per thread index */
	uint64_t steps;             /* allocations per thread and round */
	unsigned int rounds;
	unsigned int round;
};

struct srv_thread {
	pthread_t thread;
	struct srv_state *st;
	unsigned int idx;
	uint64_t allocs;
	char cpus[128];
} __attribute__((aligned(64)));

/* Free everything a lineage holds (the teardown burst, or the clean-up after the run). */
static void srv_free_lineage(struct srv_lineage *ln, unsigned int live)
{
	unsigned int i;

	for (i = 0; i < live; i++)
		if (ln->slot[i].p) {
			srv_free(ln->slot[i].p, ln->slot[i].cls, 1);
			ln->slot[i].p = NULL;
		}
	for (i = 0; i < ln->nretain; i++)
		srv_free(ln->retain[i].p, ln->retain[i].cls, 1);
	ln->nretain = 0;
}

static void *srv_thread_main(void *arg)
{
	struct srv_thread *th = arg;
	struct srv_state *st = th->st;
	const struct bench_params *bp = st->bp;
	struct srv_lineage *ln = &st->lin[th->idx];
	uint64_t seed = srv_seed(st->round, th->idx);
	unsigned int live = bp->live, i;
	uint64_t s;

	bench_place(bp, th->idx);
	if (st->round == 0)
		bench_cpus_allowed(th->cpus, sizeof(th->cpus));
	for (s = 0; s < st->steps && !atomic_load_explicit(&bench_failed, memory_order_relaxed);
	     s++) {
		uint64_t r = srv_rand(&seed);
		unsigned int cls = srv_class(r);
		void *p;

		if ((r >> 16) % 16 == 0 && ln->nretain < live / 2) {
			p = srv_alloc(cls, 1);
			if (!p)
				break;
			ln->retain[ln->nretain].p = p;
			ln->retain[ln->nretain++].cls = cls;
		} else {
			struct srv_slot *sl = &ln->slot[(r >> 24) % live];

			if (sl->p)
				srv_free(sl->p, sl->cls, 1);
			sl->p = srv_alloc(cls, 1);
			sl->cls = cls;
			if (!sl->p)
				break;
			if ((r >> 40) % 4 == 0)   /* hand it to whichever thread takes it next */
				sl->p = atomic_exchange(&st->transfer[cls][(r >> 44) % SRV_TRANSFER],
				                        sl->p);
		}
		th->allocs++;
		if (th->allocs == bp->corrupt && th->idx == 0 && st->round == 0) {
			void *obj = ln->nretain ? ln->retain[ln->nretain - 1].p : NULL;

			for (i = 0; !obj && i < live; i++)
				obj = ln->slot[i].p;
			if (obj)
				*(volatile uint8_t *)obj ^= 1;
		}
	}
	if (bp->teardown == SRV_BURST)
		srv_free_lineage(ln, live);
	return NULL;
}

static int bench_run_server_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, live = bp->live, i, c;
	struct srv_state *st = calloc(1, sizeof(*st));
	struct srv_thread *th = bench_line_alloc(sizeof(*th) * n);
	uint64_t allocs = 0, os;
	double start;
	int rc = 0;

	if (!st || !th || !(st->lin = calloc(n, sizeof(*st->lin)))) {
		free(st);
		free(th);
		bench_fail("out of memory for %u threads", n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		st->lin[i].slot = srv_harness_alloc(sizeof(struct srv_slot) * live);
		st->lin[i].retain = srv_harness_alloc(sizeof(struct srv_slot) * (live / 2));
		if (!st->lin[i].slot || !st->lin[i].retain) {
			bench_fail("out of memory for %u slots of %u threads", live, n);
			rc = -1;
			n = i + 1;
			goto out;
		}
	}
	memset(th, 0, sizeof(*th) * n);
	st->bp = bp;
	st->steps = srv_steps(live);
	if (bp->lifetime == SRV_SHORT) {
		st->rounds = (unsigned int)(count / (st->steps * n));
		if (st->rounds < SRV_MIN_ROUNDS)
			st->rounds = SRV_MIN_ROUNDS;
	} else {
		st->rounds = 1;
		if (count / n > SRV_MIN_ROUNDS * st->steps)
			st->steps = count / n;
		else
			st->steps *= SRV_MIN_ROUNDS;
	}
	res->have_os = 0;
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (st->round = 0; st->round < st->rounds && !rc; st->round++) {
		for (i = 0; i < n; i++) {
			th[i].st = st;
			th[i].idx = i;
			if (pthread_create(&th[i].thread, NULL, srv_thread_main, &th[i]) != 0) {
				bench_fail("cannot create thread %u of %u", i, n);
				rc = -1;
				break;
			}
		}
		while (i-- > 0)
			pthread_join(th[i].thread, NULL);
		if (st->round == 0) {
			for (i = 0; i < n; i++)
				allocs += th[i].allocs;
			res->allocs_warm = allocs;
			res->have_os = bk_server_os_allocs(&os) == 0;
			res->os_warm = res->have_os ? os : 0;
		}
	}
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	/* untimed: what the last threads handed over, and what the transfer array holds */
	for (i = 0; i < n; i++)
		srv_free_lineage(&st->lin[i], live);
	for (c = 0; c < SRV_CLASSES; c++)
		for (i = 0; i < SRV_TRANSFER; i++) {
			void *p = atomic_exchange(&st->transfer[c][i], NULL);

			if (p)
				srv_free(p, c, 1);
		}
	res->units = 0;
	for (i = 0; i < n; i++)
		res->units += th[i].allocs;
	res->allocs_all = res->units;
	if (res->have_os && bk_server_os_allocs(&os) == 0)
		res->os_all = os;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement && !rc)
		bench_print_placement(th[0].cpus, sizeof(*th), n);
out:
	for (i = 0; i < n; i++) {
		free(st->lin[i].slot);
		free(st->lin[i].retain);
	}
	free(st->lin);
	free(th);
	free(st);
	return rc;
}

/* larson ----------------------------------------------------------------------------------- */

struct lar_state {
	const struct bench_params *bp;
	unsigned int gens;          /* threads per lineage, one after the other */
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* a lineage ended */
	unsigned int ended;
};

/* A lineage: its objects and the thread that now holds them. */
struct lar_lineage {
	struct lar_state *st;
	struct srv_slot *obj;       /* LAR_OBJECTS */
	unsigned int idx;
	unsigned int gen;           /* generation of the thread that holds the objects */
	pthread_t prev;             /* its predecessor, which it joins */
	pthread_t last;             /* the lineage's last thread, joined by the main thread */
	uint64_t allocs;
	char cpus[128];             /* first generation's Cpus_allowed_list */
} __attribute__((aligned(64)));

/*
 * One thread of a lineage: collect the predecessor, replace LAR_STEPS random objects, then start
 * the successor and exit without touching the lineage again (the successor owns it from
 * pthread_create() on), or, as the last generation, tell the main thread.
 */
static void *lar_thread_main(void *arg)
{
	struct lar_lineage *ln = arg;
	struct lar_state *st = ln->st;
	uint64_t seed = srv_seed(ln->gen, ln->idx);
	pthread_t next;
	unsigned int s;

	if (ln->gen > 0)
		pthread_join(ln->prev, NULL);
	bench_place(st->bp, ln->idx);
	if (ln->gen == 0)
		bench_cpus_allowed(ln->cpus, sizeof(ln->cpus));
	for (s = 0; s < LAR_STEPS && !atomic_load_explicit(&bench_failed, memory_order_relaxed);
	     s++) {
		uint64_t r = srv_rand(&seed);
		struct srv_slot *o = &ln->obj[(r >> 8) % LAR_OBJECTS];

		if (o->p)
			srv_free(o->p, o->cls, 0);
		o->cls = lar_class(r);
		o->p = srv_alloc(o->cls, 0);
		if (!o->p)
			break;
		ln->allocs++;
	}
	if (ln->gen + 1 < st->gens && !atomic_load(&bench_failed)) {
		ln->prev = pthread_self();
		ln->gen++;
		if (pthread_create(&next, NULL, lar_thread_main, ln) == 0)
			return NULL;
		ln->gen--;
		bench_fail("cannot start generation %u of lineage %u", ln->gen + 1, ln->idx);
	}
	ln->last = pthread_self();
	pthread_mutex_lock(&st->lock);
	st->ended++;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

static int bench_run_larson_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, started, i, k;
	struct lar_state st = { .bp = bp };
	struct lar_lineage *ln = bench_line_alloc(sizeof(*ln) * n);
	uint64_t seed = srv_seed(~0u, 0);
	pthread_t tid;
	double start;
	int rc = 0;

	if (!ln) {
		bench_fail("out of memory for %u lineages", n);
		return -1;
	}
	memset(ln, 0, sizeof(*ln) * n);
	st.gens = (unsigned int)(count / ((uint64_t)LAR_STEPS * n));
	if (st.gens < SRV_MIN_ROUNDS)
		st.gens = SRV_MIN_ROUNDS;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	/* untimed: the main thread fills every lineage's array, as Larson's driver does */
	for (i = 0; i < n && !rc; i++) {
		ln[i].st = &st;
		ln[i].idx = i;
		ln[i].obj = srv_harness_alloc(sizeof(struct srv_slot) * LAR_OBJECTS);
		if (!ln[i].obj) {
			bench_fail("out of memory for the objects of %u lineages", n);
			rc = -1;
			break;
		}
		for (k = 0; k < LAR_OBJECTS; k++) {
			ln[i].obj[k].cls = lar_class(srv_rand(&seed));
			ln[i].obj[k].p = srv_alloc(ln[i].obj[k].cls, 0);
			if (!ln[i].obj[k].p) {
				rc = -1;
				break;
			}
		}
	}
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (started = 0; started < n && !rc; started++)
		if (pthread_create(&tid, NULL, lar_thread_main, &ln[started]) != 0) {
			bench_fail("cannot create thread %u of %u", started, n);
			rc = -1;
			break;
		}
	pthread_mutex_lock(&st.lock);
	while (st.ended < started)
		pthread_cond_wait(&st.cond, &st.lock);
	pthread_mutex_unlock(&st.lock);
	for (i = 0; i < started; i++)
		pthread_join(ln[i].last, NULL);
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	res->units = 0;
	for (i = 0; i < n; i++) {
		res->units += ln[i].allocs;
		for (k = 0; ln[i].obj && k < LAR_OBJECTS; k++)
			if (ln[i].obj[k].p)
				srv_free(ln[i].obj[k].p, ln[i].obj[k].cls, 0);
		free(ln[i].obj);
	}
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement && !rc)
		bench_print_placement(ln[0].cpus, sizeof(*ln), n);
	pthread_cond_destroy(&st.cond);
	pthread_mutex_destroy(&st.lock);
	free(ln);
	return rc;
}

/* xmalloc ---------------------------------------------------------------------------------- */

struct xm_batch {
	struct xm_batch *next;
	unsigned int n;
	unsigned char cls[XM_BATCH];
	void *obj[XM_BATCH];
};

struct xm_state {
	const struct bench_params *bp;
	pthread_mutex_t lock;
	pthread_cond_t queued;      /* a full batch was queued, or the last producer finished */
	pthread_cond_t returned;    /* an empty batch came back */
	struct xm_batch *full, *full_tail;   /* queued batches, oldest first */
	struct xm_batch *empty;
	unsigned int producing;     /* producers not finished */
	uint64_t per_producer;      /* allocations */
};

struct xm_thread {
	pthread_t thread;
	struct xm_state *st;
	unsigned int idx;           /* even: producer, odd: consumer */
	uint64_t allocs;
	char cpus[128];
} __attribute__((aligned(64)));

static void xm_produce(struct xm_thread *th)
{
	struct xm_state *st = th->st;
	uint64_t seed = srv_seed(0, th->idx);
	struct xm_batch *b;
	unsigned int k, want;

	while (th->allocs < st->per_producer &&
	       !atomic_load_explicit(&bench_failed, memory_order_relaxed)) {
		pthread_mutex_lock(&st->lock);
		while (!st->empty)
			pthread_cond_wait(&st->returned, &st->lock);
		b = st->empty;
		st->empty = b->next;
		pthread_mutex_unlock(&st->lock);
		want = st->per_producer - th->allocs < XM_BATCH ?
		       (unsigned int)(st->per_producer - th->allocs) : XM_BATCH;
		for (k = 0; k < want; k++) {
			b->cls[k] = (unsigned char)lar_class(srv_rand(&seed));
			b->obj[k] = srv_alloc(b->cls[k], 0);
			if (!b->obj[k])
				break;
		}
		b->n = k;
		th->allocs += k;
		b->next = NULL;
		pthread_mutex_lock(&st->lock);
		if (st->full_tail)
			st->full_tail->next = b;
		else
			st->full = b;
		st->full_tail = b;
		pthread_cond_signal(&st->queued);
		pthread_mutex_unlock(&st->lock);
		if (k < want)
			break;
	}
	pthread_mutex_lock(&st->lock);
	if (--st->producing == 0)
		pthread_cond_broadcast(&st->queued);
	pthread_mutex_unlock(&st->lock);
}

/* Free the objects of queued batches until every producer is finished and the queue empty. */
static void xm_consume(struct xm_thread *th)
{
	struct xm_state *st = th->st;
	struct xm_batch *b;
	unsigned int k;

	for (;;) {
		pthread_mutex_lock(&st->lock);
		while (!st->full && st->producing)
			pthread_cond_wait(&st->queued, &st->lock);
		b = st->full;
		if (b) {
			st->full = b->next;
			if (!st->full)
				st->full_tail = NULL;
		}
		pthread_mutex_unlock(&st->lock);
		if (!b)
			return;
		for (k = 0; k < b->n; k++)
			srv_free(b->obj[k], b->cls[k], 0);
		pthread_mutex_lock(&st->lock);
		b->next = st->empty;
		st->empty = b;
		pthread_cond_signal(&st->returned);
		pthread_mutex_unlock(&st->lock);
	}
}

static void *xm_thread_main(void *arg)
{
	struct xm_thread *th = arg;

	bench_place(th->st->bp, th->idx);
	bench_cpus_allowed(th->cpus, sizeof(th->cpus));
	if (th->idx % 2 == 0)
		xm_produce(th);
	else
		xm_consume(th);
	return NULL;
}

static int bench_run_xmalloc_once(const struct bench_params *bp, uint64_t count,
                                  struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, producers = (n + 1) / 2, nb = XM_INFLIGHT * n, i;
	struct xm_state st = { .bp = bp };
	struct xm_thread *th = bench_line_alloc(sizeof(*th) * n);
	struct xm_batch *batches = srv_harness_alloc(sizeof(*batches) * nb);
	double start;

	if (!th || !batches) {
		free(th);
		free(batches);
		bench_fail("out of memory for %u threads", n);
		return -1;
	}
	memset(th, 0, sizeof(*th) * n);
	for (i = 0; i < nb; i++) {
		batches[i].next = st.empty;
		st.empty = &batches[i];
	}
	st.producing = producers;
	st.per_producer = count / producers > XM_BATCH ? count / producers : XM_BATCH;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.queued, NULL);
	pthread_cond_init(&st.returned, NULL);
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (i = 0; i < n; i++) {
		th[i].st = &st;
		th[i].idx = i;
		if (pthread_create(&th[i].thread, NULL, xm_thread_main, &th[i]) != 0) {
			/* the queue needs every thread: the ones started cannot finish */
			fprintf(stderr, "pool-bench: cannot create thread %u of %u\n", i, n);
			_exit(BENCH_EXIT_FAILED);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i].thread, NULL);
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	res->units = 0;
	for (i = 0; i < n; i++)
		res->units += th[i].allocs;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement)
		bench_print_placement(th[0].cpus, sizeof(*th), n);
	pthread_cond_destroy(&st.returned);
	pthread_cond_destroy(&st.queued);
	pthread_mutex_destroy(&st.lock);
	free(batches);
	free(th);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* return: the memory a burst leaves, against time (pool-bench --return-curve)                */
/* ------------------------------------------------------------------------------------------ */

/*
 * The shape of issue 28: `threads` threads each take `count` objects of `size` bytes at once,
 * touching every byte, and free them all; then each keeps serving a light load, one allocation
 * and free (a request's buffer) every RET_PAIR_US, for `seconds`. The main thread prints, every
 * RET_SAMPLE_MS from the end of the frees, "curve t_ms=<ms> rss_kb=<VmRSS> held_kb=<the bytes
 * the backend holds for its objects, -1 when it cannot tell>", and "peak rss_kb=.. held_kb=.."
 * before the frees. With `keep`, every keep-th object of each burst stays live (written, and
 * checked and freed once the curve is done): survivors that keep the backend's slabs, pages or
 * runs in use. Then, with `idle`, the threads stop and the child stays idle that long:
 * "idle s=<seconds> cpu_ns=<CPU time of libpool's releaser thread meanwhile> wakeups=<its
 * voluntary context switches>" (-1 without such a thread). No unit is timed.
 */
#define RET_PAIR_US    1000u
#define RET_SAMPLE_MS  100u

struct ret_thread {
	size_t size;
	uint64_t burst;
	unsigned int keep;
	void **objs;
	void **kept;                /* the survivors (keep), burst / keep + 1 slots */
	uint64_t nkept;
	pthread_barrier_t *bar;
	atomic_int *stop;
	uint64_t pairs;
};

static void *ret_thread_main(void *arg)
{
	struct ret_thread *t = arg;
	struct bk_thread bt = { NULL };
	uint64_t i;

	bk_thread_start(&bt);
	for (i = 0; i < t->burst; i++) {
		t->objs[i] = bk_alloc(&bt);
		if (!t->objs[i]) {
			bench_fail("return: allocation %llu of the burst failed", (unsigned long long)i);
			break;
		}
		memset(t->objs[i], 0x5a, t->size);
	}
	pthread_barrier_wait(t->bar);          /* the peak */
	for (i = 0; i < t->burst && t->objs[i]; i++) {
		if (t->keep && i % t->keep == 0)
			t->kept[t->nkept++] = t->objs[i];
		else
			bk_free(&bt, t->objs[i]);
	}
	/* the burst's own bookkeeping goes too (unmapped): what stays resident is the backend's */
	munmap(t->objs, t->burst * sizeof(void *));
	t->objs = NULL;
	pthread_barrier_wait(t->bar);          /* freed */
	while (!atomic_load_explicit(t->stop, memory_order_relaxed)) {
		void *p = bk_alloc(&bt);

		if (!p) {
			bench_fail("return: an allocation of the light load failed");
			break;
		}
		memset(p, 1, t->size < 256 ? t->size : 256);
		bk_free(&bt, p);
		t->pairs++;
		usleep(RET_PAIR_US);
	}
	for (i = 0; i < t->nkept; i++) {
		const unsigned char *o = t->kept[i];
		size_t j;

		for (j = 0; j < t->size && o[j] == 0x5a; j++)
			;
		if (j < t->size) {
			bench_fail("return: byte %zu of a survivor changed (0x%02x)", j, o[j]);
			break;
		}
		bk_free(&bt, t->kept[i]);
	}
	bk_thread_stop(&bt);
	return NULL;
}

/* CPU time (ns, from its schedstat) and voluntary switches of the thread named `comm`: 0, or -1. */
static int bench_thread_cpu(const char *comm, long long *cpu_ns, long long *wakeups)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = -1;

	*cpu_ns = *wakeups = -1;
	while (d && found < 0 && (e = readdir(d)) != NULL) {
		char path[300], buf[256];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		buf[0] = 0;
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
		if (strcmp(buf, comm) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lld", cpu_ns) == 1)
			found = 0;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "voluntary_ctxt_switches:", 24))
				*wakeups = strtoll(buf + 24, NULL, 10);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

static long bench_status_kb(const char *key);

static int bench_run_return_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res)
{
	unsigned int n = bp->threads, i;
	struct ret_thread *t = calloc(n, sizeof(*t));
	pthread_t *tid = calloc(n, sizeof(*tid));
	pthread_barrier_t bar;
	atomic_int stop = 0;
	double t0, now;
	long long held, cpu0, cpu1, w0, w1;

	if (!t || !tid)
		return -1;
	pthread_barrier_init(&bar, NULL, n + 1);
	for (i = 0; i < n; i++) {
		t[i] = (struct ret_thread){ .size = bp->size, .burst = count, .keep = bp->keep,
		                            .bar = &bar, .stop = &stop };
		/* mapped, not malloc()ed: no backend keeps its pages once they are unmapped */
		t[i].objs = mmap(NULL, count * sizeof(void *), PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (bp->keep)
			t[i].kept = mmap(NULL, (count / bp->keep + 1) * sizeof(void *),
			                 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t[i].objs == MAP_FAILED || t[i].kept == MAP_FAILED ||
		    pthread_create(&tid[i], NULL, ret_thread_main, &t[i]) != 0) {
			fprintf(stderr, "pool-bench: return: cannot start thread %u\n", i);
			_exit(BENCH_EXIT_FAILED);
		}
	}
	pthread_barrier_wait(&bar);
	held = bk_held_bytes();
	printf("peak rss_kb=%ld held_kb=%lld\n", bench_status_kb("VmRSS"), held < 0 ? -1 : held >> 10);
	pthread_barrier_wait(&bar);
	t0 = bench_now_ns();
	for (now = t0; now - t0 < bp->seconds * 1e9; now = bench_now_ns()) {
		held = bk_held_bytes();
		printf("curve t_ms=%.0f rss_kb=%ld held_kb=%lld\n", (now - t0) / 1e6,
		       bench_status_kb("VmRSS"), held < 0 ? -1 : held >> 10);
		fflush(stdout);
		usleep(RET_SAMPLE_MS * 1000u);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		res->units += t[i].pairs;
	}
	if (bp->idle > 0) {
		bench_thread_cpu("pool-releaser", &cpu0, &w0);
		usleep((useconds_t)(bp->idle * 1e6));
		bench_thread_cpu("pool-releaser", &cpu1, &w1);
		printf("idle s=%.1f cpu_ns=%lld wakeups=%lld\n", bp->idle,
		       cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1, w0 >= 0 && w1 >= 0 ? w1 - w0 : -1);
	}
	res->elapsed_ns = bench_now_ns() - t0;
	res->ns = 0;
	for (i = 0; i < n; i++)
		if (t[i].kept)
			munmap(t[i].kept, (count / bp->keep + 1) * sizeof(void *));
	pthread_barrier_destroy(&bar);
	free(t);
	free(tid);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The child's main                                                                           */
/* ------------------------------------------------------------------------------------------ */

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

/* The scenarios whose threads the scenario itself starts (not bk_run_workers()). */
static int bench_own_threads(enum bench_scenario sc)
{
	return sc == SC_SERVER || sc == SC_LARSON || sc == SC_XMALLOC;
}

static int bench_run_once(const struct bench_params *bp, uint64_t count,
                          struct bench_result *res, int report_placement)
{
	int rc;

	memset(res, 0, sizeof(*res));
	switch (bp->scenario) {
	case SC_SERVER:
		rc = bench_run_server_once(bp, count, res, report_placement);
		break;
	case SC_LARSON:
		rc = bench_run_larson_once(bp, count, res, report_placement);
		break;
	case SC_XMALLOC:
		rc = bench_run_xmalloc_once(bp, count, res, report_placement);
		break;
	case SC_RETURN:
		rc = bench_run_return_once(bp, count, res);
		break;
	default:
		rc = bench_run_workers_once(bp, count, res, report_placement);
		break;
	}
	return rc;
}

/*
 * Run the scenario; with calibrate_ms, grow the count (by the ratio of time still wanted, at
 * least 2x, at most 64x) until a run lasts calibrate_ms, and report that last run.
 */
static int bench_run(const struct bench_params *bp, struct bench_result *res)
{
	uint64_t count = bp->count;
	int first = 1;

	for (;;) {
		double want = bp->calibrate_ms * 1e6, grow;

		if (bench_run_once(bp, count, res, first) < 0 || atomic_load(&bench_failed))
			return -1;
		first = 0;
		if (bp->calibrate_ms <= 0 || res->elapsed_ns >= want)
			return 0;
		grow = want * 1.25 / (res->elapsed_ns > 1e4 ? res->elapsed_ns : 1e4);
		grow = grow < 2 ? 2 : grow > 64 ? 64 : grow;
		if ((double)count * grow > 1e13)
			return 0;
		count = (uint64_t)((double)count * grow);
	}
}

static int bench_child_usage(const char *prog, const char *why, const char *arg)
{
	printf("error %s '%s'\n", why, arg);
	fprintf(stderr, "usage: %s --child <backend> <scenario> <size> <count> <threads> "
	        "[pin=LIST] [align=N] [calibrate=MS] [corrupt=N] [live=N] [lifetime=short|long] "
	        "[teardown=burst|handover] [seconds=S] [idle=S] [keep=N]\n(an internal program of "
	        "pool-bench; run pool-bench instead)\n", prog);
	return BENCH_EXIT_USAGE;
}

static int bench_child_main(int argc, char **argv)
{
	static struct bench_params bp;
	struct bench_result res;
	char why[256] = "";
	char *end;
	unsigned long long v;
	long base_kb;
	int i, n;

	if (argc < 7 || strcmp(argv[1], "--child") != 0)
		return bench_child_usage(argv[0], "bad arguments", argc > 1 ? argv[1] : "");
	memset(&bp, 0, sizeof(bp));
	bp.backend = argv[2];
	for (i = 0; i < SC_COUNT; i++)
		if (strcmp(argv[3], bench_scenario_names[i]) == 0)
			break;
	if (i == SC_COUNT)
		return bench_child_usage(argv[0], "unknown scenario", argv[3]);
	if (i == SC_SCALING)
		return bench_child_usage(argv[0], "the parent runs scaling as server", argv[3]);
	bp.scenario = (enum bench_scenario)i;
	errno = 0;
	v = strtoull(argv[4], &end, 10);
	if (errno || *end || v < 8 || v > (1u << 30))
		return bench_child_usage(argv[0], "bad size", argv[4]);
	bp.size = (size_t)v;
	v = strtoull(argv[5], &end, 10);
	if (errno || *end || v < 1)
		return bench_child_usage(argv[0], "bad count", argv[5]);
	bp.count = v;
	v = strtoull(argv[6], &end, 10);
	if (errno || *end || v < 1 || v > BENCH_MAX_THREADS ||
	    (bp.scenario == SC_PIPELINE && v % 2) || (bp.scenario == SC_XMALLOC && v < 2) ||
	    (bp.scenario == SC_SCRATCH && v > 2 * BENCH_FS_OBJS))
		return bench_child_usage(argv[0], "bad thread count", argv[6]);
	bp.threads = (unsigned int)v;
	bp.live = SRV_LIVE;
	bp.seconds = 30;
	if (!bench_own_threads(bp.scenario) && bp.scenario != SC_RETURN)
		bp.threads = bench_workers_of(&bp);
	for (i = 7; i < argc; i++) {
		if (!strncmp(argv[i], "pin=", 4)) {
			n = bench_parse_cpulist(argv[i] + 4, bp.cpus, BENCH_MAX_CPUS);
			if (n <= 0)
				return bench_child_usage(argv[0], "bad CPU list", argv[i]);
			bp.ncpus = (unsigned int)n;
		} else if (!strncmp(argv[i], "align=", 6)) {
			v = strtoull(argv[i] + 6, &end, 10);
			if (*end || (v & (v - 1)) || v > 4096)
				return bench_child_usage(argv[0], "bad alignment", argv[i]);
			bp.align = (size_t)v;
		} else if (!strncmp(argv[i], "corrupt=", 8)) {
			bp.corrupt = strtoull(argv[i] + 8, &end, 10);
			if (*end || bp.scenario != SC_SERVER)
				return bench_child_usage(argv[0], "bad corrupt= (server only)", argv[i]);
		} else if (!strncmp(argv[i], "live=", 5)) {
			v = strtoull(argv[i] + 5, &end, 10);
			if (*end || v < SRV_LIVE_MIN || v > SRV_LIVE_MAX || bp.scenario != SC_SERVER)
				return bench_child_usage(argv[0], "bad live= (server only, 64..1048576)",
				                         argv[i]);
			bp.live = (unsigned int)v;
		} else if (!strncmp(argv[i], "lifetime=", 9)) {
			if (bp.scenario != SC_SERVER ||
			    (strcmp(argv[i] + 9, "short") && strcmp(argv[i] + 9, "long")))
				return bench_child_usage(argv[0], "bad lifetime= (server only, short or "
				                         "long)", argv[i]);
			bp.lifetime = strcmp(argv[i] + 9, "long") ? SRV_SHORT : SRV_LONG;
		} else if (!strncmp(argv[i], "teardown=", 9)) {
			if (bp.scenario != SC_SERVER ||
			    (strcmp(argv[i] + 9, "burst") && strcmp(argv[i] + 9, "handover")))
				return bench_child_usage(argv[0], "bad teardown= (server only, burst or "
				                         "handover)", argv[i]);
			bp.teardown = strcmp(argv[i] + 9, "handover") ? SRV_BURST : SRV_HANDOVER;
		} else if (!strncmp(argv[i], "seconds=", 8) || !strncmp(argv[i], "idle=", 5)) {
			double *d = argv[i][0] == 's' ? &bp.seconds : &bp.idle;

			*d = strtod(strchr(argv[i], '=') + 1, &end);
			if (*end || *d < 0 || *d > 3600 || bp.scenario != SC_RETURN)
				return bench_child_usage(argv[0], "bad seconds= or idle= (return only, "
				                         "0..3600)", argv[i]);
		} else if (!strncmp(argv[i], "keep=", 5)) {
			unsigned long k = strtoul(argv[i] + 5, &end, 10);

			if (*end || end == argv[i] + 5 || k == 1 || k > 1000000 ||
			    bp.scenario != SC_RETURN)
				return bench_child_usage(argv[0], "bad keep= (return only, 0 or 2..1000000)",
				                         argv[i]);
			bp.keep = (unsigned int)k;
		} else if (!strncmp(argv[i], "calibrate=", 10)) {
			bp.calibrate_ms = strtod(argv[i] + 10, &end);
			if (*end || bp.calibrate_ms < 0 || bp.calibrate_ms > 60000)
				return bench_child_usage(argv[0], "bad calibration time", argv[i]);
		} else {
			return bench_child_usage(argv[0], "unknown key", argv[i]);
		}
	}
	if (bk_setup(&bp, why, sizeof(why)) < 0) {
		printf("unavailable %s\n", why);
		return BENCH_EXIT_UNAVAILABLE;
	}
	if (bench_own_threads(bp.scenario)) {
		unsigned int c;

		for (c = 0; c < SRV_CLASSES; c++)
			srv_sizes[c] = (size_t)8 << c;
		if (bk_server_setup(srv_sizes, SRV_CLASSES, why, sizeof(why)) < 0) {
			bk_teardown();
			printf("unavailable %s\n", why);
			return BENCH_EXIT_UNAVAILABLE;
		}
	}
	base_kb = bench_status_kb("VmRSS");
	fflush(stdout);
	i = bench_run(&bp, &res);
	if (bench_own_threads(bp.scenario))
		bk_server_teardown();
	bk_teardown();
	if (i < 0 || atomic_load(&bench_failed)) {
		printf("error %s, %s scenario: %s\n", bp.backend, argv[3],
		       bench_fail_msg[0] ? bench_fail_msg : "the run failed");
		return BENCH_EXIT_FAILED;
	}
	printf("ok ns=%.4f units=%llu elapsed_ms=%.3f rss_kb=%ld base_kb=%ld", res.ns,
	       (unsigned long long)res.units, res.elapsed_ns / 1e6, bench_status_kb("VmHWM"),
	       base_kb);
	if (bench_own_threads(bp.scenario))
		printf(" cpu_ms=%.3f", res.cpu_ns / 1e6);
	if (res.have_os)
		printf(" os_warm=%llu allocs_warm=%llu os_all=%llu allocs_all=%llu",
		       (unsigned long long)res.os_warm, (unsigned long long)res.allocs_warm,
		       (unsigned long long)res.os_all, (unsigned long long)res.allocs_all);
	if (res.shared >= 0)
		printf(" shared=%.4f", res.shared);
	printf("\n");
	return 0;
}

/*
 * bk_run_workers for backends on plain pthreads: workers 1..n-1 on new threads, worker 0 on
 * the calling thread. Each worker places itself (bench_place()).
 */
static BENCH_UNUSED int bench_run_pthreads(unsigned int n, void *(*fn)(void *), char *args, size_t stride)
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

#endif /* POOL_TOOLS_POOL_BENCH_H */
