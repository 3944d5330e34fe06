/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The sanitizers' books of pool objects, under the internal POOL_DBG_SANITIZER bit (a library
 * built with AddressSanitizer, or a program run under Valgrind's memcheck): which bytes of an
 * object handed out are the user's (ASan poisons the rest, its redzone, and every object cached
 * or in a shared list), the memcheck mempool of each pool, and ASan's view of a double free.
 * Pools of the `malloc` layout are left to the tools, which see their objects as malloc blocks
 * (pool-malloc.c), and pools of the `uaf` layout to their guard pages (pool-debug.h says which
 * books apply to which pool). Called by pool-debug.c and the slow paths; calls the OS layer's
 * annotations (pool-san.h) and the crash report.
 */
#include <string.h>

#include "debug/pool-debug-san.h"
#include "debug/pool-report.h"
#include "os/pool-san.h"

void pool__debug_san_handout(struct pool_head *pool, void *obj)
{
	if (!pool__debug_san_books(pool))
		return;
	if (pool__debug_san_poisons(pool))
		pool__san_access(obj, pool->os_size);
	pool__san_mempool_alloc(pool, obj, pool->ro.size, pool->stride);
}

/*
 * The object is out: what lies past its usable size up to os_size stays poisoned, so that an
 * overflow is reported at the write, before it reaches the next object.
 */
void pool__debug_san_redzone(struct pool_head *pool, void *obj)
{
	if (pool__debug_san_poisons(pool)) {
		pool__san_noaccess(obj, pool->os_size);
		pool__san_access(obj, pool->ro.size);
	}
}

void pool__debug_san_freed(struct pool_head *pool, void *obj)
{
	if (!pool__debug_san_books(pool))
		return;
	if (pool__debug_san_poisons(pool))
		pool__san_noaccess(obj, pool->os_size);
	pool__san_mempool_free(pool, obj, pool->stride);
}

void pool__debug_san_check_free(struct pool_head *pool, void *obj, const void *caller)
{
	struct pool_report r;

	if (!pool__debug_san_poisons(pool) || !pool__san_is_poisoned(obj))
		return;
	if (pool->tag_off) {
		/* with tag on, the tag check reports it with who freed it */
		pool__san_access(obj, pool->os_size);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.what = "double free (the object is already free: AddressSanitizer still has it "
	         "poisoned)";
	r.pool = pool;
	r.obj = obj;
	r.caller = caller;
	pool__report(&r);
}
