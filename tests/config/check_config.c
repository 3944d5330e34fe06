/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The process-wide configuration (src/config/pool-config.c): its defaults (the topology's, and
 * POOL_DECAY_MS_DEF), the environment overrides POOL_BUCKETS, POOL_CACHE_SIZE, POOL_CLUSTER and
 * POOL_DECAY_MS (good values taken, bad ones refused on stderr once, naming the variable and the
 * value kept),
 * overrides on top of an XML topology's defaults, and pool_configure()/pool_get_config(): every
 * bound of every field (buckets a power of two 1..64, cache_bytes 4096..1 GiB, cluster 1..64,
 * decay_ms 1..1 hour, release thread or caller), nothing changed by a refused call, EBUSY once a
 * pool exists, and pools created with what was set; POOL_RELEASE; and the versions of
 * pool_configure() and pool_get_config() that programs built against 0.2's 24-byte structure
 * bind to (LIBPOOL_0.1), which read and write no more than those 24 bytes.
 *
 * Public-API test: it includes only <pool/pool.h>; the configuration is public, and its effect
 * shows in a pool's stats.
 *
 * The configuration loads once per process (at the first pool_get_config(), pool_configure() or
 * pool), so every case that needs a particular environment runs in its own fork()ed child (even
 * with CK_FORK=no), which sends back what it saw (test_child_result()). main() clears the
 * variables first, so that the caller's environment changes nothing here.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

#include "testutil.h"

#define KiB 1024ul
#define MiB (1024ul * 1024ul)

/* ------------------------------------------------------------------------------------------ */
/* Loading the configuration in a child with its own environment                              */
/* ------------------------------------------------------------------------------------------ */

/* The environment of a child; NULL unsets the variable. */
struct config_env {
	const char *xml, *buckets, *cache, *decay;
};

struct child_result {
	struct pool_topology t;     /* the defaults come from it */
	struct pool_config cfg;     /* in effect after the load */
	unsigned int pool_buckets;  /* buckets of a pool created after the load */
	char err[sizeof(((struct death *)0)->out)];   /* the child's stderr */
};

static void config_child(void *result, const void *arg)
{
	const struct config_env *env = arg;
	struct child_result *c = result;
	struct pool_head *p;

	test_setenv("HWLOC_XMLFILE", env->xml);
	test_setenv("POOL_BUCKETS", env->buckets);
	test_setenv("POOL_CACHE_SIZE", env->cache);
	test_setenv("POOL_DECAY_MS", env->decay);
	pool_get_config(&c->cfg);
	c->t = *pool_topology();
	c->t.xml_file = NULL;
	p = pool_create("child", 64, 0);
	c->pool_buckets = p ? test_stats(p).buckets : 0;
}

/* What a process sees with that environment, and what it wrote on stderr. */
static void run_config(const char *xml, const char *buckets, const char *cache,
                       const char *decay, struct child_result *r)
{
	const struct config_env env = { xml, buckets, cache, decay };
	struct death d;

	test_child_result(config_child, &env, r, sizeof(*r), &d);
	memcpy(r->err, d.out, sizeof(r->err));
}

/* ------------------------------------------------------------------------------------------ */
/* Errors: environment overrides                                                              */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_bad_buckets)
{
	static const char *bad[] = { "0", "3", "128", "abc", "", "-8", "8x", " 8", "+8", "65",
	                             "1k", "12.0", "99999999999999999999999", "0x10" };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct child_result r;
		char want[128];

		run_config(NULL, bad[i], NULL, NULL, &r);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_BUCKETS='%s': ", bad[i]);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_BUCKETS='%s': stderr '%s'",
		              bad[i], r.err);
		snprintf(want, sizeof(want), "keeping %u\n", r.t.default_buckets);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_BUCKETS='%s': %s", bad[i], r.err);
		ck_assert_uint_eq(test_count(r.err, "libpool:"), 1);
		ck_assert_uint_eq(r.cfg.buckets, r.t.default_buckets);
		ck_assert_uint_eq(r.pool_buckets, r.t.default_buckets);
		ck_assert_uint_eq(r.cfg.cache_bytes, r.t.default_cache_bytes);
	}
}
END_TEST

