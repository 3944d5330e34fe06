/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-threads.h - the rows of several threads on one pool: pipeline (even workers
 * allocate and pass each object through a single-producer single-consumer ring to the odd worker
 * of their pair, which frees it: every object changes threads) and threads (the batch loop on
 * every worker at once, the count split evenly in whole batches). A worker that waits for the
 * other end of its ring waits the same way for every backend (bench_relax()).
 */
#ifndef POOL_TOOLS_POOL_BENCH_THREADS_H
#define POOL_TOOLS_POOL_BENCH_THREADS_H

#include <sched.h>

#include "pool-bench-micro.h"

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

#endif /* POOL_TOOLS_POOL_BENCH_THREADS_H */
