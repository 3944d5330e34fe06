/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's outputs and its command: `pools profile` in text, JSON and Prometheus, its part
 * of `pools show detailed`, `pools profile on|off`, pool_profile_start(), pool_profile_stop()
 * and pool_profile_dump(). What they print comes from a view (pool-profile-view.c, which says
 * how the figures are estimated); the formats of users' tools, the heap profile of jeprof and
 * pprof and folded stacks, are written by pool-profile-heap.c. Each site is a call stack: the
 * text names its frames one per line, the JSON gives them as an array, Prometheus labels a
 * series with its first frame and the stack's functions. Every format is documented in
 * doc/pools-show.md, "pools profile".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/pool-util.h"
#include "debug/pool-debug.h"
#include "core/pool-int.h"
#include "debug/pool-profile.h"
#include "introspect/pool-args.h"
#include "introspect/pool-profile-dump.h"
#include "introspect/pool-profile-heap.h"
#include "debug/pool-stack.h"
#include "debug/pool-symbols.h"
#include "introspect/pool-text.h"

#define PROFILE_ON_USAGE "pools profile on [rate <bytes>] [depth <frames>] [pool <name>]... " \
                         "| pools profile off"
#define CHOSEN_MAX 16                   /* pools `pools profile on` may name (a bit each) */
#define CHOSEN_MAX_STR "16"
#define DEPTH_MAX_STR "64"
_Static_assert(POOL_STACK_DEPTH_MAX == 64, "DEPTH_MAX_STR");
_Static_assert(CHOSEN_MAX == 16 && CHOSEN_MAX <= 32, "CHOSEN_MAX_STR, struct choice.found");

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                  */
/* ------------------------------------------------------------------------------------------ */

enum prof_sort { PSORT_BYTES = 0, PSORT_SITE, PSORT_POOL, PSORT_AGE };
/* What each word of `pools profile` sets (group 0 is the formats', pool-args.h). */
enum prof_group { PG_SORT = 1, PG_POOL };

struct prof_args {
	enum prof_sort sort;
	enum pool_format format;
	const char *pool;               /* a pool name, or NULL */
	size_t pool_len;
	size_t max;                     /* 0: every site */
};

static const struct pool_word prof_words[] = {
	{ "bysite", PG_SORT, PSORT_SITE },
	{ "bypool", PG_SORT, PSORT_POOL },
	{ "byage", PG_SORT, PSORT_AGE },
	{ "bybytes", PG_SORT, PSORT_BYTES },
	{ "pool", PG_POOL, 1 },
};

const struct pool_args_spec pool__profile_args = {
	.command = "pools profile",
	.also = PROFILE_ON_USAGE,
	.words = prof_words,
	.nwords = sizeof(prof_words) / sizeof(prof_words[0]),
	.formats = POOL_FORMAT_BIT(POOL_FORMAT_JSON) | POOL_FORMAT_BIT(POOL_FORMAT_PROMETHEUS) |
	           POOL_FORMAT_BIT(POOL_FORMAT_HEAP) | POOL_FORMAT_BIT(POOL_FORMAT_FOLDED),
	.counted = "sites",
	.count = "<n>",
	.takes = { [PG_POOL] = "<name>" },
	.takes_what = { [PG_POOL] = "a pool name" },
};
_Static_assert(PG_POOL < POOL_ARGS_GROUPS, "POOL_ARGS_GROUPS");

static int prof_error(FILE *out, const char *pre, const char *w, size_t len, const char *post)
{
	pool__word_error(out, pre, w, len, post);
	errno = EINVAL;
	return -1;
}

/* The view's arguments: 0, or -1 with errno EINVAL and one error line in `out`. */
static int parse_view_args(FILE *out, const char *p, struct prof_args *a)
{
	struct pool_args pa;

	memset(a, 0, sizeof(*a));
	if (pool__args_parse(out, p, &pool__profile_args, &pa) < 0)
		return -1;
	a->sort = (enum prof_sort)pa.value[PG_SORT];
	a->format = pa.format;
	a->pool = pa.arg[PG_POOL];
	a->pool_len = pa.arg_len[PG_POOL];
	a->max = pa.max;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Output                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static int cmp_bytes(const struct pool_view_site *x, const struct pool_view_site *y)
{
	int c;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->row.samples != y->row.samples)
		return x->row.samples > y->row.samples ? -1 : 1;
	c = strcmp(x->sym, y->sym);
	if (c)
		return c;
	/* the same first frame, other stacks: the order they were first sampled in */
	return x->row.stack < y->row.stack ? -1 : x->row.stack > y->row.stack;
}

