/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Memory comes back by itself (issue 28): after a burst, `allocated` falls back to the demand
 * estimate, plus at most one magazine per thread, with no pool_gc() or trim call, whatever the
 * program does meanwhile: alloc/free pairs that only the inline fast path serves, a working set
 * that walks at random, nothing at all; a million small objects as well as a few thousand large
 * ones; a few survivors of a burst do not keep the pages of the free objects of their slabs;
 * and a thread that sleeps holding a full cache does not pin it. Explicit calls release
 * everything above the need on their first call. The releaser thread can be refused
 * (POOL_RELEASE=caller, pool_configure()'s `release`), and then pool_release_run() from an event
 * loop does its work; across fork() the child starts its own releaser thread when it
 * allocates or frees past its cache, not before, and a child that drops the state it inherited
 * gets that memory back whether it then sleeps or serves light load. A pool's reserve
 * (pool_set_reserve(), HAProxy's minavail) stays in its shared lists through every window,
 * pool_gc(), pool_trim(), pool_flush() and the CLI's flush and trim; allocations take it, the
 * next frees fill it again, and pool_destroy() ignores it.
 *
 * Each scenario runs in a child with a demand window of WINDOW_MS (configured before its first
 * pool). A test asserts counts, never times: it polls the statistics until they hold, and fails
 * only past DEADLINE_WINDOWS windows, a hang guard for a loaded machine; the windows it took are
 * printed for the record (the bound by design is two).
 *
 * Public-API test: it includes only <pool/pool.h>; it tells the releaser thread by its name
 * ("pool-releaser") in /proc/self/task.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pool/pool.h>

#include "testutil.h"

#define WINDOW_MS         200u
#define DEADLINE_WINDOWS  75u
#define NTHREADS          4u
/* ThreadSanitizer runs everything 5 to 15 times slower and shadows each byte: smaller bursts */
#define BURST_DIV         (TEST_TSAN ? 4u : 1u)

/* A failure in a child: the message on stderr (the parent shows it), exit status 1. */
static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void configure(unsigned int decay_ms, unsigned int release)
{
	struct pool_config cfg = { .decay_ms = decay_ms, .release = release };

	if (pool_configure(&cfg) != 0)
		die("pool_configure: %s", strerror(errno));
}

static struct pool_stats stats(const struct pool_head *p)
{
	struct pool_stats st;

	if (pool_get_stats(p, &st, sizeof(st)) != 0)
		die("pool_get_stats: %s", strerror(errno));
	return st;
}

/*
 * What pool_gc() and the releaser keep beyond the need: 64 KiB worth, at most a slot's starting
 * depth.
 */
static size_t floor_of(size_t stride)
{
	size_t f = 65536 / stride;

	return f < test_depth_of(stride) ? f : test_depth_of(stride);
}

/* Threads of this process named "pool-releaser". */
static unsigned int releaser_threads(void)
{
	int n = test_threads_named("pool-releaser");

	if (n < 0)
		die("/proc/self/task unreadable");
	return (unsigned int)n;
}

static size_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%lu %lu", &size, &resident) != 2)
		die("/proc/self/statm unreadable");
	fclose(f);
	return resident * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * Objects `st` says its pool holds above its slab tier (allocated counts the free objects of its
 * slabs too: allocated == used + shared_free + slab_free).
 */
static size_t held(const struct pool_stats *st)
{
	return st->allocated - st->slab_free;
}

/*
 * Poll `p` until the objects it holds above its slabs are at most `bound`, no slab it keeps is
 * wholly free (each slab kept holds one of those objects at least), and its needed_avg is at most
 * `need_bound`, or fail past the deadline. `drive`: call pool_release_run() as an event loop
 * would (sleeping what it returns, at most a tenth of a window), instead of leaving it to the
 * releaser thread. `pairs`: meanwhile, an alloc/free pair a millisecond (light load). Returns
 * the windows it took.
 */
static double wait_for_return_load(const char *what, struct pool_head *p, size_t bound,
                                   size_t need_bound, int drive, int pairs)
{
	double t0 = now_ms(), t;
	struct pool_stats st;

	for (;;) {
		unsigned int sleep_ms = WINDOW_MS / 10;

		st = stats(p);
		t = now_ms() - t0;
		if (held(&st) <= bound && st.slabs <= held(&st) && st.needed_avg <= need_bound)
			break;
		if (t > DEADLINE_WINDOWS * WINDOW_MS)
			die("%s: after %.0f windows, held %zu (bound %zu), needed_avg %zu "
			    "(bound %zu), shared_free %zu, cached %zu, used %zu, slabs %zu", what,
			    t / WINDOW_MS, held(&st), bound, st.needed_avg, need_bound,
			    st.shared_free, st.cached, st.used, st.slabs);
		if (drive) {
			unsigned int ms = pool_release_run();

			if (ms < sleep_ms)
				sleep_ms = ms;
		}
		/* light load: a pair a millisecond, which the loaded magazine serves */
		for (; pairs && sleep_ms; sleep_ms--) {
			void *x = pool_alloc(p);

			if (!x)
				die("%s: pool_alloc failed", what);
			memset(x, 1, 64);
			pool_free(p, x);
			usleep(1000);
		}
		if (sleep_ms)
			usleep(sleep_ms * 1000u);
	}
	fprintf(stderr, "%s: held %zu (bound %zu) in %zu slabs, needed_avg %zu after %.1f windows "
	        "of %u ms\n", what, held(&st), bound, st.slabs, st.needed_avg, t / WINDOW_MS,
	        WINDOW_MS);
	return t / WINDOW_MS;
}

/* wait_for_return_load() with no load. */
static double wait_for_return(const char *what, struct pool_head *p, size_t bound,
                              size_t need_bound, int drive)
{
	return wait_for_return_load(what, p, bound, need_bound, drive, 0);
}

/* Run fn in a child (run_child()); it must exit 0. Its report is printed. */
static void scenario(void (*fn)(void *), void *arg)
{
	struct death d;

	run_child(fn, arg, &d);
	if (d.out[0])
		printf("check_release: %s", d.out);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0, "status 0x%x; stderr:\n%s",
	              d.status, d.out);
}

/* ------------------------------------------------------------------------------------------ */
/* Bursts, then a load that never reaches a slow path, a moving working set, nothing          */
/* ------------------------------------------------------------------------------------------ */

struct burst {
	struct pool_head *pool;
	size_t size;            /* object size */
	size_t burst;           /* objects each thread takes at once, then frees */
	unsigned int walk;      /* 0: then alloc/free pairs; n: a working set walking in 0..n */
	pthread_barrier_t *bar;
	atomic_int *stop;
	unsigned int seed;
};

static void *burst_thread(void *arg)
{
	struct burst *b = arg;
	void **o = calloc(b->burst > b->walk ? b->burst : b->walk, sizeof(void *));
	size_t i, n = 0;

	if (!o)
		die("calloc");
	for (i = 0; i < b->burst; i++) {
		if (!(o[i] = pool_alloc(b->pool)))
			die("pool_alloc failed in the burst");
		memset(o[i], 0x5a, b->size);
	}
	pthread_barrier_wait(b->bar);           /* the peak */
	for (i = 0; i < b->burst; i++)
		pool_free(b->pool, o[i]);
	pthread_barrier_wait(b->bar);           /* freed */
	while (!atomic_load(b->stop)) {
		if (!b->walk) {
			/* a request's buffer: one pair, which the inline fast path serves */
			void *x = pool_alloc(b->pool);

			if (!x)
				die("pool_alloc failed");
			memset(x, 1, 64);
			pool_free(b->pool, x);
			usleep(1000);
			continue;
		}
		for (i = 0; i < 64; i++) {
			b->seed = b->seed * 1103515245u + 12345u;
			if (((b->seed >> 16) & 1) ? n < b->walk : n == 0) {
				if (!(o[n++] = pool_alloc(b->pool)))
					die("pool_alloc failed");
			} else {
				pool_free(b->pool, o[--n]);
			}
		}
		usleep(200);
	}
	while (n)
		pool_free(b->pool, o[--n]);
	free(o);
	return NULL;
}

struct burst_case {
	const char *name;
	size_t size, burst;
	unsigned int walk;
};

static void burst_child(void *arg)
{
	const struct burst_case *c = arg;
	struct burst b[NTHREADS];
	pthread_t t[NTHREADS];
	pthread_barrier_t bar;
	atomic_int stop = 0;
	struct pool_stats st;
	size_t base, peak, after, mag, bound, need_bound;
	unsigned int i;

	configure(WINDOW_MS, 0);
	pthread_barrier_init(&bar, NULL, NTHREADS + 1);
	base = rss_bytes();
	for (i = 0; i < NTHREADS; i++) {
		b[i] = (struct burst){ .pool = NULL, .size = c->size, .burst = c->burst / BURST_DIV,
		                       .walk = c->walk, .bar = &bar, .stop = &stop, .seed = i + 1 };
		if (!i && !(b[0].pool = pool_create(c->name, c->size, 0)))
			die("pool_create: %s", strerror(errno));
		b[i].pool = b[0].pool;
		if (pthread_create(&t[i], NULL, burst_thread, &b[i]) != 0)
			die("pthread_create");
	}
	pthread_barrier_wait(&bar);
	peak = rss_bytes();
	st = stats(b[0].pool);
	if (st.allocated < NTHREADS * c->burst / BURST_DIV)
		die("%s: the burst holds %zu objects", c->name, st.allocated);
	if (releaser_threads() != 1)
		die("%s: %u releaser threads, expected 1", c->name, releaser_threads());
	pthread_barrier_wait(&bar);
	/*
	 * In use then: a pair's object or the walk's set per thread; cached: one magazine per thread
	 * whose pairs the inline fast path serves, two when every call is a slow path (a sanitizer's
	 * build: POOL_DBG_SLOW is on, the thread is busy and rotates its loaded and previous
	 * magazines), up to the walk and a refill's two magazines for a walker; and the floor.
	 */
	mag = test_magazine_of(st.stride);
	need_bound = NTHREADS * (c->walk ? c->walk + 3 * mag :
	                         ((pool_debugging & POOL_DBG_SLOW) ? 2 : 1) * mag + 1);
	bound = need_bound + floor_of(st.stride);
	wait_for_return(c->name, b[0].pool, bound, need_bound, 0);
	after = rss_bytes();
	fprintf(stderr, "%s: RSS %zu MiB before, %zu MiB at the peak, %zu MiB after (objects given "
	        "back to %s; its pages follow as it purges them)\n", c->name, base >> 20,
	        peak >> 20, after >> 20, test_os_stats().layer);
	atomic_store(&stop, 1);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
}

/* 4 threads x 600 16 KiB buffers, then a pair each per millisecond (issue 28's first case). */
START_TEST(test_burst_comes_back_under_fast_path_pairs)
{
	static const struct burst_case c = { "pairs16k", 16384, 600, 0 };

	scenario(burst_child, (void *)&c);
}
END_TEST

/* 4 threads x 50,000 64-byte objects, then a working set each walking in 0..200. */
START_TEST(test_burst_comes_back_under_a_random_walk)
{
	static const struct burst_case c = { "walk64", 64, 50000, 200 };

	scenario(burst_child, (void *)&c);
}
END_TEST

struct idle_case {
	const char *name;
	size_t size, n;
};

/* The main thread takes n objects, frees them, and does nothing more but read statistics. */
static void idle_child(void *arg)
{
	const struct idle_case *c = arg;
	struct pool_head *p;
	void **o;
	size_t i, n = c->n / BURST_DIV, mag;

	configure(WINDOW_MS, 0);
	p = pool_create(c->name, c->size, 0);
	o = calloc(n, sizeof(void *));
	if (!p || !o)
		die("pool_create or calloc");
	for (i = 0; i < n; i++)
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	free(o);
	mag = test_magazine_of(stats(p).stride);
	/* this thread's loaded magazine stays (its fast path may use it), and the floor */
	wait_for_return(c->name, p, mag + floor_of(stats(p).stride), mag, 0);
}

START_TEST(test_idle_burst_comes_back)
{
	static const struct idle_case c = { "idle1k", 1024, 20000 };

	scenario(idle_child, (void *)&c);
}
END_TEST

START_TEST(test_a_million_small_objects_come_back)
{
	static const struct idle_case c = { "million64", 64, 1000000 };

	scenario(idle_child, (void *)&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Slabs that keep a few live objects                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * A burst of 8 KiB buffers of which every 4th stays live, so that no slab (7 buffers carved in a
 * row) is ever wholly free: the pages of the free buffers leave the resident set all the same,
 * with no call (the releaser purges the slabs it gave objects back to), and the live buffers
 * keep their bytes (with the C library under the pools, a slab given back whole would stay
 * resident in its heap: none is). What may stay resident of the free ones is what stays above
 * the slabs: this thread's loaded magazine and the floor (3 pages a buffer at most: 2 whole
 * ones, 1 shared with the next).
 */
static void sparse_child(void *arg)
{
	const size_t size = 8192;
	unsigned int n = 2000 / BURST_DIV, keep = 4, bound, pages[3] = { 0, 0, 0 }, i;
	unsigned char *live = calloc(n, 1);
	void **o = calloc(n, sizeof(void *));
	struct pool_head *p;
	double t0, t;
	size_t j, stride;

	(void)arg;
	configure(WINDOW_MS, 0);
	p = pool_create("sparse8k", size, 0);
	if (!p || !o || !live)
		die("pool_create or calloc");
	for (i = 0; i < n; i++) {
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
		memset(o[i], 0x5a, size);
	}
	for (i = 0; i < n; i++) {
		live[i] = i % keep == 0;
		if (!live[i])
			pool_free(p, o[i]);
	}
	stride = stats(p).stride;
	bound = (unsigned int)(3 * (test_magazine_of(stride) + floor_of(stride)));
	t0 = now_ms();
	for (;;) {
		if (test_pages(o, live, n, stride, size, pages) != 0)
			die("mincore: %s", strerror(errno));
		if (pages[2])
			die("%u pages under live buffers left the resident set", pages[2]);
		t = now_ms() - t0;
		if (pages[0] <= bound && pages[1] > 0)
			break;
		if (t > DEADLINE_WINDOWS * WINDOW_MS) {
			struct pool_stats st = stats(p);

			die("sparse8k: after %.0f windows, %u pages of free buffers resident (bound %u), "
			    "%u given back; held %zu, cached %zu, shared_free %zu, slab_free %zu, "
			    "needed_avg %zu, slabs %zu", t / WINDOW_MS, pages[0], bound, pages[1],
			    held(&st), st.cached, st.shared_free, st.slab_free, st.needed_avg, st.slabs);
		}
		usleep(WINDOW_MS * 100u);
	}
	for (i = 0; i < n; i++)
		for (j = 0; live[i] && j < size; j++)
			if (((unsigned char *)o[i])[j] != 0x5a)
				die("byte %zu of live buffer %u changed", j, i);
	fprintf(stderr, "sparse8k: %u pages of free buffers given back, %u resident (bound %u), "
	        "after %.1f windows of %u ms\n", pages[1], pages[0], bound, t / WINDOW_MS, WINDOW_MS);
	for (i = 0; i < n; i++)
		if (live[i])
			pool_free(p, o[i]);
	free(o);
	free(live);
}

START_TEST(test_sparse_survivors_do_not_pin_their_slabs_pages)
{
	scenario(sparse_child, NULL);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* A thread that sleeps holding a full cache                                                  */
/* ------------------------------------------------------------------------------------------ */

struct sleeper {
	struct pool_head *pool;
	size_t n;
	pthread_barrier_t bar;
};

static void *sleeper_thread(void *arg)
{
	struct sleeper *s = arg;
	void **o = calloc(s->n, sizeof(void *));
	size_t i;

	if (!o)
		die("calloc");
	for (i = 0; i < s->n; i++)
		if (!(o[i] = pool_alloc(s->pool)))
			die("pool_alloc failed");
	for (i = 0; i < s->n; i++)
		pool_free(s->pool, o[i]);
	free(o);
	pthread_barrier_wait(&s->bar);          /* its cache is full */
	pthread_barrier_wait(&s->bar);          /* asleep until the main thread is done */
	return NULL;
}

static void sleeper_child(void *arg)
{
	struct sleeper s;
	struct pool_config cfg;
	struct pool_stats st;
	pthread_t t;
	size_t mag;

	(void)arg;
	configure(WINDOW_MS, 0);
	pool_get_config(&cfg);
	s.pool = pool_create("sleeper", 256, 0);
	if (!s.pool)
		die("pool_create");
	/* as many objects as its budget holds: they all stay in its cache */
	s.n = cfg.cache_bytes / stats(s.pool).stride;
	pthread_barrier_init(&s.bar, NULL, 2);
	if (pthread_create(&t, NULL, sleeper_thread, &s) != 0)
		die("pthread_create");
	pthread_barrier_wait(&s.bar);
	st = stats(s.pool);
	mag = test_magazine_of(st.stride);
	if (st.cached + 2 * mag < s.n)
		die("the sleeper caches %zu objects of %zu", st.cached, s.n);
	/* its loaded magazine stays with it; the rest comes back */
	wait_for_return("sleeper", s.pool, mag + floor_of(st.stride), mag, 0);
	st = stats(s.pool);
	if (st.cached > mag)
		die("the sleeper still caches %zu objects", st.cached);
	pthread_barrier_wait(&s.bar);
	pthread_join(t, NULL);
	/* it exits: what it kept went back to the shared lists, and the pool is whole */
	st = stats(s.pool);
	if (st.used != 0 || held(&st) != st.shared_free)
		die("after the sleeper exited: used %zu, held %zu, shared_free %zu", st.used,
		    held(&st), st.shared_free);
}

START_TEST(test_a_sleeping_thread_does_not_pin_its_cache)
{
	scenario(sleeper_child, NULL);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Explicit calls: everything above the need on the first call                                */
/* ------------------------------------------------------------------------------------------ */

/* 10,000 objects taken, freed and flushed to the shared lists: what each call finds. */
static struct pool_head *freed_pool(const char *name, size_t size)
{
	struct pool_head *p = pool_create(name, size, 0);
	void *o[10000];
	size_t i;

	if (!p)
		die("pool_create");
	for (i = 0; i < 10000; i++)
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
	for (i = 0; i < 10000; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	return p;
}

static void check_first_call(const char *what, struct pool_head *p)
{
	struct pool_stats st = stats(p);

	if (held(&st) > floor_of(st.stride) || st.slabs > held(&st) || st.needed_avg != 0 ||
	    st.slab_put_objects < 10000 - floor_of(st.stride))
		die("%s: held %zu (floor %zu) in %zu slabs, needed_avg %zu, slab_put_objects %llu "
		    "after one call", what, held(&st), floor_of(st.stride), st.slabs, st.needed_avg,
		    (unsigned long long)st.slab_put_objects);
}

static void explicit_child(void *arg)
{
	struct pool_head *p;
	char *out = NULL;
	size_t len = 0;
	unsigned long long released = 0;
	FILE *f;

	(void)arg;
	/* a long window, and no releaser thread: only the calls below give anything back */
	configure(3600000, POOL_RELEASE_CALLER);
	p = freed_pool("gc1", 64);
	pool_gc(p);
	check_first_call("pool_gc(p)", p);
	p = freed_pool("gcnull", 1024);
	pool_gc(NULL);
	check_first_call("pool_gc(NULL)", p);
	p = freed_pool("trim", 256);
	pool_trim();
	check_first_call("pool_trim()", p);
	p = freed_pool("clitrim", 512);
	f = open_memstream(&out, &len);
	if (!f || pool_cli_exec("pools trim", f) != 0 || fclose(f) != 0)
		die("pools trim failed");
	if (sscanf(out, "Released %llu bytes", &released) != 1 || released < 9000ull * 512)
		die("pools trim answered: %s", out);
	free(out);
	check_first_call("pools trim", p);
}

START_TEST(test_explicit_calls_release_above_the_need_at_once)
{
	scenario(explicit_child, NULL);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Without the releaser thread: the program's event loop                                      */
/* ------------------------------------------------------------------------------------------ */

/* `how`: "env" (POOL_RELEASE=caller) or "config" (pool_configure()'s release). */
static void caller_child(void *arg)
{
	const char *how = arg;
	struct pool_head *p;
	struct pool_config cfg;
	void **o;
	size_t i, n = 50000 / BURST_DIV, mag;
	unsigned int ms;
	double t0;

	if (!strcmp(how, "env")) {
		test_setenv("POOL_RELEASE", "caller");
		configure(WINDOW_MS, 0);
	} else {
		configure(WINDOW_MS, POOL_RELEASE_CALLER);
	}
	pool_get_config(&cfg);
	if (cfg.release != POOL_RELEASE_CALLER)
		die("%s: release %u", how, cfg.release);
	p = pool_create("caller", 128, 0);
	o = calloc(n, sizeof(void *));
	if (!p || !o)
		die("pool_create or calloc");
	for (i = 0; i < n; i++)
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
	if (releaser_threads() != 0)
		die("%s: a releaser thread runs", how);
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	free(o);
	mag = test_magazine_of(stats(p).stride);
	/* nothing but the event loop's calls: the slow paths see nothing to do either */
	wait_for_return(how, p, mag + floor_of(stats(p).stride), mag, 1);
	/* nothing owed now: the call says how long until the next window ends */
	t0 = now_ms();
	while ((ms = pool_release_run()) == 0)
		if (now_ms() - t0 > DEADLINE_WINDOWS * WINDOW_MS)
			die("pool_release_run() keeps answering 0");
	if (ms > WINDOW_MS)
		die("pool_release_run() answered %u ms, more than a window", ms);
	if (releaser_threads() != 0)
		die("%s: a releaser thread runs", how);
}

START_TEST(test_the_event_loop_drives_return_without_the_thread)
{
	scenario(caller_child, "config");
	scenario(caller_child, "env");
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* A reserve                                                                                  */
/* ------------------------------------------------------------------------------------------ */

#define RESERVE_OBJS 12u

/* What `line`, run as admin, writes. */
static char *cli_out(const char *line)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f || pool_cli_exec(line, f) != 0 || fclose(f) != 0)
		die("%s failed", line);
	return out;
}

static void expect_reserve_kept(const char *after, const struct pool_head *p)
{
	struct pool_stats st = stats(p);

	if (st.shared_free != RESERVE_OBJS || st.reserve != RESERVE_OBJS)
		die("after %s: %zu objects in the shared lists, reserve %zu (want %u)", after,
		    st.shared_free, st.reserve, RESERVE_OBJS);
}

/*
 * 70,000-byte objects: 64 KiB is less than one, so the pool's own floor is 0 and only the
 * reserve keeps objects. The program drives the release (POOL_RELEASE=caller).
 */
static void reserve_child(void *arg)
{
	struct pool_head *p;
	void *o[40];
	char *out;
	double t0;
	unsigned int i;

	(void)arg;
	configure(WINDOW_MS, POOL_RELEASE_CALLER);
	if (!(p = pool_create("reserve", 70000, 0)) || pool_set_reserve(p, RESERVE_OBJS) != 0)
		die("pool_create or pool_set_reserve: %s", strerror(errno));
	for (i = 0; i < 40; i++)
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
	for (i = 0; i < 40; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	if (stats(p).shared_free != 40)
		die("%zu objects in the shared lists after the flush of the cache", stats(p).shared_free);
	/* the windows give back all but the reserve, then nothing more, window after window */
	wait_for_return("reserve", p, RESERVE_OBJS, 0, 1);
	t0 = now_ms();
	while (now_ms() - t0 < 3 * WINDOW_MS) {
		unsigned int ms = pool_release_run();

		usleep((ms < WINDOW_MS / 10 ? ms : WINDOW_MS / 10) * 1000u);
	}
	expect_reserve_kept("three more windows", p);
	pool_gc(p);
	expect_reserve_kept("pool_gc()", p);
	pool_trim();
	expect_reserve_kept("pool_trim()", p);
	pool_flush(p);
	expect_reserve_kept("pool_flush()", p);
	free(cli_out("pools flush reserve"));
	free(cli_out("pools trim"));
	expect_reserve_kept("pools flush and pools trim", p);
	out = cli_out("pools show detailed match reserve");
	if (!strstr(out, "limit 0 (none), reserve 12\n"))
		die("pools show detailed:\n%s", out);
	free(out);
	/* allocations take it (the thread's refills come from the shared lists) */
	for (i = 0; i < RESERVE_OBJS; i++)
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
	if (stats(p).shared_free != 0)
		die("%zu objects left in the shared lists", stats(p).shared_free);
	for (i = 0; i < RESERVE_OBJS; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	pool_gc(p);
	expect_reserve_kept("the reserve was used and freed", p);
	/* without it, everything goes */
	if (pool_set_reserve(p, 0) != 0)
		die("pool_set_reserve(0): %s", strerror(errno));
	pool_flush(p);
	if (stats(p).shared_free != 0 || stats(p).reserve != 0)
		die("reserve 0: %zu objects in the shared lists", stats(p).shared_free);
	/* and pool_destroy() takes a pool with a reserve as any */
	if (pool_set_reserve(p, RESERVE_OBJS) != 0 || !(o[0] = pool_alloc(p)))
		die("pool_set_reserve or pool_alloc");
	pool_free(p, o[0]);
	pool_thread_flush();
	if (pool_destroy(p) != 0)
		die("pool_destroy: %s", strerror(errno));
}

START_TEST(test_a_reserve_stays_through_every_return)
{
	scenario(reserve_child, NULL);
}
END_TEST

START_TEST(test_reserve_of_no_pool)
{
	struct pool_head *p = pool_create("reserve-gone", 64, 0);

	errno = 0;
	ck_assert_int_eq(pool_set_reserve(NULL, 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pool_destroy(p), 0);
	errno = 0;
	ck_assert_int_eq(pool_set_reserve(p, 1), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* fork()                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void forked_child(void *arg)
{
	struct pool_head *p;
	void *o[4000];
	pid_t pid;
	int status, i;

	(void)arg;
	configure(WINDOW_MS, 0);
	p = pool_create("forked", 512, 0);
	if (!p || !(o[0] = pool_alloc(p)))
		die("pool_create or pool_alloc");
	pool_free(p, o[0]);
	if (releaser_threads() != 1)
		die("parent: %u releaser threads", releaser_threads());
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		size_t mag = test_magazine_of(stats(p).stride);

		/* the thread did not follow: none until this process allocates */
		if (releaser_threads() != 0)
			die("child: %u releaser threads before it allocates", releaser_threads());
		for (i = 0; i < 4000; i++)
			if (!(o[i] = pool_alloc(p)))
				die("child: pool_alloc failed");
		/* ThreadSanitizer cannot start threads in such a child: the library does not */
		if (releaser_threads() != (TEST_TSAN ? 0 : 1))
			die("child: %u releaser threads after it allocated", releaser_threads());
		for (i = 0; i < 4000; i++)
			pool_free(p, o[i]);
		wait_for_return("fork child", p, mag + floor_of(stats(p).stride), mag, TEST_TSAN);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the fork child failed (status 0x%x)", status);
	/* the parent's releaser runs on */
	if (releaser_threads() != 1)
		die("parent after fork: %u releaser threads", releaser_threads());
}

START_TEST(test_fork_child_starts_its_releaser_when_it_allocates)
{
	scenario(forked_child, NULL);
}
END_TEST

/*
 * A pre-fork server: the parent builds its state (FORK_BURST objects of 1 KiB, 20 MiB, kept) and
 * forks; the child drops what it inherited and then sleeps, or serves a pair a millisecond from
 * the thread that freed (the inline fast path serves them all: that thread's magazines are
 * full). Neither allocates on a slow path, so the releaser starts from the frees' slow paths
 * (a magazine that overflows): everything but the loaded magazine and the floor comes back, and
 * the child's resident memory falls by at least half the burst (not asserted under a sanitizer,
 * whose shadow memory stays).
 */
#define FORK_BURST 20000u

static void fork_drop_child(void *arg)
{
	const int pairs = arg != NULL;
	struct pool_head *p;
	void **o = calloc(FORK_BURST, sizeof(void *));
	size_t i, n = FORK_BURST / BURST_DIV, mag, peak, after;
	pid_t pid;
	int status;

	configure(WINDOW_MS, 0);
	p = pool_create("prefork", 1024, 0);
	if (!p || !o)
		die("pool_create or calloc");
	for (i = 0; i < n; i++) {
		if (!(o[i] = pool_alloc(p)))
			die("pool_alloc failed");
		memset(o[i], 0x5a, 1024);
	}
	if (releaser_threads() != 1)
		die("parent: %u releaser threads", releaser_threads());
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		peak = rss_bytes();
		for (i = 0; i < n; i++)
			pool_free(p, o[i]);
		/* ThreadSanitizer cannot start threads in such a child: the library does not */
		if (releaser_threads() != (TEST_TSAN ? 0 : 1))
			die("child: %u releaser threads after it freed", releaser_threads());
		/*
		 * Under AddressSanitizer every call takes the slow paths, whose frees keep a full
		 * magazine beside the loaded one while the pairs go on: two magazines, not one.
		 */
		mag = test_magazine_of(stats(p).stride) * (TEST_ASAN && pairs ? 2 : 1);
		wait_for_return_load(pairs ? "fork child, pairs" : "fork child, idle", p,
		                     mag + floor_of(stats(p).stride), mag, TEST_TSAN, pairs);
		/* the releaser trims the OS layer once the window's payments are made */
		for (i = 0; (after = rss_bytes()) + n * 1024 / 2 > peak && i < DEADLINE_WINDOWS &&
		     !TEST_ASAN && !TEST_TSAN; i++)
			usleep(WINDOW_MS * 100u);
		fprintf(stderr, "fork child: RSS %zu MiB at the fork, %zu MiB once the burst it dropped "
		        "came back\n", peak >> 20, after >> 20);
		if (!TEST_ASAN && !TEST_TSAN && after + n * 1024 / 2 > peak)
			die("fork child: RSS %zu bytes, %zu at the peak", after, peak);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the fork child failed (status 0x%x)", status);
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	free(o);
}

START_TEST(test_fork_child_that_drops_its_state_gives_it_back)
{
	scenario(fork_drop_child, NULL);
	scenario(fork_drop_child, "pairs");
}
END_TEST

static Suite *release_suite(void)
{
	Suite *s = suite_create("release");
	TCase *core = tcase_create("Core");
	TCase *errors = tcase_create("Errors");
	TCase *threads = tcase_create("Threads");

	/* a hang guard only: DEADLINE_WINDOWS of WINDOW_MS, a few times over */
	tcase_set_timeout(core, 120);
	tcase_set_timeout(threads, 120);
	tcase_add_test(core, test_idle_burst_comes_back);
	tcase_add_test(core, test_a_million_small_objects_come_back);
	tcase_add_test(core, test_sparse_survivors_do_not_pin_their_slabs_pages);
	tcase_add_test(core, test_explicit_calls_release_above_the_need_at_once);
	tcase_add_test(core, test_the_event_loop_drives_return_without_the_thread);
	tcase_add_test(core, test_a_reserve_stays_through_every_return);
	tcase_add_test(errors, test_reserve_of_no_pool);
	tcase_add_test(threads, test_burst_comes_back_under_fast_path_pairs);
	tcase_add_test(threads, test_burst_comes_back_under_a_random_walk);
	tcase_add_test(threads, test_a_sleeping_thread_does_not_pin_its_cache);
	tcase_add_test(threads, test_fork_child_starts_its_releaser_when_it_allocates);
	tcase_add_test(threads, test_fork_child_that_drops_its_state_gives_it_back);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	suite_add_tcase(s, threads);
	return s;
}

POOL_TEST_MAIN_ARGS(release_suite, test_clear_environment)
