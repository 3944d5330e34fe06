/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's outputs (src/introspect/pool-profile-dump.c), for the command handler
 * (src/introspect/pool-cli.c), the pool dump (src/introspect/pool-dump.c) and the leak report
 * (src/introspect/pool-leak-report.c, whose two functions are declared here too). Private
 * header: never installed.
 */
#ifndef POOL_SRC_POOL_PROFILE_DUMP_H
#define POOL_SRC_POOL_PROFILE_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <pool/pool.h>

#include "introspect/pool-profile-view.h"

/* The arguments of the views of `pools profile`, for the `help` of pool-cli.c. */
struct pool_args_spec;
extern const struct pool_args_spec pool__profile_args;

/*
 * `pools profile <args>` for a session of `level`: on [rate <bytes>] and off need
 * POOL_CLI_ADMIN; the views any level, with code addresses only at POOL_CLI_ADMIN. Returns 0,
 * or -1 with errno and one error line in `out` (EINVAL, EACCES, ENOENT, ENOMEM, a write's).
 */
int pool__profile_cli(FILE *out, const char *args, enum pool_cli_level level);

/*
 * The sites of the pool at `pool` (an address from the pool list) in the view, at most `max`,
 * most bytes first: lines "      profile ..." of the text of `pools show detailed`, or with
 * `json` a JSON array. Nothing (text) or [] (JSON) when the view has none, or when no profile
 * ever started.
 */
void pool__profile_view_pool(FILE *out, const struct pool_profile_view *v, const void *pool,
                             int json, size_t max);

/* A site of a view as one JSON object (the objects of `"sites"` of `pools profile json`). */
void pool__profile_site_json(FILE *out, const struct pool_profile_view *v,
                             const struct pool_view_site *s);

/*
 * The frames of site `s` (a view with names), one line each, "<indent><- <frame>" and its
 * address in the sessions that see addresses; from the first frame, or with first 0 from the
 * second (the first is on the caller's line).
 */
void pool__profile_site_lines(FILE *out, const struct pool_profile_view *v,
                              const struct pool_view_site *s, const char *indent, int first);

/*
 * The sites of `p` (a pool of `v`) holding objects, most bytes first: a malloc()ed list of *n
 * pointers into `v` (free() it), or NULL when out of memory.
 */
struct pool_view_site **pool__profile_pool_sites(struct pool_profile_view *v,
                                                 const struct pool_view_pool *p, size_t *n);

/*
 * POOL_LEAK_REPORT and POOL_STATS_ON_EXIT (src/introspect/pool-leak-report.c): read each variable
 * and, when it asks for a report, register its atexit() handler. Called once each, by the
 * constructor of src/introspect/pool-dump.c, which gives the statistics its check of `pools
 * show`'s arguments and its dump (pool__dump_args_check(), pool__dump()).
 */
typedef int pool_dump_check_fn(FILE *out, const char *args);
typedef int pool_dump_fn(FILE *out, const char *args, enum pool_cli_level level);
void pool__leak_report_init(void);
void pool__stats_on_exit_init(pool_dump_check_fn *check, pool_dump_fn *dump);

/*
 * For the reports at exit, POOL_LEAK_REPORT and POOL_STATS_ON_EXIT (src/introspect/pool-leak-report.c,
 * used by src/introspect/pool-dump.c too): exit() may run while another thread holds the pool list lock,
 * for a moment or for good (a thread stuck in a pool_for_each() callback). Wait for it a bounded time, 1 s, rather than forever. Returns 0
 * when the lock is free (not taken: the report takes it as it goes) or held by the calling thread
 * (exit() from a callback: the report runs under that hold, as any call from a callback does);
 * -1 after 1 s, having written "libpool: <what>: the pool list stayed locked for 1 s at exit:
 * <nothing>." to stderr.
 */
int pool__exit_wait_list(const char *what, const char *nothing);

#endif
