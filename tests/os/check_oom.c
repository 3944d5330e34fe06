/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Out of memory under an address-space limit (RLIMIT_AS, `ulimit -v`), with the OS layer the
 * build has (jemalloc, or the C library with USE_JEMALLOC=0): threads allocate from two pools
 * until NULL, free everything, give it back, and allocate again. Every NULL must come with
 * errno = ENOMEM and be counted in `failed`, nothing may crash, the counters must come back to
 * 0, and a thread that could allocate before must allocate again once memory is back.
 *
 * Each run is a child process that re-executes this program (`--child`) with the limit set
 * before exec, as `ulimit -v` does, so that the libraries load under it too. Two limits:
 *   - 30 MB for the whole process (the limit at which jemalloc used to crash 7 runs in 10): a
 *     thread may get nothing at all there (see pool-os.c), but nothing crashes;
 *   - the child's own size after start-up plus 24 MiB, set by the child itself once its pools
 *     and threads exist: every thread has room to start, so each must allocate something.
 * Two more children, for what went wrong with jemalloc's first call on a new thread (see
 * pool-os.c):
 *   - every file descriptor taken (EMFILE) and 1 MiB of address space left: a new thread's first
 *     allocation must be a counted NULL, not a crash in jemalloc (the guard once needed
 *     /proc/self/statm and let the call through when it could not open it: 5 crashes in 5);
 *     once the limit is lifted, the same thread allocates;
 *   - a burst of threads that fills the limit, everything freed and given back, then new
 *     threads one after the other: each must get an object (0 of 1000 did, since jemalloc keeps
 *     the address space it purged and VmSize stays at its peak), with the MALLOC_CONF settings
 *     that doc/debugging.md says work: narenas:<n> once every arena exists, narenas:1,
 *     retain:false;
 *   - issue 29's round, with jemalloc's defaults: the main thread alone fills the limit, a new
 *     thread then needed an arena jemalloc had no room to create (32 and 0 of 1,000 objects);
 *     now the OS layer makes spare arenas ahead and falls back to the arenas that retain the
 *     burst's memory: the new thread, then four at once, each get 1,000 of two pools;
 *   - the same under a room that leaves one spare, with 64 arenas and with the defaults: six new
 *     threads one after the other, each as well off as the main thread (the arena of a thread
 *     that exited must count as a spare again, or the third gets only what the shared lists
 *     hold).
 * And one without a limit: a new thread's first call must not wait for the lock the limit needs
 * (child_nolock()).
 * These children set the limit themselves at run time, and call pool_trim() after setrlimit()
 * as the documentation asks of such programs.
 * AddressSanitizer and ThreadSanitizer reserve terabytes of shadow memory and cannot run under
 * RLIMIT_AS: the test is skipped in those builds (exit 77). CHECK_OOM_VERBOSE=1 in the
 * environment makes each child print what each thread got.
 * Internal test: it asks the OS layer whether a thread was set up in jemalloc ("os/pool-os.h").
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <pool/pool.h>

#include "os/pool-os.h"
#include "testutil.h"

static const int shadow_sanitizer = TEST_ASAN || TEST_TSAN;

#define THREADS        4
#define MAX_OBJS       16384       /* per thread and pool: more than any limit here lets in */
#define AGAIN_OBJS     100
#define RUNS           20
/*
 * Bytes: the whole process, set before exec. UBSan's runtime adds about 7 MiB of address space
 * to the child before main() (17.7 MiB without it, 24.4 with it, gcc 12): the limit keeps the
 * same room above that.
 */
#ifdef POOL_SAN_UNDEFINED
#define WHOLE_LIMIT    (37u << 20)
#else
#define WHOLE_LIMIT    (30u << 20)
#endif
#define HEADROOM       (24u << 20)  /* bytes above the child's size once it has started */

/* this program, which runs itself as the child */
static const char *const self_path = "/proc/self/exe";

/* ------------------------------------------------------------------------------------------ */
/* The child                                                                                  */
/* ------------------------------------------------------------------------------------------ */

struct worker {
	pthread_t tid;
	struct pool_head *pool[2];
	void **objs[2];
	size_t got[2];              /* objects allocated before the first NULL of each pool */
	size_t nulls[2];            /* NULLs seen */
	size_t again;               /* objects allocated once memory was given back */
	int ready;                  /* the thread made its first call into the OS layer */
	int bad_errno;              /* a NULL came with another errno than ENOMEM */
};

static pthread_barrier_t phase;

