/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's views: what every output of the profile prints (pool-profile-dump.c: text,
 * JSON, Prometheus; pool-profile-heap.c: the heap profile of jeprof and pprof, folded stacks;
 * `pools show detailed`; the leak report at exit, pool-leak-report.c), gathered once per
 * output.
 *
 * How a view is made (pool__profile_view_make())
 *
 * 1. Samples. Nothing to gather: a sampled object lives in the profile's region until its
 *    free, which always reaches the profile (src/tcache/pool-sample.c), never in a cache.
 * 2. Pools. For each pool, under the pool list lock: its name, sizes, its exact count of
 *    objects in use (struct pool_stats used - cached: handed out to the program), and under
 *    `caller` debugging a copy of its table of live objects per caller.
 * 3. Rows. A snapshot of the profile's (stack, pool) rows with the ages of their live samples
 *    and the frames of their stacks.
 * 4. Estimates. A pool's objects in use are shared among its sites in proportion to their live
 *    samples (all samples of a pool stand for the same number of objects, its size being one):
 *    the figures of a pool add up to its exact count, and only their split among its sites is
 *    estimated. What no sample explains (a pool in use with no live sample) is the pool's
 *    "[unsampled]" row. Under `caller` debugging the split is exact: each object carries its
 *    allocating caller (one frame, not a stack), and the pool's table counts them (up to
 *    POOL_CALLER_SLOTS callers; objects of callers past it are "[unsampled]" too). A pool whose
 *    every allocation is sampled (a rate of 1 byte) and whose live samples are its objects in
 *    use is exact as well.
 * 5. Names. Each distinct address of the stacks is named once, with libdw (pool-symbols.c):
 *    its inlined functions and the function holding it, with file and line. Views for the
 *    heap profile skip this: jeprof and pprof name the addresses themselves.
 * Byte figures are objects times the stride, as in `pools show`. The format of every output is
 * documented in doc/pools-show.md, "pools profile".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug/pool-debug.h"
#include "core/pool-int.h"
#include "debug/pool-profile.h"
#include "introspect/pool-profile-view.h"
#include "debug/pool-symbols.h"
#include "introspect/pool-text.h"

/* Frames named per address at most: the inlined functions there and the one holding them. */
#define NAMES_PER_PC 8u

/* pool_for_each() callback: runs with the pool list lock held. */
static int view_add_pool(struct pool_head *pool, void *arg)
{
	struct pool_profile_view *v = arg;
	struct pool_view_pool *p;
	struct pool_stats st;

	if (v->npools == v->pools_cap) {
		size_t cap = v->pools_cap ? 2 * v->pools_cap : 16;
		struct pool_view_pool *np = pool__cli_realloc(v->pools, cap * sizeof(*np));

		if (!np) {
			v->failed = 1;
			return 1;
		}
		v->pools = np;
		v->pools_cap = cap;
	}
	p = &v->pools[v->npools++];
	memset(p, 0, sizeof(*p));
	pool_get_stats(pool, &st, sizeof(st));
	p->addr = (uintptr_t)pool;
	snprintf(p->name, sizeof(p->name), "%s", pool->name);
	if (pool->creators > 1) {
		char *a = pool__cli_calloc(pool->creators, POOL_NAME_MAX + 1);
		unsigned int i;

		if (!a) {
			v->failed = 1;
			return 1;
		}
		p->aliases = a;
		for (i = 1; i < pool->creators; i++)
			a = stpcpy(a, pool->creator[i].name) + 1;
	}
	p->size = st.size;
	p->stride = st.stride;
	p->in_use = st.used > st.cached ? st.used - st.cached : 0;
	if (pool->layout & POOL_DBG_CALLER) {
		unsigned int i;

		p->exact = 1;
		for (i = 0; i < POOL_CALLER_SLOTS; i++) {
			uintptr_t c = atomic_load_explicit(&pool->callers[i].caller,
			                                   memory_order_relaxed);
			long live = atomic_load_explicit(&pool->callers[i].live, memory_order_relaxed);

			if (!c || live <= 0)
				continue;
			atomic_store_explicit(&p->callers[p->ncallers].caller, c,
			                      memory_order_relaxed);
			atomic_store_explicit(&p->callers[p->ncallers].live, live,
			                      memory_order_relaxed);
			p->ncallers++;
		}
	}
	return 0;
}

static struct pool_view_pool *view_find_pool(struct pool_profile_view *v, uintptr_t addr)
{
	size_t i;

	for (i = 0; i < v->npools; i++)
		if (v->pools[i].addr == addr)
			return &v->pools[i];
	return NULL;
}

/* A new site of pool `p` (NULL: none) in the view, zeroed. */
static struct pool_view_site *view_new_site(struct pool_profile_view *v, size_t *cap,
                                            struct pool_view_pool *p)
{
	struct pool_view_site *s;

