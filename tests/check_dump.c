/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_dump(): the text line of every pool field by field against pool_get_stats(), every sort
 * order, match, <max>, detailed (merged creators and callers), the JSON output parsed back by
 * python3's json module, the Prometheus output parsed by python3-prometheus-client's parser,
 * every argument error, and dumps racing pool creation and destruction.
 *
 * Check forks every test, so each test starts with no pool and creates the ones it checks.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pool/pool.h>

#include "pool-int.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* pool_dump(args) into a malloc()ed string; *ret receives its return value. */
static char *dump(const char *args, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r, e;

	ck_assert_ptr_nonnull(f);
	errno = 0;
	r = pool_dump(f, args);
	e = errno;
	if (ret)
		*ret = r;
	ck_assert_int_eq(fclose(f), 0);
	errno = e;   /* fclose() may change it */
	return buf;
}

static char *dump_ok(const char *args)
{
	int r;
	char *s = dump(args, &r);

	ck_assert_msg(r == 0, "pool_dump(\"%s\") failed: %s", args ? args : "(null)", s);
	return s;
}

static unsigned int count_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
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

	ck_assert_int_eq(pool_get_stats(pool, &st), 0);
	snprintf(buf, size, "  - Pool %s (%zu bytes/%zu) : %zu allocated (%zu bytes), %zu used "
	         "(~%zu by thread caches), needed_avg %zu, %zu failures, %u users, @%p%s",
	         pool_name(pool), st.size, st.align, st.allocated, st.allocated * st.stride,
	         st.used, st.cached, st.needed_avg, st.failed, st.creators, (void *)pool,
	         (st.flags & POOL_F_SHARED) ? " [SHARED]" : "");
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

static const char *python3(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* Write `text` to a temporary file, run `script` on it with python3, return its stdout. */
static char *run_python(const char *text, const char *script)
{
	char path[] = "/tmp/check_dump_XXXXXX", cmd[8192], *out = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *f, *o;
	int fd = mkstemp(path), st;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "%s -c '%s' %s 2>&1", python3(), script, path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	o = open_memstream(&out, &len);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, o);
	st = pclose(f);
	fclose(o);
	unlink(path);
	ck_assert_msg(st == 0, "python3 failed (%d): %s", st, out);
	return out;
}

struct fixture {
	struct pool_head *conn, *buf, *tiny;
	void *held[200];
};