/* Allocate from both pools in turn until both answer NULL (or the arrays are full). */
static void fill(struct worker *w)
{
	int done[2] = { 0, 0 }, i;

	while (!done[0] || !done[1]) {
		for (i = 0; i < 2; i++) {
			void *o;

			if (done[i])
				continue;
			if (w->got[i] == MAX_OBJS) {
				done[i] = 1;
				continue;
			}
			errno = 0;
			o = pool_alloc(w->pool[i]);
			if (!o) {
				w->nulls[i]++;
				w->bad_errno |= errno != ENOMEM;
				done[i] = 1;
				continue;
			}
			memset(o, 0xA5, pool_object_size(w->pool[i]));
			w->objs[i][w->got[i]++] = o;
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	size_t i, k;
	int p;

	pthread_barrier_wait(&phase);            /* 1: the limit is set */
	/* one object each first, as a server's threads do before the load that fills memory */
	for (p = 0; p < 2; p++) {
		errno = 0;
		w->objs[p][0] = pool_alloc(w->pool[p]);
		if (w->objs[p][0])
			w->got[p]++;
		else
			w->nulls[p]++;
		w->bad_errno |= !w->objs[p][0] && errno != ENOMEM;
	}
	pthread_barrier_wait(&phase);            /* 1b: every thread has started */
	fill(w);
	w->ready = pool__os_thread_ready();
	pthread_barrier_wait(&phase);            /* 2: every thread met NULL */
	for (p = 0; p < 2; p++)
		for (i = 0; i < w->got[p]; i++)
			pool_free(w->pool[p], w->objs[p][i]);
	pool_thread_flush();
	pthread_barrier_wait(&phase);            /* 3: everything is free */
	pthread_barrier_wait(&phase);            /* 4: main gave it back to the OS layer */
	for (p = 0; p < 2; p++) {
		for (k = 0; k < AGAIN_OBJS; k++) {
			w->objs[p][k] = pool_alloc(w->pool[p]);
			if (!w->objs[p][k]) {
				w->nulls[p]++;
				w->bad_errno |= errno != ENOMEM;
				break;
			}
		}
		w->again += k;
		for (i = 0; i < k; i++)
			pool_free(w->pool[p], w->objs[p][i]);
	}
	pool_thread_flush();
	return NULL;
}

static size_t vm_size(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (size_t)sysconf(_SC_PAGESIZE);
}

#define CHILD_CHECK(cond, ...)                                                          \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "check_oom child: " __VA_ARGS__);              \
			fputc('\n', stderr);                                           \
			return 1;                                                      \
		}                                                                      \
	} while (0)

/*
 * `relative`: set RLIMIT_AS to our size plus HEADROOM once pools and threads exist (every thread
 * must then allocate); otherwise the parent set the limit before exec.
 */
