/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The command line's internals, shared by its two files: the command handler with its access
 * levels (src/introspect/pool-cli.c) and the socket server that serves it (src/introspect/pool-cli-socket.c), and by
 * the tests of the server. Private header: never installed.
 */
#ifndef POOL_SRC_POOL_CLI_H
#define POOL_SRC_POOL_CLI_H

#include <stdatomic.h>
#include <stddef.h>
#include <pool/pool.h>

/* Is `level` one of enum pool_cli_level? */
int pool__cli_level_valid(int level);

/* The name of a valid level: "user", "operator" or "admin". */
const char *pool__cli_level_name(enum pool_cli_level level);

/* The level named exactly w[0..len), or 0 when none is. */
int pool__cli_level_find(const char *w, size_t len);

/*
 * The socket server's line timeout, POOL_CLI_READ_TIMEOUT_MS unless a test changes it (also the
 * silence after which a client with an answer pending counts as stalled), and the rounds of its
 * poll loop so far, which tests count instead of timing it (src/introspect/pool-cli-socket.c).
 */
extern atomic_uint pool__cli_line_timeout_ms;
extern atomic_ulong pool__cli_rounds;

#endif