/*
 * Three pools with known contents: conn (192 bytes/64, shared, 2 users), buf (1000 bytes, a
 * limit of 5 and 2 failures), tiny (24 bytes, exact).
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

START_TEST(text_every_field)
{
	struct fixture fx;
	struct pool_stats st[3];
	struct pool_head *pools[3];
	char line[512], want[512], name[64], shared[16];
	size_t size, align, alloc, bytes, used, cached, needed, failed, tp, tb, tu, tc;
	size_t sum_alloc = 0, sum_used = 0, sum_cached = 0;
	unsigned int users, i;
	void *addr;
	char *s;

	make_pools(&fx);
	pools[0] = fx.conn;
	pools[1] = fx.buf;
	pools[2] = fx.tiny;
	s = dump_ok(NULL);
	ck_assert_uint_eq(count_lines(s), 5);
	ck_assert_str_eq(line_of(s, 0, line, sizeof(line)),
	                 "Dumping pools usage. Use 'pools trim' to release unused memory.");
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pool_get_stats(pools[i], &st[i]), 0);
		line_of(s, i + 1, line, sizeof(line));
		/* the whole line, byte for byte */
		expected_line(pools[i], want, sizeof(want));
		ck_assert_str_eq(line, want);
		/* and each field on its own, so that a failure names it */
		shared[0] = 0;
		ck_assert_int_ge(sscanf(line, "  - Pool %63s (%zu bytes/%zu) : %zu allocated (%zu "
		                        "bytes), %zu used (~%zu by thread caches), needed_avg %zu, %zu "
		                        "failures, %u users, @%p %15s", name, &size, &align, &alloc,
		                        &bytes, &used, &cached, &needed, &failed, &users, &addr,
		                        shared), 11);
		ck_assert_str_eq(name, pool_name(pools[i]));
		ck_assert_uint_eq(size, st[i].size);
		ck_assert_uint_eq(align, st[i].align);
		ck_assert_uint_eq(alloc, st[i].allocated);
		ck_assert_uint_eq(bytes, st[i].allocated * st[i].stride);
		ck_assert_uint_eq(used, st[i].used);
		ck_assert_uint_eq(cached, st[i].cached);
		ck_assert_uint_eq(needed, st[i].needed_avg);
		ck_assert_uint_eq(failed, st[i].failed);
		ck_assert_uint_eq(users, st[i].creators);
		ck_assert_ptr_eq(addr, pools[i]);
		ck_assert_str_eq(shared, (st[i].flags & POOL_F_SHARED) ? "[SHARED]" : "");
		sum_alloc += st[i].allocated * st[i].stride;
		sum_used += st[i].used * st[i].stride;
		sum_cached += st[i].cached * st[i].stride;
	}
	/* what the test did shows in the figures */
	ck_assert_uint_eq(st[0].size, 192);
	ck_assert_uint_eq(st[0].align, 64);
	ck_assert_uint_eq(st[0].allocated, 120);
	ck_assert_uint_eq(st[0].used, 120);
	ck_assert_uint_eq(st[0].creators, 2);
	ck_assert_uint_eq(st[1].allocated, 5);
	ck_assert_uint_eq(st[1].failed, 2);
	ck_assert_uint_eq(st[2].size, 24);
	ck_assert_uint_eq(st[2].allocated, 7);
	ck_assert_ptr_nonnull(strstr(s, "Pool conn (192 bytes/64) : 120 allocated (23040 bytes), "
	                             "120 used (~20 by thread caches)"));
	ck_assert_ptr_nonnull(strstr(s, ", 2 failures, 1 users, @"));
	ck_assert_int_eq(sscanf(line_of(s, 4, line, sizeof(line)), "Total: %zu pools, %zu bytes "
	                        "allocated, %zu used (~%zu by thread caches).", &tp, &tb, &tu, &tc),
	                 4);
	ck_assert_uint_eq(tp, 3);
	ck_assert_uint_eq(tb, sum_alloc);
	ck_assert_uint_eq(tu, sum_used);
	ck_assert_uint_eq(tc, sum_cached);
	snprintf(want, sizeof(want), "Total: 3 pools, %zu bytes allocated, %zu used (~%zu by thread "
	         "caches).", sum_alloc, sum_used, sum_cached);
	ck_assert_str_eq(line, want);
	free(s);
	free_pools(&fx);
}
END_TEST

START_TEST(text_no_pools)
{
	static const char *const args[] = { "", "byname", "bysize", "byusage", "match x bysize" };
	unsigned int i;

	/* found by fuzz_cli: sorting nothing passed NULL to qsort() (UBSan) */
	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		char *s = dump_ok(args[i]);

		ck_assert_str_eq(s, "Dumping pools usage. Use 'pools trim' to release unused "
		                    "memory.\nTotal: 0 pools, 0 bytes allocated, 0 used (~0 by thread "
		                    "caches).\n");
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

	for (i = 0; i < 5; i++) {
		fx->p[i] = pool_create(spec[i].name, spec[i].size, 0);
		ck_assert_ptr_nonnull(fx->p[i]);
		for (k = 0; k < spec[i].n; k++)
			ck_assert_ptr_nonnull(fx->objs[o++] = pool_alloc(fx->p[i]));
	}
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

START_TEST(sort_orders)
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
	/* beta 1024 B, alpha 512, alphabet 256, zeta 192; mid holds nothing and is hidden */
	ck_assert_str_eq(names, "beta alpha alphabet zeta");
	ck_assert_ptr_nonnull(strstr(s, "Total: 4 pools, 1984 bytes allocated, 1984 used"));
	free(s);
	free_sort_pools(&fx);
}
END_TEST

START_TEST(match_and_max)
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
	ck_assert_uint_eq(count_lines(s), 7);
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