	if (v->nsites == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct pool_view_site *ns = pool__cli_realloc(v->sites, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		v->sites = ns;
		*cap = ncap;
	}
	s = &v->sites[v->nsites++];
	memset(s, 0, sizeof(*s));
	s->pool = p;
	if (p) {
		s->row.pool = p->addr;
		memcpy(s->row.name, p->name, sizeof(s->row.name));
		s->row.size = p->size;
	}
	return s;
}

/* The site of pool `p` with no stack but `caller` (0: "[unsampled]"), made if new. */
static struct pool_view_site *view_site_of(struct pool_profile_view *v, size_t *cap,
                                           uintptr_t caller, struct pool_view_pool *p)
{
	struct pool_view_site *s;
	size_t i;

	for (i = 0; i < v->nsites; i++) {
		s = &v->sites[i];
		if (s->pool == p && !s->row.stack && s->row.depth == (caller != 0) &&
		    (!caller || s->row.frames[0] == caller))
			return s;
	}
	s = view_new_site(v, cap, p);
	if (s && caller) {
		s->row.frames[0] = caller;
		s->row.depth = 1;
	}
	return s;
}

/* ------------------------------------------------------------------------------------------ */
/* Names                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static int cmp_pc(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static const struct pool_view_pc *find_pc(const struct pool_profile_view *v, uintptr_t pc)
{
	size_t lo = 0, hi = v->npcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->pcs[mid].pc == pc)
			return &v->pcs[mid];
		if (v->pcs[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Name every distinct address of the view's stacks once; 0, or -1 (no memory). */
static int view_name_frames(struct pool_profile_view *v)
{
	uintptr_t *all;
	size_t i, k, n = 0, cap = 0;

	for (i = 0; i < v->nsites; i++)
		n += v->sites[i].row.depth;
	all = pool__cli_malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return -1;
	for (i = 0, n = 0; i < v->nsites; i++)
		for (k = 0; k < v->sites[i].row.depth; k++)
			all[n++] = v->sites[i].row.frames[k];
	qsort(all, n, sizeof(*all), cmp_pc);
	for (i = 0, k = 0; i < n; i++)
		if (!k || all[k - 1] != all[i])
			all[k++] = all[i];
	v->pcs = pool__cli_calloc(k ? k : 1, sizeof(*v->pcs));
	if (!v->pcs)
		goto fail;
	if (!k) {               /* nothing to name: libdw is not loaded for it */
		free(all);
		return 0;
	}
	pool__sym_begin(0);
	for (i = 0; i < k; i++) {
		struct pool_sym one[NAMES_PER_PC];
		unsigned int got = pool__sym_frames(all[i], one, NAMES_PER_PC);

		if (v->nsyms + got > cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct pool_sym *ns;

			while (ncap < v->nsyms + got)
				ncap *= 2;
			ns = pool__cli_realloc(v->syms, ncap * sizeof(*ns));
			if (!ns) {
				pool__sym_end();
				goto fail;
			}
			v->syms = ns;
			cap = ncap;
		}
		v->pcs[i].pc = all[i];
		v->pcs[i].first = (unsigned int)v->nsyms;
		v->pcs[i].n = got;
		memcpy(&v->syms[v->nsyms], one, got * sizeof(*one));
		v->nsyms += got;
	}
	pool__sym_end();
	v->npcs = k;
	free(all);
	return 0;
fail:
	free(all);
	return -1;
}

size_t pool__profile_site_frames(const struct pool_profile_view *v,
                                 const struct pool_view_site *s, const struct pool_sym **out,
                                 uintptr_t *pcs, size_t max)
{
	size_t n = 0;
	unsigned int i, k;

	for (i = 0; i < s->row.depth && n < max; i++) {
		const struct pool_view_pc *p = find_pc(v, s->row.frames[i]);

		for (k = 0; p && k < p->n && n < max; k++, n++) {
			out[n] = &v->syms[p->first + k];
			if (pcs)
				pcs[n] = p->pc;
		}
	}
	return n;
}

/* FNV-1a, 64 bits (Fowler, Noll, Vo), of s[0..] and its NUL, after `h`. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	} while (*s++);
	return h;
}

/*
 * The site's key: a hash of its stack as the outputs name it (functions with their offsets,
 * files and lines, or objects and offsets), so that two stacks through the same first frame
 * differ, and the same stack keeps its key from view to view and from run to run of a build
 * (no absolute address in it). A row without a stack hashes its label.
 */
static void view_key(struct pool_profile_view *v, struct pool_view_site *s)
{
	const struct pool_sym *f[POOL_VIEW_FRAMES_MAX];
	size_t n = pool__profile_site_frames(v, s, f, NULL, POOL_VIEW_FRAMES_MAX), i;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	char name[320];

	for (i = 0; i < n; i++) {
		pool__sym_format(name, sizeof(name), f[i], 0);
		h = fnv1a(h, name);
	}
	s->key = n ? h : fnv1a(h, s->sym);
}

/* The site's label: its first frame (the allocating function), or what stands for it. */
static void view_label(struct pool_profile_view *v, struct pool_view_site *s)
{
	const struct pool_sym *f;

	if (!s->row.depth)
		snprintf(s->sym, sizeof(s->sym), "%s", s->row.pool ? "[unsampled]" : "[other]");
	else if (pool__profile_site_frames(v, s, &f, NULL, 1))
		pool__sym_format(s->sym, sizeof(s->sym), f, 0);
	else
		snprintf(s->sym, sizeof(s->sym), "%#" PRIxPTR, s->row.frames[0]);
}

/* ------------------------------------------------------------------------------------------ */
/* The view                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* `n` samples times `per` objects each, rounded to an object. */
static uint64_t times(uint64_t n, double per)
{
	double x = (double)n * per + 0.5;

	return x < 0x1.0p63 ? (uint64_t)x : UINT64_MAX;
}

/*
 * Share each pool's exact count among its sites (or count them exactly, by caller): one
 * estimator, the objects a sample of the pool stands for (its objects in use over its live
 * samples), for what a site holds (its live samples) and what it allocated (all its samples).
 */
static int view_estimate(struct pool_profile_view *v, size_t *cap)
{
	size_t i, k;

	/* a pool with no live sample: the weight of a sample of its size */
	for (k = 0; k < v->nsites; k++)
		v->sites[k].allocated = times(v->sites[k].row.kept, v->sites[k].row.weight);
	for (i = 0; i < v->npools; i++) {
		struct pool_view_pool *p = &v->pools[i];
		uint64_t told = 0;

		if (p->exact) {
			for (k = 0; k < p->ncallers; k++) {
				uintptr_t c = atomic_load_explicit(&p->callers[k].caller,
				                                   memory_order_relaxed);
				struct pool_view_site *s = view_site_of(v, cap, c, p);

				if (!s)
					return -1;
				s->exact = 1;
				s->objects = (uint64_t)atomic_load_explicit(&p->callers[k].live,
				                                            memory_order_relaxed);
				told += s->objects;
			}
		} else if (p->live) {
			/* every allocation sampled, every live sample an object in use: exact */
			int all = v->sum.rate == 1 && p->live == p->in_use && !v->sum.dropped;

			double per = (double)p->in_use / (double)p->live;

			for (k = 0; k < v->nsites; k++) {
				struct pool_view_site *s = &v->sites[k];

				if (s->pool != p)
					continue;
				s->objects = times(s->row.live, per);
				s->allocated = times(s->row.kept, per);
				s->exact = all && s->row.live;
			}
			p->sampled_all = all;
			told = p->in_use;
		}
		if (p->in_use > told) {
			struct pool_view_site *s = view_site_of(v, cap, 0, p);

			if (!s)
				return -1;
			s->objects = p->in_use - told;
			s->exact = p->exact;
		}
	}
	return 0;
}

struct pool_profile_view *pool__profile_view_make_named(int addresses, int names)
{
	struct pool_profile_view *v = pool__cli_calloc(1, sizeof(*v));
	struct pool_prof_row *rows = pool__cli_malloc(POOL_PROF_SITES * sizeof(*rows));
	size_t n, i, cap = 0;

