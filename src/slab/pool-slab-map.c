/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The map of the process's slabs: a bit per 16 KiB of addresses (the smallest slab, and the
 * alignment of every slab) that says whether a slab of some pool starts there, so that the slab tier reads the header at an object's address
 * rounded down to its slab size only once it knows a slab lies there (a pointer that is no
 * object of any pool, a big malloc() block, rounds down to memory that may not be mapped).
 * A radix of two levels over the 48-bit address space (x86-64, AArch64): the top, in static
 * memory, holds a leaf per 4 GiB; a leaf, 32 KiB from the OS layer, a bit per 16 KiB. Leaves
 * come when the first slab of their range does and stay, but at unloading, when no slab is
 * left. A slab's bit is set before any of its objects is handed out and cleared before it goes
 * back to the OS layer, with atomics: a lookup takes no lock, and an object handed out and
 * given back through any synchronisation finds its slab's bit set.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "os/pool-os.h"
#include "slab/pool-slab-int.h"

#define MAP_TOP         (1u << (POOL_SLAB_MAP_ADDR_BITS - POOL_SLAB_MAP_GRAIN_BITS - \
                              POOL_SLAB_MAP_LEAF_BITS))
#define MAP_LEAF_WORDS  ((1u << POOL_SLAB_MAP_LEAF_BITS) / 64u)
#define MAP_LEAF_BYTES  (MAP_LEAF_WORDS * sizeof(uint64_t))

typedef pool__slab_map_leaf map_leaf;

/* 512 KiB of address space; a page of it is resident per 2 TiB of addresses that hold slabs. */
map_leaf *_Atomic pool__slab_map_top[MAP_TOP];
/* The range of map_top[] that ever held a leaf, so that unloading looks at no other entry. */
static _Atomic unsigned int map_lo = MAP_TOP, map_hi;

/* Where the bit of `slab` lies: 0, or -1 for an address the map does not cover. */
static inline int map_where(const void *slab, unsigned int *top, unsigned int *word,
                            uint64_t *bit)
{
	uintptr_t g = (uintptr_t)slab >> POOL_SLAB_MAP_GRAIN_BITS;

	if ((uintptr_t)slab >> POOL_SLAB_MAP_ADDR_BITS)
		return -1;
	*top = (unsigned int)(g >> POOL_SLAB_MAP_LEAF_BITS);
	*word = (unsigned int)((g & ((1u << POOL_SLAB_MAP_LEAF_BITS) - 1)) / 64);
	*bit = UINT64_C(1) << (g % 64);
	return 0;
}

int pool__slab_map_add(const void *slab)
{
	map_leaf *leaf, *none = NULL;
	unsigned int t, w;
	uint64_t b;

	if (map_where(slab, &t, &w, &b) < 0)
		return -1;
	leaf = atomic_load_explicit(&pool__slab_map_top[t], memory_order_acquire);
	if (!leaf) {
		leaf = pool__os_meta_alloc(MAP_LEAF_BYTES, POOL_CACHE_LINE);
		if (!leaf)
			return -1;
		if (!atomic_compare_exchange_strong_explicit(&pool__slab_map_top[t], &none, leaf,
		                                             memory_order_acq_rel,
		                                             memory_order_acquire)) {
			/* another slab of the range made it first */
			pool__os_meta_free(leaf, MAP_LEAF_BYTES, POOL_CACHE_LINE);
			leaf = none;
		} else {
			unsigned int v = atomic_load_explicit(&map_lo, memory_order_relaxed);

			while (t < v && !atomic_compare_exchange_weak_explicit(&map_lo, &v, t,
			                                                       memory_order_relaxed,
			                                                       memory_order_relaxed))
				;
			v = atomic_load_explicit(&map_hi, memory_order_relaxed);
			while (t > v && !atomic_compare_exchange_weak_explicit(&map_hi, &v, t,
			                                                       memory_order_relaxed,
			                                                       memory_order_relaxed))
				;
		}
	}
	atomic_fetch_or_explicit(&(*leaf)[w], b, memory_order_relaxed);
	return 0;
}

void pool__slab_map_remove(const void *slab)
{
	unsigned int t, w;
	uint64_t b;
	map_leaf *leaf;

	if (map_where(slab, &t, &w, &b) < 0)
		return;
	leaf = atomic_load_explicit(&pool__slab_map_top[t], memory_order_acquire);
	if (leaf)
		atomic_fetch_and_explicit(&(*leaf)[w], ~b, memory_order_relaxed);
}

/*
 * Unloading (dlclose(), exit()): the leaves of ranges that hold no slab go back, so that a
 * plugin host that loads and unloads the library leaks none; a leaf with a slab of a pool still
 * live stays (the program did not destroy it, and may still give its objects back).
 */
__attribute__((destructor(101))) static void slab_map_unload(void)
{
	unsigned int t, w, hi = atomic_load_explicit(&map_hi, memory_order_relaxed);

	for (t = atomic_load_explicit(&map_lo, memory_order_relaxed); t <= hi && t < MAP_TOP; t++) {
		map_leaf *leaf = atomic_load_explicit(&pool__slab_map_top[t], memory_order_acquire);

		if (!leaf)
			continue;
		for (w = 0; w < MAP_LEAF_WORDS; w++)
			if (atomic_load_explicit(&(*leaf)[w], memory_order_relaxed))
				break;
		if (w < MAP_LEAF_WORDS)
			continue;
		atomic_store_explicit(&pool__slab_map_top[t], NULL, memory_order_relaxed);
		pool__os_meta_free(leaf, MAP_LEAF_BYTES, POOL_CACHE_LINE);
	}
}
