/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Moves between the tiers (issue 20): objects move between thread caches, the shared free lists
 * and the OS layer in magazines of pointers, so a move reads no free object.
 *   - the transfer budget: object words read or written per object moved, at most 1/cluster plus
 *     a little, read from the counters that builds with assertions keep, and seen for real in
 *     the jemalloc build: objects that are whole pages, protected while they move, fault if
 *     anything touches them;
 *   - exact counters after a storm of many threads with large live sets, handed between threads
 *     and freed in a burst at exit;
 *   - the run-time debugging switches flipped while such a storm runs, and the layout modes
 *     (tag, caller, uaf) under it, each object checked by its owner;
 *   - fork() while threads move objects, singly and in bulk: no child crashes, every child
 *     allocates and its books balance (issue 21, defect 1);
 *   - pool_destroy() while another thread allocates, which is forbidden: the destroying thread
 *     does not crash, and the late caller gets the report pool_destroy(3) promises (issue 21,
 *     defect 9).
 *
 * Internal test: it reads the transfer counters of "pool-bucket.h".
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "shared/pool-bucket.h"
#include "slab/pool-slab.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* The storm: threads with large live sets, handing a quarter over, freeing in a burst         */
/* ------------------------------------------------------------------------------------------ */

#define STORM_CLASSES 3           /* 64, 256 and 1024-byte objects */
#define STORM_XFER    512         /* slots of the array objects cross threads through */
#define STORM_SECRET  0x51a7e5c3c0ffee11ull

struct storm {
	struct pool_head *pool[STORM_CLASSES];
	_Atomic(uintptr_t) xfer[STORM_XFER];   /* object | class */
	unsigned int threads;
	unsigned int live;            /* objects each thread keeps */
	unsigned int steps;           /* replacements each thread makes */
	atomic_uint bad;              /* objects found changed by somebody else */
	atomic_uint null;             /* allocations that returned NULL */
	atomic_uint next_seed;
};

/* One object a thread owns: the stamp it wrote into it. */
struct owned {
	uint64_t *obj;
	uint64_t stamp;
	unsigned int cls;
};

static uint64_t storm_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Take `o`: it must carry its own address (a real object of ours), then stamp it as ours. */
static void storm_claim(struct storm *st, struct owned *w, uint64_t *o, unsigned int cls,
                        uint64_t *seed, int check_addr)
{
	if (check_addr && o[0] != ((uintptr_t)o ^ STORM_SECRET))
		atomic_fetch_add(&st->bad, 1);
	w->obj = o;
	w->cls = cls;
	w->stamp = storm_rand(seed);
	o[0] = (uintptr_t)o ^ STORM_SECRET;
	o[1] = w->stamp;
}

/* Give `w` back: nobody may have written it since we stamped it (a double hand-out would). */
static void storm_release(struct storm *st, struct owned *w)
{
	if (w->obj[0] != ((uintptr_t)w->obj ^ STORM_SECRET) || w->obj[1] != w->stamp)
		atomic_fetch_add(&st->bad, 1);
	pool_free(st->pool[w->cls], w->obj);
	w->obj = NULL;
}

static void *storm_thread(void *arg)
{
	struct storm *st = arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (atomic_fetch_add(&st->next_seed, 1) + 1);
	struct owned *w = calloc(st->live, sizeof(*w));
	unsigned int i;

	ck_assert_ptr_nonnull(w);
	for (i = 0; i < st->steps; i++) {
		uint64_t r = storm_rand(&seed);
		struct owned *slot = &w[(r >> 8) % st->live];
		unsigned int cls = (unsigned int)(r % STORM_CLASSES);
		uint64_t *o;

		if (slot->obj)
			storm_release(st, slot);
		o = pool_zalloc(st->pool[cls]);
		if (!o) {
			atomic_fetch_add(&st->null, 1);
			continue;
		}
		storm_claim(st, slot, o, cls, &seed, 0);
		if ((r >> 32) % 4 == 0) {
			/* a quarter crosses threads: swap it with whatever waits in the array */
			uintptr_t mine = (uintptr_t)o | cls;
			uintptr_t got = atomic_exchange(&st->xfer[(r >> 40) % STORM_XFER], mine);

			slot->obj = NULL;
			if (got)
				storm_claim(st, slot, (uint64_t *)(got & ~(uintptr_t)3),
				            (unsigned int)(got & 3), &seed, 1);
		}
	}
	/* the storm ends: the whole live set goes in one burst, then the thread exits */
	for (i = 0; i < st->live; i++)
		if (w[i].obj)
			storm_release(st, &w[i]);
	free(w);
	return NULL;
}

