/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-dpdk - pool-bench's child program for DPDK's rte_mempool (libdpdk-dev).
 *
 * Every worker thread is an EAL lcore, as DPDK's documentation has it ("Environment
 * Abstraction Layer", lcores and remote launch): worker 0 is the main lcore (this program's main
 * thread), workers 1..n-1 are worker lcores that run their part through rte_eal_remote_launch().
 * Each lcore uses the mempool's built-in per-lcore cache (256 objects, DPDK's usual size) with
 * rte_mempool_get()/put(), and `bulk` passes 32 objects to one get_bulk and one put_bulk.
 *
 * Placement comes from the EAL's --lcores mapping, so that it matches what pool-bench-backend.h
 * does for the other backends: not pinned, `--lcores=(0-<n-1>)@(<CPUs this process may use>)`
 * lets every lcore run on every allowed CPU; with a pin list, `--lcores=0@<pin[0]>,1@<pin[1]>,...`
 * puts lcore i on CPU pin[i % length].
 *
 * The EAL starts without hugepages, PCI, telemetry or shared configuration: `--no-huge --no-pci
 * --no-shconf --no-telemetry -m <MiB> --file-prefix=pool-bench-<pid>`, memory sized for the
 * scenario; it leaves nothing behind but /var/run/dpdk itself (its empty per-process runtime
 * directory is removed at exit). If the EAL cannot start here, the child answers "unavailable"
 * with the EAL's reason. DPDK has no general allocation, so it has no `server`, `larson` or
 * `xmalloc`: an rte_mempool holds objects of one size, sized when it is created, and only EAL
 * lcores (or threads registered as such) have a cache, while those scenarios keep starting
 * threads.
 */
#include <limits.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "pool-bench-child.h"

#define DPDK_CACHE 256u

static struct rte_mempool *bk_mp;

/* Stop the EAL and remove its (empty, per-process) runtime directory. */
static void eal_cleanup(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(dir);
}

/* The --lcores mapping for n lcores (see the top of this file). */
static int lcores_arg(const struct bench_params *bp, unsigned int n, char *buf, size_t len)
{
	size_t used;
	unsigned int i;

	used = (size_t)snprintf(buf, len, "--lcores=");
	if (!bp->ncpus) {
		char allowed[512];
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) < 0)
			return -1;
		bench_format_cpuset(&set, allowed, sizeof(allowed));
		if (n == 1)
			used += (size_t)snprintf(buf + used, len - used, "0@(%s)", allowed);
		else
			used += (size_t)snprintf(buf + used, len - used, "(0-%u)@(%s)", n - 1, allowed);
	} else {
		for (i = 0; i < n && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%u@%d", i ? "," : "", i,
			                         bp->cpus[i % bp->ncpus]);
	}
	return used < len ? 0 : -1;
}

