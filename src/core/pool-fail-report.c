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
 * It runs where memory may be short: everything it writes is built in memory reserved
 * beforehand (the static rows below and the report's stack buffer, pool-report.c) and written
 * with write(2). Names come from libdw (file and line, pool-symbols.c), which allocates, only
 * when the failure is not the OS layer's lack of memory (a limit, fault injection): when the
 * OS layer gave nothing, from dladdr(3), which allocates nothing. When several threads fail at
 * once, the first to take the `reporting` flag reports and the others only count themselves;
 * none waits.
 *
 * Its figures are the profile's (pool-profile-view.c, "How a view is made"): the sites are
 * call stacks, and a pool's exact count in use (used - cached, when the thread registry's lock
 * is free at once) is shared among its sites by their live samples. A view credits the
 * sampled objects lying free in the thread caches first, which the report cannot do (it would
 * stop the threads): when it does not know the cached count, it says so.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "debug/pool-debug.h"
#include "core/pool-fail-report.h"
#include "debug/pool-profile.h"
#include "debug/pool-report.h"
#include "debug/pool-stack.h"
#include "debug/pool-symbols.h"
#include "tcache/pool-thread.h"

#define BURST_GAP_NS  UINT64_C(1000000000)    /* a second without failures ends a burst */
#define REPEAT_NS     UINT64_C(60000000000)   /* a report a minute while a burst lasts */
#define REPORT_SITES  5u                      /* sites a report names */

static atomic_ulong last_fail_ns;             /* the latest failure, any pool */
static atomic_ulong last_report_ns;
static atomic_ulong left_out;                 /* failures not reported since the last report */
static atomic_flag reporting = ATOMIC_FLAG_INIT;
static struct pool_prof_row report_sites[REPORT_SITES];   /* under `reporting` */
static uint64_t report_objects[REPORT_SITES];
static uintptr_t report_stack[POOL_STACK_DEPTH_MAX];

/* CLOCK_MONOTONIC_COARSE: a few ms of resolution is plenty for bursts. Never 0 (0: never). */
static uint64_t coarse_ns(void)
{
	return pool__clock_ns(CLOCK_MONOTONIC_COARSE) + 1;
}

/* Under caller debugging: the callers of the pool's table with the most live objects. */
static size_t top_callers(const struct pool_head *pool, struct pool_prof_row *out, size_t max)
{
	struct pool_caller_live table[POOL_CALLER_SLOTS];
	size_t n = 0, k, i, m = pool__debug_callers(pool, table, POOL_CALLER_SLOTS);

	for (i = 0; i < m; i++) {
		uintptr_t c = table[i].caller;
		long live = table[i].live;

		if (n < max)
			k = n++;
		else if (out[max - 1].live < (uint64_t)live)
			k = max - 1;
		else
			continue;
		for (; k > 0 && out[k - 1].live < (uint64_t)live; k--)
			out[k] = out[k - 1];
		memset(&out[k], 0, sizeof(out[k]));
		out[k].frames[0] = c;
		out[k].depth = 1;
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
	unsigned long cached = 0;
	uint64_t pool_live;
	size_t i;

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
	f.os_failed = !injected && !(f.limit && f.allocated >= f.limit);
	/* the failing call's stack; short of memory, only with unwinders ready (no dlopen()) */
	if (!f.os_failed)
		pool__stack_prepare();
	f.stack = report_stack;
	f.depth = f.os_failed && !pool__stack_ready() ? 0 :
	          pool__stack_capture(report_stack, pool__stack_depth(), caller);
	f.cause = injected ? "fault injection (-dMfail)" :
	          !f.os_failed ? "the pool's limit is reached" :
	          "out of memory (the OS layer gave none)";
	f.suppressed = atomic_exchange_explicit(&left_out, 0, memory_order_relaxed);
	f.profiling = (POOL__DEBUGGING() & POOL_DBG_PROFILE) != 0;
	f.full_names = !f.os_failed;
	f.cached_known = pool__thread_sum_cached_try(pool, &cached) == 0;
	f.in_use = f.used > cached ? f.used - cached : 0;
	if (pool->layout & POOL_DBG_CALLER) {
		f.exact = 1;
		f.nsites = top_callers(pool, report_sites, REPORT_SITES);
	} else {
		f.nsites = pool__prof_top_of(pool, report_sites, REPORT_SITES);
	}
	/* the view's estimate: the pool's objects in use shared by the live samples of its sites */
	pool_live = atomic_load_explicit(&pool->prof_live, memory_order_relaxed);
	for (i = 0; i < f.nsites; i++) {
		const struct pool_prof_row *r = &report_sites[i];

		if (f.exact)
			report_objects[i] = r->live;
		else if (pool_live >= r->live)
			report_objects[i] = (f.in_use * r->live + pool_live / 2) / pool_live;
		else
			report_objects[i] = f.in_use;
	}
	f.sites = report_sites;
	f.objects = report_objects;
	pool__report_failure(&f);
	/* what named its frames stays only for a running profile's views */
	if (f.full_names && !f.profiling)
		pool__sym_release();
	/* the time the report took (libdw may read debugging information) is no gap in a burst */
	atomic_store_explicit(&last_fail_ns, coarse_ns(), memory_order_relaxed);
	atomic_flag_clear_explicit(&reporting, memory_order_release);
}