static int cmp_site(const struct pool_view_site *x, const struct pool_view_site *y, enum prof_sort sort)
{
	int c;

	switch (sort) {
	case PSORT_SITE:
		c = strcmp(x->sym, y->sym);
		return c ? c : strcmp(x->row.name, y->row.name);
	case PSORT_POOL:
		c = strcmp(x->row.name, y->row.name);
		return c ? c : cmp_bytes(x, y);
	case PSORT_AGE:
		if (x->row.age_max_ms != y->row.age_max_ms)
			return x->row.age_max_ms > y->row.age_max_ms ? -1 : 1;
		return cmp_bytes(x, y);
	case PSORT_BYTES:
		break;
	}
	return cmp_bytes(x, y);
}

/* qsort_r() comparator (glibc's argument order), `arg` the struct prof_args. */
static int cmp_site_ptr(const void *a, const void *b, void *arg)
{
	return cmp_site(*(const struct pool_view_site *const *)a, *(const struct pool_view_site *const *)b,
	                ((const struct prof_args *)arg)->sort);
}

static uint64_t now_ms(void)
{
	return pool__clock_ns(CLOCK_MONOTONIC) / 1000000u;
}

static uint64_t since_ms(const struct pool_profile_view *v)
{
	uint64_t start = v->sum.start_ns / 1000000u, now = now_ms();

	return v->sum.start_ns && now > start ? now - start : 0;
}

/* Is w[0..len) a name of pool `p`, its own or another creator's? */
static int view_pool_named(const struct pool_view_pool *p, const char *w, size_t len)
{
	const char *n;

	if (pool__word_is(w, len, p->name))
		return 1;
	for (n = p->aliases; n && *n; n += strlen(n) + 1)
		if (pool__word_is(w, len, n))
			return 1;
	return 0;
}

/* Does the view have a pool named p[0..len)? */
static int view_has_pool(const struct pool_profile_view *v, const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < v->npools; i++)
		if (view_pool_named(&v->pools[i], p, len))
			return 1;
	return 0;
}

/* Does site `s` pass the filter (a pool name)? */
static int wanted(const struct prof_args *a, const struct pool_view_site *s)
{
	return !a->pool || (s->pool && view_pool_named(s->pool, a->pool, a->pool_len));
}

static void text_header(FILE *out, const struct pool_profile_view *v)
{
	const struct pool_prof_summary *sum = &v->sum;

	if (!sum->gen)
		fputs("Profile never started ('pools profile on', pool_profile_start(), "
		      "POOL_DEBUG=profile).\n", out);
	else
		fprintf(out, "Profile %s, %s %" PRIu64 " ms: one sample per about %zu bytes "
		        "allocated per thread%s, stacks of up to %u frames; %" PRIu64 " sampled, %"
		        PRIu64 " seen freed, %" PRIu64 " live, %" PRIu64 " dropped (%u records at "
		        "most), %" PRIu64 " forgotten; %u stacks (%" PRIu64 " not stored).\n",
		        v->on ? "on" : "off", v->on ? "started" : "ran for", since_ms(v), sum->rate,
		        sum->chosen ? " in the pools chosen" : "", sum->depth, sum->samples,
		        sum->freed, sum->live, sum->dropped, POOL_PROF_RECORDS, sum->forgotten,
		        sum->stacks, sum->stacks_refused);
}

void pool__profile_site_lines(FILE *out, const struct pool_profile_view *v,
                              const struct pool_view_site *s, const char *indent, int first)
{
	const struct pool_sym *f[POOL_VIEW_FRAMES_MAX];
	uintptr_t pcs[POOL_VIEW_FRAMES_MAX];
	size_t n = pool__profile_site_frames(v, s, f, pcs, POOL_VIEW_FRAMES_MAX), i;
	char name[320];

	for (i = first ? 0 : 1; i < n; i++) {
		pool__sym_format(name, sizeof(name), f[i], 0);
		fprintf(out, "%s<- %s", indent, name);
		/* an inlined frame's address is that of the next frame: print it once, there */
		if (v->addresses && !f[i]->inlined)
			fprintf(out, " (%#" PRIxPTR ")", pcs[i]);
		fputc('\n', out);
	}
}

/* The address of a site's first frame, when the session may see addresses; else 0. */
static uintptr_t first_address(const struct pool_profile_view *v, const struct pool_view_site *s)
{
	return v->addresses && s->row.depth ? s->row.frames[0] : 0;
}

