/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The -dM settings (pool-debug-parse.c): the values in effect, the pure parser of a -dM string,
 * POOL_DEBUG's reading at start-up, and their application. Private header, included by
 * pool-debug.h; nothing here calls the checks.
 */
#ifndef POOL_SRC_POOL_DEBUG_PARSE_H
#define POOL_SRC_POOL_DEBUG_PARSE_H

#include <stddef.h>
#include <pool/pool.h>

/*
 * Everything pool_parse_debugging() can change: the flag word and the value of each option that
 * takes one. The rows of the option table (pool-debug-parse.c) name their value's field by its
 * offset, and pool-debug-parse.c keeps the values in effect in one such structure, which the
 * parser, pool__debug_current(), pool__debug_apply() and pool_debugging_show() walk by the
 * table: a new valued option is a field here and a row there. Every value is a size_t, so that a row needs
 * no width of its own.
 */
struct pool_debug_settings {
	unsigned int flags;            /* POOL_DBG_* */
	size_t poison_byte;            /* poison=<0..255> */
	size_t fail_percent;           /* fail=<0..100> */
	size_t profile_rate;           /* profile=<bytes>: mean bytes between two samples */
	size_t guard_percent;          /* guard=<percent>: samples put between guard pages */
};

/* The mean bytes between two samples of the profile (profile=<bytes>), in effect. */
size_t pool__debug_profile_rate(void);

/* The share of the profile's samples put between guard pages (guard=<percent>), in effect. */
unsigned int pool__debug_guard_percent(void);

/* The settings in effect. */
void pool__debug_current(struct pool_debug_settings *cur);

/* The percentage of allocations -dMfail fails, in effect (relaxed load). */
size_t pool__debug_fail_percent(void);

/*
 * Parse a -dM string (syntax: pool_parse_debugging() in pool.h) on top of `cur` into *out: a
 * pure function, it changes nothing but *out, *help and *err. `layout_fixed`: layout options
 * (tag, caller, uaf, backup) may not change (a pool exists, or `runtime_only`, the CLI's rule,
 * which also changes the error message). Returns 0 (with *help = 1 when the string held
 * `help`), or -1 with errno = EINVAL and, if err is not NULL, *err a malloc()ed message naming
 * the offending word (NULL if that allocation failed).
 */
int pool__debug_parse(const char *str, const struct pool_debug_settings *cur, int layout_fixed,
                      int runtime_only, struct pool_debug_settings *out, int *help, char **err);

/*
 * Make `s` the settings in effect. The internal POOL_DBG_SANITIZER bit is kept as it is. When
 * `integrity` goes from off to on, the integrity epoch moves first (release), so that a thread
 * that sees the new flags also sees the new epoch. Callers serialise (pool.c's list lock).
 */
void pool__debug_apply(const struct pool_debug_settings *s);

/* The number of times `integrity` was switched on (struct pool_thread_caches.integrity_epoch). */
unsigned int pool__debug_integrity_epoch(void);

/*
 * POOL_DEBUG at start-up, `str` not empty: as pool__debug_parse() on top of `cur`, but each word
 * it refuses is named on stderr and left out, and the other words apply. Returns the settings
 * in *out and whether the string held `help` in *help.
 */
void pool__debug_parse_env(const char *str, const struct pool_debug_settings *cur,
                           struct pool_debug_settings *out, int *help);

#endif
