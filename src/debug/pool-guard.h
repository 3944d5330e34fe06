/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Guard pages for a share of the profile's samples (`guard` debugging, pool-guard.c): the
 * stacks of each guarded object, the fault handler, and the reports of what it catches.
 * Private header. A leaf of the debug layer: the region (src/os/pool-region.c) places the
 * objects, the sampler (src/tcache/pool-sample.c) calls these.
 */
#ifndef POOL_SRC_POOL_GUARD_H
#define POOL_SRC_POOL_GUARD_H

#include <stdint.h>

#include "base/pool-head-t.h"
#include "os/pool-region.h"

#define POOL_GUARD_DEPTH 16u        /* frames kept of a guarded object's stacks, each */

/*
 * `guard` switched on: the tables (once) and the SIGSEGV and SIGBUS handlers, which chain to
 * the handlers found before them for any fault outside the region. When sigaction() is refused,
 * says so on stderr once (a guarded object then faults without libpool's report). Thread-safe.
 */
void pool__guard_start(void);

/*
 * The guarded object `obj` of `pool` in region slot `slot` is handed out, allocated from the
 * stack frames[0..n): kept for the report, with the frames' names taken now (dladdr(3), in
 * ordinary context: the fault handler only reads them). Thread-safe.
 */
void pool__guard_alloc(unsigned int slot, const struct pool_head *pool, const void *obj,
                       const uintptr_t *frames, unsigned int n);

/* The guarded object of `slot` is freed from the stack frames[0..n), likewise. */
void pool__guard_free(unsigned int slot, const uintptr_t *frames, unsigned int n);

/*
 * A free of `ptr` into `pool` by `caller` that the region refused (`hit`: what it found there):
 * a double free, a free into another pool than the object's, an address inside a sampled
 * object or of no object. Reports it (pool-report.c) and aborts.
 */
__attribute__((noreturn)) void pool__guard_bad_free(const struct pool_head *pool, const void *ptr,
                                                    const void *caller,
                                                    const struct pool_region_hit *hit);

/*
 * The name of the code address `pc` for a report that may run in a signal handler: the name
 * taken when a guarded object's stack was kept, or the object file and offset that
 * /proc/self/maps gives, or the bare address. Into buf[0..len), NUL-terminated.
 * Async-signal-safe.
 */
void pool__guard_name(char *buf, size_t len, uintptr_t pc);

/* fork(): the lock of the records across it, released alike in the parent and the child. */
void pool__guard_fork_prepare(void);
void pool__guard_fork_after(void);

#endif