START_TEST(test_bad_cache_size)
{
	static const char *bad[] = { "-1", "12q", "", "0", "4095", "2g", "1025m", "k", "1kk",
	                             "1.5m", " 64k", "+64k", "18446744073709551616",
	                             "17179869184g", "64 k", "0x1000" };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct child_result r;
		char want[128];

		run_config(NULL, NULL, bad[i], NULL, &r);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_CACHE_SIZE='%s': ", bad[i]);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_CACHE_SIZE='%s': stderr '%s'",
		              bad[i], r.err);
		snprintf(want, sizeof(want), "keeping %zu\n", r.t.default_cache_bytes);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_CACHE_SIZE='%s': %s", bad[i],
		              r.err);
		ck_assert_uint_eq(test_count(r.err, "libpool:"), 1);
		ck_assert_uint_eq(r.cfg.cache_bytes, r.t.default_cache_bytes);
		ck_assert_uint_eq(r.cfg.buckets, r.t.default_buckets);
	}
}
END_TEST

START_TEST(test_good_overrides)
{
	static const struct { const char *b, *c; unsigned int buckets; size_t bytes; } good[] = {
		{ "1", "4096", 1, 4096 },
		{ "2", "64k", 2, 64 * KiB },
		{ "64", "3M", 64, 3 * MiB },
		{ "16", "1g", 16, 1024 * MiB },
		{ "32", "1048576", 32, MiB },
	};
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct child_result r;

		run_config(NULL, good[i].b, good[i].c, NULL, &r);
		ck_assert_str_eq(r.err, "");
		ck_assert_uint_eq(r.cfg.buckets, good[i].buckets);
		ck_assert_uint_eq(r.cfg.cache_bytes, good[i].bytes);
		ck_assert_uint_eq(r.pool_buckets, good[i].buckets);
	}
}
END_TEST

/* Overrides also apply on top of an XML topology's defaults. */
START_TEST(test_override_on_xml)
{
	char path[4096];
	struct child_result r;

	snprintf(path, sizeof(path), "%s/Intel-CascadeLake-2xXeon6230.xml", test_topology_dir());
	run_config(path, "3", "8k", NULL, &r);
	ck_assert_uint_eq(r.t.source, POOL_TOPO_XML);
	ck_assert_ptr_nonnull(strstr(r.err, "ignoring POOL_BUCKETS='3'"));
	ck_assert_ptr_nonnull(strstr(r.err, "keeping 64\n"));
	ck_assert_uint_eq(r.cfg.buckets, 64);
	ck_assert_uint_eq(r.cfg.cache_bytes, 8 * KiB);
}
END_TEST

START_TEST(test_bad_decay_ms)
{
	static const char *bad[] = { "0", "3600001", "-5", "abc", "", "10ms", "1k", " 5", "+5",
	                             "0x10", "1.5", "99999999999999999999", "4294967296" };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct child_result r;
		char want[160];

		run_config(NULL, NULL, NULL, bad[i], &r);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_DECAY_MS='%s': expected "
		         "milliseconds from 1 to 3600000; keeping %u\n", bad[i], POOL_DECAY_MS_DEF);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_DECAY_MS='%s': stderr '%s'",
		              bad[i], r.err);
		ck_assert_uint_eq(test_count(r.err, "libpool:"), 1);
		ck_assert_uint_eq(r.cfg.decay_ms, POOL_DECAY_MS_DEF);
		ck_assert_uint_eq(r.cfg.buckets, r.t.default_buckets);
	}
}
END_TEST

/* A child with POOL_CLUSTER set to `arg` (unset when NULL): the configuration it sees. */
static void cluster_env_child(void *result, const void *arg)
{
	struct child_result *c = result;

	test_setenv("POOL_CLUSTER", arg);
	pool_get_config(&c->cfg);
}

