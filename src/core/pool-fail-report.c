/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The report of a failed allocation, on stderr, as Seastar prints a memory report when an
 * allocation fails: which pool, why (its limit, no memory, fault injection), what it holds,
 * who called, and which sites hold the most of it. Off by default; on with
 * POOL_DEBUG=fail-report, `pools debug fail-report` or pool_parse_debugging().
 *
 * A failing allocation is often one of thousands in a row (a server at its limit), so the
 * report is made once per burst: for the first failure after a second without any, and then at
 * most once a minute while the burst lasts, with the count of the failures it did not report.
 * It runs where memory is short: everything it writes is built in memory reserved beforehand
 * (the static rows below and the report's stack buffer, pool-report.c) and written with
 * write(2). When several threads fail at once, the first to take the `reporting` flag reports
 * and the others only count themselves; none waits.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "shared/pool-bucket.h"
#include "debug/pool-debug.h"
#include "core/pool-fail-report.h"
#include "debug/pool-profile.h"
#include "debug/pool-report.h"

#define BURST_GAP_NS  UINT64_C(1000000000)    /* a second without failures ends a burst */
#define REPEAT_NS     UINT64_C(60000000000)   /* a report a minute while a burst lasts */
#define REPORT_SITES  5u                      /* sites a report names */

static atomic_ulong last_fail_ns;             /* the latest failure, any pool */
static atomic_ulong last_report_ns;
static atomic_ulong left_out;                 /* failures not reported since the last report */
static atomic_flag reporting = ATOMIC_FLAG_INIT;
static struct pool_prof_row report_sites[REPORT_SITES];   /* under `reporting` */

/* CLOCK_MONOTONIC_COARSE: a few ms of resolution is plenty for bursts, and it is cheap. */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
}

/* Under caller debugging: the callers of the pool's table with the most live objects. */
static size_t top_callers(const struct pool_head *pool, struct pool_prof_row *out, size_t max)
{
	size_t n = 0, k;
	unsigned int i;

	for (i = 0; i < POOL_CALLER_SLOTS; i++) {
		uintptr_t c = atomic_load_explicit(&pool->callers[i].caller, memory_order_relaxed);
		long live = atomic_load_explicit(&pool->callers[i].live, memory_order_relaxed);

		if (!c || live <= 0)
			continue;
		if (n < max)
			k = n++;
		else if (out[max - 1].live < (uint64_t)live)
			k = max - 1;
		else
			continue;
		for (; k > 0 && out[k - 1].live < (uint64_t)live; k--)
			out[k] = out[k - 1];
		memset(&out[k], 0, sizeof(out[k]));
		out[k].site = c;
		out[k].live = (uint64_t)live;
		out[k].weight = 1;
	}
	return n;
}

void pool__fail_report(struct pool_head *pool, const void *caller, int injected)
{
	uint64_t now = coarse_ns();
	uint64_t prev = atomic_exchange_explicit(&last_fail_ns, now, memory_order_relaxed);
	uint64_t last = atomic_load_explicit(&last_report_ns, memory_order_relaxed);
	struct pool_fail_info f;
	struct pool_stats st;

	if ((prev && now - prev < BURST_GAP_NS && now - last < REPEAT_NS) ||
	    atomic_flag_test_and_set_explicit(&reporting, memory_order_acquire)) {
		atomic_fetch_add_explicit(&left_out, 1, memory_order_relaxed);
		return;
	}
	atomic_store_explicit(&last_report_ns, now, memory_order_relaxed);
	memset(&f, 0, sizeof(f));
	memset(&st, 0, sizeof(st));
	pool__bucket_stats(pool, &st);
	f.pool = pool;
	f.caller = caller;
	f.limit = atomic_load_explicit(&pool->limit, memory_order_relaxed);
	f.allocated = st.allocated;
	f.used = st.used;
	f.failed = st.failed;
	f.cause = injected ? "fault injection (-dMfail)" :
	          f.limit && f.allocated >= f.limit ? "the pool's limit is reached" :
	          "out of memory (the OS layer gave none)";
	f.suppressed = atomic_exchange_explicit(&left_out, 0, memory_order_relaxed);
	f.profiling = (POOL__DEBUGGING() & POOL_DBG_PROFILE) != 0;
	if (pool->layout & POOL_DBG_CALLER) {
		f.exact = 1;
		f.nsites = top_callers(pool, report_sites, REPORT_SITES);
	} else {
		f.nsites = pool__prof_top_of(pool, report_sites, REPORT_SITES);
	}
	f.sites = report_sites;
	pool__report_failure(&f);
	atomic_flag_clear_explicit(&reporting, memory_order_release);
}
