/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The releaser (pool-release.c): what ends the demand windows and gives back what they found
 * unused, with no call from the program. Private header: its caller is pool-alloc.c.
 */
#ifndef POOL_SRC_POOL_RELEASE_H
#define POOL_SRC_POOL_RELEASE_H

#include <stdatomic.h>

/*
 * 1 while the releaser thread is still to be started in this process: before the first slow
 * path, and in a fork() child whose parent ran one. The slow paths of allocations and frees
 * test it (one relaxed load) and call pool__release_start().
 */
extern atomic_int pool__release_pending;

/*
 * Start the releaser thread if the configuration wants one (struct pool_config.release,
 * POOL_RELEASE) and none runs; once per process (and once more in each fork() child). Where the
 * thread cannot be created (a sandbox refusing clone(), RLIMIT_NPROC, no memory for its stack
 * under RLIMIT_AS), the first failure is said on stderr, once, and pool__release_pending stays
 * set: later slow paths try again, RETRY_MIN_MS after, then twice as long each time up to a
 * demand window. Meanwhile the slow paths return memory as they do without a thread, and
 * pool_release_run() works. Thread-safe; takes no lock of the core.
 */
void pool__release_start(void);

static inline void pool__release_poke(void)
{
	if (__builtin_expect(atomic_load_explicit(&pool__release_pending, memory_order_relaxed), 0))
		pool__release_start();
}

#endif
