/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The choice of a slab shard (pool-shard.c), for the slab tier (pool-slab.c). Private header.
 */
#ifndef POOL_SRC_POOL_SHARD_H
#define POOL_SRC_POOL_SHARD_H

#include "base/pool-head-t.h"

/* The shard thread `start` takes from, locked: its own, else the first other free one, else its
 * own once its holder lets it go. */
struct pool_slab_shard *pool__shard_lock(struct pool_slabs *S, unsigned int start);

/* H locked, its heap empty: another shard holding given-back objects, locked (H kept), or NULL. */
struct pool_slab_shard *pool__shard_with_free(struct pool_slabs *S, struct pool_slab_shard *H);

/* H locked, out of memory: H unlocked and another shard with a free group locked, or NULL with
 * H locked again. */
struct pool_slab_shard *pool__shard_with_room(struct pool_slabs *S, struct pool_slab_shard *H);

#endif