START_TEST(detailed_creators)
{
	struct fixture fx;
	struct pool_stats st;
	char line[512], want[256];
	char *s;

	make_pools(&fx);
	ck_assert_int_eq(pool_get_stats(fx.conn, &st), 0);
	s = dump_ok("detailed match conn");
	ck_assert_uint_eq(count_lines(s), 6);
	expected_line(fx.conn, want, sizeof(want));
	ck_assert_str_eq(line_of(s, 1, line, sizeof(line)), want);
	snprintf(want, sizeof(want), "      stride %zu bytes, %u buckets, %zu in shared free lists, "
	         "limit 0 (none)", st.stride, st.buckets, st.shared_free);
	ck_assert_str_eq(line_of(s, 2, line, sizeof(line)), want);
	/* one line per pool_create() call, with what that call asked for */
	ck_assert_str_eq(line_of(s, 3, line, sizeof(line)),
	                 "      created as conn: 192 bytes/64, flags SHARED");
	ck_assert_str_eq(line_of(s, 4, line, sizeof(line)),
	                 "      created as conn: 192 bytes/64, flags SHARED");
	free(s);
	s = dump_ok("match buf detailed");
	ck_assert_int_eq(pool_get_stats(fx.buf, &st), 0);
	snprintf(want, sizeof(want), "      stride %zu bytes, ", st.stride);
	ck_assert_ptr_nonnull(strstr(s, want));
	ck_assert_ptr_nonnull(strstr(s, "limit 5\n"));
	ck_assert_ptr_nonnull(strstr(s, "      created as buf: 1000 bytes/16, flags none\n"));
	free(s);
	s = dump_ok("match tiny detailed");
	ck_assert_ptr_nonnull(strstr(s, "      created as tiny: 24 bytes/16, flags EXACT\n"));
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

START_TEST(detailed_callers)
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
	/* pool line, stride line, one creator, then the callers, most live objects first */
	ck_assert_uint_eq(count_lines(s), 7);
	ck_assert_int_eq(sscanf(line_of(s, 4, line, sizeof(line)), "      caller %255s (%lx): %ld "
	                        "live objects", sym, &addr_a, &live_a), 3);
	ck_assert_int_eq(live_a, 12);
	ck_assert_uint_ge(addr_a, (uintptr_t)alloc_from_a);
	ck_assert_uint_lt(addr_a, (uintptr_t)alloc_from_a + 4096);
	ck_assert_int_eq(sscanf(line_of(s, 5, line, sizeof(line)), "      caller %255s (%lx): %ld "
	                        "live objects", sym, &addr_b, &live_b), 3);
	ck_assert_int_eq(live_b, 5);
	ck_assert_uint_ge(addr_b, (uintptr_t)alloc_from_b);
	ck_assert_uint_lt(addr_b, (uintptr_t)alloc_from_b + 4096);
	free(s);
	/* freed objects are no longer live */
	for (i = 0; i < 12; i++)
		pool_free(caller_pool, caller_objs[i]);
	s = dump_ok("detailed");
	ck_assert_uint_eq(count_lines(s), 6);
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

/* Prints one line per pool with every required field, after checking each JSON type. */
static const char json_script[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"assert set(d) == {\"pools\", \"total\"}, d.keys()\n"
	"ints = [\"size\", \"align\", \"stride\", \"allocated\", \"allocated_bytes\", \"used\", "
	"\"used_bytes\", \"cached\", \"shared_free\", \"needed_avg\", \"failures\", \"limit\", "
	"\"users\", \"buckets\"]\n"
	"for p in d[\"pools\"]:\n"
	"    assert isinstance(p[\"name\"], str)\n"
	"    assert isinstance(p[\"address\"], str) and p[\"address\"].startswith(\"0x\")\n"
	"    for k in ints:\n"
	"        assert type(p[k]) is int, k\n"
	"    assert type(p[\"shared\"]) is bool and type(p[\"exact\"]) is bool\n"
	"    for c in p.get(\"creators\", []):\n"
	"        assert type(c[\"size\"]) is int and type(c[\"align\"]) is int\n"
	"        assert isinstance(c[\"name\"], str) and isinstance(c[\"flags\"], str)\n"
	"    print(p[\"name\"], p[\"address\"], *[p[k] for k in ints], int(p[\"shared\"]), "
	"int(p[\"exact\"]), len(p.get(\"creators\", [])))\n"
	"t = d[\"total\"]\n"
	"for k in [\"pools\", \"matched\", \"allocated_bytes\", \"used_bytes\", \"cached_bytes\", "
	"\"os_allocated_bytes\", \"os_resident_bytes\"]:\n"
	"    assert type(t[k]) is int, k\n"
	"assert type(t[\"limited\"]) is bool and isinstance(t[\"os_layer\"], str)\n"
	"print(\"total\", t[\"pools\"], t[\"matched\"], int(t[\"limited\"]), t[\"allocated_bytes\"], "
	"t[\"used_bytes\"], t[\"cached_bytes\"], t[\"os_layer\"])\n";

static void check_json_pool(const char *line, struct pool_head *pool, unsigned int creators)
{
	struct pool_stats st;
	char name[64], addr[32], want_addr[32];
	size_t v[14];
	int shared, exact, ncreators;

	ck_assert_int_eq(pool_get_stats(pool, &st), 0);
	ck_assert_int_eq(sscanf(line, "%63s %31s %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu "
	                        "%zu %zu %d %d %d", name, addr, &v[0], &v[1], &v[2], &v[3], &v[4],
	                        &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13],
	                        &shared, &exact, &ncreators), 19);
	snprintf(want_addr, sizeof(want_addr), "%p", (void *)pool);
	ck_assert_str_eq(name, pool_name(pool));
	ck_assert_str_eq(addr, want_addr);
	ck_assert_uint_eq(v[0], st.size);
	ck_assert_uint_eq(v[1], st.align);
	ck_assert_uint_eq(v[2], st.stride);
	ck_assert_uint_eq(v[3], st.allocated);
	ck_assert_uint_eq(v[4], st.allocated * st.stride);
	ck_assert_uint_eq(v[5], st.used);
	ck_assert_uint_eq(v[6], st.used * st.stride);
	ck_assert_uint_eq(v[7], st.cached);
	ck_assert_uint_eq(v[8], st.shared_free);
	ck_assert_uint_eq(v[9], st.needed_avg);
	ck_assert_uint_eq(v[10], st.failed);
	ck_assert_uint_eq(v[11], st.limit);
	ck_assert_uint_eq(v[12], st.creators);
	ck_assert_uint_eq(v[13], st.buckets);
	ck_assert_int_eq(shared, !!(st.flags & POOL_F_SHARED));
	ck_assert_int_eq(exact, !!(st.flags & POOL_F_EXACT));
	ck_assert_int_eq(ncreators, (int)creators);
}

START_TEST(json_parsed_back)
{
	struct fixture fx;
	char line[512], os[32];
	size_t tp, tm, tb, tu, tc, sum_b = 0, sum_u = 0, sum_c = 0;
	struct pool_head *order[3];
	struct pool_stats st;
	int limited;
	unsigned int i;
	char *s, *out;

	make_pools(&fx);
	s = dump_ok("json");
	out = run_python(s, json_script);
	ck_assert_uint_eq(count_lines(out), 4);
	order[0] = fx.conn;
	order[1] = fx.buf;
	order[2] = fx.tiny;
	for (i = 0; i < 3; i++) {
		check_json_pool(line_of(out, i, line, sizeof(line)), order[i], 0);
		pool_get_stats(order[i], &st);
		sum_b += st.allocated * st.stride;
		sum_u += st.used * st.stride;
		sum_c += st.cached * st.stride;
	}
	ck_assert_int_eq(sscanf(line_of(out, 3, line, sizeof(line)), "total %zu %zu %d %zu %zu %zu "
	                        "%31s", &tp, &tm, &limited, &tb, &tu, &tc, os), 7);
	ck_assert_uint_eq(tp, 3);
	ck_assert_uint_eq(tm, 3);
	ck_assert_int_eq(limited, 0);
	ck_assert_uint_eq(tb, sum_b);
	ck_assert_uint_eq(tu, sum_u);
	ck_assert_uint_eq(tc, sum_c);
	ck_assert_str_eq(os, st.os_layer);
	free(out);
	free(s);

	/* sorted, cut and detailed: still valid JSON, creators listed, limited reported */
	s = dump_ok("json bysize detailed 2");
	out = run_python(s, json_script);
	ck_assert_uint_eq(count_lines(out), 3);
	check_json_pool(line_of(out, 0, line, sizeof(line)), fx.buf, 1);
	check_json_pool(line_of(out, 1, line, sizeof(line)), fx.conn, 2);
	ck_assert_int_eq(sscanf(line_of(out, 2, line, sizeof(line)), "total %zu %zu %d", &tp, &tm,
	                        &limited), 3);
	ck_assert_uint_eq(tp, 2);
	ck_assert_uint_eq(tm, 3);
	ck_assert_int_eq(limited, 1);
	free(out);
	free(s);

	/* no pool at all */
	s = dump_ok("json match nothing");
	out = run_python(s, json_script);
	ck_assert_int_eq(strncmp(out, "total 0 0 0 0 0 0 ", 18), 0);
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
	"        print(\"sample\", s.name, s.labels.get(\"pool\", \"-\"), int(s.value))\n";

static const char *const prom_per_pool[] = {
	"libpool_pool_object_size_bytes", "libpool_pool_alignment_bytes",
	"libpool_pool_stride_bytes", "libpool_pool_allocated_objects",
	"libpool_pool_allocated_bytes", "libpool_pool_used_objects", "libpool_pool_used_bytes",
	"libpool_pool_cached_objects", "libpool_pool_shared_free_objects",
	"libpool_pool_needed_avg_objects", "libpool_pool_failures_total",
	"libpool_pool_limit_objects", "libpool_pool_users", "libpool_pool_shared",
};

static size_t prom_expected(const char *metric, const struct pool_stats *st)
{
	const size_t v[] = { st->size, st->align, st->stride, st->allocated,
	                     st->allocated * st->stride, st->used, st->used * st->stride,
	                     st->cached, st->shared_free, st->needed_avg, st->failed, st->limit,
	                     st->creators, !!(st->flags & POOL_F_SHARED) };
	unsigned int i;

	for (i = 0; i < sizeof(prom_per_pool) / sizeof(prom_per_pool[0]); i++)
		if (!strcmp(metric, prom_per_pool[i]))
			return v[i];
	ck_abort_msg("unexpected metric %s", metric);
	return 0;
}

START_TEST(prometheus_parsed_back)
{
	struct fixture fx;
	struct pool_head *dup;
	struct pool_stats st;
	char *s, *out, *line, *save = NULL;
	unsigned int families = 0, samples = 0, counters = 0, pool_samples = 0;

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
			continue;
		}
		/* a sample: name{labels} value, the value an unsigned integer */
		ck_assert_int_eq(strncmp(line, "libpool_", 8), 0);
		ck_assert_uint_eq(strspn(strrchr(line, ' ') + 1, "0123456789"),
		                  strlen(strrchr(line, ' ') + 1));
	}
	free(s);
	s = dump_ok("prometheus");
	out = run_python(s, prom_script);
	save = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char a[128], b[128], c[64];
		size_t v;

		if (sscanf(line, "family %127s %63s", a, c) == 2) {
			families++;
			counters += !strcmp(c, "counter");
			continue;
		}
		ck_assert_int_eq(sscanf(line, "sample %127s %127s %zu", a, b, &v), 3);
		samples++;
		if (strcmp(b, "-") == 0)
			continue;
		pool_samples++;
		if (!strcmp(b, "conn"))
			pool_get_stats(fx.conn, &st);
		else if (!strcmp(b, "conn#2"))
			pool_get_stats(dup, &st);
		else if (!strcmp(b, "buf"))
			pool_get_stats(fx.buf, &st);
		else if (!strcmp(b, "tiny"))
			pool_get_stats(fx.tiny, &st);
		else
			ck_abort_msg("unexpected pool label %s", b);
		ck_assert_msg(prom_expected(a, &st) == v, "%s{pool=%s} = %zu", a, b, v);
	}
	/* 14 per-pool families + pools, allocated, os allocated, os resident */
	ck_assert_uint_eq(families, 18);
	ck_assert_uint_eq(counters, 1);
	ck_assert_uint_eq(pool_samples, 14 * 4);
	ck_assert_uint_eq(samples, 14 * 4 + 4);
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
/* Errors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void check_refused(const char *args, const char *msg)
{
	int r;
	char *s = dump(args, &r);

	ck_assert_msg(r == -1, "pool_dump(\"%s\") returned %d", args, r);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(count_lines(s), 1);
	ck_assert_msg(strstr(s, msg) != NULL, "pool_dump(\"%s\"): '%s' lacks '%s'", args, s, msg);
	ck_assert_ptr_nonnull(strstr(s, "Try 'help'.\n"));
	free(s);
}

START_TEST(errors)
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
START_TEST(write_error)
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

START_TEST(dump_while_churning)
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

static Suite *dump_suite(void)
{
	Suite *s = suite_create("dump");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, text_every_field);
	tcase_add_test(tc, text_no_pools);
	tcase_add_test(tc, sort_orders);
	tcase_add_test(tc, match_and_max);
	tcase_add_test(tc, detailed_creators);
	tcase_add_test(tc, detailed_callers);
	suite_add_tcase(s, tc);

	tc = tcase_create("Formats");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, json_parsed_back);
	tcase_add_test(tc, prometheus_parsed_back);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, write_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, dump_while_churning);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dump_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
