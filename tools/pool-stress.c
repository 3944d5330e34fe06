/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-stress - the 48+ thread stress harness of libpool (`make stress`).
 *
 * Runs one or several workloads (local, pipeline, bleed, mixed, spike; see doc/stress.md), each
 * for --seconds on --threads threads. What the threads do, and the canary that every object
 * carries and that is checked before it is freed, is pool-stress-workloads.c; this file sets up
 * each workload's pools and threads, runs it, checks its books and prints the results.
 *
 * After each workload, once every worker thread has exited (which flushes its thread caches),
 * each of its pools must have used == 0 and allocated == shared_free + slab_free (every object
 * carved from the pool's slabs sits in a shared free list or free in its slab); otherwise the
 * harness says what is wrong and exits 1.
 *
 * Allocation failures are counted, never taken for corruption. Under -dMfail=<percent> they
 * are asked for; without it (the harness sets no limit) a NULL means the library or the OS
 * layer ran out of something, and any such NULL fails the workload. Either way a workload
 * fails when it got no object at all, or when one of its threads got none in STARVED_ATTEMPTS
 * attempts or more (-dMfail=100 included: a run that allocates nothing checks nothing): under
 * an address-space limit, new threads can be refused every object while the others go on.
 *
 * Exit status (tools/tool.h): 0 all workloads passed, 1 corruption or wrong accounting, 2 bad
 * usage, 3 cannot start (pools, threads or the --json file cannot be created). See
 * pool-stress(1).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pool/pool.h>

#include "pool-stress.h"
#include "tool.h"

const char *tool_name = "pool-stress";

#define MAX_THREADS      1024u
#define MAX_SECONDS      86400.0
#define LOCAL_DEPTH      256u     /* local: live objects per thread, at most */
#define UAF_DEPTH        32u      /* ... with -dMuaf, which maps every object on its own */
#define MIXED_BIG_SIZE   (2u << 20)
#define SPIKE_OBJ_SIZE   1024u
#define SPIKE_BYTES      (64u << 20)  /* spike: working set over all threads at its peak */
#define SPIKE_UAF_OBJS   4096u    /* ... in objects with -dMuaf */
/*
 * A thread whose attempts all failed, this many or more, is starved: at -dMfail=50, the chance
 * that 64 draws in a row fail is 2^-64.
 */
#define STARVED_ATTEMPTS 64u
#define SOAK_POOLS       4u
#define SOAK_DEPTH       64u      /* soak: objects a worker allocates in one batch, at most */
#define SOAK_RSS_SLACK_KB (24L << 10)   /* soak: RSS at the end may exceed the start by this */

/*
 * AddressSanitizer and ThreadSanitizer keep the shadow of every page the program touched
 * resident, and ThreadSanitizer's allocator (which replaces the C library's) keeps what it
 * freed: in their builds the soak reports its RSS but does not check it (a 0.5 s soak under
 * TSan ended at 254 MiB from 13 MiB).
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

const char *const wl_names[WL_COUNT] = { "local", "pipeline", "bleed", "mixed", "spike",
                                         "soak" };

/* The workloads run when --workload is not given: all but soak (make soak runs it). */
#define WL_DEFAULT ((1u << WL_SOAK) - 1)

struct wl_result {
	const char *name;
	double elapsed;
	uint64_t ops, failures, allocs;
	int ok;
	char error[512];
	/* spike only */
	int has_spike;
	size_t peak_allocated, before_gc, after_gc, needed_avg, keep_bound;
	long rss_peak_kb, rss_after_kb;
	unsigned int cycles;
	/* soak only */
	int has_soak;
	struct soak_counts soak;
};

static int uaf_on;
static char *debugging_text(void);

static struct pool_head *all_pools[WL_COUNT * MAX_POOLS_PER_WL];
static unsigned int nb_all_pools;

static int add_pool(struct run *r, const char *name, size_t size)
{
	struct pool_head *p = pool_create(name, size, 0);

	if (!p) {
		fprintf(stderr, "pool-stress: cannot create pool '%s' of %zu bytes: %s\n", name, size,
		        strerror(errno));
		return -1;
	}
	r->pools[r->npools] = p;
	r->sizes[r->npools] = pool_object_size(p);
	r->npools++;
	all_pools[nb_all_pools++] = p;
	return 0;
}

static int setup_pools(struct run *r)
{
	static const size_t mixed_sizes[] = { 32, 64, 256, 1024, 4096, 16384 };
	char name[32];
	size_t i;

	switch (r->wl) {
	case WL_LOCAL:
		return add_pool(r, "stress-local-64", 64) || add_pool(r, "stress-local-1k", 1024);
	case WL_PIPELINE:
		return add_pool(r, "stress-pipeline", 256);
	case WL_BLEED:
		return add_pool(r, "stress-bleed", 128);
	case WL_MIXED:
		for (i = 0; i < sizeof(mixed_sizes) / sizeof(mixed_sizes[0]); i++) {
			snprintf(name, sizeof(name), "stress-mixed-%zu", mixed_sizes[i]);
			if (add_pool(r, name, mixed_sizes[i]))
				return -1;
		}
		return add_pool(r, "stress-mixed-2m", MIXED_BIG_SIZE);
	case WL_SPIKE:
		return add_pool(r, "stress-spike", SPIKE_OBJ_SIZE);
	case WL_SOAK:
		for (i = 0; i < SOAK_POOLS; i++) {
			static const size_t soak_sizes[SOAK_POOLS] = { 64, 256, 1024, 16384 };

			snprintf(name, sizeof(name), "soak-%zu", soak_sizes[i]);
			if (add_pool(r, name, soak_sizes[i]))
				return -1;
		}
		return 0;
	case WL_COUNT:
		break;
	}
	return -1;
}

/* Append a message to res->error, separated by "; ", truncated to fit. */
static void __attribute__((format(printf, 2, 3))) add_error(struct wl_result *res,
                                                            const char *fmt, ...)
{
	size_t len = strlen(res->error);
	va_list ap;

	if (len && len + 2 < sizeof(res->error)) {
		strcpy(res->error + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(res->error + len, sizeof(res->error) - len, fmt, ap);
	va_end(ap);
}

/*
 * After every worker exited and the main thread flushed its caches: used == 0 and allocated ==
 * shared_free + cached + slab_free (cached is 0 by then) in each pool of the run.
 */
static int check_accounting(const struct run *r, struct wl_result *res)
{
	unsigned int i;
	int ok = 1;

	for (i = 0; i < r->npools; i++) {
		struct pool_stats st;

		pool_get_stats(r->pools[i], &st, sizeof(st));
		if (st.used != 0) {
			ok = 0;
			add_error(res, "pool '%s': used=%zu after every thread exited (expected 0)",
			          pool_name(r->pools[i]), st.used);
		}
		if (st.allocated != st.shared_free + st.cached + st.slab_free) {
			ok = 0;
			add_error(res, "pool '%s': allocated=%zu but the shared free lists hold %zu, "
			          "the caches %zu and the slabs %zu free (expected the sum)",
			          pool_name(r->pools[i]), st.allocated, st.shared_free, st.cached,
			          st.slab_free);
		}
	}
	return ok;
}

/*
 * spike, after the workers exited: pool_gc() keeps what is in use and the pool's reserve, and
 * gives the rest back to the slabs. What the pool holds above its slabs (`allocated` less the
 * objects free in its slabs) must be under a bound that also allows for a demand estimate and
 * a cluster still cached (max(used, needed_avg * 5/4) + cluster), and `allocated` below the
 * peak when the peak was above it: the slabs emptied went back.
 */
static int check_spike(struct run *r, struct wl_result *res)
{
	struct pool_config cfg;
	struct pool_stats st;
	size_t bound;

	pool_get_config(&cfg);
	pool_get_stats(r->pools[0], &st, sizeof(st));
	res->has_spike = 1;
	res->cycles = r->spike_cycles;
	res->peak_allocated = r->spike_peak_allocated;
	res->before_gc = st.allocated;
	res->rss_peak_kb = r->spike_rss_peak_kb;
	pool_gc(r->pools[0]);
	pool_get_stats(r->pools[0], &st, sizeof(st));
	res->after_gc = st.allocated;
	res->needed_avg = st.needed_avg;
	res->rss_after_kb = rss_kb();
	bound = st.needed_avg + st.needed_avg / 4;
	if (bound < st.used)
		bound = st.used;
	bound += cfg.cluster;
	res->keep_bound = bound;
	if (st.allocated - st.slab_free > bound) {
		add_error(res, "pool_gc() left allocated=%zu (%zu of them free in slabs) above "
		          "the bound max(used, needed_avg*5/4) + cluster = %zu", st.allocated,
		          st.slab_free, bound);
		return 0;
	}
	if (res->peak_allocated > bound && res->after_gc >= res->peak_allocated) {
		add_error(res, "memory did not come back: allocated=%zu after pool_gc(), peak %zu",
		          res->after_gc, res->peak_allocated);
		return 0;
	}
	return 1;
}

/* soak, main thread, every 200 ms: replace the workers that returned; note the RSS peak. */
static void soak_tend(struct run *r)
{
	long rss = rss_kb();
	unsigned int i;
	int err;

	if (rss > r->soak.rss_peak_kb)
		r->soak.rss_peak_kb = rss;
	for (i = 0; i < r->nthreads; i++) {
		struct worker *w = &r->workers[i];

		if (!atomic_load(&w->done))
			continue;
		pthread_join(w->thread, NULL);
		atomic_store(&w->done, 0);
		w->lives++;
		r->soak.restarts++;
		err = pthread_create(&w->thread, NULL, worker_main, w);
		if (err) {
			fprintf(stderr, "pool-stress: cannot restart thread %u: %s\n", i,
			        strerror(err));
			exit(TOOL_EXIT_UNAVAILABLE);
		}
	}
}

/*
 * soak, after the books were checked: every object back to the OS layer (pool_flush() of each
 * pool, pool_trim()), then the RSS must be back near where it started: at most
 * SOAK_RSS_SLACK_KB (24 MiB) above it. That is what a process may keep after such a run
 * without holding a single pool object: jemalloc's metadata, never returned, for up to one
 * arena per live thread (measured: 7.5 MiB of RSS for 48 arenas, on a machine with 48 CPUs or
 * more; 1.7 MiB with the 8 arenas of a 2-core machine), the stacks of exited threads, which
 * glibc caches for reuse with the pages they touched, and the pages jemalloc keeps between
 * purges. Measured on the 2-core development machine, a 5-minute soak at 48 threads (load
 * average 200-330) went from 4.7 MiB to a peak of 141 MiB and ended at 8.4 MiB, 3.7 MiB above
 * its start: the bound catches any failure to give back more than a sixth of such a peak.
 * Not checked in sanitizer builds (RSS_CHECKED).
 */
static int check_soak(struct run *r, struct wl_result *res)
{
	unsigned int i;
	int ok = 1;

	for (i = 0; i < r->npools; i++)
		pool_flush(r->pools[i]);
	pool_trim();
	r->soak.rss_end_kb = rss_kb();
	res->has_soak = 1;
	res->soak = r->soak;
	if (r->soak.error[0]) {
		add_error(res, "%s failed during the run", r->soak.error);
		ok = 0;
	}
	if (RSS_CHECKED && r->soak.rss_end_kb > r->soak.rss_start_kb + SOAK_RSS_SLACK_KB) {
		add_error(res, "RSS did not come back: %ld KiB at the end, %ld KiB at the start "
		          "(bound: the start + %ld KiB), %ld KiB at the peak", r->soak.rss_end_kb,
		          r->soak.rss_start_kb, SOAK_RSS_SLACK_KB, r->soak.rss_peak_kb);
		ok = 0;
	}
	return ok;
}

static uint64_t total_ops(const struct run *r)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < r->nthreads; i++)
		s += atomic_load_explicit(&r->workers[i].ops, memory_order_relaxed);
	return s;
}

/* The percentage of -dMfail in effect (0 without it), read from the debugging options text. */
static unsigned int fail_percent(void)
{
	char *txt, *at;
	unsigned int pct = 0;

	if (!(pool_debugging & POOL_DBG_FAIL))
		return 0;
	txt = debugging_text();
	if (txt && (at = strstr(txt, "fail=")) != NULL)
		pct = (unsigned int)strtoul(at + 5, NULL, 10);
	free(txt);
	return pct;
}

static int run_workload(const struct options *opt, enum workload wl, struct wl_result *res)
{
	struct run r;
	unsigned int i;
	double start, end, t, last_t;
	uint64_t last_ops = 0;
	int tty = isatty(STDOUT_FILENO);
	unsigned int starved = 0, starved_first = 0;
	pthread_t chaos;
	int err;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	res->name = wl_names[wl];
	r.opt = opt;
	r.wl = wl;
	r.nthreads = opt->threads;
	r.depth = uaf_on ? UAF_DEPTH : (wl == WL_MIXED ? 64 : wl == WL_SOAK ? SOAK_DEPTH :
	                                LOCAL_DEPTH);
	r.queue_cap = uaf_on ? 32 : 256;
	if (setup_pools(&r))
		return -1;

	r.workers = aligned_alloc(64, sizeof(*r.workers) * r.nthreads);
	if (!r.workers)
		return -1;
	memset(r.workers, 0, sizeof(*r.workers) * r.nthreads);
	if (wl == WL_SPIKE) {
		size_t total = uaf_on ? SPIKE_UAF_OBJS : SPIKE_BYTES / SPIKE_OBJ_SIZE;

		r.spike_per_thread = total / r.nthreads ? total / r.nthreads : 1;
	}
	if (wl == WL_PIPELINE) {
		r.rings = aligned_alloc(64, sizeof(*r.rings) * r.nthreads);
		if (!r.rings)
			return -1;
		memset(r.rings, 0, sizeof(*r.rings) * r.nthreads);
		for (i = 0; i < r.nthreads; i++) {
			r.rings[i].mask = r.queue_cap - 1;
			r.rings[i].slot = calloc(r.queue_cap, sizeof(void *));
			if (!r.rings[i].slot)
				return -1;
		}
	}
	if (wl == WL_BLEED || wl == WL_SOAK) {
		r.inboxes = aligned_alloc(64, sizeof(*r.inboxes) * r.nthreads);
		if (!r.inboxes)
			return -1;
		for (i = 0; i < r.nthreads; i++) {
			pthread_mutex_init(&r.inboxes[i].lock, NULL);
			r.inboxes[i].count = 0;
			r.inboxes[i].cap = r.queue_cap;
			r.inboxes[i].slot = calloc(r.queue_cap, sizeof(void *));
			if (!r.inboxes[i].slot)
				return -1;
		}
	}
	pthread_barrier_init(&r.barrier, NULL, r.nthreads + (wl == WL_SPIKE ? 0 : 1));
	if (wl == WL_SOAK) {
		/* the process before the load: what RSS must come back near at the end */
		r.soak.rss_start_kb = r.soak.rss_peak_kb = rss_kb();
		r.soak_flags = pool_debugging;
		r.soak_fail_pct = fail_percent();
	}

	for (i = 0; i < r.nthreads; i++) {
		struct worker *w = &r.workers[i];

		w->id = i;
		w->run = &r;
		w->rng = UINT64_C(0x9E3779B97F4A7C15) * (i + 1) ^ (uint64_t)wl << 56;
		w->live_cap = wl == WL_SPIKE ? r.spike_per_thread : (r.queue_cap > LOCAL_DEPTH ?
		                                                     r.queue_cap : LOCAL_DEPTH);
		w->live = calloc(w->live_cap, sizeof(void *));
		if (!w->live)
			return -1;
		w->lives = 1;
		err = pthread_create(&w->thread, NULL, worker_main, w);
		if (err) {
			fprintf(stderr, "pool-stress: cannot start thread %u: %s\n", i, strerror(err));
			exit(TOOL_EXIT_UNAVAILABLE);
		}
	}
	if (wl == WL_SOAK) {
		err = pthread_create(&chaos, NULL, soak_chaos, &r);
		if (err) {
			fprintf(stderr, "pool-stress: cannot start the chaos thread: %s\n",
			        strerror(err));
			exit(TOOL_EXIT_UNAVAILABLE);
		}
	}
	/* the spike workers synchronise among themselves; soak's start at once; the others wait
	 * for main to start */
	if (wl != WL_SPIKE && wl != WL_SOAK)
		pthread_barrier_wait(&r.barrier);
	start = now_s();
	end = start + opt->seconds;
	last_t = start;
	while ((t = now_s()) < end) {
		double left = end - t;
		struct timespec ts;

		if (left > 0.2)
			left = 0.2;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
		if (wl == WL_SOAK)
			soak_tend(&r);
		if (tty) {
			uint64_t ops = total_ops(&r);

			t = now_s();
			printf("\r  %-9s %5.1f/%.1fs  %10.0f ops/s", wl_names[wl], t - start,
			       opt->seconds, (double)(ops - last_ops) / (t - last_t));
			fflush(stdout);
			last_ops = ops;
			last_t = t;
		}
	}
	atomic_store(&r.stop, 1);
	if (wl == WL_PIPELINE || wl == WL_BLEED) {
		/* the workers' drain barrier counts main too */
		pthread_barrier_wait(&r.barrier);
	}
	if (wl == WL_SOAK)
		pthread_join(chaos, NULL);
	for (i = 0; i < r.nthreads; i++)
		pthread_join(r.workers[i].thread, NULL);
	res->elapsed = now_s() - start;
	if (tty)
		printf("\r%60s\r", "");
	if (wl == WL_SOAK)
		soak_settle(&r);
	pool_thread_flush();

	res->ok = 1;
	for (i = 0; i < r.nthreads; i++) {
		uint64_t got = atomic_load(&r.workers[i].allocs);
		uint64_t nulls = atomic_load(&r.workers[i].failures);

		res->ops += atomic_load(&r.workers[i].ops);
		res->failures += nulls;
		res->allocs += got;
		if (!got && nulls >= STARVED_ATTEMPTS) {
			if (!starved++)
				starved_first = i;
		}
		free(r.workers[i].live);
	}
	if (!res->allocs && res->failures) {
		res->ok = 0;
		add_error(res, "no allocation succeeded: all %llu returned NULL",
		          (unsigned long long)res->failures);
	} else if (starved) {
		res->ok = 0;
		add_error(res, "%u thread(s) got no object in %u attempts or more (thread %u: %llu "
		          "NULLs)", starved, STARVED_ATTEMPTS, starved_first,
		          (unsigned long long)atomic_load(&r.workers[starved_first].failures));
	}
	/* the harness sets no limit (but in soak): only -dMfail may make pool_alloc() answer NULL */
	if (res->failures && !(pool_debugging & POOL_DBG_FAIL) && wl != WL_SOAK) {
		res->ok = 0;
		add_error(res, "%llu allocations returned NULL without -dMfail (no limit is set: "
		          "the library or the OS layer ran out)", (unsigned long long)res->failures);
	}
	if (wl == WL_SPIKE && !check_spike(&r, res))
		res->ok = 0;
	if (!check_accounting(&r, res))
		res->ok = 0;
	if (wl == WL_SOAK && !check_soak(&r, res))
		res->ok = 0;

	pthread_barrier_destroy(&r.barrier);
	if (r.rings) {
		for (i = 0; i < r.nthreads; i++)
			free(r.rings[i].slot);
		free(r.rings);
	}
	if (r.inboxes) {
		for (i = 0; i < r.nthreads; i++) {
			pthread_mutex_destroy(&r.inboxes[i].lock);
			free(r.inboxes[i].slot);
		}
		free(r.inboxes);
	}
	free(r.workers);
	return 0;
}

static void print_summary(const struct options *opt, const struct wl_result *res, unsigned int n)
{
	unsigned int i;

	printf("\n%-9s %7s %8s %14s %14s %16s %10s  %s\n", "workload", "threads", "seconds",
	       "operations", "ops/s", "ops/s/thread", "failures", "result");
	for (i = 0; i < n; i++) {
		double rate = res[i].elapsed > 0 ? (double)res[i].ops / res[i].elapsed : 0;

		printf("%-9s %7u %8.2f %14llu %14.0f %16.0f %10llu  %s\n", res[i].name, opt->threads,
		       res[i].elapsed, (unsigned long long)res[i].ops, rate, rate / opt->threads,
		       (unsigned long long)res[i].failures, res[i].ok ? "ok" : "FAILED");
	}
	for (i = 0; i < n; i++) {
		if (res[i].has_spike)
			printf("\nspike: %u cycles; allocated objects: peak %zu, before pool_gc %zu, "
			       "after %zu (needed_avg %zu, keep bound %zu); RSS %ld KiB -> %ld KiB\n",
			       res[i].cycles, res[i].peak_allocated, res[i].before_gc, res[i].after_gc,
			       res[i].needed_avg, res[i].keep_bound, res[i].rss_peak_kb,
			       res[i].rss_after_kb);
		if (res[i].has_soak)
			printf("\nsoak: %lu thread replacements, %lu switch flips, %lu pool_gc, "
			       "%lu pool_trim, %lu pool_flush, %lu pool_set_limit, %lu pools show; "
			       "RSS %ld KiB at the start, %ld KiB at the peak, %ld KiB at the end\n",
			       res[i].soak.restarts, res[i].soak.flips, res[i].soak.gcs,
			       res[i].soak.trims, res[i].soak.flushes, res[i].soak.limits,
			       res[i].soak.dumps, res[i].soak.rss_start_kb, res[i].soak.rss_peak_kb,
			       res[i].soak.rss_end_kb);
		if (!res[i].ok)
			printf("%s: FAILED: %s\n", res[i].name, res[i].error);
	}
}

/* The debugging options in effect, in the parser's syntax, without the newline (malloc'd). */
static char *debugging_text(void)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&txt, &len);

	if (!mf)
		return NULL;
	pool_debugging_show(mf);
	if (fclose(mf) != 0) {
		free(txt);
		return NULL;
	}
	if (len && txt[len - 1] == '\n')
		txt[len - 1] = 0;
	return txt;
}

