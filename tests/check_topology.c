/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Topology, derived defaults, overrides, binding and OS-layer alignment (src/topology.c,
 * src/pool-os.c).
 *
 * pool_topology() and the configuration load once per process, so every case that needs a
 * particular environment runs in its own fork()ed child (even with CK_FORK=no): the child sets
 * the environment, captures its stderr in a temporary file, and sends back what it saw.
 * The hwloc XML files come from $POOL_TOPOLOGY_DIR (default tests/topologies, from the repository root).
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
#include "pool-int.h"
#include "pool-os.h"

#define KiB 1024ul
#define MiB (1024ul * 1024ul)

static const char *topo_dir(void)
{
	const char *d = getenv("POOL_TOPOLOGY_DIR");

	return d && *d ? d : "tests/topologies";
}

/* ------------------------------------------------------------------------------------------ */
/* Running a case in a child with its own environment                                          */
/* ------------------------------------------------------------------------------------------ */

struct child_result {
	struct pool_topology t;
	struct pool_config cfg;
	int bind_ret;
	int bind_errno;
	int second_call_same;       /* pool_topology() returned the same pointer twice */
	unsigned int pool_buckets;  /* buckets of a pool created after the load */
	char err[2048];             /* the child's stderr */
};

/* NULL value: unset the variable. */
static void run_child(const char *xml, const char *buckets, const char *cache, int do_bind,
                      struct child_result *r)
{
	FILE *errf = tmpfile();
	int fds[2], status;
	pid_t pid;
	size_t n;

