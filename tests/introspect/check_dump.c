/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_dump(): the text line of every pool field by field against pool_get_stats(), every sort
 * order, match, <max>, detailed (merged creators and callers), the JSON output parsed back by
 * python3's json module, the Prometheus output parsed by python3-prometheus-client's parser,
 * every argument error, a write error (pool_dump() and pool_profile_dump() to /dev/full), dumps
 * racing pool creation and destruction, and pool_json_write_string() against Python's json
 * module and UTF-8 decoder.
 *
 * Public-API test: it includes only <pool/pool.h>; every figure it checks comes from
 * pool_get_stats() and pool_get_config().
 *
 * Check forks every test, so each test starts with no pool and creates the ones it checks.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* pool_dump(args) into a malloc()ed string; it must succeed. */
static char *dump_ok(const char *args)
{
	int r;
	char *s = test_capture(pool_dump, args, &r);

	ck_assert_msg(r == 0, "pool_dump(\"%s\") failed: %s", args ? args : "(null)", s);
	return s;
}

/* The n-th line (0-based) of s, copied into buf (without its newline). */
static const char *line_of(const char *s, unsigned int n, char *buf, size_t size)
{
	const char *e;
	size_t len;

	while (n--) {
		s = strchr(s, '\n');
		ck_assert_ptr_nonnull(s);
		s++;
	}
	e = strchr(s, '\n');
	len = e ? (size_t)(e - s) : strlen(s);
	ck_assert_uint_lt(len, size);
	memcpy(buf, s, len);
	buf[len] = 0;
	return buf;
}

/* The text line pool_dump() must print for `pool`, from pool_get_stats(). */
static void expected_line(struct pool_head *pool, char *buf, size_t size)
{
	struct pool_stats st;

	ck_assert_int_eq(pool_get_stats(pool, &st, sizeof(st)), 0);
	snprintf(buf, size, "  - Pool %s (%zu bytes/%zu) : %zu allocated (%zu bytes), %zu used "
	         "(~%zu by thread caches), ~%zu in use, needed_avg %zu, %zu failures, %u users, "
	         "@%p%s", pool_name(pool), st.size, st.align, st.allocated,
	         st.allocated * st.stride, st.used, st.cached, st.used - st.cached, st.needed_avg,
	         st.failed, st.creators, (void *)pool, (st.flags & POOL_F_SHARED) ? " [SHARED]" : "");
}

/* The names of the pool lines of a text dump, in order, separated by spaces. */
static void names_of(const char *s, char *out, size_t size)
{
	const char *p = s;

	out[0] = 0;
	while ((p = strstr(p, "  - Pool "))) {
		char name[64];

		ck_assert_int_eq(sscanf(p, "  - Pool %63s", name), 1);
		if (out[0])
			strncat(out, " ", size - strlen(out) - 1);
		strncat(out, name, size - strlen(out) - 1);
		p += 9;
	}
}

struct fixture {
	struct pool_head *conn, *buf, *tiny;
	void *held[200];
};

/*
 * Three pools with known contents: conn (192 bytes/64, shared, 2 users), buf (1000 bytes, a
 * limit of 5 and 2 failed allocations), tiny (24 bytes, exact).
 */
static void make_pools(struct fixture *fx)
{
	struct pool_head *again;
	unsigned int i;

	fx->conn = pool_create_aligned("conn", 192, 64, POOL_F_SHARED);
	again = pool_create_aligned("conn", 190, 64, POOL_F_SHARED);
	ck_assert_ptr_nonnull(fx->conn);
	ck_assert_ptr_eq(again, fx->conn);
	fx->buf = pool_create("buf", 1000, 0);
	fx->tiny = pool_create("tiny", 24, POOL_F_EXACT);
	ck_assert_ptr_nonnull(fx->buf);
	ck_assert_ptr_nonnull(fx->tiny);
	for (i = 0; i < 120; i++)
		ck_assert_ptr_nonnull(fx->held[i] = pool_alloc(fx->conn));
	for (i = 100; i < 120; i++)
		pool_free(fx->conn, fx->held[i]);
	ck_assert_int_eq(pool_set_limit(fx->buf, 5), 0);
	for (i = 120; i < 125; i++)
		ck_assert_ptr_nonnull(fx->held[i] = pool_alloc(fx->buf));
	ck_assert_ptr_null(pool_alloc(fx->buf));
	ck_assert_ptr_null(pool_alloc(fx->buf));
	for (i = 130; i < 137; i++)
		ck_assert_ptr_nonnull(fx->held[i] = pool_alloc(fx->tiny));
}

/* Free what make_pools() holds and destroy its pools (conn twice: it has two users). */
static void free_pools(struct fixture *fx)
{
	unsigned int i;

	for (i = 0; i < 100; i++)
		pool_free(fx->conn, fx->held[i]);
	for (i = 120; i < 125; i++)
		pool_free(fx->buf, fx->held[i]);
	for (i = 130; i < 137; i++)
		pool_free(fx->tiny, fx->held[i]);
	ck_assert_int_eq(pool_destroy(fx->conn), 0);
	ck_assert_int_eq(pool_destroy(fx->conn), 0);
	ck_assert_int_eq(pool_destroy(fx->buf), 0);
	ck_assert_int_eq(pool_destroy(fx->tiny), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Core: the text format                                                                      */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_text_every_field)
{
	struct fixture fx;
	struct pool_stats st[3];
	struct pool_head *pools[3];
	char line[512], want[512], name[64], shared[16];
	size_t size, align, alloc, bytes, used, cached, in_use, needed, failed, tp, tb, tu, tc, ti, tr;
	size_t sum_alloc = 0, sum_used = 0, sum_cached = 0, sum_in_use = 0, sum_held = 0;
	unsigned int users, i;
	void *addr;
	char *s;

	make_pools(&fx);
	pools[0] = fx.conn;
	pools[1] = fx.buf;
	pools[2] = fx.tiny;
	s = dump_ok(NULL);
	ck_assert_uint_eq(test_count_lines(s), 5);
	ck_assert_str_eq(line_of(s, 0, line, sizeof(line)),
	                 "Dumping pools usage. Use 'pools trim' to release unused memory.");
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pool_get_stats(pools[i], &st[i], sizeof(st[i])), 0);
		line_of(s, i + 1, line, sizeof(line));
		/* the whole line, byte for byte */
		expected_line(pools[i], want, sizeof(want));
		ck_assert_str_eq(line, want);
		/* and each field on its own, so that a failure names it */
		shared[0] = 0;
		ck_assert_int_ge(sscanf(line, "  - Pool %63s (%zu bytes/%zu) : %zu allocated (%zu "
		                        "bytes), %zu used (~%zu by thread caches), ~%zu in use, "
		                        "needed_avg %zu, %zu failures, %u users, @%p %15s", name, &size,
		                        &align, &alloc, &bytes, &used, &cached, &in_use, &needed,
		                        &failed, &users, &addr, shared), 12);
		ck_assert_str_eq(name, pool_name(pools[i]));
		ck_assert_uint_eq(size, st[i].size);
		ck_assert_uint_eq(align, st[i].align);
		ck_assert_uint_eq(alloc, st[i].allocated);
		ck_assert_uint_eq(bytes, st[i].allocated * st[i].stride);
		ck_assert_uint_eq(used, st[i].used);
		ck_assert_uint_eq(cached, st[i].cached);
		/* in use: handed out, the thread caches' objects not counted */
		ck_assert_uint_eq(in_use, st[i].used - st[i].cached);
		ck_assert_uint_eq(needed, st[i].needed_avg);
		ck_assert_uint_eq(failed, st[i].failed);
		ck_assert_uint_eq(users, st[i].creators);
		ck_assert_ptr_eq(addr, pools[i]);
		ck_assert_str_eq(shared, (st[i].flags & POOL_F_SHARED) ? "[SHARED]" : "");
		sum_alloc += st[i].allocated * st[i].stride;
		sum_used += st[i].used * st[i].stride;
		sum_cached += st[i].cached * st[i].stride;
		sum_in_use += (st[i].used - st[i].cached) * st[i].stride;
		/* what can be resident: its slabs, or off slabs what it allocated */
		sum_held += st[i].slab_bytes > st[i].allocated * st[i].stride ? st[i].slab_bytes :
		            st[i].allocated * st[i].stride;
	}
	/*
	 * What the test did shows in the figures: refills from the slab tier take half a
	 * magazine (conn: 120 objects taken 16 at a time, 20 given back into the cache), but at a
	 * limit (buf: 5), which caps what the pool hands out and caches.
	 */
	ck_assert_uint_eq(st[0].size, 192);
	ck_assert_uint_eq(st[0].align, 64);
	ck_assert_uint_eq(st[0].allocated, 128);
	ck_assert_uint_eq(st[0].used, 128);
	ck_assert_uint_eq(st[0].cached, 28);
	ck_assert_uint_eq(st[0].creators, 2);
	ck_assert_uint_eq(st[1].allocated, 5);
	ck_assert_uint_eq(st[1].failed, 2);
	ck_assert_uint_eq(st[2].size, 24);
	ck_assert_uint_eq(st[2].allocated, 16);
	ck_assert_uint_eq(st[2].used - st[2].cached, 7);
	ck_assert_ptr_nonnull(strstr(s, "Pool conn (192 bytes/64) : 128 allocated (24576 bytes), "
	                             "128 used (~28 by thread caches), ~100 in use, "));
	ck_assert_ptr_nonnull(strstr(line_of(s, 3, line, sizeof(line)), " by thread caches), ~7 in "
	                             "use, "));
	ck_assert_ptr_nonnull(strstr(s, ", 2 failures, 1 users, @"));
	ck_assert_int_eq(sscanf(line_of(s, 4, line, sizeof(line)), "Total: %zu pools, %zu bytes "
	                        "allocated, %zu used (~%zu by thread caches), ~%zu in use, ~%zu "
	                        "resident.", &tp, &tb, &tu, &tc, &ti, &tr), 6);
	ck_assert_uint_eq(tp, 3);
	ck_assert_uint_eq(tb, sum_alloc);
	ck_assert_uint_eq(tu, sum_used);
	ck_assert_uint_eq(tc, sum_cached);
	ck_assert_uint_eq(ti, sum_in_use);
	ck_assert_uint_gt(tr, 0);
	ck_assert_uint_le(tr, sum_held);
	snprintf(want, sizeof(want), "Total: 3 pools, %zu bytes allocated, %zu used (~%zu by thread "
	         "caches), ~%zu in use, ~%zu resident.", sum_alloc, sum_used, sum_cached, sum_in_use,
	         tr);
	ck_assert_str_eq(line, want);
	free(s);
	free_pools(&fx);
}
END_TEST

