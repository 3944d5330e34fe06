/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench - libpool side by side with the allocators a user would pick instead: glibc malloc,
 * jemalloc, tcmalloc, mimalloc and DPDK's rte_mempool (`make bench`). Manual: doc/pool-bench.1;
 * method and latest figures: doc/benchmarks.md.
 *
 * Every measurement runs in a fresh child process (see pool-bench.h): this program itself for
 * libpool, pool-bench-malloc with the allocator in LD_PRELOAD for the general allocators, and
 * pool-bench-dpdk for DPDK. For each figure (scenario, size, backend), one calibration child
 * finds how many units take about a third of a sample; every sample then times enough units to
 * last at least --sample-ms (a sample that ends sooner is run again with more units, so the time
 * is never capped and never short). The samples go round the backends in a different order each
 * time (rotated, and reversed every other round), so that no backend always runs first or after
 * the same neighbour. Each figure is the median of its samples, printed with their minimum and
 * maximum; the JSON also holds the quartiles and every sample.
 *
 * The load average and the CPU model are read at the start (and the load again at the end) and
 * printed in the header and the JSON; a load above 0.5 per PU draws a warning, because other
 * processes then take CPU time from the threads being measured.
 *
 * `--instructions` runs the pair scenario of each backend under valgrind --tool=callgrind,
 * collecting only inside the measured loop (--toggle-collect=bench_pair_loop*), and prints the
 * instructions per allocation+free pair, also net of the same loop without an allocator (the
 * "loop" scenario of the children). libpool keeps its inline fast path under callgrind (only
 * memcheck sends every call to the slow path), so the count is that of the code that runs
 * outside Valgrind. A normal run counts libpool's pair this way too (when valgrind is
 * installed), for the instruction target.
 *
 * Exit status: 0 done; 1 a failure was found (a backend failed or crashed, an object came back
 * corrupted, libpool could not run, a file could not be written); 2 bad usage; 3 a backend named
 * with --backend, or a tool that --plot or --instructions needs, cannot run here.
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "pool-bench.h"
#include "tool.h"

const char *tool_name = "pool-bench";

#ifndef POOL_BENCH_HELPER_DIR   /* the Makefile sets it to $(LIBEXECDIR)/libpool */
#define POOL_BENCH_HELPER_DIR "/usr/local/libexec/libpool"
#endif

extern char **environ;

/* ------------------------------------------------------------------------------------------ */
/* The libpool backend, for `pool-bench --child libpool ...`                                  */
/* ------------------------------------------------------------------------------------------ */

static struct pool_head *bk_pool;
static struct pool_head *bk_srv_pools[SRV_CLASSES];
static unsigned int bk_srv_n;

static int bk_setup(const struct bench_params *bp, char *why, size_t why_len)
{
	if (strcmp(bp->backend, "libpool") != 0) {
		snprintf(why, why_len, "pool-bench serves libpool, not '%s'", bp->backend);
		return -1;
	}
	if (bench_own_threads(bp->scenario))
		return 0;
	bk_pool = pool_create_aligned("bench", bp->size, bp->align, 0);
	if (!bk_pool) {
		snprintf(why, why_len, "pool_create_aligned(%zu, %zu): %s", bp->size, bp->align,
		         strerror(errno));
		return -1;
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
	(void)t;   /* the thread's cache goes back to the shared lists when it exits */
}

static inline void *bk_alloc(struct bk_thread *t)
{
	(void)t;
	return pool_alloc(bk_pool);
}

static inline void bk_free(struct bk_thread *t, void *p)
{
	(void)t;
	pool_free(bk_pool, p);
}

static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	return (unsigned int)pool_alloc_bulk(bk_pool, objs, n);
}

static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	pool_free_bulk(bk_pool, objs, n);
}

/* Every object is back and every thread gone: the pool goes (LeakSanitizer checks it). */
static void bk_teardown(void)
{
	pool_thread_flush();
	if (bk_pool && pool_destroy(bk_pool) < 0)
		bench_fail("pool_destroy(bench): %s (objects still handed out)", strerror(errno));
	bk_pool = NULL;
}

/*
 * POOL_BENCH_PEAK (server, larson, xmalloc): where the pools' bytes lay when their slabs held
 * the most. A thread reads every pool's struct pool_stats each millisecond while the workload
 * runs and keeps the sample whose slab bytes (carved bytes for pools off slabs) were the
 * highest, the first of equals; the teardown samples once more, after the workers, and prints
 * the peak on stderr: the slabs' bytes, then the bytes of the objects carved from them, split
 * into those the program held, those in thread caches, in the shared lists and free in their
 * slabs (`used` counts the cached objects too: internals 8.1). Each pool is read in turn while
 * the workers run, so a sample's parts need not add up exactly, and the sampler takes CPU time
 * from them: figures for diagnosis, not timings.
 */
struct bk_peak_bytes {
	size_t slabs, carved, held, cached, shared, slab_free;
};

static struct {
	pthread_t thread;
	atomic_int stop;
	int running;
	unsigned long samples;
	struct bk_peak_bytes sum;                  /* at the peak */
	struct bk_peak_bytes pool[SRV_CLASSES];    /* at the peak */
} bk_peak;

static size_t bk_peak_key(const struct bk_peak_bytes *b)
{
	return b->slabs ? b->slabs : b->carved;
}

/* Read every pool once; keep the sample if its slabs hold more than the peak's did. */
static void bk_peak_sample(void)
{
	struct bk_peak_bytes sum, pool[SRV_CLASSES];
	struct pool_stats st;
	unsigned int i;

	memset(&sum, 0, sizeof(sum));
	memset(pool, 0, sizeof(pool));
	for (i = 0; i < bk_srv_n; i++) {
		if (pool_get_stats(bk_srv_pools[i], &st, sizeof(st)) < 0)
			continue;
		pool[i].slabs = st.slab_bytes;
		pool[i].carved = st.allocated * st.stride;
		pool[i].cached = st.cached * st.stride;
		pool[i].held = st.used > st.cached ? (st.used - st.cached) * st.stride : 0;
		pool[i].shared = st.shared_free * st.stride;
		pool[i].slab_free = st.slab_free * st.stride;
		sum.slabs += pool[i].slabs;
		sum.carved += pool[i].carved;
		sum.held += pool[i].held;
		sum.cached += pool[i].cached;
		sum.shared += pool[i].shared;
		sum.slab_free += pool[i].slab_free;
	}
	if (!bk_peak.samples++ || bk_peak_key(&sum) > bk_peak_key(&bk_peak.sum)) {
		bk_peak.sum = sum;
		memcpy(bk_peak.pool, pool, sizeof(pool));
	}
}

static void *bk_peak_main(void *arg)
{
	const struct timespec period = { 0, 1000000 };

	(void)arg;
	while (!atomic_load_explicit(&bk_peak.stop, memory_order_acquire)) {
		bk_peak_sample();
		nanosleep(&period, NULL);
	}
	return NULL;
}

/* Stop the sampler and print its peak (bk_server_teardown(), before the caches are flushed). */
static void bk_peak_report(void)
{
	const double mib = 1024.0 * 1024.0;
	const struct bk_peak_bytes *b = &bk_peak.sum;
	unsigned int i;

	if (!bk_peak.running)
		return;
	atomic_store_explicit(&bk_peak.stop, 1, memory_order_release);
	pthread_join(bk_peak.thread, NULL);
	bk_peak.running = 0;
	bk_peak_sample();    /* the workers are gone: a run shorter than a period is sampled too */
	fprintf(stderr, "peak (POOL_BENCH_PEAK, %lu samples): slabs %.2f MiB; carved objects %.2f "
	        "MiB: held by the program %.2f, thread caches %.2f, shared lists %.2f, free in "
	        "slabs %.2f\n", bk_peak.samples, b->slabs / mib, b->carved / mib, b->held / mib,
	        b->cached / mib, b->shared / mib, b->slab_free / mib);
	for (i = 0; i < bk_srv_n; i++) {
		b = &bk_peak.pool[i];
		fprintf(stderr, "peak %s: slabs %zu B, carved %zu B: held %zu, cached %zu, shared %zu, "
		        "slab free %zu\n", pool_name(bk_srv_pools[i]), b->slabs, b->carved, b->held,
		        b->cached, b->shared, b->slab_free);
	}
}

/*
 * server, larson, xmalloc: one pool per size class, not merged with each other (no
 * POOL_F_SHARED); with POOL_BENCH_PEAK set, the sampler above.
 */
static int bk_server_setup(const size_t *sizes, unsigned int n, char *why, size_t why_len)
{
	const char *peak = getenv("POOL_BENCH_PEAK");
	char name[32];
	int rc;

	for (bk_srv_n = 0; bk_srv_n < n; bk_srv_n++) {
		snprintf(name, sizeof(name), "server-%zu", sizes[bk_srv_n]);
		bk_srv_pools[bk_srv_n] = pool_create(name, sizes[bk_srv_n], 0);
		if (!bk_srv_pools[bk_srv_n]) {
			snprintf(why, why_len, "pool_create(%s): %s", name, strerror(errno));
			bk_server_teardown();
			return -1;
		}
	}
	if (peak && *peak && strcmp(peak, "0") != 0) {
		rc = pthread_create(&bk_peak.thread, NULL, bk_peak_main, NULL);
		if (rc != 0) {
			snprintf(why, why_len, "POOL_BENCH_PEAK: pthread_create(): %s", strerror(rc));
			bk_server_teardown();
			return -1;
		}
		bk_peak.running = 1;
	}
	return 0;
}

static inline void *bk_server_zalloc(unsigned int cls)
{
	return pool_zalloc(bk_srv_pools[cls]);
}

static inline void *bk_server_alloc(unsigned int cls)
{
	return pool_alloc(bk_srv_pools[cls]);
}

static inline void bk_server_free(unsigned int cls, void *p)
{
	pool_free(bk_srv_pools[cls], p);
}

/*
 * Objects the server's pools took from below their shared lists so far: from their slabs,
 * fresh or given back (struct pool_stats.slab_get_objects; before slabs, os_allocs counted
 * them). The slabs taken and given back whole are printed on stderr at teardown when
 * POOL_BENCH_SLABS is set (the churn of issue 27).
 */
static int bk_server_os_allocs(uint64_t *objects)
{
	struct pool_stats st;
	unsigned int i;

	*objects = 0;
	for (i = 0; i < bk_srv_n; i++) {
		if (pool_get_stats(bk_srv_pools[i], &st, sizeof(st)) < 0)
			return -1;
		*objects += st.slab_get_objects;
	}
	return 0;
}

static long long bk_held_bytes(void)
{
	struct pool_stats st;

	if (!bk_pool || pool_get_stats(bk_pool, &st, sizeof(st)) < 0)
		return -1;
	return (long long)(st.allocated * st.stride);
}

static void bk_server_teardown(void)
{
	bk_peak_report();
	pool_thread_flush();
	if (getenv("POOL_BENCH_SLABS")) {
		unsigned int i;

		for (i = 0; i < bk_srv_n; i++) {
			struct pool_stats st;

			if (pool_get_stats(bk_srv_pools[i], &st, sizeof(st)) == 0)
				fprintf(stderr, "slabs %s: held %zu (%zu bytes), given back %llu; objects "
				        "carved %llu, from the slabs %llu, to them %llu\n",
				        pool_name(bk_srv_pools[i]), st.slabs, st.slab_bytes,
				        (unsigned long long)st.slabs_released,
				        (unsigned long long)st.os_allocs,
				        (unsigned long long)st.slab_get_objects,
				        (unsigned long long)st.slab_put_objects);
		}
	}
	while (bk_srv_n > 0) {
		struct pool_head *p = bk_srv_pools[--bk_srv_n];

		if (pool_destroy(p) < 0)
			bench_fail("pool_destroy(%s): %s (objects still handed out)", pool_name(p),
			           strerror(errno));
	}
}

/* ------------------------------------------------------------------------------------------ */
/* The parent: backends, rows and cells                                                       */
/* ------------------------------------------------------------------------------------------ */

enum backend { BK_LIBPOOL, BK_GLIBC, BK_JEMALLOC, BK_TCMALLOC, BK_MIMALLOC, BK_DPDK, BK_COUNT };

static const struct backend_desc {
	const char *name;
	const char *program;        /* child program next to pool-bench */
	const char *preload;        /* LD_PRELOAD for it, or NULL */
	const char *package;        /* Debian package that provides it */
	int general;                /* a general-purpose malloc */
} backends[BK_COUNT] = {
	{ "libpool", "pool-bench", NULL, "(this project)", 0 },
	{ "glibc", "pool-bench-malloc", NULL, "libc6", 1 },
	{ "jemalloc", "pool-bench-malloc", "libjemalloc.so.2", "libjemalloc2", 1 },
	{ "tcmalloc", "pool-bench-malloc", "libtcmalloc_minimal.so.4",
	  "libtcmalloc-minimal4", 1 },
	{ "mimalloc", "pool-bench-malloc", "libmimalloc.so.2", "libmimalloc2.0", 1 },
	{ "dpdk", "pool-bench-dpdk", NULL, "libdpdk-dev (at build time)", 0 },
};

static const char *const bk_names[BK_COUNT] = {
	"libpool", "glibc", "jemalloc", "tcmalloc", "mimalloc", "dpdk"
};

/*
 * Rows of the tables: a scenario at one thread count (and alignment). The rows of the server
 * table follow the fixed ones: for each of the --server-threads counts (index ti), SRV_KINDS
 * kinds: the server at each live-set size (index li) and shape, then larson, then xmalloc.
 */
#define MAX_SERVER   4u          /* thread counts of the server table */
#define MAX_LIVE     3u          /* live-set sizes of the server */

enum srv_shape { SHAPE_SHORT_BURST, SHAPE_SHORT_HANDOVER, SHAPE_LONG_BURST, SHAPE_LONG_HANDOVER,
                 SHAPE_COUNT };

static const char *const shape_names[SHAPE_COUNT] = {
	"short-burst", "short-handover", "long-burst", "long-handover"
};

#define KIND_LARSON  (MAX_LIVE * SHAPE_COUNT)
#define KIND_XMALLOC (KIND_LARSON + 1)
#define SRV_KINDS    (KIND_XMALLOC + 1)

enum row { ROW_PAIR, ROW_BATCH, ROW_BULK, ROW_PIPELINE, ROW_THREADS_PU, ROW_THREADS_OVER,
           ROW_FSHARE, ROW_FSHARE_ALIGNED, ROW_SCRATCH_2, ROW_SCRATCH_8, ROW_SCALE_1,
           ROW_SCALE_2, ROW_SRV_FIRST,
           ROW_COUNT = ROW_SRV_FIRST + MAX_SERVER * SRV_KINDS };

#define SCALE_THREADS 8u         /* the server row of `scaling`: threads, on one CPU and two */