static void print_text(FILE *out, const struct pool_profile_view *v, struct pool_view_site **list,
                       size_t n, size_t matched)
{
	size_t i;

	text_header(out, v);
	fprintf(out, "Live bytes by site, a site a call stack%s (~: estimated from samples; exact "
	        "under caller debugging or with every allocation sampled):\n",
	        n < matched ? " (limited)" : "");
	fprintf(out, "  %14s %12s %9s %9s %9s  %-17s %-16s %s\n", "bytes", "objects", "samples",
	        "freed", "live", "age ms min/avg/max", "pool", "site");
	for (i = 0; i < n; i++) {
		const struct pool_view_site *s = list[i];
		char age[48], bytes[24], objs[24];

		snprintf(age, sizeof(age), "%" PRIu64 "/%" PRIu64 "/%" PRIu64, s->row.age_min_ms,
		         pool__profile_age_avg(s), s->row.age_max_ms);
		snprintf(bytes, sizeof(bytes), "%s%" PRIu64, s->exact ? "" : "~", s->bytes);
		snprintf(objs, sizeof(objs), "%s%" PRIu64, s->exact ? "" : "~", s->objects);
		fprintf(out, "  %14s %12s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "  %-17s %-16s %s",
		        bytes, objs, s->row.samples, s->row.freed, s->row.live,
		        s->row.live ? age : "-", s->pool ? s->row.name : "-", s->sym);
		if (first_address(v, s))
			fprintf(out, " (%#" PRIxPTR ")", first_address(v, s));
		fputc('\n', out);
		pool__profile_site_lines(out, v, s, "        ", 0);
	}
}

/* The frames of a site as a JSON array of objects. */
static void json_stack(FILE *out, const struct pool_profile_view *v,
                       const struct pool_view_site *s)
{
	const struct pool_sym *f[POOL_VIEW_FRAMES_MAX];
	uintptr_t pcs[POOL_VIEW_FRAMES_MAX];
	size_t n = pool__profile_site_frames(v, s, f, pcs, POOL_VIEW_FRAMES_MAX), i;
	char name[320];

	fputs(", \"stack\": [", out);
	for (i = 0; i < n; i++) {
		pool__sym_format(name, sizeof(name), f[i], 0);
		fputs(i ? ", {\"name\": " : "{\"name\": ", out);
		pool_json_write_string(out, name);
		fputs(", \"function\": ", out);
		pool__sym_format(name, sizeof(name), f[i], POOL_SYM_FUNCTION);
		pool_json_write_string(out, name);
		if (f[i]->file[0] && f[i]->line) {
			fputs(", \"file\": ", out);
			pool_json_write_string(out, f[i]->file);
			fprintf(out, ", \"line\": %u", f[i]->line);
		}
		fprintf(out, ", \"inlined\": %s", f[i]->inlined ? "true" : "false");
		if (v->addresses)
			fprintf(out, ", \"address\": \"%#" PRIxPTR "\"", pcs[i]);
		fputc('}', out);
	}
	fputc(']', out);
}

/*
 * A site's figures, metric rows (pool-args.h) of a struct pool_view_site: its JSON keys in the
 * order of the JSON, five of them Prometheus families too (site_families[] gives their order).
 */
#define SITE_GETTER(fn, expr) \
	static uint64_t fn(const void *of) \
	{ \
		const struct pool_view_site *s = of; \
		return (uint64_t)(expr); \
	}

SITE_GETTER(site_size, s->row.size)
SITE_GETTER(site_stride, s->pool ? s->pool->stride : 0)
SITE_GETTER(site_samples, s->row.samples)
SITE_GETTER(site_freed, s->row.freed)
SITE_GETTER(site_live, s->row.live)
SITE_GETTER(site_objects, s->objects)
SITE_GETTER(site_bytes, s->bytes)
SITE_GETTER(site_exact, s->exact)
SITE_GETTER(site_age_min, s->row.age_min_ms)
SITE_GETTER(site_age_avg, pool__profile_age_avg(s))
SITE_GETTER(site_age_max, s->row.age_max_ms)
SITE_GETTER(site_allocated, pool__profile_site_allocated(s))

static double site_weight(const void *of)
{
	return ((const struct pool_view_site *)of)->row.weight;
}

enum {
	SITE_SIZE, SITE_STRIDE, SITE_SAMPLES, SITE_FREED, SITE_LIVE, SITE_WEIGHT, SITE_OBJECTS,
	SITE_BYTES, SITE_EXACT, SITE_AGE_MIN, SITE_AGE_AVG, SITE_AGE_MAX, SITE_ALLOCATED,
	SITE_METRICS
};