START_TEST(test_text_no_pools)
{
	static const char *const args[] = { "", "byname", "bysize", "byusage", "match x bysize" };
	unsigned int i;

	/* found by fuzz_cli: sorting nothing passed NULL to qsort() (UBSan) */
	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		char *s = dump_ok(args[i]);

		ck_assert_str_eq(s, "Dumping pools usage. Use 'pools trim' to release unused "
		                    "memory.\nTotal: 0 pools, 0 bytes allocated, 0 used (~0 by thread "
		                    "caches), ~0 in use, ~0 resident.\n");
		free(s);
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Sorting, filtering, cutting                                                                */
/* ------------------------------------------------------------------------------------------ */

struct sort_fixture {
	struct pool_head *p[5];
	void *objs[64];
};

/* zeta 64 B x3 (192 B), alpha 512 B x1 (512 B), mid 128 B x0, beta 512 B x2, alphabet 32 B x8 */
static void make_sort_pools(struct sort_fixture *fx)
{
	static const struct { const char *name; size_t size; unsigned int n; } spec[5] = {
		{ "zeta", 64, 3 }, { "alpha", 512, 1 }, { "mid", 128, 0 }, { "beta", 512, 2 },
		{ "alphabet", 32, 8 },
	};
	unsigned int i, k, o = 0;

	/* without caches, every object is taken alone: the figures are the objects taken */
	ck_assert_int_eq(pool_parse_debugging("no-cache", NULL), 0);
	for (i = 0; i < 5; i++) {
		fx->p[i] = pool_create(spec[i].name, spec[i].size, 0);
		ck_assert_ptr_nonnull(fx->p[i]);
		for (k = 0; k < spec[i].n; k++)
			ck_assert_ptr_nonnull(fx->objs[o++] = pool_alloc(fx->p[i]));
	}
	ck_assert_int_eq(pool_parse_debugging("cache", NULL), 0);
}

static void free_sort_pools(struct sort_fixture *fx)
{
	static const unsigned int n[5] = { 3, 1, 0, 2, 8 };
	unsigned int i, k, o = 0;

	for (i = 0; i < 5; i++) {
		for (k = 0; k < n[i]; k++)
			pool_free(fx->p[i], fx->objs[o++]);
		ck_assert_int_eq(pool_destroy(fx->p[i]), 0);
	}
}

START_TEST(test_sort_orders)
{
	struct sort_fixture fx;
	char names[256];
	char *s;

	make_sort_pools(&fx);
	s = dump_ok(NULL);
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "zeta alpha mid beta alphabet");   /* creation order */
	free(s);
	s = dump_ok("byname");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alpha alphabet beta mid zeta");
	free(s);
	s = dump_ok("bysize");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alpha beta mid zeta alphabet");   /* ties: creation order */
	free(s);
	s = dump_ok("byusage");
	names_of(s, names, sizeof(names));
	/*
	 * beta 1024 B, alpha 512, alphabet 256, zeta 192; mid holds nothing and is hidden, but the
	 * Total counts every pool, as without `byusage`
	 */
	ck_assert_str_eq(names, "beta alpha alphabet zeta");
	ck_assert_ptr_nonnull(strstr(s, "Total: 5 pools, 1984 bytes allocated, 1984 used"));
	free(s);
	s = dump_ok("");
	ck_assert_ptr_nonnull(strstr(s, "Total: 5 pools, 1984 bytes allocated, 1984 used"));
	free(s);
	/* a cut: the pools shown, as for any <max> */
	s = dump_ok("byusage 2");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "beta alpha");
	ck_assert_ptr_nonnull(strstr(s, "Total: 2 pools, 1536 bytes allocated"));
	free(s);
	free_sort_pools(&fx);
}
END_TEST

START_TEST(test_match_and_max)
{
	struct sort_fixture fx;
	char names[256], line[256];
	char *s;

	make_sort_pools(&fx);
	s = dump_ok("match alpha");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alpha alphabet");
	ck_assert_ptr_nonnull(strstr(s, "Total: 2 pools, 768 bytes allocated"));
	free(s);
	s = dump_ok("match alphabet");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alphabet");
	free(s);
	s = dump_ok("match alphabets");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "");
	ck_assert_ptr_nonnull(strstr(s, "Total: 0 pools, 0 bytes allocated, 0 used"));
	free(s);

	/* max cuts after sorting and filtering; the header says so only when it cut */
	s = dump_ok("2 bysize");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alpha beta");
	ck_assert_str_eq(line_of(s, 0, line, sizeof(line)), "Dumping pools usage (limited to the "
	                 "first 2 entries). Use 'pools trim' to release unused memory.");
	ck_assert_ptr_nonnull(strstr(s, "Total: 2 pools, 1536 bytes allocated"));
	free(s);
	s = dump_ok("byname match alpha 1");
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alpha");
	ck_assert_ptr_nonnull(strstr(s, "(limited to the first 1 entries)"));
	free(s);
	s = dump_ok("5");
	ck_assert_ptr_null(strstr(s, "limited"));
	ck_assert_uint_eq(test_count_lines(s), 7);
	free(s);
	s = dump_ok("byusage 4");
	ck_assert_ptr_null(strstr(s, "limited"));   /* 4 pools hold memory: nothing cut */
	free(s);
	s = dump_ok("  match   alpha\t\t2  ");
	ck_assert_ptr_null(strstr(s, "limited"));
	names_of(s, names, sizeof(names));
	ck_assert_str_eq(names, "alpha alphabet");
	free(s);
	free_sort_pools(&fx);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* detailed                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * The `thread caches` line of `pools show detailed` for `pool`: `caching` threads (exactly) hold
 * objects of it; the objects at most `cached_before` (pool_get_stats() before the dump: the
 * releaser may only take from caches meanwhile) and at least what pool_get_stats() says now;
 * magazines of at most POOL_CLUSTER_MAX objects and the configured cluster, of 8 bytes a
 * pointer plus a header; the loaded ones (`loaded`: some thread has one) no deeper than that.
 */
static void check_cache_line(const char *line, struct pool_head *pool, size_t cached_before,
                             unsigned int caching, int loaded)
{
	struct pool_config cfg;
	struct pool_stats st;
	unsigned long objects;
	unsigned int in, of, cap, dmin, dmax, dnew;
	size_t bytes;
	int used = 0, n;

	pool_get_config(&cfg);
	ck_assert_int_eq(pool_get_stats(pool, &st, sizeof(st)), 0);
	n = sscanf(line, "      thread caches: %lu objects in %u of %u threads; magazines of %u "
	           "objects (%zu bytes), %n", &objects, &in, &of, &cap, &bytes, &used);
	ck_assert_msg(n == 5 && used > 0, "%s", line);
	ck_assert_uint_le(objects, cached_before);
	ck_assert_uint_ge(objects, st.cached);
	ck_assert_uint_eq(in, caching);
	ck_assert_uint_ge(of, in);
	ck_assert_uint_ge(cap, 1);
	ck_assert_uint_le(cap, cfg.cluster);
	ck_assert_uint_gt(bytes, (size_t)cap * sizeof(void *));
	ck_assert_uint_le(bytes, (size_t)cap * sizeof(void *) + 64);
	line += used;
	if (!loaded) {
		ck_assert_int_eq(sscanf(line, "none loaded (a new one %u deep)", &dnew), 1);
		ck_assert_uint_le(dnew, cap);
		return;
	}
	if (sscanf(line, "loaded ones %u-%u deep (a new one %u)", &dmin, &dmax, &dnew) == 3) {
		ck_assert_uint_lt(dmin, dmax);
	} else {
		ck_assert_msg(sscanf(line, "loaded ones %u deep (a new one %u)", &dmax, &dnew) == 2,
		              "%s", line);
		dmin = dmax;
	}
	ck_assert_uint_ge(dmin, 1);
	ck_assert_uint_le(dmax, cap);
	ck_assert_uint_le(dnew, cap);
}