#define MAX_SIZES    8u
#define MAX_REPS     101u
#define FS_SIZE      16u         /* false-sharing object size */
#define MIN_REPS     7u          /* fewer samples than this: development figures */
#define MIN_SAMPLE_MS 200.0      /* shorter samples than this: development figures */
#define SERVER_REPS  3u          /* default samples per figure of the server table */

struct bench_opts {
	unsigned int scenarios;     /* bits of enum bench_scenario */
	unsigned int backends;      /* bits of enum backend */
	unsigned int backends_given;
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int reps;
	double sample_ms;
	uint64_t pairs;             /* --pairs: fixed count (no calibration); --instructions */
	unsigned int threads;       /* oversubscribed thread count of `threads` */
	unsigned int server_threads[MAX_SERVER];
	unsigned int nserver;
	unsigned int server_live[MAX_LIVE];   /* live objects per thread of `server` */
	unsigned int nlive;
	unsigned int shapes;        /* bits of enum srv_shape */
	unsigned int server_reps;   /* samples per figure of the server table */
	unsigned int pus;
	char pin[256];              /* normalised pin list, "" = not pinned */
	const char *json;
	const char *plot;
	const char *targets;        /* --targets FILE: the project's target groups to print */
	int instructions;
	int placement;
	int verbose;
	int quick;
	int sizes_given;
	int threads_given;
	const char *return_curve;   /* --return-curve FILE.png */
	double return_seconds;
	unsigned long return_burst;
	unsigned long return_keep;  /* --return-keep: every n-th object of a burst stays, 0: none */
};

struct sample {
	double ns;                  /* ns per unit */
	double ms;                  /* length of the timed part */
	double units;               /* units it timed (a scenario may round the count up) */
	double cpu_ns;              /* server table: CPU time (user + system) per unit, or -1 */
	double rss_mib;             /* peak RSS of the child (shown for the server table) */
	double rss_base_mib;        /* RSS before the workload */
	double rss_growth_mib;      /* peak minus before */
	double os_warm, os_steady;  /* server, libpool: OS-layer share of allocations, or -1 */
	double shared;              /* false-sharing: share of lines shared, or -1 */
};

/* Median, extremes and quartiles of a set of values. */
struct spread {
	double med, min, max, q1, q3;
};

struct cell {
	struct sample s[MAX_REPS];
	unsigned int n;
	uint64_t count;             /* units per sample (calibrated) */
	unsigned int retries;       /* samples run again because they were too short */
	struct spread ns, cpu, rss, rss_base, rss_growth, os_warm, os_steady, shared;
	char placement[512];        /* first sample's "0:cpus 1:cpus ..." */
};

/* cells[row][size index][backend], allocated by the parent (26 MiB, mostly never touched) */
static struct cell (*cells)[MAX_SIZES][BK_COUNT];
static char skipped[BK_COUNT][300];
static int backend_failed[BK_COUNT];   /* failed rather than unavailable */
static char self_dir[4096];

/* Instruction counts of libpool's pair (callgrind), for the target; < 0: not measured. */
static double insn_pair = -1, insn_loop = -1, insn_net = -1;
static char insn_why[300];

/* The machine, read at the start. */
static struct machine {
	char cpu[256];
	char allowed[256];
	char kernel[160];
	char date[64];
	double load_start[3], load_end[3];
	double load_max;            /* highest 1-minute load average seen between two figures */
	int load_warning;
	int cpu_a, cpu_b;           /* the first two CPUs allowed (cpu_b < 0: one only) */
	double rtt_ns;              /* a cache line's round trip between them, or -1 */
} mach;

/* Rows of the server table: server, larson and xmalloc, with peak RSS and CPU time. */
static int row_is_server(enum row r)
{
	return r >= ROW_SRV_FIRST;
}

/* A server-table row's kind (see enum row) and thread-count index. */
static unsigned int row_kind(enum row r)
{
	return (unsigned int)(r - ROW_SRV_FIRST) % SRV_KINDS;
}

static unsigned int row_tidx(enum row r)
{
	return (unsigned int)(r - ROW_SRV_FIRST) / SRV_KINDS;
}

static enum bench_scenario row_scenario(enum row r)
{
	static const enum bench_scenario map[ROW_SRV_FIRST] = {
		SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_THREADS, SC_FSHARE, SC_FSHARE,
		SC_SCRATCH, SC_SCRATCH, SC_SCALING, SC_SCALING
	};

	if (!row_is_server(r))
		return map[r];
	if (row_kind(r) == KIND_LARSON)
		return SC_LARSON;
	return row_kind(r) == KIND_XMALLOC ? SC_XMALLOC : SC_SERVER;
}

/* A server row's live objects per thread and shape (server rows only). */
static unsigned int row_live(enum row r, const struct bench_opts *o)
{
	return o->server_live[row_kind(r) / SHAPE_COUNT];
}

static enum srv_shape row_shape(enum row r)
{
	return (enum srv_shape)(row_kind(r) % SHAPE_COUNT);
}

/* Rows measured at each --size; the others at one size of their own. */
static int row_sized(enum row r)
{
	return r <= ROW_THREADS_OVER;
}

static unsigned int row_nsizes(enum row r, const struct bench_opts *o)
{
	if (row_scenario(r) == SC_SCRATCH)
		return 2;               /* 8 and 16 bytes */
	return row_sized(r) ? o->nsizes : 1;
}

static size_t row_size(enum row r, const struct bench_opts *o, unsigned int si)
{
	if (row_sized(r))
		return o->sizes[si];
	if (row_scenario(r) == SC_SCRATCH)
		return si ? 16 : 8;
	return row_is_server(r) || row_scenario(r) == SC_SCALING ? 8 : FS_SIZE;
}

static size_t row_align(enum row r)
{
	return r == ROW_FSHARE_ALIGNED ? BENCH_LINE : 0;
}

static unsigned int row_threads(enum row r, const struct bench_opts *o)
{
	if (row_is_server(r))
		return o->server_threads[row_tidx(r)];
	switch (r) {
	case ROW_PIPELINE: return 2;
	case ROW_THREADS_PU: return o->pus;
	case ROW_THREADS_OVER: return o->threads;
	case ROW_FSHARE:
	case ROW_FSHARE_ALIGNED:
	case ROW_SCRATCH_2: return 2;
	case ROW_SCRATCH_8: return 8;
	case ROW_SCALE_1:
	case ROW_SCALE_2: return SCALE_THREADS;
	default: return 1;
	}
}

/* The pin list of a row that has its own (scaling: one CPU, then two), else NULL. */
static const char *row_pin(enum row r, char *buf, size_t len)
{
	if (r == ROW_SCALE_1)
		snprintf(buf, len, "%d", mach.cpu_a);
	else if (r == ROW_SCALE_2)
		snprintf(buf, len, "%d,%d", mach.cpu_a, mach.cpu_b);
	else
		return NULL;
	return buf;
}

static int row_wanted(enum row r, const struct bench_opts *o)
{
	if (!(o->scenarios & (1u << row_scenario(r))))
		return 0;
	if (row_is_server(r)) {
		if (row_tidx(r) >= o->nserver)
			return 0;
		if (row_scenario(r) == SC_XMALLOC)
			return row_threads(r, o) >= 2;   /* a producer and a consumer at least */
		if (row_scenario(r) == SC_SERVER)
			return row_kind(r) / SHAPE_COUNT < o->nlive &&
			       (o->shapes & (1u << row_shape(r)));
		return 1;
	}
	if (r == ROW_THREADS_OVER)
		return o->threads != o->pus;
	if (row_scenario(r) == SC_SCALING)
		return mach.cpu_b >= 0;
	return 1;
}

/* Is any row of scenario sc wanted? */
static int scenario_wanted(enum bench_scenario sc, const struct bench_opts *o)
{
	enum row r;

	for (r = 0; r < ROW_COUNT; r++)
		if (row_scenario(r) == sc && row_wanted(r, o))
			return 1;
	return 0;
}

static int row_runs(enum row r, enum backend b)
{
	return (!row_is_server(r) && row_scenario(r) != SC_SCALING) || b == BK_LIBPOOL ||
	       backends[b].general;
}

/* Samples per figure of row r. */
static unsigned int row_reps(enum row r, const struct bench_opts *o)
{
	return row_is_server(r) || row_scenario(r) == SC_SCALING ? o->server_reps : o->reps;
}

/* "2k" for 2048, else the number. */
static void fmt_live(char *buf, size_t len, unsigned int live)
{
	if (live % 1024 == 0)
		snprintf(buf, len, "%uk", live / 1024);
	else
		snprintf(buf, len, "%u", live);
}

static void row_label(enum row r, const struct bench_opts *o, char *buf, size_t len)
{
	char live[16];

	switch (row_scenario(r)) {
	case SC_SERVER:
		fmt_live(live, sizeof(live), row_live(r, o));
		snprintf(buf, len, "server-%u-%s-%s", row_threads(r, o), live,
		         shape_names[row_shape(r)]);
		return;
	case SC_LARSON:
	case SC_XMALLOC:
		snprintf(buf, len, "%s-%u", bench_scenario_names[row_scenario(r)], row_threads(r, o));
		return;
	default:
		break;
	}
	switch (r) {
	case ROW_PAIR: snprintf(buf, len, "pair"); break;
	case ROW_BATCH: snprintf(buf, len, "batch"); break;
	case ROW_BULK: snprintf(buf, len, "bulk"); break;
	case ROW_PIPELINE: snprintf(buf, len, "pipeline"); break;
	case ROW_FSHARE: snprintf(buf, len, "false-sharing"); break;
	case ROW_FSHARE_ALIGNED: snprintf(buf, len, "false-sharing-a64"); break;
	case ROW_SCRATCH_2:
	case ROW_SCRATCH_8: snprintf(buf, len, "cache-scratch-%u", row_threads(r, o)); break;
	case ROW_SCALE_1: snprintf(buf, len, "server-%u-1cpu", SCALE_THREADS); break;
	case ROW_SCALE_2: snprintf(buf, len, "server-%u-2cpus", SCALE_THREADS); break;
	default: snprintf(buf, len, "threads-%u", row_threads(r, o)); break;
	}
}

/* The unit of a row's figures. */
static const char *row_unit(enum row r)
{
	switch (row_scenario(r)) {
	case SC_PIPELINE: return "ns per object passed";
	case SC_SERVER:
	case SC_LARSON:
	case SC_XMALLOC: return "ns per allocation";
	case SC_FSHARE:
	case SC_SCRATCH: return "ns per write";
	case SC_SCALING: return "ns per allocation";
	default: return "ns per alloc+free pair";
	}
}

