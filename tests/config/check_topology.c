/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The topology (src/config/topology.c): what hwloc discovers on this machine and in the XML exports of
 * large ones, the defaults derived from it (the formulas of doc/tuning.md, written again here),
 * pool_topology_show(), the sysconf() fallback when hwloc fails, thread binding, and hwloc
 * loaded for the reading only (not linked, unloaded after it). The environment overrides of
 * those defaults and pool_configure() are check_config.c's.
 *
 * Public-API test: it includes only <pool/pool.h>, since the topology, the defaults and the
 * OS layer's name (a pool's stats) are all public.
 *
 * pool_topology() loads once per process, so every case that needs a particular HWLOC_XMLFILE
 * runs in its own fork()ed child (even with CK_FORK=no), which sends back what it saw
 * (test_child_result()). The hwloc XML files come from $POOL_TOPOLOGY_DIR (default
 * tests/topologies, from the repository root).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "testutil.h"

#define KiB 1024ul
#define LIBHWLOC "libhwloc.so.15"
#define MiB (1024ul * 1024ul)

/* ------------------------------------------------------------------------------------------ */
/* Loading the topology in a child with its own HWLOC_XMLFILE                                  */
/* ------------------------------------------------------------------------------------------ */

struct child_result {
	struct pool_topology t;
	struct pool_config cfg;
	int bind_ret;
	int bind_errno;
	int second_call_same;       /* pool_topology() returned the same pointer twice */
	unsigned int pool_buckets;  /* buckets of a pool created after the load */
	char err[sizeof(((struct death *)0)->out)];   /* the child's stderr */
};

/* In the child: load the topology of the XML file `xml` (this machine when NULL), then bind. */
static void topology_child(void *result, const void *xml)
{
	struct child_result *c = result;
	const struct pool_topology *t;
	struct pool_head *p;

	test_setenv("HWLOC_XMLFILE", xml);
	t = pool_topology();
	c->t = *t;
	c->t.xml_file = NULL;
	c->second_call_same = pool_topology() == t;
	pool_get_config(&c->cfg);
	errno = 0;
	c->bind_ret = pool_topology_bind_thread(0);
	c->bind_errno = errno;
	p = pool_create("child", 64, 0);
	if (p)
		c->pool_buckets = test_stats(p).buckets;
}

/* What a process with HWLOC_XMLFILE=xml (unset when NULL) sees, and what it wrote on stderr. */
static void run_topology(const char *xml, struct child_result *r)
{
	struct death d;

	test_child_result(topology_child, xml, r, sizeof(*r), &d);
	memcpy(r->err, d.out, sizeof(r->err));
}

/* The formulas of doc/tuning.md, written again independently of src/config/topology.c. */
static unsigned int expected_buckets(unsigned int pus)
{
	unsigned int p = 1;

	while (p * 2 <= pus)
		p *= 2;
	if (p < 8)
		p = 8;
	if (p > 64)
		p = 64;
	return p;
}

static size_t expected_cache(size_t l2_per_pu)
{
	size_t v = l2_per_pu / 4096 * 4096;

	if (!l2_per_pu)
		return 512 * KiB;
	if (v < 256 * KiB)
		v = 256 * KiB;
	if (v > 2 * MiB)
		v = 2 * MiB;
	return v;
}

static void check_formulas(const struct child_result *r)
{
	const struct pool_topology *t = &r->t;

	ck_assert_uint_eq(t->default_buckets, expected_buckets(t->pus));
	ck_assert_uint_eq(t->default_cache_bytes, expected_cache(t->l2_per_pu_bytes));
	ck_assert_uint_eq(t->l2_per_pu_bytes, t->l2_bytes * t->l2_count / t->pus);
	/* with no override, the defaults are what is in effect, and pools get them */
	ck_assert_uint_eq(r->cfg.buckets, t->default_buckets);
	ck_assert_uint_eq(r->cfg.cache_bytes, t->default_cache_bytes);
	ck_assert_uint_eq(r->pool_buckets, t->default_buckets);
	ck_assert(r->second_call_same);
}

/* ------------------------------------------------------------------------------------------ */
/* Core                                                                                        */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_this_machine)
{
	struct child_result r;
	cpu_set_t set;

	run_topology(NULL, &r);
	ck_assert_str_eq(r.err, "");
	ck_assert_uint_eq(r.t.source, POOL_TOPO_SYSTEM);
	/* hwloc keeps the PUs the cgroup allows; taskset may narrow the affinity further */
	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	ck_assert_uint_ge(r.t.pus, (unsigned int)CPU_COUNT(&set));
	ck_assert_uint_le(r.t.pus, (unsigned int)sysconf(_SC_NPROCESSORS_CONF));
	ck_assert_uint_ge(r.t.cores, 1);
	ck_assert_uint_le(r.t.cores, r.t.pus);
	ck_assert_uint_ge(r.t.packages, 1);
	ck_assert_uint_ge(r.t.numa_nodes, 1);
	ck_assert_uint_ge(r.t.cache_line, 16);
	ck_assert_uint_eq(r.t.cache_line & (r.t.cache_line - 1), 0);
	check_formulas(&r);
}
END_TEST