START_TEST(test_detailed_creators)
{
	struct fixture fx;
	struct pool_stats st;
	char line[512], want[512];
	unsigned int i;
	char *s;

	make_pools(&fx);
	ck_assert_int_eq(pool_get_stats(fx.conn, &st, sizeof(st)), 0);
	s = dump_ok("detailed match conn");
	ck_assert_uint_eq(test_count_lines(s), 9);
	expected_line(fx.conn, want, sizeof(want));
	ck_assert_str_eq(line_of(s, 1, line, sizeof(line)), want);
	snprintf(want, sizeof(want), "      stride %zu bytes, %u buckets, %zu in shared free lists, "
	         "limit 0 (none)", st.stride, st.buckets, st.shared_free);
	ck_assert_str_eq(line_of(s, 2, line, sizeof(line)), want);
	/* the slab tier: one 16 KiB slab of 84 objects holds the conn pool's 128; what of it is
	 * resident, within the slabs */
	snprintf(want, sizeof(want), "      %zu slabs (%zu bytes), %zu objects free in them; ~",
	         st.slabs, st.slab_bytes, st.slab_free);
	line_of(s, 3, line, sizeof(line));
	ck_assert_msg(!strncmp(line, want, strlen(want)), "%s", line);
	ck_assert_uint_le(strtoull(line + strlen(want), NULL, 10), st.slab_bytes);
	ck_assert_str_eq(line + strlen(line) - strlen(" bytes resident"), " bytes resident");
	ck_assert_uint_eq(st.slab_bytes, st.slabs * 16384);
	ck_assert_uint_ge(st.slabs, 1);
	/* the thread caches: only this thread used conn, and its loaded magazine holds the 20 */
	check_cache_line(line_of(s, 4, line, sizeof(line)), fx.conn, st.cached, 1, 1);
	/* the cumulative counters, under their struct pool_stats names */
	snprintf(want, sizeof(want), "      since created: failed %zu, shared_get_objects %" PRIu64
	         ", shared_get_clusters %" PRIu64 ", shared_put_objects %" PRIu64
	         ", shared_put_clusters %" PRIu64 ", os_allocs %" PRIu64 ", os_releases %" PRIu64
	         ", gc_released_bytes %" PRIu64 ", lost %" PRIu64 ", slabs_released %" PRIu64
	         ", slab_get_objects %" PRIu64 ", slab_put_objects %" PRIu64
	         ", slab_purged_bytes %" PRIu64, st.failed,
	         st.shared_get_objects, st.shared_get_clusters, st.shared_put_objects,
	         st.shared_put_clusters, st.os_allocs, st.os_releases, st.gc_released_bytes,
	         st.lost, st.slabs_released, st.slab_get_objects, st.slab_put_objects,
	         st.slab_purged_bytes);
	ck_assert_str_eq(line_of(s, 5, line, sizeof(line)), want);
	ck_assert_uint_ge(st.os_allocs, 120);
	/* one line per pool_create() call, with what that call asked for and, at level admin
	 * (pool_dump()), the code that made the call */
	for (i = 6; i <= 7; i++) {
		static const char prefix[] = "      created as conn: 192 bytes/64, flags SHARED, at ";

		line_of(s, i, line, sizeof(line));
		ck_assert_msg(!strncmp(line, prefix, strlen(prefix)), "%s", line);
		/* make_pools() is static: dladdr() names the program and the offset */
		ck_assert_msg(strstr(line, "check_dump") != NULL, "%s", line);
	}
	free(s);
	s = dump_ok("match buf detailed");
	ck_assert_ptr_nonnull(strstr(s, "\n      since created: failed 2, shared_get_objects "));
	free(s);
	s = dump_ok("match buf detailed");
	ck_assert_int_eq(pool_get_stats(fx.buf, &st, sizeof(st)), 0);
	snprintf(want, sizeof(want), "      stride %zu bytes, ", st.stride);
	ck_assert_ptr_nonnull(strstr(s, want));
	ck_assert_ptr_nonnull(strstr(s, "limit 5\n"));
	ck_assert_ptr_nonnull(strstr(s, "      created as buf: 1000 bytes/16, flags none, at "));
	free(s);
	s = dump_ok("match tiny detailed");
	ck_assert_ptr_nonnull(strstr(s, "      created as tiny: 24 bytes/16, flags EXACT, at "));
	ck_assert_ptr_null(strstr(s, "caller"));   /* caller debugging is off */
	free(s);
	free_pools(&fx);
}
END_TEST

static struct pool_head *caller_pool;
static void *caller_objs[40];

