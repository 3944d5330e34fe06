/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The limit's count and the pools off slabs (pool-limit.c), for the slab tier (pool-slab.c).
 * Private header.
 */
#ifndef POOL_SRC_POOL_LIMIT_H
#define POOL_SRC_POOL_LIMIT_H

#include <stddef.h>

#include "base/pool-head-t.h"

/*
 * pool_set_limit(): store the cap (any size_t; 0: none). Lock-free; the count it is checked
 * against is kept by every move to and from the slab tier, limit or not (below).
 */
void pool__limit_set(struct pool_head *pool, size_t max_objects);

/*
 * Reserve up to `n` objects of `pool`'s limit: how many may be taken (0 at the limit; under a
 * limit, at most 1/64 of it, at least 1). Lock-free (a CAS loop under a limit, an add without).
 */
unsigned int pool__limit_reserve(struct pool_head *pool, unsigned int n);

/*
 * `n` reserved objects leave the count (they left `allocated`, or were never obtained); `hook`:
 * call pool__limit_test_hook first (an unreservation of objects counted out already).
 */
void pool__limit_release(struct pool_head *pool, unsigned long n, int hook);

/*
 * A pool off slabs: up to `want` objects from the OS layer one by one (the uaf backend for a
 * uaf pool, malloc() for a malloc pool), reserved against the limit first; how many (0 at the
 * limit or out of memory).
 */
unsigned int pool__off_slab_get(struct pool_head *pool, void **out, unsigned int want);

/* A pool off slabs: `obj` back to where it came from (`caller`, may be NULL, for uaf's report). */
void pool__off_slab_free(struct pool_head *pool, void *obj, const void *caller);

/*
 * The limit's count (struct pool_head.limit_count) counts the objects above this tier (handed
 * out, cached, in the shared lists: `allocated` less the slab-free objects) plus moves in
 * flight: pool__slab_get() reserves what it takes, and objects that go down leave the count
 * once their bucket counted them out, by this call. So a limit caps what a pool hands out and
 * keeps above its slabs, not the free objects its slabs hold.
 */
void pool__limit_unreserve(struct pool_head *pool, unsigned int n);

/*
 * Test hook (tests/shared/check_limit.c): when not NULL, the limit's accounting calls it right after a
 * reservation (reserving = 1: the objects are not counted in `allocated` yet) and right before
 * an unreservation (reserving = 0: they are counted out of `allocated` already), the two places
 * where a pool_set_limit() from another thread could land between the steps of a move. NULL
 * outside that test; set it only while no other thread uses pools.
 */
extern void (*pool__limit_test_hook)(struct pool_head *pool, int reserving);

#endif
