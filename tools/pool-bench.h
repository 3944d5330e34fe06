/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench.h - what pool-bench and its child programs agree on: the scenarios and their
 * constants, a child's command line and its result line.
 *
 * pool-bench measures every backend in a child process of its own (doc/benchmarks.md): itself
 * for libpool (pool-bench-libpool.c), pool-bench-malloc for glibc, jemalloc, tcmalloc and
 * mimalloc (malloc() of whatever allocator the parent put in LD_PRELOAD; it links neither
 * libpool nor jemalloc), pool-bench-dpdk for DPDK's rte_mempool. Each child program includes
 * pool-bench-child.h; the parent's files include pool-bench-parent.h.
 *
 *   <program> --child <backend> <scenario> <size> <count> <threads> [key=value...]
 * keys: pin=<cpu list> (thread i runs on the i-th CPU of the list, modulo its length; absent:
 * threads keep the affinity they inherit), align=<bytes> (object alignment, false-sharing),
 * calibrate=<ms> (run with growing counts until one run lasts that long, and report that run),
 * corrupt=<n> (server, a self-test of the object check: thread 0 flips a bit of its n-th
 * allocation in the first round, which must make the run fail), live=<n> (server: live
 * objects per thread, 64..1048576, default 2048), lifetime=short|long (server: threads created
 * and joined in rounds, or one round of threads that live the whole run; default short),
 * teardown=burst|handover (server: a thread frees its whole live set before it exits, or
 * leaves it to the next thread of its lineage; default burst), seconds=<s> and idle=<s>
 * (return: how long the light load runs after the burst, 30 by default, and how long the child
 * then stays idle, 0 by default), keep=<n> (return: every n-th object of each burst stays live
 * through the curve, 2..1000000; 0, the default: none).
 * <count> is the number of units timed, over all threads: alloc+free pairs (pair, batch,
 * bulk, threads), objects passed (pipeline), allocations (server, larson, xmalloc, mstress,
 * larson-mb), objects freed (xmalloc-test) or writes (false-sharing, cache-scratch); for
 * return, the objects of each thread's burst (its curve: pool-bench-return.h). <threads> of
 * xmalloc-test is its producers, as many consumers run beside them.
 *
 * The child prints zero or more "placement <thread>:<Cpus_allowed_list> ..." lines (read from
 * /proc/thread-self/status by each thread once it is placed), then one result line:
 *   ok ns=<ns per unit> units=<units> elapsed_ms=<ms> rss_kb=<VmHWM> base_kb=<VmRSS before>
 *      [cpu_ms=<user+sys>] [os_warm=.. allocs_warm=.. os_all=.. allocs_all=..]
 *      [shared=<fraction>]
 * or "unavailable <why>" (exit 3) or "error <why>" (exit 1: an allocation failed or an object
 * came back corrupted). Bad arguments: exit 2. cpu_ms (server, larson, xmalloc and the public
 * shapes of pool-bench-public.h) is the CPU time of the timed part, user plus system, from
 * getrusage(RUSAGE_SELF) at its start and end.
 */
#ifndef POOL_TOOLS_POOL_BENCH_H
#define POOL_TOOLS_POOL_BENCH_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NOINLINE    __attribute__((noinline))
#define BENCH_UNUSED      __attribute__((unused))   /* not every child needs it */
#define BENCH_BATCH       64u      /* batch: live objects, freed LIFO */
#define BENCH_BULK        32u      /* bulk: objects per bulk call */
#define BENCH_RING        1024u    /* pipeline: producer/consumer queue slots */
#define BENCH_MAX_THREADS 1024u
#define BENCH_MAX_CPUS    1024u
#define BENCH_EXIT_FAILED 1
#define BENCH_EXIT_USAGE  2
#define BENCH_EXIT_UNAVAILABLE 3
#define BENCH_CHUNK       4096u    /* pairs per call of a measured loop */
#define BENCH_LINE        64u      /* cache line size assumed by false-sharing */
#define BENCH_FS_OBJS     64u      /* false-sharing: objects per thread */
#define BENCH_ALIAS       4096u    /* loads match stores in flight on these low address bits */

/* server (its shape: pool-bench-server.h) */
#define SRV_CLASSES       12u      /* 8 B .. 16 KiB */
#define SRV_LIVE          2048u    /* default live slots per thread */
#define SRV_LIVE_MIN      64u
#define SRV_LIVE_MAX      (1u << 20)
#define SRV_TRANSFER      256u     /* per size class */
#define SRV_STEPS         20000u   /* least allocations per thread and round */
#define SRV_MIN_ROUNDS    2u
#define SRV_COOKIE        0x5bd1e9955bd1e995ull