/* POOL_CLUSTER: objects per magazine, 1..64; anything else is refused with a word, default kept. */
START_TEST(test_cluster_env)
{
	static const struct { const char *env; unsigned int n; } good[] = {
		{ NULL, POOL_CLUSTER_DEFAULT }, { "1", 1 }, { "16", 16 }, { "064", 64 },
	};
	static const char *bad[] = { "0", "65", "-1", "x", "", "8k", "1e2" };
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct child_result r;
		struct death d;

		test_child_result(cluster_env_child, good[i].env, &r, sizeof(r), &d);
		ck_assert_str_eq(d.out, "");
		ck_assert_uint_eq(r.cfg.cluster, good[i].n);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct child_result r;
		struct death d;
		char want[160];

		test_child_result(cluster_env_child, bad[i], &r, sizeof(r), &d);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_CLUSTER='%s': expected objects "
		         "per magazine from 1 to 64; keeping %u\n", bad[i], POOL_CLUSTER_DEFAULT);
		ck_assert_msg(strstr(d.out, want) != NULL, "POOL_CLUSTER='%s': stderr '%s'", bad[i],
		              d.out);
		ck_assert_uint_eq(r.cfg.cluster, POOL_CLUSTER_DEFAULT);
	}
}
END_TEST

START_TEST(test_good_decay_ms)
{
	static const struct { const char *env; unsigned int ms; } good[] = {
		{ NULL, POOL_DECAY_MS_DEF }, { "1", 1 }, { "250", 250 }, { "010", 10 },
		{ "3600000", POOL_DECAY_MS_MAX },
	};
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct child_result r;

		run_config(NULL, "4", NULL, good[i].env, &r);
		ck_assert_str_eq(r.err, "");
		ck_assert_uint_eq(r.cfg.decay_ms, good[i].ms);
		ck_assert_uint_eq(r.cfg.buckets, 4);
		ck_assert_uint_eq(r.cfg.cluster, POOL_CLUSTER_DEFAULT);   /* POOL_CLUSTER unset */
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Core and Limits: pool_configure() and pool_get_config()                                    */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_configure)
{
	const struct pool_topology *t = pool_topology();
	struct pool_config c = { 0 }, now;
	struct pool_stats st;
	struct pool_head *p;

	pool_get_config(&now);
	ck_assert_uint_eq(now.buckets, t->default_buckets);
	ck_assert_uint_eq(now.cache_bytes, t->default_cache_bytes);
	c.buckets = 3;
	errno = 0;
	ck_assert_int_eq(pool_configure(&c), -1);
	ck_assert_int_eq(errno, EINVAL);
	c.buckets = 128;
	ck_assert_int_eq(pool_configure(&c), -1);
	c.buckets = 0;
	c.cache_bytes = 4095;
	ck_assert_int_eq(pool_configure(&c), -1);
	ck_assert_int_eq(pool_configure(NULL), -1);
	pool_get_config(&now);
	ck_assert_uint_eq(now.buckets, t->default_buckets);
	ck_assert_uint_eq(now.cache_bytes, t->default_cache_bytes);
	c.buckets = 32;
	c.cache_bytes = 100 * KiB;
	ck_assert_int_eq(pool_configure(&c), 0);
	pool_get_config(&now);
	ck_assert_uint_eq(now.buckets, 32);
	ck_assert_uint_eq(now.cache_bytes, 100 * KiB);
	p = pool_create("configured", 100, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.buckets, 32);
	c.buckets = 16;
	errno = 0;
	ck_assert_int_eq(pool_configure(&c), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_configure_then_create)
{
	struct pool_config cfg = { .buckets = 8, .cache_bytes = 65536, .cluster = 4 }, got;

	ck_assert_int_eq(pool_configure(&cfg), 0);
	pool_get_config(&got);
	ck_assert_uint_eq(got.buckets, 8);
	ck_assert_uint_eq(got.cache_bytes, 65536);
	ck_assert_uint_eq(got.cluster, 4);
	cfg.buckets = 3;
	errno = 0;
	ck_assert_int_eq(pool_configure(&cfg), -1);
	ck_assert_int_eq(errno, EINVAL);
	cfg = (struct pool_config){ .cache_bytes = 100 };
	ck_assert_int_eq(pool_configure(&cfg), -1);
	cfg = (struct pool_config){ .cluster = 65 };
	ck_assert_int_eq(pool_configure(&cfg), -1);
	ck_assert_int_eq(pool_configure(NULL), -1);
	pool_get_config(&got);
	ck_assert_uint_eq(got.buckets, 8);         /* unchanged by the refused calls */
	ck_assert_ptr_nonnull(pool_create("cfg", 64, 0));
	cfg = (struct pool_config){ .buckets = 16 };
	errno = 0;
	ck_assert_int_eq(pool_configure(&cfg), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_uint_eq(test_stats(pool_create("cfg2", 64, 0)).buckets, 8);
}
END_TEST

/* pool_configure(c) is taken; returns the configuration then in effect. */
static struct pool_config configure_ok(const struct pool_config *c)
{
	struct pool_config now;

	ck_assert_int_eq(pool_configure(c), 0);
	pool_get_config(&now);
	return now;
}

/* pool_configure(c) is refused with EINVAL and changes nothing. */
static void configure_refused(const struct pool_config *c)
{
	struct pool_config before, after;

	pool_get_config(&before);
	errno = 0;
	ck_assert_int_eq(pool_configure(c), -1);
	ck_assert_int_eq(errno, EINVAL);
	pool_get_config(&after);
	ck_assert_uint_eq(after.buckets, before.buckets);
	ck_assert_uint_eq(after.cache_bytes, before.cache_bytes);
	ck_assert_uint_eq(after.cluster, before.cluster);
	ck_assert_uint_eq(after.decay_ms, before.decay_ms);
	ck_assert_uint_eq(after.release, before.release);
}

/* Every cluster (magazine) size 1..64 is taken, 65 and more are refused. */
START_TEST(test_cluster_bounds)
{
	static const unsigned int bad[] = { POOL_CLUSTER_MAX + 1, 100, 128, 1000, UINT_MAX };
	struct pool_config c = { 0 }, now;
	unsigned int n, i;

	pool_get_config(&now);
	ck_assert_uint_eq(now.cluster, POOL_CLUSTER_DEFAULT);
	ck_assert_uint_eq(POOL_CLUSTER_MAX, 64);
	for (n = 1; n <= POOL_CLUSTER_MAX; n++) {
		c.cluster = n;
		ck_assert_uint_eq(configure_ok(&c).cluster, n);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.cluster = bad[i];
		configure_refused(&c);
	}
	/* a refused field refuses the whole call: the good ones are not taken either */
	c = (struct pool_config){ .cluster = 4, .decay_ms = 500, .buckets = 3 };
	configure_refused(&c);
	c = (struct pool_config){ .cluster = 4, .decay_ms = 500, .cache_bytes = 4095 };
	configure_refused(&c);
}
END_TEST

/*
 * The cluster size is what moves between a thread cache and the shared lists: with 1, every
 * magazine given holds one object; with 64, magazines hold up to 64 objects.
 */
static void cluster_child(void *result, const void *arg)
{
	struct pool_config c = { .cluster = *(const unsigned int *)arg };
	struct pool_stats *st = result;
	struct pool_head *p;
	void *o[512];
	unsigned int i;

	if (pool_configure(&c) != 0 || !(p = pool_create("clustered", 256, 0)))
		_exit(2);
	for (i = 0; i < 512; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 512; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	*st = test_stats(p);
}

START_TEST(test_cluster_size_moves)
{
	static const unsigned int sizes[] = { 1, POOL_CLUSTER_MAX };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct pool_stats st;
		struct death d;

		test_child_result(cluster_child, &sizes[i], &st, sizeof(st), &d);
		ck_assert_uint_gt(st.shared_put_clusters, 0);
		ck_assert_uint_le(st.shared_put_objects, st.shared_put_clusters * sizes[i]);
		if (sizes[i] == 1)
			ck_assert_uint_eq(st.shared_put_objects, st.shared_put_clusters);
		else   /* more than the default's 32 to a magazine on average */
			ck_assert_uint_gt(st.shared_put_objects,
			                  st.shared_put_clusters * POOL_CLUSTER_DEFAULT);
	}
}
END_TEST

/* decay_ms: 1 ms to an hour, the default 10 s; 0 keeps the current value. */
START_TEST(test_decay_ms_bounds)
{
	static const unsigned int bad[] = { POOL_DECAY_MS_MAX + 1, 2 * POOL_DECAY_MS_MAX,
	                                    UINT_MAX };
	struct pool_config c = { 0 }, now;
	unsigned int i;

	pool_get_config(&now);
	ck_assert_uint_eq(now.decay_ms, POOL_DECAY_MS_DEF);
	ck_assert_uint_eq(POOL_DECAY_MS_MAX, 3600000);
	c.decay_ms = 1;
	ck_assert_uint_eq(configure_ok(&c).decay_ms, 1);
	c.decay_ms = POOL_DECAY_MS_MAX;
	ck_assert_uint_eq(configure_ok(&c).decay_ms, POOL_DECAY_MS_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.decay_ms = bad[i];
		configure_refused(&c);
	}
	c = (struct pool_config){ .buckets = 2 };   /* decay_ms 0: kept */
	now = configure_ok(&c);
	ck_assert_uint_eq(now.decay_ms, POOL_DECAY_MS_MAX);
	ck_assert_uint_eq(now.buckets, 2);
}
END_TEST

/* release: POOL_RELEASE_THREAD (the default) or POOL_RELEASE_CALLER; 0 keeps it. */
START_TEST(test_release_bounds)
{
	static const unsigned int bad[] = { 3, 4, 100, UINT_MAX };
	struct pool_config c = { 0 }, now;
	unsigned int i;

	pool_get_config(&now);
	ck_assert_uint_eq(now.release, POOL_RELEASE_THREAD);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.release = bad[i];
		configure_refused(&c);
		pool_get_config(&now);
		ck_assert_uint_eq(now.release, POOL_RELEASE_THREAD);
	}
	c.release = POOL_RELEASE_CALLER;
	ck_assert_uint_eq(configure_ok(&c).release, POOL_RELEASE_CALLER);
	c = (struct pool_config){ .cluster = 8 };   /* release 0: kept */
	now = configure_ok(&c);
	ck_assert_uint_eq(now.release, POOL_RELEASE_CALLER);
	c.release = POOL_RELEASE_THREAD;
	ck_assert_uint_eq(configure_ok(&c).release, POOL_RELEASE_THREAD);
}
END_TEST

static void release_env_child(void *result, const void *arg)
{
	struct child_result *c = result;

	test_setenv("POOL_RELEASE", arg);
	pool_get_config(&c->cfg);
}

/* POOL_RELEASE: "thread" or "caller"; anything else refused with a word, the default kept. */
START_TEST(test_release_env)
{
	static const struct { const char *env; unsigned int release; } good[] = {
		{ NULL, POOL_RELEASE_THREAD }, { "thread", POOL_RELEASE_THREAD },
		{ "caller", POOL_RELEASE_CALLER },
	};
	static const char *bad[] = { "", "1", "2", "Thread", "none", "caller ", "threads" };
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct child_result r;
		struct death d;

		test_child_result(release_env_child, good[i].env, &r, sizeof(r), &d);
		ck_assert_str_eq(d.out, "");
		ck_assert_uint_eq(r.cfg.release, good[i].release);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct child_result r;
		struct death d;
		char want[160];

		test_child_result(release_env_child, bad[i], &r, sizeof(r), &d);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_RELEASE='%s': expected 'thread' "
		         "or 'caller'; keeping 'thread'\n", bad[i]);
		ck_assert_msg(strstr(d.out, want) != NULL, "POOL_RELEASE='%s': stderr '%s'", bad[i],
		              d.out);
		ck_assert_uint_eq(r.cfg.release, POOL_RELEASE_THREAD);
	}
}
END_TEST

