/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Fault injection at the places that can fail, for the tests' sweep (fail the k-th call of one
 * site, for k = 1..K, and check that the library answers NULL or a clean error, leaks nothing and
 * keeps its counters right). Private: tests arm it through pool__fault_arm(); a program never
 * does. Unarmed, a site costs one relaxed load of a global word.
 */
#ifndef POOL_SRC_POOL_FAULT_H
#define POOL_SRC_POOL_FAULT_H

#include <stdatomic.h>

enum pool_fault_site {
	POOL_FAULT_OS_ALLOC = 0,  /* an object from jemalloc or the C library (pool__os_alloc(),
	                             pool__malloc_alloc()) */
	POOL_FAULT_META,          /* pool__os_meta_alloc(): a pool head, a table */
	POOL_FAULT_MAP,           /* pool__os_map(): a mapping (uaf objects and tables) */
	POOL_FAULT_THREAD,        /* registering a thread (it then works without a cache) */
	POOL_FAULT_CLI,           /* an allocation of the CLI (client buffers, answers) */
	POOL_FAULT_SITES
};

extern atomic_uint pool__fault_armed;     /* sites armed, a bit each */

int pool__fault_hit(enum pool_fault_site site);

/* Must this call at `site` fail? (1: yes, the caller fails as if the resource were missing) */
static inline int pool__fault(enum pool_fault_site site)
{
	if (__builtin_expect(!atomic_load_explicit(&pool__fault_armed, memory_order_relaxed), 1))
		return 0;
	return pool__fault_hit(site);
}

/*
 * Make the k-th next call at `site` fail (k >= 1), once; k = 0 disarms the site. Returns the
 * number of calls the site saw since it was last armed. Thread-safe.
 */
unsigned long pool__fault_arm(enum pool_fault_site site, unsigned long k);

#endif