/* larson and xmalloc (their shapes: pool-bench-server.h) */
#define LAR_OBJECTS       10000u   /* objects per lineage (the Hoard distribution's example) */
#define LAR_STEPS         20000u   /* replacements per thread before it hands over */
#define LAR_MIN_SIZE      16u
#define LAR_MAX_SIZE      512u
#define XM_BATCH          64u
#define XM_INFLIGHT       4u

/* cache-scratch (its shape: pool-bench-false-sharing.h): writes to an object between frees */
#define SCRATCH_WRITES    256u

/* the public shapes (pool-bench-public.h), with their published parameters */
#define MS_SCALE          10u      /* mstress: test-stress's default SCALE */
#define MS_TRANSFERS      1000u    /* mstress: slots of the array shared by all threads */
#define LMB_MIN           8u       /* larson-mb: mimalloc-bench's `larson 5 8 1000 5000 100 4141` */
#define LMB_MAX           1000u    /*   sizes MIN..MAX-1 bytes, */
#define LMB_CHUNKS        5000u    /*   objects per thread, */
#define LMB_ROUNDS        100u     /*   replacements per thread: ROUNDS x CHUNKS, */
#define LMB_SEED          4141u    /*   the seed */
#define XMT_SIZE          64u      /* xmalloc-test: mimalloc-bench's `-s 64` */
#define XMT_BATCH         4096u    /* xmalloc-test: objects per batch */
#define XMT_LIMIT         100u     /* xmalloc-test: batches queued at most */

enum bench_scenario { SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_SERVER,
                      SC_FSHARE, SC_LARSON, SC_XMALLOC, SC_SCRATCH, SC_SCALING, SC_MSTRESS,
                      SC_LARSON_MB, SC_XMTEST, SC_PIPE_PINNED, SC_LOOP, SC_RETURN, SC_COUNT };

enum srv_lifetime { SRV_SHORT, SRV_LONG };
enum srv_teardown { SRV_BURST, SRV_HANDOVER };

/*
 * "loop" and "return" are not scenarios of the table: the pair loop without an allocator, and
 * the return curve of `pool-bench --return-curve` (pool-bench-return.h). "scaling" and
 * "pipeline-pinned" are the parent's: rows of server and pipeline with pin lists of their own.
 */
static const char *const bench_scenario_names[SC_COUNT] = {
	"pair", "batch", "bulk", "pipeline", "threads", "server", "false-sharing", "larson",
	"xmalloc", "cache-scratch", "scaling", "mstress", "larson-mb", "xmalloc-test",
	"pipeline-pinned", "loop", "return"
};

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Parse a CPU list ("0-3,6,8-9") into cpus[] in the order written. Returns the count, or -1
 * for a malformed list, a CPU number >= CPU_SETSIZE, or more than `max` entries.
 */
static BENCH_UNUSED int bench_parse_cpulist(const char *s, int *cpus, unsigned int max)
{
	unsigned int n = 0;
	const char *p = s;

	if (!*p)
		return -1;
	while (*p) {
		char *end;
		long a, b;

		if (*p < '0' || *p > '9')
			return -1;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -1;
			b = strtol(end + 1, &end, 10);
		}
		if (a < 0 || b < a || b >= CPU_SETSIZE || (*end && *end != ','))
			return -1;
		for (; a <= b; a++) {
			if (n == max)
				return -1;
			cpus[n++] = (int)a;
		}
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			return -1;
	}
	return (int)n;
}

/* Format a CPU set as a list ("0-1,4"). */
static BENCH_UNUSED void bench_format_cpuset(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;
	int c, start = -1;

	buf[0] = 0;
	for (c = 0; c <= CPU_SETSIZE && used < len; c++) {
		int in = c < CPU_SETSIZE && CPU_ISSET(c, set);

		if (in && start < 0)
			start = c;
		if (!in && start >= 0) {
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", start);
			if (c - 1 > start && used < len)
				used += (size_t)snprintf(buf + used, len - used, "-%d", c - 1);
			start = -1;
		}
	}
}

/* aligned_alloc() on cache lines; C11 wants the size to be a multiple of the alignment. */
static BENCH_UNUSED void *bench_line_alloc(size_t size)
{
	return aligned_alloc(64, (size + 63) / 64 * 64);
}

/* server: allocations per thread and round. */
static BENCH_UNUSED uint64_t srv_steps(unsigned int live)
{
	return 2ull * live > SRV_STEPS ? 2ull * live : SRV_STEPS;
}

#endif /* POOL_TOOLS_POOL_BENCH_H */