/* Our "pools show": one line per pool with the counters the accounting checks. */
static void print_pools(FILE *out)
{
	char *dbg = debugging_text();
	unsigned int i;

	fprintf(out, "\npools show (debugging: %s; used counts the objects lying free in thread "
	        "caches too, cached of them)\n", dbg ? dbg : "?");
	fprintf(out, "%-18s %8s %10s %8s %8s %12s %11s %8s\n", "pool", "size", "allocated",
	        "used", "cached", "shared_free", "needed_avg", "failed");
	for (i = 0; i < nb_all_pools; i++) {
		struct pool_stats st;

		pool_get_stats(all_pools[i], &st, sizeof(st));
		fprintf(out, "%-18s %8zu %10zu %8zu %8zu %12zu %11zu %8zu\n", pool_name(all_pools[i]),
		        st.size, st.allocated, st.used, st.cached, st.shared_free, st.needed_avg,
		        st.failed);
	}
	free(dbg);
	fputc('\n', out);
	pool_dump(out, "byname");
}

/* The results as JSON into f (opened on --json at start, so that a bad path fails at once). */
static int write_json(FILE *f, const struct options *opt, const struct wl_result *res,
                      unsigned int n, int ok)
{
	char *dbg;
	unsigned int i;

	dbg = debugging_text();
	fprintf(f, "{\n  \"threads\": %u,\n  \"seconds\": %g,\n  \"debugging\": ", opt->threads,
	        opt->seconds);
	pool_json_write_string(f, dbg ? dbg : "");
	free(dbg);
	fprintf(f, ",\n  \"result\": \"%s\",\n  \"workloads\": [\n", ok ? "ok" : "failed");
	for (i = 0; i < n; i++) {
		double rate = res[i].elapsed > 0 ? (double)res[i].ops / res[i].elapsed : 0;

		fprintf(f, "    {\"name\": ");
		pool_json_write_string(f, res[i].name);
		fprintf(f, ", \"elapsed_s\": %.3f, \"operations\": %llu, "
		        "\"ops_per_s\": %.0f, \"ops_per_s_per_thread\": %.0f, \"failures\": %llu, "
		        "\"ok\": %s, \"error\": ", res[i].elapsed,
		        (unsigned long long)res[i].ops, rate, rate / opt->threads,
		        (unsigned long long)res[i].failures, res[i].ok ? "true" : "false");
		pool_json_write_string(f, res[i].error);
		if (res[i].has_spike)
			fprintf(f, ", \"spike\": {\"cycles\": %u, \"peak_allocated\": %zu, "
			        "\"before_gc\": %zu, \"after_gc\": %zu, \"needed_avg\": %zu, "
			        "\"keep_bound\": %zu, \"rss_peak_kb\": %ld, \"rss_after_kb\": %ld}",
			        res[i].cycles, res[i].peak_allocated, res[i].before_gc, res[i].after_gc,
			        res[i].needed_avg, res[i].keep_bound, res[i].rss_peak_kb,
			        res[i].rss_after_kb);
		if (res[i].has_soak)
			fprintf(f, ", \"soak\": {\"restarts\": %lu, \"flips\": %lu, \"gcs\": %lu, "
			        "\"trims\": %lu, \"flushes\": %lu, \"limits\": %lu, \"dumps\": %lu, "
			        "\"rss_start_kb\": %ld, \"rss_peak_kb\": %ld, \"rss_end_kb\": %ld}",
			        res[i].soak.restarts, res[i].soak.flips, res[i].soak.gcs,
			        res[i].soak.trims, res[i].soak.flushes, res[i].soak.limits,
			        res[i].soak.dumps, res[i].soak.rss_start_kb, res[i].soak.rss_peak_kb,
			        res[i].soak.rss_end_kb);
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "  ],\n  \"pools\": [\n");
	for (i = 0; i < nb_all_pools; i++) {
		struct pool_stats st;

		pool_get_stats(all_pools[i], &st, sizeof(st));
		fprintf(f, "    {\"name\": ");
		pool_json_write_string(f, pool_name(all_pools[i]));
		fprintf(f, ", \"size\": %zu, \"allocated\": %zu, \"used\": %zu, \"cached\": %zu, "
		        "\"shared_free\": %zu, \"slab_free\": %zu, \"slabs\": %zu, \"needed_avg\": %zu, "
		        "\"failed\": %zu}%s\n", st.size, st.allocated, st.used, st.cached,
		        st.shared_free, st.slab_free, st.slabs, st.needed_avg, st.failed,
		        i + 1 < nb_all_pools ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "pool-stress: cannot write '%s': %s\n", opt->json, strerror(errno));
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: pool-stress [--threads N] [--seconds S] [--workload LIST] [--json FILE]\n"
	        "                   [--bind] [-dM<options>] [--self-test-corruption OPS]\n"
	        "The stress harness of libpool: N threads per workload, every object checked.\n"
	        "  -t, --threads N    worker threads, 1..%u (default 48)\n"
	        "  -s, --seconds S    seconds per workload, 0.1..%.0f, decimals allowed (default 10)\n"
	        "  -w, --workload LIST\n"
	        "                     comma-separated among local,pipeline,bleed,mixed,spike,soak\n"
	        "                     (default: all of them in turn but soak, which make soak runs)\n"
	        "  -j, --json FILE    also write the results as JSON to FILE\n"
	        "  -b, --bind         pin worker i to the i-th PU, cores first "
	        "(pool_topology_bind_thread)\n"
	        "  -dM<options>, --debug <options>\n"
	        "                     pool debugging options, as POOL_DEBUG (-dMhelp lists them)\n"
	        "  --self-test-corruption OPS\n"
	        "                     overwrite one byte of a live object after OPS allocations, to\n"
	        "                     prove the canary check stops the run (exits 1)\n"
	        "  -h, --help         this text\n"
	        "  -V, --version      the version\n"
	        "Exit status: 0 passed, 1 corruption or wrong accounting, 2 bad usage, 3 cannot start\n"
	        "(pools, threads or the JSON file cannot be created).\n",
	        MAX_THREADS, MAX_SECONDS);
}

