/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Introspection internals shared by src/pool-dump.c, src/pool-cli.c and the tests of both.
 * Private header: never installed.
 */
#ifndef POOL_SRC_POOL_DUMP_H
#define POOL_SRC_POOL_DUMP_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pool/pool.h>

#include "pool-fault.h"

/*
 * The allocations of the introspection layer (snapshots, client buffers, answers, parser
 * copies): malloc(3) and friends, each a fault-injection site (POOL_FAULT_CLI) for the tests'
 * sweep. They fail as the C library does: NULL with errno = ENOMEM.
 */
static inline int pool__cli_fault(void)
{
	if (!pool__fault(POOL_FAULT_CLI))
		return 0;
	errno = ENOMEM;
	return 1;
}

static inline void *pool__cli_malloc(size_t size)
{
	return pool__cli_fault() ? NULL : malloc(size);
}

static inline void *pool__cli_calloc(size_t n, size_t size)
{
	return pool__cli_fault() ? NULL : calloc(n, size);
}

static inline void *pool__cli_realloc(void *ptr, size_t size)
{
	return pool__cli_fault() ? NULL : realloc(ptr, size);
}

static inline char *pool__cli_strndup(const char *s, size_t n)
{
	return pool__cli_fault() ? NULL : strndup(s, n);
}

static inline FILE *pool__cli_memstream(char **buf, size_t *len)
{
	return pool__cli_fault() ? NULL : open_memstream(buf, len);
}

/*
 * pool_dump() as a session of `level` sees it: heap and code addresses (the pool heads, the
 * callers of `detailed`) only at POOL_CLI_ADMIN. Same returns and errors as pool_dump().
 */
int pool__dump(FILE *out, const char *args, enum pool_cli_level level);

/*
 * Bytes held from the OS layer by the pools named name[0..len) (every pool when name is NULL):
 * the sum of allocated * stride, read under the pool list lock without stopping any thread (so
 * a snapshot, not an atomic one).
 */
size_t pool__allocated_bytes(const char *name, size_t len);

/*
 * The socket server's line timeout, POOL_CLI_READ_TIMEOUT_MS unless a test changes it (also the
 * silence after which a client with an answer pending counts as stalled), and the rounds of its
 * poll loop so far, which tests count instead of timing it.
 */
extern atomic_uint pool__cli_line_timeout_ms;
extern atomic_ulong pool__cli_rounds;

#endif