/*
 * A program built against 0.2's headers: its struct pool_config has four fields (24 bytes),
 * and its calls bind to the LIBPOOL_0.1 versions, named here with .symver as such a program's
 * link got them.
 */
struct pool_config_0_2 {
	unsigned int buckets;
	size_t cache_bytes;
	unsigned int cluster;
	unsigned int decay_ms;
};

int pool_configure_0_2(const struct pool_config_0_2 *cfg);
void pool_get_config_0_2(struct pool_config_0_2 *cfg);
__asm__(".symver pool_configure_0_2, pool_configure@LIBPOOL_0.1");
__asm__(".symver pool_get_config_0_2, pool_get_config@LIBPOOL_0.1");

START_TEST(test_programs_built_against_0_2_keep_working)
{
	struct {
		struct pool_config_0_2 cfg;
		unsigned char after[16];
	} buf;
	struct pool_config now;
	unsigned int i;

	ck_assert_uint_eq(sizeof(struct pool_config_0_2), 24);
	/* the old read writes its 24 bytes and not one more */
	memset(&buf, 0xa5, sizeof(buf));
	pool_get_config_0_2(&buf.cfg);
	pool_get_config(&now);
	ck_assert_uint_eq(buf.cfg.buckets, now.buckets);
	ck_assert_uint_eq(buf.cfg.cache_bytes, now.cache_bytes);
	ck_assert_uint_eq(buf.cfg.decay_ms, now.decay_ms);
	for (i = 0; i < sizeof(buf.after); i++)
		ck_assert_uint_eq(buf.after[i], 0xa5);
	/* the old call reads its 24 bytes only: what lies after them is no `release` */
	buf.cfg = (struct pool_config_0_2){ .decay_ms = 1234 };
	ck_assert_int_eq(pool_configure_0_2(&buf.cfg), 0);
	pool_get_config(&now);
	ck_assert_uint_eq(now.decay_ms, 1234);
	ck_assert_uint_eq(now.release, POOL_RELEASE_THREAD);
	buf.cfg.decay_ms = POOL_DECAY_MS_MAX + 1;
	errno = 0;
	ck_assert_int_eq(pool_configure_0_2(&buf.cfg), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pool_configure_0_2(NULL), -1);
}
END_TEST

