/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-child.h - the child program of pool-bench: its command line (pool-bench.h), the
 * workers of the thread scenarios, a run and its calibration, and the result line. Each child
 * program (pool-bench-libpool.c, pool-bench-malloc.c, pool-bench-dpdk.c) includes it once,
 * defines the backend hooks of pool-bench-backend.h, and calls bench_child_main().
 */
#ifndef POOL_TOOLS_POOL_BENCH_CHILD_H
#define POOL_TOOLS_POOL_BENCH_CHILD_H

#include "pool-bench-backend.h"
#include "pool-bench-false-sharing.h"
#include "pool-bench-micro.h"
#include "pool-bench-public.h"
#include "pool-bench-return.h"
#include "pool-bench-server.h"
#include "pool-bench-threads.h"

static void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	const struct bench_params *bp = w->sh->bp;

	bench_place(bp, w->idx);
	bench_cpus_allowed(w->cpus, sizeof(w->cpus));
	bk_thread_start(&w->t);
	switch (bp->scenario) {
	case SC_PIPELINE:
		bench_pipeline(w);
		break;
	case SC_THREADS:
		bench_threads(w);
		break;
	case SC_FSHARE:
		bench_fshare(w);
		break;
	case SC_SCRATCH:
		bench_scratch(w);
		break;
	default:
		bench_single(w);
		break;
	}
	bk_thread_stop(&w->t);
	/* all leave together: nobody waits for the others by spinning (DPDK's main lcore) */
	bench_barrier(w->sh);
	return NULL;
}

/* Workers of every scenario but server. */
static unsigned int bench_workers_of(const struct bench_params *bp)
{
	switch (bp->scenario) {
	case SC_PIPELINE:
	case SC_THREADS:
	case SC_SCRATCH:
		return bp->threads;
	case SC_FSHARE:
		return 2;
	default:
		return 1;
	}
}

/* One run of a worker scenario over `count` units. */
static int bench_run_workers_once(const struct bench_params *bp, uint64_t count,
                                  struct bench_result *res, int report_placement)
{
	unsigned int n = bench_workers_of(bp), i;
	struct bench_worker *w = bench_line_alloc(sizeof(*w) * n);
	struct bench_shared *sh = bench_line_alloc(sizeof(*sh));
	double start = 0, end = 0;
	int rc = 0;

	if (!w || !sh) {
		free(w);
		free(sh);
		bench_fail("out of memory for %u workers", n);
		return -1;
	}
	memset(w, 0, sizeof(*w) * n);
	memset(sh, 0, sizeof(*sh));
	sh->bp = bp;
	sh->count = count;
	if (bp->scenario == SC_PIPELINE) {
		sh->rings = bench_line_alloc(sizeof(*sh->rings) * (n / 2));
		if (!sh->rings) {
			free(w);
			free(sh);
			bench_fail("out of memory for %u rings", n / 2);
			return -1;
		}
		memset(sh->rings, 0, sizeof(*sh->rings) * (n / 2));
	}
	pthread_barrier_init(&sh->barrier, NULL, n);
	for (i = 0; i < n; i++) {
		w[i].sh = sh;
		w[i].idx = i;
	}
	if (bk_run_workers(n, bench_worker_main, (char *)w, sizeof(*w)) < 0) {
		bench_fail("cannot start %u threads", n);
		rc = -1;
	}
	res->units = 0;
	for (i = 0; i < n && !rc; i++) {
		if (w[i].end_ns > end)
			end = w[i].end_ns;
		if (w[i].start_ns && (!start || w[i].start_ns < start))
			start = w[i].start_ns;
		res->units += w[i].done;
	}
	res->elapsed_ns = end - start;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = bp->scenario == SC_FSHARE ? bench_fshare_shared(sh) : -1;
	if (report_placement && !rc)
		bench_print_placement(w[0].cpus, sizeof(*w), n);
	pthread_barrier_destroy(&sh->barrier);
	free(sh->rings);
	free(sh);
	free(w);
	return rc;
}

/* The scenarios whose threads the scenario itself starts (not bk_run_workers()). */
static int bench_own_threads(enum bench_scenario sc)
{
	return sc == SC_SERVER || sc == SC_LARSON || sc == SC_XMALLOC || sc == SC_MSTRESS ||
	       sc == SC_LARSON_MB || sc == SC_XMTEST;
}

static int bench_run_once(const struct bench_params *bp, uint64_t count,
                          struct bench_result *res, int report_placement)
{
	int rc;

