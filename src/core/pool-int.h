/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Core internals for the layers above the core (introspection: pool-dump.c, pool-cli.c) and for
 * the tests that need them: what they may do to a pool beyond the public API, so that they never
 * reach into a tier of the core. Private header: never installed. The core's own tiers talk through
 * pool-bucket.h and pool-tcache.h.
 */
#ifndef POOL_SRC_POOL_INT_H
#define POOL_SRC_POOL_INT_H

#include <pthread.h>
#include <stdio.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "base/pool-lock.h"

/*
 * The pool list, in creation order (pool.c). The lock guards the list, each pool's creators
 * and the pool slot table; it is the first lock of the lock order (the lock order: pool.c).
 * It knows its owner (pool-lock.h): the functions that take it take it with pool__lock_enter(),
 * so that a pool_for_each() callback, which runs under it, may call them.
 */
extern struct pool_lock pool__list_lock;
extern struct pool_head *pool__list_head;
extern unsigned int pool__nb_pools;

/*
 * pool_parse_debugging() with the help table written to `help_out` (the CLI's answer) and, when
 * `runtime_only` is set, layout options refused as if a pool existed (the CLI changes only the
 * flags that may change at run time).
 */
int pool__parse_debugging(const char *str, char **err, FILE *help_out, int runtime_only);

/*
 * A slow path found `pool` not live (its magic word is not POOL_HEAD_LIVE): report it and abort,
 * as "use of a destroyed pool" when the library destroyed it or is destroying it, else "not a
 * pool head", with `obj` (may be NULL) and `caller` (pool-headset.c, through pool-report.c's
 * report). Async-signal-safe but for the symbol lookup of the caller. Never returns.
 */
__attribute__((noreturn, cold)) void pool__bad_head(const struct pool_head *pool,
                                                    const void *obj, const void *caller);

/*
 * Is `pool` a live pool head? The set of known heads says (pool-headset.c), without reading the
 * memory `pool` points to: NULL, destroyed heads and unknown pointers are not. Thread-safe.
 */
int pool__live_head(const struct pool_head *pool);

/*
 * The trim that ends pool_trim(), alone: the OS layer gives its free pages to the system, and
 * no pool is touched (`pools flush <pool>`, which must not take the other pools' free objects).
 * Thread-safe; cannot fail.
 */
void pool__trim_os_layer(void);

#endif