/* A starting count for calibration: a few ms on any backend (server: its least count). */
static uint64_t row_start_count(enum row r, const struct bench_opts *o)
{
	switch (row_scenario(r)) {
	case SC_SERVER:
		return (uint64_t)SRV_MIN_ROUNDS * row_threads(r, o) * srv_steps(row_live(r, o));
	case SC_SCALING:
		return (uint64_t)SRV_MIN_ROUNDS * row_threads(r, o) * srv_steps(SRV_LIVE);
	case SC_LARSON:
		return (uint64_t)SRV_MIN_ROUNDS * row_threads(r, o) * LAR_STEPS;
	case SC_XMALLOC:
		return (uint64_t)row_threads(r, o) * 16384;
	case SC_PIPELINE:
		return 16384;
	default:
		return 65536;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Children                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * Run `argv` with LD_PRELOAD set to `preload` (or removed), its stdout read into out and its
 * stderr shown only with -v. Returns the exit status, or -1 if it could not be started.
 */
static int run_child(char *const argv[], const char *preload, int verbose, char *out,
                     size_t out_len)
{
	posix_spawn_file_actions_t fa;
	char **envp;
	size_t n = 0, i, j = 0, got = 0;
	char preload_env[512];
	int pipefd[2], status = 0, rc;
	pid_t pid;
	ssize_t r;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			envp[j++] = environ[i];
	if (preload) {
		snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", preload);
		envp[j++] = preload_env;
	}
	envp[j] = NULL;
	if (pipe(pipefd) < 0) {
		free(envp);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	if (!verbose)
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		snprintf(out, out_len, "error cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	/* keep the tail: the result is the child's last line */
	while ((r = read(pipefd[0], out + got, out_len - 1 - got)) > 0) {
		got += (size_t)r;
		if (got == out_len - 1) {
			memmove(out, out + got / 2, got - got / 2);
			got -= got / 2;
		}
	}
	out[got] = 0;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The last result line of a child's output; *placement gets its placement line, if any. */
static const char *result_line(char *out, const char **placement)
{
	char *line = NULL, *p = out;

	*placement = NULL;
	while (p && *p) {
		if (!strncmp(p, "ok ", 3) || !strncmp(p, "unavailable ", 12) ||
		    !strncmp(p, "error ", 6))
			line = p;
		else if (!strncmp(p, "placement ", 10))
			*placement = p + 10;
		p = strchr(p, '\n');
		if (p)
			*p++ = 0;
	}
	return line ? line : "error the child printed no result (it crashed?)";
}

/* The value of `key=` in a result line, or `def`. */
static double field(const char *line, const char *key, double def)
{
	size_t len = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[len] == '=')
			return strtod(p + len + 1, NULL);
		p += len;
	}
	return def;
}

/* Next to this program (the build tree), else where `make install` puts the helpers. */
static void child_path(enum backend b, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", self_dir, backends[b].program);
	if (access(buf, X_OK) != 0)
		snprintf(buf, len, "%s/%s", POOL_BENCH_HELPER_DIR, backends[b].program);
}

/*
 * One child run of row r at size index si for backend b, over `count` units (calibrate_ms > 0:
 * growing until a run lasts that long). Returns 0 with *s filled, or -1 (and fills skipped[b])
 * when the backend cannot run or failed.
 */
static int measure(const struct bench_opts *o, enum backend b, enum row r, unsigned int si,
                   uint64_t count, double calibrate_ms, struct sample *s, char *placement,
                   size_t placement_len)
{
	char prog[4200], sz[32], cnt[32], threads[16], pin[300], align[32], calib[48], live[32];
	char rowpin[32];
	char lifetime[32], teardown[32];
	char out[8192];
	char *argv[16];
	const char *line, *pl;
	int rc, argc = 0;

	child_path(b, prog, sizeof(prog));
	if (access(prog, X_OK) != 0) {
		snprintf(skipped[b], sizeof(skipped[b]), "%s was not built (%s)", backends[b].program,
		         b == BK_DPDK ? "libdpdk-dev is not installed" : strerror(errno));
		return -1;
	}
	snprintf(sz, sizeof(sz), "%zu", row_size(r, o, si));
	snprintf(cnt, sizeof(cnt), "%llu", (unsigned long long)count);
	snprintf(threads, sizeof(threads), "%u", row_threads(r, o));
	argv[argc++] = prog;
	argv[argc++] = "--child";
	argv[argc++] = (char *)backends[b].name;
	/* scaling is the server, pinned */
	argv[argc++] = (char *)bench_scenario_names[row_scenario(r) == SC_SCALING ? SC_SERVER :
	                                            row_scenario(r)];
	argv[argc++] = sz;
	argv[argc++] = cnt;
	argv[argc++] = threads;
	if (row_pin(r, rowpin, sizeof(rowpin))) {
		snprintf(pin, sizeof(pin), "pin=%s", rowpin);
		argv[argc++] = pin;
	} else if (o->pin[0]) {
		snprintf(pin, sizeof(pin), "pin=%s", o->pin);
		argv[argc++] = pin;
	}
	if (row_align(r)) {
		snprintf(align, sizeof(align), "align=%zu", row_align(r));
		argv[argc++] = align;
	}
	if (row_scenario(r) == SC_SERVER) {
		enum srv_shape sh = row_shape(r);

		snprintf(live, sizeof(live), "live=%u", row_live(r, o));
		snprintf(lifetime, sizeof(lifetime), "lifetime=%s",
		         sh == SHAPE_LONG_BURST || sh == SHAPE_LONG_HANDOVER ? "long" : "short");
		snprintf(teardown, sizeof(teardown), "teardown=%s",
		         sh == SHAPE_SHORT_BURST || sh == SHAPE_LONG_BURST ? "burst" : "handover");
		argv[argc++] = live;
		argv[argc++] = lifetime;
		argv[argc++] = teardown;
	}
	if (calibrate_ms > 0) {
		snprintf(calib, sizeof(calib), "calibrate=%.1f", calibrate_ms);
		argv[argc++] = calib;
	}
	argv[argc] = NULL;
	rc = run_child(argv, backends[b].preload, o->verbose, out, sizeof(out));
	line = result_line(out, &pl);
	if (rc == 0 && !strncmp(line, "ok ", 3)) {
		double units = field(line, "units", 0), os_w = field(line, "os_warm", -1);

		memset(s, 0, sizeof(*s));
		s->ns = field(line, "ns", 0);
		s->ms = field(line, "elapsed_ms", 0);
		s->units = units;
		s->cpu_ns = units > 0 && field(line, "cpu_ms", -1) >= 0 ?
		            field(line, "cpu_ms", 0) * 1e6 / units : -1;
		s->rss_mib = field(line, "rss_kb", 0) / 1024;
		s->rss_base_mib = field(line, "base_kb", 0) / 1024;
		s->rss_growth_mib = s->rss_mib - s->rss_base_mib;
		if (s->rss_growth_mib < 0)
			s->rss_growth_mib = 0;
		s->shared = field(line, "shared", -1);
		s->os_warm = s->os_steady = -1;
		if (os_w >= 0) {
			double aw = field(line, "allocs_warm", 0), aa = field(line, "allocs_all", 0);
			double oa = field(line, "os_all", 0);

			s->os_warm = aw > 0 ? os_w / aw : -1;
			s->os_steady = aa > aw ? (oa - os_w) / (aa - aw) : -1;
		}
		if (pl && placement)
			snprintf(placement, placement_len, "%s", pl);
		if (!units || s->ns <= 0) {
			backend_failed[b] = 1;
			snprintf(skipped[b], sizeof(skipped[b]), "its child reported no work: %.200s",
			         line);
			return -1;
		}
		return 0;
	}
	if (!strncmp(line, "unavailable ", 12)) {
		snprintf(skipped[b], sizeof(skipped[b]), "%.200s (Debian package: %s)", line + 12,
		         backends[b].package);
	} else {
		backend_failed[b] = 1;
		snprintf(skipped[b], sizeof(skipped[b]), "failed (exit %d): %.250s", rc,
		         !strncmp(line, "error ", 6) ? line + 6 : line);
	}
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Statistics                                                                                 */
/* ------------------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Quantile q of sorted v[0..n-1], linear between closest ranks (Hyndman & Fan type 7). */
static double quantile(const double *v, unsigned int n, double q)
{
	double pos = q * (n - 1);
	unsigned int lo = (unsigned int)pos;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

/* The spread of the values at byte offset `off` of each sample (values < 0 are left out). */
static struct spread spread_of(const struct cell *c, size_t off)
{
	double v[MAX_REPS];
	struct spread sp = { -1, -1, -1, -1, -1 };
	unsigned int i, n = 0;

	for (i = 0; i < c->n; i++) {
		double x = *(const double *)((const char *)&c->s[i] + off);

		if (x >= 0)
			v[n++] = x;
	}
	if (!n)
		return sp;
	qsort(v, n, sizeof(v[0]), cmp_double);
	sp.med = quantile(v, n, 0.5);
	sp.q1 = quantile(v, n, 0.25);
	sp.q3 = quantile(v, n, 0.75);
	sp.min = v[0];
	sp.max = v[n - 1];
	return sp;
}

static void cell_summarise(struct cell *c)
{
	c->ns = spread_of(c, offsetof(struct sample, ns));
	c->cpu = spread_of(c, offsetof(struct sample, cpu_ns));
	c->rss = spread_of(c, offsetof(struct sample, rss_mib));
	c->rss_base = spread_of(c, offsetof(struct sample, rss_base_mib));
	c->rss_growth = spread_of(c, offsetof(struct sample, rss_growth_mib));
	c->os_warm = spread_of(c, offsetof(struct sample, os_warm));
	c->os_steady = spread_of(c, offsetof(struct sample, os_steady));
	c->shared = spread_of(c, offsetof(struct sample, shared));
}

/* ------------------------------------------------------------------------------------------ */
/* Running everything                                                                         */
/* ------------------------------------------------------------------------------------------ */

static void progress(const struct bench_opts *o, enum row r, unsigned int si, const char *what,
                     enum backend b)
{
	char label[48];

	if (!isatty(STDERR_FILENO))
		return;
	row_label(r, o, label, sizeof(label));
	fprintf(stderr, "\r  %-32s %6zu  %-12s %-9s", label, row_size(r, o, si), what,
	        backends[b].name);
}

/* Calibrate a cell: the units that make one sample last about 1.3 x --sample-ms. */
static int calibrate(const struct bench_opts *o, enum backend b, enum row r, unsigned int si)
{
	struct cell *c = &cells[r][si][b];
	struct sample s;

	if (o->pairs) {
		c->count = o->pairs;
		return 0;
	}
	if (measure(o, b, r, si, row_start_count(r, o), o->sample_ms / 3, &s, NULL, 0) < 0)
		return -1;
	c->count = (uint64_t)(o->sample_ms * 1.3e6 / s.ns);   /* s.ns is per unit really timed */
	if (c->count < 1)
		c->count = 1;
	return 0;
}

/*
 * One sample of a cell; a sample shorter than --sample-ms is run again with more units, up to
 * SAMPLE_TRIES times (1.5^20 = 3300 times the count: only a broken child stays short).
 */
#define SAMPLE_TRIES 20u

static int sample(const struct bench_opts *o, enum backend b, enum row r, unsigned int si)
{
	struct cell *c = &cells[r][si][b];
	struct sample s;
	unsigned int tries;
	double grow;

	for (tries = 0;; tries++) {
		if (measure(o, b, r, si, c->count, 0, &s, c->n ? NULL : c->placement,
		            sizeof(c->placement)) < 0)
			return -1;
		if (o->pairs || s.ms >= o->sample_ms || tries == SAMPLE_TRIES)
			break;
		/*
		 * From what the child really timed (server runs whole rounds, at least two), and at
		 * least 1.5x more each time: a run's time is not always proportional to its count
		 * (a pipeline's threads may wait on each other), so the count must still grow.
		 */
		grow = 1.3 * o->sample_ms / (s.ms > 0.01 ? s.ms : 0.01);
		c->count = (uint64_t)((s.units > (double)c->count ? s.units : (double)c->count) *
		                      (grow > 1.5 ? grow : 1.5)) + 1;
		c->retries++;
	}
	c->s[c->n++] = s;
	return 0;
}

/* The 1-, 5- and 15-minute load averages (-1 where unknown). */
static void read_loadavg(double load[3])
{
	FILE *f = fopen("/proc/loadavg", "r");

	load[0] = load[1] = load[2] = -1;
	if (!f)
		return;
	if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
		load[0] = load[1] = load[2] = -1;
	fclose(f);
}

/* Between two figures: keep the highest load average, warn once it passes 0.5 per PU. */
static void note_load(const struct bench_opts *o)
{
	double load[3];

	read_loadavg(load);
	if (load[0] > mach.load_max)
		mach.load_max = load[0];
	if (load[0] > 0.5 * o->pus)
		mach.load_warning = 1;
}

static void run_all(const struct bench_opts *o)
{
	enum backend order[BK_COUNT];
	unsigned int nb = 0, rep, i, k, si;
	enum row r;

	for (i = 0; i < BK_COUNT; i++)
		if (o->backends & (1u << i))
			order[nb++] = (enum backend)i;
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		for (si = 0; si < row_nsizes(r, o); si++) {
			for (k = 0; k < nb; k++) {
				enum backend b = order[k];

				if (skipped[b][0] || !row_runs(r, b))
					continue;
				progress(o, r, si, "calibrate", b);
				calibrate(o, b, r, si);
			}
			for (rep = 0; rep < row_reps(r, o); rep++) {
				for (k = 0; k < nb; k++) {
					/* rotate by rep, reversed every other round */
					unsigned int idx = (k + rep) % nb;
					enum backend b = order[rep % 2 ? nb - 1 - idx : idx];
					char what[32];

					if (skipped[b][0] || !row_runs(r, b))
						continue;
					snprintf(what, sizeof(what), "sample %u/%u", rep + 1,
					         row_reps(r, o));
					progress(o, r, si, what, b);
					sample(o, b, r, si);
				}
			}
			for (k = 0; k < nb; k++)
				cell_summarise(&cells[r][si][order[k]]);
			note_load(o);
		}
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r%78s\r", "");
}

/* ------------------------------------------------------------------------------------------ */
/* The machine                                                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * The round trip of a cache line between two CPUs: two threads, one on each, hand a counter on
 * a line of its own back and forth (each waits for the other's increment), for RTT_MS. What a
 * transfer between cores costs in the period a run saw: on a virtual machine whose vCPUs move,
 * it varies from run to run (issue 27 saw the cross-thread rows slow down for every allocator
 * in some periods), and on a 64-core EPYC it differs between two cores of a complex and two
 * complexes.
 */
#define RTT_MS 100.0

struct rtt_arg {
	_Alignas(64) atomic_ulong ball;
	_Alignas(64) int cpu[2];
	atomic_int stop;
	unsigned long trips;
};

static void *rtt_side(void *p)
{
	struct rtt_arg *a = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu[1], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (;;) {
		unsigned long v = atomic_load_explicit(&a->ball, memory_order_acquire);

		if (atomic_load_explicit(&a->stop, memory_order_relaxed))
			return NULL;
		if (v & 1)
			atomic_store_explicit(&a->ball, v + 1, memory_order_release);
	}
}

static void measure_rtt(void)
{
	struct rtt_arg *a = bench_line_alloc(sizeof(*a));
	cpu_set_t set, old;
	pthread_t t;
	double start, now;
	unsigned long v = 0;

	if (!a || mach.cpu_b < 0 || sched_getaffinity(0, sizeof(old), &old) != 0) {
		free(a);
		return;
	}
	memset(a, 0, sizeof(*a));
	a->cpu[0] = mach.cpu_a;
	a->cpu[1] = mach.cpu_b;
	CPU_ZERO(&set);
	CPU_SET(a->cpu[0], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0 ||
	    pthread_create(&t, NULL, rtt_side, a) != 0) {
		sched_setaffinity(0, sizeof(old), &old);
		free(a);
		return;
	}
	start = now = bench_now_ns();
	while (now - start < RTT_MS * 1e6) {
		unsigned int i;

		for (i = 0; i < 1000; i++) {
			atomic_store_explicit(&a->ball, v + 1, memory_order_release);
			while (atomic_load_explicit(&a->ball, memory_order_acquire) != v + 2)
				;
			v += 2;
		}
		a->trips += 1000;
		now = bench_now_ns();
	}
	atomic_store(&a->stop, 1);
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	mach.rtt_ns = (now - start) / (double)a->trips;
	free(a);
}

static void read_machine(const struct bench_opts *o)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	struct utsname un;
	cpu_set_t set;
	time_t now = time(NULL);
	struct tm tm;

	snprintf(mach.cpu, sizeof(mach.cpu), "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *p = strchr(line, ':');

			if (p) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = 0;
				snprintf(mach.cpu, sizeof(mach.cpu), "%s", p);
			}
			break;
		}
	}
	if (f)
		fclose(f);
	snprintf(mach.allowed, sizeof(mach.allowed), "?");
	mach.cpu_a = mach.cpu_b = -1;
	mach.rtt_ns = -1;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int c;

		bench_format_cpuset(&set, mach.allowed, sizeof(mach.allowed));
		for (c = 0; c < CPU_SETSIZE && mach.cpu_b < 0; c++) {
			if (!CPU_ISSET(c, &set))
				continue;
			if (mach.cpu_a < 0)
				mach.cpu_a = c;
			else
				mach.cpu_b = c;
		}
	}
	snprintf(mach.kernel, sizeof(mach.kernel), "?");
	if (uname(&un) == 0)
		snprintf(mach.kernel, sizeof(mach.kernel), "%s %s", un.sysname, un.release);
	gmtime_r(&now, &tm);
	strftime(mach.date, sizeof(mach.date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	read_loadavg(mach.load_start);
	mach.load_max = mach.load_start[0];
	mach.load_warning = mach.load_start[0] > 0.5 * o->pus;
}

/* ------------------------------------------------------------------------------------------ */
/* Output: table                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* A figure with 3 significant digits or so. */
static void fmt_num(char *buf, size_t len, double v)
{
	if (v >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (v >= 10)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

/* "median [min-max]" */
static void fmt_spread(char *buf, size_t len, const struct spread *sp)
{
	char a[24], b[24], c[24];

	if (sp->med < 0) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_num(a, sizeof(a), sp->med);
	fmt_num(b, sizeof(b), sp->min);
	fmt_num(c, sizeof(c), sp->max);
	snprintf(buf, len, "%s [%s-%s]", a, b, c);
}

static void print_header(const struct bench_opts *o)
{
	printf("pool-bench, libpool %s, on %s (%s), %u PUs, CPUs allowed %s; %s\n", pool_version(),
	       mach.cpu, mach.kernel, o->pus, mach.allowed, mach.date);
	printf("load average at start %.2f %.2f %.2f, at end %.2f %.2f %.2f, at most %.2f in "
	       "between; threads ", mach.load_start[0], mach.load_start[1], mach.load_start[2],
	       mach.load_end[0], mach.load_end[1], mach.load_end[2], mach.load_max);
	if (o->pin[0])
		printf("pinned: worker i on CPU i of %s\n", o->pin);
	else
		printf("not pinned (every thread may run on every allowed CPU)\n");
	if (o->pairs)
		printf("%u samples per figure (server table: %u), each %llu units (--pairs: no "
		       "calibration)\n", o->reps, o->server_reps, (unsigned long long)o->pairs);
	else
		printf("%u samples per figure (server table: %u), each at least %.0f ms of timed "
		       "work; median [min-max] of the samples\n", o->reps, o->server_reps,
		       o->sample_ms);
	if (mach.load_warning)
		printf("WARNING: the load average (up to %.2f) was above 0.5 per PU (%u PUs): other "
		       "processes took CPU time from the measured threads; these figures are noisy\n",
		       mach.load_max, o->pus);
	if (o->quick || o->reps < MIN_REPS || (!o->pairs && o->sample_ms < MIN_SAMPLE_MS) ||
	    o->pairs || o->server_reps < SERVER_REPS)
		printf("NOTE: fewer than %u samples or samples shorter than %.0f ms: figures for "
		       "development, not for publication\n", MIN_REPS, MIN_SAMPLE_MS);
}

static void print_table(const struct bench_opts *o)
{
	unsigned int si, b;
	char label[48], txt[128];
	enum row r;
	int any = 0;

	for (r = 0; r < ROW_COUNT && !any; r++)
		any = row_wanted(r, o) && !row_is_server(r);
	if (any) {
		printf("\n%-18s %6s", "scenario", "size");
		for (b = 0; b < BK_COUNT; b++)
			if (o->backends & (1u << b))
				printf(" %22s", backends[b].name);
		printf("\n");
	}
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o) || row_is_server(r))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < row_nsizes(r, o); si++) {
			if (row_scenario(r) == SC_SCALING)
				printf("%-18s %6s", label, "-");
			else
				printf("%-18s %6zu", label, row_size(r, o, si));
			for (b = 0; b < BK_COUNT; b++) {
				if (!(o->backends & (1u << b)))
					continue;
				fmt_spread(txt, sizeof(txt), &cells[r][si][b].ns);
				printf(" %22s", cells[r][si][b].n ? txt : "-");
			}
			printf("\n");
		}
	}
	if (any)
		printf("units: ns per alloc+free pair; pipeline: ns per object passed from one thread "
		       "to the other;\nfalse-sharing: ns per write (2 threads, 16-byte objects; -a64: "
		       "created with 64-byte alignment)\n");
	if (row_wanted(ROW_FSHARE, o)) {
		printf("false-sharing, share of a thread's objects on a cache line the other thread "
		       "writes:");
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *u = &cells[ROW_FSHARE][0][b];
			const struct cell *a = &cells[ROW_FSHARE_ALIGNED][0][b];

			if (!u->n)
				continue;
			printf(" %s %.0f%%", backends[b].name, 100 * u->shared.med);
			if (a->n)
				printf("/%.0f%%", 100 * a->shared.med);
		}
		printf(" (unaligned/a64)\n");
	}
	if (row_wanted(ROW_SCRATCH_2, o) || row_wanted(ROW_SCRATCH_8, o))
		printf("cache-scratch: ns per write (Hoard's shape: each worker frees the object worker "
		       "0 made for it, then allocates, writes %u times and frees its own, again and "
		       "again)\n", SCRATCH_WRITES);
	if (row_wanted(ROW_SCALE_1, o)) {
		printf("server-%u-1cpu, -2cpus: the server row (%u threads, 2k live, short-burst) "
		       "pinned to CPU %d, then to CPUs %d,%d; a cache line's round trip between them: ",
		       SCALE_THREADS, SCALE_THREADS, mach.cpu_a, mach.cpu_a, mach.cpu_b);
		if (mach.rtt_ns > 0)
			printf("%.0f ns\n", mach.rtt_ns);
		else
			printf("not measured\n");
		printf("scaling, time on one CPU / time on two:");
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *one = &cells[ROW_SCALE_1][0][b], *two = &cells[ROW_SCALE_2][0][b];

			if (one->n && two->n && two->ns.med > 0)
				printf(" %s %.2fx", backends[b].name, one->ns.med / two->ns.med);
		}
		printf("\n");
	}
}

