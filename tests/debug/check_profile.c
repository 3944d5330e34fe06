/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The allocation-site profile (issue 23): pool_profile_start()/stop()/dump(), `pools profile`,
 * the profile in `pools show detailed`, the leak report at exit and the report of a failed
 * allocation. An internal test (it includes private headers): it checks the bounds of the
 * profile's tables, arms the fault-injection sites to fail the OS layer, and counts what the
 * failure report allocates.
 *
 * Sites are told apart by address: each allocating site is a function of its own (noinline,
 * each with a different body so that identical code folding keeps them apart), and the JSON of
 * `pools profile` at level admin gives every site's address. The planted leak (a site keeping
 * one object in a thousand, between allocations of another site that frees all of its own)
 * runs a fixed amount of work, in this process and, for the exact figure and the leak report
 * at exit, in children of this program (POOL_TEST_MAIN_ARGS, "leak" and "leak-caller").
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "os/pool-fault.h"
#include "debug/pool-profile.h"
#include "debug/pool-stack.h"
#include "tcache/pool-sample.h"
#include "testutil.h"

#if TEST_ASAN
/* sanitizer/allocator_interface.h of compiler-rt (gcc ships the function, not the header) */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
#elif POOL_USE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define NOINLINE __attribute__((noinline))

/*
 * The planted leak: iterations, and one object kept in LEAK_EVERY. Under AddressSanitizer and
 * ThreadSanitizer a quarter of the iterations at 4 times the sampling rate (LEAK_SLOW): the
 * same samples, of the leak and of the rest, in a quarter of the allocations, which cost 28
 * times theirs there (the Leak case took 56 s under ASan, 2 s without).
 */
#define LEAK_SLOW   (TEST_ASAN || TEST_TSAN ? 4L : 1L)
#define LEAK_ITERS  (24000000L / LEAK_SLOW)
#define LEAK_EVERY  1000L
/*
 * One sample per 32 KiB; 16 KiB under ThreadSanitizer, where a stack is glibc's backtrace()
 * (pool-stack.c), 20 us there: the sampler's hunt for a sample that outlives its first free,
 * bounded in time, tries fewer allocations per event, and needs more events to find the leak.
 * At 128 KiB the leak had 3 to 13 live samples, and none in about one run in ten on a loaded
 * machine (the site then ranked behind [unsampled]). Divided by LEAK_SLOW.
 */
#define LEAK_RATE   ((TEST_TSAN ? 16u * 1024u : 32u * 1024u) / (unsigned int)LEAK_SLOW)

static struct pool_head *leak_pool;
static void **leak_kept;
static long leak_nkept;

/* The allocating sites, each a function of its own (the empty asm keeps the bodies apart). */
static NOINLINE void *site_leak(struct pool_head *p)
{
	void *o = pool_alloc(p);

	__asm__ volatile("nop" : "+r"(o));
	return o;
}

static NOINLINE void *site_pair(struct pool_head *p)
{
	void *o = pool_alloc(p);

	__asm__ volatile("nop; nop" : "+r"(o));
	return o;
}

static NOINLINE void *site_other(struct pool_head *p)
{
	void *o = pool_alloc(p);

	__asm__ volatile("nop; nop; nop" : "+r"(o));
	return o;
}

/*
 * Call stacks: two callers of one static wrapper, and a wrapper that is always inlined, so
 * that the stack, not the return address into the wrapper, tells the callers apart.
 */
static NOINLINE void *wrap_alloc(struct pool_head *p)
{
	void *o = pool_alloc(p);

	__asm__ volatile("nop; nop; nop; nop" : "+r"(o));
	return o;
}

static NOINLINE void *caller_one(struct pool_head *p)
{
	void *o = wrap_alloc(p);

	__asm__ volatile("" : "+r"(o));
	return o;
}

static NOINLINE void *caller_two(struct pool_head *p)
{
	void *o = wrap_alloc(p);

	__asm__ volatile("nop" : "+r"(o));
	return o;
}

static inline __attribute__((always_inline)) void *inlined_alloc(struct pool_head *p)
{
	void *o = pool_alloc(p);

	__asm__ volatile("nop; nop" : "+r"(o));
	return o;
}

static NOINLINE void *caller_inlining(struct pool_head *p)
{
	void *o = inlined_alloc(p);

	__asm__ volatile("" : "+r"(o));
	return o;
}

/* A chain of `levels` calls, through one of two functions at each level as the bits of `path`
 * say, that allocates at its end: distinct paths, distinct stacks. */
static NOINLINE void *path_b(struct pool_head *p, unsigned int path, unsigned int levels);

static NOINLINE void *path_a(struct pool_head *p, unsigned int path, unsigned int levels)
{
	void *o = !levels ? pool_alloc(p) :
	          (path & 1) ? path_b(p, path >> 1, levels - 1) : path_a(p, path >> 1, levels - 1);

	__asm__ volatile("" : "+r"(o));
	return o;
}

static NOINLINE void *path_b(struct pool_head *p, unsigned int path, unsigned int levels)
{
	void *o = !levels ? pool_alloc(p) :
	          (path & 1) ? path_b(p, path >> 1, levels - 1) : path_a(p, path >> 1, levels - 1);

	__asm__ volatile("nop" : "+r"(o));
	return o;
}

/* Is `addr` a return address inside the function at `fn`? (they are a few dozen bytes long) */
static int in_site(uintptr_t addr, void *(*fn)(struct pool_head *))
{
	return addr > (uintptr_t)fn && addr < (uintptr_t)fn + 256;
}

/*
 * objs[0..n) from `fn`, all from one call site: a site is a call stack, so the calls of a loop
 * that the compiler unrolled (clang does, at -O2, for a short constant count) would each be a
 * stack of their own.
 */
static NOINLINE void alloc_n(struct pool_head *p, void **objs, int n,
                             void *(*fn)(struct pool_head *))
{
	int i;

#if defined(__clang__)
#pragma clang loop unroll(disable)
#elif defined(__GNUC__)
#pragma GCC unroll 1
#endif
	for (i = 0; i < n; i++)
		objs[i] = fn(p);
}

/* The leaking loop: each iteration allocates at site_leak and at site_pair, and frees both,
 * but for one object of site_leak in LEAK_EVERY, which it keeps. */
static void run_leak(struct pool_head *p, long iters)
{
	long i;

	/* no ck_assert here: the children of this program run it outside Check */
	leak_kept = calloc((size_t)(iters / LEAK_EVERY + 1), sizeof(*leak_kept));
	if (!leak_kept)
		abort();
	leak_nkept = 0;
	for (i = 0; i < iters; i++) {
		void *a = site_leak(p), *b = site_pair(p);

		if (!a || !b)
			abort();
		pool_free(p, b);
		if (i % LEAK_EVERY == 0)
			leak_kept[leak_nkept++] = a;
		else
			pool_free(p, a);
	}
}

/* pool_cli_exec() in the argument order of test_capture(). */
static int cli_admin(FILE *out, const char *line)
{
	return pool_cli_exec(line, out);
}

/* `pools profile json` at level admin, as a malloc()ed string. */
static char *profile_json(const char *args)
{
	char *s;
	int r;

	s = test_capture(pool_profile_dump, args, &r);
	ck_assert_msg(r == 0, "pool_profile_dump(%s): %s", args, s);
	return s;
}

/*
 * python3's json module on `pools profile json`: prints, per site, its address (0 for the
 * rows without one), samples, freed, live samples, live objects and whether exact, then a line
 * per pool (name, in use).
 */
static const char json_script[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"p = d[\"profile\"]\n"
	"assert p[\"records_max\"] == 4096 and p[\"sites_max\"] == 512, p\n"
	"for s in d[\"sites\"]:\n"
	"    print(\"site\", int(s.get(\"address\", \"0\"), 16), s[\"samples\"], s[\"freed\"], "
	"s[\"live_samples\"], s[\"live_objects\"], int(s[\"exact\"]), s[\"pool\"])\n"
	"for q in d[\"pools\"]:\n"
	"    print(\"pool\", q[\"name\"], q[\"in_use\"])\n";

struct site_row {
	uintptr_t addr;
	unsigned long samples, freed, live, objects;
	int exact;
	char pool[40];
};

/* Parse `pools profile json` text with python3 into rows[]; returns how many. */
static size_t parse_sites(const char *json, struct site_row *rows, size_t max)
{
	char *out = test_run_python(json, json_script), *line, *save = NULL;
	size_t n = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct site_row r;

		memset(&r, 0, sizeof(r));
		if (sscanf(line, "site %" SCNuPTR " %lu %lu %lu %lu %d %39s", &r.addr, &r.samples,
		           &r.freed, &r.live, &r.objects, &r.exact, r.pool) >= 6 && n < max)
			rows[n++] = r;
	}
	free(out);
	return n;
}