	ck_assert_ptr_nonnull(errf);
	ck_assert_int_eq(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct child_result c;
		const struct pool_topology *t;
		struct pool_head *p;
		struct pool_stats st;

		memset(&c, 0, sizeof(c));
		close(fds[0]);
		dup2(fileno(errf), 2);
		if (xml)
			setenv("HWLOC_XMLFILE", xml, 1);
		else
			unsetenv("HWLOC_XMLFILE");
		if (buckets)
			setenv("POOL_BUCKETS", buckets, 1);
		else
			unsetenv("POOL_BUCKETS");
		if (cache)
			setenv("POOL_CACHE_SIZE", cache, 1);
		else
			unsetenv("POOL_CACHE_SIZE");
		t = pool_topology();
		c.t = *t;
		c.t.xml_file = NULL;
		c.second_call_same = pool_topology() == t;
		pool_get_config(&c.cfg);
		if (do_bind) {
			errno = 0;
			c.bind_ret = pool_topology_bind_thread(0);
			c.bind_errno = errno;
		}
		p = pool_create("child", 64, 0);
		if (p && pool_get_stats(p, &st) == 0)
			c.pool_buckets = st.buckets;
		if (write(fds[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(read(fds[0], r, sizeof(*r)), (ssize_t)sizeof(*r));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	rewind(errf);
	n = fread(r->err, 1, sizeof(r->err) - 1, errf);
	r->err[n] = 0;
	fclose(errf);
}

static unsigned int count_lines(const char *s, const char *needle)
{
	unsigned int n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s++;
	}
	return n;
}

/* The formulas of doc/tuning.md, written again independently of src/topology.c. */
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

	run_child(NULL, NULL, NULL, 0, &r);
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
	const char *dir = topo_dir();
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
		run_child(path, NULL, NULL, 1, &r);
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
	FILE *f = tmpfile();
	char buf[4096];
	size_t n;

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
	ck_assert_ptr_nonnull(strstr(buf, pool__os_name()));
}
END_TEST

/* pool_trim() gives back what was freed; it never touches pool objects in use. */
START_TEST(test_trim)
{
	struct pool_head *p = pool_create("trim", 4096, 0);
	void *keep[64];
	unsigned int i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 64; i++) {
		keep[i] = pool_alloc(p);
		ck_assert_ptr_nonnull(keep[i]);
		memset(keep[i], (int)i, 4096);
	}
	pool_trim();
	pool_gc(NULL);
	pool_flush(p);
	pool_trim();
	for (i = 0; i < 64; i++) {
		unsigned char *c = keep[i];

		ck_assert_uint_eq(c[0], i);
		ck_assert_uint_eq(c[4095], i);
		pool_free(p, keep[i]);
	}
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
	pool_trim();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Errors: hwloc fallback and overrides                                                        */
/* ------------------------------------------------------------------------------------------ */

static void check_fallback(const char *xml)
{
	struct child_result r;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	run_child(xml, NULL, NULL, 1, &r);
	ck_assert_uint_eq(r.t.source, POOL_TOPO_SYSCONF);
	ck_assert_uint_eq(r.t.pus, (unsigned int)n);
	ck_assert_uint_eq(r.t.cores, r.t.pus);
	ck_assert_uint_eq(r.t.packages, 1);
	ck_assert_uint_eq(r.t.numa_nodes, 1);
	/* said once, naming the file, even though the child called pool_topology() twice */
	ck_assert_uint_eq(count_lines(r.err, "libpool: hwloc could not load the topology"), 1);
	ck_assert_uint_eq(count_lines(r.err, "libpool:"), 1);
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

START_TEST(test_bad_buckets)
{
	static const char *bad[] = { "0", "3", "128", "abc", "", "-8", "8x", " 8", "+8", "65",
	                             "1k", "12.0", "99999999999999999999999", "0x10" };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct child_result r;
		char want[128];

		run_child(NULL, bad[i], NULL, 0, &r);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_BUCKETS='%s': ", bad[i]);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_BUCKETS='%s': stderr '%s'",
		              bad[i], r.err);
		snprintf(want, sizeof(want), "keeping %u\n", r.t.default_buckets);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_BUCKETS='%s': %s", bad[i], r.err);
		ck_assert_uint_eq(count_lines(r.err, "libpool:"), 1);
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

		run_child(NULL, NULL, bad[i], 0, &r);
		snprintf(want, sizeof(want), "libpool: ignoring POOL_CACHE_SIZE='%s': ", bad[i]);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_CACHE_SIZE='%s': stderr '%s'",
		              bad[i], r.err);
		snprintf(want, sizeof(want), "keeping %zu\n", r.t.default_cache_bytes);
		ck_assert_msg(strstr(r.err, want) != NULL, "POOL_CACHE_SIZE='%s': %s", bad[i],
		              r.err);
		ck_assert_uint_eq(count_lines(r.err, "libpool:"), 1);
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

		run_child(NULL, good[i].b, good[i].c, 0, &r);
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

	snprintf(path, sizeof(path), "%s/Intel-CascadeLake-2xXeon6230.xml", topo_dir());
	run_child(path, "3", "8k", 0, &r);
	ck_assert_uint_eq(r.t.source, POOL_TOPO_XML);
	ck_assert_ptr_nonnull(strstr(r.err, "ignoring POOL_BUCKETS='3'"));
	ck_assert_ptr_nonnull(strstr(r.err, "keeping 64\n"));
	ck_assert_uint_eq(r.cfg.buckets, 64);
	ck_assert_uint_eq(r.cfg.cache_bytes, 8 * KiB);
}
END_TEST

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
	ck_assert_int_eq(pool_get_stats(p, &st), 0);
	ck_assert_uint_eq(st.buckets, 32);
	c.buckets = 16;
	errno = 0;
	ck_assert_int_eq(pool_configure(&c), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(pool_destroy(p), 0);
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
			ck_assert(errno == EPERM || errno == EINVAL || errno == ENOSYS ||
			          errno == EXDEV);
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

	snprintf(path, sizeof(path), "%s/192em64t-24n8c2t.xml", topo_dir());
	run_child(path, NULL, NULL, 1, &r);
	ck_assert_uint_eq(r.t.source, POOL_TOPO_XML);
	ck_assert_int_eq(r.bind_ret, -1);
	ck_assert_int_eq(r.bind_errno, ENOTSUP);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* OS layer alignment                                                                          */
/* ------------------------------------------------------------------------------------------ */

static void check_pool_alignment(size_t align)
{
	static const size_t sizes[] = { 1, 24, 100, 1000, 3000, 5000 };
	size_t want = align < 16 ? 16 : align;
	unsigned int s, i;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		char name[32];
		struct pool_head *p;
		void *obj[40];

		snprintf(name, sizeof(name), "al%zu-%zu", align, sizes[s]);
		p = pool_create_aligned(name, sizes[s], align, 0);
		ck_assert_ptr_nonnull(p);
		for (i = 0; i < 40; i++) {
			obj[i] = pool_alloc(p);
			ck_assert_ptr_nonnull(obj[i]);
			ck_assert_msg(((uintptr_t)obj[i] & (want - 1)) == 0,
			              "%s: %p not aligned on %zu", name, obj[i], want);
			memset(obj[i], 0xa5, pool_object_size(p));
		}
		for (i = 0; i < 40; i++)
			pool_free(p, obj[i]);
		/* again, now partly from the thread cache and the shared lists */
		for (i = 0; i < 40; i++) {
			obj[i] = pool_alloc(p);
			ck_assert_ptr_nonnull(obj[i]);
			ck_assert(((uintptr_t)obj[i] & (want - 1)) == 0);
		}
		for (i = 0; i < 40; i++)
			pool_free(p, obj[i]);
		pool_thread_flush();
		ck_assert_int_eq(pool_destroy(p), 0);
	}
}

/* Every alignment 8..4096 through pools, with the cache on, then with every object from the OS. */
START_TEST(test_alignment)
{
	size_t align;

	for (align = 8; align <= 4096; align *= 2)
		check_pool_alignment(align);
	ck_assert_int_eq(pool_parse_debugging("no-cache,no-global", NULL), 0);
	for (align = 8; align <= 4096; align *= 2)
		check_pool_alignment(align);
}
END_TEST

/* The OS layer itself, for sizes that are and are not multiples of the alignment. */
START_TEST(test_os_layer_alignment)
{
	static const size_t sizes[] = { 16, 24, 100, 4096, 4100, 65536 + 8 };
	size_t align;
	unsigned int s;

	for (align = 16; align <= 4096; align *= 2) {
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			void *p = pool__os_alloc(sizes[s], align);

			ck_assert_ptr_nonnull(p);
			ck_assert_msg(((uintptr_t)p & (align - 1)) == 0, "%p size %zu align %zu", p,
			              sizes[s], align);
			memset(p, 0x5a, sizes[s]);
			pool__os_free(p, sizes[s], align);
		}
	}
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
	tcase_add_test(tc, test_trim);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fallback_bad_xml);
	tcase_add_test(tc, test_fallback_missing_xml);
	tcase_add_test(tc, test_bad_buckets);
	tcase_add_test(tc, test_bad_cache_size);
	tcase_add_test(tc, test_good_overrides);
	tcase_add_test(tc, test_override_on_xml);
	tcase_add_test(tc, test_configure);
	suite_add_tcase(s, tc);

	tc = tcase_create("Bind");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bind_this_machine);
	tcase_add_test(tc, test_bind_xml);
	suite_add_tcase(s, tc);

	tc = tcase_create("Alignment");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_alignment);
	tcase_add_test(tc, test_os_layer_alignment);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(topology_suite());
	int failed;

	setvbuf(stdout, NULL, _IOLBF, 0);   /* lines reach the log before a forked test ends */
	/* HWLOC_XMLFILE or overrides from the caller's environment would change what we check */
	unsetenv("HWLOC_XMLFILE");
	unsetenv("POOL_BUCKETS");
	unsetenv("POOL_CACHE_SIZE");
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