START_TEST(test_bad_env_said_at_start)
{
	static const struct {
		const char *name, *value, *expect;
	} bad[] = {
		{ "POOL_BUCKETS", "abc", "a power of two from 1 to 64" },
		{ "POOL_DECAY_MS", "0", "milliseconds from 1 to 3600000" },
		{ "POOL_RELEASE", "threads", "'thread' or 'caller'" },
	};
	char *argv[] = { "check_config", "--no-pool", NULL };
	char out[1024], want[256];
	unsigned int i;

	/* a process that never creates a pool (nor reads the configuration) hears of it */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int status = test_run_self(argv, bad[i].name, bad[i].value, out, sizeof(out));

		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
		snprintf(want, sizeof(want), "libpool: ignoring %s='%s': expected %s; the default "
		         "applies\n", bad[i].name, bad[i].value, bad[i].expect);
		ck_assert_str_eq(out, want);
	}
}
END_TEST

/* `check_config --no-pool`: the library's constructors ran, and nothing else (exit 0). */
static int no_pool_or_clear(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--no-pool"))
		return 0;
	return test_clear_environment(argc, argv);
}

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_configure);
	tcase_add_test(tc, test_configure_then_create);
	tcase_add_test(tc, test_cluster_size_moves);
	tcase_add_test(tc, test_programs_built_against_0_2_keep_working);
	suite_add_tcase(s, tc);

	tc = tcase_create("Limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cluster_bounds);
	tcase_add_test(tc, test_cluster_env);
	tcase_add_test(tc, test_decay_ms_bounds);
	tcase_add_test(tc, test_release_bounds);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_bad_buckets);
	tcase_add_test(tc, test_bad_cache_size);
	tcase_add_test(tc, test_bad_decay_ms);
	tcase_add_test(tc, test_bad_env_said_at_start);
	tcase_add_test(tc, test_good_overrides);
	tcase_add_test(tc, test_good_decay_ms);
	tcase_add_test(tc, test_release_env);
	tcase_add_test(tc, test_override_on_xml);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(config_suite, no_pool_or_clear)
