/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The allocation-site profile's tables: the sampled objects (a table keyed by address, so that
 * the object layout never changes) and the (stack, pool) rows they are counted in. Private
 * header. A leaf of the debug layer: nothing here calls the core; the thread-cache tier's
 * sampler (pool-sample.c) decides what to sample and calls these, and the introspection layer
 * reads them (pool-profile-dump.c). See the essay at the top of pool-profile.c.
 */
#ifndef POOL_SRC_POOL_PROFILE_H
#define POOL_SRC_POOL_PROFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool-head-t.h"
#include "base/pool-util.h"
#include "debug/pool-stack.h"

/*
 * Bounds. The profile's memory is these static tables and the stacks' (pool-stack.h), and
 * nothing else (plus the per-thread state of the sampler, pool-sample.c):
 * pool__prof_table_bytes() in all, zero pages of the library's BSS until the profile first
 * runs.
 */
#define POOL_PROF_RECORDS   4096u   /* sampled objects remembered at once; past it, counted as
                                       dropped */
#define POOL_PROF_SLOTS     8192u   /* hash slots for them (a power of two: load <= 1/2) */
#define POOL_PROF_SITES     512u    /* (stack, pool) rows, the first of them "[other]" */
#define POOL_PROF_INDEX     1024u   /* hash slots of the rows (a power of two) */
#define POOL_PROF_FILTER    4096u   /* counting filter in front of the record table */

/*
 * One row of a snapshot: a (stack, pool) pair and what the profile knows of it. The stack is the
 * site: the call stack of the allocations, innermost first, its first frame the return address
 * into the program of the call that allocated (pool-stack.h).
 */
struct pool_prof_row {
	uint32_t stack;                 /* its id (pool-stack.h); 0 for "[other]" */
	unsigned int depth;             /* frames[0..depth): the stack (0: none, or not read) */
	uintptr_t frames[POOL_STACK_DEPTH_MAX];
	uintptr_t pool;                 /* the pool's address (a key, never dereferenced) */
	char name[POOL_NAME_MAX + 1];   /* the pool's name ("" for "[other]") */
	size_t size;                    /* its object size, bytes (0 for "[other]") */
	uint64_t samples;               /* objects sampled here (with the sampler's retries) */
	uint64_t kept;                  /* of them, remembered (the sampler's samples, each an
	                                   allocation that held memory): the allocations they
	                                   stand for are kept * weight */
	uint64_t freed;                 /* of them, seen freed (credited back to this row) */
	uint64_t live;                  /* of them, sampled and not seen freed */
	uint64_t age_min_ms, age_max_ms, age_sum_ms;   /* ages of the live ones */
	double weight;                  /* objects one sample stands for */
};

/* The profile as a whole, with a snapshot. */
struct pool_prof_summary {
	size_t rate;                    /* mean bytes between two samples of a thread */
	unsigned int gen;               /* profiles started since the library loaded */
	unsigned int depth;             /* frames a stack keeps */
	int chosen;                     /* only the pools chosen at its start are sampled */
	uint64_t samples;               /* objects sampled since the profile started */
	uint64_t freed;                 /* ... seen freed */
	uint64_t live;                  /* ... remembered now */
	uint64_t dropped;               /* samples not remembered: the record table was full */
	uint64_t forgotten;             /* records dropped: their pool was destroyed, or the
	                                   fork() child's */
	unsigned int stacks;            /* distinct stacks stored */
	uint64_t stacks_refused;        /* stacks not stored: their tables were full ("[other]") */
	uint64_t start_ns;              /* CLOCK_MONOTONIC time the profile started, 0: never */
};

/* The total size of the tables in bytes (static: the bound the documentation states). */
size_t pool__prof_table_bytes(void);

/*
 * A new profile: every record and row forgotten, `rate` the mean bytes between two samples of
 * a thread, and a new generation (pool__prof_gen()), by which the samplers of the threads know
 * to draw their countdowns again. Called when the profile is switched on or its rate changes.
 */
void pool__prof_reset(size_t rate);

/* The generation of the profile in effect (0: never started) and its rate. */
extern atomic_uint pool__prof_generation;

static inline unsigned int pool__prof_gen(void)
{
	return atomic_load_explicit(&pool__prof_generation, memory_order_acquire);
}

size_t pool__prof_rate(void);

/*
 * Remember `obj` of `pool`, handed out by the call stack `stack` (pool__stack_here(); 0: the
 * "[other]" row) at `born_ns` (CLOCK_MONOTONIC), as sampled. 0, or -1 when the record table is
 * full (counted as dropped). An address remembered already (its free went unseen) is credited
 * first.
 */
