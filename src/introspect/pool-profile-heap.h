/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile in the formats of the tools users have (src/introspect/pool-profile-heap.c): the
 * text heap profile that jeprof (jemalloc) and pprof (gperftools) read, and folded stacks for
 * flame graphs (flamegraph.pl, speedscope, pool-httpd's page). Private header: never
 * installed.
 */
#ifndef POOL_SRC_POOL_PROFILE_HEAP_H
#define POOL_SRC_POOL_PROFILE_HEAP_H

#include <stddef.h>
#include <stdio.h>

#include "introspect/pool-profile-view.h"

/*
 * `pools profile heap`: the sites list[0..n) of `v` (a view, names not needed) as a heap
 * profile: "heap profile: <objects>: <bytes> [<allocated objects>: <allocated bytes>] @
 * heapprofile/<rate>", a line per stack with its figures and addresses, then
 * "MAPPED_LIBRARIES:" and the process's /proc/self/maps. Returns 0, or -1 with errno and one
 * error line in `out` (the mappings unreadable).
 */
int pool__profile_write_heap(FILE *out, const struct pool_profile_view *v,
                             struct pool_view_site *const *list, size_t n);

/*
 * `pools profile folded`: one line per stack of list[0..n) that holds bytes, its functions
 * from the root down separated by ';', a space, and its live bytes; identical lines summed, in
 * the order of the stacks. Returns 0, or -1 with errno ENOMEM and one error line in `out`.
 */
int pool__profile_write_folded(FILE *out, const struct pool_profile_view *v,
                               struct pool_view_site *const *list, size_t n);

/*
 * The stack of site `s` folded into buf[0..len) (always NUL-terminated, cut at a frame): its
 * functions from the root down separated by ';' ("[unsampled <pool>]" or "[other]" for the
 * rows without a stack), with POOL_FOLD_OFFSETS the offset of each frame that is not inlined
 * too ("function+0x2f"), which makes the string tell two stacks apart. Returns its length.
 */
#define POOL_FOLD_OFFSETS 0x1u
#define POOL_FOLD_MAX     16384u        /* a buffer that holds any stack */
size_t pool__profile_folded(char *buf, size_t len, const struct pool_profile_view *v,
                            const struct pool_view_site *s, unsigned int how);

#endif
