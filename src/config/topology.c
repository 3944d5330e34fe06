/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Topology: the machine, read once with hwloc (I/O objects filtered out), or from the XML file
 * named by HWLOC_XMLFILE, or, when hwloc fails, from sysconf(); the defaults derived from it
 * (formulas and reasons above pool_topology() in include/pool/pool.h and in doc/tuning.md); and
 * binding a thread to a PU. This file is the only one that calls hwloc. The configuration that
 * starts from these defaults lives in pool-config.c; printing them in pool-topology-show.c.
 *
 * hwloc is loaded for the reading and unloaded after it: libpool does not link it, and
 * load_hwloc() dlopen()s it, reads what the library keeps, destroys the topology and dlclose()s
 * it: hwloc, libudev and what the discovery touches of their code are 0.45 MiB of a process's
 * RSS, for a reading made once. RTLD_LOCAL: hwloc's plugins, which need its symbols in the
 * global scope, then do not load. They bring I/O devices, which libpool filters out, and
 * libxml2's XML parser, where hwloc has its own for HWLOC_XMLFILE; loaded, they and what they
 * pull in (libxml2, libX11, libOpenCL, libpciaccess) would come and go with the topology, and
 * libdw, loaded later by a report (pool-symbols.c), would take their freed TLS module ids,
 * where gcc 12's LeakSanitizer reads stale dynamic TLS and dies at exit (tests/os/check_libs.c
 * runs with it for that). A program that links hwloc itself keeps its plugins: dlopen() finds
 * hwloc loaded.
 *
 * hwloc's inline helpers (hwloc/helper.h) call its functions directly, which a library that
 * does not link hwloc cannot: the few this file needs are written here over the functions
 * looked up (obj_by_type(), count_type(), read_binding()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include <pool/pool.h>

#include "base/pool-util.h"
#include "config/pool-topology.h"

/*
 * hwloc 2.x's soname on every distribution (ABI 15 since 2.0); a hwloc 3 would bring another,
 * and these headers would say so first.
 */
#if HWLOC_API_VERSION < 0x00020000 || HWLOC_API_VERSION >= 0x00030000
#error "libpool reads the topology with hwloc 2.x (libhwloc.so.15)"
#endif
const char *pool__hwloc_soname = "libhwloc.so.15";

/* hwloc's functions this file calls, looked up by load_hwloc(). */
#define HWLOC_FUNCTIONS(F, v)                                                                   \
	F(v, hwloc_get_api_version) F(v, hwloc_topology_init) F(v, hwloc_topology_destroy)       \
	F(v, hwloc_topology_set_io_types_filter) F(v, hwloc_topology_set_xml)                    \
	F(v, hwloc_topology_load) F(v, hwloc_topology_is_thissystem) F(v, hwloc_get_type_depth) \
	F(v, hwloc_get_nbobjs_by_depth) F(v, hwloc_get_obj_by_depth)
POOL_DL_TABLE(hw, HWLOC_FUNCTIONS);
static unsigned int hwloc_api;          /* hwloc_get_api_version() of the hwloc read with */

static struct pool_topology topo_info;
/*
 * What binding needs, kept when the hwloc topology is unloaded (a loaded topology holds about
 * 1.8 MiB of a process's RSS): the OS indexes of the PUs grouped by core, core i's PUs being
 * bind_pu[bind_core[i]] .. bind_pu[bind_core[i + 1] - 1], in hwloc's logical order. A machine
 * without cores in its topology counts each PU as a core. bind_ncores is 0 when the topology is
 * not this machine's (XML), and bind_core NULL as well when the table could not be allocated.
 */
static unsigned int *bind_pu, *bind_core;
static unsigned int bind_ncores;
static int bind_nomem;
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static char topo_xml_path[PATH_MAX];

/* ------------------------------------------------------------------------------------------ */
/* Derived defaults                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* The largest power of two <= pus, within POOL_TOPO_BUCKETS_MIN..POOL_TOPO_BUCKETS_MAX. */
static unsigned int derive_buckets(unsigned int pus)
{
	unsigned int b = POOL_TOPO_BUCKETS_MIN;

	while (b < POOL_TOPO_BUCKETS_MAX && b * 2 <= pus)
		b *= 2;
	return b;
}

/* The L2 share of one PU, rounded down to 4 KiB, within POOL_TOPO_CACHE_MIN..MAX. */
static size_t derive_cache_bytes(size_t l2_per_pu)
{
	size_t v = l2_per_pu & ~(size_t)4095;

	if (!l2_per_pu)
		return POOL_TOPO_CACHE_FALLBACK;
	if (v < POOL_TOPO_CACHE_MIN)
		v = POOL_TOPO_CACHE_MIN;
	if (v > POOL_TOPO_CACHE_MAX)
		v = POOL_TOPO_CACHE_MAX;
	return v;
}

static void derive_defaults(struct pool_topology *t)
{
	t->default_buckets = derive_buckets(t->pus);
	t->default_cache_bytes = derive_cache_bytes(t->l2_per_pu_bytes);
}

/* ------------------------------------------------------------------------------------------ */
/* Loading                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * The depth of the objects of `type`, or -1 when there are none or they lie at several depths
 * (what hwloc_get_nbobjs_by_type() and hwloc_get_obj_by_type() of hwloc/helper.h then answer:
 * none). The virtual depths of memory objects (NUMA nodes) are negative and valid.
 */
static int type_depth(hwloc_topology_t h, hwloc_obj_type_t type)
{
	int depth = hw.hwloc_get_type_depth(h, type);

	return depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE ? -1 : depth;
}

static unsigned int count_type(hwloc_topology_t h, hwloc_obj_type_t type)
{
	int depth = type_depth(h, type);

	return depth == -1 ? 0 : hw.hwloc_get_nbobjs_by_depth(h, depth);
}

/* The object of `type` with logical index `i`, or NULL. */
static hwloc_obj_t obj_by_type(hwloc_topology_t h, hwloc_obj_type_t type, unsigned int i)
{
	int depth = type_depth(h, type);

	return depth == -1 ? NULL : hw.hwloc_get_obj_by_depth(h, depth, i);
}

/*
 * Size of the first CPU cache of `type`, their count, and the sum of their sizes. Instruction
 * caches and memory-side caches (KNL's MCDRAM in cache mode, exported by old hwloc as an L3 with
 * subtype "MemorySideCache") are not CPU data caches and are skipped.
 */
static size_t cache_info(hwloc_topology_t h, hwloc_obj_type_t type, unsigned int *count,
                         size_t *total)
{
	unsigned int i, kept = 0, n = count_type(h, type);
	size_t first = 0, sum = 0;

	for (i = 0; i < n; i++) {
		hwloc_obj_t o = obj_by_type(h, type, i);

		if (!o || !o->attr || o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
			continue;
		if (o->subtype && !strcmp(o->subtype, "MemorySideCache"))
			continue;
		if (!kept++)
			first = (size_t)o->attr->cache.size;
		sum += (size_t)o->attr->cache.size;
	}
	if (count)
		*count = kept;
	if (total)
		*total = sum;
	return first;
}

/* Fill topo_info from a loaded hwloc topology. */
static void read_hwloc(hwloc_topology_t h)
{
	struct pool_topology *t = &topo_info;
	hwloc_obj_t l1;
	size_t l2_total = 0;

	t->pus = count_type(h, HWLOC_OBJ_PU);
	t->cores = count_type(h, HWLOC_OBJ_CORE);
	t->packages = count_type(h, HWLOC_OBJ_PACKAGE);
	t->numa_nodes = count_type(h, HWLOC_OBJ_NUMANODE);
	if (!t->pus)
		t->pus = 1;
	if (!t->cores)
		t->cores = t->pus;
	if (!t->packages)
		t->packages = 1;
	if (!t->numa_nodes)
		t->numa_nodes = 1;
	t->l1d_bytes = cache_info(h, HWLOC_OBJ_L1CACHE, NULL, NULL);
	t->l2_bytes = cache_info(h, HWLOC_OBJ_L2CACHE, &t->l2_count, &l2_total);
	t->l3_bytes = cache_info(h, HWLOC_OBJ_L3CACHE, &t->l3_count, NULL);
	t->l2_per_pu_bytes = l2_total / t->pus;
	l1 = obj_by_type(h, HWLOC_OBJ_L1CACHE, 0);
	t->cache_line = 64;
	if (l1 && l1->attr && l1->attr->cache.linesize)
		t->cache_line = l1->attr->cache.linesize;
}

static size_t sysconf_size(int name)
{
	long v = sysconf(name);

	return v > 0 ? (size_t)v : 0;
}

/* The fallback: what the C library knows, assuming one core and one L2 per PU. */
static void read_sysconf(void)
{
	struct pool_topology *t = &topo_info;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	size_t line = sysconf_size(_SC_LEVEL1_DCACHE_LINESIZE);

	t->pus = n > 0 ? (unsigned int)n : 1;
	t->cores = t->pus;
	t->packages = 1;
	t->numa_nodes = 1;
	t->cache_line = line ? (unsigned int)line : 64;
	t->l1d_bytes = sysconf_size(_SC_LEVEL1_DCACHE_SIZE);
	t->l2_bytes = sysconf_size(_SC_LEVEL2_CACHE_SIZE);
	t->l3_bytes = sysconf_size(_SC_LEVEL3_CACHE_SIZE);
	t->l2_count = t->l2_bytes ? t->pus : 0;
	t->l3_count = t->l3_bytes ? 1 : 0;
	t->l2_per_pu_bytes = t->l2_bytes;
}

/*
 * The logical index (< ncores) of the core that PU `i` belongs to, its OS index in *os; -1 for
 * a PU outside every core.
 */
static int core_of_pu(hwloc_topology_t h, unsigned int i, unsigned int ncores, unsigned int *os)
{
	hwloc_obj_t pu = obj_by_type(h, HWLOC_OBJ_PU, i), o = pu ? pu->parent : NULL;

	while (o && o->type != HWLOC_OBJ_CORE)
		o = o->parent;
	if (!o || o->logical_index >= ncores)
		return -1;
	*os = pu->os_index;
	return (int)o->logical_index;
}

/* No memory for the binding table: none is kept, and binding says ENOMEM. */
static void binding_nomem(void)
{
	free(bind_pu);
	free(bind_core);
	bind_pu = bind_core = NULL;
	bind_nomem = 1;
}

/*
 * Fill the binding table (bind_pu, bind_core) from a topology of this machine: each core's PUs,
 * cores and PUs in hwloc's logical order (a PU outside every core is left out).
 */
static void read_binding(hwloc_topology_t h)
{
	unsigned int ncores = count_type(h, HWLOC_OBJ_CORE), npus = count_type(h, HWLOC_OBJ_PU);
	unsigned int c, i, os, *at;
	hwloc_obj_t pu;
	int core;

	if (!npus)
		return;
	bind_pu = calloc(npus, sizeof(*bind_pu));
	bind_core = calloc((ncores ? ncores : npus) + 1, sizeof(*bind_core));
	if (!bind_pu || !bind_core) {
		binding_nomem();
		return;
	}
	if (!ncores) {                          /* no cores in the topology: a PU is a core */
		for (c = 0; c < npus; c++) {
			bind_core[c] = c;
			pu = obj_by_type(h, HWLOC_OBJ_PU, c);
			bind_pu[c] = pu ? pu->os_index : c;
		}
		bind_core[npus] = npus;
		bind_ncores = npus;
		return;
	}
	/* count core c's PUs in bind_core[c + 1], sum them into starts, then place each PU */
	for (i = 0; i < npus; i++)
		if ((core = core_of_pu(h, i, ncores, &os)) >= 0)
			bind_core[core + 1]++;
	for (c = 0; c < ncores; c++)
		bind_core[c + 1] += bind_core[c];
	at = calloc(ncores, sizeof(*at));
	if (!at) {
		binding_nomem();
		return;
	}
	for (i = 0; i < npus; i++)
		if ((core = core_of_pu(h, i, ncores, &os)) >= 0)
			bind_pu[bind_core[core] + at[core]++] = os;
	free(at);
	bind_ncores = ncores;
}

/*
 * Load hwloc, load the topology with it, read what the library needs and unload both; returns
 * 0, or -1 with `why` filled and nothing kept (hwloc missing, of another major API version than
 * these headers', or failing).
 */
static int load_hwloc(char *why, size_t why_len)
{
	hwloc_topology_t h;
	void *lib = dlopen(pool__hwloc_soname, RTLD_LAZY | RTLD_LOCAL);
	const char *missing;
	int rc = -1;

	if (!lib) {
		const char *err = dlerror();

		snprintf(why, why_len, "%s", err ? err : pool__hwloc_soname);
		return -1;
	}
	missing = pool__dlsym_all(lib, hw_names, hw_slots, POOL_DL_COUNT(hw));
	if (missing) {
		snprintf(why, why_len, "%s has no %s", pool__hwloc_soname, missing);
		goto out;
	}
	hwloc_api = hw.hwloc_get_api_version();
	if (hwloc_api >> 16 != HWLOC_API_VERSION >> 16) {
		snprintf(why, why_len, "%s has API %u.%u, libpool was built for %u.%u",
		         pool__hwloc_soname, hwloc_api >> 16, (hwloc_api >> 8) & 0xff,
		         HWLOC_API_VERSION >> 16, (HWLOC_API_VERSION >> 8) & 0xff);
		goto out;
	}
	if (hw.hwloc_topology_init(&h) < 0) {
		snprintf(why, why_len, "hwloc_topology_init: %s", strerror(errno));
		goto out;
	}
	/* CPUs, caches and memory only: PCI and OS devices cost most of the discovery time */
	hw.hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
	if (topo_info.xml_file && hw.hwloc_topology_set_xml(h, topo_info.xml_file) < 0) {
		snprintf(why, why_len, "HWLOC_XMLFILE='%s': %s", topo_info.xml_file,
		         strerror(errno));
		hw.hwloc_topology_destroy(h);
		goto out;
	}
	if (hw.hwloc_topology_load(h) < 0) {
		if (topo_info.xml_file)
			snprintf(why, why_len, "HWLOC_XMLFILE='%s': %s", topo_info.xml_file,
			         strerror(errno));
		else
			snprintf(why, why_len, "hwloc_topology_load: %s", strerror(errno));
		hw.hwloc_topology_destroy(h);
		goto out;
	}
	read_hwloc(h);
	if (!topo_info.xml_file && hw.hwloc_topology_is_thissystem(h))
		read_binding(h);
	hw.hwloc_topology_destroy(h);
	rc = 0;
out:
	if (rc)
		hwloc_api = 0;
	memset(&hw, 0, sizeof(hw));
	dlclose(lib);
	return rc;
}

static unsigned long elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (unsigned long)((b->tv_sec - a->tv_sec) * 1000000L +
	                       (b->tv_nsec - a->tv_nsec) / 1000L);
}

static void topology_load(void)
{
	struct pool_topology *t = &topo_info;
	const char *xml = getenv("HWLOC_XMLFILE");
	struct timespec t0, t1, c0, c1;
	char why[4300];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	if (xml && *xml) {
		snprintf(topo_xml_path, sizeof(topo_xml_path), "%s", xml);
		t->xml_file = topo_xml_path;
	}
	if (load_hwloc(why, sizeof(why)) == 0) {
		t->source = t->xml_file ? POOL_TOPO_XML : POOL_TOPO_SYSTEM;
		derive_defaults(t);
	} else {
		t->source = POOL_TOPO_SYSCONF;
		read_sysconf();
		derive_defaults(t);
		fprintf(stderr, "libpool: hwloc could not load the topology (%s); using sysconf(): "
		        "%u PUs, L2 %zu bytes; defaults: %u buckets, %zu bytes of thread cache\n",
		        why, t->pus, t->l2_bytes, t->default_buckets, t->default_cache_bytes);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t->load_us = elapsed_us(&t0, &t1);
	t->load_cpu_us = elapsed_us(&c0, &c1);
}

POOL_API const struct pool_topology *pool_topology(void)
{
	pthread_once(&topo_once, topology_load);
	return &topo_info;
}

/* ------------------------------------------------------------------------------------------ */
/* Binding                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Fallback binding: the (index mod n)-th CPU of the process's affinity mask. */
static int bind_sysconf(unsigned int index)
{
	cpu_set_t allowed, one;
	int cpu, n, err;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -1;
	n = CPU_COUNT(&allowed);
	if (n <= 0) {
		errno = EINVAL;
		return -1;
	}
	index %= (unsigned int)n;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (index-- == 0)
			break;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	err = pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

POOL_API int pool_topology_bind_thread(unsigned int index)
{
	const struct pool_topology *t = pool_topology();
	unsigned int c, first, npus, os;
	cpu_set_t *set;
	size_t size;
	int err;

	if (t->source == POOL_TOPO_SYSCONF)
		return bind_sysconf(index);
	if (bind_nomem) {
		errno = ENOMEM;
		return -1;
	}
	if (!bind_ncores) {
		errno = ENOTSUP;
		return -1;
	}
	c = index % bind_ncores;
	first = bind_core[c];
	npus = bind_core[c + 1] - first;
	if (!npus) {
		errno = EINVAL;
		return -1;
	}
	os = bind_pu[first + (index / bind_ncores) % npus];
	set = CPU_ALLOC(os + 1);
	if (!set) {
		errno = ENOMEM;
		return -1;
	}
	size = CPU_ALLOC_SIZE(os + 1);
	CPU_ZERO_S(size, set);
	CPU_SET_S(os, size, set);
	/* EINVAL: the PU is not among the CPUs this process may use (cgroup cpuset, taskset) */
	err = pthread_setaffinity_np(pthread_self(), size, set);
	CPU_FREE(set);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

unsigned int pool__topology_hwloc_api(void)
{
	pool_topology();
	return hwloc_api;
}
