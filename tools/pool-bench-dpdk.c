/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-dpdk - pool-bench's child program for DPDK's rte_mempool (libdpdk-dev).
 *
 * The EAL starts without hugepages, PCI, telemetry or shared configuration: `--no-huge --no-pci
 * --no-shconf --no-telemetry -l 0 -m <MiB> --file-prefix=pool-bench-<pid>`, with memory sized
 * for the scenario; it leaves nothing behind but /var/run/dpdk itself (its empty per-process
 * runtime directory is removed at exit). The pool is an rte_mempool on DPDK's default ring
 * handler; every thread gets its own user-owned cache of 256 objects (rte_mempool_cache_create(),
 * DPDK's usual cache size) and uses rte_mempool_generic_get()/put() with it, which is what an
 * lcore's built-in cache does, but also works on threads DPDK did not create. `bulk` passes 32
 * objects to one get and one put. If the EAL cannot start here, the child answers "unavailable"
 * with the EAL's reason.
 */
#include <limits.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "pool-bench.h"

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

static int bk_setup(const struct bench_params *bp, char *why, size_t why_len)
{
	unsigned int threads = bp->scenario == SC_THREADS ? bp->threads :
	                       bp->scenario == SC_PIPELINE ? 2 : 1;
	/* per thread: live objects plus a full cache (DPDK flushes at 1.5x its size) */
	size_t per_thread = BENCH_BATCH + DPDK_CACHE * 2 + BENCH_BULK;
	size_t nobj = threads * per_thread + BENCH_RING + 1024;
	size_t mem_mb = (nobj * (bp->size + 256)) / (1024 * 1024) + 128;
	char mem[32], prefix[48];
	char *eal_argv[] = { "pool-bench-dpdk", "--no-huge", "--no-pci", "--no-shconf",
	                     "--no-telemetry", "-l", "0", "-m", mem, "--log-level=*:error",
	                     prefix, NULL };
	int eal_argc = (int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1;

	if (strcmp(bp->backend, "dpdk") != 0) {
		snprintf(why, why_len, "pool-bench-dpdk serves dpdk, not '%s'", bp->backend);
		return -1;
	}
	snprintf(mem, sizeof(mem), "%zu", mem_mb);
	snprintf(prefix, sizeof(prefix), "--file-prefix=pool-bench-%d", (int)getpid());
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		snprintf(why, why_len, "DPDK's EAL cannot start here (--no-huge --no-pci "
		         "--no-shconf): %s", rte_strerror(rte_errno));
		return -1;
	}
	bk_mp = rte_mempool_create("bench", (unsigned int)nobj, (unsigned int)bp->size, 0, 0,
	                           NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
	if (!bk_mp) {
		snprintf(why, why_len, "rte_mempool_create(%zu objects of %zu bytes): %s", nobj,
		         bp->size, rte_strerror(rte_errno));
		return -1;
	}
	atexit(eal_cleanup);
	return 0;
}

static void bk_thread_start(struct bk_thread *t)
{
	t->priv = rte_mempool_cache_create(DPDK_CACHE, SOCKET_ID_ANY);
	if (!t->priv)
		atomic_store(&bench_failed, 1);
}

static void bk_thread_stop(struct bk_thread *t)
{
	if (t->priv) {
		rte_mempool_cache_flush(t->priv, bk_mp);
		rte_mempool_cache_free(t->priv);
		t->priv = NULL;
	}
}

static inline void *bk_alloc(struct bk_thread *t)
{
	void *p;

	if (rte_mempool_generic_get(bk_mp, &p, 1, t->priv) < 0)
		return NULL;
	return p;
}

static inline void bk_free(struct bk_thread *t, void *p)
{
	rte_mempool_generic_put(bk_mp, &p, 1, t->priv);
}

static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	return rte_mempool_generic_get(bk_mp, objs, n, t->priv) < 0 ? 0 : n;
}

static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	rte_mempool_generic_put(bk_mp, objs, n, t->priv);
}

static void bk_teardown(void)
{
	rte_mempool_free(bk_mp);
	bk_mp = NULL;
}

int main(int argc, char **argv)
{
	return bench_child_main(argc, argv);
}