static int parse_workloads(const char *s, unsigned int *mask)
{
	char buf[256], *tok, *save = NULL;
	unsigned int i;

	if (strlen(s) >= sizeof(buf) || !*s)
		return -1;
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < WL_COUNT; i++)
			if (strcmp(tok, wl_names[i]) == 0)
				break;
		if (i == WL_COUNT)
			return -1;
		*mask |= 1u << i;
	}
	return *mask ? 0 : -1;
}

static void parse_args(int argc, char **argv, struct options *opt)
{
	enum { OPT_CORRUPT = 256 };
	static const struct option longopts[] = {
		{ "threads",              required_argument, NULL, 't' },
		{ "seconds",              required_argument, NULL, 's' },
		{ "workload",             required_argument, NULL, 'w' },
		{ "json",                 required_argument, NULL, 'j' },
		{ "bind",                 no_argument,       NULL, 'b' },
		{ "debug",                required_argument, NULL, 'D' },
		{ "self-test-corruption", required_argument, NULL, OPT_CORRUPT },
		{ "help",                 no_argument,       NULL, 'h' },
		{ "version",              no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	tool_name = "pool-stress";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:s:w:j:bd:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			opt->threads = (unsigned int)tool_parse_ulong("--threads", optarg, 1,
			                                              MAX_THREADS);
			break;
		case 's':
			opt->seconds = tool_parse_double("--seconds", optarg, 0.1, MAX_SECONDS,
			                                 "seconds");
			break;
		case 'w':
			if (parse_workloads(optarg, &opt->workloads))
				tool_usage_error("bad value '%s' for --workload: expected a comma-separated "
				                 "list of local, pipeline, bleed, mixed, spike, soak",
				                 optarg);
			break;
		case 'j':
			if (!*optarg)
				tool_usage_error("bad value '' for --json: expected a file name");
			opt->json = optarg;
			break;
		case 'b':
			opt->bind = 1;
			break;
		case OPT_CORRUPT:
			opt->corrupt_after = (long)tool_parse_ulong("--self-test-corruption", optarg, 0,
			                                            LONG_MAX);
			break;
		default:
			tool_common_option(c, longopts, argv, usage);
		}
	}
	tool_no_operands(argc, argv);
}

