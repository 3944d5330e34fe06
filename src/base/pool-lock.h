/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A mutex that knows its owner: struct pool_lock is a pthread mutex plus an owner word, set by
 * the holder right after it locks and cleared right before it unlocks. The word answers one
 * question, "does the calling thread hold this lock?", without a race: only the holder writes
 * its own id there, so a thread reads its own id only while it holds the lock (and the read
 * needs no ordering: a thread always sees its own last store). What it is for:
 *   - re-entry: a function that needs the lock and finds that its caller holds it already (a
 *     pool_for_each() callback calling pool_set_limit(), pool_gc(NULL), pool_dump()...) goes on
 *     under the caller's hold instead of deadlocking (pool__lock_enter()/pool__lock_leave());
 *   - assertions that a lock is held (POOL_ASSERT(pool__lock_held(&l))).
 * Private header, inline only; it calls the C library's pthread functions and nothing of libpool,
 * so any layer may use it.
 */
#ifndef POOL_SRC_POOL_LOCK_H
#define POOL_SRC_POOL_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/pool-lock-t.h"

/* The calling thread's id for owner words: never 0 (glibc's pthread_t is its TCB's address). */
static inline uintptr_t pool__lock_self(void)
{
	return (uintptr_t)pthread_self();
}

/* A lock in allocated memory (a pool's pass lock): set up free / torn down free. */
static inline void pool__lock_init(struct pool_lock *l)
{
	pthread_mutex_init(&l->mutex, NULL);
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
}

static inline void pool__lock_destroy(struct pool_lock *l)
{
	pthread_mutex_destroy(&l->mutex);
}

static inline void pool__lock(struct pool_lock *l)
{
	pthread_mutex_lock(&l->mutex);
	atomic_store_explicit(&l->owner, pool__lock_self(), memory_order_relaxed);
}

/* 0 when taken, or pthread_mutex_trylock()'s error (EBUSY) and nothing changed. */
static inline int pool__lock_try(struct pool_lock *l)
{
	int err = pthread_mutex_trylock(&l->mutex);

	if (!err)
		atomic_store_explicit(&l->owner, pool__lock_self(), memory_order_relaxed);
	return err;
}

static inline void pool__unlock(struct pool_lock *l)
{
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
	pthread_mutex_unlock(&l->mutex);
}

/* Does the calling thread hold `l`? Exact for the calling thread; any thread may ask. */
static inline int pool__lock_held(const struct pool_lock *l)
{
	return atomic_load_explicit(&l->owner, memory_order_relaxed) == pool__lock_self();
}

/*
 * Take `l` unless the calling thread holds it already. Returns 1 when it took it (the matching
 * pool__lock_leave() unlocks), 0 when the caller's hold covers this use too (it leaves the lock
 * as it was). Only for code that is safe to run in the middle of whatever the outer holder is
 * doing: the lock's owner documents which of its sections call out (pool_for_each()).
 */
static inline int pool__lock_enter(struct pool_lock *l)
{
	if (pool__lock_held(l))
		return 0;
	pool__lock(l);
	return 1;
}

static inline void pool__lock_leave(struct pool_lock *l, int took)
{
	if (took)
		pool__unlock(l);
}

#endif