	if (!v || !rows)
		goto fail;
	v->addresses = addresses;
	v->on = (POOL__DEBUGGING() & POOL_DBG_PROFILE) != 0;
	pool_for_each(view_add_pool, v);
	if (v->failed)
		goto fail;
	n = pool__prof_snapshot(rows, POOL_PROF_SITES, &v->sum);
	for (i = 0; i < n; i++) {
		struct pool_view_pool *p = rows[i].pool ? view_find_pool(v, rows[i].pool) : NULL;
		struct pool_view_site *s;

		/* rows of destroyed pools: their objects are gone, their counts stay */
		s = view_new_site(v, &cap, p);
		if (!s)
			goto fail;
		s->row = rows[i];
		if (p)
			p->live += rows[i].live;
	}
	if (view_estimate(v, &cap) < 0 || (names && view_name_frames(v) < 0))
		goto fail;
	for (i = 0; i < v->nsites; i++) {
		struct pool_view_site *s = &v->sites[i];

		s->bytes = s->objects * (s->pool ? s->pool->stride : 0);
		view_label(v, s);
		if (names)
			view_key(v, s);
	}
	free(rows);
	return v;
fail:
	free(rows);
	pool__profile_view_free(v);
	errno = ENOMEM;
	return NULL;
}

struct pool_profile_view *pool__profile_view_make(int addresses)
{
	return pool__profile_view_make_named(addresses, 1);
}

uint64_t pool__profile_age_avg(const struct pool_view_site *s)
{
	return s->row.live ? s->row.age_sum_ms / s->row.live : 0;
}

uint64_t pool__profile_site_allocated(const struct pool_view_site *s)
{
	return s->allocated > s->objects ? s->allocated : s->objects;
}

void pool__profile_view_free(struct pool_profile_view *v)
{
	if (!v)
		return;
	while (v->npools)
		free(v->pools[--v->npools].aliases);
	free(v->pools);
	free(v->sites);
	free(v->pcs);
	free(v->syms);
	free(v);
}