int main(int argc, char **argv)
{
	struct options opt = { .threads = 48, .seconds = 10, .workloads = 0, .json = NULL,
	                       .corrupt_after = -1 };
	struct wl_result res[WL_COUNT];
	unsigned int i, n = 0;
	FILE *json = NULL;
	char *dbg;
	int ok = 1;

	parse_args(argc, argv, &opt);
	if (opt.json && !(json = fopen(opt.json, "w"))) {
		fprintf(stderr, "pool-stress: cannot create '%s': %s\n", opt.json, strerror(errno));
		return TOOL_EXIT_UNAVAILABLE;
	}
	if (!opt.workloads)
		opt.workloads = WL_DEFAULT;
	uaf_on = !!(pool_debugging & POOL_DBG_UAF);
	atomic_store(&corrupt_countdown, opt.corrupt_after);

	dbg = debugging_text();
	printf("pool-stress: %u threads, %.1f s per workload, debugging: %s\n", opt.threads,
	       opt.seconds, dbg ? dbg : "?");
	free(dbg);
	fflush(stdout);
	for (i = 0; i < WL_COUNT; i++) {
		if (!(opt.workloads & (1u << i)))
			continue;
		if (run_workload(&opt, (enum workload)i, &res[n]) < 0) {
			fprintf(stderr, "pool-stress: cannot set up workload '%s': %s\n", wl_names[i],
			        strerror(errno));
			return TOOL_EXIT_UNAVAILABLE;
		}
		if (!res[n].ok)
			ok = 0;
		n++;
	}
	print_summary(&opt, res, n);
	print_pools(stdout);
	if (json && write_json(json, &opt, res, n, ok) < 0)
		ok = 0;
	/* every object is back: the pools must go away cleanly */
	for (i = 0; i < nb_all_pools; i++) {
		const char *name = pool_name(all_pools[i]);

		if (pool_destroy(all_pools[i]) < 0) {
			printf("pool-stress: pool_destroy(%s): %s\n", name, strerror(errno));
			ok = 0;
		}
	}
	printf("\npool-stress: %s\n", ok ? "PASSED" : "FAILED");
	return ok ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
