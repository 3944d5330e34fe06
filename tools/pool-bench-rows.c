/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-rows.c - the backends pool-bench compares and the rows of its tables: for each row,
 * the scenario it runs, at which sizes, threads, alignment and pins, under which label and unit,
 * how many samples, and the general mallocs it is compared with.
 *
 * The fixed rows come first (pair, batch, bulk, pipeline, the two threads rows, false-sharing
 * unaligned and aligned, cache-scratch at 2 and 8 threads, scaling on one CPU and two, the
 * pipeline pinned to one CPU and to two), then the rows of the server table: for each of the
 * --server-threads counts (index ti), SRV_KINDS kinds: the server at each live-set size (index
 * li) and shape, then larson, then xmalloc; then the public shapes (pool-bench-public.h):
 * mstress-8-1cpu, and for each --server-threads count PUB_KINDS kinds: mstress, larson-mb,
 * xmalloc-test.
 *
 * scaling and pipeline-pinned are rows of the parent's only: the server at SCALE_THREADS
 * threads, and the pipeline at 64, 192 and 1024 B, pinned to one CPU and to two (the child runs
 * `server` or `pipeline` with a pin list); scaling beside the round trip of a cache line between
 * the two (pool-bench-machine.c).
 */
#include <stdio.h>

#include "pool-bench-parent.h"

const struct backend_desc backends[BK_COUNT] = {
	{ "libpool", "pool-bench", NULL, "(this project)", 0 },
	{ "glibc", "pool-bench-malloc", NULL, "libc6", 1 },
	{ "jemalloc", "pool-bench-malloc", "libjemalloc.so.2", "libjemalloc2", 1 },
	{ "tcmalloc", "pool-bench-malloc", "libtcmalloc_minimal.so.4",
	  "libtcmalloc-minimal4", 1 },
	{ "mimalloc", "pool-bench-malloc", "libmimalloc.so.2", "libmimalloc2.0", 1 },
	{ "dpdk", "pool-bench-dpdk", NULL, "libdpdk-dev (at build time)", 0 },
};

const char *const bk_names[BK_COUNT] = {
	"libpool", "glibc", "jemalloc", "tcmalloc", "mimalloc", "dpdk"
};

const char *const shape_names[SHAPE_COUNT] = {
	"short-burst", "short-handover", "long-burst", "long-handover"
};

/* Rows of the server table: server, larson, xmalloc and the public shapes, with peak RSS and
 * CPU time. */
int row_is_server(enum row r)
{
	return r >= ROW_SRV_FIRST;
}

/* The public shapes' rows of the server table (the issue 48 group of targets judges them). */
int row_is_public(enum row r)
{
	return r >= ROW_PUB_FIRST;
}

/* A server-table row's kind (see enum row) and thread-count index (not mstress-8-1cpu). */
static unsigned int row_kind(enum row r)
{
	if (row_is_public(r))
		return (unsigned int)(r - ROW_PUB_THREADS) % PUB_KINDS;
	return (unsigned int)(r - ROW_SRV_FIRST) % SRV_KINDS;
}

static unsigned int row_tidx(enum row r)
{
	if (row_is_public(r))
		return (unsigned int)(r - ROW_PUB_THREADS) / PUB_KINDS;
	return (unsigned int)(r - ROW_SRV_FIRST) / SRV_KINDS;
}

enum bench_scenario row_scenario(enum row r)
{
	static const enum bench_scenario map[ROW_SRV_FIRST] = {
		SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_THREADS, SC_FSHARE, SC_FSHARE,
		SC_SCRATCH, SC_SCRATCH, SC_SCALING, SC_SCALING, SC_PIPE_PINNED, SC_PIPE_PINNED
	};
	static const enum bench_scenario pub[PUB_KINDS] = { SC_MSTRESS, SC_LARSON_MB, SC_XMTEST };

	if (!row_is_server(r))
		return map[r];
	if (r == ROW_MSTRESS_1CPU)
		return SC_MSTRESS;
	if (row_is_public(r))
		return pub[row_kind(r)];
	if (row_kind(r) == KIND_LARSON)
		return SC_LARSON;
	return row_kind(r) == KIND_XMALLOC ? SC_XMALLOC : SC_SERVER;
}

/* A server row's live objects per thread and shape (server rows only). */
unsigned int row_live(enum row r, const struct bench_opts *o)
{
	return o->server_live[row_kind(r) / SHAPE_COUNT];
}

enum srv_shape row_shape(enum row r)
{
	return (enum srv_shape)(row_kind(r) % SHAPE_COUNT);
}

/* Rows measured at each --size; the others at one size of their own. */
int row_sized(enum row r)
{
	return r <= ROW_THREADS_OVER;
}

unsigned int row_nsizes(enum row r, const struct bench_opts *o)
{
	if (row_scenario(r) == SC_SCRATCH)
		return 2;               /* 8 and 16 bytes */
	if (row_scenario(r) == SC_PIPE_PINNED)
		return PUB_PIPE_SIZES;
	return row_sized(r) ? o->nsizes : 1;
}

