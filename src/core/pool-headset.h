/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The set of pool heads the library knows: every live head, and every destroyed head kept in
 * the graveyard (pool.c). It vouches for a pointer passed to pool_get_stats(), pool_name(),
 * pool_destroy() and the like without reading the memory it points to, so those calls work
 * where process_vm_readv(2) is refused (a seccomp filter, a sandbox, a kernel without
 * cross-memory attach). Private header of the pool heads (pool.c).
 *
 * Writers (pool_create(), pool_destroy(), the graveyard) hold the pool list lock; readers hold
 * nothing. Each call takes the set's own lock for a few instructions: it is the last lock of the
 * order (nothing is locked or allocated under it), so any thread may look a head up at any
 * time, a pool_for_each() callback included.
 */
#ifndef POOL_SRC_POOL_HEADSET_H
#define POOL_SRC_POOL_HEADSET_H

#include "base/pool-head-t.h"

enum pool_headset_state {
	POOL_HEADSET_UNKNOWN = 0,    /* not a head the set knows (never one, or freed long ago) */
	POOL_HEADSET_LIVE,           /* a live pool head */
	POOL_HEADSET_DEAD,           /* a destroyed head, still in the graveyard */
};

/*
 * Pool list lock held: add `pool` as live. 0, or -1 when the set could not grow (out of memory
 * for its table: the caller fails pool_create() with ENOMEM; nothing changed).
 */
int pool__headset_add(const struct pool_head *pool);

/* Pool list lock held: `pool`, a live head of the set, is now destroyed (in the graveyard). */
void pool__headset_kill(const struct pool_head *pool);

/* Pool list lock held: `pool`, a dead head of the set, is freed: the set forgets it. */
void pool__headset_forget(const struct pool_head *pool);

/* What the set knows of `p` (any pointer, NULL included). Thread-safe, never blocks long. */
enum pool_headset_state pool__headset_state(const void *p);

/* fork(): the set's lock is taken before and given back after, in the parent and the child. */
void pool__headset_fork_prepare(void);
void pool__headset_fork_after(void);

#endif
