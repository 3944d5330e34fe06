/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-false-sharing.h - where a backend puts the objects of different threads against
 * cache lines: false-sharing (two threads write objects they got back after freeing the other's
 * allocations: bench_fshare()) and cache-scratch (passive false sharing, below).
 *
 * cache-scratch is the shape of Hoard's cache-scratch (Berger et al., "Hoard: a scalable memory
 * allocator for multithreaded applications", ASPLOS 2000), written from its description:
 * worker 0 allocates one object per worker in a row and hands object i to worker i; each worker
 * frees the object it was handed, then, round after round, allocates an object, writes its
 * first word SCRATCH_WRITES times and frees it. An allocator that hands a worker the object it
 * freed, or a neighbour of another worker's, puts the workers' objects on shared cache lines,
 * and every write is a transfer between cores (passive false sharing). The count is writes.
 */
#ifndef POOL_TOOLS_POOL_BENCH_FALSE_SHARING_H
#define POOL_TOOLS_POOL_BENCH_FALSE_SHARING_H

#include "pool-bench-backend.h"

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
 * cover those of the objects then costs 10-20% of the row's time for any allocator (measured),
 * by the luck of the stack's address. This returns the index in slots[] (BENCH_FS_SLOTS
 * entries) of an array of n pointers whose offsets modulo BENCH_ALIAS, widened by a line on each
 * side, hold as few of the objects' first words as possible: the first such index in address
 * order. Every backend gets the same rule.
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

#endif /* POOL_TOOLS_POOL_BENCH_FALSE_SHARING_H */
