/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's outputs: `pools profile` (text, JSON, Prometheus), its part of `pools show
 * detailed`, pool_profile_start(), pool_profile_stop() and pool_profile_dump(); the views the
 * leak report at exit uses (POOL_LEAK_REPORT, src/introspect/pool-leak-report.c).
 *
 * How a view is made (pool__profile_view_make())
 *
 * 1. Audit. Every sampled object lying free in a thread cache is credited first
 *    (pool__profile_audit()), so that no cached object is counted as in use by its site.
 * 2. Pools. For each pool, under the pool list lock: its name, sizes, its exact count of
 *    objects in use (struct pool_stats used - cached: handed out to the program), and under
 *    `caller` debugging a copy of its table of live objects per caller.
 * 3. Rows. A snapshot of the profile's (site, pool) rows with the ages of their live samples.
 * 4. Estimates. A pool's objects in use are shared among its sites in proportion to their live
 *    samples (all samples of a pool stand for the same number of objects, its size being one):
 *    the figures of a pool add up to its exact count, and only their split among its sites is
 *    estimated. What no sample explains (a pool in use with no live sample) is the pool's
 *    "[unsampled]" row. Under `caller` debugging the split is exact: each object carries its
 *    allocating caller, and the pool's table counts them (up to POOL_CALLER_SLOTS callers;
 *    objects of callers past it are "[unsampled]" too).
 * Byte figures are objects times the stride, as in `pools show`. The format of every output is
 * documented in doc/pools-show.md, "pools profile".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "debug/pool-debug.h"
#include "core/pool-int.h"
#include "debug/pool-profile.h"
#include "introspect/pool-profile-dump.h"
#include "debug/pool-report.h"
#include "introspect/pool-text.h"

#define PROFILE_USAGE "pools profile [bysite|bypool|byage|bybytes] [pool <name>] [<n>] " \
                      "[json|prometheus]"
#define PROFILE_ON_USAGE "pools profile on [rate <bytes>] | pools profile off"

/* ------------------------------------------------------------------------------------------ */
/* Views                                                                                      */
/* ------------------------------------------------------------------------------------------ */

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

/* The site of `row` in the view, made if new (caller mode adds sites no sample saw). */
static struct pool_view_site *view_site_of(struct pool_profile_view *v, size_t *cap, uintptr_t site,
                                      struct pool_view_pool *p)
{
	struct pool_view_site *s;
	size_t i;

	for (i = 0; i < v->nsites; i++)
		if (v->sites[i].row.site == site && v->sites[i].pool == p)
			return &v->sites[i];
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
	s->row.site = site;
	s->pool = p;
	if (p) {
		s->row.pool = p->addr;
		memcpy(s->row.name, p->name, sizeof(s->row.name));
		s->row.size = p->size;
	}
	return s;
}

static void view_name(struct pool_view_site *s)
{
	if (s->row.site)
		pool__symbolize(s->sym, sizeof(s->sym), (const void *)s->row.site, POOL_SYM_SHORT);
	else
		snprintf(s->sym, sizeof(s->sym), "%s", s->row.pool ? "[unsampled]" : "[other]");
}

struct pool_profile_view *pool__profile_view_make(int addresses)
{
	struct pool_profile_view *v = pool__cli_calloc(1, sizeof(*v));
	struct pool_prof_row *rows = pool__cli_malloc(POOL_PROF_SITES * sizeof(*rows));
	size_t n, i, cap = 0;

	if (!v || !rows)
		goto fail;
	v->addresses = addresses;
	v->on = (POOL__DEBUGGING() & POOL_DBG_PROFILE) != 0;
	pool__profile_audit();
	pool_for_each(view_add_pool, v);
	if (v->failed)
		goto fail;
	n = pool__prof_snapshot(rows, POOL_PROF_SITES, &v->sum);
	for (i = 0; i < n; i++) {
		struct pool_view_pool *p = rows[i].pool ? view_find_pool(v, rows[i].pool) : NULL;
		struct pool_view_site *s;

		/* rows of destroyed pools: their objects are gone, their counts stay */
		s = view_site_of(v, &cap, rows[i].site, p);
		if (!s)
			goto fail;
		s->row = rows[i];
		if (p)
			p->live += rows[i].live;
	}
	/* the estimates: each pool's exact count shared by live samples, or exact by caller */
	for (i = 0; i < v->npools; i++) {
		struct pool_view_pool *p = &v->pools[i];
		uint64_t told = 0;
		size_t k;

		if (p->exact) {
			for (k = 0; k < p->ncallers; k++) {
				uintptr_t c = atomic_load_explicit(&p->callers[k].caller,
				                                   memory_order_relaxed);
				struct pool_view_site *s = view_site_of(v, &cap, c, p);

				if (!s)
					goto fail;
				s->exact = 1;
				s->objects = (uint64_t)atomic_load_explicit(&p->callers[k].live,
				                                            memory_order_relaxed);
				told += s->objects;
			}
		} else if (p->live) {
			for (k = 0; k < v->nsites; k++) {
				struct pool_view_site *s = &v->sites[k];

				if (s->pool != p || !s->row.live)
					continue;
				s->objects = (p->in_use * s->row.live + p->live / 2) / p->live;
			}
			told = p->in_use;
		}
		if (p->in_use > told) {
			struct pool_view_site *s = view_site_of(v, &cap, 0, p);

			if (!s)
				goto fail;
			s->objects = p->in_use - told;
			s->exact = p->exact;
		}
	}
	for (i = 0; i < v->nsites; i++) {
		struct pool_view_site *s = &v->sites[i];

		s->bytes = s->objects * (s->pool ? s->pool->stride : 0);
		view_name(s);
	}
	free(rows);
	return v;
fail:
	free(rows);
	pool__profile_view_free(v);
	errno = ENOMEM;
	return NULL;
}

void pool__profile_view_free(struct pool_profile_view *v)
{
	if (!v)
		return;
	while (v->npools)
		free(v->pools[--v->npools].aliases);
	free(v->pools);
	free(v->sites);
	free(v);
}

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                  */
/* ------------------------------------------------------------------------------------------ */

enum prof_sort { PSORT_BYTES = 0, PSORT_SITE, PSORT_POOL, PSORT_AGE };
enum prof_format { PFMT_TEXT = 0, PFMT_JSON, PFMT_PROMETHEUS };
enum prof_group { PG_SORT, PG_FORMAT, PG_POOL, PG_GROUPS };

struct prof_args {
	enum prof_sort sort;
	enum prof_format format;
	const char *pool;               /* a pool name, or NULL */
	size_t pool_len;
	size_t max;                     /* 0: every site */
};

static const struct pool_word prof_words[] = {
	{ "bybytes", PG_SORT, PSORT_BYTES },
	{ "bysite", PG_SORT, PSORT_SITE },
	{ "bypool", PG_SORT, PSORT_POOL },
	{ "byage", PG_SORT, PSORT_AGE },
	{ "pool", PG_POOL, 1 },
	{ "json", PG_FORMAT, PFMT_JSON },
	{ "prometheus", PG_FORMAT, PFMT_PROMETHEUS },
};

static int prof_error(FILE *out, const char *pre, const char *w, size_t len, const char *post)
{
	pool__word_error(out, pre, w, len, post);
	errno = EINVAL;
	return -1;
}

static int parse_view_args(FILE *out, const char *p, struct prof_args *a)
{
	const char *w, *seen[PG_GROUPS] = { NULL };
	size_t len, seen_len[PG_GROUPS] = { 0 };
	int have_max = 0;

	memset(a, 0, sizeof(*a));
	while ((w = pool__next_word(&p, &len))) {
		const struct pool_word *pw = pool__word_find(prof_words, sizeof(prof_words) /
		                                             sizeof(prof_words[0]), w, len);

		if (pw) {
			if (seen[pw->group]) {
				pool__word_error(out, "Option '", w, len, "' conflicts with '");
				return prof_error(out, "", seen[pw->group], seen_len[pw->group],
				                  "' in 'pools profile'. Try 'help'.\n");
			}
			seen[pw->group] = w;
			seen_len[pw->group] = len;
			if (pw->group == PG_SORT)
				a->sort = (enum prof_sort)pw->value;
			else if (pw->group == PG_FORMAT)
				a->format = (enum prof_format)pw->value;
			else if (!(a->pool = pool__next_word(&p, &a->pool_len)))
				return prof_error(out, "Option '", w, len, "' needs a pool name in "
				                  "'pools profile'. Try 'help'.\n");
		} else if (*w >= '0' && *w <= '9') {
			if (have_max || pool__parse_size(w, len, &a->max) < 0 || !a->max)
				return prof_error(out, "Invalid count '", w, len, "' (expected one "
				                  "number of sites from 1 up) in 'pools profile'. "
				                  "Try 'help'.\n");
			have_max = 1;
		} else {
			return prof_error(out, "Unknown option '", w, len, "' for 'pools profile' "
			                  "(expected " PROFILE_USAGE ", or " PROFILE_ON_USAGE "). "
			                  "Try 'help'.\n");
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Output                                                                                     */
/* ------------------------------------------------------------------------------------------ */

uint64_t pool__profile_age_avg(const struct pool_view_site *s)
{
	return s->row.live ? s->row.age_sum_ms / s->row.live : 0;
}

static int cmp_bytes(const struct pool_view_site *x, const struct pool_view_site *y)
{
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->row.samples != y->row.samples)
		return x->row.samples > y->row.samples ? -1 : 1;
	return strcmp(x->sym, y->sym);
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
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
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
		        "allocated per thread; %" PRIu64 " sampled, %" PRIu64 " seen freed, %" PRIu64
		        " live, %" PRIu64 " dropped (%u records at most), %" PRIu64 " forgotten.\n",
		        v->on ? "on" : "off", v->on ? "started" : "ran for", since_ms(v), sum->rate,
		        sum->samples, sum->freed, sum->live, sum->dropped, POOL_PROF_RECORDS,
		        sum->forgotten);
}

static void print_text(FILE *out, const struct pool_profile_view *v, struct pool_view_site **list,
                       size_t n, size_t matched)
{
	size_t i;

	text_header(out, v);
	fprintf(out, "Live bytes by site%s (~: estimated from samples; exact under caller "
	        "debugging):\n", n < matched ? " (limited)" : "");
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
		if (v->addresses && s->row.site)
			fprintf(out, " (%#" PRIxPTR ")", s->row.site);
		fputc('\n', out);
	}
}

void pool__profile_site_json(FILE *out, const struct pool_profile_view *v,
                             const struct pool_view_site *s)
{
	fputs("{\"pool\": ", out);
	pool_json_write_string(out, s->pool ? s->row.name : "");
	fputs(", \"site\": ", out);
	pool_json_write_string(out, s->sym);
	if (v->addresses && s->row.site)
		fprintf(out, ", \"address\": \"%#" PRIxPTR "\"", s->row.site);
	fprintf(out, ", \"size\": %zu, \"stride\": %zu, \"samples\": %" PRIu64 ", \"freed\": %"
	        PRIu64 ", \"live_samples\": %" PRIu64 ", \"weight\": %.1f, \"live_objects\": %"
	        PRIu64 ", \"live_bytes\": %" PRIu64 ", \"exact\": %s, \"age_min_ms\": %" PRIu64
	        ", \"age_avg_ms\": %" PRIu64 ", \"age_max_ms\": %" PRIu64 "}",
	        s->row.size, s->pool ? s->pool->stride : (size_t)0, s->row.samples, s->row.freed,
	        s->row.live, s->row.weight, s->objects, s->bytes, s->exact ? "true" : "false",
	        s->row.age_min_ms, pool__profile_age_avg(s), s->row.age_max_ms);
}

static void print_json(FILE *out, const struct pool_profile_view *v,
                       const struct prof_args *a, struct pool_view_site **list, size_t n,
                       size_t matched)
{
	const struct pool_prof_summary *sum = &v->sum;
	size_t i;

	fprintf(out, "{\"format\": 1,\n \"profile\": {\"on\": %s, \"started\": %s, \"rate\": %zu, "
	        "\"since_ms\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"freed\": %" PRIu64
	        ", \"live\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"forgotten\": %" PRIu64
	        ", \"records_max\": %u, \"sites_max\": %u, \"table_bytes\": %zu},\n \"sites\": [",
	        v->on ? "true" : "false", sum->gen ? "true" : "false", sum->rate, since_ms(v),
	        sum->samples, sum->freed, sum->live, sum->dropped, sum->forgotten,
	        POOL_PROF_RECORDS, POOL_PROF_SITES, pool__prof_table_bytes());
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
		        p->in_use * p->stride, p->live, p->exact ? "true" : "false");
	}
	fprintf(out, "%s]}\n", n ? "\n " : "");
}

static void prom_labels(FILE *out, const struct pool_view_site *s)
{
	fputs("{pool=\"", out);
	pool__prom_label(out, s->pool ? s->row.name : "");
	fputs("\",site=\"", out);
	pool__prom_label(out, s->sym);
	fputs("\"}", out);
}

static void print_prometheus(FILE *out, const struct pool_profile_view *v,
                             struct pool_view_site **list, size_t n)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "libpool_profile_live_bytes", "gauge", "Bytes (objects times stride) held by "
		  "objects of a pool allocated at a site: estimated from the profile's samples, "
		  "exact under caller debugging." },
		{ "libpool_profile_live_objects", "gauge", "Objects of a pool allocated at a site "
		  "and in use, as libpool_profile_live_bytes." },
		{ "libpool_profile_live_samples", "gauge", "Live samples of a pool at a site." },
		{ "libpool_profile_samples_total", "counter", "Allocations the profile sampled at a "
		  "site since it started." },
		{ "libpool_profile_freed_total", "counter", "Sampled allocations seen freed, credited "
		  "to the site that made them." },
	};
	size_t f, i;

	pool__prom_family(out, "libpool_profile_info", "gauge", "The allocation-site profile: "
	                  "on (1) or off (0), and its mean bytes between two samples of a thread.");
	fprintf(out, "libpool_profile_info{rate=\"%zu\"} %d\n", v->sum.rate, v->on);
	pool__prom_family(out, "libpool_profile_dropped_total", "counter", "Samples not "
	                  "remembered: the profile's table was full.");
	fprintf(out, "libpool_profile_dropped_total %" PRIu64 "\n", v->sum.dropped);
	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		pool__prom_family(out, fam[f].name, fam[f].type, fam[f].help);
		for (i = 0; i < n; i++) {
			const struct pool_view_site *s = list[i];
			uint64_t x = f == 0 ? s->bytes : f == 1 ? s->objects : f == 2 ? s->row.live :
			             f == 3 ? s->row.samples : s->row.freed;

			fputs(fam[f].name, out);
			prom_labels(out, s);
			fprintf(out, " %" PRIu64 "\n", x);
		}
	}
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
	if (a->format == PFMT_JSON)
		print_json(out, v, a, list, n, matched);
	else if (a->format == PFMT_PROMETHEUS)
		print_prometheus(out, v, list, n);
	else
		print_text(out, v, list, n, matched);
	free(list);
	return 0;
}

/* Run `pools profile` view arguments `args` into `out`, flushed; 0 or -1 with errno. */
static int profile_view(FILE *out, const char *args, int addresses)
{
	struct pool_profile_view *v;
	struct prof_args a;
	int ret, werr;

	if (parse_view_args(out, args, &a) < 0)
		return -1;
	v = pool__profile_view_make(addresses);
	if (!v) {
		fputs("Not enough memory for the profile.\n", out);
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	ret = view_out(out, v, &a);
	werr = errno;
	pool__profile_view_free(v);
	fflush(out);
	if (ret < 0) {
		errno = werr;
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
		if (v->addresses && s->row.site)
			fprintf(out, " (%#" PRIxPTR ")", s->row.site);
		fputc('\n', out);
	}
	if (json)
		fputc(']', out);
}

/* ------------------------------------------------------------------------------------------ */
/* The command and the API                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Start a new profile at `rate` bytes (0: the default) or stop it: 0, or -1 with errno. */
static int profile_switch(int on, size_t rate, FILE *errout)
{
	char opt[48], *err = NULL;
	int was_on = (POOL__DEBUGGING() & POOL_DBG_PROFILE) != 0;

	if (on && rate > POOL_PROFILE_RATE_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (on)
		snprintf(opt, sizeof(opt), "profile=%zu", rate ? rate : POOL_PROFILE_RATE_DEF);
	else
		snprintf(opt, sizeof(opt), "no-profile");
	/* a profile already on at that rate is not restarted by the flags: restart it here */
	if (on && was_on && pool__debug_profile_rate() == (rate ? rate : POOL_PROFILE_RATE_DEF))
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
	return profile_switch(1, rate_bytes, NULL);
}

POOL_API void pool_profile_stop(void)
{
	profile_switch(0, 0, NULL);
}

POOL_API int pool_profile_dump(FILE *out, const char *args)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
	return profile_view(out, args ? args : "", 1);
}

int pool__profile_cli(FILE *out, const char *args, enum pool_cli_level level)
{
	const char *p = args, *w;
	size_t len;

	w = pool__next_word(&p, &len);
	if (w && (pool__word_is(w, len, "on") || pool__word_is(w, len, "off"))) {
		int on = len == 2;
		unsigned long long rate = 0;
		const char *r;
		size_t rlen;

		if (level < POOL_CLI_ADMIN) {
			fprintf(out, "Permission denied: 'pools profile %s' needs level admin; this "
			        "session is %s.\n", on ? "on" : "off",
			        level == POOL_CLI_USER ? "user" : "operator");
			errno = EACCES;
			return -1;
		}
		w = pool__next_word(&p, &len);
		if (w && on && pool__word_is(w, len, "rate")) {
			r = pool__next_word(&p, &rlen);
			if (!r || pool__parse_decimal(r, rlen, 1, POOL_PROFILE_RATE_MAX, &rate) < 0 ||
			    !rate)
				return prof_error(out, "Invalid rate '", r ? r : "", r ? rlen : 0,
				                  "' in 'pools profile on rate <bytes>' (expected 1 to "
				                  "2^40 bytes, with k, m or g). Try 'help'.\n");
			w = pool__next_word(&p, &len);
		}
		if (w)
			return prof_error(out, "Unknown option '", w, len, "' (expected "
			                  PROFILE_ON_USAGE "). Try 'help'.\n");
		if (profile_switch(on, (size_t)rate, out) < 0) {
			fputs("The profile could not change.\n", out);
			return -1;
		}
		if (on)
			fprintf(out, "Profile on: one sample per about %zu bytes allocated per "
			        "thread.\n", pool__debug_profile_rate());
		else
			fputs("Profile off: its figures stay for 'pools profile' until the next "
			      "'pools profile on'.\n", out);
		return 0;
	}
	return profile_view(out, args, level >= POOL_CLI_ADMIN);
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