int pool__prof_record(struct pool_head *pool, void *obj, uint32_t stack, uint64_t born_ns);

/* A sample not taken: no room for it in the region of sampled objects (counted as dropped). */
void pool__prof_dropped(void);

/*
 * The pools a profile samples: every pool, or only those chosen when it started (`pools
 * profile on ... pool <name>`). pool__prof_only is 0 for every pool, else the token that the
 * chosen pools carry in their prof_chosen word. Read lock-free by the samplers when they draw
 * an interval: a change races at most one interval of each thread.
 */
extern atomic_uint pool__prof_only;

static inline int pool__prof_wants(const struct pool_head *pool)
{
	unsigned int only = atomic_load_explicit(&pool__prof_only, memory_order_relaxed);

	return !only || atomic_load_explicit(&pool->prof_chosen, memory_order_relaxed) == only;
}

/*
 * Choosing pools for the next profile: pool__prof_choose_begin() returns a new token, each
 * chosen pool gets it (pool__prof_choose()), then pool__prof_choose_end(token) makes the
 * choice the one in effect (token 0: every pool).
 */
unsigned int pool__prof_choose_begin(void);
void pool__prof_choose(struct pool_head *pool, unsigned int token);
void pool__prof_choose_end(unsigned int token);

/* Objects remembered now (any pool): 0 lets every check skip the table. */
extern atomic_uint pool__prof_nlive;
extern _Atomic unsigned short pool__prof_filter[POOL_PROF_FILTER];

/*
 * May `obj` be remembered? A lock-free look at the counting filter: 0 means certainly not; 1
 * means perhaps (pool__prof_credit() looks in the table). Any thread, any context but a signal
 * handler; never blocks.
 */
static inline int pool__prof_maybe(const void *obj)
{
	return __builtin_expect(atomic_load_explicit(&pool__prof_nlive, memory_order_relaxed) != 0,
	                        0) &&
	       atomic_load_explicit(&pool__prof_filter[pool__hash_ptr(obj, 12)],
	                            memory_order_relaxed) != 0;
}

/*
 * `obj` was seen free (freed, or found in a magazine of free objects): if it is remembered, its
 * record goes and the free is credited to the row of the site that allocated it. Returns 1 when
 * it was remembered. Takes the profile's lock, a leaf lock (nothing is locked or entered under
 * it), so it may be called inside a cache section.
 */
int pool__prof_credit(const void *obj);

/*
 * `pool` is being destroyed (every object free): its records go, counted as forgotten, and its
 * rows stay, by name.
 */
void pool__prof_pool_gone(const struct pool_head *pool);

/*
 * The number of objects, sampled with a mean of `rate` bytes between two samples of a thread,
 * that one sample of `size`-byte objects stands for: 1 / (1 - exp(-size / rate)) (the chance
 * that a Poisson process of rate 1/rate per byte has a point within the object's bytes, the
 * correction tcmalloc applies to its heap samples).
 */
double pool__prof_weight(size_t size, size_t rate);

/*
 * The allocations of `size`-byte objects until the next sample, drawn so that samples are a
 * Poisson process over the bytes allocated, of mean `rate` bytes apart (jemalloc's and
 * tcmalloc's exponential intervals): at least 1. `rng` is the caller's generator state.
 */
uint64_t pool__prof_interval(uint64_t *rng, size_t size, size_t rate);

/*
 * A snapshot: the summary in *sum and up to `max` rows (with the ages of their live samples)
 * in rows[], rows with nothing sampled left out. Returns the number of rows written. Under the
 * profile's lock; allocates nothing.
 */
size_t pool__prof_snapshot(struct pool_prof_row *rows, size_t max, struct pool_prof_summary *sum);

/*
 * The failure report's view, allocation-free: up to `max` rows of `pool` with the most live
 * samples (no ages), best first, with their stacks. Returns how many; 0 also when the
 * profile's lock is held (it is only tried: the report never waits; a stack whose lock is
 * held at that moment is left out, depth 0).
 */
size_t pool__prof_top_of(const struct pool_head *pool, struct pool_prof_row *rows, size_t max);

/*
 * fork(): the lock across it and the stacks' lock (taken last, after the caches are quiesced),
 * released alike in the parent and in the child.
 */
void pool__prof_fork_prepare(void);
void pool__prof_fork_after(void);

#endif
