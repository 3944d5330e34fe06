/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's views (src/introspect/pool-profile-view.c): what every output of the profile
 * prints, gathered once per output. Private header: never installed.
 */
#ifndef POOL_SRC_POOL_PROFILE_VIEW_H
#define POOL_SRC_POOL_PROFILE_VIEW_H

#include <stdint.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "debug/pool-profile.h"
#include "debug/pool-symbols.h"

/* One pool of a view. */
struct pool_view_pool {
	uintptr_t addr;
	char name[POOL_NAME_MAX + 1];
	char *aliases;                  /* its other creators' names, each ended by a NUL, then an
	                                   empty one (`pool <name>` takes any); NULL: none */
	size_t size, stride;
	uint64_t in_use;                /* exact: handed out to the program */
	uint64_t live;                  /* live samples of its rows */
	int exact;                      /* caller debugging: the split is exact */
	int sampled_all;                /* every allocation sampled, each live one in use: the
	                                   split is exact too */
	unsigned int ncallers;
	struct pool_caller_stat callers[POOL_CALLER_SLOTS];
};

/* One site of a view: a (stack, pool) row with its estimate. */
struct pool_view_site {
	struct pool_prof_row row;       /* row.depth 0: "[other]" (pool 0) or "[unsampled]"; a
	                                   caller of caller debugging: depth 1, stack 0 */
	const struct pool_view_pool *pool;   /* NULL for "[other]" and for destroyed pools */
	char sym[192];                  /* its first frame named (the allocating function), or
	                                   "[other]", "[unsampled]" */
	uint64_t key;                   /* its stack's identity in the outputs (a view with
	                                   names): a hash of the frames' names */
	uint64_t objects, bytes;        /* estimated, or exact */
	uint64_t allocated;             /* objects it allocated since the profile started, with
	                                   the estimator of `objects` */
	int exact;
};

/* A distinct address of the view's stacks, and its frames: syms[first .. first + n). */
struct pool_view_pc {
	uintptr_t pc;
	unsigned int first, n;
};

struct pool_profile_view {
	struct pool_prof_summary sum;
	int on;
	int addresses;
	struct pool_view_pool *pools;
	size_t npools, pools_cap;
	struct pool_view_site *sites;
	size_t nsites;
	struct pool_view_pc *pcs;       /* sorted by address; none in a view without names */
	size_t npcs;
	struct pool_sym *syms;
	size_t nsyms;
	int failed;
};

/*
 * What the profile knows of every pool, gathered once for an output: a snapshot of
 * the rows with their stacks, each pool's count of objects in use, the estimates, and with
 * `names` the names of the stacks' frames (libdw: the essay of pool-profile-view.c says how).
 * pool__profile_view_make() is the one with names. NULL when out of memory (errno ENOMEM).
 */
struct pool_profile_view *pool__profile_view_make(int addresses);
struct pool_profile_view *pool__profile_view_make_named(int addresses, int names);
void pool__profile_view_free(struct pool_profile_view *v);

/*
 * The frames of site `s` of a view made with names, innermost first: its inlined functions and
 * the functions holding each address, up to `max`, into out[] (pointers into the view), with
 * the address each is at in pcs[] (NULL: not wanted). Returns how many.
 */
size_t pool__profile_site_frames(const struct pool_profile_view *v,
                                 const struct pool_view_site *s, const struct pool_sym **out,
                                 uintptr_t *pcs, size_t max);

/* Frames a site may name at most: each address of a full stack with a few inlined functions. */
#define POOL_VIEW_FRAMES_MAX (4u * POOL_STACK_DEPTH_MAX)

/* The mean age of a site's live samples, ms. */
uint64_t pool__profile_age_avg(const struct pool_view_site *s);

/*
 * The allocations a site made since the profile started, estimated: its samples (each a point
 * of the sampler's Poisson process over the bytes allocated) times the objects one sample of
 * its pool stands for, the factor its objects in use are estimated with (so a site never holds
 * more than it allocated); at least its objects in use (exact ones, by caller).
 */
uint64_t pool__profile_site_allocated(const struct pool_view_site *s);

#endif
