/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The type of a mutex that knows its owner (struct pool_lock), for the -t.h headers that embed
 * one (a pool's pass lock in pool-head-t.h). Types and macros only; the functions are in
 * pool-lock.h, which says what the owner word is for. Every lock of the library is one: the
 * pool list lock, the registry lock, each pool's pass lock, the uaf table lock, the OS layer's
 * first-call lock, the head set's lock, the profile's lock and the CLI lock, so that a function
 * whose contract is "under that lock" asserts it (POOL_ASSERT(pool__lock_held(&l))). The owner
 * word costs a pthread_self() and a relaxed store per lock and per unlock; all of them are
 * slow-path locks (the configuration lock is the one plain mutex left: nothing runs under it
 * but its own few lines).
 */
#ifndef POOL_SRC_POOL_LOCK_T_H
#define POOL_SRC_POOL_LOCK_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct pool_lock {
	pthread_mutex_t mutex;
	_Atomic uintptr_t owner;   /* pool__lock_self() of the holder, 0 while free */
};

#define POOL_LOCK_INITIALIZER { PTHREAD_MUTEX_INITIALIZER, 0 }

#endif