static void storm_init(struct storm *st, unsigned int threads, unsigned int live,
                       unsigned int steps)
{
	static const size_t sizes[STORM_CLASSES] = { 64, 256, 1024 };
	unsigned int c;

	memset(st, 0, sizeof(*st));
	for (c = 0; c < STORM_CLASSES; c++) {
		char name[16];

		snprintf(name, sizeof(name), "storm%u", c);
		st->pool[c] = pool_create(name, sizes[c], 0);
		ck_assert_ptr_nonnull(st->pool[c]);
	}
	st->threads = threads;
	st->live = live;
	st->steps = steps;
}

/* Run the storm once; the objects left in the array are freed by the caller's thread. */
static void storm_run(struct storm *st)
{
	pthread_t *t = calloc(st->threads, sizeof(*t));
	unsigned int i;

	ck_assert_ptr_nonnull(t);
	for (i = 0; i < st->threads; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, storm_thread, st), 0);
	for (i = 0; i < st->threads; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	free(t);
	for (i = 0; i < STORM_XFER; i++) {
		uintptr_t v = atomic_exchange(&st->xfer[i], 0);

		if (v) {
			uint64_t *o = (uint64_t *)(v & ~(uintptr_t)3);

			if (o[0] != ((uintptr_t)o ^ STORM_SECRET))
				atomic_fetch_add(&st->bad, 1);
			pool_free(st->pool[v & 3], o);
		}
	}
	ck_assert_uint_eq(atomic_load(&st->bad), 0);
}

/* After every thread exited and this one flushed: the books of every pool are exact. */
static void storm_books(const struct storm *st)
{
	unsigned int c;

	pool_thread_flush();
	for (c = 0; c < STORM_CLASSES; c++) {
		struct pool_stats s = test_stats(st->pool[c]);
		uint64_t released = s.gc_released_bytes / s.stride;

		ck_assert_uint_eq(s.used, 0);
		ck_assert_uint_eq(s.cached, 0);
		/* what the pool holds lies in the shared lists or free in its slabs */
		ck_assert_uint_eq(s.allocated, s.shared_free + s.cached + s.slab_free);
		ck_assert_uint_eq(s.allocated, s.os_allocs - s.os_releases - s.lost);
		pool__slab_walk(st->pool[c]);
		ck_assert_uint_eq(s.shared_put_objects - s.shared_get_objects - released,
		                  s.shared_free);
	}
}