static int child(int relative)
{
	static struct worker w[THREADS];
	struct pool_head *pool[2];
	struct pool_stats st;
	size_t nulls[2] = { 0, 0 };
	pthread_attr_t attr;
	int i, p;

	pool[0] = pool_create("oom-small", 64, 0);
	pool[1] = pool_create("oom-big", 4096, 0);
	CHILD_CHECK(pool[0] && pool[1], "pool_create: %s", strerror(errno));
	CHILD_CHECK(pthread_barrier_init(&phase, NULL, THREADS + 1) == 0, "barrier");
	CHILD_CHECK(pthread_attr_init(&attr) == 0 &&
	            pthread_attr_setstacksize(&attr, 256u << 10) == 0, "attr");
	for (i = 0; i < THREADS; i++) {
		for (p = 0; p < 2; p++) {
			w[i].pool[p] = pool[p];
			w[i].objs[p] = mmap(NULL, MAX_OBJS * sizeof(void *), PROT_READ | PROT_WRITE,
			                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			CHILD_CHECK(w[i].objs[p] != MAP_FAILED, "mmap: %s", strerror(errno));
		}
		CHILD_CHECK(pthread_create(&w[i].tid, &attr, worker_main, &w[i]) == 0,
		            "pthread_create failed");
	}
	if (relative) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = vm_size() + HEADROOM;
		CHILD_CHECK(setrlimit(RLIMIT_AS, &rl) == 0, "setrlimit: %s", strerror(errno));
		/* a limit set at run time: libpool reads it again there (doc/debugging.md) */
		pool_trim();
	}
	pthread_barrier_wait(&phase);            /* 1 */
	pthread_barrier_wait(&phase);            /* 1b */
	pthread_barrier_wait(&phase);            /* 2 */
	pthread_barrier_wait(&phase);            /* 3 */
	for (p = 0; p < 2; p++) {
		pool_flush(pool[p]);
		CHILD_CHECK(pool_get_stats(pool[p], &st, sizeof(st)) == 0, "stats");
		CHILD_CHECK(st.used == 0 && st.allocated == 0,
		            "%s after freeing and flushing: used %zu, allocated %zu",
		            pool_name(pool[p]), (size_t)st.used, (size_t)st.allocated);
	}
	pool_gc(NULL);
	pthread_barrier_wait(&phase);            /* 4 */
	for (i = 0; i < THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		CHILD_CHECK(!w[i].bad_errno, "thread %d: a NULL without errno = ENOMEM", i);
		CHILD_CHECK(w[i].nulls[0] + w[i].nulls[1] > 0 || w[i].got[0] == MAX_OBJS ||
		            w[i].got[1] == MAX_OBJS, "thread %d never met the limit", i);
		if (relative)
			CHILD_CHECK(w[i].got[0] + w[i].got[1] > 0,
			            "thread %d allocated nothing with %u MiB of room", i,
			            HEADROOM >> 20);
		/*
		 * A thread that could allocate before can allocate again: its memory is back. But a
		 * thread the first-call guard refused (no room to set it up in jemalloc) took its
		 * objects from slabs other threads made, and gets no new slab once they went back.
		 */
		if (w[i].got[0] + w[i].got[1] > 0 && w[i].ready)
			CHILD_CHECK(w[i].again > 0, "thread %d: nothing again after the memory "
			            "came back (it had %zu + %zu objects)", i, w[i].got[0],
			            w[i].got[1]);
		for (p = 0; p < 2; p++)
			nulls[p] += w[i].nulls[p];
		if (getenv("CHECK_OOM_VERBOSE"))
			fprintf(stderr, "thread %d: %zu + %zu objects, %zu + %zu NULLs, %zu again\n",
			        i, w[i].got[0], w[i].got[1], w[i].nulls[0], w[i].nulls[1],
			        w[i].again);
	}
	for (p = 0; p < 2; p++) {
		pool_flush(pool[p]);
		CHILD_CHECK(pool_get_stats(pool[p], &st, sizeof(st)) == 0, "stats");
		CHILD_CHECK(st.used == 0 && st.allocated == 0, "%s at the end: used %zu, "
		            "allocated %zu", pool_name(pool[p]), (size_t)st.used,
		            (size_t)st.allocated);
		CHILD_CHECK(st.failed == nulls[p], "%s: %zu NULLs seen, %zu counted",
		            pool_name(pool[p]), nulls[p], (size_t)st.failed);
		CHILD_CHECK(pool_destroy(pool[p]) == 0, "pool_destroy: %s", strerror(errno));
	}
	return 0;
}

/* Does this build allocate objects from jemalloc? */
static int jemalloc_layer(void)
{
	struct pool_os_stats os;

	return pool_get_os_stats(&os, sizeof(os)) == 0 && !strcmp(os.layer, "jemalloc");
}

/* A soft RLIMIT_AS of `bytes` (the hard limit kept, so that it can be lifted again). */
static int set_soft_as(rlim_t bytes)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) != 0)
		return -1;
	rl.rlim_cur = bytes;
	return setrlimit(RLIMIT_AS, &rl);
}

/* nofile: a thread that allocates once at each of two signals. */
struct late {
	struct pool_head *pool;
	pthread_barrier_t go;
	void *obj[2];
	int err[2];
};

static void *late_main(void *arg)
{
	struct late *l = arg;
	int i;

	for (i = 0; i < 2; i++) {
		pthread_barrier_wait(&l->go);
		errno = 0;
		l->obj[i] = pool_alloc(l->pool);
		l->err[i] = errno;
		pthread_barrier_wait(&l->go);
	}
	for (i = 0; i < 2; i++)
		pool_free(l->pool, l->obj[i]);
	pool_thread_flush();
	return NULL;
}

#define NOFILE_MAX 64

/*
 * Every descriptor taken and 1 MiB of address space left: a new thread's first allocation is
 * a NULL (ENOMEM, counted) with jemalloc, whose new arena needs 4 MiB; never a crash.
 */