static __attribute__((noinline)) void alloc_from_a(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		caller_objs[i] = pool_alloc(caller_pool);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void alloc_from_b(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		caller_objs[20 + i] = pool_alloc(caller_pool);
	__asm__ volatile("" ::: "memory");
}

START_TEST(test_detailed_callers)
{
	char line[512], sym[256];
	unsigned long addr_a, addr_b;
	long live_a, live_b;
	unsigned int i;
	char *s;

	/* caller changes the layout: set it before the first pool, as POOL_DEBUG would */
	ck_assert_int_eq(pool_parse_debugging("caller", NULL), 0);
	caller_pool = pool_create("traced", 64, 0);
	ck_assert_ptr_nonnull(caller_pool);
	alloc_from_a(12);
	alloc_from_b(5);
	for (i = 0; i < 12; i++)
		ck_assert_ptr_nonnull(caller_objs[i]);
	s = dump_ok("detailed");
	/*
	 * pool line, stride, slab, thread cache and counter lines, one creator, then the callers,
	 * most live first
	 */
	ck_assert_uint_eq(test_count_lines(s), 10);
	/* "caller <function>+<offset> (<file>:<line>) (<address>): <n> live objects" */
	ck_assert_int_eq(sscanf(line_of(s, 7, line, sizeof(line)), "      caller %255s", sym), 1);
	ck_assert_ptr_nonnull(strstr(line, " (check_dump.c:"));
	ck_assert_int_eq(sscanf(strrchr(line, '('), "(%lx): %ld live objects", &addr_a, &live_a),
	                 2);
	ck_assert_int_eq(live_a, 12);
	ck_assert_uint_ge(addr_a, (uintptr_t)alloc_from_a);
	ck_assert_uint_lt(addr_a, (uintptr_t)alloc_from_a + 4096);
	ck_assert_int_eq(sscanf(line_of(s, 8, line, sizeof(line)), "      caller %255s", sym), 1);
	ck_assert_int_eq(sscanf(strrchr(line, '('), "(%lx): %ld live objects", &addr_b, &live_b),
	                 2);
	ck_assert_int_eq(live_b, 5);
	ck_assert_uint_ge(addr_b, (uintptr_t)alloc_from_b);
	ck_assert_uint_lt(addr_b, (uintptr_t)alloc_from_b + 4096);
	free(s);
	/* freed objects are no longer live */
	for (i = 0; i < 12; i++)
		pool_free(caller_pool, caller_objs[i]);
	s = dump_ok("detailed");
	ck_assert_uint_eq(test_count_lines(s), 9);
	ck_assert_ptr_nonnull(strstr(s, ": 5 live objects\n"));
	free(s);
	s = dump_ok("detailed json");
	ck_assert_ptr_nonnull(strstr(s, "\"callers\": [{\"address\": \""));
	ck_assert_ptr_nonnull(strstr(s, "\"live\": 5}]"));
	free(s);
	for (i = 20; i < 25; i++)
		pool_free(caller_pool, caller_objs[i]);
	ck_assert_int_eq(pool_destroy(caller_pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* JSON and Prometheus, read back by real parsers                                             */
/* ------------------------------------------------------------------------------------------ */

/*
 * Checks each JSON type and prints "settings <version> <os_layer> <buckets> <cache_bytes>
 * <cluster> <decay_ms>", one line per pool "<name> <address> <the integers of json_ints, in
 * order> <shared> <exact> <creators listed>", then "total <pools> <matched> <limited> <the
 * integers of json_total_ints>".
 */
#define JSON_INTS "\"size\", \"align\", \"stride\", \"allocated\", \"allocated_bytes\", " \
	"\"used\", \"used_bytes\", \"cached\", \"in_use\", \"shared_free\", \"needed_avg\", " \
	"\"limit\", " \
	"\"creators\", \"buckets\", \"failed\", \"shared_get_objects\", \"shared_get_clusters\", " \
	"\"shared_put_objects\", \"shared_put_clusters\", \"os_allocs\", \"os_releases\", " \
	"\"gc_released_bytes\", \"lost\""
#define JSON_NB_INTS 23
#define JSON_TOTAL_INTS "\"allocated_bytes\", \"used_bytes\", \"cached_bytes\", " \
	"\"in_use_bytes\", " \
	"\"failed\", \"shared_get_objects\", \"shared_get_clusters\", \"shared_put_objects\", " \
	"\"shared_put_clusters\", \"os_allocs\", \"os_releases\", \"gc_released_bytes\", " \
	"\"lost\", \"os_allocated_bytes\", \"os_resident_bytes\""
#define JSON_NB_TOTAL_INTS 15

static const char json_script[] =
	"import json, sys\n"
	"text = open(sys.argv[1]).read()\n"
	"d = json.loads(text)\n"
	"assert \"failures\" not in text\n"
	"assert list(d) == [\"format\", \"settings\", \"pools\", \"total\"], d.keys()\n"
	"assert d[\"format\"] == 2 and type(d[\"format\"]) is int\n"
	"c = d[\"settings\"]\n"
	"assert isinstance(c[\"version\"], str) and isinstance(c[\"os_layer\"], str)\n"
	"for k in [\"buckets\", \"cache_bytes\", \"cluster\", \"decay_ms\"]:\n"
	"    assert type(c[k]) is int, k\n"
	"print(\"settings\", c[\"version\"], c[\"os_layer\"], c[\"buckets\"], c[\"cache_bytes\"], "
	"c[\"cluster\"], c[\"decay_ms\"])\n"
	"ints = [" JSON_INTS "]\n"
	"for p in d[\"pools\"]:\n"
	"    assert isinstance(p[\"name\"], str)\n"
	"    assert isinstance(p.get(\"address\", \"0x\"), str)\n"
	"    assert p.get(\"address\", \"0x\").startswith(\"0x\")\n"
	"    for k in ints:\n"
	"        assert type(p[k]) is int, k\n"
	"    assert type(p[\"shared\"]) is bool and type(p[\"exact\"]) is bool\n"
	"    for c in p.get(\"created_as\", []):\n"
	"        assert type(c[\"size\"]) is int and type(c[\"align\"]) is int\n"
	"        assert isinstance(c[\"name\"], str) and isinstance(c[\"flags\"], str)\n"
	"    tc = p.get(\"thread_caches\", 0)\n"
	"    if tc:\n"
	"        assert list(tc) == [\"threads\", \"caching\", \"objects\", \"magazine_objects\", "
	"\"magazine_bytes\", \"depth_new\", \"depth_min\", \"depth_max\"], tc\n"
	"        assert all(type(x) is int for x in tc.values()), tc\n"
	"        assert tc[\"caching\"] <= tc[\"threads\"], tc\n"
	"        assert tc[\"depth_min\"] <= tc[\"depth_max\"] <= tc[\"magazine_objects\"], tc\n"
	"        assert \"created_as\" in p, tc\n"
	"    else:\n"
	"        assert tc is None or (tc == 0 and \"created_as\" not in p), p\n"
	"    print(p[\"name\"], p.get(\"address\", \"-\"), *[p[k] for k in ints], "
	"int(p[\"shared\"]), int(p[\"exact\"]), len(p.get(\"created_as\", [])))\n"
	"t = d[\"total\"]\n"
	"tints = [" JSON_TOTAL_INTS "]\n"
	"for k in [\"pools\", \"matched\"] + tints:\n"
	"    assert type(t[k]) is int, k\n"
	"assert type(t[\"limited\"]) is bool\n"
	"print(\"total\", t[\"pools\"], t[\"matched\"], int(t[\"limited\"]), *[t[k] for k in tints])\n";

/* The values of JSON_INTS for a pool, from pool_get_stats(). */
static void json_ints_of(const struct pool_stats *st, uint64_t *v)
{
	const uint64_t w[JSON_NB_INTS] = {
		st->size, st->align, st->stride, st->allocated, st->allocated * st->stride, st->used,
		st->used * st->stride, st->cached, st->used - st->cached, st->shared_free,
		st->needed_avg, st->limit,
		st->creators, st->buckets, st->failed, st->shared_get_objects,
		st->shared_get_clusters, st->shared_put_objects, st->shared_put_clusters,
		st->os_allocs, st->os_releases, st->gc_released_bytes, st->lost,
	};

	memcpy(v, w, sizeof(w));
}

/* Read n unsigned decimal numbers from *p (blank-separated) into v. */
static void read_numbers(const char **p, uint64_t *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		char *end;

		v[i] = strtoull(*p, &end, 10);
		ck_assert_msg(end != *p, "number %u missing in '%s'", i, *p);
		*p = end;
	}
}

/* The line of json_script for `pool`: every integer as pool_get_stats() says. */
static void check_json_pool(const char *line, struct pool_head *pool, unsigned int creators,
                            int with_address)
{
	struct pool_stats st;
	char name[64], addr[32], want_addr[32];
	uint64_t v[JSON_NB_INTS], want[JSON_NB_INTS];
	const char *p;
	int shared, exact, ncreators, used;
	unsigned int i;

	ck_assert_int_eq(pool_get_stats(pool, &st, sizeof(st)), 0);
	ck_assert_int_eq(sscanf(line, "%63s %31s %n", name, addr, &used), 2);
	p = line + used;
	read_numbers(&p, v, JSON_NB_INTS);
	ck_assert_int_eq(sscanf(p, "%d %d %d", &shared, &exact, &ncreators), 3);
	snprintf(want_addr, sizeof(want_addr), "%p", (void *)pool);
	ck_assert_str_eq(name, pool_name(pool));
	ck_assert_str_eq(addr, with_address ? want_addr : "-");
	json_ints_of(&st, want);
	for (i = 0; i < JSON_NB_INTS; i++)
		ck_assert_msg(v[i] == want[i], "%s: integer %u is %llu, pool_get_stats() says %llu",
		              name, i, (unsigned long long)v[i], (unsigned long long)want[i]);
	ck_assert_int_eq(shared, !!(st.flags & POOL_F_SHARED));
	ck_assert_int_eq(exact, !!(st.flags & POOL_F_EXACT));
	ck_assert_int_eq(ncreators, (int)creators);
}

/* The settings line of json_script: what pool_version(), the stats and the config say. */
static void check_json_settings(const char *line, const char *os_layer)
{
	struct pool_config cfg;
	char want[256];

	pool_get_config(&cfg);
	snprintf(want, sizeof(want), "settings %s %s %u %zu %u %u", pool_version(), os_layer,
	         cfg.buckets, cfg.cache_bytes, cfg.cluster, cfg.decay_ms);
	ck_assert_str_eq(line, want);
}

/* The total line of json_script against the pools listed. */
static void check_json_total(const char *line, struct pool_head *const *pools, unsigned int n,
                             size_t matched, int limited)
{
	uint64_t v[JSON_NB_TOTAL_INTS], want[JSON_NB_TOTAL_INTS] = { 0 }, ints[JSON_NB_INTS];
	size_t tp, tm;
	int tl, used;
	unsigned int i, k;
	const char *p;

	ck_assert_int_eq(sscanf(line, "total %zu %zu %d %n", &tp, &tm, &tl, &used), 3);
	ck_assert_uint_eq(tp, n);
	ck_assert_uint_eq(tm, matched);
	ck_assert_int_eq(tl, limited);
	p = line + used;
	read_numbers(&p, v, JSON_NB_TOTAL_INTS);
	for (i = 0; i < n; i++) {
		struct pool_stats st;

		pool_get_stats(pools[i], &st, sizeof(st));
		json_ints_of(&st, ints);
		want[0] += st.allocated * st.stride;
		want[1] += st.used * st.stride;
		want[2] += st.cached * st.stride;
		want[3] += (st.used - st.cached) * st.stride;
		for (k = 0; k < 9; k++)   /* failed .. lost */
			want[4 + k] += ints[14 + k];
	}
	for (k = 0; k < 13; k++)
		ck_assert_msg(v[k] == want[k], "total integer %u is %llu, the pools sum to %llu", k,
		              (unsigned long long)v[k], (unsigned long long)want[k]);
}

START_TEST(test_json_parsed_back)
{
	struct fixture fx;
	char line[1024];
	struct pool_head *order[3];
	struct pool_stats st;
	unsigned int i;
	char *s, *out;

	make_pools(&fx);
	s = dump_ok("json");
	out = test_run_python(s, json_script);
	ck_assert_uint_eq(test_count_lines(out), 5);
	order[0] = fx.conn;
	order[1] = fx.buf;
	order[2] = fx.tiny;
	check_json_settings(line_of(out, 0, line, sizeof(line)), test_os_stats().layer);
	for (i = 0; i < 3; i++)
		check_json_pool(line_of(out, i + 1, line, sizeof(line)), order[i], 0, 1);
	check_json_total(line_of(out, 4, line, sizeof(line)), order, 3, 3, 0);
	/* the counters moved: buf failed twice, every pool got objects from the OS layer */
	ck_assert_ptr_nonnull(strstr(s, "\"failed\": 2, "));
	pool_get_stats(fx.buf, &st, sizeof(st));
	ck_assert_uint_eq(st.failed, 2);
	ck_assert_uint_ge(st.os_allocs, 5);
	free(out);
	free(s);

	/* sorted, cut and detailed: still valid JSON, creators listed, limited reported */
	s = dump_ok("json bysize detailed 2");
	out = test_run_python(s, json_script);
	ck_assert_uint_eq(test_count_lines(out), 4);
	check_json_pool(line_of(out, 1, line, sizeof(line)), fx.buf, 1, 1);
	check_json_pool(line_of(out, 2, line, sizeof(line)), fx.conn, 2, 1);
	order[0] = fx.buf;
	order[1] = fx.conn;
	check_json_total(line_of(out, 3, line, sizeof(line)), order, 2, 3, 1);
	free(out);
	free(s);

	/* below level admin: no address, the rest the same */
	s = NULL;
	{
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);

		ck_assert_int_eq(pool_cli_exec_level("pools show json detailed", f,
		                                     POOL_CLI_OPERATOR), 0);
		fclose(f);
	}
	ck_assert_ptr_null(strstr(s, "\"address\""));
	out = test_run_python(s, json_script);
	check_json_pool(line_of(out, 1, line, sizeof(line)), fx.conn, 2, 0);
	free(out);
	free(s);

	/* no pool at all */
	s = dump_ok("json match nothing");
	out = test_run_python(s, json_script);
	ck_assert_int_eq(strncmp(line_of(out, 1, line, sizeof(line)), "total 0 0 0 0 0 0 0 0 ", 22),
	                 0);
	free(out);
	free(s);
	free_pools(&fx);
}
END_TEST

/*
 * The parser of the exposition format from python3-prometheus-client. Prints each family's
 * name, type and whether it has help, then each sample; fails on anything it cannot parse.
 */
static const char prom_script[] =
	"import sys\n"
	"from prometheus_client.parser import text_string_to_metric_families\n"
	"for f in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
	"    assert f.documentation, f.name\n"
	"    print(\"family\", f.name, f.type)\n"
	"    for s in f.samples:\n"
	"        l = s.labels\n"
	"        if s.name == \"libpool_info\":\n"
	"            print(\"info\", l[\"version\"], l[\"os_layer\"], l[\"buckets\"], "
	"l[\"cache_bytes\"], l[\"cluster\"], l[\"decay_ms\"], int(s.value))\n"
	"        elif s.name == \"libpool_pool_info\":\n"
	"            print(\"poolinfo\", l[\"pool\"], l[\"shared\"], l[\"exact\"], int(s.value))\n"
	"        else:\n"
	"            print(\"sample\", s.name, l.get(\"pool\", \"-\"), int(s.value))\n";

/* The per-pool samples, gauges then counters, and their values from pool_get_stats(). */
static const char *const prom_per_pool[] = {
	"libpool_pool_object_size_bytes", "libpool_pool_alignment_bytes",
	"libpool_pool_stride_bytes", "libpool_pool_allocated_objects",
	"libpool_pool_allocated_bytes", "libpool_pool_used_objects", "libpool_pool_used_bytes",
	"libpool_pool_cached_objects", "libpool_pool_in_use_objects",
	"libpool_pool_shared_free_objects",
	"libpool_pool_needed_avg_objects", "libpool_pool_limit_objects",
	"libpool_pool_reserve_objects", "libpool_pool_creators",
	"libpool_pool_slabs", "libpool_pool_slab_bytes", "libpool_pool_slab_free_objects",
	"libpool_pool_failed_total", "libpool_pool_shared_get_objects_total",
	"libpool_pool_shared_get_clusters_total", "libpool_pool_shared_put_objects_total",
	"libpool_pool_shared_put_clusters_total", "libpool_pool_os_allocs_total",
	"libpool_pool_os_releases_total", "libpool_pool_gc_released_bytes_total",
	"libpool_pool_lost_total", "libpool_pool_slabs_released_total",
	"libpool_pool_slab_get_objects_total", "libpool_pool_slab_put_objects_total",
	"libpool_pool_slab_purged_bytes_total",
};
#define PROM_GAUGES   17u
#define PROM_COUNTERS 13u

static uint64_t prom_expected(const char *metric, const struct pool_stats *st)
{
	const uint64_t v[] = { st->size, st->align, st->stride, st->allocated,
	                       st->allocated * st->stride, st->used, st->used * st->stride,
	                       st->cached, st->used - st->cached, st->shared_free,
	                       st->needed_avg, st->limit,
	                       st->reserve, st->creators, st->slabs, st->slab_bytes, st->slab_free,
	                       st->failed, st->shared_get_objects,
	                       st->shared_get_clusters, st->shared_put_objects,
	                       st->shared_put_clusters, st->os_allocs, st->os_releases,
	                       st->gc_released_bytes, st->lost, st->slabs_released,
	                       st->slab_get_objects, st->slab_put_objects,
	                       st->slab_purged_bytes };
	unsigned int i;

	for (i = 0; i < sizeof(prom_per_pool) / sizeof(prom_per_pool[0]); i++)
		if (!strcmp(metric, prom_per_pool[i]))
			return v[i];
	ck_abort_msg("unexpected metric %s", metric);
	return 0;
}

/* The pool a Prometheus label names. */
static struct pool_head *prom_pool(const char *label, struct fixture *fx, struct pool_head *dup)
{
	if (!strcmp(label, "conn"))
		return fx->conn;
	if (!strcmp(label, "conn#2"))
		return dup;
	if (!strcmp(label, "buf"))
		return fx->buf;
	if (!strcmp(label, "tiny"))
		return fx->tiny;
	ck_abort_msg("unexpected pool label %s", label);
	return NULL;
}

START_TEST(test_prometheus_parsed_back)
{
	struct fixture fx;
	struct pool_head *dup;
	struct pool_stats st;
	char *s, *out, *line, *save = NULL;
	unsigned int families = 0, samples = 0, counters = 0, pool_samples = 0, infos = 0;
	unsigned int pool_infos = 0;

	make_pools(&fx);
	/* a second pool named conn (not shared: no merge) gets the label value conn#2 */
	dup = pool_create("conn", 4096, 0);
	ck_assert_ptr_nonnull(dup);
	s = dump_ok("prometheus");
	/* the format's own rules, line by line */
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
			ck_assert_int_eq(strncmp(line + 7, "libpool_", 8), 0);
			if (!strncmp(line, "# TYPE ", 7) && strstr(line, " counter"))
				ck_assert_ptr_nonnull(strstr(line, "_total counter"));
			/* one name for failures everywhere; base units only */
			ck_assert_ptr_null(strstr(line, "failures"));
			ck_assert_ptr_null(strstr(line, "_ms "));
			continue;
		}
		/* a sample: name{labels} value, the value an unsigned integer */
		ck_assert_int_eq(strncmp(line, "libpool_", 8), 0);
		ck_assert_uint_eq(strspn(strrchr(line, ' ') + 1, "0123456789"),
		                  strlen(strrchr(line, ' ') + 1));
	}
	free(s);
	s = dump_ok("prometheus");
	out = test_run_python(s, prom_script);
	save = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char a[128], b[128], c[64], d[64], e[64], want[256];
		uint64_t v;

		if (sscanf(line, "family %127s %63s", a, c) == 2) {
			families++;
			counters += !strcmp(c, "counter");
			continue;
		}
		if (!strncmp(line, "info ", 5)) {
			struct pool_config cfg;

			pool_get_config(&cfg);
			snprintf(want, sizeof(want), "info %s %s %u %zu %u %u 1", pool_version(),
			         test_os_stats().layer, cfg.buckets, cfg.cache_bytes, cfg.cluster,
			         cfg.decay_ms);
			ck_assert_str_eq(line, want);
			infos++;
			continue;
		}
		if (sscanf(line, "poolinfo %127s %63s %63s %63s", b, c, d, e) == 4) {
			pool_get_stats(prom_pool(b, &fx, dup), &st, sizeof(st));
			ck_assert_int_eq(atoi(c), !!(st.flags & POOL_F_SHARED));
			ck_assert_int_eq(atoi(d), !!(st.flags & POOL_F_EXACT));
			ck_assert_str_eq(e, "1");
			pool_infos++;
			continue;
		}
		ck_assert_int_eq(sscanf(line, "sample %127s %127s %" SCNu64, a, b, &v), 3);
		samples++;
		if (strcmp(b, "-") == 0)
			continue;
		pool_samples++;
		pool_get_stats(prom_pool(b, &fx, dup), &st, sizeof(st));
		if (!strcmp(a, "libpool_pool_resident_bytes")) {
			/* the kernel's figure (mincore()), within what the pool holds */
			ck_assert_uint_le(v, st.slab_bytes > st.allocated * st.stride ?
			                  st.slab_bytes : st.allocated * st.stride);
			continue;
		}
		ck_assert_msg(prom_expected(a, &st) == v, "%s{pool=%s} = %llu", a, b,
		              (unsigned long long)v);
	}
	/*
	 * libpool_info, libpool_pool_info, the gauges (libpool_pool_resident_bytes among them) and
	 * counters of each pool, then pools, allocated, resident, os allocated, os resident
	 */
	ck_assert_uint_eq(families, 2 + PROM_GAUGES + 1 + PROM_COUNTERS + 5);
	ck_assert_uint_eq(counters, PROM_COUNTERS);
	ck_assert_uint_eq(infos, 1);
	ck_assert_uint_eq(pool_infos, 4);
	ck_assert_uint_eq(pool_samples, (PROM_GAUGES + 1 + PROM_COUNTERS) * 4);
	ck_assert_uint_eq(samples, (PROM_GAUGES + 1 + PROM_COUNTERS) * 4 + 5);
	/* the counters are not all zero: buf failed twice */
	pool_get_stats(fx.buf, &st, sizeof(st));
	ck_assert_uint_eq(st.failed, 2);
	free(out);
	free(s);
	s = dump_ok("prometheus match conn 1");
	ck_assert_ptr_nonnull(strstr(s, "libpool_pools 1\n"));
	ck_assert_ptr_null(strstr(s, "conn#2"));
	free(s);
	s = dump_ok("prometheus match conn byusage");   /* conn#2 holds nothing: hidden */
	ck_assert_ptr_nonnull(strstr(s, "libpool_pools 1\n"));
	ck_assert_ptr_null(strstr(s, "conn#2"));
	free(s);
	ck_assert_int_eq(pool_destroy(dup), 0);
	free_pools(&fx);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* What is resident beside what is held                                                       */