/* Known facts of each shared XML (its README and lstopo), and what the formulas give on it. */
static const struct known_topology {
	const char *file;
	unsigned int packages, numa, cores, pus;
	size_t l2;
	unsigned int l2_count;
	unsigned int buckets;
	size_t cache;
} known[] = {
	{ "Intel-CascadeLake-2xXeon6230.xml", 2, 1, 40, 80, 1 * MiB, 40, 64, 512 * KiB },
	{ "Intel-Skylake-2xXeon6140.xml", 2, 1, 36, 72, 1 * MiB, 36, 64, 512 * KiB },
	{ "Intel-SapphireRapids-2xXeonMax9460.xml", 2, 1, 80, 160, 2 * MiB, 80, 64, 1 * MiB },
	{ "AMD-17h-Zen-2xEpyc-7451.xml", 2, 1, 48, 96, 512 * KiB, 48, 64, 256 * KiB },
	{ "AMD-19h-Zen3-2xEpyc-7763.xml", 2, 1, 128, 128, 512 * KiB, 128, 64, 512 * KiB },
	{ "32em64t-2n8c2t-pci-noio.xml", 2, 2, 16, 32, 256 * KiB, 16, 32, 256 * KiB },
	{ "64intel64-fakeKNL-SNC4-hybrid.xml", 1, 8, 16, 64, 4 * MiB, 8, 64, 512 * KiB },
	{ "192em64t-24n8c2t.xml", 24, 24, 192, 384, 256 * KiB, 192, 64, 256 * KiB },
};

START_TEST(test_xml_topologies)
{
	const char *dir = test_topology_dir();
	unsigned int i, seen = 0, known_seen = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	ck_assert_msg(d != NULL, "cannot open %s (set POOL_TOPOLOGY_DIR)", dir);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char path[4096];
		struct child_result r;

		if (len < 5 || strcmp(de->d_name + len - 4, ".xml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		run_topology(path, &r);
		ck_assert_msg(r.t.source == POOL_TOPO_XML, "%s: source %u, stderr: %s", path,
		              r.t.source, r.err);
		ck_assert_msg(strstr(r.err, "libpool") == NULL, "%s: %s", path, r.err);
		check_formulas(&r);
		/* binding to a machine we are not on is refused, and clearly */
		ck_assert_int_eq(r.bind_ret, -1);
		ck_assert_int_eq(r.bind_errno, ENOTSUP);
		seen++;
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			const struct known_topology *k = &known[i];

			if (strcmp(k->file, de->d_name) != 0)
				continue;
			known_seen++;
			ck_assert_msg(r.t.packages == k->packages && r.t.numa_nodes == k->numa &&
			              r.t.cores == k->cores && r.t.pus == k->pus,
			              "%s: %u packages %u nodes %u cores %u PUs", k->file,
			              r.t.packages, r.t.numa_nodes, r.t.cores, r.t.pus);
			ck_assert_msg(r.t.l2_bytes == k->l2 && r.t.l2_count == k->l2_count,
			              "%s: L2 %zu x %u", k->file, r.t.l2_bytes, r.t.l2_count);
			ck_assert_msg(r.t.default_buckets == k->buckets &&
			              r.t.default_cache_bytes == k->cache, "%s: %u buckets, %zu bytes",
			              k->file, r.t.default_buckets, r.t.default_cache_bytes);
			ck_assert_uint_eq(r.t.cache_line, 64);
		}
	}
	closedir(d);
	printf("check_topology: %u XML topologies checked, %u of them against known values\n",
	       seen, known_seen);
	ck_assert_uint_eq(known_seen, sizeof(known) / sizeof(known[0]));
}
END_TEST

static void *topo_thread(void *arg)
{
	(void)arg;
	return (void *)pool_topology();
}

/* Many threads racing on the first call get the same, fully loaded structure. */
START_TEST(test_concurrent_first_use)
{
	pthread_t th[8];
	void *res[8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, topo_thread, NULL), 0);
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_join(th[i], &res[i]), 0);
	for (i = 1; i < 8; i++)
		ck_assert_ptr_eq(res[i], res[0]);
	ck_assert_uint_ge(((const struct pool_topology *)res[0])->pus, 1);
	ck_assert_uint_ge(((const struct pool_topology *)res[0])->default_buckets, 8);
}
END_TEST

START_TEST(test_show)
{
	struct pool_head *p = pool_create("show", 64, 0);
	FILE *f = tmpfile();
	char buf[4096];
	size_t n;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(f);
	pool_topology_show(f);
	pool_topology_show(NULL);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "topology: this machine"));
	ck_assert_ptr_nonnull(strstr(buf, "PUs "));
	ck_assert_ptr_nonnull(strstr(buf, "buckets per pool"));
	ck_assert_ptr_nonnull(strstr(buf, "thread cache budget"));
	ck_assert_ptr_nonnull(strstr(buf, "OS layer"));
	ck_assert_ptr_nonnull(strstr(buf, test_os_stats().layer));
}
END_TEST