static const struct pool_metric site_metrics[] = {
	[SITE_SIZE] = POOL_GAUGE("size", NULL, NULL, site_size),
	[SITE_STRIDE] = POOL_GAUGE("stride", NULL, NULL, site_stride),
	[SITE_SAMPLES] = POOL_COUNTER("samples", "libpool_profile_samples_total",
	                              "Allocations the profile sampled at a site since it started.",
	                              site_samples),
	[SITE_FREED] = POOL_COUNTER("freed", "libpool_profile_freed_total",
	                            "Sampled allocations seen freed, credited to the site that "
	                            "made them.", site_freed),
	[SITE_LIVE] = POOL_GAUGE("live_samples", "libpool_profile_live_samples",
	                         "Live samples of a pool at a site.", site_live),
	[SITE_WEIGHT] = { "weight", NULL, POOL_METRIC_GAUGE, NULL, NULL, POOL_JSON_TENTHS,
	                  site_weight },
	[SITE_OBJECTS] = POOL_GAUGE("live_objects", "libpool_profile_live_objects",
	                            "Objects of a pool allocated at a site and in use, as "
	                            "libpool_profile_live_bytes.", site_objects),
	[SITE_BYTES] = POOL_GAUGE("live_bytes", "libpool_profile_live_bytes",
	                          "Bytes (objects times stride) held by objects of a pool "
	                          "allocated at a site: estimated from the profile's samples, "
	                          "exact under caller debugging.", site_bytes),
	[SITE_EXACT] = { "exact", NULL, POOL_METRIC_GAUGE, NULL, site_exact, POOL_JSON_BOOL,
	                 NULL },
	[SITE_AGE_MIN] = POOL_GAUGE("age_min_ms", NULL, NULL, site_age_min),
	[SITE_AGE_AVG] = POOL_GAUGE("age_avg_ms", NULL, NULL, site_age_avg),
	[SITE_AGE_MAX] = POOL_GAUGE("age_max_ms", NULL, NULL, site_age_max),
	[SITE_ALLOCATED] = POOL_GAUGE("allocated_objects", NULL, NULL, site_allocated),
};
_Static_assert(sizeof(site_metrics) / sizeof(site_metrics[0]) == SITE_METRICS, "a row each");

/* The Prometheus families of a site, in the order `pools profile prometheus` prints them. */
static const unsigned char site_families[] = {
	SITE_BYTES, SITE_OBJECTS, SITE_LIVE, SITE_SAMPLES, SITE_FREED
};

void pool__profile_site_json(FILE *out, const struct pool_profile_view *v,
                             const struct pool_view_site *s)
{
	fputs("{\"pool\": ", out);
	pool_json_write_string(out, s->pool ? s->row.name : "");
	fputs(", \"site\": ", out);
	pool_json_write_string(out, s->sym);
	fprintf(out, ", \"key\": \"%016" PRIx64 "\"", s->key);
	if (first_address(v, s))
		fprintf(out, ", \"address\": \"%#" PRIxPTR "\"", first_address(v, s));
	json_stack(out, v, s);
	pool__metrics_json(out, site_metrics, SITE_METRICS, s);
	fputc('}', out);
}

/* The profile's own figures, metric rows of a view, after "on" (written first, by hand). */
#define VIEW_GETTER(fn, expr) \
	static uint64_t fn(const void *of) \
	{ \
		const struct pool_profile_view *v = of; \
		(void)v; \
		return (uint64_t)(expr); \
	}

VIEW_GETTER(view_started, v->sum.gen)
VIEW_GETTER(view_rate, v->sum.rate)
VIEW_GETTER(view_chosen, v->sum.chosen)
VIEW_GETTER(view_depth, v->sum.depth)
VIEW_GETTER(view_since, since_ms(v))
VIEW_GETTER(view_samples, v->sum.samples)
VIEW_GETTER(view_freed, v->sum.freed)
VIEW_GETTER(view_live, v->sum.live)
VIEW_GETTER(view_dropped, v->sum.dropped)
VIEW_GETTER(view_forgotten, v->sum.forgotten)
VIEW_GETTER(view_stacks, v->sum.stacks)
VIEW_GETTER(view_stacks_refused, v->sum.stacks_refused)
VIEW_GETTER(view_records_max, POOL_PROF_RECORDS)
VIEW_GETTER(view_sites_max, POOL_PROF_SITES)
VIEW_GETTER(view_stacks_max, POOL_STACK_SLOTS - 1)
VIEW_GETTER(view_frames_max, POOL_STACK_FRAMES)
VIEW_GETTER(view_table_bytes, pool__prof_table_bytes())