static int child_nofile(void)
{
	static struct late l;
	struct pool_head *pool = pool_create("oom-nofile", 64, 0);
	struct rlimit nofile;
	struct pool_stats st;
	pthread_attr_t attr;
	pthread_t t;
	int fds[NOFILE_MAX], nfd = 0, je;
	size_t vm;

	CHILD_CHECK(pool, "pool_create: %s", strerror(errno));
	je = jemalloc_layer();
	l.pool = pool;
	CHILD_CHECK(pthread_barrier_init(&l.go, NULL, 2) == 0, "barrier");
	CHILD_CHECK(pthread_attr_init(&attr) == 0 &&
	            pthread_attr_setstacksize(&attr, 256u << 10) == 0, "attr");
	/* the thread exists before the limit (its stack is mapped), and has not allocated yet */
	CHILD_CHECK(pthread_create(&t, &attr, late_main, &l) == 0, "pthread_create");
	vm = vm_size();
	CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &nofile) == 0, "getrlimit");
	nofile.rlim_cur = nofile.rlim_max < NOFILE_MAX ? nofile.rlim_max : NOFILE_MAX;
	CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &nofile) == 0, "setrlimit(RLIMIT_NOFILE)");
	while (nfd < NOFILE_MAX && (fds[nfd] = open("/dev/null", O_RDONLY)) >= 0)
		nfd++;
	CHILD_CHECK(nfd < NOFILE_MAX && errno == EMFILE, "open() did not run out of descriptors");
	CHILD_CHECK(set_soft_as(vm + (1u << 20)) == 0, "setrlimit(RLIMIT_AS): %s", strerror(errno));
	pool_trim();
	pthread_barrier_wait(&l.go);
	pthread_barrier_wait(&l.go);
	if (getenv("CHECK_OOM_VERBOSE"))
		fprintf(stderr, "nofile: first allocation %p (errno %d)\n", l.obj[0], l.err[0]);
	if (je)
		CHILD_CHECK(!l.obj[0] && l.err[0] == ENOMEM, "the new thread's first allocation "
		            "got %p (errno %d) with 1 MiB of address space left", l.obj[0], l.err[0]);
	else
		CHILD_CHECK(l.obj[0] || l.err[0] == ENOMEM, "a NULL without errno = ENOMEM");
	CHILD_CHECK(pool_get_stats(pool, &st, sizeof(st)) == 0 && st.failed == (l.obj[0] ? 0u : 1u),
	            "failed = %zu", (size_t)st.failed);
	/* the limit lifted: the same thread allocates (a refusal is not for good) */
	CHILD_CHECK(set_soft_as(RLIM_INFINITY) == 0, "lifting RLIMIT_AS: %s", strerror(errno));
	pthread_barrier_wait(&l.go);
	pthread_barrier_wait(&l.go);
	CHILD_CHECK(l.obj[1] != NULL, "no object once the limit was lifted (errno %d)", l.err[1]);
	CHILD_CHECK(pthread_join(t, NULL) == 0, "join");
	while (nfd)
		close(fds[--nfd]);
	pool_flush(pool);
	CHILD_CHECK(pool_destroy(pool) == 0, "pool_destroy: %s", strerror(errno));
	return 0;
}

#define BURST_THREADS  8
#define LATE_THREADS   16
#define BURST_ROOM     (64u << 20)   /* bytes of address space above the child's size */
#define BURST_OBJ      4096u

struct burster {
	pthread_t tid;
	struct pool_head *pool;
	void **objs;
	size_t got;
};

static pthread_barrier_t burst_phase;

/*
 * One object first (the thread's first call into the OS layer, while the process is small),
 * then, once every thread has one, allocate until NULL, wait for all, free everything.
 */
static void burst_fill(struct burster *b)
{
	if ((b->objs[0] = pool_alloc(b->pool)) != NULL)
		b->got = 1;
	pthread_barrier_wait(&burst_phase);
	while (b->got < MAX_OBJS && (b->objs[b->got] = pool_alloc(b->pool)) != NULL) {
		memset(b->objs[b->got], 0x5a, 64);
		b->got++;
	}
	pthread_barrier_wait(&burst_phase);
	while (b->got)
		pool_free(b->pool, b->objs[--b->got]);
	pool_thread_flush();
}

static void *burst_main(void *arg)
{
	burst_fill(arg);
	return NULL;
}

static void *late_one(void *arg)
{
	struct burster *b = arg;
	void *o = pool_alloc(b->pool);

	b->got = o != NULL;
	pool_free(b->pool, o);
	pool_thread_flush();
	return NULL;
}

/*
 * A burst of threads fills the address space the limit leaves; everything is freed and given
 * back (pool_flush(), pool_gc()); then LATE_THREADS new threads, one at a time, must each get
 * an object.
 */
