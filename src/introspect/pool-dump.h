/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The dump's internals (src/introspect/pool-dump.c), for the command handler (src/introspect/pool-cli.c): `pools
 * show` at a session's level, and the bytes the pools hold. Private header: never installed.
 */
#ifndef POOL_SRC_POOL_DUMP_H
#define POOL_SRC_POOL_DUMP_H

#include <stddef.h>
#include <stdio.h>
#include <pool/pool.h>

/* The arguments of `pools show` (its words, formats and usage), for the `help` of pool-cli.c. */
struct pool_args_spec;
extern const struct pool_args_spec pool__show_args;

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
 * Are `args` arguments `pools show` takes? 0; else -1 (errno EINVAL) with the parser's one line
 * of error written to `out`. For POOL_STATS_ON_EXIT, checked at start.
 */
int pool__dump_args_check(FILE *out, const char *args);

#endif