/* ------------------------------------------------------------------------------------------ */

/* The unsigned number after the first `key` in s, which must be there. */
static uint64_t number_after(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	ck_assert_msg(p != NULL, "no '%s' in: %.3000s", key, s);
	return strtoull(p + strlen(key), NULL, 10);
}

/*
 * `pools show` says what of a pool's memory is resident beside what it holds (allocated): in
 * the JSON ("resident_bytes", per pool and in the total), in Prometheus
 * (libpool_pool_resident_bytes, libpool_resident_bytes), in the text (the Total line, and the
 * slab line of `detailed`). After a burst whose objects were written and mostly freed, the
 * purge gives the pages of the free ones to the kernel: allocated stays (the slabs keep live
 * objects), resident falls to about what the live objects' pages are.
 */
START_TEST(test_resident_beside_allocated)
{
	enum { N = 512, KEEP_EVERY = 8 };
	struct pool_head *p = pool_create("resident", 4096, 0);
	struct pool_stats st;
	uint64_t burst, after, held, total;
	void **o = malloc(N * sizeof(*o));
	char *s;
	int i;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(o);
	for (i = 0; i < N; i++) {
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
		memset(o[i], 0x5a, 4096);
	}
	s = dump_ok("json match resident");
	burst = number_after(s, "\"resident_bytes\": ");
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	/* every object written: their pages are resident, within the slabs' */
	ck_assert_uint_ge(burst, (uint64_t)N * 4096);
	ck_assert_uint_le(burst, st.slab_bytes);
	ck_assert_uint_eq(number_after(strstr(s, "\"total\""), "\"resident_bytes\": "), burst);
	free(s);

	for (i = 0; i < N; i++)
		if (i % KEEP_EVERY)
			pool_free(p, o[i]);
	pool_thread_flush();
	pool_flush(p);
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	held = st.allocated * st.stride;
	ck_assert_uint_gt(st.slab_purged_bytes, 0);
	s = dump_ok("json match resident");
	after = number_after(s, "\"resident_bytes\": ");
	free(s);
	/* the live objects' pages stay; the pages purged are not resident */
	ck_assert_uint_ge(after, (uint64_t)(N / KEEP_EVERY) * 4096);
	ck_assert_uint_le(after + st.slab_purged_bytes, st.slab_bytes);
	ck_assert_msg(after < held / 2, "resident %llu of %llu bytes held after the purge",
	              (unsigned long long)after, (unsigned long long)held);

	s = dump_ok("prometheus match resident");
	ck_assert_uint_le(number_after(s, "\nlibpool_pool_resident_bytes{pool=\"resident\"} "),
	                  after + 65536);
	ck_assert_uint_le(number_after(s, "\nlibpool_resident_bytes "), after + 65536);
	free(s);
	s = dump_ok("match resident");
	total = number_after(s, " in use, ~");
	ck_assert_msg(strstr(s, " resident.\n") != NULL, "%s", s);
	ck_assert_uint_le(total, after + 65536);
	ck_assert_uint_lt(total, held);
	free(s);
	s = dump_ok("detailed match resident");
	ck_assert_uint_le(number_after(s, " objects free in them; ~"), after + 65536);
	ck_assert_ptr_nonnull(strstr(s, " bytes resident\n"));
	free(s);

	for (i = 0; i < N; i += KEEP_EVERY)
		pool_free(p, o[i]);
	free(o);
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* pool_json_write_string()                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* pool_json_write_string(s) into a malloc()ed string; the call must succeed. */
static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	errno = 1234;
	ck_assert_int_eq(pool_json_write_string(f, s), 0);
	ck_assert_int_eq(errno, 1234);   /* unchanged on success */
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

START_TEST(test_json_string_escapes)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "\"\"" },
		{ "conn", "\"conn\"" },
		{ "a\"b\\c/d", "\"a\\\"b\\\\c/d\"" },
		{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
		{ "\x01\x1f\x7f x", "\"\\u0001\\u001f\\u007f x\"" },
		{ "\x1b[0m", "\"\\u001b[0m\"" },
		/* well-formed UTF-8 passes through: 2, 3 and 4 bytes, the extremes of each */
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\"" },
		{ "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",
		  "\"\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\"" },
		{ "\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
		  "\"\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"" },
		/* line ends of JavaScript */
		{ "a\xe2\x80\xa8" "b\xe2\x80\xa9", "\"a\\u2028b\\u2029\"" },
		/* ill-formed: one U+FFFD per maximal subpart */
		{ "\xff", "\"\\ufffd\"" },
		{ "\x80x", "\"\\ufffdx\"" },
		{ "\xc3", "\"\\ufffd\"" },                          /* cut at the end */
		{ "\xc3x", "\"\\ufffdx\"" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },               /* overlong '/' */
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },    /* overlong, 3 bytes */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },    /* surrogate U+D800 */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },   /* U+110000 */
		{ "\xf5\x80", "\"\\ufffd\\ufffd\"" },
		{ "\xe2\x82x", "\"\\ufffdx\"" },                    /* a 2-byte maximal subpart */
		{ "\xf0\x9f\x98" "a", "\"\\ufffda\"" },             /* a 3-byte maximal subpart */
		{ "\xe2\x82\xac\xe2\x82", "\"\xe2\x82\xac\\ufffd\"" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = json_of(cases[i].in);

		ck_assert_msg(strcmp(s, cases[i].out) == 0, "case %u: got %s, want %s", i, s,
		              cases[i].out);
		free(s);
	}
}
END_TEST

