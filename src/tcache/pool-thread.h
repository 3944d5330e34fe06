/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Threads: the registry, each thread's context, its exit, and what one thread does to the
 * others' caches (pool_destroy()'s drain, statistics, fork()). Private header: its caller is
 * pool.c (the pool heads).
 */
#ifndef POOL_SRC_POOL_THREAD_H
#define POOL_SRC_POOL_THREAD_H

#include <stdint.h>

#include "base/pool-head-t.h"

/*
 * The calling thread's context: registered on first use (an id from the registry, or none past
 * POOL_MAX_THREADS or without memory: the thread then works without a cache), and brought in
 * line with the run-time flags (no-cache flushes the caches; integrity switched on fills them
 * with the pattern). *dbg receives the debugging word it acted on. Never NULL.
 */
struct pool_thread *pool__thread_self(unsigned int *dbg);

/* The thread's registry id (a hash of it for threads without one) and fault-injection state. */
unsigned int pool__thread_id(const struct pool_thread *self);
uint64_t *pool__thread_rng(struct pool_thread *self);

/*
 * The library is unloaded (dlclose()) or the process ends: the calling thread's caches go back
 * and are freed, and the thread-exit key is deleted, so that a thread that outlives the library
 * runs no destructor of it (threads that register afterwards work without caches). The caches
 * of other threads are theirs: they are not touched.
 */
void pool__thread_unload(void);

/*
 * pool_destroy(): take every thread's cached objects of `pool` back to the shared lists, with
 * their magazines, credit their budgets and close their entries (the fast path of a late
 * caller then falls to the slow path, which checks the pool). The caller holds the pool list
 * lock. pool__thread_drain_begin() leaves every other thread kept out of its cache sections
 * (with the registry lock held), so that the caller can decide and mark the pool dead before
 * any thread uses its caches again; pool__thread_drain_end() lets them in. No other thread may
 * use the pool meanwhile; one that does anyway (a fast path racing the drain) cannot make the
 * drain read anything but pointer arrays and their bounds, and finds the pool dead in its next
 * section. Returns 1 when a thread was still inside a section after the bounded wait (slow, or
 * dead there): its slot was left alone, and the caller must not destroy the pool (EBUSY).
 */
int pool__thread_drain_begin(struct pool_head *pool);
void pool__thread_drain_end(void);

/*
 * Debugging that needs every allocation and free in a slow path was switched on (the flags are
 * stored already): every registered thread's TLS pointer goes to the empty entries, so that its
 * fast path, which tests no flag, takes the slow paths; each thread gets its entries back at a
 * slow path that sees the flags off (pool__thread_self()). A thread may make one more fast
 * call with the pointer it read before. Takes the registry lock.
 */
void pool__thread_kick(void);

/*
 * The releaser, at a window's end (pool-release.c, under the pool list lock), takes from every
 * registered thread what its cache kept unused through the window, each thread alone being kept
 * out of its sections meanwhile (pool__tcache_hold(): no wait; one found inside a section is
 * left for the next window; the caller's own caches need no hold). A thread that entered no
 * section since the last call was idle through the window: its spare magazines go (previous,
 * full and empty ones, which the inline fast path never touches; its loaded magazine, which the
 * fast path may be using, stays). Of a thread that did, the full magazines at the bottom of its
 * stack that no slow path took since the last call go (pool__magazine_take_spares()). Their
 * objects go to the shared lists as unused through the window (pool__demand_push_idle()), or to
 * the OS layer for pools that bypass them; the owner's budget is credited. Pools under integrity
 * or backup debugging are left alone. Returns the objects taken.
 */
unsigned long pool__thread_reclaim(void);

/* Objects of `pool` in all thread caches (racy reads: an estimate). */
unsigned long pool__thread_sum_cached(const struct pool_head *pool);

/* The same when the registry lock is free at once: 0, or -1 (held) and *sum untouched. */
int pool__thread_sum_cached_try(const struct pool_head *pool, unsigned long *sum);

/*
 * The thread caches of one pool as `pools show detailed` tells them (racy reads of the other
 * threads' slots, as pool__thread_sum_cached(): an estimate). `slot` 0: the pool has no cache
 * slot (all were taken when it was made), and only `threads` is set.
 */
struct pool_cache_view {
	unsigned int slot;          /* the pool's cache slot, or 0 */
	unsigned int threads;       /* registered threads (those that ever used a pool, not gone) */
	unsigned int caching;       /* of them, those whose cache of the pool holds objects */
	unsigned long objects;      /* objects in those caches */
	unsigned int depth_min;     /* the loaded magazines' depth (pointers the fast path may */
	unsigned int depth_max;     /* fill) among threads that have one; 0 and 0: none has */
};

/* Fill *v for `pool` (takes the registry lock: not under a thread's own section). */
void pool__thread_cache_view(const struct pool_head *pool, struct pool_cache_view *v);

/*
 * fork(): the registry lock and the threads' sections quiesced around fork(); the child takes
 * back the caches of the threads that did not follow it.
 */
void pool__thread_fork_prepare(void);
void pool__thread_fork_parent(void);
void pool__thread_fork_child(void);

#endif