static int bk_setup(const struct bench_params *bp, char *why, size_t why_len)
{
	unsigned int n = bench_workers_of(bp);
	/* per lcore: live objects plus a full cache (DPDK flushes at 1.5x its size) */
	size_t per_lcore = BENCH_BATCH + DPDK_CACHE * 3 / 2 + BENCH_BULK;
	size_t nobj = n * per_lcore + (n / 2 + 1) * BENCH_RING + 2 * BENCH_FS_OBJS + 1024;
	size_t mem_mb = (nobj * (bp->size + 256)) / (1024 * 1024) + 128;
	static char mem[32], prefix[48], lcores[8192];
	char *eal_argv[] = { "pool-bench-dpdk", "--no-huge", "--no-pci", "--no-shconf",
	                     "--no-telemetry", lcores, "-m", mem, "--log-level=*:error",
	                     prefix, NULL };
	int eal_argc = (int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1;

	if (strcmp(bp->backend, "dpdk") != 0) {
		snprintf(why, why_len, "pool-bench-dpdk serves dpdk, not '%s'", bp->backend);
		return -1;
	}
	if (bench_own_threads(bp->scenario)) {
		snprintf(why, why_len, "DPDK has no general allocation for the %s scenario",
		         bench_scenario_names[bp->scenario]);
		return -1;
	}
	if (bp->scenario == SC_RETURN) {
		snprintf(why, why_len, "an rte_mempool is sized at its creation and never gives "
		         "memory back");
		return -1;
	}
	if (n > RTE_MAX_LCORE) {
		snprintf(why, why_len, "DPDK runs at most %d lcores (RTE_MAX_LCORE), not %u",
		         RTE_MAX_LCORE, n);
		return -1;
	}
	if (bp->align > RTE_CACHE_LINE_SIZE) {
		snprintf(why, why_len, "rte_mempool aligns objects to %d bytes, not %zu",
		         RTE_CACHE_LINE_SIZE, bp->align);
		return -1;
	}
	if (lcores_arg(bp, n, lcores, sizeof(lcores)) < 0) {
		snprintf(why, why_len, "cannot build the --lcores mapping for %u lcores", n);
		return -1;
	}
	snprintf(mem, sizeof(mem), "%zu", mem_mb);
	snprintf(prefix, sizeof(prefix), "--file-prefix=pool-bench-%d", (int)getpid());
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		snprintf(why, why_len, "DPDK's EAL cannot start here (--no-huge --no-pci "
		         "--no-shconf %.80s): %s", lcores, rte_strerror(rte_errno));
		return -1;
	}
	atexit(eal_cleanup);
	bench_backend_places = 1;
	bk_mp = rte_mempool_create("bench", (unsigned int)nobj, (unsigned int)bp->size, DPDK_CACHE,
	                           0, NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
	if (!bk_mp) {
		snprintf(why, why_len, "rte_mempool_create(%zu objects of %zu bytes): %s", nobj,
		         bp->size, rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static void *(*dpdk_fn)(void *);

static int dpdk_worker(void *arg)
{
	dpdk_fn(arg);
	return 0;
}

/* Worker 0 on the main lcore, worker i on the i-th worker lcore (rte_eal_remote_launch()). */
static int bk_run_workers(unsigned int n, void *(*fn)(void *), char *args, size_t stride)
{
	unsigned int lcore, i = 1;

	if (rte_lcore_count() < n)
		return -1;
	dpdk_fn = fn;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == n)
			break;
		if (rte_eal_remote_launch(dpdk_worker, args + i * stride, lcore) != 0) {
			/* the barrier expects n workers: the ones launched cannot finish */
			fprintf(stderr, "pool-bench-dpdk: cannot launch lcore %u\n", lcore);
			_exit(BENCH_EXIT_FAILED);
		}
		i++;
	}
	fn(args);
	rte_eal_mp_wait_lcore();
	return 0;
}

static void bk_thread_start(struct bk_thread *t)
{
	(void)t;
}

/* Each lcore's cache goes back to the ring, so that teardown finds every object home. */
static void bk_thread_stop(struct bk_thread *t)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(bk_mp, rte_lcore_id());

	(void)t;
	if (c)
		rte_mempool_cache_flush(c, bk_mp);
}

static inline void *bk_alloc(struct bk_thread *t)
{
	void *p;

	(void)t;
	if (rte_mempool_get(bk_mp, &p) < 0)
		return NULL;
	return p;
}

static inline void bk_free(struct bk_thread *t, void *p)
{
	(void)t;
	rte_mempool_put(bk_mp, p);
}

static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	return rte_mempool_get_bulk(bk_mp, objs, n) < 0 ? 0 : n;
}

static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	rte_mempool_put_bulk(bk_mp, objs, n);
}

static void bk_teardown(void)
{
	if (bk_mp && rte_mempool_in_use_count(bk_mp) != 0)
		bench_fail("%u objects are still out of the mempool",
		           rte_mempool_in_use_count(bk_mp));
	rte_mempool_free(bk_mp);
	bk_mp = NULL;
}

static int bk_server_setup(const size_t *sizes, unsigned int n, char *why, size_t why_len)
{
	(void)sizes;
	(void)n;
	snprintf(why, why_len, "DPDK has no general allocation for the server scenarios");
	return -1;
}

static inline void *bk_server_zalloc(unsigned int cls)
{
	(void)cls;
	return NULL;
}

static inline void *bk_server_alloc(unsigned int cls)
{
	(void)cls;
	return NULL;
}

static inline void bk_server_free(unsigned int cls, void *p)
{
	(void)cls;
	(void)p;
}

static int bk_server_os_allocs(uint64_t *objects)
{
	*objects = 0;
	return -1;
}

static void bk_server_teardown(void)
{
}

static long long bk_held_bytes(void)
{
	return -1;
}

int main(int argc, char **argv)
{
	return bench_child_main(argc, argv);
}