enum { VIEW_DROPPED = 8 };

static const struct pool_metric view_metrics[] = {
	{ "started", NULL, POOL_METRIC_GAUGE, NULL, view_started, POOL_JSON_BOOL, NULL },
	POOL_GAUGE("rate", NULL, NULL, view_rate),
	{ "chosen_pools", NULL, POOL_METRIC_GAUGE, NULL, view_chosen, POOL_JSON_BOOL, NULL },
	POOL_GAUGE("depth", NULL, NULL, view_depth),
	POOL_GAUGE("since_ms", NULL, NULL, view_since),
	POOL_COUNTER("samples", NULL, NULL, view_samples),
	POOL_COUNTER("freed", NULL, NULL, view_freed),
	POOL_GAUGE("live", NULL, NULL, view_live),
	[VIEW_DROPPED] = POOL_COUNTER("dropped", "libpool_profile_dropped_total",
	                              "Samples not remembered: the profile's table was full.",
	                              view_dropped),
	POOL_COUNTER("forgotten", NULL, NULL, view_forgotten),
	POOL_GAUGE("stacks", NULL, NULL, view_stacks),
	POOL_COUNTER("stacks_refused", NULL, NULL, view_stacks_refused),
	POOL_GAUGE("records_max", NULL, NULL, view_records_max),
	POOL_GAUGE("sites_max", NULL, NULL, view_sites_max),
	POOL_GAUGE("stacks_max", NULL, NULL, view_stacks_max),
	POOL_GAUGE("frames_max", NULL, NULL, view_frames_max),
	POOL_GAUGE("table_bytes", NULL, NULL, view_table_bytes),
};

