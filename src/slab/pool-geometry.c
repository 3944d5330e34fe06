/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A pool's slab geometry (struct pool_slabs), computed from its layout before its first
 * allocation, under the pool list lock (pool.c); the slab tier reads it without a lock.
 *
 * - Size: the power of two over SLAB_OBJS objects and over SLAB_SLOT_SHARE objects, within
 *   SLAB_MIN and SLAB_MAX (31 objects of 1 to 128 KiB, 15 of 256 KiB), so that the header takes
 *   at most 1/32 of a slab. A slab is aligned on its size: an object's slab header is its
 *   address rounded down.
 * - Header: the owner, the counts and a bitmap sized for a slab of objects only; the objects
 *   start at the first cache line (or alignment) past it.
 * - Line groups: the fewest objects whose run ends on a cache line, 64 / gcd(os_size, 64) (1, 2
 *   or 4; 1 from GROUP_MAX_OS up); a slab holds a whole number of groups.
 * - Step: the os_size, a line more for multiples of STEP_PAD_MULTIPLE when the slack holds it.
 * - Colors: the slack past the last object, in steps of the alignment (at most COLORS_MAX);
 *   consecutive slabs take consecutive colors, so that the same object of each starts on
 *   another cache set (Bonwick 1994, section 4.1: slab coloring).
 * - An object's index: its offset times div_magic, shifted, exact for every slab size.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "slab/pool-slab.h"
#include "slab/pool-slab-int.h"

#define SLAB_MIN        (16u * 1024u)        /* bytes: jemalloc's first extent-sized class */
#define SLAB_MAX        (4096u * 1024u)      /* bytes */
#define SLAB_OBJS       8u                   /* objects a slab is sized for, at least */
/*
 * The header takes an object's slot when objects are a power of two: at most 1/32 of a slab.
 * With the purge, slabs of 31 objects keep less than slabs of 7 after a burst (13.9 against
 * 16.7 MiB resident after 64 MiB of 16 KiB objects of which a tenth stays, and pool_gc()).
 */
#define SLAB_SLOT_SHARE 32u
#define COLORS_MAX      256u                 /* a slab's color is a byte */
/*
 * Bytes: larger objects are carved one by one, not by line groups: a group of 4 tagged 16 KiB
 * buffers (16,400 bytes) leaves half a slab unused for the sake of one shared line.
 */
#define GROUP_MAX_OS    1024u
/*
 * Bytes: objects whose os_size is a multiple of this lie a line further apart when the slack
 * holds it (always for powers of two). 2 KiB apart, a slab's objects start on 2 of the 64 sets
 * of an L1 (address bits 6 to 11), 4 KiB apart on one; an odd number of lines apart, on every
 * set in turn (`batch`, 64 objects of 4 KiB: 2.5 ns a pair, 6.2 ns without the line).
 */
#define STEP_PAD_MULTIPLE 2048u

static size_t pow2_ceil(size_t v)
{
	size_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

void pool__slab_geometry(struct pool_head *pool)
{
	struct pool_slabs *S = &pool->slabs;
	size_t os = pool->os_size, step, bytes, first, align = pool->align > POOL_CACHE_LINE ?
	                                                        pool->align : POOL_CACHE_LINE;
	uint32_t words, g = 1, cap;

	if (!pool__slab_on(pool)) {
		S->bytes = 0;
		return;
	}
	POOL_ASSERT(os >= 16 && os % 16 == 0);
	POOL_ASSERT(atomic_load_explicit(&pool->ever_allocated, memory_order_relaxed) != 1);
	while (os < GROUP_MAX_OS && (os * g) % POOL_CACHE_LINE)
		g <<= 1;
	/* 8 objects, and 32 times the object whose slot the header takes */
	bytes = pow2_ceil(os * SLAB_OBJS);
	if (bytes < pow2_ceil(os * SLAB_SLOT_SHARE))
		bytes = pow2_ceil(os * SLAB_SLOT_SHARE);
	if (bytes < SLAB_MIN)
		bytes = SLAB_MIN;
	if (bytes > SLAB_MAX)
		bytes = SLAB_MAX;
	/* the bitmap sized for a slab of objects only, then the objects after the header */
	words = (uint32_t)((bytes / os + 63) / 64);
	first = pool__round_up(pool__slab_header_bytes(words), align);
	cap = (uint32_t)((bytes - first) / os);
	cap -= cap % g;
	/* a line between objects a multiple of STEP_PAD_MULTIPLE apart, where the slack holds it */
	step = os;
	if (os % STEP_PAD_MULTIPLE == 0 && align == POOL_CACHE_LINE &&
	    (size_t)cap * (os + POOL_CACHE_LINE) + first <= bytes)
		step = os + POOL_CACHE_LINE;
	POOL_ASSERT(g <= 4 && cap >= 7 && (size_t)cap * step + first <= bytes);
	S->group = g;
	S->first = (uint32_t)first;
	S->capacity = cap;
	/* the slack past the last object, in steps of the alignment: at most 256 colors */
	S->color_unit = (uint32_t)align;
	S->colors = (uint32_t)((bytes - first - (size_t)cap * step) / align + 1);
	if (S->colors > COLORS_MAX)
		S->colors = COLORS_MAX;
	POOL_ASSERT(first + (size_t)(S->colors - 1) * align + (size_t)cap * step <= bytes);
	S->words = (cap + 63) / 64;
	/* exact for every multiple of the step below 2^32 (bytes <= 4 MiB) */
	S->div_magic = (UINT64_C(1) << 32) / step + 1;
	S->step = (uint32_t)step;
	S->bytes = bytes;
}
