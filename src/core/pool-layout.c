/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A pool's name, object layout and merge rule (pool-layout.h): what pool_create() checks
 * and computes before it touches the pool list.
 */
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "core/pool-layout.h"
#include "os/pool-san.h"
#include "os/pool-uaf.h"

/* Sizes within 1% or this many bytes of each other may merge (see pool_create_aligned()). */
#define MERGE_SLACK_BYTES 16u

int pool__name_valid(const char *name)
{
	size_t len;
	const char *p;

	if (!name)
		return 0;
	len = strlen(name);
	if (len == 0 || len > POOL_NAME_MAX)
		return 0;
	for (p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int pool__layout_compute(struct pool_head *pool, size_t size, size_t align, unsigned int layout)
{
	int exact = !!(layout & POOL_DBG_MALLOC);
	size_t off = size < POOL_MIN_OBJECT && !exact ? POOL_MIN_OBJECT : size;
	/* under uaf the object ends at a guard page: its caller lives in the uaf table instead */
	unsigned int extras = (layout & POOL_DBG_UAF) ? 0 : layout;

	POOL_ASSERT(align >= POOL_DEFAULT_ALIGN && !(align & (align - 1)));
	POOL_ASSERT(!(layout & ~POOL_DBG_LAYOUT));
	if (size > POOL_SIZE_MAX)
		return -1;
	pool->tag_off = pool->caller_off = pool->backup_off = 0;
	if (extras & POOL_DBG_TAG) {
		pool->tag_off = off;
		off += sizeof(uint64_t);
	}
	if (extras & POOL_DBG_CALLER) {
		pool->caller_off = pool__round_up(off, sizeof(void *));
		off = pool->caller_off + sizeof(void *);
	}
	if (extras & POOL_DBG_BACKUP) {
		pool->backup_off = pool__round_up(off, sizeof(uint64_t));
		off = pool->backup_off + sizeof(uint64_t) + size;
	}
	off = exact ? off : pool__round_up(off, align);
	if (off > POOL_SIZE_MAX)
		return -1;
	pool->ro.size = size;
	pool->stride = off;
	/*
	 * ASan builds tag every object: without `tag`, the tag lies past the stride, hidden from the
	 * layout and the statistics. It is the object's redzone (poisoned while the object is out:
	 * an overflow is reported at the write) and lets pool_free() check that a pointer is an
	 * object of that pool, which ASan cannot tell of memory jemalloc hands out.
	 */
	pool->os_size = off;
	if (!(extras & POOL_DBG_TAG) && !(layout & (POOL_DBG_UAF | POOL_DBG_MALLOC)) &&
	    pool__san_asan_build()) {
		pool->tag_off = off;
		pool->os_size = pool__round_up(off + sizeof(uint64_t), align);
	}
	/* a uaf object costs its pages, not its stride: caches must not pin thousands of them */
	pool->cache_cost = (layout & POOL_DBG_UAF) ? pool__uaf_object_cost(size, align) : off;
	pool->align = align;
	pool->layout = layout;
	POOL_ASSERT(pool->stride >= size && (exact || pool->stride % align == 0) &&
	            pool->os_size >= pool->stride && pool->cache_cost >= pool->stride);
	return 0;
}

int pool__sizes_mergeable(size_t a, size_t b)
{
	size_t big = a > b ? a : b, small = a > b ? b : a;
	size_t tol = big / 100 > MERGE_SLACK_BYTES ? big / 100 : MERGE_SLACK_BYTES;

	return big - small <= tol;
}
