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
 *    and nothing on a pool's hot path is called or locked (pool_get_stats() takes only the
 *    thread registry lock, which the hot path never takes).
 * 2. Filter, sort and cut, on the copy, with the pool list lock released.
 * 3. Print, from the copy. Writing to `out` may block (a pipe, a slow terminal): it happens
 *    with no lock held.
 *
 * Sizes of objects are the usable size (struct pool_stats.size); byte figures are objects times
 * the stride (the memory each object really takes: size plus debugging extras, rounded up to the
 * alignment), so that they add up to what the pools hold from the OS layer.
 *
 * The format of every output is documented in doc/pools-show.md.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-int.h"
#include "pool-dump.h"
#include "pool-os.h"

/* Callers listed per pool by `detailed`: the ones with the most live objects. */
#define DUMP_CALLERS_SHOWN 5u

#define SHOW_USAGE "pools show [byname|bysize|byusage] [detailed] [match <prefix>] [<max>] " \
                   "[json|prometheus]"

enum dump_sort { SORT_NONE = 0, SORT_NAME, SORT_SIZE, SORT_USAGE };
enum dump_format { FMT_TEXT = 0, FMT_JSON, FMT_PROMETHEUS };

struct dump_args {
	enum dump_sort sort;
	enum dump_format format;
	int detailed;
	const char *match;        /* prefix, or NULL */
	size_t match_len;
	size_t max;               /* 0: no cut */
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
	unsigned int ncallers;
	struct dump_caller callers[POOL_CALLER_SLOTS];
};

struct dump_snapshot {
	const struct dump_args *args;
	struct dump_entry *e;
	size_t n, cap;
	unsigned int seq;
	int failed;                     /* out of memory while copying */
};

void pool__put_word(FILE *out, const char *word, size_t len)
{
	size_t i, n = len > POOL_ECHO_MAX ? POOL_ECHO_MAX : len;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)word[i];

		if (c < 0x20 || c > 0x7e || c == '\'' || c == '\\')
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	if (n < len)
		fputs("...", out);
}

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The next blank-separated word of *p: returns its start and sets *len; NULL at the end. */
static const char *next_word(const char **p, size_t *len)
{
	const char *s = *p, *w;

	while (*s && is_blank(*s))
		s++;
	if (!*s)
		return NULL;
	w = s;
	while (*s && !is_blank(*s))
		s++;
	*len = (size_t)(s - w);
	*p = s;
	return w;
}

static int word_is(const char *w, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(w, lit, len) == 0;
}

/* Write `pre`, the client's word (sanitised), then `post`. */
static void arg_error(FILE *out, const char *pre, const char *w, size_t len, const char *post)
{
	fputs(pre, out);
	pool__put_word(out, w, len);
	fputs(post, out);
}

/* "Option '<w>' conflicts with '<prev>' in 'pools show'. Try 'help'." */
static void conflict_error(FILE *out, const char *w, size_t len, const char *prev, size_t plen)
{
	arg_error(out, "Option '", w, len, "' conflicts with '");
	arg_error(out, "", prev, plen, "' in 'pools show'. Try 'help'.\n");
}