/* The row of the site in `fn` (the first of them), or NULL. */
static const struct site_row *row_of(const struct site_row *rows, size_t n,
                                     void *(*fn)(struct pool_head *))
{
	size_t i;

	for (i = 0; i < n; i++)
		if (in_site(rows[i].addr, fn))
			return &rows[i];
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Children                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * Objects allocated and freed, all of them, at one site, the profile sampling every one: at
 * exit they lie in the thread's cache, free.
 */
static int no_leak(void)
{
	struct pool_head *p = pool_create("clean", 32, 0);
	void *o[500];
	int i;

	if (!p || pool_profile_start(1) != 0)
		return 3;
	for (i = 0; i < 500; i++)
		o[i] = site_other(p);
	for (i = 0; i < 500; i++)
		pool_free(p, o[i]);
	printf("freed 500\n");
	fflush(stdout);
	return 0;
}

/*
 * The children of this program: "no-leak" (above); the planted leak, "leak" sampling
 * (LEAK_RATE) and exiting with the leak report of POOL_LEAK_REPORT, "leak-caller" under caller
 * debugging, printing the profile in JSON; both print "kept <n> leak <address of site_leak>"
 * first.
 */
/* Objects kept in a pool the profile does not sample: its [unsampled] row at exit. */
static int unsampled(void)
{
	struct pool_head *w = pool_create("watched", 64, 0), *m = pool_create("missed", 64, 0);
	static void *objs[20];
	int i;

	if (!w || !m || pool_cli_exec("pools profile on rate 1 pool watched", stdout) != 0)
		return 3;
	alloc_n(m, objs, 10, caller_one);
	alloc_n(w, objs + 10, 10, caller_two);
	for (i = 0; i < 20; i++)
		if (!objs[i])
			return 4;
	fflush(stdout);
	return 0;
}

static int children(int argc, char **argv)
{
	int caller;

	test_clear_environment(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "no-leak"))
		return no_leak();
	if (argc >= 2 && !strcmp(argv[1], "unsampled"))
		return unsampled();
	if (argc < 2 || (strcmp(argv[1], "leak") && strcmp(argv[1], "leak-caller")))
		return -1;
	caller = !strcmp(argv[1], "leak-caller");
	if (caller && pool_parse_debugging("caller", NULL) != 0)
		return 2;
	leak_pool = pool_create("leaky", 64, 0);
	if (!leak_pool || pool_profile_start(LEAK_RATE) != 0)
		return 3;
	run_leak(leak_pool, LEAK_ITERS / (caller ? 8 : 1));
	/* this process's own address of the site: a child's differs from its parent's */
	printf("kept %ld leak %" PRIuPTR "\n", leak_nkept, (uintptr_t)site_leak);
	if (caller)
		pool_profile_dump(stdout, "json");
	fflush(stdout);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Core                                                                                       */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_start_and_stop)
{
	ck_assert_int_eq(pool_profile_start(0), 0);
	ck_assert_uint_ne(pool_debugging & POOL_DBG_PROFILE, 0);
	ck_assert_uint_eq(pool__prof_rate(), POOL_PROFILE_RATE_DEF);
	ck_assert_uint_eq(POOL_PROFILE_RATE_DEF, 512u * 1024u);
	ck_assert_int_eq(pool_profile_start(4096), 0);
	ck_assert_uint_eq(pool__prof_rate(), 4096);
	pool_profile_stop();
	ck_assert_uint_eq(pool_debugging & POOL_DBG_PROFILE, 0);
	pool_profile_stop();
	errno = 0;
	ck_assert_int_eq(pool_profile_start(POOL_PROFILE_RATE_MAX + 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(pool_debugging & POOL_DBG_PROFILE, 0);
	ck_assert_int_eq(pool_profile_dump(NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_debug_options)
{
	char *s, *err = NULL;
	int r;

	ck_assert_int_eq(pool_parse_debugging("profile=64k,fail-report", &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(pool__prof_rate(), 65536);
	ck_assert_uint_ne(pool_debugging & POOL_DBG_FAIL_REPORT, 0);
	s = test_capture(cli_admin, "pools debug", &r);
	ck_assert_ptr_nonnull(strstr(s, ",profile=65536,no-guard,fail-report,no-malloc\n"));
	free(s);
	/* a rate is 1 to 2^40 bytes: the whole string is refused, nothing changes */
	ck_assert_int_eq(pool_parse_debugging("no-fail-report,profile=0", &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "profile=0"));
	free(err);
	ck_assert_int_eq(pool_parse_debugging("profile=2048g", &err), -1);
	free(err);
	ck_assert_int_eq(pool_parse_debugging("profile=12q", &err), -1);
	free(err);
	ck_assert_uint_ne(pool_debugging & POOL_DBG_FAIL_REPORT, 0);
	ck_assert_uint_eq(pool__prof_rate(), 65536);
	ck_assert_int_eq(pool_parse_debugging("no-profile,no-fail-report", NULL), 0);
	ck_assert_uint_eq(pool_debugging & (POOL_DBG_PROFILE | POOL_DBG_FAIL_REPORT), 0);
}
END_TEST

/* At a rate of one byte every allocation of 64 bytes is sampled (1 - e^-64 of them). */
START_TEST(test_every_allocation_sampled_and_freed)
{
	struct pool_head *p = pool_create("every", 64, 0);
	struct site_row rows[16];
	const struct site_row *r;
	void *o[300];
	size_t n;
	char *s;
	int i;

	ck_assert_int_eq(pool_profile_start(1), 0);
	for (i = 0; i < 300; i++)
		o[i] = site_other(p);
	s = profile_json("json");
	n = parse_sites(s, rows, 16);
	free(s);
	r = row_of(rows, n, site_other);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->samples, 300);
	ck_assert_uint_eq(r->live, 300);
	ck_assert_uint_eq(r->objects, 300);
	ck_assert_str_eq(r->pool, "every");
	/* freed through the fast path into this thread's cache: free objects, never in use */
	for (i = 0; i < 300; i++)
		pool_free(p, o[i]);
	s = profile_json("json");
	n = parse_sites(s, rows, 16);
	free(s);
	r = row_of(rows, n, site_other);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->freed, 300);
	ck_assert_uint_eq(r->live, 0);
	ck_assert_uint_eq(r->objects, 0);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* Is `p` in the region of sampled objects, the one the inline pool_free() tests? */
static int in_region(const void *p)
{
	return (uintptr_t)p - pool__sampled.base < pool__sampled.len;
}

/*
 * Samples die when they are freed: every sampled object lies in the region and counts in its
 * pool as any object; its free through the inline pool_free() or pool_free_bulk() reaches the
 * profile, and the object never comes back from the pool's caches as another allocation.
 * While samples are live the pool cannot be destroyed, as with any object handed out.
 */
START_TEST(test_samples_die_when_freed)
{
	struct pool_head *p = pool_create("mortal", 96, 0);
	struct pool_stats st;
	struct site_row rows[16];
	const struct site_row *r;
	void *o[200], *again[400];
	size_t n;
	char *s;
	int i, k;

	ck_assert_int_eq(pool_profile_start(1), 0);
	for (i = 0; i < 200; i++) {
		o[i] = site_other(p);
		ck_assert_ptr_nonnull(o[i]);
		ck_assert_msg(in_region(o[i]), "object %d at %p outside the region", i, o[i]);
		memset(o[i], 0xa5, 96);
	}
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.used - st.cached, 200);
	errno = 0;
	ck_assert_int_eq(pool_destroy(p), -1);
	ck_assert_int_eq(errno, EBUSY);
	/* half one at a time through the inline free, half in one pool_free_bulk() */
	for (i = 0; i < 100; i++)
		pool_free(p, o[i]);
	pool_free_bulk(p, o + 100, 100);
	s = profile_json("json pool mortal");
	n = parse_sites(s, rows, 16);
	free(s);
	r = row_of(rows, n, site_other);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->samples, 200);
	ck_assert_uint_eq(r->freed, 200);
	ck_assert_uint_eq(r->live, 0);
	ck_assert_uint_eq(r->objects, 0);
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.used - st.cached, 0);
	/* the profile off, the fast path hands out no freed sample again */
	pool_profile_stop();
	for (i = 0, k = 0; i < 400; i++) {
		int j;

		again[i] = pool_alloc(p);
		ck_assert_ptr_nonnull(again[i]);
		for (j = 0; j < 200; j++)
			k += again[i] == o[j];
		k += in_region(again[i]);
	}
	ck_assert_int_eq(k, 0);
	for (i = 0; i < 400; i++)
		pool_free(p, again[i]);
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* The profile's memory: static tables of a stated size, and a bounded number of records. */
START_TEST(test_memory_is_bounded)
{
	struct pool_head *p = pool_create("bound", 16, 0);
	struct pool_prof_summary sum;
	struct pool_prof_row rows[4];
	void **o;
	int i, n = POOL_PROF_RECORDS + 1000;

	/* the bound doc/pools-show.md states: 468,992 bytes of tables (151,552 of them the
	   stacks'), 3,080 per thread */
	ck_assert_uint_eq(pool__prof_table_bytes(), 468992);
	ck_assert_uint_eq(pool__stack_table_bytes(), 151552);
	ck_assert_uint_eq(sizeof(struct pool_sampler), 3080);
	o = malloc((size_t)n * sizeof(*o));
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pool_profile_start(1), 0);
	for (i = 0; i < n; i++)
		o[i] = site_other(p);
	pool__prof_snapshot(rows, 4, &sum);
	/* every allocation sampled but the first few of the slot and its last candidate */
	ck_assert_uint_eq(sum.live, POOL_PROF_RECORDS);
	ck_assert_uint_ge(sum.samples, (uint64_t)n - 4);
	ck_assert_uint_eq(sum.dropped, sum.samples - POOL_PROF_RECORDS);
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	free(o);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
	/* the pool's records went with it */
	pool__prof_snapshot(rows, 4, &sum);
	ck_assert_uint_eq(sum.live, 0);
}
END_TEST

/* Resident bytes of this process (/proc/self/statm). */
static size_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%lu %lu", &size, &resident), 2);
	fclose(f);
	return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* pool_profile_dump(args) to /dev/null, which must succeed. */
static void view_to_null(const char *args)
{
	FILE *f = fopen("/dev/null", "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pool_profile_dump(f, args), 0);
	fclose(f);
}

/*
 * The memory a named view needs goes back (the RSS libdw's view of the process holds: 17 MB in
 * a server): kept while the profile runs, whose views come again, released when it stops, and
 * after a view or report made while none runs; libdw is unloaded then. RSS is compared after
 * pool_trim(), which also purges the allocator that libdw's memory came from (jemalloc's or the
 * C library's malloc); a sanitizer's allocator keeps freed memory in its quarantine, so there
 * only libdw's unloading is checked.
 */
#define VIEW_RSS_SLACK ((size_t)2 << 20)

START_TEST(test_named_view_memory_comes_back)
{
	struct pool_head *p = pool_create("viewed", 64, 0);
	size_t before, after;
	void *o[200];
	FILE *f;
	int i;

	/* samples in the tables, their stacks taken; no name asked for yet */
	ck_assert_int_eq(pool_profile_start(1), 0);
	alloc_n(p, o, 100, site_other);
	alloc_n(p, o + 100, 100, site_pair);
	pool_trim();
	before = rss_bytes();
	ck_assert(!test_library_loaded("libdw.so.1"));

	/* a view of a running profile keeps libdw for the next one */
	view_to_null("");
	ck_assert(test_library_loaded("libdw.so.1"));
	view_to_null("json");
	pool_profile_stop();
	ck_assert_msg(!test_library_loaded("libdw.so.1"), "pool_profile_stop() kept libdw");
	pool_trim();
	after = rss_bytes();
	ck_assert_msg(TEST_ASAN || TEST_TSAN || after <= before + VIEW_RSS_SLACK,
	              "after a named view and pool_profile_stop(): RSS %zu KiB, %zu KiB before",
	              after >> 10, before >> 10);

	/* a view of the stopped profile, and a report naming frames (pools show detailed) */
	view_to_null("bypool");
	ck_assert_msg(!test_library_loaded("libdw.so.1"), "a view of a stopped profile kept libdw");
	f = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pool_dump(f, "detailed match viewed"), 0);
	fclose(f);
	ck_assert_msg(!test_library_loaded("libdw.so.1"), "pools show detailed kept libdw");
	for (i = 0; i < 200; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
	pool_trim();
	after = rss_bytes();
	ck_assert_msg(TEST_ASAN || TEST_TSAN || after <= before + VIEW_RSS_SLACK,
	              "after views of a stopped profile and the pool's destroy: RSS %zu KiB, %zu "
	              "KiB before", after >> 10, before >> 10);
}
END_TEST

/* `pools show detailed` names a pool's top sites once a profile ran (text and JSON). */
START_TEST(test_show_detailed)
{
	struct pool_head *p = pool_create("shown", 128, 0);
	void *o[50];
	char *s;
	int i, r;

	ck_assert_int_eq(pool_profile_start(1), 0);
	alloc_n(p, o, 50, site_other);
	s = test_capture(pool_dump, "detailed match shown", &r);
	ck_assert_int_eq(r, 0);
	/* every allocation sampled and every sample in use: exact, with the caller's stack */
	ck_assert_ptr_nonnull(strstr(s, "      profile: 6400 bytes, 50 objects (50 live samples) "
	                                 "by site_other+0x"));
	ck_assert_ptr_nonnull(strstr(s, "               <- test_show_detailed_fn+0x"));
	free(s);
	s = test_capture(pool_dump, "detailed json match shown", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, "\"profile\": [{\"pool\": \"shown\", \"site\": "));
	free(s);
	for (i = 0; i < 50; i++)
		pool_free(p, o[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The planted leak                                                                           */
/* ------------------------------------------------------------------------------------------ */

/*
 * A site keeping one object in a thousand, amid allocations of another site that frees all of
 * its own, ranks first in `pools profile bybytes` after a fixed amount of work, with live bytes
 * within 10% of the exact figure: the objects it kept, as `caller` debugging counts them.
 */
START_TEST(test_planted_leak_ranks_first)
{
	struct site_row rows[16];
	char *s, out[1 << 16];
	char *argv[] = { "check_profile", "leak-caller", NULL };
	const struct site_row *r;
	uintptr_t child_leak;
	long kept;
	size_t n;
	int st;

	leak_pool = pool_create("leaky", 64, 0);
	ck_assert_int_eq(pool_profile_start(LEAK_RATE), 0);
	run_leak(leak_pool, LEAK_ITERS);
	s = profile_json("bybytes json");
	n = parse_sites(s, rows, 16);
	free(s);
	ck_assert_uint_ge(n, 1);
	ck_assert_msg(in_site(rows[0].addr, site_leak), "the first site is not the leak");
	ck_assert_msg(rows[0].live >= 1, "no live sample");
	ck_assert_msg(rows[0].objects >= (unsigned long)(leak_nkept * 9 / 10) &&
	              rows[0].objects <= (unsigned long)(leak_nkept * 11 / 10),
	              "estimated %lu objects, %ld kept", rows[0].objects, leak_nkept);
	ck_assert_int_eq(rows[0].exact, 0);
	r = row_of(rows, n, site_pair);
	ck_assert_msg(!r || r->objects == 0, "the pair site holds %lu", r ? r->objects : 0);
	/* the exact figure, from caller debugging (a child: it changes the layout) */
	st = test_run_self(argv, NULL, NULL, out, sizeof(out));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", out);
	ck_assert_int_eq(sscanf(out, "kept %ld leak %" SCNuPTR, &kept, &child_leak), 2);
	n = parse_sites(strchr(out, '{'), rows, 16);
	ck_assert_uint_ge(n, 1);
	ck_assert_msg(rows[0].addr > child_leak && rows[0].addr < child_leak + 256,
	              "caller: the first site is not the leak");
	ck_assert_int_eq(rows[0].exact, 1);
	ck_assert_uint_eq(rows[0].objects, (unsigned long)kept);
	free(leak_kept);
}
END_TEST

/* The same leak, reported at exit (POOL_LEAK_REPORT=json), first and within 10%. */
static const char leak_report_script[] =
	"import json, sys\n"
	"t = open(sys.argv[1]).read()\n"
	"d = json.loads(t[t.index(\"{\"):])\n"
	"p = [q for q in d[\"pools\"] if q[\"name\"] == \"leaky\"][0]\n"
	"s = p[\"sites\"][0]\n"
	"print(d[\"in_use\"], p[\"in_use\"], int(s[\"address\"], 16), s[\"live_objects\"], "
	"int(s[\"exact\"]), len(p[\"sites\"]))\n";

START_TEST(test_leak_report_at_exit)
{
	char out[1 << 16], *py;
	char *argv[] = { "check_profile", "leak", NULL };
	unsigned long total, in_use, objs, nsites;
	uintptr_t addr, child_leak;
	long kept;
	int st, exact;

	st = test_run_self(argv, "POOL_LEAK_REPORT", "json", out, sizeof(out));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", out);
	ck_assert_int_eq(sscanf(out, "kept %ld leak %" SCNuPTR, &kept, &child_leak), 2);
	py = test_run_python(out, leak_report_script);
	ck_assert_int_eq(sscanf(py, "%lu %lu %" SCNuPTR " %lu %d %lu", &total, &in_use, &addr,
	                        &objs, &exact, &nsites), 6);
	free(py);
	/* objects in use: exactly those kept (the caches' objects are free) */
	ck_assert_uint_eq(in_use, (unsigned long)kept);
	ck_assert_uint_eq(total, (unsigned long)kept);
	ck_assert_msg(addr > child_leak && addr < child_leak + 256, "the first site is not the leak");
	ck_assert_msg(objs >= (unsigned long)(kept * 9 / 10) && objs <= (unsigned long)(kept * 11 / 10),
	              "estimated %lu, kept %ld", objs, kept);
	ck_assert_int_eq(exact, 0);
	/* =error: the same report, and exit status 1 */
	st = test_run_self(argv, "POOL_LEAK_REPORT", "error", out, sizeof(out));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "child: %s", out);
	ck_assert_ptr_nonnull(strstr(out, "objects (") );
	ck_assert_ptr_nonnull(strstr(out, "exiting with status 1"));
}
END_TEST

/*
 * The report's stacks, a heap profile at exit (POOL_LEAK_REPORT=1,heap:<path>), and the hint of
 * an [unsampled] row when a profile ran but did not sample the pool.
 */
START_TEST(test_leak_report_stacks_and_heap)
{
	char out[1 << 16], path[64], value[96], *heap;
	char *argv[] = { "check_profile", "unsampled", NULL };
	int st, r;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/tmp/check_profile.%ld", (long)getpid());
	snprintf(value, sizeof(value), "1,heap:%s.%%p.heap", path);
	st = test_run_self(argv, "POOL_LEAK_REPORT", value, out, sizeof(out));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", out);
	/* the chosen pool: exact, with the stack of its site */
	ck_assert_msg(strstr(out, "libpool:   pool 'watched' (64 bytes): 10 objects (640 bytes) in "
	                          "use, by site (exact: every allocation sampled):\n"
	                          "libpool:     10 objects (640 bytes): wrap_alloc+0x") &&
	              strstr(out, "\nlibpool:       <- caller_two+0x"), "%s", out);
	ck_assert_msg(strstr(out, "libpool:     ~10 objects (~640 bytes): [unsampled] (no live "
	                          "sample at one sample per 1 bytes in the pools chosen: `pools "
	                          "profile on rate 1 pool missed`"), "%s", out);
	ck_assert_msg(strstr(out, "libpool: leak report: heap profile of process "), "%s", out);
	/* the file: the chosen pool's stack, 10 objects */
	heap = strstr(out, " in /tmp/check_profile.");
	ck_assert_ptr_nonnull(heap);
	heap = strndup(heap + 4, strcspn(heap + 4, " "));
	f = fopen(heap, "r");
	ck_assert_msg(f != NULL, "%s: %s", heap, strerror(errno));
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	fclose(f);
	r = unlink(heap);
	free(heap);
	ck_assert_int_eq(r, 0);
	ck_assert_msg(!strncmp(out, "heap profile:     10:      640 [    10:      640] @ "
	                            "heapprofile/1\n    10:      640 [    10:      640] @ 0x", 78),
	              "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "\nMAPPED_LIBRARIES:\n"));
}
END_TEST

/* Nothing in use at exit: the report says so, even with objects in the thread caches. */
START_TEST(test_cached_objects_are_not_leaks)
{
	char out[8192];
	char *argv[] = { "check_profile", "no-leak", NULL };
	int st;

	st = test_run_self(argv, "POOL_LEAK_REPORT", "error", out, sizeof(out));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", out);
	ck_assert_ptr_nonnull(strstr(out, "freed 500\n"));
	ck_assert_ptr_nonnull(strstr(out, ": no object in use\n"));
	st = test_run_self(argv, "POOL_LEAK_REPORT", "json", out, sizeof(out));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", out);
	ck_assert_ptr_nonnull(strstr(out, "\"in_use\": 0, \"in_use_bytes\": 0, \"pools\": []}"));
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                    */
/* ------------------------------------------------------------------------------------------ */

struct load {
	struct pool_head *pool[2];
	atomic_int stop;
	unsigned int seed;
};

static void *load_worker(void *arg)
{
	struct load *l = arg;
	void *held[64] = { NULL };
	unsigned int seed = (unsigned int)__atomic_fetch_add(&l->seed, 7919, __ATOMIC_RELAXED);

	while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
		unsigned int r = rand_r(&seed), k = r % 64, which = (r >> 8) & 1;

		if (held[k])
			pool_free(l->pool[k & 1], held[k]);
		held[k] = (r >> 9) & 1 ? site_other(l->pool[k & 1]) : site_pair(l->pool[k & 1]);
		ck_assert_ptr_nonnull(held[k]);
		if (which) {
			void *o = site_leak(l->pool[0]);

			pool_free(l->pool[0], o);
		}
	}
	for (unsigned int k = 0; k < 64; k++)
		if (held[k])
			pool_free(l->pool[k & 1], held[k]);
	return NULL;
}

/*
 * Start and stop the profile `rounds` times while four threads allocate and free (40 under a
 * sanitizer, whose stack walks make each round several times slower: 150 took 40 s under ASan).
 */
static void toggle_under_load(int via_cli, int rounds)
{
	struct load l = { { pool_create("load-a", 48, 0), pool_create("load-b", 700, 0) }, 0, 1 };
	pthread_t t[4];
	unsigned int i;
	int k, r;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, load_worker, &l), 0);
	for (k = 0; k < rounds; k++) {
		char cmd[64], *s;

		if (via_cli) {
			snprintf(cmd, sizeof(cmd), "pools profile on rate %u", 64u << (k % 8));
			s = test_capture(cli_admin, cmd, &r);
			ck_assert_int_eq(r, 0);
			ck_assert_ptr_nonnull(strstr(s, "Profile on"));
			free(s);
			s = test_capture(cli_admin, k % 3 ? "pools profile 5" :
			                 "pools profile json", &r);
			ck_assert_int_eq(r, 0);
			free(s);
			s = test_capture(cli_admin, "pools profile off", &r);
			ck_assert_int_eq(r, 0);
			free(s);
		} else {
			ck_assert_int_eq(pool_profile_start((size_t)64 << (k % 8)), 0);
			s = test_capture(pool_profile_dump, k % 2 ? "bypool" : "prometheus", &r);
			ck_assert_int_eq(r, 0);
			free(s);
			pool_profile_stop();
		}
	}
	atomic_store(&l.stop, 1);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	/* every object back: the pools are whole and go */
	ck_assert_uint_eq(test_stats(l.pool[0]).used, 0);
	ck_assert_uint_eq(test_stats(l.pool[1]).used, 0);
	ck_assert_int_eq(pool_destroy(l.pool[0]), 0);
	ck_assert_int_eq(pool_destroy(l.pool[1]), 0);
}

START_TEST(test_start_stop_under_load_api)
{
	toggle_under_load(0, TEST_TSAN || TEST_ASAN ? 40 : 150);
}
END_TEST

START_TEST(test_start_stop_under_load_cli)
{
	toggle_under_load(1, TEST_TSAN || TEST_ASAN ? 40 : 150);
}
END_TEST

/* Objects allocated on one thread and freed on another are credited to the allocating site. */
struct cross {
	struct pool_head *pool;
	void *o[256];
	pthread_barrier_t freed, dumped;
};

static void *cross_alloc(void *arg)
{
	struct cross *c = arg;
	int i;

	for (i = 0; i < 256; i++)
		c->o[i] = site_leak(c->pool);
	return NULL;
}

static void *cross_free(void *arg)
{
	struct cross *c = arg;
	int i;

	for (i = 0; i < 256; i++)
		pool_free(c->pool, c->o[i]);
	/* stay alive with the objects in this thread's cache until the main thread looked */
	pthread_barrier_wait(&c->freed);
	pthread_barrier_wait(&c->dumped);
	return NULL;
}

START_TEST(test_credit_crosses_threads)
{
	struct cross c;
	struct site_row rows[16];
	const struct site_row *r;
	pthread_t a, b;
	size_t n;
	char *s;

	memset(&c, 0, sizeof(c));
	c.pool = pool_create("cross", 64, 0);
	pthread_barrier_init(&c.freed, NULL, 2);
	pthread_barrier_init(&c.dumped, NULL, 2);
	ck_assert_int_eq(pool_profile_start(1), 0);
	ck_assert_int_eq(pthread_create(&a, NULL, cross_alloc, &c), 0);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	ck_assert_int_eq(pthread_create(&b, NULL, cross_free, &c), 0);
	pthread_barrier_wait(&c.freed);
	s = profile_json("json pool cross");
	pthread_barrier_wait(&c.dumped);
	ck_assert_int_eq(pthread_join(b, NULL), 0);
	n = parse_sites(s, rows, 16);
	free(s);
	r = row_of(rows, n, site_leak);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->samples, 256);
	ck_assert_uint_eq(r->freed, 256);
	ck_assert_uint_eq(r->live, 0);
	ck_assert_uint_eq(r->objects, 0);
	pool_profile_stop();
	ck_assert_int_eq(pool_destroy(c.pool), 0);
	pthread_barrier_destroy(&c.freed);
	pthread_barrier_destroy(&c.dumped);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Call stacks                                                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * python3 on `pools profile json`: per site "stack <pool> <live_objects> <exact> <function>..."
 * (innermost first, "<function>@<line>" and "!" after an inlined one), then the profile's
 * "depth <d> stacks <n> refused <n> chosen <0|1>".
 */
static const char stack_script[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"p = d[\"profile\"]\n"
	"for s in d[\"sites\"]:\n"
	"    f = [x[\"function\"] + (\"@%d\" % x[\"line\"] if \"line\" in x else \"\") +\n"
	"         (\"!\" if x[\"inlined\"] else \"\") for x in s[\"stack\"]]\n"
	"    print(\"stack\", s[\"pool\"] or \"-\", s[\"live_objects\"], int(s[\"exact\"]), \" \".join(f))\n"
	"print(\"depth\", p[\"depth\"], \"stacks\", p[\"stacks\"], \"refused\", p[\"stacks_refused\"],\n"
	"      \"chosen\", int(p[\"chosen_pools\"]))\n";

static char *stacks_of(const char *args)
{
	char *s = profile_json(args), *py = test_run_python(s, stack_script);

	free(s);
	return py;
}

/* Callers of one wrapper are sites of their own, named with file and line; identical stacks are
 * stored once; an always-inlined wrapper is a frame of its own. */
START_TEST(test_stacks_tell_callers_apart)
{
	struct pool_head *p = pool_create("stacked", 48, 0);
	void *o[70];
	char *py, *s;
	int i, r;

	ck_assert_int_eq(pool_profile_start(1), 0);
	alloc_n(p, o, 30, caller_one);
	alloc_n(p, o + 30, 20, caller_two);
	alloc_n(p, o + 50, 20, caller_inlining);
	py = stacks_of("json pool stacked");
	/* the wrapper first, then the caller, with the lines of check_profile.c */
	ck_assert_msg(strstr(py, "stack stacked 30 1 wrap_alloc@") &&
	              strstr(py, " caller_one@"), "%s", py);
	ck_assert_msg(strstr(py, "stack stacked 20 1 wrap_alloc@") &&
	              strstr(py, " caller_two@"), "%s", py);
	ck_assert_msg(strstr(py, "stack stacked 20 1 inlined_alloc@") &&
	              strstr(py, "! caller_inlining@"), "%s", py);
	/* pool_alloc(), inline in pool.h, is libpool's: never a frame */
	ck_assert_ptr_null(strstr(py, "pool_alloc"));
	/* 70 allocations, 3 distinct stacks stored */
	ck_assert_msg(strstr(py, "depth 32 stacks 3 refused 0 chosen 0"), "%s", py);
	free(py);
	/* folded: the callers above the wrapper, the bytes of each */
	s = test_capture(pool_profile_dump, "folded pool stacked", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_msg(strstr(s, ";caller_one;wrap_alloc 1440\n") &&
	              strstr(s, ";caller_two;wrap_alloc 960\n") &&
	              strstr(s, ";caller_inlining;inlined_alloc 960\n"), "%s", s);
	free(s);
	/* the text: the first frame on the row, the rest below it */
	s = test_capture(pool_profile_dump, "pool stacked", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_msg(strstr(s, "  wrap_alloc+0x") && strstr(s, "\n        <- caller_one+0x") &&
	              strstr(s, " (check_profile.c:"), "%s", s);
	free(s);
	for (i = 0; i < 70; i++)
		pool_free(p, o[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* `depth <frames>` cuts stacks; stacks past the tables' bound count in [other]. */
START_TEST(test_stack_depth_and_bound)
{
	struct pool_head *p = pool_create("paths", 32, 0);
	unsigned int n = POOL_STACK_SLOTS + 200, i;
	void **o = calloc(n, sizeof(*o));
	char *py, *s, want[64];
	int r;

	ck_assert_ptr_nonnull(o);
	s = test_capture(cli_admin, "pools profile on rate 1 depth 2", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, "stacks of up to 2 frames"));
	free(s);
	o[0] = caller_one(p);
	py = stacks_of("json pool paths");
	/* two frames: the wrapper and its caller, nothing of the test's driver */
	ck_assert_msg(strstr(py, "wrap_alloc@") && strstr(py, " caller_one@") &&
	              !strstr(py, "test_stack_depth_and_bound"), "%s", py);
	ck_assert_msg(strstr(py, "depth 2 stacks 1 "), "%s", py);
	free(py);
	pool_free(p, o[0]);
	/*
	 * 11 levels of two functions: 2048 paths, more distinct stacks than the tables hold; 12
	 * frames each, so that the 1023 stacks fill before the 16384 frames do (deeper stacks
	 * fill the frames first, which is counted the same way)
	 */
	s = test_capture(cli_admin, "pools profile on rate 1 depth 12", &r);
	ck_assert_int_eq(r, 0);
	free(s);
	for (i = 0; i < n; i++)
		o[i] = path_a(p, i, 11);
	py = stacks_of("json");
	snprintf(want, sizeof(want), "depth 12 stacks %u refused ", POOL_STACK_SLOTS - 1);
	ck_assert_msg(strstr(py, want) && !strstr(py, "refused 0 "), "%s",
	              strstr(py, "depth ") ? strstr(py, "depth ") : "no summary");
	free(py);
	s = profile_json("json");
	ck_assert_ptr_nonnull(strstr(s, "{\"pool\": \"\", \"site\": \"[other]\""));
	free(s);
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	free(o);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * The exact mode: `rate 1 pool <name>` samples every allocation of that pool and none of the
 * others; its sites are exact. `rate 0` is the default rate, as pool_profile_start(0).
 */
START_TEST(test_exact_mode_and_rate_zero)
{
	struct pool_head *a = pool_create("chosen", 208, 0), *b = pool_create("ignored", 208, 0);
	void *oa[500], *ob[100];
	char *py, *s;
	int i, r;

	s = test_capture(cli_admin, "pools profile on rate 0", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_msg(strstr(s, "Profile on: one sample per about 524288 bytes allocated per "
	                        "thread, stacks of up to 32 frames.\n"), "%s", s);
	free(s);
	ck_assert_uint_eq(pool__prof_rate(), POOL_PROFILE_RATE_DEF);
	s = test_capture(cli_admin, "pools profile on rate 1 pool chosen", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, "; pools chosen only.\n"));
	free(s);
	alloc_n(a, oa, 500, caller_one);
	alloc_n(b, ob, 100, caller_two);
	py = stacks_of("json");
	/* 500 leaked objects of 208 bytes, counted exactly; the other pool not sampled at all */
	ck_assert_msg(strstr(py, "stack chosen 500 1 wrap_alloc@"), "%s", py);
	ck_assert_msg(strstr(py, "stack ignored 100 0 \n") && !strstr(py, " caller_two@"),
	              "%s", py);
	ck_assert_msg(strstr(py, " chosen 1\n"), "%s", py);
	free(py);
	/* the same pools for the API's start: every pool again */
	ck_assert_int_eq(pool_profile_start(0), 0);
	py = stacks_of("json");
	ck_assert_msg(strstr(py, " chosen 0\n"), "%s", py);
	free(py);
	for (i = 0; i < 500; i++)
		pool_free(a, oa[i]);
	for (i = 0; i < 100; i++)
		pool_free(b, ob[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(a), 0);
	ck_assert_int_eq(pool_destroy(b), 0);
}
END_TEST

/*
 * `pools profile heap`, read as jeprof and pprof read it: the header with the totals and the
 * interval, a line per stack whose figures are the view's, its frames the stack's return
 * addresses, then the mappings, among them this program's.
 */
static const char heap_script[] =
	"import re, sys\n"
	"t = open(sys.argv[1]).read().split(\"\\n\")\n"
	"h = re.match(r\"^heap profile: *(\\d+): *(\\d+) \\[ *(\\d+): *(\\d+)\\] @ heapprofile/(\\d+)$\", t[0])\n"
	"assert h, t[0]\n"
	"n = b = 0\n"
	"for l in t[1:]:\n"
	"    if not l: break\n"
	"    m = re.match(r\"^ *(\\d+): *(\\d+) \\[ *(\\d+): *(\\d+)\\] @((?: 0x[0-9a-f]+)+)$\", l)\n"
	"    assert m, l\n"
	"    n += int(m.group(1)); b += int(m.group(2))\n"
	"    print(\"entry\", m.group(1), m.group(2), m.group(3), len(m.group(5).split()),\n"
	"          int(m.group(5).split()[0], 16))\n"
	"assert (n, b) == (int(h.group(1)), int(h.group(2))), (n, b, t[0])\n"
	"i = t.index(\"MAPPED_LIBRARIES:\")\n"
	"assert any(l.endswith(\"/check_profile\") and \" r-xp \" in l for l in t[i:]), t[i:]\n"
	"print(\"rate\", h.group(5), \"maps\", len([l for l in t[i + 1:] if l]))\n";

START_TEST(test_heap_profile_format)
{
	struct pool_head *p = pool_create("heaped", 100, 0);
	void *o[40];
	char *s, *py, *line;
	uintptr_t leaf;
	unsigned long objs, bytes, allocs, frames, n = 0;
	int i, r;

	ck_assert_int_eq(pool_profile_start(1), 0);
	alloc_n(p, o, 25, caller_one);
	alloc_n(p, o + 25, 15, caller_two);
	s = test_capture(pool_profile_dump, "heap pool heaped", &r);
	ck_assert_int_eq(r, 0);
	py = test_run_python(s, heap_script);
	free(s);
	for (line = py; (line = strstr(line, "entry ")); line++, n++) {
		ck_assert_int_eq(sscanf(line, "entry %lu %lu %lu %lu %" SCNuPTR, &objs, &bytes,
		                        &allocs, &frames, &leaf), 5);
		ck_assert_msg(objs == 25 || objs == 15, "%s", py);
		/* stride 112: the objects' bytes, as pools profile counts them */
		ck_assert_uint_eq(bytes, objs * 112);
		ck_assert_uint_eq(allocs, objs);
		ck_assert_uint_ge(frames, 3);
		ck_assert_msg(in_site(leaf, wrap_alloc), "%s", py);
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_msg(strstr(py, "rate 1 maps "), "%s", py);
	free(py);
	for (i = 0; i < 40; i++)
		pool_free(p, o[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * The heap profile's two figures of a row, objects in use and allocated, come from one
 * estimator: the objects one sample of the pool stands for, times its live samples and times
 * all its samples. A site keeping 300 of 1200 objects beside one freeing all of its 600, at a
 * rate where a sample stands for about 10 objects (100 to 150 samples, 20 to 40 live). Rows
 * are summed per caller (a caller may have two stacks below it, as in a DEBUG=2 build).
 */
static const char estimator_script[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"rows = {}\n"
	"for s in d[\"sites\"]:\n"
	"    if s[\"stack\"]:\n"
	"        r = rows.setdefault(s[\"stack\"][1][\"function\"], [0, 0, 0, 0])\n"
	"        for i, k in enumerate((\"samples\", \"live_samples\", \"live_objects\",\n"
	"                               \"allocated_objects\")):\n"
	"            r[i] += s[k]\n"
	"for f, r in rows.items():\n"
	"    print(\"row\", f, *r)\n";

START_TEST(test_heap_one_estimator)
{
	struct pool_head *p = pool_create("estimated", 100, 0);
	void **o = calloc(1800, sizeof(*o));
	unsigned long samples, live, objs, allocs, rows = 0;
	char *s, *py, *line, fn[64];
	int i;

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pool_profile_start(1024), 0);
	alloc_n(p, o, 1200, caller_one);
	for (i = 300; i < 1200; i++)
		pool_free(p, o[i]);
	alloc_n(p, o + 1200, 600, caller_two);
	for (i = 1200; i < 1800; i++)
		pool_free(p, o[i]);
	s = profile_json("json pool estimated");
	py = test_run_python(s, estimator_script);
	free(s);
	for (line = py; (line = strstr(line, "row ")); line++, rows++) {
		ck_assert_int_eq(sscanf(line, "row %63s %lu %lu %lu %lu", fn, &samples, &live, &objs,
		                        &allocs), 5);
		/* allocated / in use = samples / live samples, to an object's rounding */
		ck_assert_msg(allocs * live <= objs * samples + samples + live &&
		              objs * samples <= allocs * live + samples + live, "%s", py);
		ck_assert_uint_ge(allocs, objs);
		if (!strcmp(fn, "caller_one")) {
			ck_assert_msg(live > 0 && objs == 300, "%s", py);
		} else {
			ck_assert_str_eq(fn, "caller_two");
			ck_assert_msg(live == 0 && objs == 0 && allocs > 0, "%s", py);
		}
	}
	ck_assert_uint_eq(rows, 2);
	free(py);
	for (i = 0; i < 300; i++)
		pool_free(p, o[i]);
	free(o);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Formats and errors                                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * The rows of the JSON and of Prometheus are keyed by stack: two callers of one wrapper share
 * the first frame (`site`) and differ by `key`, which stays the same from one dump to the next.
 */
static const char key_script[] =
	"import json, sys\n"
	"from prometheus_client.parser import text_string_to_metric_families\n"
	"j, t = open(sys.argv[1]).read().split(\"\\n--\\n\")\n"
	"d = json.loads(j)\n"
	"for s in d[\"sites\"]:\n"
	"    print(\"json\", s[\"stack\"][1][\"function\"], s[\"key\"], s[\"site\"].split(\"+\")[0])\n"
	"for f in text_string_to_metric_families(t):\n"
	"    for s in f.samples:\n"
	"        if s.name == \"libpool_profile_live_objects\":\n"
	"            print(\"prom\", s.labels[\"key\"], s.labels[\"site\"].split(\"+\")[0], int(s.value))\n";

START_TEST(test_rows_keyed_by_stack)
{
	struct pool_head *p = pool_create("keyed", 48, 0);
	char *j1, *j2, *t, *all, *py, one[64], two[64], k1[17], k2[17];
	void *o[50];
	int i, r;

	ck_assert_int_eq(pool_profile_start(1), 0);
	alloc_n(p, o, 30, caller_one);
	alloc_n(p, o + 30, 20, caller_two);
	j1 = profile_json("json pool keyed");
	j2 = profile_json("json pool keyed");
	t = test_capture(pool_profile_dump, "prometheus pool keyed", &r);
	ck_assert_int_eq(r, 0);
	all = malloc(strlen(j1) + strlen(t) + 8);
	ck_assert_ptr_nonnull(all);
	sprintf(all, "%s\n--\n%s", j1, t);
	py = test_run_python(all, key_script);
	ck_assert_msg(strstr(py, "json caller_one ") && strstr(py, "json caller_two "), "%s", py);
	ck_assert_int_eq(sscanf(strstr(py, "json caller_one "), "json caller_one %16s %63s", k1,
	                        one), 2);
	ck_assert_int_eq(sscanf(strstr(py, "json caller_two "), "json caller_two %16s %63s", k2,
	                        two), 2);
	/* one first frame, two stacks, two keys */
	ck_assert_msg(!strcmp(one, "wrap_alloc") && !strcmp(two, "wrap_alloc") && strcmp(k1, k2),
	              "%s", py);
	snprintf(one, sizeof(one), "prom %s wrap_alloc 30\n", k1);
	snprintf(two, sizeof(two), "prom %s wrap_alloc 20\n", k2);
	ck_assert_msg(strstr(py, one) && strstr(py, two), "%s", py);
	/* the same keys in the next dump */
	ck_assert_msg(strstr(j2, k1) && strstr(j2, k2), "%s", j2);
	free(py);
	free(all);
	free(t);
	free(j2);
	free(j1);
	for (i = 0; i < 50; i++)
		pool_free(p, o[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

static const char prom_script[] =
	"import sys\n"
	"from prometheus_client.parser import text_string_to_metric_families\n"
	"for f in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
	"    assert f.documentation, f.name\n"
	"    for s in f.samples:\n"
	"        print(s.name, s.labels.get(\"pool\", \"-\"), s.labels.get(\"site\", \"-\"), "
	"int(s.value), s.labels.get(\"stack\", \"-\"))\n";

START_TEST(test_prometheus_parsed_back)
{
	struct pool_head *p = pool_create("prom", 256, 0);
	void *o[40];
	char *s, *py;
	int i, r;

	ck_assert_int_eq(pool_profile_start(1), 0);
	for (i = 0; i < 40; i++)
		o[i] = site_other(p);
	s = test_capture(pool_profile_dump, "prometheus pool prom", &r);
	ck_assert_int_eq(r, 0);
	py = test_run_python(s, prom_script);
	ck_assert_ptr_nonnull(strstr(py, "libpool_profile_info - - 1 -\n"));
	ck_assert_ptr_nonnull(strstr(py, "libpool_profile_live_bytes prom "));
	/* the stack label: the functions from the root down, with their offsets */
	ck_assert_msg(strstr(py, " 10240 ") && strstr(py, ";test_prometheus_parsed_back_fn+0x") &&
	              strstr(py, ";site_other+0x"), "%s", py);
	ck_assert_ptr_nonnull(strstr(py, "libpool_profile_live_objects prom "));
	ck_assert_ptr_nonnull(strstr(py, "libpool_profile_samples_total prom "));
	ck_assert_ptr_nonnull(strstr(py, "libpool_profile_freed_total prom "));
	free(py);
	free(s);
	for (i = 0; i < 40; i++)
		pool_free(p, o[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

static int cli_user(FILE *out, const char *line)
{
	return pool_cli_exec_level(line, out, POOL_CLI_USER);
}

START_TEST(test_text_view)
{
	struct pool_head *p = pool_create("texty", 64, 0);
	void *o[11];
	char *s;
	int i, r;

	s = test_capture(pool_profile_dump, NULL, &r);
	ck_assert_int_eq(r, 0);
	free(s);
	ck_assert_int_eq(pool_profile_start(1), 0);
	alloc_n(p, o, 10, site_other);
	o[10] = site_pair(p);
	s = test_capture(pool_profile_dump, "bybytes pool texty 1", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, "Profile on, started "));
	ck_assert_ptr_nonnull(strstr(s, "one sample per about 1 bytes allocated per thread"));
	ck_assert_ptr_nonnull(strstr(s, "(limited)"));
	/* two lines of header, one of titles, the site, then the rest of its stack */
	ck_assert_uint_eq(test_count_lines(s) - test_count(s, "\n        <- "), 4);
	ck_assert_ptr_nonnull(strstr(s, "\n        <- test_text_view_fn+0x"));
	/* every allocation sampled, all in use and sampled: exact */
	ck_assert_ptr_nonnull(strstr(s, "            640           10 "));
	free(s);
	/* a user session sees the sites, not their addresses */
	s = test_capture(cli_user, "pools profile pool texty", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_null(strstr(s, "(0x"));
	free(s);
	for (i = 0; i < 11; i++)
		pool_free(p, o[i]);
	pool_profile_stop();
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_cli_errors)
{
	static const struct {
		const char *line, *words;
		int level, err;
	} bad[] = {
		{ "pools profile on", "Permission denied: 'pools profile on' needs level admin",
		  POOL_CLI_USER, EACCES },
		{ "pools profile off", "needs level admin; this session is operator",
		  POOL_CLI_OPERATOR, EACCES },
		{ "pools profile on depth 0", "Invalid depth '0'", POOL_CLI_ADMIN, EINVAL },
		{ "pools profile on depth 65", "Invalid depth '65'", POOL_CLI_ADMIN, EINVAL },
		{ "pools profile on pool", "Option 'pool' needs a pool name", POOL_CLI_ADMIN,
		  EINVAL },
		{ "pools profile on pool nosuch", "No pool named 'nosuch'", POOL_CLI_ADMIN,
		  ENOENT },
		{ "pools profile off now", "Unknown option 'now'", POOL_CLI_ADMIN, EINVAL },
		{ "pools profile heap folded", "conflicts", POOL_CLI_USER, EINVAL },
		{ "pools profile on rate 2048g", "Invalid rate '2048g'", POOL_CLI_ADMIN, EINVAL },
		{ "pools profile on rate", "Invalid rate ''", POOL_CLI_ADMIN, EINVAL },
		{ "pools profile on now", "Unknown option 'now'", POOL_CLI_ADMIN, EINVAL },
		{ "pools profile bytes", "Unknown option 'bytes'", POOL_CLI_USER, EINVAL },
		{ "pools profile bysite byage", "Option 'byage' conflicts with 'bysite'",
		  POOL_CLI_USER, EINVAL },
		{ "pools profile 0", "Invalid count '0' (expected a number of sites from 1 up) in "
		  "'pools profile'. Try 'help'.\n", POOL_CLI_USER, EINVAL },
		{ "pools profile 3 4", "Invalid count '4' (a count was already given) in 'pools "
		  "profile'. Try 'help'.\n", POOL_CLI_USER, EINVAL },
		/* the same words as `pools show`'s: the one parser (src/introspect/pool-args.c) */
		{ "pools profile json json", "Option 'json' given twice in 'pools profile'. Try "
		  "'help'.\n", POOL_CLI_USER, EINVAL },
		{ "pools profile pool a pool b", "Option 'pool' given twice", POOL_CLI_USER, EINVAL },
		{ "pools profile text", "Unknown option 'text' for 'pools profile'", POOL_CLI_USER,
		  EINVAL },
		{ "pools profile pool", "Option 'pool' needs a pool name", POOL_CLI_USER, EINVAL },
		{ "pools profile pool nosuch", "No pool named 'nosuch'", POOL_CLI_USER, ENOENT },
		{ "pools profile json prometheus", "conflicts", POOL_CLI_USER, EINVAL },
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);

		errno = 0;
		ck_assert_int_eq(pool_cli_exec_level(bad[i].line, out,
		                                     (enum pool_cli_level)bad[i].level), -1);
		ck_assert_msg(errno == bad[i].err, "%s: errno %d", bad[i].line, errno);
		fclose(out);
		ck_assert_msg(strstr(buf, bad[i].words), "%s: %s", bad[i].line, buf);
		ck_assert_uint_eq(test_count_lines(buf), 1);
		free(buf);
	}
	ck_assert_uint_eq(pool_debugging & POOL_DBG_PROFILE, 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The report of a failed allocation                                                          */
/* ------------------------------------------------------------------------------------------ */

static atomic_ulong allocs_seen;
static atomic_int counting;

#if TEST_ASAN
static void count_malloc(const volatile void *ptr, size_t size)
{
	(void)ptr;
	(void)size;
	if (atomic_load(&counting))
		atomic_fetch_add(&allocs_seen, 1);
}

static void count_free(const volatile void *ptr)
{
	(void)ptr;
}
#endif

/* Bytes the C library or jemalloc handed this thread so far, when this build can tell. */
static int allocated_so_far(uint64_t *bytes)
{
#if !TEST_ASAN && POOL_USE_JEMALLOC
	size_t sz = sizeof(*bytes);

	return mallctl("thread.allocated", bytes, &sz, NULL, 0) == 0 ? 0 : -1;
#else
	(void)bytes;
	return -1;
#endif
}

/* A pool at its limit; `failures` allocations that fail, their reports on stderr. */
static void fail_at_limit(void *arg)
{
	long failures = (long)(intptr_t)arg, i;
	struct pool_head *p = pool_create("capped", 96, 0);
	void *held;

	/* the limit first: a refill takes half a magazine below it */
	pool_set_limit(p, 1);
	held = site_other(p);
	pool_parse_debugging("fail-report", NULL);
	for (i = 0; i < failures; i++)
		if (site_pair(p))
			_exit(3);
	pool_free(p, held);
}

START_TEST(test_fail_report_once_per_burst)
{
	struct death d;

	run_child(fail_at_limit, (void *)(intptr_t)200, &d);
	ck_assert(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0);
	ck_assert_uint_eq(test_count(d.out, "libpool: allocation failed"), 1);
	ck_assert_ptr_nonnull(strstr(d.out, "libpool: allocation failed in pool 'capped' (96 "
	                                   "bytes): the pool's limit is reached\n"));
	ck_assert_ptr_nonnull(strstr(d.out, "limit 1 objects; 1 allocated ("));
	ck_assert_ptr_nonnull(strstr(d.out, "1 failure\n"));
	ck_assert_ptr_nonnull(strstr(d.out, "libpool:   caller: "));
	ck_assert_ptr_nonnull(strstr(d.out, "pool_profile_start() or POOL_DEBUG=profile"));
}
END_TEST

/* A second burst, after a second without failures: reported, with the count left out. */
static void two_bursts(void *arg)
{
	struct pool_head *p = pool_create("bursty", 64, 0);
	void *held;
	int i;

	(void)arg;
	/* the limit first: a refill takes half a magazine below it */
	pool_set_limit(p, 1);
	held = site_other(p);
	pool_parse_debugging("fail-report", NULL);
	for (i = 0; i < 50; i++)
		site_pair(p);
	sleep(2);
	site_pair(p);
	pool_free(p, held);
}

START_TEST(test_fail_report_second_burst)
{
	struct death d;

	run_child(two_bursts, NULL, &d);
	ck_assert(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0);
	ck_assert_uint_eq(test_count(d.out, "libpool: allocation failed in pool 'bursty'"), 2);
	ck_assert_ptr_nonnull(strstr(d.out, "49 more failures since the last report were not "
	                                   "reported"));
	ck_assert_ptr_nonnull(strstr(d.out, "51 failures\n"));
}
END_TEST

/*
 * When the OS layer gives no memory, the report allocates nothing: no call to malloc() (ASan's
 * hooks, or jemalloc's count of the thread's bytes) and none at the fault-injection sites of
 * the library's own allocations, while a failure is reported; it names the sites of the
 * profile holding the pool (with dladdr(3): libdw would allocate), and the stack of the call
 * that failed.
 */
/*
 * The pool of fail_counted(): objects whose stride is 1920 bytes (1912 in a sanitizer's build,
 * whose tag adds 8), a multiple of the cache line, so that each refill of one object takes one
 * (no line group), and the objects one slab holds; set before the child is forked.
 */
static size_t counted_size;
static unsigned int counted_per_slab;

static void counted_choose(void)
{
	size_t size;

	for (size = 1920; size >= 1904; size -= 8) {
		struct pool_head *p = pool_create("probe1920", size, 0);
		int fits;

		ck_assert_ptr_nonnull(p);
		fits = p->os_size == 1920;
		counted_per_slab = p->slabs.capacity;
		ck_assert_int_eq(pool_destroy(p), 0);
		if (fits) {
			counted_size = size;
			return;
		}
	}
	ck_abort_msg("no size of stride 1920");
}

static void fail_counted(void *arg)
{
	/* a slab's worth of objects, so that the next one needs a new slab */
	struct pool_head *p = pool_create("counted", counted_size, 0);
	unsigned int n = counted_per_slab;
	void *held[64];
	uint64_t before = 0, after = 0;
	unsigned long meta, map, cli, os;
	int i, have = allocated_so_far(&before) == 0;

	(void)arg;
	/* no cache: each allocation goes to the shared tier and below, the one past the slab's
	 * objects to the OS layer, which fails */
	pool_parse_debugging("no-cache", NULL);
	pool_profile_start(1);
	ck_assert_uint_le(n, 64);
	alloc_n(p, held, (int)n, site_leak);
	pool_profile_dump(stderr, "1");
	/* no more samples (they would come from the profile's region): the figures stay */
	pool_profile_stop();
	pool_parse_debugging("fail-report", NULL);
#if TEST_ASAN
	__sanitizer_install_malloc_and_free_hooks(count_malloc, count_free);
#endif
	pool__fault_arm(POOL_FAULT_META, ULONG_MAX / 2);
	pool__fault_arm(POOL_FAULT_MAP, ULONG_MAX / 2);
	pool__fault_arm(POOL_FAULT_CLI, ULONG_MAX / 2);
	pool__fault_arm(POOL_FAULT_OS_ALLOC, 1);
	have = have && allocated_so_far(&before) == 0;
	atomic_store(&counting, 1);
	if (site_pair(p))
		_exit(3);
	atomic_store(&counting, 0);
	have = have && allocated_so_far(&after) == 0;
	meta = pool__fault_arm(POOL_FAULT_META, 0);
	map = pool__fault_arm(POOL_FAULT_MAP, 0);
	cli = pool__fault_arm(POOL_FAULT_CLI, 0);
	os = pool__fault_arm(POOL_FAULT_OS_ALLOC, 0);
	fprintf(stderr, "seen malloc %lu meta %lu map %lu cli %lu os %lu bytes %s\n",
	        atomic_load(&allocs_seen), meta, map, cli, os,
	        have ? (after == before ? "same" : "more") : "unknown");
	for (i = 0; i < (int)n; i++)
		pool_free(p, held[i]);
}

START_TEST(test_fail_report_allocates_nothing)
{
	char want[160];
	struct death d;

	counted_choose();
	run_child(fail_counted, NULL, &d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0, "%s", d.out);
	ck_assert_ptr_nonnull(strstr(d.out, "seen malloc 0 meta 0 map 0 cli 0 os 1 bytes "));
	ck_assert_ptr_null(strstr(d.out, "bytes more"));
	snprintf(want, sizeof(want), "allocation failed in pool 'counted' (%zu bytes): out of "
	         "memory (the OS layer gave none)", counted_size);
	ck_assert_msg(strstr(d.out, want), "'%s' not in: %s", want, d.out);
	/* dladdr(3) names: the test is linked with -rdynamic */
	/* dladdr(3): a static function is its file and offset there */
	ck_assert_msg(strstr(d.out, "libpool:   caller: ") &&
	              strstr(d.out, "\nlibpool:     <- main+0x"), "%s", d.out);
	snprintf(want, sizeof(want), "sites holding the most objects of the pool (its objects in "
	         "use shared by the profile's live samples):\nlibpool:     ~%u bytes, ~%u objects "
	         "(%u live samples): ", (unsigned int)counted_size * counted_per_slab,
	         counted_per_slab, counted_per_slab);
	ck_assert_msg(strstr(d.out, want), "'%s' not in: %s", want, d.out);
	ck_assert_msg(strstr(d.out, "\nlibpool:       <- main+0x"), "%s", d.out);
}
END_TEST

/*
 * At a limit (memory is there), the report names frames as the profile does, with file and
 * line (libdw), and its estimates are the profile's at the same moment: a pool capped at 35
 * objects, a site holding 30 of them and another 5, sampled at a rate of 1 KiB (the weight of
 * one sample, 1 / (1 - e^-(208/1024)), is 5.4: live samples times the weight would say more
 * than 35 with 7 of them). The samples are random: a run with none of the pool (about one in
 * a thousand) is run again, three times at most.
 */
static void fail_agrees(void *arg)
{
	struct pool_head *p = pool_create("capped35", 208, 0);
	void *held[35];
	int i;

	(void)arg;
	pool_profile_start(1024);
	/* the limit first: refills from the slab tier take half a magazine below it */
	pool_set_limit(p, 35);
	alloc_n(p, held, 30, site_leak);
	alloc_n(p, held + 30, 5, site_other);
	pool_profile_dump(stderr, "bypool json");
	pool_parse_debugging("fail-report", NULL);
	if (site_pair(p))
		_exit(3);
	for (i = 0; i < 35; i++)
		pool_free(p, held[i]);
}

START_TEST(test_fail_report_agrees_with_profile)
{
	struct site_row rows[16];
	struct death d;
	char *line, *json;
	size_t n, i;
	unsigned long total = 0, sampled = 0;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		run_child(fail_agrees, NULL, &d);
		ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0, "%s", d.out);
		if (!strstr(d.out, "no site of this pool sampled yet"))
			break;
	}
	ck_assert_ptr_nonnull(strstr(d.out, "the pool's limit is reached"));
	ck_assert_ptr_nonnull(strstr(d.out, "35 used (handed out or cached), 35 in use;"));
	/* libdw: the static test function by name, with its file and line */
	ck_assert_ptr_nonnull(strstr(d.out, "libpool:   caller: site_pair+0x"));
	ck_assert_ptr_nonnull(strstr(d.out, " (check_profile.c:"));
	ck_assert_msg(strstr(d.out, "<- fail_agrees"), "%s", d.out);
	/* each site's figure in the report is the view's, and they add up to the 35 */
	json = strndup(strchr(d.out, '{'), (size_t)(strstr(d.out, "libpool: allocation failed") -
	                                            strchr(d.out, '{')));
	n = parse_sites(json, rows, 16);
	free(json);
	ck_assert_uint_ge(n, 1);
	for (i = 0; i < n; i++) {
		char want[128];

		/* the rows with live samples: [unsampled] is the view's alone */
		if (!rows[i].objects || !rows[i].live)
			continue;
		snprintf(want, sizeof(want), ", ~%lu objects (%lu live sample", rows[i].objects,
		         rows[i].live);
		ck_assert_msg(strstr(d.out, want), "the report lacks '%s': %s", want, d.out);
		total += rows[i].objects;
		sampled++;
	}
	/*
	 * the pool's 35, shared among its sampled sites: each site's share is rounded to the
	 * nearest object, by the report as by the view (the report sees only its top sites), so the
	 * sum is 35 give or take half an object per site (36 with two sites that both round up)
	 */
	ck_assert_msg(2 * total + sampled >= 70 && 2 * total <= 70 + sampled,
	              "%lu objects over %lu sampled sites: %s", total, sampled, d.out);
	for (line = d.out, n = 0; (line = strstr(line, "\nlibpool:     ~")); line++, n++) {
		unsigned long bytes, objs;

		ck_assert_int_eq(sscanf(line, "\nlibpool:     ~%lu bytes, ~%lu objects", &bytes,
		                        &objs), 2);
		ck_assert_msg(objs <= 35, "an estimate over the limit: %s", d.out);
	}
	ck_assert_uint_ge(n, 1);
}
END_TEST

/* Fault injection (-dMfail) and the OS layer failing: reported with their cause. */
static void fail_injected(void *arg)
{
	struct pool_head *p = pool_create("injected", 64, 0);

	(void)arg;
	pool_parse_debugging("fail=100,fail-report", NULL);
	if (site_pair(p))
		_exit(3);
}

static void fail_os(void *arg)
{
	struct pool_head *p = pool_create("osfail", 64, 0);

	(void)arg;
	pool_parse_debugging("fail-report,no-cache", NULL);
	pool__fault_arm(POOL_FAULT_OS_ALLOC, 1);
	if (site_pair(p))
		_exit(3);
}

START_TEST(test_fail_report_causes)
{
	struct death d;

	run_child(fail_injected, NULL, &d);
	ck_assert(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0);
	ck_assert_ptr_nonnull(strstr(d.out, "allocation failed in pool 'injected' (64 bytes): "
	                                   "fault injection (-dMfail)\n"));
	run_child(fail_os, NULL, &d);
	ck_assert(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0);
	ck_assert_ptr_nonnull(strstr(d.out, "allocation failed in pool 'osfail' (64 bytes): out "
	                                   "of memory (the OS layer gave none)\n"));
}
END_TEST

/* Several threads failing at once: one report, no crash. */
static struct pool_head *fail_pool;

static void *fail_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 500; i++)
		if (site_pair(fail_pool))
			_exit(3);
	return NULL;
}

static void fail_threads(void *arg)
{
	pthread_t t[4];
	void *held;
	int i;

	(void)arg;
	fail_pool = pool_create("crowded", 64, 0);
	held = site_other(fail_pool);
	pool_parse_debugging("fail-report", NULL);
	pool_set_limit(fail_pool, 1);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, fail_thread, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pool_free(fail_pool, held);
}

START_TEST(test_fail_report_threads)
{
	struct death d;

	run_child(fail_threads, NULL, &d);
	ck_assert(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0);
	ck_assert_uint_eq(test_count(d.out, "libpool: allocation failed in pool 'crowded'"), 1);
}
END_TEST

static Suite *profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_add_test(tc, test_start_and_stop);
	tcase_add_test(tc, test_debug_options);
	tcase_add_test(tc, test_every_allocation_sampled_and_freed);
	tcase_add_test(tc, test_samples_die_when_freed);
	tcase_add_test(tc, test_memory_is_bounded);
	tcase_add_test(tc, test_show_detailed);
	tcase_add_test(tc, test_named_view_memory_comes_back);
	tcase_add_test(tc, test_cached_objects_are_not_leaks);
	suite_add_tcase(s, tc);

	tc = tcase_create("Leak");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_planted_leak_ranks_first);
	tcase_add_test(tc, test_leak_report_at_exit);
	tcase_add_test(tc, test_leak_report_stacks_and_heap);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_start_stop_under_load_api);
	tcase_add_test(tc, test_start_stop_under_load_cli);
	tcase_add_test(tc, test_credit_crosses_threads);
	suite_add_tcase(s, tc);

	tc = tcase_create("Stacks");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_stacks_tell_callers_apart);
	tcase_add_test(tc, test_stack_depth_and_bound);
	tcase_add_test(tc, test_exact_mode_and_rate_zero);
	tcase_add_test(tc, test_heap_profile_format);
	tcase_add_test(tc, test_heap_one_estimator);
	suite_add_tcase(s, tc);

	tc = tcase_create("Formats");
	tcase_add_test(tc, test_prometheus_parsed_back);
	tcase_add_test(tc, test_rows_keyed_by_stack);
	tcase_add_test(tc, test_text_view);
	tcase_add_test(tc, test_cli_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("Faults");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fail_report_once_per_burst);
	tcase_add_test(tc, test_fail_report_second_burst);
	tcase_add_test(tc, test_fail_report_allocates_nothing);
	tcase_add_test(tc, test_fail_report_agrees_with_profile);
	tcase_add_test(tc, test_fail_report_causes);
	tcase_add_test(tc, test_fail_report_threads);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(profile_suite, children)