static void print_json(FILE *out, const struct pool_profile_view *v,
                       const struct prof_args *a, struct pool_view_site **list, size_t n,
                       size_t matched)
{
	size_t i;

	fprintf(out, "{\"format\": 1,\n \"profile\": {\"on\": %s", v->on ? "true" : "false");
	pool__metrics_json(out, view_metrics, sizeof(view_metrics) / sizeof(view_metrics[0]), v);
	fputs("},\n \"sites\": [", out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		pool__profile_site_json(out, v, list[i]);
	}
	fprintf(out, "%s],\n \"matched\": %zu, \"limited\": %s,\n \"pools\": [", n ? "\n " : "",
	        matched, n < matched ? "true" : "false");
	for (i = 0, n = 0; i < v->npools; i++) {
		const struct pool_view_pool *p = &v->pools[i];

		if (a->pool && !view_pool_named(p, a->pool, a->pool_len))
			continue;
		fputs(n++ ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		pool_json_write_string(out, p->name);
		fprintf(out, ", \"in_use\": %" PRIu64 ", \"in_use_bytes\": %" PRIu64
		        ", \"live_samples\": %" PRIu64 ", \"exact\": %s}", p->in_use,
		        p->in_use * p->stride, p->live, p->exact || p->sampled_all ? "true" : "false");
	}
	fprintf(out, "%s]}\n", n ? "\n " : "");
}

/*
 * A site's labels: its pool, its stack's key (the series' identity with the pool), its first
 * frame, and its stack (functions, root first).
 */
static void prom_labels(FILE *out, const struct pool_profile_view *v,
                        const struct pool_view_site *s, char *stack, size_t len)
{
	fputs("{pool=\"", out);
	pool__prom_label(out, s->pool ? s->row.name : "");
	fprintf(out, "\",key=\"%016" PRIx64 "\",site=\"", s->key);
	pool__prom_label(out, s->sym);
	fputs("\",stack=\"", out);
	pool__profile_folded(stack, len, v, s, POOL_FOLD_OFFSETS);
	pool__prom_label(out, stack);
	fputs("\"}", out);
}

static int print_prometheus(FILE *out, const struct pool_profile_view *v,
                            struct pool_view_site **list, size_t n)
{
	char *stack = pool__cli_malloc(POOL_FOLD_MAX);
	size_t f, i;

	if (!stack) {
		fputs("Not enough memory for the profile.\n", out);
		return -1;
	}
	pool__prom_family(out, "libpool_profile_info", "gauge", "The allocation-site profile: "
	                  "on (1) or off (0), and its mean bytes between two samples of a thread.");
	fprintf(out, "libpool_profile_info{rate=\"%zu\"} %d\n", v->sum.rate, v->on);
	pool__metric_family(out, &view_metrics[VIEW_DROPPED]);
	pool__metric_sample(out, &view_metrics[VIEW_DROPPED], v);
	for (f = 0; f < sizeof(site_families); f++) {
		const struct pool_metric *m = &site_metrics[site_families[f]];

		pool__metric_family(out, m);
		for (i = 0; i < n; i++) {
			fputs(m->name, out);
			prom_labels(out, v, list[i], stack, POOL_FOLD_MAX);
			pool__metric_value(out, m, list[i]);
		}
	}
	free(stack);
	return 0;
}

/* The view's sites that pass the filter, sorted and cut: a malloc()ed array (*n of them). */
static struct pool_view_site **select_sites(struct pool_profile_view *v, const struct prof_args *a,
                                       size_t *n, size_t *matched)
{
	struct pool_view_site **list = pool__cli_malloc((v->nsites ? v->nsites : 1) * sizeof(*list));
	size_t i, k = 0;

	if (!list)
		return NULL;
	for (i = 0; i < v->nsites; i++)
		if (wanted(a, &v->sites[i]))
			list[k++] = &v->sites[i];
	if (k > 1)
		qsort_r(list, k, sizeof(*list), cmp_site_ptr, (void *)a);
	*matched = k;
	*n = a->max && k > a->max ? a->max : k;
	return list;
}

static int view_out(FILE *out, struct pool_profile_view *v, const struct prof_args *a)
{
	struct pool_view_site **list;
	size_t n, matched;
	int ret = 0;

	if (a->pool && !view_has_pool(v, a->pool, a->pool_len)) {
		pool__word_error(out, "No pool named '", a->pool, a->pool_len,
		                 "'. Try 'pools show'.\n");
		errno = ENOENT;
		return -1;
	}
	list = select_sites(v, a, &n, &matched);
	if (!list) {
		fputs("Not enough memory for the profile.\n", out);
		errno = ENOMEM;
		return -1;
	}
	if (a->format == POOL_FORMAT_JSON)
		print_json(out, v, a, list, n, matched);
	else if (a->format == POOL_FORMAT_PROMETHEUS)
		ret = print_prometheus(out, v, list, n);
	else if (a->format == POOL_FORMAT_HEAP)
		ret = pool__profile_write_heap(out, v, list, n);
	else if (a->format == POOL_FORMAT_FOLDED)
		ret = pool__profile_write_folded(out, v, list, n);
	else
		print_text(out, v, list, n, matched);
	free(list);
	return ret;
}

/*
 * Run `pools profile` view arguments `args` into `out` for a session of `level` (code addresses
 * at admin only), flushed; 0 or -1 with errno.
 */
static int profile_view(FILE *out, const char *args, enum pool_cli_level level)
{
	struct pool_profile_view *v;
	struct prof_args a;
	int ret, verr, werr;

	if (parse_view_args(out, args, &a) < 0)
		return -1;
	/* the heap profile is code addresses and the process's mappings: admin's only */
	if (a.format == POOL_FORMAT_HEAP && level < POOL_CLI_ADMIN) {
		fprintf(out, "Permission denied: 'pools profile heap' needs level admin; this "
		        "session is %s.\n", level == POOL_CLI_USER ? "user" : "operator");
		errno = EACCES;
		return -1;
	}
	/* jeprof and pprof name the heap profile's addresses themselves */
	v = pool__profile_view_make_named(level >= POOL_CLI_ADMIN, a.format != POOL_FORMAT_HEAP);
	if (!v) {
		fputs("Not enough memory for the profile.\n", out);
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	ret = view_out(out, v, &a);
	verr = errno;
	/* a buffered stream's failed write is often the flush's: its errno is the one to give */
	fflush(out);
	werr = errno;
	pool__profile_view_free(v);
	/* libdw's tables stay for the next view of a running profile, else they go */
	if (!(POOL__DEBUGGING() & POOL_DBG_PROFILE))
		pool__sym_release();
	if (ret < 0) {
		errno = verr;
		return -1;
	}
	if (ferror(out)) {
		errno = werr ? werr : EIO;
		return -1;
	}
	return 0;
}

void pool__profile_view_pool(FILE *out, const struct pool_profile_view *v, const void *pool,
                             int json, size_t max)
{
	size_t i, k = 0;
	struct pool_view_site *best[8];

	if (max > sizeof(best) / sizeof(best[0]))
		max = sizeof(best) / sizeof(best[0]);
	/* a profile that never ran has nothing to add to `pools show detailed` */
	if (v && !v->sum.gen)
		v = NULL;
	/* the `max` sites of the pool with the most bytes, best first */
	for (i = 0; v && i < v->nsites; i++) {
		struct pool_view_site *s = &v->sites[i];
		size_t j;

		if (!s->pool || s->pool->addr != (uintptr_t)pool || (!s->bytes && !s->row.live))
			continue;
		if (k < max)
			j = k++;
		else if (max && cmp_site(s, best[max - 1], PSORT_BYTES) < 0)
			j = max - 1;
		else
			continue;
		for (; j > 0 && cmp_site(s, best[j - 1], PSORT_BYTES) < 0; j--)
			best[j] = best[j - 1];
		best[j] = s;
	}
	if (json)
		fputc('[', out);
	for (i = 0; i < k; i++) {
		const struct pool_view_site *s = best[i];

		if (json) {
			fputs(i ? ", " : "", out);
			pool__profile_site_json(out, v, s);
			continue;
		}
		fprintf(out, "      profile: %s%" PRIu64 " bytes, %s%" PRIu64 " objects (%" PRIu64
		        " live sample%s) by %s", s->exact ? "" : "~", s->bytes, s->exact ? "" : "~",
		        s->objects, s->row.live, s->row.live == 1 ? "" : "s", s->sym);
		if (first_address(v, s))
			fprintf(out, " (%#" PRIxPTR ")", first_address(v, s));
		fputc('\n', out);
		pool__profile_site_lines(out, v, s, "               ", 0);
	}
	if (json)
		fputc(']', out);
}

/* ------------------------------------------------------------------------------------------ */
/* The command and the API                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* What `pools profile on` asks for. */
struct on_args {
	size_t rate;                    /* bytes, 0: the default */
	unsigned int depth;             /* frames, 0: the default */
	const char *pool[CHOSEN_MAX];   /* the pools chosen (none: every pool) */
	size_t pool_len[CHOSEN_MAX];
	unsigned int npools;
};

struct choice {
	const struct on_args *a;
	unsigned int token;
	unsigned int found;             /* a bit per name that named a pool */
};

/* pool_for_each() callback: the pools of the names chosen get the token. */
static int choose_pool(struct pool_head *pool, void *arg)
{
	struct choice *c = arg;
	unsigned int i;

	for (i = 0; i < c->a->npools; i++)
		if (pool__pool_named(pool, c->a->pool[i], c->a->pool_len[i], 0)) {
			pool__prof_choose(pool, c->token);
			c->found |= 1u << i;
		}
	return 0;
}

/*
 * Start a new profile as `a` asks (NULL: every pool, the default depth) or stop it: 0, or -1
 * with errno (EINVAL; ENOENT: a name of no pool, whose index is then in *bad).
 */
static int profile_switch(int on, const struct on_args *a, FILE *errout, unsigned int *bad)
{
	size_t rate = a && a->rate ? a->rate : POOL_PROFILE_RATE_DEF;
	char opt[48], *err = NULL;
	int was_on = (POOL__DEBUGGING() & POOL_DBG_PROFILE) != 0;

	if (on && rate > POOL_PROFILE_RATE_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (on) {
		struct choice c = { a, 0, 0 };

		if (a && a->npools) {
			c.token = pool__prof_choose_begin();
			pool_for_each(choose_pool, &c);
			if (c.found != (1u << a->npools) - 1u) {
				for (*bad = 0; c.found & (1u << *bad); ++*bad)
					;
				errno = ENOENT;
				return -1;
			}
		}
		pool__prof_choose_end(c.token);
		pool__stack_set_depth(a && a->depth ? a->depth : POOL_STACK_DEPTH_DEF);
		snprintf(opt, sizeof(opt), "profile=%zu", rate);
	} else {
		snprintf(opt, sizeof(opt), "no-profile");
	}
	/* a profile already on at that rate is not restarted by the flags: restart it here */
	if (on && was_on && pool__debug_profile_rate() == rate)
		pool__prof_reset(pool__debug_profile_rate());
	if (pool__parse_debugging(opt, &err, errout, 1) < 0) {
		free(err);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

POOL_API int pool_profile_start(size_t rate_bytes)
{
	struct on_args a;
	unsigned int bad;

	memset(&a, 0, sizeof(a));
	a.rate = rate_bytes;
	return profile_switch(1, &a, NULL, &bad);
}

POOL_API void pool_profile_stop(void)
{
	profile_switch(0, NULL, NULL, NULL);
}

POOL_API int pool_profile_dump(FILE *out, const char *args)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
	return profile_view(out, args ? args : "", POOL_CLI_ADMIN);
}

/* The words after `pools profile on`: 0, or -1 with errno EINVAL and one error line. */
static int parse_on_args(FILE *out, const char *p, struct on_args *a)
{
	unsigned long long v;
	const char *w, *x;
	size_t len, xlen;

	memset(a, 0, sizeof(*a));
	while ((w = pool__next_word(&p, &len))) {
		x = pool__next_word(&p, &xlen);
		if (pool__word_is(w, len, "rate")) {
			/* 0 is the default rate, as pool_profile_start(0) */
			if (!x || pool__parse_decimal(x, xlen, 1, POOL_PROFILE_RATE_MAX, &v) < 0)
				return prof_error(out, "Invalid rate '", x ? x : "", x ? xlen : 0,
				                  "' in 'pools profile on rate <bytes>' (expected 0 for "
				                  "the default or 1 to 2^40 bytes, with k, m or g). Try "
				                  "'help'.\n");
			a->rate = (size_t)v;
		} else if (pool__word_is(w, len, "depth")) {
			if (!x || pool__parse_decimal(x, xlen, 0, POOL_STACK_DEPTH_MAX, &v) < 0 || !v)
				return prof_error(out, "Invalid depth '", x ? x : "", x ? xlen : 0,
				                  "' in 'pools profile on depth <frames>' (expected 1 to "
				                  DEPTH_MAX_STR " frames). Try 'help'.\n");
			a->depth = (unsigned int)v;
		} else if (pool__word_is(w, len, "pool")) {
			if (!x)
				return prof_error(out, "Option 'pool' needs a pool name in 'pools "
				                  "profile on'. Try 'help'.\n", "", 0, "");
			if (a->npools == CHOSEN_MAX)
				return prof_error(out, "Too many pools in 'pools profile on' (", "", 0,
				                  CHOSEN_MAX_STR " at most). Try 'help'.\n");
			a->pool[a->npools] = x;
			a->pool_len[a->npools++] = xlen;
		} else {
			return prof_error(out, "Unknown option '", w, len, "' (expected "
			                  PROFILE_ON_USAGE "). Try 'help'.\n");
		}
	}
	return 0;
}

int pool__profile_cli(FILE *out, const char *args, enum pool_cli_level level)
{
	const char *p = args, *w;
	size_t len;

	w = pool__next_word(&p, &len);
	if (w && (pool__word_is(w, len, "on") || pool__word_is(w, len, "off"))) {
		int on = len == 2;
		struct on_args a;
		unsigned int bad = 0, i;

		if (level < POOL_CLI_ADMIN) {
			fprintf(out, "Permission denied: 'pools profile %s' needs level admin; this "
			        "session is %s.\n", on ? "on" : "off",
			        level == POOL_CLI_USER ? "user" : "operator");
			errno = EACCES;
			return -1;
		}
		if (on && parse_on_args(out, p, &a) < 0)
			return -1;
		if (!on && (w = pool__next_word(&p, &len)))
			return prof_error(out, "Unknown option '", w, len, "' (expected "
			                  PROFILE_ON_USAGE "). Try 'help'.\n");
		if (profile_switch(on, on ? &a : NULL, out, &bad) < 0) {
			if (errno == ENOENT) {
				pool__word_error(out, "No pool named '", a.pool[bad], a.pool_len[bad],
				                 "'. Try 'pools show'.\n");
				return -1;
			}
			fputs("The profile could not change.\n", out);
			return -1;
		}
		if (!on) {
			fputs("Profile off: its figures stay for 'pools profile' until the next "
			      "'pools profile on'.\n", out);
			return 0;
		}
		fprintf(out, "Profile on: one sample per about %zu bytes allocated per thread, "
		        "stacks of up to %u frames", pool__debug_profile_rate(), pool__stack_depth());
		for (i = 0; i < a.npools; i++) {
			fputs(i ? ", " : "; pools ", out);
			fwrite(a.pool[i], 1, a.pool_len[i], out);
		}
		fputs(a.npools ? " only.\n" : ".\n", out);
		return 0;
	}
	return profile_view(out, args, level);
}

struct pool_view_site **pool__profile_pool_sites(struct pool_profile_view *v,
                                                 const struct pool_view_pool *p, size_t *n)
{
	struct prof_args a;
	struct pool_view_site **list;
	size_t i, k = 0, matched;

	memset(&a, 0, sizeof(a));
	a.pool = p->name;
	a.pool_len = strlen(p->name);
	list = select_sites(v, &a, n, &matched);
	if (!list)
		return NULL;
	for (i = 0; i < *n; i++)
		if (list[i]->pool == p && list[i]->objects)
			list[k++] = list[i];
	*n = k;
	return list;
}
