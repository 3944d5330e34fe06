/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * `pools show`: the pool dump, as text (HAProxy's "show pools" shape), JSON or the Prometheus
 * text exposition format.
 *
 * How it reads a running process
 *
 * 1. Snapshot. pool_for_each() holds the pool list lock while it visits every pool, so no pool
 *    is created, merged into or destroyed during the visit: a pool appears whole or not at all.
 *    For each pool we copy what we print (pool_get_stats(), the name, the head's address, and,
 *    for `detailed`, the merged pool_create() calls and the caller table) into a private array.
 *    The counters are relaxed loads of bucket and thread-cache counters: no thread is stopped
 *    and nothing on a pool's hot path is called or locked (pool_get_stats() takes the thread
 *    registry lock, to sum the thread caches, and no other; the hot path never takes it).
 * 2. Filter, sort and cut, on the copy, with the pool list lock released.
 * 3. The OS layer's figures (JSON and Prometheus), once, with no lock of ours held:
 *    pool_get_os_stats() asks jemalloc to refresh its statistics (its control lock) or the C
 *    library for mallinfo2() (every arena's lock), which is why it is not asked per pool.
 * 4. Print, from the copy. Writing to `out` may block (a pipe, a slow terminal): it happens
 *    with no lock held.
 *
 * Sizes of objects are the usable size (struct pool_stats.size); byte figures are objects times
 * the stride (the memory each object really takes: size plus debugging extras, rounded up to the
 * alignment), so that they add up to what the pools hold from the OS layer. The gauges and the
 * cumulative counters come from two tables (dump_gauges[], dump_counters[]) that the JSON and
 * Prometheus outputs print under the same names; only the text's pool line is written by hand.
 * Heap and code addresses are printed only for a session of level admin (pool__dump()).
 *
 * The end of the file holds POOL_STATS_ON_EXIT: the same dump on stderr at exit.
 *
 * The format of every output is documented in doc/pools-show.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pool-assert.h"
#include "core/pool-int.h"
#include "introspect/pool-args.h"
#include "introspect/pool-dump.h"
#include "introspect/pool-profile-dump.h"
#include "slab/pool-slab.h"
#include "debug/pool-symbols.h"
#include "introspect/pool-text.h"
#include "tcache/pool-thread.h"

/* Callers listed per pool by `detailed`: the ones with the most live objects. */
#define DUMP_CALLERS_SHOWN 5u

enum dump_sort { SORT_NONE = 0, SORT_NAME, SORT_SIZE, SORT_USAGE };

struct dump_args {
	enum dump_sort sort;
	enum pool_format format;
	int detailed;
	const char *match;        /* prefix, or NULL */
	size_t match_len;
	size_t max;               /* 0: no cut */
	int addresses;            /* show heap and code addresses (level admin) */
};

struct dump_caller {
	uintptr_t addr;
	long live;
};

/* One pool, as copied under the pool list lock. */
struct dump_entry {
	struct pool_stats st;
	const struct pool_head *head;   /* for its address only: never dereferenced after the copy */
	unsigned int seq;               /* position in creation order */
	unsigned int records_callers;   /* the pool was created with `caller` debugging */
	char name[POOL_NAME_MAX + 1];
	char label[POOL_NAME_MAX + 12]; /* Prometheus label: name, or name#<n> for the n-th pool
	                                   of that name in creation order */
	struct pool_creator *creators;  /* copy of creator[0..st.creators-1] (detailed only) */
	struct pool_cache_view cache;   /* its thread caches (detailed only) */
	unsigned int mag_objects;       /* a magazine's capacity in objects (detailed only) */
	unsigned int mag_depth;         /* the depth a new loaded magazine starts with */
	size_t mag_bytes;               /* the bytes of one magazine (header and pointers) */
	unsigned int ncallers;
	struct dump_caller callers[POOL_CALLER_SLOTS];
	size_t resident_bytes;          /* of its memory, resident now (resident_of()) */
};

struct dump_snapshot {
	const struct dump_args *args;
	struct dump_entry *e;
	size_t n, cap;
	unsigned int seq;
	size_t empty_left_out;          /* pools `byusage` left out: they hold nothing */
	int failed;                     /* out of memory while copying */
	struct pool_profile_view *profile;   /* `detailed`: the sites of each pool, or NULL */
};

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* What each word of `pools show` sets (group 0 is the formats', pool-args.h). */
enum show_group { SHOW_SORT = 1, SHOW_DETAILED, SHOW_MATCH };

static const struct pool_word show_words[] = {
	{ "byname", SHOW_SORT, SORT_NAME },
	{ "bysize", SHOW_SORT, SORT_SIZE },
	{ "byusage", SHOW_SORT, SORT_USAGE },
	{ "detailed", SHOW_DETAILED, 1 },
	{ "match", SHOW_MATCH, 1 },
};

const struct pool_args_spec pool__show_args = {
	.command = "pools show",
	.words = show_words,
	.nwords = sizeof(show_words) / sizeof(show_words[0]),
	.formats = POOL_FORMAT_BIT(POOL_FORMAT_JSON) | POOL_FORMAT_BIT(POOL_FORMAT_PROMETHEUS),
	.counted = "pools",
	.count = "<max>",
	.takes = { [SHOW_MATCH] = "<prefix>" },
	.takes_what = { [SHOW_MATCH] = "a prefix" },
};
_Static_assert(SHOW_MATCH < POOL_ARGS_GROUPS, "POOL_ARGS_GROUPS");

/* Parse `args` into *a; on error write one line to `out` and return -1 (errno EINVAL). */
static int parse_args(FILE *out, const char *args, struct dump_args *a)
{
	struct pool_args pa;

	memset(a, 0, sizeof(*a));
	if (pool__args_parse(out, args, &pool__show_args, &pa) < 0)
		return -1;
	a->sort = (enum dump_sort)pa.value[SHOW_SORT];
	a->format = pa.format;
	a->detailed = pa.value[SHOW_DETAILED];
	a->match = pa.arg[SHOW_MATCH];
	a->match_len = pa.arg_len[SHOW_MATCH];
	a->max = pa.max;
	if (a->detailed && a->format == POOL_FORMAT_PROMETHEUS) {
		fputs("Option 'detailed' cannot be combined with 'prometheus' in 'pools show'. "
		      "Try 'help'.\n", out);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Snapshot                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void free_snapshot(struct dump_snapshot *s)
{
	size_t i;

	pool__profile_view_free(s->profile);
	s->profile = NULL;
	for (i = 0; i < s->n; i++)
		free(s->e[i].creators);
	free(s->e);
}

static int cmp_caller(const void *a, const void *b)
{
	const struct dump_caller *x = a, *y = b;

	if (x->live != y->live)
		return x->live > y->live ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * What of a pool's memory is resident: its slabs' pages the kernel holds (mincore(2): the purge
 * gives the pages of free objects back while their slab keeps live ones, and `allocated` does
 * not fall with them); off slabs, its allocated bytes, which libpool never purges.
 */
static size_t resident_of(struct pool_head *pool, const struct pool_stats *st)
{
	return pool__slab_on(pool) ? pool__slab_resident(pool) : st->allocated * st->stride;
}

/* pool_for_each() callback: runs with the pool list lock held. */
static int snapshot_one(struct pool_head *pool, void *arg)
{
	struct dump_snapshot *s = arg;
	const struct dump_args *a = s->args;
	struct dump_entry *e;
	unsigned int i, seq = s->seq++;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	if (a->match && !pool__pool_named(pool, a->match, a->match_len, 1))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct dump_entry *ne = pool__cli_realloc(s->e, cap * sizeof(*ne));

		if (!ne) {
			s->failed = 1;
			return 1;
		}
		s->e = ne;
		s->cap = cap;
	}
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	pool_get_stats(pool, &e->st, sizeof(e->st));
	if (a->sort == SORT_USAGE && e->st.allocated == 0) {
		s->empty_left_out++;
		return 0;
	}
	e->head = pool;
	e->seq = seq;
	e->resident_bytes = resident_of(pool, &e->st);
	snprintf(e->name, sizeof(e->name), "%s", pool->name);
	if (a->format == POOL_FORMAT_PROMETHEUS) {
		const struct pool_head *p;
		unsigned int dup = 1;

		/* older pools of the same name, whether shown or not: stable across filters */
		for (p = pool->prev; p; p = p->prev)
			dup += strcmp(p->name, pool->name) == 0;
		if (dup == 1)
			snprintf(e->label, sizeof(e->label), "%s", pool->name);
		else
			snprintf(e->label, sizeof(e->label), "%s#%u", pool->name, dup);
	}
	if (a->detailed) {
		e->creators = pool__cli_malloc((e->st.creators ? e->st.creators : 1) *
		                               sizeof(*e->creators));
		if (!e->creators) {
			s->failed = 1;
			return 1;
		}
		memcpy(e->creators, pool->creator, e->st.creators * sizeof(*e->creators));
		pool__thread_cache_view(pool, &e->cache);
		e->mag_objects = pool->cluster;
		e->mag_depth = pool->depth;
		e->mag_bytes = pool->mag_bytes;
		e->records_callers = a->addresses && (pool->layout & POOL_DBG_CALLER);
		for (i = 0; e->records_callers && i < POOL_CALLER_SLOTS; i++) {
			uintptr_t c = atomic_load_explicit(&pool->callers[i].caller,
			                                   memory_order_relaxed);
			long live = atomic_load_explicit(&pool->callers[i].live, memory_order_relaxed);

			if (c && live > 0) {
				e->callers[e->ncallers].addr = c;
				e->callers[e->ncallers].live = live;
				e->ncallers++;
			}
		}
		qsort(e->callers, e->ncallers, sizeof(e->callers[0]), cmp_caller);
		if (e->ncallers > DUMP_CALLERS_SHOWN)
			e->ncallers = DUMP_CALLERS_SHOWN;
	}
	s->n++;
	return 0;
}

static int cmp_seq(const struct dump_entry *x, const struct dump_entry *y)
{
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_name(const void *a, const void *b)
{
	const struct dump_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : cmp_seq(x, y);
}

static int cmp_size(const void *a, const void *b)
{
	const struct dump_entry *x = a, *y = b;

	if (x->st.size != y->st.size)
		return x->st.size > y->st.size ? -1 : 1;
	return cmp_seq(x, y);
}

static int cmp_usage(const void *a, const void *b)
{
	const struct dump_entry *x = a, *y = b;
	size_t bx = x->st.allocated * x->st.stride, by = y->st.allocated * y->st.stride;

	if (bx != by)
		return bx > by ? -1 : 1;
	return cmp_seq(x, y);
}

struct bytes_walk {
	const char *name;
	size_t len, bytes;
};

/* pool_for_each() callback of pool__allocated_bytes(): runs with the pool list lock held. */
static int add_bytes(struct pool_head *pool, void *arg)
{
	struct bytes_walk *b = arg;
	struct pool_stats st;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	if (b->name && !pool__pool_named(pool, b->name, b->len, 0))
		return 0;
	pool_get_stats(pool, &st, sizeof(st));
	b->bytes += st.allocated * st.stride;
	return 0;
}

size_t pool__allocated_bytes(const char *name, size_t len)
{
	struct bytes_walk b = { name, len, 0 };

	pool_for_each(add_bytes, &b);
	return b.bytes;
}

/* ------------------------------------------------------------------------------------------ */
/* Output                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* "SHARED", "EXACT", "SHARED|EXACT" or "none". */
static const char *flags_str(unsigned int flags)
{
	switch (flags & POOL_F_CREATE_MASK) {
	case POOL_F_SHARED: return "SHARED";
	case POOL_F_EXACT: return "EXACT";
	case POOL_F_SHARED | POOL_F_EXACT: return "SHARED|EXACT";
	default: return "none";
	}
}

/*
 * Objects in the program's hands: used less those in thread caches. `cached` is read from each
 * thread's cache while it runs, so it may briefly exceed `used`: the difference is 0 then.
 */
static size_t in_use_of(const struct pool_stats *st)
{
	return st->used > st->cached ? st->used - st->cached : 0;
}

/*
 * The figures of struct pool_stats that every format prints, metric rows (pool-args.h) in one
 * table each for the gauges and the cumulative counters (the text's `detailed` line prints the
 * counters; the HAProxy-shaped pool line is written by hand). A row's value is read from a
 * struct pool_stats.
 */
#define STAT_GETTER(fn, expr) \
	static uint64_t fn(const void *of) \
	{ \
		const struct pool_stats *st = of; \
		return (uint64_t)(expr); \
	}

STAT_GETTER(sv_size, st->size)
STAT_GETTER(sv_align, st->align)
STAT_GETTER(sv_stride, st->stride)
STAT_GETTER(sv_allocated, st->allocated)
STAT_GETTER(sv_allocated_bytes, st->allocated * st->stride)
STAT_GETTER(sv_used, st->used)
STAT_GETTER(sv_used_bytes, st->used * st->stride)
STAT_GETTER(sv_cached, st->cached)
STAT_GETTER(sv_in_use, in_use_of(st))
STAT_GETTER(sv_shared_free, st->shared_free)
STAT_GETTER(sv_needed_avg, st->needed_avg)
STAT_GETTER(sv_limit, st->limit)
STAT_GETTER(sv_reserve, st->reserve)
STAT_GETTER(sv_creators, st->creators)
STAT_GETTER(sv_buckets, st->buckets)
STAT_GETTER(sv_failed, st->failed)
STAT_GETTER(sv_shared_get_objects, st->shared_get_objects)
STAT_GETTER(sv_shared_get_clusters, st->shared_get_clusters)
STAT_GETTER(sv_shared_put_objects, st->shared_put_objects)
STAT_GETTER(sv_shared_put_clusters, st->shared_put_clusters)
STAT_GETTER(sv_os_allocs, st->os_allocs)
STAT_GETTER(sv_os_releases, st->os_releases)
STAT_GETTER(sv_gc_released_bytes, st->gc_released_bytes)
STAT_GETTER(sv_lost, st->lost)
STAT_GETTER(sv_slabs, st->slabs)
STAT_GETTER(sv_slab_bytes, st->slab_bytes)
STAT_GETTER(sv_slab_free, st->slab_free)
STAT_GETTER(sv_slabs_released, st->slabs_released)
STAT_GETTER(sv_slab_get_objects, st->slab_get_objects)
STAT_GETTER(sv_slab_put_objects, st->slab_put_objects)
STAT_GETTER(sv_slab_purged_bytes, st->slab_purged_bytes)

/* The gauges of a pool, in the order of the JSON keys and of the Prometheus families. */
static const struct pool_metric dump_gauges[] = {
	POOL_GAUGE("size", "libpool_pool_object_size_bytes", "Usable size of one object.", sv_size),
	POOL_GAUGE("align", "libpool_pool_alignment_bytes", "Alignment of objects.", sv_align),
	POOL_GAUGE("stride", "libpool_pool_stride_bytes",
	           "Memory one object takes, with debugging extras and alignment.", sv_stride),
	POOL_GAUGE("allocated", "libpool_pool_allocated_objects",
	           "Objects obtained from the OS layer and not given back.", sv_allocated),
	POOL_GAUGE("allocated_bytes", "libpool_pool_allocated_bytes",
	           "Bytes obtained from the OS layer and not given back (objects times stride).",
	           sv_allocated_bytes),
	POOL_GAUGE("used", "libpool_pool_used_objects",
	           "Objects handed out plus objects lying free in thread caches (the program holds "
	           "about used minus cached).", sv_used),
	POOL_GAUGE("used_bytes", "libpool_pool_used_bytes",
	           "Used objects times stride.", sv_used_bytes),
	POOL_GAUGE("cached", "libpool_pool_cached_objects",
	           "Objects in thread caches (approximate).", sv_cached),
	POOL_GAUGE("in_use", "libpool_pool_in_use_objects",
	           "Objects handed out to the program: used minus the objects in thread caches "
	           "(approximate, as cached is).", sv_in_use),
	POOL_GAUGE("shared_free", "libpool_pool_shared_free_objects",
	           "Objects in the shared free lists.", sv_shared_free),
	POOL_GAUGE("needed_avg", "libpool_pool_needed_avg_objects",
	           "The average of used over the last demand window, each moment weighted by "
	           "its length.", sv_needed_avg),
	POOL_GAUGE("limit", "libpool_pool_limit_objects",
	           "Maximum allocated objects, 0 for none.", sv_limit),
	POOL_GAUGE("reserve", "libpool_pool_reserve_objects",
	           "Free objects memory return leaves in the shared free lists, 0 for none.",
	           sv_reserve),
	POOL_GAUGE("creators", "libpool_pool_creators",
	           "pool_create() calls merged into the pool (its creators; each name names the "
	           "pool).", sv_creators),
	POOL_GAUGE("buckets", NULL, "Shared free list buckets.", sv_buckets),
	POOL_GAUGE("slabs", "libpool_pool_slabs",
	           "Slabs the pool holds (0 for a pool off slabs).", sv_slabs),
	POOL_GAUGE("slab_bytes", "libpool_pool_slab_bytes",
	           "Bytes of the slabs the pool holds: its memory from the OS layer.",
	           sv_slab_bytes),
	POOL_GAUGE("slab_free", "libpool_pool_slab_free_objects",
	           "Objects given back to their slab and free there (counted in allocated).",
	           sv_slab_free),
};

/*
 * The cumulative counters, under one name in every format: the field's name is the JSON key
 * and, with "libpool_pool_" before it and "_total" after it, the Prometheus counter.
 */
static const struct pool_metric dump_counters[] = {
	POOL_COUNTER("failed", "libpool_pool_failed_total",
	             "Allocations that returned NULL (limit reached, OS layer out of memory, fault "
	             "injection).", sv_failed),
	POOL_COUNTER("shared_get_objects", "libpool_pool_shared_get_objects_total",
	             "Objects taken from the shared free lists.", sv_shared_get_objects),
	POOL_COUNTER("shared_get_clusters", "libpool_pool_shared_get_clusters_total",
	             "Magazines (clusters) taken from the shared free lists (one or two an "
	             "exchange).", sv_shared_get_clusters),
	POOL_COUNTER("shared_put_objects", "libpool_pool_shared_put_objects_total",
	             "Objects given to the shared free lists.", sv_shared_put_objects),
	POOL_COUNTER("shared_put_clusters", "libpool_pool_shared_put_clusters_total",
	             "Magazines (clusters) given to the shared free lists.",
	             sv_shared_put_clusters),
	POOL_COUNTER("os_allocs", "libpool_pool_os_allocs_total",
	             "Objects obtained from the OS layer.", sv_os_allocs),
	POOL_COUNTER("os_releases", "libpool_pool_os_releases_total",
	             "Objects given back to the OS layer.", sv_os_releases),
	POOL_COUNTER("gc_released_bytes", "libpool_pool_gc_released_bytes_total",
	             "Bytes (objects times stride) given back to the OS layer by memory return and "
	             "pool_flush().", sv_gc_released_bytes),
	POOL_COUNTER("lost", "libpool_pool_lost_total",
	             "Objects lost in a fork() child: held by a thread that did not follow the "
	             "fork, in the middle of a shared-list operation (normally 0).", sv_lost),
	POOL_COUNTER("slabs_released", "libpool_pool_slabs_released_total",
	             "Slabs given back whole to the OS layer.", sv_slabs_released),
	POOL_COUNTER("slab_get_objects", "libpool_pool_slab_get_objects_total",
	             "Objects the shared lists' tier took from the tier below it (slabs).",
	             sv_slab_get_objects),
	POOL_COUNTER("slab_put_objects", "libpool_pool_slab_put_objects_total",
	             "Objects given down to the tier below the shared lists (their slabs).",
	             sv_slab_put_objects),
	POOL_COUNTER("slab_purged_bytes", "libpool_pool_slab_purged_bytes_total",
	             "Resident bytes of free objects' pages given to the kernel while their slab "
	             "kept live objects (the slabs' address space stays).", sv_slab_purged_bytes),
};

/* A pool's figure of its own beside those of struct pool_stats, read from its dump_entry. */
static uint64_t ev_resident_bytes(const void *of)
{
	return ((const struct dump_entry *)of)->resident_bytes;
}

static const struct pool_metric dump_entry_gauges[] = {
	POOL_GAUGE("resident_bytes", "libpool_pool_resident_bytes",
	           "Bytes of the pool's memory resident now (mincore() over its slabs: pages of "
	           "free objects given to the kernel are not; a pool off slabs: its allocated "
	           "bytes).", ev_resident_bytes),
};

#define NB_GAUGES   (sizeof(dump_gauges) / sizeof(dump_gauges[0]))
#define NB_ENTRY_GAUGES (sizeof(dump_entry_gauges) / sizeof(dump_entry_gauges[0]))
#define NB_COUNTERS (sizeof(dump_counters) / sizeof(dump_counters[0]))

/* The OS layer's figures, for the whole process: the JSON total and two Prometheus gauges. */
static uint64_t ov_allocated(const void *of)
{
	return ((const struct pool_os_stats *)of)->allocated_bytes;
}

static uint64_t ov_resident(const void *of)
{
	return ((const struct pool_os_stats *)of)->resident_bytes;
}

static const struct pool_metric dump_os_stats[] = {
	POOL_GAUGE("os_allocated_bytes", "libpool_os_allocated_bytes",
	           "Bytes the OS layer has handed out (all its users, not only pools), 0 if "
	           "unknown.", ov_allocated),
	POOL_GAUGE("os_resident_bytes", "libpool_os_resident_bytes",
	           "Bytes the OS layer holds resident, 0 if unknown.", ov_resident),
};

#define NB_OS_STATS (sizeof(dump_os_stats) / sizeof(dump_os_stats[0]))

struct dump_totals {
	size_t pools, allocated_bytes, used_bytes, cached_bytes, in_use_bytes, resident_bytes;
	uint64_t counters[NB_COUNTERS];
};

static void totals_of(const struct dump_snapshot *s, struct dump_totals *t)
{
	size_t i, k;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < s->n; i++) {
		const struct pool_stats *st = &s->e[i].st;

		t->pools++;
		t->allocated_bytes += st->allocated * st->stride;
		t->used_bytes += st->used * st->stride;
		t->cached_bytes += st->cached * st->stride;
		t->in_use_bytes += in_use_of(st) * st->stride;
		t->resident_bytes += s->e[i].resident_bytes;
		for (k = 0; k < NB_COUNTERS; k++)
			t->counters[k] += dump_counters[k].value(st);
	}
}

/*
 * `detailed`: the pool's thread caches, e.g. "thread caches: 908 objects in 2 of 3 threads;
 * magazines of 32 objects (280 bytes), loaded ones 8-32 deep (a new one 8)" (one figure when
 * every loaded magazine has the same depth, "none loaded" when no thread has one).
 */
static void print_cache_text(FILE *out, const struct dump_entry *e)
{
	const struct pool_cache_view *c = &e->cache;

	if (!c->slot) {
		fprintf(out, "      thread caches: none (no cache slot was left for this pool; "
		        "%u threads)\n", c->threads);
		return;
	}
	fprintf(out, "      thread caches: %lu objects in %u of %u threads; magazines of %u "
	        "objects (%zu bytes), ", c->objects, c->caching, c->threads, e->mag_objects,
	        e->mag_bytes);
	if (c->depth_max > c->depth_min)
		fprintf(out, "loaded ones %u-%u deep (a new one %u)\n", c->depth_min, c->depth_max,
		        e->mag_depth);
	else if (c->depth_max)
		fprintf(out, "loaded ones %u deep (a new one %u)\n", c->depth_max, e->mag_depth);
	else
		fprintf(out, "none loaded (a new one %u deep)\n", e->mag_depth);
}

static void print_text(FILE *out, const struct dump_snapshot *s, int limited)
{
	struct dump_totals t;
	char sym[256];
	size_t i, k;

	if (limited)
		fprintf(out, "Dumping pools usage (limited to the first %zu entries). ", s->n);
	else
		fputs("Dumping pools usage. ", out);
	fputs("Use 'pools trim' to release unused memory.\n", out);
	for (i = 0; i < s->n; i++) {
		const struct dump_entry *e = &s->e[i];
		const struct pool_stats *st = &e->st;

		fprintf(out, "  - Pool %s (%zu bytes/%zu) : %zu allocated (%zu bytes), %zu used "
		        "(~%zu by thread caches), ~%zu in use, needed_avg %zu, %zu failures, %u users",
		        e->name, st->size, st->align, st->allocated, st->allocated * st->stride,
		        st->used, st->cached, in_use_of(st), st->needed_avg, st->failed,
		        st->creators);
		if (s->args->addresses)
			fprintf(out, ", @%p", (const void *)e->head);
		fputs((st->flags & POOL_F_SHARED) ? " [SHARED]\n" : "\n", out);
		if (!s->args->detailed)
			continue;
		fprintf(out, "      stride %zu bytes, %u buckets, %zu in shared free lists, "
		        "limit %zu%s", st->stride, st->buckets, st->shared_free, st->limit,
		        st->limit ? "" : " (none)");
		if (st->reserve)
			fprintf(out, ", reserve %zu", st->reserve);
		fputc('\n', out);
		fprintf(out, "      %zu slabs (%zu bytes), %zu objects free in them; ~%zu bytes "
		        "resident\n", st->slabs, st->slab_bytes, st->slab_free, e->resident_bytes);
		print_cache_text(out, e);
		fputs("      since created:", out);
		for (k = 0; k < NB_COUNTERS; k++)
			fprintf(out, "%s %s %" PRIu64, k ? "," : "", dump_counters[k].key,
			        dump_counters[k].value(st));
		fputc('\n', out);
		for (k = 0; k < st->creators; k++) {
			fprintf(out, "      created as %s: %zu bytes/%zu, flags %s", e->creators[k].name,
			        e->creators[k].size, e->creators[k].align, flags_str(e->creators[k].flags));
			if (s->args->addresses && e->creators[k].where) {
				pool__symbolize(sym, sizeof(sym), e->creators[k].where, POOL_SYM_SHORT);
				fprintf(out, ", at %s", sym);
			}
			fputc('\n', out);
		}
		for (k = 0; k < e->ncallers; k++) {
			pool__sym_name(sym, sizeof(sym), e->callers[k].addr, 0);
			fprintf(out, "      caller %s (%#lx): %ld live objects\n", sym,
			        (unsigned long)e->callers[k].addr, e->callers[k].live);
		}
		pool__profile_view_pool(out, s->profile, e->head, 0, DUMP_CALLERS_SHOWN);
	}
	totals_of(s, &t);
	/*
	 * The pools `byusage` left out count too, as `pools show` counts them: they hold nothing,
	 * so the bytes are the same. Not after a cut (<max>), whose Total is the pools shown: they
	 * would sort last, after it.
	 */
	fprintf(out, "Total: %zu pools, %zu bytes allocated, %zu used (~%zu by thread caches), "
	        "~%zu in use, ~%zu resident.\n", t.pools + (limited ? 0 : s->empty_left_out),
	        t.allocated_bytes, t.used_bytes, t.cached_bytes, t.in_use_bytes, t.resident_bytes);
}

static void print_json(FILE *out, const struct dump_snapshot *s, int limited, size_t matched,
                       const struct pool_os_stats *os)
{
	struct pool_config cfg;
	struct dump_totals t;
	char sym[256];
	size_t i, k;

	pool_get_config(&cfg);
	fputs("{\"format\": 2,\n \"settings\": {\"version\": ", out);
	pool_json_write_string(out, pool_version());
	fputs(", \"os_layer\": ", out);
	pool_json_write_string(out, os->layer);
	fprintf(out, ", \"buckets\": %u, \"cache_bytes\": %zu, \"cluster\": %u, \"decay_ms\": %u},"
	        "\n \"pools\": [", cfg.buckets, cfg.cache_bytes, cfg.cluster, cfg.decay_ms);
	for (i = 0; i < s->n; i++) {
		const struct dump_entry *e = &s->e[i];
		const struct pool_stats *st = &e->st;

		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		pool_json_write_string(out, e->name);
		if (s->args->addresses)
			fprintf(out, ", \"address\": \"%p\"", (const void *)e->head);
		pool__metrics_json(out, dump_gauges, NB_GAUGES, st);
		pool__metrics_json(out, dump_entry_gauges, NB_ENTRY_GAUGES, e);
		fprintf(out, ", \"shared\": %s, \"exact\": %s",
		        (st->flags & POOL_F_SHARED) ? "true" : "false",
		        (st->flags & POOL_F_EXACT) ? "true" : "false");
		pool__metrics_json(out, dump_counters, NB_COUNTERS, st);
		if (s->args->detailed) {
			fputs(", \"created_as\": [", out);
			for (k = 0; k < st->creators; k++) {
				fputs(k ? ", {\"name\": " : "{\"name\": ", out);
				pool_json_write_string(out, e->creators[k].name);
				fprintf(out, ", \"size\": %zu, \"align\": %zu, \"flags\": ",
				        e->creators[k].size, e->creators[k].align);
				pool_json_write_string(out, flags_str(e->creators[k].flags));
				if (s->args->addresses && e->creators[k].where) {
					pool__symbolize(sym, sizeof(sym), e->creators[k].where,
					                POOL_SYM_SHORT);
					fputs(", \"at\": ", out);
					pool_json_write_string(out, sym);
				}
				fputc('}', out);
			}
			fputc(']', out);
			if (e->cache.slot)
				fprintf(out, ", \"thread_caches\": {\"threads\": %u, \"caching\": %u, "
				        "\"objects\": %lu, \"magazine_objects\": %u, "
				        "\"magazine_bytes\": %zu, \"depth_new\": %u, \"depth_min\": %u, "
				        "\"depth_max\": %u}", e->cache.threads, e->cache.caching,
				        e->cache.objects, e->mag_objects, e->mag_bytes, e->mag_depth,
				        e->cache.depth_min, e->cache.depth_max);
			else
				fputs(", \"thread_caches\": null", out);
			if (e->records_callers) {
				fputs(", \"callers\": [", out);
				for (k = 0; k < e->ncallers; k++) {
					pool__sym_name(sym, sizeof(sym), e->callers[k].addr, 0);
					fprintf(out, "%s{\"address\": \"%#lx\", \"symbol\": ", k ? ", " : "",
					        (unsigned long)e->callers[k].addr);
					pool_json_write_string(out, sym);
					fprintf(out, ", \"live\": %ld}", e->callers[k].live);
				}
				fputc(']', out);
			}
			fputs(", \"profile\": ", out);
			pool__profile_view_pool(out, s->profile, e->head, 1, DUMP_CALLERS_SHOWN);
		}
		fputc('}', out);
	}
	totals_of(s, &t);
	fprintf(out, "%s],\n \"total\": {\"pools\": %zu, \"matched\": %zu, \"limited\": %s, "
	        "\"allocated_bytes\": %zu, \"used_bytes\": %zu, \"cached_bytes\": %zu, "
	        "\"in_use_bytes\": %zu, \"resident_bytes\": %zu", s->n ? "\n " : "", t.pools,
	        matched, limited ? "true" : "false", t.allocated_bytes, t.used_bytes,
	        t.cached_bytes, t.in_use_bytes, t.resident_bytes);
	for (k = 0; k < NB_COUNTERS; k++)
		fprintf(out, ", \"%s\": %" PRIu64, dump_counters[k].key, t.counters[k]);
	pool__metrics_json(out, dump_os_stats, NB_OS_STATS, os);
	fputs("}}\n", out);
}

/*
 * One family per row of table[0..n) with a metric: a sample per pool, read from its struct
 * pool_stats, or from its dump_entry when `of_entry`.
 */
static void prom_stats(FILE *out, const struct dump_snapshot *s, const struct pool_metric *table,
                       size_t n, int of_entry)
{
	size_t i, m;

	for (m = 0; m < n; m++) {
		const struct pool_metric *pm = &table[m];

		if (!pm->name)
			continue;
		pool__metric_family(out, pm);
		for (i = 0; i < s->n; i++) {
			fprintf(out, "%s{pool=\"", pm->name);
			pool__prom_label(out, s->e[i].label);
			fputc('"', out);
			fputc('}', out);
			pool__metric_value(out, pm, of_entry ? (const void *)&s->e[i] :
			                                        (const void *)&s->e[i].st);
		}
	}
}

static void print_prometheus(FILE *out, const struct dump_snapshot *s,
                             const struct pool_os_stats *os)
{
	struct pool_config cfg;
	struct dump_totals t;
	size_t i;

	/* the settings, as labels of one info metric (Prometheus' naming practice) */
	pool_get_config(&cfg);
	fputs("# HELP libpool_info The libpool library and its process-wide settings.\n"
	      "# TYPE libpool_info gauge\nlibpool_info{version=\"", out);
	pool__prom_label(out, pool_version());
	fputs("\",os_layer=\"", out);
	pool__prom_label(out, os->layer);
	fprintf(out, "\",buckets=\"%u\",cache_bytes=\"%zu\",cluster=\"%u\",decay_ms=\"%u\"} 1\n",
	        cfg.buckets, cfg.cache_bytes, cfg.cluster, cfg.decay_ms);
	fputs("# HELP libpool_pool_info A pool and its creation flags (1 when set).\n"
	      "# TYPE libpool_pool_info gauge\n", out);
	for (i = 0; i < s->n; i++) {
		fputs("libpool_pool_info{pool=\"", out);
		pool__prom_label(out, s->e[i].label);
		fprintf(out, "\",shared=\"%d\",exact=\"%d\"} 1\n",
		        !!(s->e[i].st.flags & POOL_F_SHARED), !!(s->e[i].st.flags & POOL_F_EXACT));
	}
	prom_stats(out, s, dump_gauges, NB_GAUGES, 0);
	prom_stats(out, s, dump_entry_gauges, NB_ENTRY_GAUGES, 1);
	prom_stats(out, s, dump_counters, NB_COUNTERS, 0);
	totals_of(s, &t);
	pool__prom_family(out, "libpool_pools", "gauge", "Pools in this dump.");
	fprintf(out, "libpool_pools %zu\n", t.pools);
	pool__prom_family(out, "libpool_allocated_bytes", "gauge",
	            "Bytes the pools in this dump hold from the OS layer.");
	fprintf(out, "libpool_allocated_bytes %zu\n", t.allocated_bytes);
	pool__prom_family(out, "libpool_resident_bytes", "gauge",
	            "Bytes of the pools in this dump resident now (the sum of "
	            "libpool_pool_resident_bytes).");
	fprintf(out, "libpool_resident_bytes %zu\n", t.resident_bytes);
	for (i = 0; i < NB_OS_STATS; i++) {
		pool__metric_family(out, &dump_os_stats[i]);
		pool__metric_sample(out, &dump_os_stats[i], os);
	}
}

int pool__dump(FILE *out, const char *args, enum pool_cli_level level)
{
	struct pool_os_stats os;
	struct dump_args a;
	struct dump_snapshot s;
	size_t matched;
	int limited = 0, werr;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	if (parse_args(out, args, &a) < 0) {
		errno = EINVAL;
		return -1;
	}
	a.addresses = level >= POOL_CLI_ADMIN;
	memset(&s, 0, sizeof(s));
	s.args = &a;
	pool_for_each(snapshot_one, &s);
	/* the profile's view first, outside the pool list lock (it takes it itself) */
	if (a.detailed && !s.failed)
		s.profile = pool__profile_view_make(a.addresses);
	if (s.failed) {
		free_snapshot(&s);
		fputs("Not enough memory to dump the pools.\n", out);
		errno = ENOMEM;
		return -1;
	}
	if (s.n < 2)
		;   /* nothing to sort (and qsort() must not get a NULL array) */
	else if (a.sort == SORT_NAME)
		qsort(s.e, s.n, sizeof(*s.e), cmp_name);
	else if (a.sort == SORT_SIZE)
		qsort(s.e, s.n, sizeof(*s.e), cmp_size);
	else if (a.sort == SORT_USAGE)
		qsort(s.e, s.n, sizeof(*s.e), cmp_usage);
	matched = s.n;
	if (a.max && s.n > a.max) {
		size_t i;

		for (i = a.max; i < s.n; i++)
			free(s.e[i].creators);
		s.n = a.max;
		limited = 1;
	}
	errno = 0;
	if (a.format == POOL_FORMAT_JSON) {
		pool_get_os_stats(&os, sizeof(os));
		print_json(out, &s, limited, matched, &os);
	} else if (a.format == POOL_FORMAT_PROMETHEUS) {
		pool_get_os_stats(&os, sizeof(os));
		print_prometheus(out, &s, &os);
	} else {
		print_text(out, &s, limited);
	}
	fflush(out);
	werr = errno;
	free_snapshot(&s);
	/* what named `detailed`'s callers and sites stays only for a running profile's views */
	if (a.detailed && !(POOL__DEBUGGING() & POOL_DBG_PROFILE))
		pool__sym_release();
	if (ferror(out)) {
		errno = werr ? werr : EIO;
		return -1;
	}
	return 0;
}

POOL_API int pool_dump(FILE *out, const char *args)
{
	return pool__dump(out, args, POOL_CLI_ADMIN);
}

int pool__dump_args_check(FILE *out, const char *args)
{
	struct dump_args a;

	return parse_args(out, args, &a);
}

/* The reports at exit are read here, so that a static link that has `pools show` has them. */
__attribute__((constructor(102))) static void reports_at_exit_init(void)
{
	/* this order: the statistics print first at exit, then the leak report (atexit(), LIFO) */
	pool__leak_report_init();
	pool__stats_on_exit_init(pool__dump_args_check, pool__dump);
}