/* libpool does not link hwloc: it loads it to read the topology and unloads it after. */
START_TEST(test_hwloc_not_kept)
{
	const struct pool_topology *t;
	FILE *f = tmpfile();
	char buf[4096];
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(!test_library_loaded(LIBHWLOC), "hwloc is in the process before the reading");
	t = pool_topology();
	ck_assert_uint_eq(t->source, POOL_TOPO_SYSTEM);
	ck_assert_msg(!test_library_loaded(LIBHWLOC), "hwloc stayed loaded after the reading");
	/* what pool_topology_show() says of the hwloc it read with outlives it */
	pool_topology_show(f);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	ck_assert_msg(strstr(buf, "topology: this machine (hwloc API 2."), "%s", buf);
	ck_assert_msg(!test_library_loaded(LIBHWLOC), "pool_topology_show() loaded hwloc");
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Errors: the hwloc fallback                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void check_fallback(const char *xml)
{
	struct child_result r;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	run_topology(xml, &r);
	ck_assert_uint_eq(r.t.source, POOL_TOPO_SYSCONF);
	ck_assert_uint_eq(r.t.pus, (unsigned int)n);
	ck_assert_uint_eq(r.t.cores, r.t.pus);
	ck_assert_uint_eq(r.t.packages, 1);
	ck_assert_uint_eq(r.t.numa_nodes, 1);
	/* said once, naming the file, even though the child called pool_topology() twice */
	ck_assert_uint_eq(test_count(r.err, "libpool: hwloc could not load the topology"), 1);
	ck_assert_uint_eq(test_count(r.err, "libpool:"), 1);
	ck_assert_ptr_nonnull(strstr(r.err, xml));
	ck_assert_ptr_nonnull(strstr(r.err, "using sysconf()"));
	check_formulas(&r);
	/* the fallback binds with the C library: bound, or refused with a reason */
	ck_assert(r.bind_ret == 0 || (r.bind_ret == -1 && r.bind_errno != 0));
}

START_TEST(test_fallback_bad_xml)
{
	char path[] = "/tmp/check_topology_XXXXXX";
	int fd = mkstemp(path);
	static const char junk[] = "this is not an hwloc topology\n";

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, junk, sizeof(junk) - 1), (ssize_t)sizeof(junk) - 1);
	close(fd);
	check_fallback(path);
	unlink(path);
}
END_TEST

START_TEST(test_fallback_missing_xml)
{
	check_fallback("/nonexistent/topology.xml");
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Binding                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static int bound_cpu(void)
{
	cpu_set_t set;
	int cpu;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	if (CPU_COUNT(&set) != 1)
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return -1;
}

/* On this machine: each index binds to exactly one CPU, the first `cores` ones all different. */
START_TEST(test_bind_this_machine)
{
	const struct pool_topology *t = pool_topology();
	unsigned int i, n = t->pus * 2;
	int first[64];

	ck_assert_uint_eq(t->source, POOL_TOPO_SYSTEM);
	for (i = 0; i < n; i++) {
		int ret;

		errno = 0;
		ret = pool_topology_bind_thread(i);
		if (ret < 0) {
			/* binding not allowed here (container, seccomp): a clear reason, carry on */
			ck_assert(errno == EPERM || errno == EINVAL);
			printf("check_topology: binding refused here: %s\n", strerror(errno));
			return;
		}
		ck_assert_int_ge(bound_cpu(), 0);
		if (i < 64)
			first[i] = bound_cpu();
	}
	for (i = 1; i < t->cores && i < 64; i++)
		ck_assert_int_ne(first[i], first[0]);
	/* without hyperthreads, index `cores` comes back to core 0's only PU */
	if (t->pus == t->cores && t->cores < 64)
		ck_assert_int_eq(first[t->cores], first[0]);
}
END_TEST

START_TEST(test_bind_xml)
{
	char path[4096];
	struct child_result r;

	snprintf(path, sizeof(path), "%s/192em64t-24n8c2t.xml", test_topology_dir());
	run_topology(path, &r);
	ck_assert_uint_eq(r.t.source, POOL_TOPO_XML);
	ck_assert_int_eq(r.bind_ret, -1);
	ck_assert_int_eq(r.bind_errno, ENOTSUP);
}
END_TEST

static Suite *topology_suite(void)
{
	Suite *s = suite_create("topology");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_this_machine);
	tcase_add_test(tc, test_xml_topologies);
	tcase_add_test(tc, test_concurrent_first_use);
	tcase_add_test(tc, test_show);
	tcase_add_test(tc, test_hwloc_not_kept);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fallback_bad_xml);
	tcase_add_test(tc, test_fallback_missing_xml);
	suite_add_tcase(s, tc);

	tc = tcase_create("Bind");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bind_this_machine);
	tcase_add_test(tc, test_bind_xml);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(topology_suite, test_clear_environment)
