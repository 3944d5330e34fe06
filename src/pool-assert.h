/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The assertion tier: POOL_ASSERT(cond) checks an invariant of the design essay (pool.c) in
 * builds with POOL_ASSERTS=1 (`make DEBUG=1`, and the sanitizer builds) and compiles to nothing
 * otherwise. A failed assertion writes one line to stderr with write(2) and aborts: it never
 * allocates and never takes a lock, so it may sit anywhere, a BUSY window included. Private
 * header; it calls nothing of libpool.
 */
#ifndef POOL_SRC_POOL_ASSERT_H
#define POOL_SRC_POOL_ASSERT_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#if POOL_ASSERTS
#define POOL_ASSERT(cond) \
	(POOL_LIKELY(cond) ? (void)0 : pool__assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
#define POOL_ASSERT(cond) ((void)0)
#endif

#endif
