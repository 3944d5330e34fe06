/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-micro.h - the rows of one thread: pair (an allocation and its free, again and
 * again), batch (BENCH_BATCH objects allocated, then freed last first), bulk (BENCH_BULK objects
 * at once through the backend's bulk calls) and loop (the pair loop without an allocator, what
 * pool-bench --instructions subtracts). Worker 0 runs them alone, after a warm-up of a tenth of
 * the count (none for loop); each object's first word is written, as a program initialising it
 * would.
 *
 * Each measured loop is a function of its own (BENCH_NOINLINE), so that callgrind can count just
 * it (--toggle-collect=bench_pair_loop*), and runs in calls of at most BENCH_CHUNK units, so
 * that a failure on another thread stops the run soon.
 */
#ifndef POOL_TOOLS_POOL_BENCH_MICRO_H
#define POOL_TOOLS_POOL_BENCH_MICRO_H

#include "pool-bench-backend.h"

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

#endif /* POOL_TOOLS_POOL_BENCH_MICRO_H */