/* The fastest general malloc of a row (by median), or NULL. */
static const struct cell *fastest_malloc(enum row r, unsigned int si, enum backend *which)
{
	const struct cell *best = NULL;
	unsigned int b;

	for (b = 0; b < BK_COUNT; b++) {
		const struct cell *c = &cells[r][si][b];

		if (backends[b].general && c->n && (!best || c->ns.med < best->ns.med)) {
			best = c;
			*which = (enum backend)b;
		}
	}
	return best;
}

/* The general malloc with the smallest median peak RSS in a server row, or NULL. */
static const struct cell *leanest_malloc(enum row r, enum backend *which)
{
	const struct cell *best = NULL;
	unsigned int b;

	for (b = 0; b < BK_COUNT; b++) {
		const struct cell *c = &cells[r][0][b];

		if (backends[b].general && c->n && (!best || c->rss.med < best->rss.med)) {
			best = c;
			*which = (enum backend)b;
		}
	}
	return best;
}

static void fmt_share(char *buf, size_t len, const struct spread *sp)
{
	if (sp->med < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f%% [%.2f-%.2f]", 100 * sp->med, 100 * sp->min,
		         100 * sp->max);
}

/* Is any row of the server table wanted? */
static int server_table_wanted(const struct bench_opts *o)
{
	return scenario_wanted(SC_SERVER, o) || scenario_wanted(SC_LARSON, o) ||
	       scenario_wanted(SC_XMALLOC, o);
}

static void print_server(const struct bench_opts *o)
{
	enum row r;
	unsigned int b;

	if (!server_table_wanted(o))
		return;
	printf("\nserver table: ns per allocation (each allocation is freed later, by its thread or "
	       "another), wall time and CPU time\n");
	if (scenario_wanted(SC_SERVER, o))
		printf("server-T-L-SHAPE: mimalloc test-stress's shape on %u pools of 8 B..16 KiB "
		       "(pool_zalloc/calloc), T threads, L live\nobjects per thread with random "
		       "lifetimes, 1/4 of them freed by another thread; short: threads created and\n"
		       "joined in rounds of max(%u, 2L) allocations per thread; long: one round of "
		       "threads; burst: each thread frees\nits live set before it exits; handover: it "
		       "leaves it to the next thread of its lineage\n", SRV_CLASSES, SRV_STEPS);
	if (scenario_wanted(SC_LARSON, o))
		printf("larson-T: Larson & Krishnan's server simulation: T lineages of %u objects of "
		       "%u-%u B (6 pools); each thread\nreplaces %u random objects, then hands the "
		       "array to the successor it starts, and exits\n", LAR_OBJECTS, LAR_MIN_SIZE,
		       LAR_MAX_SIZE, LAR_STEPS);
	if (scenario_wanted(SC_XMALLOC, o))
		printf("xmalloc-T: xmalloc-test's shape: (T+1)/2 producer threads allocate %u-%u B "
		       "objects in batches of %u, T/2 consumers\nfree them\n", LAR_MIN_SIZE,
		       LAR_MAX_SIZE, XM_BATCH);
	printf("%-32s %-9s %21s %6s %8s %21s %6s %8s %20s %20s\n", "row", "backend",
	       "ns per allocation", "x best", "CPU ns", "peak RSS MiB", "x lean", "growth",
	       "OS share, warm-up", "OS share, steady");
	for (r = ROW_SRV_FIRST; r < ROW_COUNT; r++) {
		enum backend fw = BK_GLIBC, lw = BK_GLIBC;
		const struct cell *f, *l;
		char label[48];

		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		f = fastest_malloc(r, 0, &fw);
		l = leanest_malloc(r, &lw);
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *c = &cells[r][0][b];
			char t[128], rss[128], cpu[24], gr[24], ow[64], os[64], xf[16] = "-",
			     xl[16] = "-";

			if (!(o->backends & (1u << b)) || !row_runs(r, (enum backend)b))
				continue;
			if (!c->n) {
				printf("%-32s %-9s %21s\n", label, backends[b].name, "-");
				continue;
			}
			fmt_spread(t, sizeof(t), &c->ns);
			fmt_spread(rss, sizeof(rss), &c->rss);
			fmt_num(cpu, sizeof(cpu), c->cpu.med);
			fmt_num(gr, sizeof(gr), c->rss_growth.med);
			fmt_share(ow, sizeof(ow), &c->os_warm);
			fmt_share(os, sizeof(os), &c->os_steady);
			if (f)
				snprintf(xf, sizeof(xf), "%.2fx", c->ns.med / f->ns.med);
			if (l)
				snprintf(xl, sizeof(xl), "%.2fx", c->rss.med / l->rss.med);
			printf("%-32s %-9s %21s %6s %8s %21s %6s %8s %20s %20s\n", label,
			       backends[b].name, t, xf, cpu, rss, xl, gr, ow, os);
		}
	}
	printf("x best: to the fastest general malloc; CPU ns: user+system time of the child per "
	       "allocation (median; above the\nwall time when threads ran in parallel); x lean: "
	       "to the smallest peak RSS of a general malloc; growth: peak\nminus the RSS before "
	       "the workload, MiB (median); OS share: libpool's allocations that reached its OS\n"
	       "layer (pool_stats.os_allocs), in the first round and in the others (server)\n");
}

static void print_skipped(const struct bench_opts *o)
{
	unsigned int b;

	for (b = 0; b < BK_COUNT; b++)
		if ((o->backends & (1u << b)) && skipped[b][0])
			printf("%s %s: %s\n", backend_failed[b] ? "FAILED" : "skipped", backends[b].name,
			       skipped[b]);
}

static void print_placement(const struct bench_opts *o)
{
	unsigned int b;
	char label[48];
	enum row r;

	printf("\nplacement: Cpus_allowed_list of each worker thread, read by the thread from "
	       "/proc/thread-self/status\n");
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (b = 0; b < BK_COUNT; b++)
			if (cells[r][0][b].n)
				printf("  %-18s %-9s %s\n", label, backends[b].name,
				       cells[r][0][b].placement);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Targets                                                                                    */
/* ------------------------------------------------------------------------------------------ */

struct target {
	char name[80];              /* short, stable: "pair 64 B vs fastest malloc" */
	char text[300];             /* what was compared */
	const char *source;         /* its group: "shared-tier", "large-live-sets", "earlier" */
	double ratio, lo, hi;       /* measured (medians) and the range the samples allow */
	double limit;
	int at_least;               /* 1: ratio must be >= limit, 0: <= limit */
	int met;
	enum { T_RATIO, T_COUNT, T_SHARE } kind;   /* x-fold, a plain count, a fraction */
};

#define MAX_TARGETS 384u

static unsigned int ntargets;
static struct target targets[MAX_TARGETS];

static struct target *add_target(const char *source, double limit, int at_least)
{
	struct target *t;

	if (ntargets == MAX_TARGETS)
		return NULL;
	t = &targets[ntargets++];
	memset(t, 0, sizeof(*t));
	t->source = source;
	t->limit = limit;
	t->at_least = at_least;
	t->lo = t->hi = -1;
	return t;
}

/* Target "a / b <= limit" (or >=) between two cells' ns spreads. */
static void ratio_target(const char *source, const struct spread *a, const struct spread *b,
                         double limit, int at_least, const char *name, const char *text)
{
	struct target *t;

	if (a->med <= 0 || b->med <= 0 || !(t = add_target(source, limit, at_least)))
		return;
	t->ratio = a->med / b->med;
	t->lo = a->min / b->max;
	t->hi = a->max / b->min;
	t->met = at_least ? t->ratio >= limit : t->ratio <= limit;
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->text, sizeof(t->text), "%s", text);
}

/*
 * The targets that compare two figures of the same size: libpool's figure of row `row` with
 * the figure of backend `other` (BK_COUNT: the fastest general malloc) of row `other_row`.
 * A throughput target (at_least) compares other/libpool instead.
 */
static const struct size_target {
	const char *source;
	enum row row, other_row;
	enum backend other;
	double limit;
	int at_least;
	const char *what;           /* name after "<row> <size> B" */
	size_t size;                /* the one size it holds for, 0: every size */
} size_targets[] = {
	{ "shared-tier", ROW_PAIR, ROW_PAIR, BK_COUNT, 0.45, 0, "<= 0.45x fastest malloc", 0 },
	{ "shared-tier", ROW_PIPELINE, ROW_PIPELINE, BK_DPDK, 1.0, 0, "<= 1.0x DPDK", 0 },
	{ "shared-tier", ROW_BULK, ROW_BULK, BK_DPDK, 1.0, 0, "<= 1.0x DPDK", 0 },
	/*
	 * issue 20: no regression. pipeline as measured after issue 12 (0.36x and 0.56x); pair no
	 * slower against the fastest malloc than the larger ratio of the two `make bench` runs of
	 * the code before issue 20 (3de480f: 0.56x, 0.56x, 0.40x; 2cdaeac: 0.58x, 0.53x, 0.36x).
	 */
	{ "large-live-sets", ROW_PIPELINE, ROW_PIPELINE, BK_COUNT, 0.6, 0, "<= 0.6x fastest malloc", 64 },
	{ "large-live-sets", ROW_PIPELINE, ROW_PIPELINE, BK_COUNT, 0.6, 0, "<= 0.6x fastest malloc", 192 },
	{ "large-live-sets", ROW_PAIR, ROW_PAIR, BK_COUNT, 0.58, 0, "<= 0.58x fastest malloc (as before)",
	  64 },
	{ "large-live-sets", ROW_PAIR, ROW_PAIR, BK_COUNT, 0.56, 0, "<= 0.56x fastest malloc (as before)",
	  192 },
	{ "large-live-sets", ROW_PAIR, ROW_PAIR, BK_COUNT, 0.40, 0, "<= 0.40x fastest malloc (as before)",
	  16384 },
	{ "earlier", ROW_PAIR, ROW_PAIR, BK_DPDK, 1.0, 0, "<= 1.0x DPDK", 0 },
	{ "earlier", ROW_BATCH, ROW_BATCH, BK_COUNT, 0.5, 0, "<= 0.5x fastest malloc", 0 },
	{ "earlier", ROW_PIPELINE, ROW_PIPELINE, BK_JEMALLOC, 1.0, 0, "<= 1.0x jemalloc", 0 },
	{ "earlier", ROW_THREADS_PU, ROW_BATCH, BK_LIBPOOL, 1.8, 1,
	  ">= 1.8x one thread's throughput", 0 },
};