size_t row_size(enum row r, const struct bench_opts *o, unsigned int si)
{
	if (row_sized(r))
		return o->sizes[si];
	if (row_scenario(r) == SC_SCRATCH)
		return si ? 16 : 8;
	if (row_scenario(r) == SC_PIPE_PINNED)
		return si == 0 ? 64 : si == 1 ? 192 : 1024;
	if (row_scenario(r) == SC_XMTEST)
		return XMT_SIZE;
	return row_is_server(r) || row_scenario(r) == SC_SCALING ? 8 : FS_SIZE;
}

size_t row_align(enum row r)
{
	return r == ROW_FSHARE_ALIGNED ? BENCH_LINE : 0;
}

unsigned int row_threads(enum row r, const struct bench_opts *o)
{
	if (row_is_server(r) && r != ROW_MSTRESS_1CPU)
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
	case ROW_PIPE_1CPU:
	case ROW_PIPE_2CPUS: return 2;
	case ROW_MSTRESS_1CPU: return MS_1CPU_THREADS;
	default: return 1;
	}
}

/*
 * The pin list of a row that has its own (scaling and pipeline-pinned: one CPU, then two;
 * mstress-8-1cpu: one), else NULL.
 */
const char *row_pin(enum row r, char *buf, size_t len)
{
	if (r == ROW_SCALE_1 || r == ROW_PIPE_1CPU || r == ROW_MSTRESS_1CPU)
		snprintf(buf, len, "%d", mach.cpu_a);
	else if (r == ROW_SCALE_2 || r == ROW_PIPE_2CPUS)
		snprintf(buf, len, "%d,%d", mach.cpu_a, mach.cpu_b);
	else
		return NULL;
	return buf;
}

int row_wanted(enum row r, const struct bench_opts *o)
{
	if (!(o->scenarios & (1u << row_scenario(r))))
		return 0;
	if (r == ROW_MSTRESS_1CPU)
		return mach.cpu_a >= 0;
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
	if (row_scenario(r) == SC_SCALING || row_scenario(r) == SC_PIPE_PINNED)
		return mach.cpu_b >= 0;
	return 1;
}

/* Is any row of scenario sc wanted? */
int scenario_wanted(enum bench_scenario sc, const struct bench_opts *o)
{
	enum row r;

	for (r = 0; r < ROW_COUNT; r++)
		if (row_scenario(r) == sc && row_wanted(r, o))
			return 1;
	return 0;
}

int row_runs(enum row r, enum backend b)
{
	return (!row_is_server(r) && row_scenario(r) != SC_SCALING &&
	        row_scenario(r) != SC_PIPE_PINNED) || b == BK_LIBPOOL || backends[b].general;
}

/* Samples per figure of row r. */
unsigned int row_reps(enum row r, const struct bench_opts *o)
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

void row_label(enum row r, const struct bench_opts *o, char *buf, size_t len)
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
	case SC_LARSON_MB:
	case SC_XMTEST:
		snprintf(buf, len, "%s-%u", bench_scenario_names[row_scenario(r)], row_threads(r, o));
		return;
	case SC_MSTRESS:
		snprintf(buf, len, "mstress-%u%s", row_threads(r, o),
		         r == ROW_MSTRESS_1CPU ? "-1cpu" : "");
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
	case ROW_PIPE_1CPU: snprintf(buf, len, "pipeline-1cpu"); break;
	case ROW_PIPE_2CPUS: snprintf(buf, len, "pipeline-2cpus"); break;
	default: snprintf(buf, len, "threads-%u", row_threads(r, o)); break;
	}
}

/* The unit of a row's figures. */
const char *row_unit(enum row r)
{
	switch (row_scenario(r)) {
	case SC_PIPELINE:
	case SC_PIPE_PINNED: return "ns per object passed";
	case SC_SERVER:
	case SC_LARSON:
	case SC_XMALLOC:
	case SC_MSTRESS:
	case SC_LARSON_MB: return "ns per allocation";
	case SC_XMTEST: return "ns per object freed";
	case SC_FSHARE:
	case SC_SCRATCH: return "ns per write";
	case SC_SCALING: return "ns per allocation";
	default: return "ns per alloc+free pair";
	}
}

/* A starting count for calibration: a few ms on any backend (server: its least count). */
uint64_t row_start_count(enum row r, const struct bench_opts *o)
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
	case SC_MSTRESS:            /* one round: 1.5 x 100 x MS_SCALE x (i % 8 + 1), i < threads */
		return (uint64_t)SRV_MIN_ROUNDS * 150 * MS_SCALE * row_threads(r, o) *
		       (row_threads(r, o) < 8 ? row_threads(r, o) + 1 : 9) / 2;
	case SC_LARSON_MB:
		return (uint64_t)row_threads(r, o) * LMB_CHUNKS;
	case SC_XMTEST:
		return (uint64_t)row_threads(r, o) * 4 * XMT_BATCH;
	case SC_PIPELINE:
	case SC_PIPE_PINNED:
		return 16384;
	default:
		return 65536;
	}
}

/* The fastest general malloc of a row (by median), or NULL. */
const struct cell *fastest_malloc(enum row r, unsigned int si, enum backend *which)
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
const struct cell *leanest_malloc(enum row r, enum backend *which)
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
