/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * include/haproxy/pool-libpool-t.h - HAProxy's pool head when its pools are libpool's
 * (USE_LIBPOOL: contrib/haproxy/ of libpool's tree puts this file there).
 *
 * One head per pool of libpool: create_pool() calls that libpool merges into one pool get the
 * same head, as HAProxy's own merging gives them. The first three fields keep the names and
 * meanings the rest of HAProxy reads and writes (src/dynbuf.c sets <limit> and <minavail> of the
 * buffer pool, many files read <size>); pool-libpool.c passes <limit> and <minavail> on to
 * libpool before the next allocation it makes, memory return and dump, and the inline
 * __pool_alloc()/__pool_free() of pool-libpool.h read <lp> only.
 */

#ifndef _HAPROXY_POOL_LIBPOOL_T_H
#define _HAPROXY_POOL_LIBPOOL_T_H

#include <haproxy/list-t.h>

struct libpool_head;

struct pool_head {
	unsigned int limit;       /* most objects the pool may hold, 0: none (libpool_set_limit()) */
	unsigned int minavail;    /* free objects kept for hard times (libpool_set_reserve()) */
	unsigned int size;        /* usable bytes of an object (libpool_object_size()) */
	struct libpool_head *lp;  /* the pool, for the inline fast path */
	unsigned int flags;       /* MEM_F_* of the first create_pool() call */
	unsigned int users;       /* create_pool() calls that returned this head */
	unsigned int lp_limit;    /* <limit> and <minavail> as libpool was last given them */
	unsigned int lp_minavail;
	struct list list;         /* every head, in creation order */
#ifdef HAPROXY_LIBPOOL_PLANT_UAF
	int planted;              /* the test build writes to this pool's objects after freeing */
#endif
};

#endif /* _HAPROXY_POOL_LIBPOOL_T_H */
