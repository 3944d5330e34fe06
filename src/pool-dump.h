/*
 * Introspection internals shared by src/pool-dump.c and src/pool-cli.c. Private header: never
 * installed.
 */
#ifndef POOL_SRC_POOL_DUMP_H
#define POOL_SRC_POOL_DUMP_H

#include <stddef.h>
#include <stdio.h>

/*
 * Bytes held from the OS layer by every pool: the sum over pools of allocated * stride, read
 * under the pool list lock without stopping any thread (so a snapshot, not an atomic one).
 */
size_t pool__allocated_bytes(void);

#endif