static void eval_size_target(const struct bench_opts *o, const struct size_target *st,
                             unsigned int si)
{
	const struct cell *lp = &cells[st->row][si][BK_LIBPOOL], *x;
	enum backend w = st->other;
	char label[48], name[80], text[300];

	if (st->other == BK_COUNT)
		x = fastest_malloc(st->other_row, si, &w);
	else
		x = &cells[st->other_row][si][st->other];
	if (!lp->n || !x || !x->n || (st->at_least && o->pus < 2) ||
	    (st->size && st->size != o->sizes[si]))
		return;
	row_label(st->row, o, label, sizeof(label));
	snprintf(name, sizeof(name), "%s%s %zu B %s", label,
	         st->row == ROW_BULK ? "-32" : "", o->sizes[si], st->what);
	if (st->at_least) {
		snprintf(text, sizeof(text), "%s %.3g ns on 1 thread, %.3g ns on %u", backends[w].name,
		         x->ns.med, lp->ns.med, row_threads(st->row, o));
		ratio_target(st->source, &x->ns, &lp->ns, st->limit, 1, name, text);
	} else {
		snprintf(text, sizeof(text), "libpool %.3g ns, %s %.3g ns (%s)", lp->ns.med,
		         backends[w].name, x->ns.med, row_unit(st->row));
		ratio_target(st->source, &lp->ns, &x->ns, st->limit, 0, name, text);
	}
}

/* The size targets of one source, at every size. */
static void eval_size_targets(const struct bench_opts *o, const char *source)
{
	unsigned int si, i;

	for (i = 0; i < sizeof(size_targets) / sizeof(size_targets[0]); i++) {
		if (strcmp(size_targets[i].source, source))
			continue;
		for (si = 0; si < o->nsizes; si++)
			eval_size_target(o, &size_targets[i], si);
	}
}

/* An instruction-count target on libpool's 64-byte pair, net of the loop. */
static void insn_target(const char *source, double limit)
{
	struct target *t;

	if (insn_pair < 0 || !(t = add_target(source, limit, 0)))
		return;
	t->kind = T_COUNT;
	t->ratio = t->lo = t->hi = insn_net;
	t->met = t->ratio <= limit;
	snprintf(t->name, sizeof(t->name), "pair 64 B <= %.0f instructions net", limit);
	snprintf(t->text, sizeof(t->text), "callgrind: %.2f per pair, %.2f of them the loop's own",
	         insn_pair, insn_loop);
}

/*
 * The server table (issue 20): every row at most 1.0x the time of the fastest general malloc
 * and 1.3x the peak RSS of the leanest; the OS-layer share of issue 12 on the rows of the
 * shape it was set on (2048 live objects, short-lived threads, teardown burst).
 */
static void eval_server_targets(const struct bench_opts *o, int os_share)
{
	char label[48], name[80], text[300];
	enum row r;

	for (r = ROW_SRV_FIRST; r < ROW_COUNT; r++) {
		const struct cell *lp = &cells[r][0][BK_LIBPOOL], *f, *l;
		enum backend fw = BK_GLIBC, lw = BK_GLIBC;
		struct target *t;

		if (!row_wanted(r, o) || !lp->n)
			continue;
		row_label(r, o, label, sizeof(label));
		if (os_share) {
			if (row_scenario(r) != SC_SERVER || row_live(r, o) != SRV_LIVE ||
			    row_shape(r) != SHAPE_SHORT_BURST || lp->os_steady.med < 0 ||
			    !(t = add_target("shared-tier", 0.01, 0)))
				continue;
			t->kind = T_SHARE;
			t->ratio = lp->os_steady.med;
			t->lo = lp->os_steady.min;
			t->hi = lp->os_steady.max;
			t->met = t->ratio <= 0.01;
			snprintf(t->name, sizeof(t->name), "%s OS-layer share, steady <= 1%%", label);
			snprintf(t->text, sizeof(t->text), "%.2f%% of allocations after the warm-up round "
			         "(%.2f%% in it)", 100 * lp->os_steady.med, 100 * lp->os_warm.med);
			continue;
		}
		f = fastest_malloc(r, 0, &fw);
		l = leanest_malloc(r, &lw);
		if (f) {
			snprintf(name, sizeof(name), "%s <= 1.0x fastest malloc", label);
			snprintf(text, sizeof(text), "libpool %.1f ns, %s %.1f ns per allocation; CPU "
			         "%.1f ns, %s %.1f ns", lp->ns.med, backends[fw].name, f->ns.med,
			         lp->cpu.med, backends[fw].name, f->cpu.med);
			ratio_target("large-live-sets", &lp->ns, &f->ns, 1.0, 0, name, text);
		}
		if (l) {
			snprintf(name, sizeof(name), "%s peak RSS <= 1.3x leanest malloc", label);
			snprintf(text, sizeof(text), "libpool %.1f MiB, %s %.1f MiB", lp->rss.med,
			         backends[lw].name, l->rss.med);
			ratio_target("large-live-sets", &lp->rss, &l->rss, 1.3, 0, name, text);
		}
	}
}

/*
 * Issue 27: the false-sharing row and the cache-scratch shape at most 1.5x the best malloc;
 * scaling from one CPU to two at least mimalloc's; every server, larson and xmalloc row at most
 * 0.9x the fastest malloc, peak RSS at most 1.1x the leanest.
 */
static void eval_placement_targets(const struct bench_opts *o)
{
	static const enum row rows[] = { ROW_FSHARE, ROW_SCRATCH_2, ROW_SCRATCH_8 };
	char label[48], name[80], text[300];
	unsigned int i, si;
	enum row r;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r = rows[i];
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < row_nsizes(r, o); si++) {
			const struct cell *lp = &cells[r][si][BK_LIBPOOL], *f;
			enum backend fw = BK_GLIBC;

			f = fastest_malloc(r, si, &fw);
			if (!lp->n || !f)
				continue;
			snprintf(name, sizeof(name), "%s %zu B <= 1.5x fastest malloc", label,
			         row_size(r, o, si));
			snprintf(text, sizeof(text), "libpool %.3g ns, %s %.3g ns per write", lp->ns.med,
			         backends[fw].name, f->ns.med);
			ratio_target("placement", &lp->ns, &f->ns, 1.5, 0, name, text);
		}
	}
	if (row_wanted(ROW_SCALE_1, o)) {
		const struct cell *l1 = &cells[ROW_SCALE_1][0][BK_LIBPOOL];
		const struct cell *l2 = &cells[ROW_SCALE_2][0][BK_LIBPOOL];
		const struct cell *m1 = &cells[ROW_SCALE_1][0][BK_MIMALLOC];
		const struct cell *m2 = &cells[ROW_SCALE_2][0][BK_MIMALLOC];
		struct target *t;

		if (l1->n && l2->n && m1->n && m2->n && (t = add_target("placement", 0, 1))) {
			double lp = l1->ns.med / l2->ns.med, mi = m1->ns.med / m2->ns.med;

			t->ratio = lp / mi;
			t->lo = (l1->ns.min / l2->ns.max) / (m1->ns.max / m2->ns.min);
			t->hi = (l1->ns.max / l2->ns.min) / (m1->ns.min / m2->ns.max);
			t->limit = 1.0;
			t->met = t->ratio >= 1.0;
			snprintf(t->name, sizeof(t->name), "server-%u scaling 1->2 CPUs >= mimalloc's",
			         SCALE_THREADS);
			snprintf(t->text, sizeof(t->text), "libpool %.2fx, mimalloc %.2fx; line round "
			         "trip %.0f ns", lp, mi, mach.rtt_ns);
		}
	}
	for (r = ROW_SRV_FIRST; r < ROW_COUNT; r++) {
		const struct cell *lp = &cells[r][0][BK_LIBPOOL], *f, *l;
		enum backend fw = BK_GLIBC, lw = BK_GLIBC;

		if (!row_wanted(r, o) || !lp->n)
			continue;
		row_label(r, o, label, sizeof(label));
		if ((f = fastest_malloc(r, 0, &fw)) != NULL) {
			snprintf(name, sizeof(name), "%s <= 0.9x fastest malloc", label);
			snprintf(text, sizeof(text), "libpool %.1f ns, %s %.1f ns per allocation",
			         lp->ns.med, backends[fw].name, f->ns.med);
			ratio_target("placement", &lp->ns, &f->ns, 0.9, 0, name, text);
		}
		if ((l = leanest_malloc(r, &lw)) != NULL) {
			snprintf(name, sizeof(name), "%s peak RSS <= 1.1x leanest malloc", label);
			snprintf(text, sizeof(text), "libpool %.1f MiB, %s %.1f MiB", lp->rss.med,
			         backends[lw].name, l->rss.med);
			ratio_target("placement", &lp->rss, &l->rss, 1.1, 0, name, text);
		}
	}
}

static void eval_targets(const struct bench_opts *o)
{
	ntargets = 0;
	eval_size_targets(o, "shared-tier");
	insn_target("shared-tier", 20);
	eval_server_targets(o, 1);
	eval_size_targets(o, "large-live-sets");
	insn_target("large-live-sets", 19);
	eval_server_targets(o, 0);
	eval_placement_targets(o);
	insn_target("placement", 16);
	/* targets set before issue 12, kept while they say something */
	eval_size_targets(o, "earlier");
}

/*
 * The targets are the project's goals for the library, not figures of the machine: pool-bench
 * prints them only with --targets FILE, which `make bench` passes (mk/bench-targets). Each line
 * of FILE names a group of targets and its heading ("<group> <heading>"; '#' starts a comment),
 * in the order they are printed; the groups it leaves out are not printed.
 */
#define MAX_TARGET_GROUPS 16u

static struct {
	char group[32];
	char heading[160];
} target_groups[MAX_TARGET_GROUPS];
static unsigned int ntarget_groups;

/* Read FILE (--targets); exit 2 when it cannot be read or a line is not "<group> <heading>". */
static void read_target_groups(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[256];
	unsigned int n = 0;

	if (!f) {
		tool_error("--targets: cannot read '%s': %s", file, strerror(errno));
		exit(TOOL_EXIT_USAGE);
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t"), *h;
		size_t len;

		n++;
		p[strcspn(p, "#\n")] = 0;
		if (!*p)
			continue;
		len = strcspn(p, " \t");
		h = p + len + strspn(p + len, " \t");
		if (!*h || len >= sizeof(target_groups[0].group) ||
		    ntarget_groups == MAX_TARGET_GROUPS) {
			tool_error("--targets: %s:%u: expected '<group> <heading>' (at most %u groups)",
			           file, n, MAX_TARGET_GROUPS);
			exit(TOOL_EXIT_USAGE);
		}
		p[len] = 0;
		snprintf(target_groups[ntarget_groups].group, sizeof(target_groups[0].group), "%s", p);
		snprintf(target_groups[ntarget_groups].heading, sizeof(target_groups[0].heading), "%s",
		         h);
		h = target_groups[ntarget_groups].heading;
		h[strcspn(h, "\r")] = 0;
		ntarget_groups++;
	}
	fclose(f);
}

/* The heading of a target group, or NULL when --targets did not ask for it. */
static const char *target_heading(const char *group)
{
	unsigned int i;

	for (i = 0; i < ntarget_groups; i++)
		if (!strcmp(target_groups[i].group, group))
			return target_groups[i].heading;
	return NULL;
}

