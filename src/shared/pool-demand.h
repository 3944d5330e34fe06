/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Demand and memory return (pool-demand.c): a pool's magazine sizes and gc floor, its demand
 * windows, and what goes back below the shared lists. Private header: its callers are the pool
 * heads (pool.c, pool-release.c) and the thread-cache tier (pool-tcache.c, pool-thread.c).
 */
#ifndef POOL_SRC_POOL_DEMAND_H
#define POOL_SRC_POOL_DEMAND_H

#include <stddef.h>

#include "base/pool-head-t.h"

/*
 * A new pool (its layout computed): its magazine capacity and starting depth from the
 * configured cluster and the thread budget (a pool of large objects gets smaller magazines,
 * and starts shallower still, pool-demand.c), its demand state (the window from decay_ms) and
 * its gc floor.
 */
void pool__demand_init(struct pool_head *pool, unsigned int cluster, size_t cache_bytes,
                       unsigned int decay_ms);

/*
 * A destroyed pool: what pool__demand_init() set up is torn down, and the buckets' empty
 * magazines are freed (their stacks are empty).
 */
void pool__demand_fini(struct pool_head *pool);

/*
 * A releaser (pool-release.c: its thread, or the program's pool_release_run()) is stepping now:
 * for two demand windows from now, pool__demand_tick() leaves the windows to it, so that it
 * falls back to the slow paths only when no releaser has stepped for that long. _gone(): at
 * once (a fork() child, whose releaser thread did not follow it).
 */
void pool__demand_releaser_seen(void);
void pool__demand_releaser_gone(void);

/*
 * A step of memory return, for the releaser: with `end`, end the pool's demand window and count
 * what stayed unused through it beyond the floor (what the pool owes); then
 * give back up to *budget objects of what is owed (*budget drops by what was given), at most
 * 64 magazines per ownership of a head, BUSY heads skipped. Returns 1 when the pool still owes
 * objects, 0 when it owes none, -1 when another pass held the pool (nothing done).
 */
int pool__demand_release_step(struct pool_head *pool, int end, unsigned long *budget);

/*
 * Called every 16th slow path of a thread: a sample of needed_avg now and then; and when no
 * releaser stepped for two windows and the pool's demand window (decay_ms) has ended, end it
 * and count, then pay a bounded share of what is owed (unless another thread holds the pool's
 * pass).
 */
void pool__demand_tick(struct pool_head *pool);

/*
 * pool_gc() of one pool: end the demand window now and give back every object of the shared
 * lists beyond the floor (pool->floor objects): the need is what is in use, and needed_avg
 * starts again from it.
 */
void pool__demand_gc(struct pool_head *pool);

/*
 * The releaser took a stack of magazines (`top` to `bottom` through `next`, `nobjs` objects
 * counted as used) from the cache of a thread idle through a whole window: push it to a shared
 * list (near bucket `start`) as objects unused through the window that is ending, so that the
 * count at its end finds them owed. When every head stays BUSY, as pool__push_mags().
 */
void pool__demand_push_idle(struct pool_head *pool, struct pool_mag *top, struct pool_mag *bottom,
                            unsigned int nmags, unsigned int nobjs, unsigned int start);

/*
 * needed_avg: the average of `used` over the last demand window, in objects, weighted by time
 * (pool-demand.c, "The average"); `used` until the pool's first window ends. Any thread; no
 * lock (it reads what the samples wrote between two steps of a sequence count).
 */
unsigned long pool__demand_needed_avg(const struct pool_head *pool);

/*
 * Every object of the shared lists but `keep` goes to the slab tier (BUSY buckets are retried a
 * while): the buckets met first keep theirs, up to `keep` in all (pool_flush(): the reserve;
 * pool_destroy(): 0).
 */
void pool__demand_flush(struct pool_head *pool, size_t keep);

#endif