static int child_burst(void)
{
	static struct burster b[BURST_THREADS + 1];
	struct pool_head *pool = pool_create("oom-burst", BURST_OBJ, 0);
	struct burster late;
	struct pool_stats st;
	pthread_attr_t attr;
	unsigned int i, got = 0;

	CHILD_CHECK(pool, "pool_create: %s", strerror(errno));
	/* one stack size for every thread: an exited thread's stack is reused, not mapped */
	CHILD_CHECK(pthread_attr_init(&attr) == 0 &&
	            pthread_attr_setstacksize(&attr, 256u << 10) == 0, "attr");
	CHILD_CHECK(pthread_barrier_init(&burst_phase, NULL, BURST_THREADS + 1) == 0, "barrier");
	for (i = 0; i <= BURST_THREADS; i++) {
		b[i].pool = pool;
		b[i].objs = mmap(NULL, MAX_OBJS * sizeof(void *), PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(b[i].objs != MAP_FAILED, "mmap: %s", strerror(errno));
	}
	CHILD_CHECK(set_soft_as(vm_size() + BURST_ROOM) == 0, "setrlimit: %s", strerror(errno));
	pool_trim();
	/* the burst: the main thread takes part (its arena is the one new threads set up from) */
	for (i = 0; i < BURST_THREADS; i++)
		CHILD_CHECK(pthread_create(&b[i].tid, &attr, burst_main, &b[i]) == 0,
		            "pthread_create");
	burst_fill(&b[BURST_THREADS]);
	for (i = 0; i < BURST_THREADS; i++)
		CHILD_CHECK(pthread_join(b[i].tid, NULL) == 0, "join");
	pool_flush(pool);
	pool_gc(NULL);
	CHILD_CHECK(pool_get_stats(pool, &st, sizeof(st)) == 0 && st.used == 0 && st.allocated == 0,
	            "after the burst: used %zu, allocated %zu", (size_t)st.used,
	            (size_t)st.allocated);
	CHILD_CHECK(st.failed > 0, "the burst never met the limit");
	for (i = 0; i < LATE_THREADS; i++) {
		late.pool = pool;
		late.got = 0;
		CHILD_CHECK(pthread_create(&late.tid, &attr, late_one, &late) == 0,
		            "pthread_create of late thread %u", i);
		CHILD_CHECK(pthread_join(late.tid, NULL) == 0, "join");
		got += (unsigned int)late.got;
	}
	if (getenv("CHECK_OOM_VERBOSE"))
		fprintf(stderr, "burst (MALLOC_CONF=%s): %u of %u late threads got an object\n",
		        getenv("MALLOC_CONF") ? getenv("MALLOC_CONF") : "", got, LATE_THREADS);
	CHILD_CHECK(got == LATE_THREADS, "%u of %u threads created after the burst got an object",
	            got, LATE_THREADS);
	pool_flush(pool);
	CHILD_CHECK(pool_destroy(pool) == 0, "pool_destroy: %s", strerror(errno));
	return 0;
}

/*
 * Issue 29's round: the main thread alone fills a pool of 1 MiB objects until NULL under a limit
 * of its size plus 256 MiB, frees everything and calls pool_gc() twice; then it frees the 1,000
 * objects of a small pool it held through the burst, which go to that pool's shared lists. A
 * new thread with a 128 KiB stack must get 1,000 objects of that pool and 1,000 of a fresh pool
 * of 64 bytes, as the main thread does (it got 32 and 0, all counted in `failed`: its first
 * call into jemalloc had to create an arena, with no room left for one); then SOLO_LATER
 * threads at once, each the same.
 */
#define SOLO_ROOM      (256u << 20)
#define SOLO_BIG       (1u << 20)
#define SOLO_OBJS      1000u
#define SOLO_LATER     4u

struct solo {
	struct pool_head *small, *fresh;
	void *objs[2][SOLO_OBJS];
	unsigned int got[2];
};

static void solo_alloc(struct solo *s)
{
	unsigned int i;

	for (i = 0; i < SOLO_OBJS; i++) {
		if ((s->objs[0][i] = pool_alloc(s->small)) != NULL)
			s->got[0]++;
		if ((s->objs[1][i] = pool_alloc(s->fresh)) != NULL)
			s->got[1]++;
	}
}

static void solo_free(struct solo *s)
{
	unsigned int i;

	for (i = 0; i < SOLO_OBJS; i++) {
		pool_free(s->small, s->objs[0][i]);
		pool_free(s->fresh, s->objs[1][i]);
	}
	pool_thread_flush();
}

static void *solo_thread(void *arg)
{
	solo_alloc(arg);
	solo_free(arg);
	return NULL;
}

static int child_solo_burst(void)
{
	static struct solo late, mainth, later[SOLO_LATER];
	static void *big[MAX_OBJS];
	pthread_t lt[SOLO_LATER];
	unsigned int i;
	struct pool_head *bigpool = pool_create("oom-solo-big", SOLO_BIG, 0);
	struct pool_stats st;
	pthread_attr_t attr;
	pthread_t t;
	size_t n = 0;

	late.small = pool_create("oom-solo-small", 64, 0);
	CHILD_CHECK(bigpool && late.small, "pool_create: %s", strerror(errno));
	/* the small pool's objects, held through the burst */
	late.fresh = late.small;
	solo_alloc(&late);
	CHILD_CHECK(late.got[0] == SOLO_OBJS, "small pool before the limit: %u", late.got[0]);
	CHILD_CHECK(set_soft_as(vm_size() + SOLO_ROOM) == 0, "setrlimit: %s", strerror(errno));
	pool_trim();
	while (n < MAX_OBJS && (big[n] = pool_alloc(bigpool)) != NULL)
		n++;
	CHILD_CHECK(n < MAX_OBJS, "the burst never met the limit");
	while (n)
		pool_free(bigpool, big[--n]);
	pool_thread_flush();
	pool_gc(NULL);
	pool_gc(NULL);
	/* then freed: they lie in the small pool's shared lists (pool_gc() kept none) */
	solo_free(&late);
	late.got[0] = late.got[1] = 0;
	CHILD_CHECK(pool_get_stats(late.small, &st, sizeof(st)) == 0 && st.shared_free > 0,
	            "no free object left in the small pool's shared lists");
	late.fresh = pool_create("oom-solo-fresh", 64, 0);
	CHILD_CHECK(late.fresh, "pool_create: %s", strerror(errno));
	CHILD_CHECK(pthread_attr_init(&attr) == 0 &&
	            pthread_attr_setstacksize(&attr, 128u << 10) == 0, "attr");
	CHILD_CHECK(pthread_create(&t, &attr, solo_thread, &late) == 0, "pthread_create");
	CHILD_CHECK(pthread_join(t, NULL) == 0, "join");
	mainth.small = late.small;
	mainth.fresh = late.fresh;
	solo_alloc(&mainth);
	solo_free(&mainth);
	if (getenv("CHECK_OOM_VERBOSE"))
		fprintf(stderr, "solo burst (MALLOC_CONF=%s): the new thread got %u and %u of %u, "
		        "the main thread %u and %u\n", getenv("MALLOC_CONF") ? getenv("MALLOC_CONF") :
		        "", late.got[0], late.got[1], SOLO_OBJS, mainth.got[0], mainth.got[1]);
	CHILD_CHECK(late.got[0] == SOLO_OBJS && late.got[1] == SOLO_OBJS,
	            "the thread created after the burst got %u of %u objects of the small pool and "
	            "%u of a fresh one (the main thread: %u and %u)", late.got[0], SOLO_OBJS,
	            late.got[1], mainth.got[0], mainth.got[1]);
	CHILD_CHECK(mainth.got[0] == SOLO_OBJS && mainth.got[1] == SOLO_OBJS,
	            "the main thread got %u and %u of %u", mainth.got[0], mainth.got[1], SOLO_OBJS);
	for (i = 0; i < SOLO_LATER; i++) {
		later[i].small = late.small;
		later[i].fresh = late.fresh;
		CHILD_CHECK(pthread_create(&lt[i], &attr, solo_thread, &later[i]) == 0,
		            "pthread_create");
	}
	for (i = 0; i < SOLO_LATER; i++) {
		CHILD_CHECK(pthread_join(lt[i], NULL) == 0, "join");
		CHILD_CHECK(later[i].got[0] == SOLO_OBJS && later[i].got[1] == SOLO_OBJS,
		            "later thread %u got %u and %u of %u", i, later[i].got[0],
		            later[i].got[1], SOLO_OBJS);
	}
	return 0;
}

/*
 * New threads one after the other, after the same burst under a tight room (SEQUEL_ROOM: the
 * spares made ahead of new threads get an eighth of it, one arena of 2 MiB): the first takes
 * the spare and exits; every later one must still get as many objects as the main thread, from
 * a pool with free objects and from a fresh one. The arena of a thread that exited has no
 * thread any more, and jemalloc gives such an arena to a new thread before it creates one: the
 * library must count it as a spare again, or a new thread's first call is refused and it gets
 * only what the shared lists hold (one slab's worth, 254 objects of 64 bytes).
 */
#define SEQUEL_ROOM    (16u << 20)
#define SEQUEL_THREADS 6u

static int child_sequel(void)
{
	static struct solo mainth, late[SEQUEL_THREADS];
	static void *big[MAX_OBJS];
	struct pool_head *bigpool = pool_create("oom-sequel-big", SOLO_BIG, 0);
	pthread_attr_t attr;
	pthread_t t;
	unsigned int i;
	size_t n = 0;

	mainth.small = pool_create("oom-sequel-small", 64, 0);
	CHILD_CHECK(bigpool && mainth.small, "pool_create: %s", strerror(errno));
	mainth.fresh = mainth.small;
	solo_alloc(&mainth);
	CHILD_CHECK(mainth.got[0] == SOLO_OBJS, "small pool before the limit: %u", mainth.got[0]);
	CHILD_CHECK(set_soft_as(vm_size() + SEQUEL_ROOM) == 0, "setrlimit: %s", strerror(errno));
	pool_trim();
	while (n < MAX_OBJS && (big[n] = pool_alloc(bigpool)) != NULL)
		n++;
	CHILD_CHECK(n < MAX_OBJS, "the burst never met the limit");
	while (n)
		pool_free(bigpool, big[--n]);
	pool_thread_flush();
	pool_gc(NULL);
	solo_free(&mainth);
	mainth.fresh = pool_create("oom-sequel-fresh", 64, 0);
	CHILD_CHECK(mainth.fresh, "pool_create: %s", strerror(errno));
	CHILD_CHECK(pthread_attr_init(&attr) == 0 &&
	            pthread_attr_setstacksize(&attr, 128u << 10) == 0, "attr");
	for (i = 0; i < SEQUEL_THREADS; i++) {
		late[i].small = mainth.small;
		late[i].fresh = mainth.fresh;
		CHILD_CHECK(pthread_create(&t, &attr, solo_thread, &late[i]) == 0,
		            "pthread_create of thread %u", i);
		CHILD_CHECK(pthread_join(t, NULL) == 0, "join");
	}
	mainth.got[0] = mainth.got[1] = 0;
	solo_alloc(&mainth);
	solo_free(&mainth);
	for (i = 0; i < SEQUEL_THREADS; i++) {
		if (getenv("CHECK_OOM_VERBOSE"))
			fprintf(stderr, "sequel (MALLOC_CONF=%s): new thread %u got %u and %u of %u, "
			        "the main thread %u and %u\n", getenv("MALLOC_CONF") ?
			        getenv("MALLOC_CONF") : "", i, late[i].got[0], late[i].got[1], SOLO_OBJS,
			        mainth.got[0], mainth.got[1]);
		CHILD_CHECK(late[i].got[0] >= mainth.got[0] && late[i].got[1] >= mainth.got[1],
		            "new thread %u got %u of a pool with free objects and %u of a fresh one, "
		            "the main thread %u and %u", i, late[i].got[0], late[i].got[1],
		            mainth.got[0], mainth.got[1]);
	}
	CHILD_CHECK(mainth.got[0] == SOLO_OBJS && mainth.got[1] == SOLO_OBJS,
	            "the main thread got %u and %u of %u", mainth.got[0], mainth.got[1], SOLO_OBJS);
	return 0;
}

/*
 * No limit: a new thread's first call into jemalloc does not wait for the first-call lock,
 * which only a limit needs, and with every arena known (MALLOC_CONF=narenas:1) neither does the
 * bookkeeping after it. The main thread holds the lock, as fork() does
 * (pool__os_fork_prepare()), while a new thread makes its first allocation; the thread must be
 * done within NOLOCK_WAIT_S seconds (a bound for a deadlock: it takes microseconds), and the
 * lock is released either way: threads started together must not sleep on that lock in turn
 * while each is set up.
 */
#define NOLOCK_WAIT_S  60

static atomic_int nolock_done;   /* 1: the thread allocated; 2: it got NULL */

static void *nolock_thread(void *arg)
{
	struct pool_head *p = arg;
	void *o = pool_alloc(p);

	pool_free(p, o);
	pool_thread_flush();
	atomic_store(&nolock_done, o ? 1 : 2);
	return NULL;
}

static int child_nolock(void)
{
	struct pool_head *p = pool_create("oom-nolock", 64, 0);
	unsigned int ms;
	pthread_t t;
	int done = 0, started;
	void *o;

	CHILD_CHECK(p, "pool_create: %s", strerror(errno));
	o = pool_alloc(p);   /* the main thread is set up and its arena, the only one, known */
	CHILD_CHECK(o, "pool_alloc on the main thread");
	pool_free(p, o);
	pool__os_fork_prepare();
	started = pthread_create(&t, NULL, nolock_thread, p) == 0;
	for (ms = 0; started && ms < NOLOCK_WAIT_S * 1000u; ms++) {
		done = atomic_load(&nolock_done);
		if (done)
			break;
		usleep(1000);
	}
	pool__os_fork_after();
	CHILD_CHECK(started, "pthread_create");
	pthread_join(t, NULL);
	CHILD_CHECK(done != 0, "the new thread's first allocation waited for the first-call lock "
	            "(%d s)", NOLOCK_WAIT_S);
	CHILD_CHECK(done == 1, "the new thread's first allocation returned NULL");
	pool_destroy(p);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The parent: Check tests                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Run the child `RUNS` times, under `whole_limit` bytes (0: the child sets its own). */
static void run_children(size_t whole_limit)
{
	int run;

	for (run = 0; run < RUNS; run++) {
		int status;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			if (whole_limit) {
				struct rlimit rl = { whole_limit, whole_limit };

				if (setrlimit(RLIMIT_AS, &rl) != 0)
					_exit(98);
				execl(self_path, self_path, "--child", "whole", (char *)NULL);
			} else {
				execl(self_path, self_path, "--child", "relative", (char *)NULL);
			}
			_exit(99);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(!WIFSIGNALED(status), "run %d: the child died of signal %d", run,
		              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "run %d: the child failed (status %d; 99: exec failed)", run,
		              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

START_TEST(test_oom_whole_process_30mb)
{
	run_children(WHOLE_LIMIT);
}
END_TEST

START_TEST(test_oom_headroom_24mib)
{
	run_children(0);
}
END_TEST

/* Run `--child <mode>` with MALLOC_CONF=<conf> (unset when NULL): it must exit 0. */
static void run_mode(const char *mode, const char *conf)
{
	static char out[16384];
	char *argv[] = { "check_oom", "--child", (char *)mode, NULL };
	int status = test_run_self(argv, "MALLOC_CONF", conf, out, sizeof(out));

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	              "%s (MALLOC_CONF=%s): the child ended with status 0x%x:\n%s", mode,
	              conf ? conf : "", status, out);
	if (getenv("CHECK_OOM_VERBOSE"))
		fputs(out, stdout);
}

START_TEST(test_oom_no_descriptor_left)
{
	/* 4 arenas: the new thread's first call would have to create one */
	run_mode("nofile", "narenas:4");
	run_mode("nofile", NULL);
}
END_TEST

START_TEST(test_oom_threads_after_burst)
{
	run_mode("burst", "narenas:4");
	run_mode("burst", "narenas:1");
	run_mode("burst", "retain:false");
}
END_TEST

/* Issue 29's round, with jemalloc's defaults first (4 arenas per CPU, retain:true). */
START_TEST(test_oom_thread_after_a_burst_of_one)
{
	run_mode("solo", NULL);
	run_mode("solo", "narenas:128");
	run_mode("solo", "narenas:1");
	run_mode("solo", "retain:false");
}
END_TEST

/* New threads in turn after it, under a tight room, with many arenas (a machine of 16 CPUs). */
START_TEST(test_oom_threads_in_turn_after_a_burst)
{
	run_mode("sequel", "narenas:64");
	run_mode("sequel", NULL);
}
END_TEST

START_TEST(test_first_call_without_a_limit_takes_no_lock)
{
	run_mode("nolock", "narenas:1");
}
END_TEST

static Suite *oom_suite(void)
{
	Suite *s = suite_create("oom");
	TCase *tc = tcase_create("Limits");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_oom_whole_process_30mb);
	tcase_add_test(tc, test_oom_headroom_24mib);
	tcase_add_test(tc, test_oom_no_descriptor_left);
	tcase_add_test(tc, test_oom_threads_after_burst);
	tcase_add_test(tc, test_oom_thread_after_a_burst_of_one);
	tcase_add_test(tc, test_oom_threads_in_turn_after_a_burst);
	tcase_add_test(tc, test_first_call_without_a_limit_takes_no_lock);
	suite_add_tcase(s, tc);
	return s;
}

/* `check_oom --child absolute|relative`: the program run under the limit */
static int before(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child")) {
		if (!strcmp(argv[2], "nofile"))
			return child_nofile();
		if (!strcmp(argv[2], "burst"))
			return child_burst();
		if (!strcmp(argv[2], "solo"))
			return child_solo_burst();
		if (!strcmp(argv[2], "sequel"))
			return child_sequel();
		if (!strcmp(argv[2], "nolock"))
			return child_nolock();
		return child(!strcmp(argv[2], "relative"));
	}
	if (shadow_sanitizer) {
		printf("check_oom: skipped: the sanitizer's shadow memory cannot live under "
		       "RLIMIT_AS\n");
		return 77;
	}
	return -1;
}

POOL_TEST_MAIN_ARGS(oom_suite, before)