	memset(res, 0, sizeof(*res));
	switch (bp->scenario) {
	case SC_SERVER:
		rc = bench_run_server_once(bp, count, res, report_placement);
		break;
	case SC_LARSON:
		rc = bench_run_larson_once(bp, count, res, report_placement);
		break;
	case SC_XMALLOC:
		rc = bench_run_xmalloc_once(bp, count, res, report_placement);
		break;
	case SC_MSTRESS:
		rc = bench_run_mstress_once(bp, count, res, report_placement);
		break;
	case SC_LARSON_MB:
		rc = bench_run_larson_mb_once(bp, count, res, report_placement);
		break;
	case SC_XMTEST:
		rc = bench_run_xmtest_once(bp, count, res, report_placement);
		break;
	case SC_RETURN:
		rc = bench_run_return_once(bp, count, res);
		break;
	default:
		rc = bench_run_workers_once(bp, count, res, report_placement);
		break;
	}
	return rc;
}

/*
 * Run the scenario; with calibrate_ms, grow the count (by the ratio of time still wanted, at
 * least 2x, at most 64x) until a run lasts calibrate_ms, and report that last run.
 */
static int bench_run(const struct bench_params *bp, struct bench_result *res)
{
	uint64_t count = bp->count;
	int first = 1;

	for (;;) {
		double want = bp->calibrate_ms * 1e6, grow;

		if (bench_run_once(bp, count, res, first) < 0 || atomic_load(&bench_failed))
			return -1;
		first = 0;
		if (bp->calibrate_ms <= 0 || res->elapsed_ns >= want)
			return 0;
		grow = want * 1.25 / (res->elapsed_ns > 1e4 ? res->elapsed_ns : 1e4);
		grow = grow < 2 ? 2 : grow > 64 ? 64 : grow;
		if ((double)count * grow > 1e13)
			return 0;
		count = (uint64_t)((double)count * grow);
	}
}

static int bench_child_usage(const char *prog, const char *why, const char *arg)
{
	printf("error %s '%s'\n", why, arg);
	fprintf(stderr, "usage: %s --child <backend> <scenario> <size> <count> <threads> "
	        "[pin=LIST] [align=N] [calibrate=MS] [corrupt=N] [live=N] [lifetime=short|long] "
	        "[teardown=burst|handover] [seconds=S] [idle=S] [keep=N]\n(an internal program of "
	        "pool-bench; run pool-bench instead)\n", prog);
	return BENCH_EXIT_USAGE;
}

