/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The assertion tiers. POOL_ASSERTS is 0 (the default build), 1 (`make DEBUG=1` and the
 * sanitizer builds) or 2 (`make DEBUG=2`):
 *   1  POOL_ASSERT(cond) checks an invariant of pool.c's list or a function's
 *      contract (its arguments, the lock it must hold, a count within its bounds) at run time:
 *      a few loads and compares, at the top of the function or where the state changes.
 *   2  also the walks: `if (POOL_ASSERTS >= 2) walk(...)` runs a helper that walks a whole
 *      structure and checks it with POOL_ASSERT(). A walk costs what the structure holds, so
 *      each runs where that structure is quiet and the path is not the common one:
 *        - a thread's slot (pool-magazine.c, walk_slot()), at the top of the calls that move
 *          magazines (a refill from the shared lists, making room, an eviction): once per
 *          magazine's worth of frees or allocations, not on every slow path;
 *        - all of a thread's caches and its budget sum (pool__tcache_walk_caches()), at its
 *          flush (exit, pool_thread_flush(), no-cache), when integrity fills them, and for
 *          the destroying thread after pool_destroy()'s drain;
 *        - a bucket's stack and empties (pool__bucket_walk()), while pool_gc(), pool_flush()
 *          and pool_destroy() own it;
 *        - the pool list (pool.c), at each pool_create() and pool_destroy() and in
 *          pool_gc(NULL), under the pool list lock;
 *        - the uaf table against its quarantine's books (pool-uaf.c), when a uaf pool is
 *          destroyed;
 *        - a thread's profile sampler (pool-sample.c, walk_sampler()): the flags of every slot
 *          and its count of narrowed windows, when a slot starts a countdown (a new profile or
 *          pool), at each view the thread makes, and when the sampler goes.
 *
 * Assertions cannot rot: the condition of POOL_ASSERT() and the calls of the walks always
 * compile, whatever the tier, and the compiler drops them as dead code below theirs (jemalloc's
 * `if (config_debug)`, SQLite's habit). A misspelled field in a disabled assertion is a build
 * error in every build, and a variable read only by an assertion is not "unused".
 *
 * A failed assertion writes one line to stderr with write(2) ("libpool: assertion failed:
 * <cond> (<file>:<line> in <function>)") and aborts: it never allocates and never takes a lock,
 * so it may sit anywhere, a BUSY window included. A condition must have no side effect (it is
 * not evaluated below its tier) and must take no lock. Private header; it calls nothing of
 * libpool.
 */
#ifndef POOL_SRC_POOL_ASSERT_H
#define POOL_SRC_POOL_ASSERT_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pool/pool-t.h>

#ifndef POOL_ASSERTS
#define POOL_ASSERTS 0
#endif

__attribute__((noreturn, cold)) static inline void pool__assert_fail(const char *cond,
                                                                     const char *file, int line,
                                                                     const char *func)
{
	char num[12];
	int n = sizeof(num);
	const char *parts[] = { "libpool: assertion failed: ", cond, " (", file, ":", NULL, " in ",
	                        func, ")\n" };
	unsigned int i;

	num[--n] = 0;
	do {
		num[--n] = (char)('0' + line % 10);
		line /= 10;
	} while (line && n > 0);
	parts[5] = num + n;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			break;
	abort();
}

#define POOL_ASSERT(cond)                                                                   \
	do {                                                                                \
		if (POOL_ASSERTS && POOL_UNLIKELY(!(cond)))                                 \
			pool__assert_fail(#cond, __FILE__, __LINE__, __func__);             \
	} while (0)

#endif
