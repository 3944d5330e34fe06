/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Debug checks: the -dM flag word and its pure parser, fault injection, tags, callers, integrity
 * patterns, backups, poisoning, and the glue to the use-after-free backend and the sanitizers.
 * Private header. A leaf under the core: nothing here calls the core.
 */
#ifndef POOL_SRC_POOL_DEBUG_H
#define POOL_SRC_POOL_DEBUG_H

#include <stdint.h>
#include <stdio.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"

/*
 * Everything pool_parse_debugging() can change: the flag word and the value of each option that
 * takes one. The rows of the option table (pool-debug.c) name their value's field by its
 * offset, and pool-debug.c keeps the values in effect in one such structure, which the parser,
 * pool__debug_current(), pool__debug_apply() and pool_debugging_show() walk by the table: a new
 * valued option is a field here and a row there. Every value is a size_t, so that a row needs
 * no width of its own.
 */
struct pool_debug_settings {
	unsigned int flags;            /* POOL_DBG_* */
	size_t poison_byte;            /* poison=<0..255> */
	size_t fail_percent;           /* fail=<0..100> */
	size_t profile_rate;           /* profile=<bytes>: mean bytes between two samples */
};

/* Is the sanitizer/Valgrind bookkeeping on? (the internal POOL_DBG_SANITIZER bit) */
static inline int pool__san_on(void)
{
	return POOL_UNLIKELY(POOL__DEBUGGING() & POOL_DBG_SANITIZER);
}

/* The mean bytes between two samples of the profile (profile=<bytes>), in effect. */
size_t pool__debug_profile_rate(void);

/* The settings in effect. */
void pool__debug_current(struct pool_debug_settings *cur);

/*
 * Parse a -dM string (syntax: pool_parse_debugging() in pool.h) on top of `cur` into *out: a
 * pure function, it changes nothing but *out, *help and *err. `layout_fixed`: layout options
 * (tag, caller, uaf, backup) may not change (a pool exists, or `runtime_only`, the CLI's rule,
 * which also changes the error message). Returns 0 (with *help = 1 when the string held
 * `help`), or -1 with errno = EINVAL and, if err is not NULL, *err a malloc()ed message naming
 * the offending word (NULL if that allocation failed).
 */
int pool__debug_parse(const char *str, const struct pool_debug_settings *cur, int layout_fixed,
                      int runtime_only, struct pool_debug_settings *out, int *help, char **err);

/*
 * Make `s` the settings in effect. The internal POOL_DBG_SANITIZER bit is kept as it is. When
 * `integrity` goes from off to on, the integrity epoch moves first (release), so that a thread
 * that sees the new flags also sees the new epoch. Callers serialise (pool.c's list lock).
 */
void pool__debug_apply(const struct pool_debug_settings *s);

/* The number of times `integrity` was switched on (struct pool_thread_caches.integrity_epoch). */
unsigned int pool__debug_integrity_epoch(void);

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
