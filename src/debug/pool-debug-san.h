/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The sanitizers' books of pool objects (pool-debug-san.c). Private header.
 */
#ifndef POOL_SRC_POOL_DEBUG_SAN_H
#define POOL_SRC_POOL_DEBUG_SAN_H

#include <pool/pool-t.h>

#include "base/pool-head-t.h"
#include "os/pool-san.h"

/*
 * The books are kept under POOL_DBG_SANITIZER (an ASan build of the library, or memcheck).
 * Does the library keep them for `pool`'s objects? Not for the `malloc` layout, whose objects
 * the tools keep themselves as malloc blocks. Does it poison them for ASan? Not for `malloc`
 * either, nor for `uaf`, whose pages protect its objects (and report better), nor without ASan.
 */
static inline int pool__debug_san_books(const struct pool_head *pool)
{
	return !(pool->layout & POOL_DBG_MALLOC);
}

static inline int pool__debug_san_poisons(const struct pool_head *pool)
{
	return !(pool->layout & (POOL_DBG_UAF | POOL_DBG_MALLOC)) && pool__san_asan_build();
}

/* Sanitizer bookkeeping of an object given to the user / taken back (POOL_DBG_SANITIZER). */
void pool__debug_san_handout(struct pool_head *pool, void *obj);
void pool__debug_san_freed(struct pool_head *pool, void *obj);

/*
 * ASan, an object handed out: its usable bytes are the user's, the rest of os_size (padding,
 * tag, caller word, backup) is its redzone and stays poisoned.
 */
void pool__debug_san_redzone(struct pool_head *pool, void *obj);

/*
 * ASan, an object coming back: still poisoned, it is free already, and a double free is
 * reported (abort), unless the pool has a tag, whose check then reports it with who freed it.
 */
void pool__debug_san_check_free(struct pool_head *pool, void *obj, const void *caller);

#endif