static int bench_child_main(int argc, char **argv)
{
	static struct bench_params bp;
	struct bench_result res;
	char why[256] = "";
	char *end;
	unsigned long long v;
	long base_kb;
	int i, n;

	if (argc < 7 || strcmp(argv[1], "--child") != 0)
		return bench_child_usage(argv[0], "bad arguments", argc > 1 ? argv[1] : "");
	memset(&bp, 0, sizeof(bp));
	bp.backend = argv[2];
	for (i = 0; i < SC_COUNT; i++)
		if (strcmp(argv[3], bench_scenario_names[i]) == 0)
			break;
	if (i == SC_COUNT)
		return bench_child_usage(argv[0], "unknown scenario", argv[3]);
	if (i == SC_SCALING || i == SC_PIPE_PINNED)
		return bench_child_usage(argv[0], "the parent runs scaling as server and "
		                         "pipeline-pinned as pipeline", argv[3]);
	bp.scenario = (enum bench_scenario)i;
	errno = 0;
	v = strtoull(argv[4], &end, 10);
	if (errno || *end || v < 8 || v > (1u << 30))
		return bench_child_usage(argv[0], "bad size", argv[4]);
	bp.size = (size_t)v;
	v = strtoull(argv[5], &end, 10);
	if (errno || *end || v < 1)
		return bench_child_usage(argv[0], "bad count", argv[5]);
	bp.count = v;
	v = strtoull(argv[6], &end, 10);
	if (errno || *end || v < 1 || v > BENCH_MAX_THREADS ||
	    (bp.scenario == SC_PIPELINE && v % 2) || (bp.scenario == SC_XMALLOC && v < 2) ||
	    (bp.scenario == SC_XMTEST && 2 * v > BENCH_MAX_THREADS) ||
	    (bp.scenario == SC_SCRATCH && v > 2 * BENCH_FS_OBJS))
		return bench_child_usage(argv[0], "bad thread count", argv[6]);
	bp.threads = (unsigned int)v;
	bp.live = SRV_LIVE;
	bp.seconds = 30;
	if (!bench_own_threads(bp.scenario) && bp.scenario != SC_RETURN)
		bp.threads = bench_workers_of(&bp);
	for (i = 7; i < argc; i++) {
		if (!strncmp(argv[i], "pin=", 4)) {
			n = bench_parse_cpulist(argv[i] + 4, bp.cpus, BENCH_MAX_CPUS);
			if (n <= 0)
				return bench_child_usage(argv[0], "bad CPU list", argv[i]);
			bp.ncpus = (unsigned int)n;
		} else if (!strncmp(argv[i], "align=", 6)) {
			v = strtoull(argv[i] + 6, &end, 10);
			if (*end || (v & (v - 1)) || v > 4096)
				return bench_child_usage(argv[0], "bad alignment", argv[i]);
			bp.align = (size_t)v;
		} else if (!strncmp(argv[i], "corrupt=", 8)) {
			bp.corrupt = strtoull(argv[i] + 8, &end, 10);
			if (*end || bp.scenario != SC_SERVER)
				return bench_child_usage(argv[0], "bad corrupt= (server only)", argv[i]);
		} else if (!strncmp(argv[i], "live=", 5)) {
			v = strtoull(argv[i] + 5, &end, 10);
			if (*end || v < SRV_LIVE_MIN || v > SRV_LIVE_MAX || bp.scenario != SC_SERVER)
				return bench_child_usage(argv[0], "bad live= (server only, 64..1048576)",
				                         argv[i]);
			bp.live = (unsigned int)v;
		} else if (!strncmp(argv[i], "lifetime=", 9)) {
			if (bp.scenario != SC_SERVER ||
			    (strcmp(argv[i] + 9, "short") && strcmp(argv[i] + 9, "long")))
				return bench_child_usage(argv[0], "bad lifetime= (server only, short or "
				                         "long)", argv[i]);
			bp.lifetime = strcmp(argv[i] + 9, "long") ? SRV_SHORT : SRV_LONG;
		} else if (!strncmp(argv[i], "teardown=", 9)) {
			if (bp.scenario != SC_SERVER ||
			    (strcmp(argv[i] + 9, "burst") && strcmp(argv[i] + 9, "handover")))
				return bench_child_usage(argv[0], "bad teardown= (server only, burst or "
				                         "handover)", argv[i]);
			bp.teardown = strcmp(argv[i] + 9, "handover") ? SRV_BURST : SRV_HANDOVER;
		} else if (!strncmp(argv[i], "seconds=", 8) || !strncmp(argv[i], "idle=", 5)) {
			double *d = argv[i][0] == 's' ? &bp.seconds : &bp.idle;

			*d = strtod(strchr(argv[i], '=') + 1, &end);
			if (*end || *d < 0 || *d > 3600 || bp.scenario != SC_RETURN)
				return bench_child_usage(argv[0], "bad seconds= or idle= (return only, "
				                         "0..3600)", argv[i]);
		} else if (!strncmp(argv[i], "keep=", 5)) {
			unsigned long k = strtoul(argv[i] + 5, &end, 10);

			if (*end || end == argv[i] + 5 || k == 1 || k > 1000000 ||
			    bp.scenario != SC_RETURN)
				return bench_child_usage(argv[0], "bad keep= (return only, 0 or 2..1000000)",
				                         argv[i]);
			bp.keep = (unsigned int)k;
		} else if (!strncmp(argv[i], "calibrate=", 10)) {
			bp.calibrate_ms = strtod(argv[i] + 10, &end);
			if (*end || bp.calibrate_ms < 0 || bp.calibrate_ms > 60000)
				return bench_child_usage(argv[0], "bad calibration time", argv[i]);
		} else {
			return bench_child_usage(argv[0], "unknown key", argv[i]);
		}
	}
	if (bk_setup(&bp, why, sizeof(why)) < 0) {
		printf("unavailable %s\n", why);
		return BENCH_EXIT_UNAVAILABLE;
	}
	if (bench_own_threads(bp.scenario)) {
		unsigned int c;

		for (c = 0; c < SRV_CLASSES; c++)
			srv_sizes[c] = (size_t)8 << c;
		if (bk_server_setup(srv_sizes, SRV_CLASSES, why, sizeof(why)) < 0) {
			bk_teardown();
			printf("unavailable %s\n", why);
			return BENCH_EXIT_UNAVAILABLE;
		}
	}
	base_kb = bench_status_kb("VmRSS");
	fflush(stdout);
	i = bench_run(&bp, &res);
	if (bench_own_threads(bp.scenario))
		bk_server_teardown();
	bk_teardown();
	if (i < 0 || atomic_load(&bench_failed)) {
		printf("error %s, %s scenario: %s\n", bp.backend, argv[3],
		       bench_fail_msg[0] ? bench_fail_msg : "the run failed");
		return BENCH_EXIT_FAILED;
	}
	printf("ok ns=%.4f units=%llu elapsed_ms=%.3f rss_kb=%ld base_kb=%ld", res.ns,
	       (unsigned long long)res.units, res.elapsed_ns / 1e6, bench_status_kb("VmHWM"),
	       base_kb);
	if (bench_own_threads(bp.scenario))
		printf(" cpu_ms=%.3f", res.cpu_ns / 1e6);
	if (res.have_os)
		printf(" os_warm=%llu allocs_warm=%llu os_all=%llu allocs_all=%llu",
		       (unsigned long long)res.os_warm, (unsigned long long)res.allocs_warm,
		       (unsigned long long)res.os_all, (unsigned long long)res.allocs_all);
	if (res.shared >= 0)
		printf(" shared=%.4f", res.shared);
	printf("\n");
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_CHILD_H */
