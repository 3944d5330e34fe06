/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * include/haproxy/pool-libpool.h - HAProxy's allocation and release of pool objects on
 * libpool's inline fast path (USE_LIBPOOL: contrib/haproxy/ of libpool's tree puts this file
 * there; include/haproxy/pool.h includes it in place of its thread-cache functions).
 *
 * pool_alloc(), pool_zalloc() and pool_free() keep their HAProxy definitions, which call
 * __pool_alloc() and __pool_free(): here those are libpool_alloc_flags() and libpool_free(),
 * inlined into every caller (a pop or a push on the thread's magazine, no call), where HAProxy's
 * own are functions of src/pool.c. HAProxy's POOL_F_* flags become libpool's at compile time
 * when they are constants, as they always are. Everything else, the debugging options
 * (-dM, POOL_DEBUG) included, is libpool's: libpool(7), and pool-libpool.c for the rest of
 * HAProxy's pool API.
 */

#ifndef _HAPROXY_POOL_LIBPOOL_H
#define _HAPROXY_POOL_LIBPOOL_H

#include <pool/libpool.h>
#include <haproxy/api.h>
#include <haproxy/pool-t.h>

/* HAProxy's POOL_F_* allocation flags as libpool's LIBPOOL_F_* ones. */
static forceinline unsigned int pool_libpool_flags(unsigned int flags)
{
	return ((flags & POOL_F_MUST_ZERO) ? LIBPOOL_F_MUST_ZERO : 0) |
	       ((flags & POOL_F_NO_POISON) ? LIBPOOL_F_NO_POISON : 0) |
	       ((flags & POOL_F_NO_FAIL) ? LIBPOOL_F_NO_FAIL : 0);
}

/* An object of <pool>, or NULL (the pool's limit, no memory, -dMfail). */
static forceinline void *__pool_alloc(struct pool_head *pool, unsigned int flags)
{
	return libpool_alloc_flags(pool->lp, pool_libpool_flags(flags));
}

/* Gives <ptr> back to <pool>; pool_free() has already left NULL out. */
static forceinline void __pool_free(struct pool_head *pool, void *ptr)
{
	libpool_free(pool->lp, ptr);
#ifdef HAPROXY_LIBPOOL_PLANT_UAF
	/* the test build's planted bug (contrib/haproxy/planted-uaf.sh): a write after the free */
	if (unlikely(pool->planted))
		*(volatile char *)ptr = 0;
#endif
}

#endif /* _HAPROXY_POOL_LIBPOOL_H */