/*
 * Reads lines "<input in hex>\t<JSON literal>": the file must be valid UTF-8 (strict decoding),
 * each literal must parse, and give the input as Python decodes it with U+FFFD replacement.
 */
static const char json_oracle_script[] =
	"import json, sys\n"
	"n = 0\n"
	"for line in open(sys.argv[1], encoding=\"utf-8\", errors=\"strict\"):\n"
	"    h, j = line.rstrip(\"\\n\").split(\"\\t\", 1)\n"
	"    want = bytes.fromhex(h).decode(\"utf-8\", \"replace\")\n"
	"    got = json.loads(j)\n"
	"    assert got == want, (h, j, got, want)\n"
	"    n += 1\n"
	"print(n)\n";

START_TEST(test_json_string_python_oracle)
{
	/* bytes that start, continue or break UTF-8 sequences, plus ASCII and controls */
	static const unsigned char alphabet[] = {
		'a', 'Z', ' ', '"', '\\', '/', '\n', '\t', 0x01, 0x1f, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
		0xa0, 0xa8, 0xa9, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xdf, 0xe0, 0xe2, 0xed, 0xee, 0xef,
		0xf0, 0xf4, 0xf5, 0xff,
	};
	uint64_t x = 0x2545F4914F6CDD1Dull;
	char *text = NULL, *out;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	unsigned int i, k, n;

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < 4000; i++) {
		unsigned char in[48];

		/* xorshift64 (Marsaglia 2003) */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = (unsigned int)(x % 40);
		for (k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			in[k] = alphabet[(x >> 11) % sizeof(alphabet)];
		}
		in[n] = 0;
		for (k = 0; k < n; k++)
			fprintf(f, "%02x", in[k]);
		fputc('\t', f);
		ck_assert_int_eq(pool_json_write_string(f, (const char *)in), 0);
		fputc('\n', f);
	}
	ck_assert_int_eq(fclose(f), 0);
	out = test_run_python(text, json_oracle_script);
	ck_assert_str_eq(out, "4000\n");
	free(out);
	free(text);
}
END_TEST