static void print_targets(void)
{
	unsigned int g, i;

	for (g = 0; g < ntarget_groups; g++) {
		int first = 1;

		for (i = 0; i < ntargets; i++) {
			const struct target *t = &targets[i];
			int straddle = t->lo >= 0 && t->lo <= t->limit && t->hi >= t->limit &&
			               t->lo != t->hi;

			if (strcmp(t->source, target_groups[g].group))
				continue;
			if (first)
				printf("\ntargets (%s):\n", target_groups[g].heading);
			first = 0;
			if (t->kind == T_SHARE)
				printf("  %-6s %-60s %.2f%% [%.2f-%.2f%%]; %s%s\n", t->met ? "met" :
				       "MISSED", t->name, 100 * t->ratio, 100 * t->lo, 100 * t->hi,
				       t->text, straddle ? " (within the spread)" : "");
			else if (t->kind == T_COUNT)
				printf("  %-6s %-60s %.2f; %s\n", t->met ? "met" : "MISSED", t->name,
				       t->ratio, t->text);
			else
				printf("  %-6s %-60s %.2fx [%.2f-%.2fx]; %s%s\n", t->met ? "met" :
				       "MISSED", t->name, t->ratio, t->lo, t->hi, t->text,
				       straddle ? " (within the spread)" : "");
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Output: JSON                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* A JSON string: the library's one escaper (RFC 8259; ill-formed UTF-8 becomes \ufffd). */
static void json_string(FILE *f, const char *s)
{
	pool_json_write_string(f, s);
}

/* A number, or null when it was not measured (< 0). */
static void json_num(FILE *f, double v)
{
	if (v < 0 || !isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void json_spread(FILE *f, const char *key, const struct spread *sp)
{
	fprintf(f, ", \"%s\": {\"median\": ", key);
	json_num(f, sp->med);
	fputs(", \"min\": ", f);
	json_num(f, sp->min);
	fputs(", \"max\": ", f);
	json_num(f, sp->max);
	fputs(", \"q1\": ", f);
	json_num(f, sp->q1);
	fputs(", \"q3\": ", f);
	json_num(f, sp->q3);
	fputc('}', f);
}

static void json_cell(FILE *f, const struct bench_opts *o, enum row r, unsigned int si,
                      enum backend b)
{
	const struct cell *c = &cells[r][si][b];
	char label[48];
	unsigned int k;

	row_label(r, o, label, sizeof(label));
	fputs("{\"scenario\": ", f);
	json_string(f, label);
	fprintf(f, ", \"kind\": \"%s\", \"threads\": %u, ", bench_scenario_names[row_scenario(r)],
	        row_threads(r, o));
	if (row_is_server(r))
		fputs("\"size\": null", f);
	else
		fprintf(f, "\"size\": %zu", row_size(r, o, si));
	fprintf(f, ", \"align\": %zu, \"backend\": ", row_align(r));
	json_string(f, backends[b].name);
	fputs(", \"unit\": ", f);
	json_string(f, row_unit(r));
	fprintf(f, ", \"units_per_sample\": %llu, \"short_samples_rerun\": %u",
	        (unsigned long long)c->count, c->retries);
	if (row_scenario(r) == SC_SERVER) {
		enum srv_shape sh = row_shape(r);

		fprintf(f, ", \"live\": %u, \"lifetime\": \"%s\", \"teardown\": \"%s\"",
		        row_live(r, o),
		        sh == SHAPE_LONG_BURST || sh == SHAPE_LONG_HANDOVER ? "long" : "short",
		        sh == SHAPE_SHORT_BURST || sh == SHAPE_LONG_BURST ? "burst" : "handover");
	}
	json_spread(f, "ns", &c->ns);
	if (row_is_server(r))
		json_spread(f, "cpu_ns", &c->cpu);
	fputs(", \"samples\": [", f);
	for (k = 0; k < c->n; k++)
		fprintf(f, "%s%.6g", k ? ", " : "", c->s[k].ns);
	fputs("], \"sample_ms\": [", f);
	for (k = 0; k < c->n; k++)
		fprintf(f, "%s%.2f", k ? ", " : "", c->s[k].ms);
	fputc(']', f);
	if (row_is_server(r)) {
		json_spread(f, "peak_rss_mib", &c->rss);
		json_spread(f, "rss_before_mib", &c->rss_base);
		json_spread(f, "rss_growth_mib", &c->rss_growth);
	}
	if (row_scenario(r) == SC_SERVER) {
		json_spread(f, "os_share_warmup", &c->os_warm);
		json_spread(f, "os_share_steady", &c->os_steady);
	}
	if (row_scenario(r) == SC_FSHARE)
		json_spread(f, "shared_lines", &c->shared);
	if (row_scenario(r) == SC_SCALING) {
		char pin[32];

		fputs(", \"pinned_to\": ", f);
		json_string(f, row_pin(r, pin, sizeof(pin)));
		json_spread(f, "cpu_ns", &c->cpu);
		json_spread(f, "peak_rss_mib", &c->rss);
	}
	fputs(", \"placement\": ", f);
	json_string(f, c->placement);
	fputc('}', f);
}

static int write_json(const struct bench_opts *o)
{
	FILE *f = fopen(o->json, "w");
	unsigned int i, si, b, first = 1;
	enum row r;

	if (!f) {
		tool_error("cannot write '%s': %s", o->json, strerror(errno));
		return -1;
	}
	fputs("{\n  \"tool\": \"pool-bench\",\n  \"version\": ", f);
	json_string(f, pool_version());
	fputs(",\n  \"date\": ", f);
	json_string(f, mach.date);
	fputs(",\n  \"cpu\": ", f);
	json_string(f, mach.cpu);
	fputs(",\n  \"kernel\": ", f);
	json_string(f, mach.kernel);
	fprintf(f, ",\n  \"line_round_trip_ns\": ");
	json_num(f, mach.rtt_ns > 0 ? mach.rtt_ns : -1);
	fprintf(f, ",\n  \"pus\": %u,\n  \"cpus_allowed\": ", o->pus);
	json_string(f, mach.allowed);
	fputs(",\n  \"pin\": ", f);
	if (o->pin[0])
		json_string(f, o->pin);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"load_average_start\": [%.2f, %.2f, %.2f],\n"
	        "  \"load_average_end\": [%.2f, %.2f, %.2f],\n  \"load_average_max\": %.2f,\n"
	        "  \"load_warning\": %s,\n"
	        "  \"samples_per_figure\": %u,\n  \"samples_per_server_figure\": %u,\n"
	        "  \"min_sample_ms\": %.1f,\n"
	        "  \"fixed_units\": %llu,\n  \"quick\": %s,\n  \"results\": [",
	        mach.load_start[0], mach.load_start[1], mach.load_start[2], mach.load_end[0],
	        mach.load_end[1], mach.load_end[2], mach.load_max,
	        mach.load_warning ? "true" : "false",
	        o->reps, o->server_reps, o->pairs ? 0.0 : o->sample_ms, (unsigned long long)o->pairs,
	        o->quick ? "true" : "false");
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		for (si = 0; si < row_nsizes(r, o); si++)
			for (b = 0; b < BK_COUNT; b++) {
				if (!cells[r][si][b].n)
					continue;
				fputs(first ? "\n    " : ",\n    ", f);
				json_cell(f, o, r, si, (enum backend)b);
				first = 0;
			}
	}
	fputs("\n  ],\n  \"instructions\": ", f);
	if (insn_pair >= 0)
		fprintf(f, "{\"backend\": \"libpool\", \"size\": 64, \"per_pair\": %.3f, "
		        "\"loop\": %.3f, \"net\": %.3f}", insn_pair, insn_loop, insn_net);
	else {
		fputs("{\"skipped\": ", f);
		json_string(f, insn_why[0] ? insn_why : "not asked");
		fputc('}', f);
	}
	fputs(",\n  \"skipped\": {", f);
	for (b = 0, first = 1; b < BK_COUNT; b++)
		if (skipped[b][0]) {
			fputs(first ? "" : ", ", f);
			json_string(f, backends[b].name);
			fputs(": ", f);
			json_string(f, skipped[b]);
			first = 0;
		}
	fputs("},\n  \"targets\": [", f);
	for (i = 0, first = 1; i < ntargets; i++) {
		const struct target *t = &targets[i];

		if (!target_heading(t->source))
			continue;   /* only the groups --targets asked for */
		fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
		first = 0;
		json_string(f, t->name);
		fputs(", \"source\": ", f);
		json_string(f, t->source);
		fputs(", \"heading\": ", f);
		json_string(f, target_heading(t->source));
		fprintf(f, ", \"met\": %s, \"measured\": %.6g, \"range\": [%.6g, %.6g], "
		        "\"limit\": %g, \"direction\": \"%s\", \"unit\": \"%s\", \"text\": ",
		        t->met ? "true" : "false", t->ratio, t->lo, t->hi, t->limit,
		        t->at_least ? ">=" : "<=", t->kind == T_RATIO ? "ratio" :
		        t->kind == T_SHARE ? "fraction" : "instructions");
		json_string(f, t->text);
		fputc('}', f);
	}
	fputs("\n  ]\n}\n", f);
	if (fclose(f) != 0) {
		tool_error("cannot write '%s': %s", o->json, strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Output: plot                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* Does backend b have figures in the server rows (server != 0) or in any row? */
static int plot_has(const struct bench_opts *o, enum backend b, int server)
{
	unsigned int si;
	enum row r;

	if (!(o->backends & (1u << b)))
		return 0;
	for (r = 0; r < ROW_COUNT; r++)
		if (row_wanted(r, o) && (!server || row_is_server(r)))
			for (si = 0; si < row_nsizes(r, o); si++)
				if (cells[r][si][b].n)
					return 1;
	return 0;
}

/* The plot command of one panel: a histogram with error bars, a column triple per backend. */
static void plot_panel(FILE *gp, const struct bench_opts *o, const char *block, int server)
{
	unsigned int b, col = 2;

	fputs("plot", gp);
	for (b = 0; b < BK_COUNT; b++)
		if (plot_has(o, (enum backend)b, server)) {
			fprintf(gp, "%s %s using %u:%u:%u%s title '%s'", col > 2 ? "," : "", block, col,
			        col + 1, col + 2, col == 2 ? ":xtic(1)" : "", backends[b].name);
			col += 3;
		}
	fputc('\n', gp);
}

/*
 * Two panels drawn by gnuplot from a script on its standard input, the data inline (gnuplot 5
 * data blocks, no temporary file): throughput of every row by backend, with the samples'
 * extremes as error bars; and the server's peak RSS by thread count and backend.
 */
static int write_plot(const struct bench_opts *o)
{
	int server = server_table_wanted(o);
	unsigned int si, b, nrows = 0;
	char label[48];
	FILE *gp;
	enum row r;
	int rc;

	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		tool_error("cannot run gnuplot: %s", strerror(errno));
		return -1;
	}
	fputs("$tp << EOD\n", gp);
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < row_nsizes(r, o); si++) {
			if (row_sized(r))
				fprintf(gp, "%s/%zu", label, row_size(r, o, si));
			else
				fprintf(gp, "%s", label);
			for (b = 0; b < BK_COUNT; b++) {
				const struct cell *c = &cells[r][si][b];

				if (!plot_has(o, (enum backend)b, 0))
					continue;
				if (c->n)
					fprintf(gp, " %.4f %.4f %.4f", 1e3 / c->ns.med, 1e3 / c->ns.max,
					        1e3 / c->ns.min);
				else
					fputs(" ? ? ?", gp);
			}
			fputc('\n', gp);
		}
	}
	fputs("EOD\n$rss << EOD\n", gp);
	for (r = ROW_SRV_FIRST; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		fputs(label, gp);
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *c = &cells[r][0][b];

			if (!plot_has(o, (enum backend)b, 1))
				continue;
			if (c->n)
				fprintf(gp, " %.3f %.3f %.3f", c->rss.med, c->rss.min, c->rss.max);
			else
				fputs(" ? ? ?", gp);
		}
		fputc('\n', gp);
	}
	for (r = 0; r < ROW_COUNT; r++)
		if (row_wanted(r, o))
			nrows += row_nsizes(r, o);
	/* about 30 pixels per group of bars, so that the rotated labels stay apart */
	fprintf(gp, "EOD\nset terminal pngcairo size %u,%d font ',10'\nset output '%s'\n"
	        "set datafile missing '?'\nset style data histograms\n"
	        "set style histogram errorbars gap 1 lw 1\nset style fill solid 0.8 border -1\n"
	        "set key outside right top\nset xtics rotate by -40 scale 0\nset grid ytics\n",
	        nrows * 30 > 1500 ? nrows * 30 : 1500, server ? 1100 : 650, o->plot);
	if (server)
		fputs("set multiplot layout 2,1\n", gp);
	fprintf(gp, "set title \"pool-bench: throughput, median of %u samples, bars from the slowest "
	        "to the fastest sample (higher is better)\\nload average %.2f at start, at most "
	        "%.2f, on %u PUs; %s\"\nset ylabel 'million operations per second (log)'\n"
	        "set logscale y\n", o->reps, mach.load_start[0], mach.load_max, o->pus, mach.cpu);
	plot_panel(gp, o, "$tp", 0);
	if (server) {
		fputs("set title 'server table: peak RSS of the child process (lower is better)'\n"
		      "unset logscale y\nset ylabel 'MiB'\nset yrange [0:*]\n", gp);
		plot_panel(gp, o, "$rss", 1);
		fputs("unset multiplot\n", gp);
	}
	rc = pclose(gp);
	if (rc != 0) {
		tool_error("gnuplot failed (status %d); is the Debian package 'gnuplot-nox' "
		           "installed?", rc);
		return -1;
	}
	printf("plot written to %s\n", o->plot);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Instructions (callgrind)                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * One callgrind run of `prog --child backend scenario size pairs 1`, counting only inside the
 * functions named `toggle`. Returns 0 with *total instructions over *done pairs; -1 with the
 * reason in why when the run failed; -2 when valgrind itself cannot run.
 */
static int callgrind_count(const struct bench_opts *o, enum backend b, const char *scenario,
                           const char *toggle, size_t size, unsigned long long *total,
                           unsigned long long *done, char *why, size_t why_len)
{
	char prog[4200], sz[32], pairs[32], outfile[64], of[96], tg[96], out[4096], line[512];
	char *argv[13];
	const char *res, *pl;
	FILE *f;
	int rc;

	child_path(b, prog, sizeof(prog));
	if (access(prog, X_OK) != 0) {
		snprintf(why, why_len, "%s was not built", backends[b].program);
		return -1;
	}
	snprintf(outfile, sizeof(outfile), "/tmp/pool-bench-callgrind.%d", (int)getpid());
	snprintf(of, sizeof(of), "--callgrind-out-file=%s", outfile);
	snprintf(tg, sizeof(tg), "--toggle-collect=%s", toggle);
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(pairs, sizeof(pairs), "%llu", (unsigned long long)o->pairs);
	argv[0] = "valgrind";
	argv[1] = "--tool=callgrind";
	argv[2] = tg;
	argv[3] = of;
	argv[4] = "--quiet";
	argv[5] = prog;
	argv[6] = "--child";
	argv[7] = (char *)backends[b].name;
	argv[8] = (char *)scenario;
	argv[9] = sz;
	argv[10] = pairs;
	argv[11] = "1";
	argv[12] = NULL;
	rc = run_child(argv, backends[b].preload, o->verbose, out, sizeof(out));
	res = result_line(out, &pl);
	if (rc != 0 || strncmp(res, "ok ", 3) != 0) {
		unlink(outfile);
		if (rc == 127 || rc < 0) {
			snprintf(why, why_len, "valgrind could not run (install the Debian package "
			         "'valgrind')");
			return -2;
		}
		snprintf(why, why_len, "%s", strncmp(res, "error the child printed", 23) ? res :
		         "valgrind failed (run with -v to see why)");
		return -1;
	}
	*total = 0;
	f = fopen(outfile, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
			*total = strtoull(strchr(line, ':') + 1, NULL, 10);
	if (f)
		fclose(f);
	unlink(outfile);
	*done = (unsigned long long)field(res, "units", 0);
	if (!*done)
		*done = o->pairs;
	return 0;
}

/* Under a sanitizer the children cannot run under Valgrind. */
static int sanitizer_build(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(undefined_behavior_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

/* libpool's pair under callgrind, for the instruction target; 0, or -2 if valgrind is missing. */
/*
 * Instructions per pair net of the loop's own, to the hundredth as printed: the loops are
 * called once per 4096 pairs, and those calls leave a few thousandths per pair that say
 * nothing about the allocator.
 */
static double net_per_pair(unsigned long long total, unsigned long long done,
                           unsigned long long base_total, unsigned long long base_done)
{
	double net = (double)total / (double)done;

	if (base_done)
		net -= (double)base_total / (double)base_done;
	return round(net * 100) / 100;
}

static int count_libpool_pair(const struct bench_opts *o)
{
	unsigned long long total, done, base_total, base_done;
	struct bench_opts co = *o;
	int rc;

	co.pairs = 1000000;
	if (sanitizer_build()) {
		snprintf(insn_why, sizeof(insn_why), "a sanitizer build cannot run under valgrind");
		return 0;
	}
	rc = callgrind_count(&co, BK_LIBPOOL, "loop", "bench_loop_loop*", 64, &base_total,
	                     &base_done, insn_why, sizeof(insn_why));
	if (rc < 0)
		return rc == -2 ? -2 : 0;
	rc = callgrind_count(&co, BK_LIBPOOL, "pair", "bench_pair_loop*", 64, &total, &done,
	                     insn_why, sizeof(insn_why));
	if (rc < 0)
		return rc == -2 ? -2 : 0;
	insn_loop = (double)base_total / (double)base_done;
	insn_pair = (double)total / (double)done;
	insn_net = net_per_pair(total, done, base_total, base_done);
	return 0;
}

/*
 * `--instructions`: the pair loop of each backend under callgrind, instructions per pair, and
 * the same net of the loop's own cost (the "loop" scenario: no allocator, same loop).
 */
static int run_instructions(const struct bench_opts *o)
{
	unsigned long long total, done, base_total = 0, base_done = 0;
	double base = 0;
	char why[512];
	unsigned int b, si;
	int bad = 0, rc;

	rc = callgrind_count(o, BK_LIBPOOL, "loop", "bench_loop_loop*", 64, &base_total,
	                     &base_done, why, sizeof(why));
	if (rc == -2) {
		tool_error("%s", why);
		return TOOL_EXIT_UNAVAILABLE;
	}
	if (rc == 0)
		base = (double)base_total / (double)base_done;
	else
		printf("loop baseline skipped: %s\n", why);
	printf("pool-bench: instructions per alloc+free pair in the pair loop (callgrind); the "
	       "loop alone (increment,\ncompare, branch, one store to the object) costs %.2f; "
	       "\"net\" is per pair minus that\n", base);
	printf("%-10s %6s %10s %14s %10s %8s\n", "backend", "size", "pairs", "instructions",
	       "per pair", "net");
	for (si = 0; si < o->nsizes; si++)
		for (b = 0; b < BK_COUNT; b++) {
			double per, net;

			if (!(o->backends & (1u << b)))
				continue;
			if (callgrind_count(o, (enum backend)b, "pair", "bench_pair_loop*",
			                    o->sizes[si], &total, &done, why, sizeof(why)) < 0) {
				printf("%-10s %6zu skipped: %s\n", backends[b].name, o->sizes[si], why);
				if (b == BK_LIBPOOL)
					bad = 1;
				continue;
			}
			per = (double)total / (double)done;
			net = net_per_pair(total, done, base_total, base_done);
			printf("%-10s %6zu %10llu %14llu %10.2f %8.2f%s\n", backends[b].name,
			       o->sizes[si], done, total, per, net,
			       b != BK_LIBPOOL || !ntarget_groups ? "" : net <= 20 ?
			       "  (target net <= 20: met)" : "  (target net <= 20: MISSED)");
		}
	return bad ? TOOL_EXIT_FAILURE : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Command line                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------------------------ */
/* --return-curve: memory against time after a burst                                         */
/* ------------------------------------------------------------------------------------------ */

#define RET_MAX_POINTS 8192u

struct ret_curve {
	unsigned int n;
	double t[RET_MAX_POINTS], rss[RET_MAX_POINTS], held[RET_MAX_POINTS];   /* s, MiB, MiB */
	double base, peak, peak_held;       /* MiB; held -1 when the backend cannot tell */
	double idle_s, idle_cpu_ns, idle_wakeups;
	char why[300];                      /* empty: it ran */
};

static struct ret_curve ret_curves[BK_COUNT];

/* The first time the curve `v` fell to `level` and stayed there to the end, or -1. */
static double ret_time_below(const struct ret_curve *c, const double *v, double level)
{
	unsigned int i = c->n;

	while (i > 0 && v[i - 1] <= level)
		i--;
	return i < c->n ? c->t[i] : -1;
}

static void ret_run(const struct bench_opts *o, enum backend b, size_t size, unsigned int threads)
{
	struct ret_curve *c = &ret_curves[b];
	static char out[1 << 20];
	char prog[4200], sz[32], burst[32], th[32], secs[48], idle[48], keep[32], *line, *next;
	char *argv[12];
	int argc = 0, rc;

	child_path(b, prog, sizeof(prog));
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(burst, sizeof(burst), "%lu", o->return_burst);
	snprintf(th, sizeof(th), "%u", threads);
	snprintf(secs, sizeof(secs), "seconds=%g", o->return_seconds);
	/* libpool stays idle as long again: the releaser's cost with nothing to give back */
	snprintf(idle, sizeof(idle), "idle=%g", b == BK_LIBPOOL ? o->return_seconds : 0.0);
	argv[argc++] = prog;
	argv[argc++] = "--child";
	argv[argc++] = (char *)bk_names[b];
	argv[argc++] = "return";
	argv[argc++] = sz;
	argv[argc++] = burst;
	argv[argc++] = th;
	argv[argc++] = secs;
	argv[argc++] = idle;
	if (o->return_keep) {
		snprintf(keep, sizeof(keep), "keep=%lu", o->return_keep);
		argv[argc++] = keep;
	}
	argv[argc] = NULL;
	printf("return curve: %s, %u threads x %lu objects of %zu bytes, then %g s of pairs...\n",
	       bk_names[b], threads, o->return_burst, size, o->return_seconds);
	fflush(stdout);
	rc = run_child(argv, backends[b].preload, o->verbose, out, sizeof(out));
	memset(c, 0, sizeof(*c));
	c->peak_held = c->idle_s = -1;
	for (line = out; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "curve ", 6) && c->n < RET_MAX_POINTS) {
			c->t[c->n] = field(line, "t_ms", 0) / 1e3;
			c->rss[c->n] = field(line, "rss_kb", 0) / 1024;
			c->held[c->n] = field(line, "held_kb", -1) < 0 ? -1 : field(line, "held_kb", 0) / 1024;
			c->n++;
		} else if (!strncmp(line, "peak ", 5)) {
			c->peak = field(line, "rss_kb", 0) / 1024;
			c->peak_held = field(line, "held_kb", -1) < 0 ? -1 : field(line, "held_kb", 0) / 1024;
		} else if (!strncmp(line, "idle ", 5)) {
			c->idle_s = field(line, "s", -1);
			c->idle_cpu_ns = field(line, "cpu_ns", -1);
			c->idle_wakeups = field(line, "wakeups", -1);
		} else if (!strncmp(line, "ok ", 3)) {
			c->base = field(line, "base_kb", 0) / 1024;
		} else if (!strncmp(line, "unavailable ", 12) || !strncmp(line, "error ", 6)) {
			snprintf(c->why, sizeof(c->why), "%.250s", line);
		}
	}
	if (rc != 0 && !c->why[0])
		snprintf(c->why, sizeof(c->why), "exit status %d", rc);
	if (!c->why[0] && !c->n)
		snprintf(c->why, sizeof(c->why), "no curve");
	if (c->why[0])
		printf("  %s: %s\n", bk_names[b], c->why);
}

static int ret_plot(const struct bench_opts *o, size_t size, unsigned int threads, double win_s)
{
	unsigned int b, i, first = 1;
	FILE *gp;

	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		tool_error("cannot run gnuplot: %s", strerror(errno));
		return -1;
	}
	for (b = 0; b < BK_COUNT; b++) {
		const struct ret_curve *c = &ret_curves[b];

		if (!(o->backends & (1u << b)) || c->why[0])
			continue;
		fprintf(gp, "$%s << EOD\n", bk_names[b]);
		for (i = 0; i < c->n; i++)
			fprintf(gp, "%.2f %.2f %.2f\n", c->t[i], c->rss[i], c->held[i]);
		fputs("EOD\n", gp);
	}
	fprintf(gp, "set terminal pngcairo size 1000,600 font ',10'\nset output '%s'\n"
	        "set title \"Memory after a burst of %u x %lu objects of %zu B, then one alloc+free "
	        "per ms per thread\\n(%s; load average %.2f at the start, %.2f at the end, %ld "
	        "PUs)\"\n"
	        "set xlabel 'seconds after the frees'\nset ylabel 'MiB'\nset key below\n"
	        "set grid\nset yrange [0:*]\nset arrow from %g, graph 0 to %g, graph 1 nohead dt 3\n"
	        "set arrow from %g, graph 0 to %g, graph 1 nohead dt 3\n"
	        "set label 'one demand window' at %g, graph 0.95\nset label 'two' at %g, graph 0.95\n",
	        o->return_curve, threads, o->return_burst, size, mach.cpu, mach.load_start[0],
	        mach.load_end[0], sysconf(_SC_NPROCESSORS_ONLN), win_s, win_s, 2 * win_s, 2 * win_s,
	        win_s + 0.3, 2 * win_s + 0.3);
	fputs("plot ", gp);
	for (b = 0; b < BK_COUNT; b++) {
		if (!(o->backends & (1u << b)) || ret_curves[b].why[0])
			continue;
		fprintf(gp, "%s$%s using 1:2 with lines lw 2 title '%s RSS'", first ? "" : ", ",
		        bk_names[b], bk_names[b]);
		if (ret_curves[b].peak_held >= 0)
			fprintf(gp, ", $%s using 1:3 with lines lw 2 dt 2 title '%s allocated "
			        "(objects x stride)'", bk_names[b], bk_names[b]);
		first = 0;
	}
	fputc('\n', gp);
	if (pclose(gp) != 0) {
		tool_error("gnuplot failed to draw %s", o->return_curve);
		return -1;
	}
	printf("plot: %s\n", o->return_curve);
	return 0;
}

/*
 * pool-bench --return-curve FILE.png: the memory each backend holds, against time, after a
 * burst freed at once while a light load goes on (bench_run_return_once() in pool-bench.h), and
 * libpool's releaser thread's CPU time once idle. One child per backend, one after the other.
 */
static int run_return_curve(struct bench_opts *o)
{
	struct pool_config cfg;
	size_t size = o->sizes_given ? o->sizes[0] : 16384;
	unsigned int threads = o->threads_given ? o->threads : 4, b;
	double win_s, surv;
	int rc = 0;

	pool_get_config(&cfg);
	win_s = cfg.decay_ms / 1e3;
	if (!o->backends_given)
		o->backends = (1u << BK_LIBPOOL) | (1u << BK_JEMALLOC) | (1u << BK_MIMALLOC);
	o->backends &= ~(1u << BK_DPDK);
	read_machine(o);
	for (b = 0; b < BK_COUNT; b++)
		if (o->backends & (1u << b))
			ret_run(o, (enum backend)b, size, threads);
	read_loadavg(mach.load_end);
	printf("\nmemory after the burst (%s, %ld PUs; load average %.2f %.2f %.2f at the start, "
	       "%.2f %.2f %.2f at the end); libpool's demand window %.1f s\n", mach.cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), mach.load_start[0], mach.load_start[1],
	       mach.load_start[2], mach.load_end[0], mach.load_end[1], mach.load_end[2], win_s);
	/* the survivors' MiB: objects 0, keep, 2 keep... of each burst */
	surv = 0;
	if (o->return_keep)
		surv = (double)threads * (double)((o->return_burst - 1) / o->return_keep + 1) *
		       (double)size / (1024.0 * 1024.0);
	printf("%-10s %9s %9s %9s %9s %9s %12s %14s\n", "backend", "base MiB", "peak MiB",
	       "at 1 win", "at 2 win", "at end", "RSS back (s)", "alloc back (s)");
	for (b = 0; b < BK_COUNT; b++) {
		const struct ret_curve *c = &ret_curves[b];
		double at1 = -1, at2 = -1, rss_back, held_back = -1;
		unsigned int i;

		if (!(o->backends & (1u << b)) || c->why[0]) {
			if (o->backends & (1u << b)) {
				printf("%-10s %s\n", bk_names[b], c->why);
				if (b == BK_LIBPOOL || (o->backends_given & (1u << b)))
					rc = TOOL_EXIT_FAILURE;
			}
			continue;
		}
		for (i = 0; i < c->n; i++) {
			if (at1 < 0 && c->t[i] >= win_s)
				at1 = c->rss[i];
			if (at2 < 0 && c->t[i] >= 2 * win_s)
				at2 = c->rss[i];
		}
		/*
		 * "back": within 10% of the freed part of the burst above where it started and the
		 * survivors (--return-keep), to the end of the run
		 */
		rss_back = ret_time_below(c, c->rss, c->base + surv + (c->peak - c->base - surv) / 10);
		if (c->peak_held >= 0)
			held_back = ret_time_below(c, c->held, surv + (c->peak_held - surv) / 10);
		printf("%-10s %9.1f %9.1f %9.1f %9.1f %9.1f %12.1f %14.1f\n", bk_names[b], c->base,
		       c->peak, at1, at2, c->rss[c->n - 1], rss_back, held_back);
	}
	printf("(-1: not within the run; RSS back: within 10%% of the burst above the base, for "
	       "good; alloc back: libpool's allocated objects within 10%% of the burst)\n");
	if (o->return_keep)
		printf("survivors: one object in %lu of each burst stayed live through the curve, "
		       "%.1f MiB in all; \"back\" counts them as the base does\n", o->return_keep,
		       surv);
	if (ret_curves[BK_LIBPOOL].idle_s > 0 && ret_curves[BK_LIBPOOL].idle_cpu_ns >= 0)
		printf("libpool's releaser thread, idle for %.0f s with nothing to give back: %.3f ms "
		       "of CPU (%.5f%% of a core), %.0f wake-ups\n", ret_curves[BK_LIBPOOL].idle_s,
		       ret_curves[BK_LIBPOOL].idle_cpu_ns / 1e6,
		       100.0 * ret_curves[BK_LIBPOOL].idle_cpu_ns / (ret_curves[BK_LIBPOOL].idle_s * 1e9),
		       ret_curves[BK_LIBPOOL].idle_wakeups);
	else if (o->backends & (1u << BK_LIBPOOL))
		printf("libpool's releaser thread: not found (POOL_RELEASE=caller?)\n");
	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		tool_error("--return-curve needs gnuplot (Debian package gnuplot-nox)");
		return TOOL_EXIT_UNAVAILABLE;
	}
	if (ret_plot(o, size, threads, win_s) < 0)
		rc = TOOL_EXIT_FAILURE;
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: pool-bench [options]\n"
	        "Measure libpool side by side with glibc, jemalloc, tcmalloc, mimalloc and DPDK.\n"
	        "  --scenario LIST     among pair,batch,bulk,pipeline,threads,server,false-sharing,\n"
	        "                      larson,xmalloc,cache-scratch,scaling (default: all)\n"
	        "  --size LIST         object sizes in bytes, 16..1048576 (default: 64,192,16384)\n"
	        "  --backend LIST      among libpool,glibc,jemalloc,tcmalloc,mimalloc,dpdk (default:\n"
	        "                      all; those that cannot run here are skipped)\n"
	        "  --reps N            samples per figure, 1..%u (default %u)\n"
	        "  --sample-ms MS      least timed work per sample, 1..60000 ms (default %.0f)\n"
	        "  --threads N         the oversubscribed thread count of `threads`, 1..%u\n"
	        "                      (default 48)\n"
	        "  --server-threads LIST  thread counts of server, larson and xmalloc, up to %u\n"
	        "                      (default: 2,8; e.g. 2,8,16,64 on 16 or more cores)\n"
	        "  --server-live LIST  live objects per thread of `server`, up to %u numbers in\n"
	        "                      %u..%u (default: 2048,16384,65536)\n"
	        "  --server-shapes LIST  among short-burst,short-handover,long-burst,long-handover\n"
	        "                      (default: all)\n"
	        "  --server-reps N     samples per figure of server, larson and xmalloc, 1..%u\n"
	        "                      (default %u)\n"
	        "  --pin CPU-LIST      run worker i of every backend on CPU i of the list (modulo\n"
	        "                      its length), e.g. 0,1 (default: not pinned)\n"
	        "  --quick             development run: 3 samples of 20 ms, size 64, server,\n"
	        "                      larson and xmalloc at 2 threads, server with 2048 live\n"
	        "                      objects, threads at %u (options after it override)\n"
	        "  --pairs N           a fixed count of units per sample instead of calibration,\n"
	        "                      64..10^10; with --instructions: pairs counted (default 10^6)\n"
	        "  --json FILE         also write the results as JSON\n"
	        "  --plot FILE.png     draw throughput and server RSS with gnuplot\n"
	        "  --targets FILE      also judge the figures against the target groups FILE\n"
	        "                      names, under its headings (make bench: mk/bench-targets)\n"
	        "  --instructions      count instructions per pair of the pair scenario of each\n"
	        "                      backend under valgrind --tool=callgrind\n"
	        "  --return-curve FILE.png  instead of the tables: the memory each backend holds\n"
	        "                      against time after a burst freed under a light load\n"
	        "                      (default: libpool,jemalloc,mimalloc, --threads 4,\n"
	        "                      --size 16384), plotted with gnuplot\n"
	        "  --return-seconds S  how long the curve runs after the frees, 1..3600 (default 30)\n"
	        "  --return-burst N    objects each thread takes in the burst (default 6000)\n"
	        "  --return-keep N     every N-th object of each burst stays live through the\n"
	        "                      curve (2..1000000; default: none)\n"
	        "  --placement         print each worker thread's Cpus_allowed_list\n"
	        "  -v, --verbose       show the children's stderr\n"
	        "  -h, --help          this text\n"
	        "  -V, --version       the version\n"
	        "Child programs: next to pool-bench, else in %s.\n"
	        "Exit status: 0 done, 1 a failure was found, 2 bad usage, 3 a backend named with\n"
	        "--backend or a tool that --plot/--instructions needs cannot run here.\n",
	        MAX_REPS, MIN_REPS, MIN_SAMPLE_MS, BENCH_MAX_THREADS, MAX_SERVER, MAX_LIVE,
	        SRV_LIVE_MIN, SRV_LIVE_MAX, MAX_REPS, SERVER_REPS, 8u,
	        POOL_BENCH_HELPER_DIR);
}

/* A comma-separated list of names among names[0..n-1], as a bit mask; else exit 2. */
static unsigned int parse_names(const char *opt, const char *s, const char *const *names,
                                unsigned int n)
{
	char buf[256], all[256] = "", *tok, *save = NULL;
	unsigned int mask = 0, i;
	size_t used = 0;

	for (i = 0; i < n && used < sizeof(all); i++)
		used += (size_t)snprintf(all + used, sizeof(all) - used, "%s%s", i ? "," : "",
		                         names[i]);
	if (!*s || strlen(s) >= sizeof(buf))
		tool_usage_error("bad value '%s' for %s: expected a list among %s", s, opt, all);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == n)
			tool_usage_error("bad value '%s' for %s: expected a list among %s", tok, opt,
			                 all);
		mask |= 1u << i;
	}
	if (!mask)
		tool_usage_error("bad value '%s' for %s: expected a list among %s", s, opt, all);
	return mask;
}