/* Parse `args` into *a; on error write one line to `out` and return -1. */
static int parse_args(FILE *out, const char *args, struct dump_args *a)
{
	static const char *const sorts[] = { NULL, "byname", "bysize", "byusage" };
	const char *p = args ? args : "", *w, *sort_word = NULL, *fmt_word = NULL;
	size_t len, sort_len = 0, fmt_len = 0;
	int have_max = 0;

	memset(a, 0, sizeof(*a));
	while ((w = next_word(&p, &len))) {
		unsigned int s;
		int matched = 0;

		for (s = SORT_NAME; s <= SORT_USAGE; s++) {
			if (!word_is(w, len, sorts[s]))
				continue;
			if (sort_word && word_is(sort_word, sort_len, sorts[s])) {
				arg_error(out, "Option '", w, len, "' given twice in 'pools show'. "
				          "Try 'help'.\n");
				return -1;
			}
			if (sort_word) {
				conflict_error(out, w, len, sort_word, sort_len);
				return -1;
			}
			a->sort = (enum dump_sort)s;
			sort_word = w;
			sort_len = len;
			matched = 1;
		}
		if (matched)
			continue;
		if (word_is(w, len, "json") || word_is(w, len, "prometheus")) {
			if (fmt_word && fmt_len == len && !memcmp(fmt_word, w, len)) {
				arg_error(out, "Option '", w, len, "' given twice in 'pools show'. "
				          "Try 'help'.\n");
				return -1;
			}
			if (fmt_word) {
				conflict_error(out, w, len, fmt_word, fmt_len);
				return -1;
			}
			a->format = word_is(w, len, "json") ? FMT_JSON : FMT_PROMETHEUS;
			fmt_word = w;
			fmt_len = len;
		} else if (word_is(w, len, "detailed")) {
			if (a->detailed) {
				arg_error(out, "Option '", w, len, "' given twice in 'pools show'. "
				          "Try 'help'.\n");
				return -1;
			}
			a->detailed = 1;
		} else if (word_is(w, len, "match")) {
			const char *m;
			size_t mlen;

			if (a->match) {
				arg_error(out, "Option '", w, len, "' given twice in 'pools show'. "
				          "Try 'help'.\n");
				return -1;
			}
			m = next_word(&p, &mlen);
			if (!m) {
				fputs("Option 'match' needs a prefix in 'pools show'. Try 'help'.\n", out);
				return -1;
			}
			a->match = m;
			a->match_len = mlen;
		} else if (*w >= '0' && *w <= '9') {
			size_t i, v = 0;

			for (i = 0; i < len; i++) {
				if (w[i] < '0' || w[i] > '9' || v > (SIZE_MAX - 9) / 10)
					break;
				v = v * 10 + (size_t)(w[i] - '0');
			}
			if (i < len || v == 0 || have_max) {
				arg_error(out, "Invalid count '", w, len, have_max && i == len && v ?
				          "' (a count was already given) in 'pools show'. Try 'help'.\n" :
				          "' (expected a number of pools from 1 up) in 'pools show'. "
				          "Try 'help'.\n");
				return -1;
			}
			a->max = v;
			have_max = 1;
		} else {
			arg_error(out, "Unknown option '", w, len, "' for 'pools show' (expected "
			          SHOW_USAGE "). Try 'help'.\n");
			return -1;
		}
	}
	if (a->detailed && a->format == FMT_PROMETHEUS) {
		fputs("Option 'detailed' cannot be combined with 'prometheus' in 'pools show'. "
		      "Try 'help'.\n", out);
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

/* pool_for_each() callback: runs with the pool list lock held. */
static int snapshot_one(struct pool_head *pool, void *arg)
{
	struct dump_snapshot *s = arg;
	const struct dump_args *a = s->args;
	struct dump_entry *e;
	unsigned int i, seq = s->seq++;

	if (a->match && strncmp(pool->name, a->match, a->match_len) != 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct dump_entry *ne = realloc(s->e, cap * sizeof(*ne));

		if (!ne) {
			s->failed = 1;
			return 1;
		}
		s->e = ne;
		s->cap = cap;
	}
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	pool_get_stats(pool, &e->st);
	if (a->sort == SORT_USAGE && e->st.allocated == 0)
		return 0;
	e->head = pool;
	e->seq = seq;
	snprintf(e->name, sizeof(e->name), "%s", pool->name);
	if (a->format == FMT_PROMETHEUS) {
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
		e->creators = malloc((e->st.creators ? e->st.creators : 1) * sizeof(*e->creators));
		if (!e->creators) {
			s->failed = 1;
			return 1;
		}
		memcpy(e->creators, pool->creator, e->st.creators * sizeof(*e->creators));
		e->records_callers = !!(pool->layout & POOL_DBG_CALLER);
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

size_t pool__allocated_bytes(void)
{
	struct dump_args a;
	struct dump_snapshot s;
	size_t i, bytes = 0;

	memset(&a, 0, sizeof(a));
	memset(&s, 0, sizeof(s));
	s.args = &a;
	pool_for_each(snapshot_one, &s);
	for (i = 0; i < s.n; i++)
		bytes += s.e[i].st.allocated * s.e[i].st.stride;
	free_snapshot(&s);
	return bytes;
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

/* A code address as symbol+0xoff, file+0xoff, or 0xaddr, resolved with dladdr(3). */
static void caller_str(uintptr_t addr, char *buf, size_t size)
{
	Dl_info info;

	if (dladdr((void *)addr, &info) && info.dli_sname && info.dli_saddr)
		snprintf(buf, size, "%s+0x%lx", info.dli_sname,
		         (unsigned long)(addr - (uintptr_t)info.dli_saddr));
	else if (dladdr((void *)addr, &info) && info.dli_fname && info.dli_fbase) {
		const char *base = strrchr(info.dli_fname, '/');

		snprintf(buf, size, "%s+0x%lx", base ? base + 1 : info.dli_fname,
		         (unsigned long)(addr - (uintptr_t)info.dli_fbase));
	} else {
		snprintf(buf, size, "0x%lx", (unsigned long)addr);
	}
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

struct dump_totals {
	size_t pools, allocated_bytes, used_bytes, cached_bytes;
};

static void totals_of(const struct dump_snapshot *s, struct dump_totals *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < s->n; i++) {
		const struct pool_stats *st = &s->e[i].st;

		t->pools++;
		t->allocated_bytes += st->allocated * st->stride;
		t->used_bytes += st->used * st->stride;
		t->cached_bytes += st->cached * st->stride;
	}
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
		        "(~%zu by thread caches), needed_avg %zu, %zu failures, %u users, @%p%s\n",
		        e->name, st->size, st->align, st->allocated, st->allocated * st->stride,
		        st->used, st->cached, st->needed_avg, st->failed, st->creators,
		        (const void *)e->head, (st->flags & POOL_F_SHARED) ? " [SHARED]" : "");
		if (!s->args->detailed)
			continue;
		fprintf(out, "      stride %zu bytes, %u buckets, %zu in shared free lists, "
		        "limit %zu%s\n", st->stride, st->buckets, st->shared_free, st->limit,
		        st->limit ? "" : " (none)");
		for (k = 0; k < st->creators; k++)
			fprintf(out, "      created as %s: %zu bytes/%zu, flags %s\n", e->creators[k].name,
			        e->creators[k].size, e->creators[k].align, flags_str(e->creators[k].flags));
		for (k = 0; k < e->ncallers; k++) {
			caller_str(e->callers[k].addr, sym, sizeof(sym));
			fprintf(out, "      caller %s (%#lx): %ld live objects\n", sym,
			        (unsigned long)e->callers[k].addr, e->callers[k].live);
		}
	}
	totals_of(s, &t);
	fprintf(out, "Total: %zu pools, %zu bytes allocated, %zu used (~%zu by thread caches).\n",
	        t.pools, t.allocated_bytes, t.used_bytes, t.cached_bytes);
}

static void print_json(FILE *out, const struct dump_snapshot *s, int limited, size_t matched)
{
	struct dump_totals t;
	char sym[256];
	size_t i, k, os_alloc, os_res;

	fputs("{\"pools\": [", out);
	for (i = 0; i < s->n; i++) {
		const struct dump_entry *e = &s->e[i];
		const struct pool_stats *st = &e->st;

		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		json_string(out, e->name);
		fprintf(out, ", \"address\": \"%p\", \"size\": %zu, \"align\": %zu, \"stride\": %zu, "
		        "\"allocated\": %zu, \"allocated_bytes\": %zu, \"used\": %zu, "
		        "\"used_bytes\": %zu, \"cached\": %zu, \"shared_free\": %zu, "
		        "\"needed_avg\": %zu, \"failures\": %zu, \"limit\": %zu, \"users\": %u, "
		        "\"buckets\": %u, \"shared\": %s, \"exact\": %s",
		        (const void *)e->head, st->size, st->align, st->stride, st->allocated,
		        st->allocated * st->stride, st->used, st->used * st->stride, st->cached,
		        st->shared_free, st->needed_avg, st->failed, st->limit, st->creators, st->buckets,
		        (st->flags & POOL_F_SHARED) ? "true" : "false",
		        (st->flags & POOL_F_EXACT) ? "true" : "false");
		if (s->args->detailed) {
			fputs(", \"creators\": [", out);
			for (k = 0; k < st->creators; k++) {
				fputs(k ? ", {\"name\": " : "{\"name\": ", out);
				json_string(out, e->creators[k].name);
				fprintf(out, ", \"size\": %zu, \"align\": %zu, \"flags\": ",
				        e->creators[k].size, e->creators[k].align);
				json_string(out, flags_str(e->creators[k].flags));
				fputc('}', out);
			}
			fputc(']', out);
			if (e->records_callers) {
				fputs(", \"callers\": [", out);
				for (k = 0; k < e->ncallers; k++) {
					caller_str(e->callers[k].addr, sym, sizeof(sym));
					fprintf(out, "%s{\"address\": \"%#lx\", \"symbol\": ", k ? ", " : "",
					        (unsigned long)e->callers[k].addr);
					json_string(out, sym);
					fprintf(out, ", \"live\": %ld}", e->callers[k].live);
				}
				fputc(']', out);
			}
		}
		fputc('}', out);
	}
	totals_of(s, &t);
	fprintf(out, "%s],\n \"total\": {\"pools\": %zu, \"matched\": %zu, \"limited\": %s, "
	        "\"allocated_bytes\": %zu, \"used_bytes\": %zu, \"cached_bytes\": %zu",
	        s->n ? "\n " : "", t.pools, matched, limited ? "true" : "false",
	        t.allocated_bytes, t.used_bytes, t.cached_bytes);
	pool__os_usage(&os_alloc, &os_res);
	fputs(", \"os_layer\": ", out);
	json_string(out, pool__os_name());
	fprintf(out, ", \"os_allocated_bytes\": %zu, \"os_resident_bytes\": %zu}}\n", os_alloc,
	        os_res);
}

/* One per-pool metric family of the Prometheus output. */
struct prom_metric {
	const char *name;
	const char *type;
	const char *help;
	size_t (*value)(const struct pool_stats *st);
};

#define PROM_GETTER(fn, expr) \
	static size_t fn(const struct pool_stats *st) { return (expr); }

PROM_GETTER(pv_size, st->size)
PROM_GETTER(pv_align, st->align)
PROM_GETTER(pv_stride, st->stride)
PROM_GETTER(pv_alloc, st->allocated)
PROM_GETTER(pv_alloc_bytes, st->allocated * st->stride)
PROM_GETTER(pv_used, st->used)
PROM_GETTER(pv_used_bytes, st->used * st->stride)
PROM_GETTER(pv_cached, st->cached)
PROM_GETTER(pv_shared_free, st->shared_free)
PROM_GETTER(pv_needed, st->needed_avg)
PROM_GETTER(pv_failed, st->failed)
PROM_GETTER(pv_limit, st->limit)
PROM_GETTER(pv_users, st->creators)
PROM_GETTER(pv_shared, (st->flags & POOL_F_SHARED) ? 1 : 0)

static const struct prom_metric prom_metrics[] = {
	{ "libpool_pool_object_size_bytes", "gauge", "Usable size of one object.", pv_size },
	{ "libpool_pool_alignment_bytes", "gauge", "Alignment of objects.", pv_align },
	{ "libpool_pool_stride_bytes", "gauge",
	  "Memory one object takes, with debugging extras and alignment.", pv_stride },
	{ "libpool_pool_allocated_objects", "gauge",
	  "Objects obtained from the OS layer and not given back.", pv_alloc },
	{ "libpool_pool_allocated_bytes", "gauge",
	  "Bytes obtained from the OS layer and not given back (objects times stride).",
	  pv_alloc_bytes },
	{ "libpool_pool_used_objects", "gauge",
	  "Objects handed out plus objects in thread caches.", pv_used },
	{ "libpool_pool_used_bytes", "gauge", "Used objects times stride.", pv_used_bytes },
	{ "libpool_pool_cached_objects", "gauge",
	  "Objects in thread caches (approximate).", pv_cached },
	{ "libpool_pool_shared_free_objects", "gauge",
	  "Objects in the shared free lists.", pv_shared_free },
	{ "libpool_pool_needed_avg_objects", "gauge",
	  "Sliding average of used objects over 1024 samples.", pv_needed },
	{ "libpool_pool_failures_total", "counter",
	  "Allocations that returned NULL.", pv_failed },
	{ "libpool_pool_limit_objects", "gauge",
	  "Maximum allocated objects, 0 for none.", pv_limit },
	{ "libpool_pool_users", "gauge",
	  "pool_create() calls merged into the pool.", pv_users },
	{ "libpool_pool_shared", "gauge",
	  "1 when the pool was created with POOL_F_SHARED (may merge), else 0.", pv_shared },
};

/* A label value, escaped as the exposition format requires (backslash, quote, newline). */
static void prom_label(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void print_prometheus(FILE *out, const struct dump_snapshot *s)
{
	struct dump_totals t;
	size_t i, m, os_alloc, os_res;

	for (m = 0; m < sizeof(prom_metrics) / sizeof(prom_metrics[0]); m++) {
		const struct prom_metric *pm = &prom_metrics[m];

		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", pm->name, pm->help, pm->name, pm->type);
		for (i = 0; i < s->n; i++) {
			fprintf(out, "%s{pool=\"", pm->name);
			prom_label(out, s->e[i].label);
			fprintf(out, "\"} %zu\n", pm->value(&s->e[i].st));
		}
	}
	totals_of(s, &t);
	fprintf(out, "# HELP libpool_pools Pools in this dump.\n# TYPE libpool_pools gauge\n"
	        "libpool_pools %zu\n", t.pools);
	fprintf(out, "# HELP libpool_allocated_bytes Bytes the pools in this dump hold from the "
	        "OS layer.\n# TYPE libpool_allocated_bytes gauge\nlibpool_allocated_bytes %zu\n",
	        t.allocated_bytes);
	pool__os_usage(&os_alloc, &os_res);
	fprintf(out, "# HELP libpool_os_allocated_bytes Bytes the OS layer has handed out "
	        "(all its users), 0 if unknown.\n# TYPE libpool_os_allocated_bytes gauge\n"
	        "libpool_os_allocated_bytes{layer=\"%s\"} %zu\n", pool__os_name(), os_alloc);
	fprintf(out, "# HELP libpool_os_resident_bytes Bytes the OS layer holds resident, "
	        "0 if unknown.\n# TYPE libpool_os_resident_bytes gauge\n"
	        "libpool_os_resident_bytes{layer=\"%s\"} %zu\n", pool__os_name(), os_res);
}

POOL_API int pool_dump(FILE *out, const char *args)
{
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
	memset(&s, 0, sizeof(s));
	s.args = &a;
	pool_for_each(snapshot_one, &s);
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
	if (a.format == FMT_JSON) {
		print_json(out, &s, limited, matched);
	} else if (a.format == FMT_PROMETHEUS) {
		print_prometheus(out, &s);
	} else {
		print_text(out, &s, limited);
	}
	fflush(out);
	werr = errno;
	free_snapshot(&s);
	if (ferror(out)) {
		errno = werr ? werr : EIO;
		return -1;
	}
	return 0;
}
