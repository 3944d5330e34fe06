/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's outputs (src/pool-profile-dump.c), for the command handler (src/pool-cli.c) and
 * the pool dump (src/pool-dump.c). Private header: never installed.
 */
#ifndef POOL_SRC_POOL_PROFILE_DUMP_H
#define POOL_SRC_POOL_PROFILE_DUMP_H

#include <stdio.h>
#include <pool/pool.h>

/*
 * `pools profile <args>` for a session of `level`: on [rate <bytes>] and off need
 * POOL_CLI_ADMIN; the views any level, with code addresses only at POOL_CLI_ADMIN. Returns 0,
 * or -1 with errno and one error line in `out` (EINVAL, EACCES, ENOENT, ENOMEM, a write's).
 */
int pool__profile_cli(FILE *out, const char *args, enum pool_cli_level level);

/*
 * What the profile knows of every pool, gathered once for a dump: the audit, a snapshot of the
 * rows, each pool's count of objects in use. NULL when out of memory (errno ENOMEM).
 */
struct pool_profile_view;
struct pool_profile_view *pool__profile_view_make(int addresses);
void pool__profile_view_free(struct pool_profile_view *v);

/*
 * The sites of the pool at `pool` (an address from the pool list) in the view, at most `max`,
 * most bytes first: lines "      profile ..." of the text of `pools show detailed`, or with
 * `json` a JSON array. Nothing (text) or [] (JSON) when the view has none, or when no profile
 * ever started.
 */
void pool__profile_view_pool(FILE *out, const struct pool_profile_view *v, const void *pool,
                             int json, size_t max);

#endif