/* A comma-separated list of numbers in [lo, hi] into v[0..max-1]; returns the count. */
static unsigned int parse_num_list(const char *opt, const char *s, unsigned long *v,
                                   unsigned int max, unsigned long lo, unsigned long hi)
{
	char buf[256], *tok, *save = NULL;
	unsigned int n = 0;

	if (!*s || strlen(s) >= sizeof(buf))
		tool_usage_error("bad value '%s' for %s: expected up to %u numbers in %lu..%lu", s,
		                 opt, max, lo, hi);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			tool_usage_error("bad value '%s' for %s: expected up to %u numbers", s, opt,
			                 max);
		v[n++] = tool_parse_ulong(opt, tok, lo, hi);
	}
	if (!n)
		tool_usage_error("bad value '%s' for %s: expected up to %u numbers in %lu..%lu", s,
		                 opt, max, lo, hi);
	return n;
}

/* --pin: every CPU must be one this process may run on; stored normalised. */
static void parse_pin(const char *s, struct bench_opts *o)
{
	static int cpus[BENCH_MAX_CPUS];
	char allowed_list[256] = "?";
	cpu_set_t allowed;
	size_t used = 0;
	int n, i;

	n = bench_parse_cpulist(s, cpus, BENCH_MAX_CPUS);
	if (n <= 0)
		tool_usage_error("bad value '%s' for --pin: expected a CPU list such as 0,1 or 0-3",
		                 s);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		CPU_ZERO(&allowed);
	else
		bench_format_cpuset(&allowed, allowed_list, sizeof(allowed_list));
	for (i = 0; i < n; i++) {
		if (!CPU_ISSET(cpus[i], &allowed))
			tool_usage_error("bad value '%s' for --pin: this process may not run on CPU %d "
			                 "(it may use %s)", s, cpus[i], allowed_list);
		used += (size_t)snprintf(o->pin + used, sizeof(o->pin) - used, "%s%d",
		                         i ? "," : "", cpus[i]);
		if (used >= sizeof(o->pin))
			tool_usage_error("bad value '%s' for --pin: list too long", s);
	}
}

