/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The assertion tiers. POOL_ASSERTS is 0 (the default build), 1 (`make DEBUG=1` and the
 * sanitizer builds) or 2 (`make DEBUG=2`):
 *   1  POOL_ASSERT(cond) checks an invariant of the design essay (pool.c) or a function's
 *      contract (its arguments, the lock it must hold, a count within its bounds) at run time:
 *      a few loads and compares, at the top of the function or where the state changes.
 *   2  also the walks: `if (POOL_ASSERTS >= 2) walk(...)` runs a helper that walks a whole
 *      structure and checks it with POOL_ASSERT() (a slot's stacks against their counts, a
 *      bucket's stack against free_objects, the pool list against its count). A walk costs what
 *      the structure holds, so each runs at a quiet point, not on every slow path: see each
 *      one's caller (the slot after a magazine moves in or out, a thread's caches at its flush,
 *      a bucket when pool_gc() or pool_flush() owns it, the pool list at create and destroy).
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