START_TEST(test_json_string_errors)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	errno = 0;
	ck_assert_int_eq(pool_json_write_string(NULL, "x"), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_json_write_string(f, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_eq(len, 0);   /* nothing written */
	free(buf);
	/* a stream that cannot be written: the write's error comes back */
	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		errno = 0;
		ck_assert_int_eq(pool_json_write_string(f, "abc\n\xff"), -1);
		ck_assert_int_eq(errno, ENOSPC);
		fclose(f);
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void check_refused(const char *args, const char *msg)
{
	int r;
	char *s = test_capture(pool_dump, args, &r);

	ck_assert_msg(r == -1, "pool_dump(\"%s\") returned %d", args, r);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(test_count_lines(s), 1);
	ck_assert_msg(strstr(s, msg) != NULL, "pool_dump(\"%s\"): '%s' lacks '%s'", args, s, msg);
	ck_assert_ptr_nonnull(strstr(s, "Try 'help'.\n"));
	free(s);
}

START_TEST(test_argument_errors)
{
	struct fixture fx;
	char big[300], want[128];

	make_pools(&fx);
	check_refused("bogus", "Unknown option 'bogus' for 'pools show'");
	check_refused("byname bogus", "Unknown option 'bogus'");
	check_refused("byname bysize", "Option 'bysize' conflicts with 'byname'");
	check_refused("byusage byusage", "Option 'byusage' given twice");
	check_refused("json json", "Option 'json' given twice");
	check_refused("json prometheus", "Option 'prometheus' conflicts with 'json'");
	check_refused("detailed detailed", "Option 'detailed' given twice");
	check_refused("match", "Option 'match' needs a prefix");
	check_refused("match a match b", "Option 'match' given twice");
	check_refused("0", "Invalid count '0'");
	check_refused("12x", "Invalid count '12x'");
	check_refused("99999999999999999999999999", "Invalid count '99999999999999999999999999'");
	check_refused("1 2", "Invalid count '2' (a count was already given)");
	check_refused("-1", "Unknown option '-1'");
	check_refused("detailed prometheus", "'detailed' cannot be combined with 'prometheus'");
	check_refused("JSON", "Unknown option 'JSON'");
	/* client bytes come back printable and cut */
	check_refused("bo\x01gus\xff", "Unknown option 'bo\\x01gus\\xff'");
	check_refused("it's", "Unknown option 'it\\x27s'");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	snprintf(want, sizeof(want), "Unknown option '%.64s...' for", big);
	check_refused(big, want);
	/* no stream: nothing to write to */
	errno = 0;
	ck_assert_int_eq(pool_dump(NULL, ""), -1);
	ck_assert_int_eq(errno, EINVAL);
	free_pools(&fx);
}
END_TEST

/* A stream that cannot be written: the error comes back. */
START_TEST(test_write_error)
{
	struct fixture fx;
	FILE *f;

	make_pools(&fx);
	f = fopen("/dev/full", "w");
	if (f) {   /* without /dev/full in this sandbox there is nothing to check */
		setvbuf(f, NULL, _IONBF, 0);
		errno = 0;
		ck_assert_int_eq(pool_dump(f, NULL), -1);
		ck_assert_int_eq(errno, ENOSPC);
		fclose(f);
	}
	free_pools(&fx);
}
END_TEST

/*
 * The same for pool_profile_dump(), in every format, into a stream buffered as fopen() makes
 * it (the failed write is the final flush's) and into an unbuffered one (it is the first
 * write's): the errno of that write, ENOSPC on /dev/full, as pool_dump() gives.
 */
START_TEST(test_profile_write_error)
{
	static const char *const formats[] = { "", "json", "prometheus", "heap", "folded" };
	struct pool_head *p = pool_create("profiled", 64, 0);
	void *o[64];
	unsigned int i, unbuffered;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pool_profile_start(1), 0);      /* every allocation sampled */
	for (i = 0; i < 64; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	pool_profile_stop();
	for (unbuffered = 0; unbuffered < 2; unbuffered++) {
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			FILE *f = fopen("/dev/full", "w");
			int r;

			if (!f)   /* without /dev/full in this sandbox there is nothing to check */
				return;
			if (unbuffered)
				setvbuf(f, NULL, _IONBF, 0);
			errno = 0;
			r = pool_profile_dump(f, formats[i]);
			ck_assert_msg(r == -1 && errno == ENOSPC, "pool_profile_dump(\"%s\"), %s: "
			              "returned %d, errno %d (%s)", formats[i],
			              unbuffered ? "unbuffered" : "buffered", r, errno, strerror(errno));
			fclose(f);
		}
	}
	for (i = 0; i < 64; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* POOL_STATS_ON_EXIT                                                                         */
/* ------------------------------------------------------------------------------------------ */

static atomic_int exit_child_stop;

static void *exit_child_churn(void *arg)
{
	struct pool_head *p = arg;

	while (!atomic_load(&exit_child_stop)) {
		void *o = pool_alloc(p);

		pool_free(p, o);
	}
	return NULL;
}

static int exit_from_walk(struct pool_head *pool, void *arg)
{
	(void)pool;
	(void)arg;
	exit(5);   /* with the pool list lock held */
}

static pthread_barrier_t exit_walk_started;

/* A callback that never returns: its thread holds the pool list lock for good. */
static int stuck_in_walk(struct pool_head *pool, void *arg)
{
	(void)pool;
	(void)arg;
	pthread_barrier_wait(&exit_walk_started);
	for (;;)
		pause();
	return 0;
}

static void *walk_and_stick(void *arg)
{
	(void)arg;
	pool_for_each(stuck_in_walk, NULL);
	return NULL;
}

/*
 * The program check_dump runs as a child (`check_dump --exit-child <mode>`), so that
 * POOL_STATS_ON_EXIT is read by the library's constructor as in any program. Returns -1
 * without those arguments (run the suite).
 */
static int exit_child(int argc, char **argv)
{
	struct pool_head *a, *b;
	const char *mode;
	void *o[10];
	unsigned int i;
	pthread_t t;
	pid_t pid;
	int st;

	if (argc != 3 || strcmp(argv[1], "--exit-child") != 0)
		return -1;
	mode = argv[2];
	a = pool_create("exit_a", 64, 0);
	b = pool_create("exit_b", 256, 0);
	if (!a || !b)
		return 100;
	for (i = 0; i < 10; i++)
		o[i] = pool_alloc(i < 7 ? a : b);
	if (!strcmp(mode, "pools"))
		exit(3);
	if (!strcmp(mode, "destroyed")) {
		for (i = 0; i < 10; i++)
			pool_free(i < 7 ? a : b, o[i]);
		pool_thread_flush();
		if (pool_destroy(a) != 0 || pool_destroy(b) != 0)
			return 101;
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		/* the child prints its own pools; a grandchild that _exit()s prints nothing */
		pid = fork();
		if (pid == 0) {
			if (fork() == 0)
				_exit(0);
			wait(NULL);
			pool_free(a, o[0]);
			pool_thread_flush();   /* out of the cache: no longer counted as used */
			exit(0);
		}
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? 10 + WEXITSTATUS(st) : 102;
	}
	if (!strcmp(mode, "threads")) {
		/* a thread still allocating while the process exits */
		if (pthread_create(&t, NULL, exit_child_churn, a) != 0)
			return 103;
		return 4;
	}
	if (!strcmp(mode, "locked"))
		pool_for_each(exit_from_walk, NULL);
	if (!strcmp(mode, "locked-other")) {
		/* another thread holds the pool list lock for good */
		pthread_barrier_init(&exit_walk_started, NULL, 2);
		if (pthread_create(&t, NULL, walk_and_stick, NULL) != 0)
			return 105;
		pthread_barrier_wait(&exit_walk_started);
		return 6;
	}
	return 104;
}

/* Run `check_dump --exit-child <mode>` with POOL_STATS_ON_EXIT=<env> (unset if NULL). */
static int run_exit_child(const char *env, const char *mode, char *out, size_t size)
{
	char *argv[] = { "check_dump", "--exit-child", (char *)mode, NULL };
	int status = test_run_self(argv, "POOL_STATS_ON_EXIT", env, out, size);

	ck_assert_msg(WIFEXITED(status), "the child died: status 0x%x, stderr:\n%s", status, out);
	return WEXITSTATUS(status);
}

START_TEST(test_stats_on_exit)
{
	static char out[65536];
	char *json;

	/* off: unset, empty or 0 */
	ck_assert_int_eq(run_exit_child(NULL, "pools", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(run_exit_child("", "pools", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(run_exit_child("0", "pools", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "");

	/* 1: pools show, the exit status kept */
	ck_assert_int_eq(run_exit_child("1", "pools", out, sizeof(out)), 3);
	ck_assert_int_eq(strncmp(out, "libpool: pools at exit of process ", 34), 0);
	ck_assert_ptr_nonnull(strstr(out, " (POOL_STATS_ON_EXIT=1):\nDumping pools usage. "));
	/* 7 and 3 objects taken, 16 at a time from the slab tier */
	ck_assert_ptr_nonnull(strstr(out, "\n  - Pool exit_a (64 bytes/16) : 16 allocated"));
	ck_assert_ptr_nonnull(strstr(out, "\n  - Pool exit_b (256 bytes/16) : 16 allocated"));
	ck_assert_ptr_nonnull(strstr(out, ", @0x"));   /* the process's own stderr: admin */
	ck_assert_ptr_nonnull(strstr(out, "\nTotal: 2 pools, "));

	/* other values are the arguments of pools show */
	ck_assert_int_eq(run_exit_child("json byname", "pools", out, sizeof(out)), 3);
	json = strchr(out, '\n');
	ck_assert_ptr_nonnull(json);
	free(test_run_python(json + 1, "import json, sys\n"
	                          "d = json.load(open(sys.argv[1]))\n"
	                          "assert [p[\"name\"] for p in d[\"pools\"]] == "
	                          "[\"exit_a\", \"exit_b\"]\n"));
	/* arguments `pools show` refuses: said at start, naming the variable; nothing at exit */
	ck_assert_int_eq(run_exit_child("bogus", "pools", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "libpool: ignoring POOL_STATS_ON_EXIT='bogus' (expected 1, or the "
	                 "arguments of `pools show`): Unknown option 'bogus' for 'pools show' "
	                 "(expected pools show [byname|bysize|byusage] [detailed] [match <prefix>] "
	                 "[<max>] [json|prometheus]). No statistics at exit.\n");
	ck_assert_int_eq(run_exit_child("detailed prometheus", "pools", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "libpool: ignoring POOL_STATS_ON_EXIT='detailed prometheus' "
	                 "(expected 1, or the arguments of `pools show`): Option 'detailed' cannot "
	                 "be combined with 'prometheus' in 'pools show'. No statistics at exit.\n");

	/* pools destroyed before exit are not there */
	ck_assert_int_eq(run_exit_child("1", "destroyed", out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "\nTotal: 0 pools, 0 bytes allocated"));

	/* a forked child that calls exit() prints its own; _exit() prints nothing */
	ck_assert_int_eq(run_exit_child("1", "fork", out, sizeof(out)), 10);
	ck_assert_uint_eq(test_count(out, "libpool: pools at exit of process "), 2);
	/* the parent: 7 handed out, the other 9 of the refill in its cache (in a ThreadSanitizer
	 * build, in the shared lists) */
	ck_assert_uint_eq(test_count(out, "  - Pool exit_a (64 bytes/16) : 16 allocated (1024 "
	                              "bytes), 16 used (~9 by") +
	                  test_count(out, "  - Pool exit_a (64 bytes/16) : 16 allocated (1024 "
	                              "bytes), 7 used (~0 by"), 1);
	ck_assert_uint_eq(test_count(out, "  - Pool exit_a (64 bytes/16) : 16 allocated (1024 "
	                              "bytes), 6 used"), 1);   /* the child freed one, flushed */

	/* a thread still allocating: printed, no crash */
	ck_assert_int_eq(run_exit_child("1", "threads", out, sizeof(out)), 4);
	ck_assert_ptr_nonnull(strstr(out, "\n  - Pool exit_a (64 bytes/16) : "));

	/* exit() from a pool_for_each() callback: the dump runs under the walk's hold */
	ck_assert_int_eq(run_exit_child("1", "locked", out, sizeof(out)), 5);
	ck_assert_ptr_nonnull(strstr(out, "\n  - Pool exit_a (64 bytes/16) : 16 allocated"));
	ck_assert_ptr_nonnull(strstr(out, "\nTotal: 2 pools, "));
	/* another thread holds the pool list lock for good: a bounded wait, a word, no hang */
	ck_assert_int_eq(run_exit_child("1", "locked-other", out, sizeof(out)), 6);
	ck_assert_str_eq(out, "libpool: POOL_STATS_ON_EXIT: the pool list stayed locked for 1 s "
	                 "at exit: no statistics.\n");
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Threads: dumps while pools come and go and objects move                                    */
/* ------------------------------------------------------------------------------------------ */

static atomic_int churn_stop;

static void *churn(void *arg)
{
	unsigned long i = 0;

	(void)arg;
	while (!atomic_load(&churn_stop)) {
		struct pool_head *p = pool_create("churn", 64 + (i++ % 4) * 64, 0);
		void *o[8];
		unsigned int k;

		ck_assert_ptr_nonnull(p);
		for (k = 0; k < 8; k++)
			o[k] = pool_alloc(p);
		for (k = 0; k < 8; k++)
			pool_free(p, o[k]);
		pool_thread_flush();
		ck_assert_int_eq(pool_destroy(p), 0);
	}
	return NULL;
}

static void *alloc_free(void *arg)
{
	struct pool_head *p = arg;
	void *o[32];
	unsigned int k;

	while (!atomic_load(&churn_stop)) {
		for (k = 0; k < 32; k++)
			o[k] = pool_alloc(p);
		for (k = 0; k < 32; k++)
			pool_free(p, o[k]);
	}
	pool_thread_flush();
	return NULL;
}

START_TEST(test_dump_while_churning)
{
	struct pool_head *stable = pool_create("stable", 128, 0);
	pthread_t t1, t2;
	unsigned int i;

	ck_assert_ptr_nonnull(stable);
	atomic_store(&churn_stop, 0);
	ck_assert_int_eq(pthread_create(&t1, NULL, churn, NULL), 0);
	ck_assert_int_eq(pthread_create(&t2, NULL, alloc_free, stable), 0);
	for (i = 0; i < 300; i++) {
		char *s = dump_ok(i % 3 == 0 ? NULL : i % 3 == 1 ? "bysize detailed" : "json");
		size_t pools = 0;
		unsigned int n = 0;
		const char *p = s;

		if (i % 3 != 2) {
			/* every pool line is whole, and the total counts exactly the lines shown */
			while ((p = strstr(p, "  - Pool "))) {
				char name[64];
				size_t a, b, stride_bytes;

				ck_assert_int_eq(sscanf(p, "  - Pool %63s (%zu bytes/%*u) : %zu allocated "
				                        "(%zu bytes)", name, &a, &b, &stride_bytes), 4);
				ck_assert_uint_eq(stride_bytes, b * a);   /* stride == size here */
				n++;
				p++;
			}
			p = strstr(s, "Total: ");
			ck_assert_ptr_nonnull(p);
			ck_assert_int_eq(sscanf(p, "Total: %zu pools", &pools), 1);
			ck_assert_uint_eq(pools, n);
			ck_assert_uint_ge(n, 1);
			ck_assert_uint_le(n, 2);
		} else {
			ck_assert_ptr_nonnull(strstr(s, "\"total\": {\"pools\": "));
		}
		free(s);
	}
	atomic_store(&churn_stop, 1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	ck_assert_int_eq(pool_destroy(stable), 0);
}
END_TEST

/*
 * `detailed` tells each pool's thread caches: three live threads holding objects of a pool and
 * this one none (text and JSON), none once they exit; a pool made after every cache slot was
 * taken has none.
 */
static struct pool_head *tc_pool;
static pthread_barrier_t tc_ready, tc_done;

static void *tc_worker(void *arg)
{
	void *objs[50];
	unsigned int i;

	(void)arg;
	for (i = 0; i < 50; i++)
		objs[i] = pool_alloc(tc_pool);
	for (i = 0; i < 50; i++)
		pool_free(tc_pool, objs[i]);
	pthread_barrier_wait(&tc_ready);
	pthread_barrier_wait(&tc_done);
	return NULL;
}

/* The "thread_caches" object of the JSON dump `s`, read into v[] in its order. */
static void json_cache_view(const char *s, unsigned long v[8])
{
	const char *j = strstr(s, "\"thread_caches\": {");

	ck_assert_msg(j != NULL, "%s", s);
	ck_assert_int_eq(sscanf(j, "\"thread_caches\": {\"threads\": %lu, \"caching\": %lu, "
	                        "\"objects\": %lu, \"magazine_objects\": %lu, "
	                        "\"magazine_bytes\": %lu, \"depth_new\": %lu, "
	                        "\"depth_min\": %lu, \"depth_max\": %lu}", &v[0], &v[1], &v[2],
	                        &v[3], &v[4], &v[5], &v[6], &v[7]), 8);
}

START_TEST(test_detailed_thread_caches)
{
	struct pool_head *p[300];
	struct pool_stats st;
	unsigned long v[8];
	pthread_t t[3];
	char line[512], want[160], name[16];
	unsigned int i;
	size_t before;
	char *s;

	tc_pool = pool_create("mt", 64, 0);
	ck_assert_ptr_nonnull(tc_pool);
	ck_assert_int_eq(pthread_barrier_init(&tc_ready, NULL, 4), 0);
	ck_assert_int_eq(pthread_barrier_init(&tc_done, NULL, 4), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, tc_worker, NULL), 0);
	pthread_barrier_wait(&tc_ready);
	ck_assert_int_eq(pool_get_stats(tc_pool, &st, sizeof(st)), 0);
	ck_assert_uint_ge(st.cached, 3);
	s = dump_ok("detailed match mt");
	check_cache_line(line_of(s, 4, line, sizeof(line)), tc_pool, st.cached, 3, 1);
	free(s);
	ck_assert_int_eq(pool_get_stats(tc_pool, &st, sizeof(st)), 0);
	before = st.cached;
	s = dump_ok("detailed json match mt");
	json_cache_view(s, v);
	ck_assert_int_eq(pool_get_stats(tc_pool, &st, sizeof(st)), 0);
	ck_assert_uint_ge(v[0], 3);                         /* threads */
	ck_assert_uint_eq(v[1], 3);                         /* caching */
	ck_assert_uint_le(v[2], before);                    /* objects */
	ck_assert_uint_ge(v[2], st.cached);
	ck_assert_uint_ge(v[3], 1);                         /* magazine_objects */
	ck_assert_uint_gt(v[4], v[3] * sizeof(void *));     /* magazine_bytes */
	ck_assert_uint_le(v[5], v[3]);                      /* depth_new */
	ck_assert_uint_ge(v[6], 1);                         /* depth_min */
	ck_assert_uint_le(v[6], v[7]);
	ck_assert_uint_le(v[7], v[3]);                      /* depth_max */
	free(s);
	pthread_barrier_wait(&tc_done);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	/* the threads are gone, and their caches with them */
	ck_assert_int_eq(pool_get_stats(tc_pool, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.cached, 0);
	s = dump_ok("detailed match mt");
	check_cache_line(line_of(s, 4, line, sizeof(line)), tc_pool, 0, 0, 0);
	free(s);
	pthread_barrier_destroy(&tc_ready);
	pthread_barrier_destroy(&tc_done);

	/* more pools than cache slots (POOL_MAX_CACHED_POOLS, slot 0 unused): the last have none */
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "slotless%u", i);
		p[i] = pool_create(name, 16 * (i + 1) + 8, 0);
		ck_assert_ptr_nonnull(p[i]);
		ck_assert_ptr_ne(p[i], i ? p[i - 1] : NULL);
	}
	s = dump_ok("detailed match slotless299");
	snprintf(want, sizeof(want), "      thread caches: none (no cache slot was left for this "
	         "pool; ");
	ck_assert_msg(!strncmp(line_of(s, 4, line, sizeof(line)), want, strlen(want)), "%s", line);
	free(s);
	s = dump_ok("detailed json match slotless299");
	ck_assert_ptr_nonnull(strstr(s, "\"thread_caches\": null"));
	free(s);
	for (i = 0; i < 300; i++)
		ck_assert_int_eq(pool_destroy(p[i]), 0);
	ck_assert_int_eq(pool_destroy(tc_pool), 0);
}
END_TEST

static Suite *dump_suite(void)
{
	Suite *s = suite_create("dump");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_text_every_field);
	tcase_add_test(tc, test_text_no_pools);
	tcase_add_test(tc, test_sort_orders);
	tcase_add_test(tc, test_match_and_max);
	tcase_add_test(tc, test_detailed_creators);
	tcase_add_test(tc, test_detailed_callers);
	tcase_add_test(tc, test_detailed_thread_caches);
	tcase_add_test(tc, test_resident_beside_allocated);
	suite_add_tcase(s, tc);

	tc = tcase_create("Formats");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_json_parsed_back);
	tcase_add_test(tc, test_prometheus_parsed_back);
	suite_add_tcase(s, tc);

	tc = tcase_create("JSON writer");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_json_string_escapes);
	tcase_add_test(tc, test_json_string_python_oracle);
	tcase_add_test(tc, test_json_string_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_argument_errors);
	tcase_add_test(tc, test_write_error);
	tcase_add_test(tc, test_profile_write_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("Exit");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_stats_on_exit);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_dump_while_churning);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(dump_suite, exit_child)
