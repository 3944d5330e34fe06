/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Debug checks: fault injection, tags, callers, integrity patterns, backups, poisoning, and the
 * glue to the use-after-free backend and the sanitizers; the -dM settings and their parser are
 * in pool-debug-parse.h, included here. Private header. A leaf under the core: nothing here
 * calls the core.
 */
#ifndef POOL_SRC_POOL_DEBUG_H
#define POOL_SRC_POOL_DEBUG_H

#include <stdint.h>
#include <stdio.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "debug/pool-debug-parse.h"

/*
 * Debugging flags that never look at an object: the slow paths skip the debugging layer's
 * hooks for them.
 */
#define POOL_DBG_NO_OBJECT (POOL_DBG_PROFILE | POOL_DBG_FAIL_REPORT | POOL_DBG_NO_MERGE | \
                            POOL_DBG_NO_GLOBAL | POOL_DBG_GUARD)

/* Is the sanitizer/Valgrind bookkeeping on? (the internal POOL_DBG_SANITIZER bit) */
static inline int pool__san_on(void)
{
	return POOL_UNLIKELY(POOL__DEBUGGING() & POOL_DBG_SANITIZER);
}

/* Start-up: POOL_FAIL_SEED, the sanitizer bit, then POOL_DEBUG (no pool exists yet). */
void pool__debug_init(void);

/*
 * Fault injection: 1 when this allocation must fail (-dMfail). `rng` is the calling thread's
 * generator state (0: not seeded yet), `id` its registry id (the seed with POOL_FAIL_SEED).
 */
int pool__debug_fail_roll(uint64_t *rng, unsigned int id);

/*
 * An object is handed out: sanitizer bookkeeping, the backup check and (with `integrity`, which
 * the caller sets only when that cache was filled with the pattern) the integrity check when it
 * comes from a thread cache (`from_cache`), tag and caller, then zeroing (POOL_F_MUST_ZERO) or
 * poisoning. `dbg`: the debugging word the slow path acts on (one snapshot per call).
 */
void pool__debug_on_alloc(struct pool_head *pool, void *obj, unsigned int flags,
                          const void *caller, unsigned int dbg, int from_cache, int integrity);

/* An object comes back: double free and wrong-pool checks (tag, uaf, ASan), caller record. */
void pool__debug_on_free(struct pool_head *pool, void *obj, const void *caller);

/* A caller of the live-caller table and its objects still allocated (caller debugging). */
struct pool_caller_live {
	uintptr_t caller;
	long live;
};

/*
 * The entries of `pool`'s live-caller table that have live objects (at most POOL_CALLER_SLOTS),
 * in table order, into out[0..max): the one reader of the table that caller_count() writes.
 * Relaxed loads: other threads may count meanwhile, each entry is read whole but the table is
 * not a snapshot. Returns how many it wrote. Any thread, no lock.
 */
size_t pool__debug_callers(const struct pool_head *pool, struct pool_caller_live *out,
                           size_t max);

/*
 * An object enters a thread cache: the integrity pattern when `integrity` is set, and the
 * backup copy (layout).
 */
void pool__debug_fill_cached(struct pool_head *pool, void *obj, int integrity);

/* An object leaves a thread cache: check the pattern (`integrity`) and the backup; abort on
 * damage with a report naming `caller`. */
void pool__debug_check_cached(struct pool_head *pool, void *obj, const void *caller,
                              int integrity);

/* A pool is created / destroyed: Valgrind mempool, uaf fault handler. */
void pool__debug_pool_created(struct pool_head *pool);
void pool__debug_pool_destroyed(struct pool_head *pool);

#endif