static void storm_destroy(struct storm *st)
{
	unsigned int c;

	for (c = 0; c < STORM_CLASSES; c++)
		ck_assert_int_eq(pool_destroy(st->pool[c]), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* The transfer budget                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * The counters of builds with assertions: over a storm of 8 threads with 4096 live objects each
 * (more than a thread cache holds), then pool_gc() twice, the words of free objects read or
 * written per object moved stay within 1/cluster + 1%. They are 0: a magazine holds pointers.
 * Then integrity is switched on, whose fill and check of cached objects do touch them: the
 * counter sees it (so it is not a counter that cannot count).
 */
START_TEST(test_budget_counted)
{
	static struct storm st;
	struct pool_config cfg;
	unsigned long moved, touched;
	unsigned int c;

	pool_get_config(&cfg);
	storm_init(&st, 8, 4096, 16384);
	storm_run(&st);
	storm_books(&st);
	for (c = 0; c < STORM_CLASSES; c++) {
		pool_gc(st.pool[c]);
		pool_gc(st.pool[c]);
	}
	moved = atomic_load(&pool__moved_objects);
	touched = atomic_load(&pool__touched_words);
	if (!POOL_ASSERTS) {
		/* this build keeps no books: the page test below sees the same thing for real */
		ck_assert_uint_eq(moved, 0);
		ck_assert_uint_eq(touched, 0);
		printf("check_transfer: no transfer counters in this build (POOL_ASSERTS=0)\n");
		storm_destroy(&st);
		return;
	}
	printf("check_transfer: %lu objects moved between tiers, %lu object words touched "
	       "(%.4f a move; budget %.4f)\n", moved, touched, (double)touched / (double)moved,
	       1.0 / cfg.cluster + 0.01);
	ck_assert_uint_gt(moved, 8 * 4096);
	ck_assert_msg((double)touched <= (double)moved * (1.0 / cfg.cluster + 0.01),
	              "%lu words touched for %lu objects moved", touched, moved);
	/* the counter is alive: integrity's fill and check read and write cached objects */
	ck_assert_int_eq(pool_parse_debugging("integrity", NULL), 0);
	st.threads = 2;
	storm_run(&st);
	ck_assert_int_eq(pool_parse_debugging("no-integrity", NULL), 0);
	ck_assert_uint_gt(atomic_load(&pool__touched_words), touched);
	storm_books(&st);
	storm_destroy(&st);
}
END_TEST

/* The page test: which object pages faulted while protected. */
static char *page_lo, *page_hi;
static atomic_ulong page_faults;

static void page_fault(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;
	long page = sysconf(_SC_PAGESIZE);

	(void)uc;
	if (a < page_lo || a >= page_hi) {
		/* not one of ours: die as the fault would have */
		signal(sig, SIG_DFL);
		return;
	}
	atomic_fetch_add(&page_faults, 1);
	mprotect((void *)((uintptr_t)a & ~(uintptr_t)(page - 1)), (size_t)page,
	         PROT_READ | PROT_WRITE);
}

#define PAGE_OBJS 2048

struct page_arg {
	struct pool_head *pool;
	void **objs;
};

static void *page_alloc_free(void *arg)
{
	struct page_arg *a = arg;
	unsigned int i;

	/* allocated and freed without a touch: what moves them is the library alone */
	for (i = 0; i < PAGE_OBJS; i++)
		ck_assert_ptr_nonnull(a->objs[i] = pool_alloc(a->pool));
	for (i = 0; i < PAGE_OBJS; i++)
		pool_free(a->pool, a->objs[i]);
	return NULL;
}

/*
 * For real, whatever the code claims: a pool of page-sized, page-aligned objects (each object
 * its own page under jemalloc), all free; their pages are made inaccessible, and the objects are
 * moved through every path (thread exit, refill by another thread, eviction past the budget,
 * pool_thread_flush(), pool_gc(), pool_flush()). A fault counts a touched object (its page is
 * opened again so that the run goes on). Faults per object moved: at most 1/cluster + 1%.
 * jemalloc build only (the C library keeps a chunk header in the page before each object), and
 * not under the sanitizers (their own handlers and shadow).
 */
START_TEST(test_budget_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	struct page_arg a;
	struct sigaction sa, old;
	struct pool_stats before, after;
	struct pool_config cfg;
	unsigned long moved;
	pthread_t t;
	unsigned int i;

	if (!POOL_USE_JEMALLOC || TEST_ASAN || TEST_TSAN || POOL_ASSERTS >= 1) {
		printf("check_transfer: page test for the jemalloc build without sanitizers\n");
		return;
	}
	pool_get_config(&cfg);
	a.pool = pool_create_aligned("pages", (size_t)page, (size_t)page, 0);
	a.objs = calloc(PAGE_OBJS, sizeof(void *));
	ck_assert_ptr_nonnull(a.pool);
	ck_assert_ptr_nonnull(a.objs);
	ck_assert_int_eq(pthread_create(&t, NULL, page_alloc_free, &a), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	page_lo = (char *)a.objs[0];
	page_hi = page_lo;
	for (i = 0; i < PAGE_OBJS; i++) {
		char *o = a.objs[i];

		if (o < page_lo)
			page_lo = o;
		if (o + page > page_hi)
			page_hi = o + page;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = page_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);
	before = test_stats(a.pool);
	for (i = 0; i < PAGE_OBJS; i++)
		ck_assert_int_eq(mprotect(a.objs[i], (size_t)page, PROT_NONE), 0);
	/* shared lists -> another thread's cache (refill) -> its budget overflows (eviction) ->
	 * its exit (flush) -> this thread, again -> pool_thread_flush() -> the OS layer */
	ck_assert_int_eq(pthread_create(&t, NULL, page_alloc_free, &a), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	page_alloc_free(&a);
	pool_thread_flush();
	pool_gc(a.pool);
	pool_gc(a.pool);
	pool_flush(a.pool);
	after = test_stats(a.pool);
	/*
	 * The slabs went back to jemalloc with their pages closed: open them before jemalloc hands
	 * that memory to anyone (this process's malloc() is jemalloc's too).
	 */
	for (i = 0; i < PAGE_OBJS; i++)
		ck_assert_int_eq(mprotect(a.objs[i], (size_t)page, PROT_READ | PROT_WRITE), 0);
	ck_assert_int_eq(sigaction(SIGSEGV, &old, NULL), 0);
	moved = (after.shared_get_objects - before.shared_get_objects) +
	        (after.shared_put_objects - before.shared_put_objects) +
	        (after.os_releases - before.os_releases);
	printf("check_transfer: %lu objects moved, %lu object pages touched\n", moved,
	       atomic_load(&page_faults));
	ck_assert_uint_gt(moved, 2 * PAGE_OBJS);
	ck_assert_msg((double)atomic_load(&page_faults) <= (double)moved * (1.0 / cfg.cluster + 0.01),
	              "%lu pages touched for %lu objects moved", atomic_load(&page_faults), moved);
	ck_assert_uint_eq(after.allocated, 0);
	free(a.objs);
	ck_assert_int_eq(pool_destroy(a.pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Exact counters after bursty teardown                                                       */
/* ------------------------------------------------------------------------------------------ */

/*
 * 48 threads, each with 2000 live objects of three sizes, a quarter handed to other threads,
 * every live set freed in a burst as its thread ends, three times over: every object comes back
 * as it was given (no double hand-out), and once every cache is flushed used == 0 and
 * allocated == shared_free, for every pool.
 */
START_TEST(test_teardown_counters)
{
	static struct storm st;
	int round;

	storm_init(&st, 48, 2000, 6000);
	for (round = 0; round < 3; round++) {
		storm_run(&st);
		storm_books(&st);
	}
	ck_assert_uint_eq(atomic_load(&st.null), 0);
	storm_destroy(&st);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Debugging modes on magazines, switched at run time under load                              */
/* ------------------------------------------------------------------------------------------ */

static atomic_int flipping;

static void *flipper(void *arg)
{
	static const char *const modes[] = {
		"integrity", "no-integrity", "cold-first", "hot-first", "no-cache", "cache",
		"no-global", "global", "poison", "no-poison", "integrity,cold-first",
		"no-integrity,hot-first", "no-cache,no-global", "cache,global",
	};
	unsigned int i = 0;

	(void)arg;
	while (atomic_load(&flipping)) {
		ck_assert_int_eq(pool_parse_debugging(modes[i++ % (sizeof(modes) /
		                                                   sizeof(modes[0]))], NULL), 0);
		sched_yield();
	}
	ck_assert_int_eq(pool_parse_debugging("no-integrity,hot-first,cache,global,no-poison",
	                                      NULL), 0);
	return NULL;
}

/*
 * The run-time switches (integrity, cold-first, no-cache, no-global, poison) flip without pause
 * while 16 threads run storms: no object is handed out twice or found changed, no check fires
 * on an object cached before it was switched on, and the books are exact after.
 */
START_TEST(test_switches_under_load)
{
	static struct storm st;
	pthread_t f;
	int round;

	storm_init(&st, 16, 1500, 4000);
	atomic_store(&flipping, 1);
	ck_assert_int_eq(pthread_create(&f, NULL, flipper, NULL), 0);
	for (round = 0; round < 3; round++)
		storm_run(&st);
	atomic_store(&flipping, 0);
	ck_assert_int_eq(pthread_join(f, NULL), 0);
	storm_books(&st);
	storm_destroy(&st);
}
END_TEST

/*
 * The layout modes are set before the first pool (POOL_DEBUG): the storm runs in a child of this
 * program under each, with its books checked.
 */
START_TEST(test_layout_modes)
{
	static const char *const modes[] = { "tag", "caller", "tag,caller,integrity", "uaf",
	                                     "uaf,cache", "backup" };
	char *argv[] = { "check_transfer", "--storm", NULL };
	static char out[8192];
	unsigned int i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int status = test_run_self(argv, "POOL_DEBUG", modes[i], out, sizeof(out));

		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "POOL_DEBUG=%s: status 0x%x\n%s", modes[i], status, out);
		ck_assert_msg(strstr(out, "storm ok") != NULL, "POOL_DEBUG=%s:\n%s", modes[i], out);
	}
}
END_TEST

/* The child of test_layout_modes: a smaller storm (uaf maps a page per object). */
START_TEST(test_storm_child)
{
	static struct storm st;

	storm_init(&st, 8, 300, 1200);
	storm_run(&st);
	storm_books(&st);
	storm_destroy(&st);
}
END_TEST

/* Run test_storm_child alone, as its own suite; "storm ok" when it passed. */
static int storm_child(void)
{
	Suite *s = suite_create("storm");
	TCase *tc = tcase_create("Storm");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_storm_child);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!failed)
		printf("storm ok\n");
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* fork() while threads move objects, singly and in bulk                                     */
/* ------------------------------------------------------------------------------------------ */

#define FORK_WORKERS 6
#define FORK_BULK    24

struct forker {
	struct pool_head *pool;
	atomic_int stop;
	atomic_int gate;              /* TSan: workers wait outside the library while it is 1 */
	atomic_int parked;
	_Atomic(uintptr_t) xfer[64];
};

static void *fork_worker(void *arg)
{
	struct forker *fk = arg;
	void *objs[FORK_BULK];
	uint64_t seed = (uintptr_t)&objs;
	unsigned int i;

	while (!atomic_load(&fk->stop)) {
		uint64_t r = storm_rand(&seed);

		if (TEST_TSAN && atomic_load(&fk->gate)) {
			atomic_fetch_add(&fk->parked, 1);
			while (atomic_load(&fk->gate))
				sched_yield();
			atomic_fetch_sub(&fk->parked, 1);
		}
		if (r & 1) {
			/* bulk: the calls whose magazine spill a fork could cut before */
			if (pool_alloc_bulk(fk->pool, objs, FORK_BULK) != FORK_BULK)
				continue;
			for (i = 0; i < FORK_BULK; i++)
				memset(objs[i], (int)i, 64);
			pool_free_bulk(fk->pool, objs, FORK_BULK);
		} else {
			void *o = pool_alloc(fk->pool);
			uintptr_t got;

			if (!o)
				continue;
			memset(o, 0x5a, 64);
			got = atomic_exchange(&fk->xfer[(r >> 8) % 64], (uintptr_t)o);
			if (got)
				pool_free(fk->pool, (void *)got);
		}
	}
	return NULL;
}

/* In the child: the books balance, and the pool serves 1000 objects and takes them back. */
static int fork_child_check(struct forker *fk)
{
	struct pool_stats s;
	void *o[1000];
	unsigned int i;

	if (pool_get_stats(fk->pool, &s, sizeof(s)) != 0)
		return 2;
	/* objects the vanished threads held in their hands stay used: the rest adds up */
	if (s.allocated != s.used + s.shared_free || s.allocated != s.os_allocs - s.os_releases -
	    s.lost)
		return 3;
	for (i = 0; i < 1000; i++)
		if (!(o[i] = pool_alloc(fk->pool)))
			return 4;
	for (i = 0; i < 1000; i++)
		memset(o[i], 1, 64);
	if (pool_alloc_bulk(fk->pool, o, 500) != 500)
		return 5;
	pool_free_bulk(fk->pool, o, 500);
	for (i = 500; i < 1000; i++)
		pool_free(fk->pool, o[i]);
	pool_thread_flush();
	if (pool_get_stats(fk->pool, &s, sizeof(s)) != 0 || s.allocated != s.used + s.shared_free)
		return 6;
	return 0;
}

/*
 * Six threads alternate bulk and single calls, handing objects to each other, while this thread
 * forks 300 times: every child ends normally (none is killed inside fork() or after it), its
 * books balance and it can allocate. Under ThreadSanitizer, whose runtime before LLVM 19 is not
 * fork-safe with running threads, the workers wait outside the library during each fork().
 */
START_TEST(test_fork_during_transfers)
{
	static struct forker fk;
	pthread_t t[FORK_WORKERS];
	unsigned int i, crashed = 0, failed = 0;
	int forks = TEST_TSAN ? 60 : 300;

	memset(&fk, 0, sizeof(fk));
	fk.pool = pool_create("forked", 64, 0);
	for (i = 0; i < FORK_WORKERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, fork_worker, &fk), 0);
	for (i = 0; i < (unsigned int)forks; i++) {
		struct timespec ts = { 0, 200000 + (long)(i % 7) * 300000 };
		int status;
		pid_t pid;

		nanosleep(&ts, NULL);
		if (TEST_TSAN) {
			atomic_store(&fk.gate, 1);
			while (atomic_load(&fk.parked) < FORK_WORKERS)
				sched_yield();
		}
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(fork_child_check(&fk));
		atomic_store(&fk.gate, 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		if (WIFSIGNALED(status))
			crashed++;
		else if (WEXITSTATUS(status) != 0)
			failed++;
	}
	atomic_store(&fk.stop, 1);
	for (i = 0; i < FORK_WORKERS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_msg(crashed == 0 && failed == 0, "%u of %d children crashed, %u failed", crashed,
	              forks, failed);
	for (i = 0; i < 64; i++)
		if (fk.xfer[i])
			pool_free(fk.pool, (void *)fk.xfer[i]);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(fk.pool).used, 0);
	ck_assert_int_eq(pool_destroy(fk.pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* pool_destroy() while another thread allocates                                              */
/* ------------------------------------------------------------------------------------------ */

static struct pool_head *racing_pool;
static atomic_int racing_started;

static void *racing_user(void *arg)
{
	void *objs[8];

	(void)arg;
	for (;;) {
		void *o = pool_alloc(racing_pool);

		atomic_store(&racing_started, 1);
		if (o) {
			memset(o, 0x33, 64);
			pool_free(racing_pool, o);
		}
		if (pool_alloc_bulk(racing_pool, objs, 8) == 8)
			pool_free_bulk(racing_pool, objs, 8);
	}
	return NULL;
}

/* A child: a thread uses the pool while this one destroys it. */
static void destroy_race(void *arg)
{
	struct timespec ts = { 0, (long)(uintptr_t)arg * 97000 };
	pthread_t t;

	racing_pool = pool_create("racing", 64, 0);
	if (!racing_pool || pthread_create(&t, NULL, racing_user, NULL) != 0)
		_exit(2);
	while (!atomic_load(&racing_started))
		sched_yield();
	nanosleep(&ts, NULL);
	if (pool_destroy(racing_pool) != 0) {
		/* objects were out: EBUSY, the pool stays; that is the other documented outcome */
		_exit(errno == EBUSY ? 0 : 3);
	}
	/* destroyed: the racing thread's next slow path reports it, and the process aborts */
	for (;;)
		pause();
}

/*
 * Forbidden, and checked anyway: pool_destroy() while another thread allocates and frees, 40
 * times. The destroying thread never crashes: each run ends either with pool_destroy() failing
 * with EBUSY (the thread had an object out), or with the thread's report of the destroyed pool
 * (pool_destroy(3)), which aborts.
 */
START_TEST(test_destroy_while_allocating)
{
	static const char *const words[] = { "use of a destroyed pool", "racing", NULL };
	unsigned int i, busy = 0, reported = 0;

	if (TEST_TSAN) {
		/* the usage is forbidden because it races: ThreadSanitizer rightly reports it */
		printf("check_transfer: destroy under use is a data race, not run under TSan\n");
		return;
	}
	for (i = 0; i < 40; i++) {
		struct death d;

		run_child(destroy_race, (void *)(uintptr_t)(i % 10), &d);
		if (WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0) {
			busy++;
			continue;
		}
		ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == SIGABRT,
		              "run %u: status 0x%x\n%s", i, d.status, d.out);
		for (const char *const *w = words; *w; w++)
			ck_assert_msg(strstr(d.out, *w) != NULL, "run %u: no '%s' in\n%s", i, *w,
			              d.out);
		reported++;
	}
	printf("check_transfer: destroy under use: %u EBUSY, %u reported\n", busy, reported);
}
END_TEST

static Suite *transfer_suite(void)
{
	Suite *s = suite_create("transfer");
	TCase *tc = tcase_create("Budget");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_budget_counted);
	tcase_add_test(tc, test_budget_pages);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_teardown_counters);
	tcase_add_test(tc, test_switches_under_load);
	tcase_add_test(tc, test_layout_modes);
	tcase_add_test(tc, test_fork_during_transfers);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_destroy_while_allocating);
	suite_add_tcase(s, tc);
	return s;
}

/* `check_transfer --storm`: the child of test_layout_modes. */
static int before(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--storm"))
		return storm_child();
	return -1;
}

POOL_TEST_MAIN_ARGS(transfer_suite, before)
