/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-malloc - pool-bench's child program for the general allocators: glibc, jemalloc,
 * tcmalloc and mimalloc, each through plain malloc()/free() (calloc() in `server`,
 * malloc() or calloc() of the pools' sizes in `server`, `larson` and `xmalloc`, aligned_alloc()
 * for objects created with an alignment).
 *
 * This program links neither libpool nor jemalloc (mk/bench.mk builds it by itself), so
 * malloc() is glibc's unless the parent put an allocator in LD_PRELOAD: libjemalloc.so.2,
 * libtcmalloc_minimal.so.4 or libmimalloc.so.2. Each allocator thus runs the way a program
 * would use it as its malloc, with its own thread caches. Before measuring, the child checks
 * that the allocator it was asked for is the one that answers malloc() (the dynamic loader only
 * warns when a preload is missing), and answers "unavailable" otherwise.
 *
 * None of these allocators has a bulk API, so `bulk` allocates and frees 32 objects one by one.
 * Threads are plain pthreads, placed by pool-bench-backend.h like libpool's.
 */
#include <dlfcn.h>

#include "pool-bench-child.h"

static size_t bk_size;
static size_t bk_align;         /* 0: malloc(); else aligned_alloc(bk_align, bk_size) */
static size_t bk_srv_sizes[SRV_CLASSES];

/* A symbol only the allocator exports, to tell which one is loaded; NULL for glibc. */
static const char *marker_of(const char *backend)
{
	if (strcmp(backend, "jemalloc") == 0)
		return "mallocx";
	if (strcmp(backend, "tcmalloc") == 0)
		return "tc_malloc";
	if (strcmp(backend, "mimalloc") == 0)
		return "mi_malloc";
	return NULL;
}

static int bk_setup(const struct bench_params *bp, char *why, size_t why_len)
{
	static const char *const others[] = { "jemalloc", "tcmalloc", "mimalloc" };
	const char *marker;
	unsigned int i;

	if (strcmp(bp->backend, "glibc") != 0 && !marker_of(bp->backend)) {
		snprintf(why, why_len, "pool-bench-malloc serves glibc, jemalloc, tcmalloc and "
		         "mimalloc, not '%s'", bp->backend);
		return -1;
	}
	marker = marker_of(bp->backend);
	if (marker && !dlsym(RTLD_DEFAULT, marker)) {
		snprintf(why, why_len, "%s is not loaded (LD_PRELOAD='%s'); install its Debian "
		         "package (see doc/benchmarks.md)", bp->backend,
		         getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
		return -1;
	}
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (strcmp(others[i], bp->backend) == 0)
			continue;
		if (dlsym(RTLD_DEFAULT, marker_of(others[i]))) {
			snprintf(why, why_len, "%s is loaded in a run meant for %s", others[i],
			         bp->backend);
			return -1;
		}
	}
	bk_size = bp->size;
	bk_align = bp->align;
	if (bk_align) {
		/* aligned_alloc() wants a multiple of the alignment: a pool rounds its stride too */
		bk_size = (bk_size + bk_align - 1) / bk_align * bk_align;
	}
	return 0;
}

static int bk_run_workers(unsigned int n, void *(*fn)(void *), char *args, size_t stride)
{
	return bench_run_pthreads(n, fn, args, stride);
}

static void bk_thread_start(struct bk_thread *t)
{
	(void)t;
}

static void bk_thread_stop(struct bk_thread *t)
{
	(void)t;
}

static inline void *bk_alloc(struct bk_thread *t)
{
	(void)t;
	return bk_align ? aligned_alloc(bk_align, bk_size) : malloc(bk_size);
}

static inline void bk_free(struct bk_thread *t, void *p)
{
	(void)t;
	free(p);
}

static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		objs[i] = bk_alloc(t);
		if (!objs[i])
			break;
	}
	return i;
}

static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		bk_free(t, objs[i]);
}

static void bk_teardown(void)
{
}

/*
 * server, larson, xmalloc: the pools' sizes, through calloc() (the equivalent of pool_zalloc())
 * and malloc() (of pool_alloc()).
 */
static int bk_server_setup(const size_t *sizes, unsigned int n, char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	memcpy(bk_srv_sizes, sizes, n * sizeof(*sizes));
	return 0;
}

static inline void *bk_server_zalloc(unsigned int cls)
{
	return calloc(1, bk_srv_sizes[cls]);
}

static inline void *bk_server_alloc(unsigned int cls)
{
	return malloc(bk_srv_sizes[cls]);
}

static inline void bk_server_free(unsigned int cls, void *p)
{
	(void)cls;
	free(p);
}

/* A malloc does not say which allocations reached the system. */
static int bk_server_os_allocs(uint64_t *objects)
{
	*objects = 0;
	return -1;
}

static void bk_server_teardown(void)
{
}

/* A malloc does not say what it holds for these objects apart from the rest: RSS tells. */
static long long bk_held_bytes(void)
{
	return -1;
}

int main(int argc, char **argv)
{
	return bench_child_main(argc, argv);
}