enum {
	OPT_RETURN_CURVE = 240, OPT_RETURN_SECONDS, OPT_RETURN_BURST, OPT_RETURN_KEEP,
	OPT_SCENARIO = 256, OPT_SIZE, OPT_BACKEND, OPT_REPS, OPT_SAMPLE_MS, OPT_THREADS,
	OPT_SERVER_THREADS, OPT_PIN, OPT_QUICK, OPT_PAIRS, OPT_JSON, OPT_PLOT, OPT_INSTRUCTIONS,
	OPT_PLACEMENT, OPT_SERVER_LIVE, OPT_SERVER_SHAPES, OPT_SERVER_REPS, OPT_TARGETS
};

static void parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "reps", required_argument, NULL, OPT_REPS },
		{ "sample-ms", required_argument, NULL, OPT_SAMPLE_MS },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "server-threads", required_argument, NULL, OPT_SERVER_THREADS },
		{ "server-live", required_argument, NULL, OPT_SERVER_LIVE },
		{ "server-shapes", required_argument, NULL, OPT_SERVER_SHAPES },
		{ "server-reps", required_argument, NULL, OPT_SERVER_REPS },
		{ "pin", required_argument, NULL, OPT_PIN },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "pairs", required_argument, NULL, OPT_PAIRS },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "targets", required_argument, NULL, OPT_TARGETS },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "instructions", no_argument, NULL, OPT_INSTRUCTIONS },
		{ "placement", no_argument, NULL, OPT_PLACEMENT },
		{ "return-curve", required_argument, NULL, OPT_RETURN_CURVE },
		{ "return-seconds", required_argument, NULL, OPT_RETURN_SECONDS },
		{ "return-burst", required_argument, NULL, OPT_RETURN_BURST },
		{ "return-keep", required_argument, NULL, OPT_RETURN_KEEP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long v[MAX_SIZES];
	unsigned int n, i;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SCENARIO:
			o->scenarios = parse_names("--scenario", optarg, bench_scenario_names,
			                           SC_LOOP);
			break;
		case OPT_SIZE:
			o->nsizes = parse_num_list("--size", optarg, v, MAX_SIZES, 16, 1u << 20);
			for (i = 0; i < o->nsizes; i++)
				o->sizes[i] = (size_t)v[i];
			o->sizes_given = 1;
			break;
		case OPT_BACKEND:
			o->backends = o->backends_given = parse_names("--backend", optarg, bk_names,
			                                              BK_COUNT);
			break;
		case OPT_REPS:
			o->reps = (unsigned int)tool_parse_ulong("--reps", optarg, 1, MAX_REPS);
			break;
		case OPT_SAMPLE_MS:
			o->sample_ms = (double)tool_parse_ulong("--sample-ms", optarg, 1, 60000);
			break;
		case OPT_THREADS:
			o->threads = (unsigned int)tool_parse_ulong("--threads", optarg, 1,
			                                            BENCH_MAX_THREADS);
			o->threads_given = 1;
			break;
		case OPT_RETURN_CURVE:
			o->return_curve = optarg;
			break;
		case OPT_RETURN_SECONDS:
			o->return_seconds = (double)tool_parse_ulong("--return-seconds", optarg, 1, 3600);
			break;
		case OPT_RETURN_BURST:
			o->return_burst = tool_parse_ulong("--return-burst", optarg, 1, 100000000);
			break;
		case OPT_RETURN_KEEP:
			o->return_keep = tool_parse_ulong("--return-keep", optarg, 2, 1000000);
			break;
		case OPT_SERVER_THREADS:
			n = parse_num_list("--server-threads", optarg, v, MAX_SERVER, 1,
			                   BENCH_MAX_THREADS);
			for (i = 0; i < n; i++)
				o->server_threads[i] = (unsigned int)v[i];
			o->nserver = n;
			break;
		case OPT_SERVER_LIVE:
			n = parse_num_list("--server-live", optarg, v, MAX_LIVE, SRV_LIVE_MIN,
			                   SRV_LIVE_MAX);
			for (i = 0; i < n; i++)
				o->server_live[i] = (unsigned int)v[i];
			o->nlive = n;
			break;
		case OPT_SERVER_SHAPES:
			o->shapes = parse_names("--server-shapes", optarg, shape_names, SHAPE_COUNT);
			break;
		case OPT_SERVER_REPS:
			o->server_reps = (unsigned int)tool_parse_ulong("--server-reps", optarg, 1,
			                                                MAX_REPS);
			break;
		case OPT_PIN:
			parse_pin(optarg, o);
			break;
		case OPT_QUICK:
			o->quick = 1;
			o->reps = 3;
			o->sample_ms = 20;
			o->nsizes = 1;
			o->sizes[0] = 64;
			o->threads = 8;
			o->server_threads[0] = 2;
			o->nserver = 1;
			o->server_live[0] = SRV_LIVE;
			o->nlive = 1;
			o->server_reps = 3;
			break;
		case OPT_PAIRS:
			o->pairs = tool_parse_ulong("--pairs", optarg, 64, 10000000000ul);
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_TARGETS:
			o->targets = optarg;
			read_target_groups(optarg);
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_INSTRUCTIONS:
			o->instructions = 1;
			break;
		case OPT_PLACEMENT:
			o->placement = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		default:   /* -h, -V, and getopt_long()'s errors */
			tool_common_option(c, longopts, argv, usage);
		}
	}
	tool_no_operands(argc, argv);
}

/* Is the backend's child built and, for preloads, its library installed? */
static int backend_present(enum backend b)
{
	char prog[4200];

	child_path(b, prog, sizeof(prog));
	return access(prog, X_OK) == 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .scenarios = (1u << SC_LOOP) - 1,
	                        .backends = (1u << BK_COUNT) - 1, .sizes = { 64, 192, 16384 },
	                        .nsizes = 3, .reps = MIN_REPS, .sample_ms = MIN_SAMPLE_MS,
	                        .threads = 48, .server_threads = { 2, 8 }, .nserver = 2,
	                        .server_live = { SRV_LIVE, 16384, 65536 }, .nlive = 3,
	                        .shapes = (1u << SHAPE_COUNT) - 1, .server_reps = SERVER_REPS,
	                        .return_seconds = 30, .return_burst = 6000 };
	ssize_t len;
	char *slash;
	unsigned int b;
	int rc = 0;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return bench_child_main(argc, argv);
	len = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
	if (len <= 0) {
		tool_error("cannot find my own path: %s", strerror(errno));
		return TOOL_EXIT_FAILURE;
	}
	self_dir[len] = 0;
	slash = strrchr(self_dir, '/');
	if (slash)
		*slash = 0;
	o.pus = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	if (!o.pus)
		o.pus = 1;
	parse_args(argc, argv, &o);

	if (o.return_curve)
		return run_return_curve(&o);
	if (o.instructions) {
		if (!o.pairs)
			o.pairs = 1000000;
		if (!o.sizes_given)
			o.nsizes = 1;   /* 64 bytes unless sizes were given */
		return run_instructions(&o);
	}
	for (b = 0; b < BK_COUNT; b++)
		if ((o.backends_given & (1u << b)) && !backend_present((enum backend)b)) {
			tool_error("backend %s cannot run: %s was not built%s", backends[b].name,
			           backends[b].program,
			           b == BK_DPDK ? " (libdpdk-dev is not installed)" : "");
			return TOOL_EXIT_UNAVAILABLE;
		}
	if (o.plot && system("command -v gnuplot >/dev/null 2>&1") != 0) {
		tool_error("--plot needs gnuplot (Debian package gnuplot-nox)");
		return TOOL_EXIT_UNAVAILABLE;
	}
	cells = calloc(ROW_COUNT, sizeof(*cells));
	if (!cells) {
		tool_error("out of memory for the results");
		return TOOL_EXIT_FAILURE;
	}
	read_machine(&o);
	if (row_wanted(ROW_SCALE_1, &o))
		measure_rtt();
	if (mach.load_warning)
		tool_error("warning: load average %.2f on %u PUs is above 0.5 per PU; figures "
		           "will be noisy", mach.load_start[0], o.pus);
	if ((o.scenarios & (1u << SC_PAIR)) && (o.backends & (1u << BK_LIBPOOL)) &&
	    count_libpool_pair(&o) == -2)
		snprintf(insn_why, sizeof(insn_why), "valgrind is not installed");
	run_all(&o);
	read_loadavg(mach.load_end);
	if (mach.load_end[0] > mach.load_max)
		mach.load_max = mach.load_end[0];
	if (mach.load_end[0] > 0.5 * o.pus)
		mach.load_warning = 1;
	eval_targets(&o);
	print_header(&o);
	print_table(&o);
	print_server(&o);
	if (insn_pair >= 0)
		printf("\ninstructions (callgrind), libpool pair, 64 B: %.2f per pair, %.2f net of the "
		       "loop's own %.2f\n", insn_pair, insn_net, insn_loop);
	else if (insn_why[0])
		printf("\ninstructions: not counted: %s\n", insn_why);
	print_skipped(&o);
	if (o.placement)
		print_placement(&o);
	print_targets();
	if (o.json && write_json(&o) < 0)
		rc = TOOL_EXIT_FAILURE;
	if (o.plot && write_plot(&o) < 0)
		rc = TOOL_EXIT_FAILURE;
	for (b = 0; b < BK_COUNT; b++) {
		if (!(o.backends & (1u << b)))
			continue;
		if (backend_failed[b] || (skipped[b][0] && b == BK_LIBPOOL))
			rc = TOOL_EXIT_FAILURE;
		else if (skipped[b][0] && (o.backends_given & (1u << b)) && !rc)
			rc = TOOL_EXIT_UNAVAILABLE;
	}
	return rc;
}
