/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-public.h - the public shapes: benchmarks that others wrote and published, written
 * here from their descriptions and parameters (no code of theirs), on the pools of the server
 * table (one per power of two from 8 B: bk_server_*(); the mallocs get the pool's size). The
 * parent runs the fourth shape of the family, the cross-thread pipeline pinned to one CPU and to
 * two, as pool-bench-threads.h's pipeline with pin lists of its own.
 *
 * mstress       mimalloc's test/test-stress.c with its default scale (MS_SCALE): rounds of
 *               `threads` new threads; thread i makes 100 x MS_SCALE x (i % 8 + 1) allocations
 *               of 8 << (r % 5) bytes (8-128 B) and half as many retained ones of 8 << (r % 7)
 *               (8-512 B), zero-filled (calloc, pool_zalloc) and every word written; after each
 *               it frees a random object of its own with a chance of 67% and swaps one with a
 *               random slot of an array of MS_TRANSFERS shared by all threads with a chance of
 *               26% (test-stress draws p% as r % 100 <= p); then it checks every word of what it
 *               holds and frees it. After each round the main thread frees the object of each
 *               slot of the array with a chance of 50%, all of them after the last round.
 *               test-stress's 1% of objects 100 to 10,000 times larger is left out: they are
 *               no pool's size. The count sets the rounds (at least 2).
 * larson-mb     Larson & Krishnan's server simulation as mimalloc-bench runs it (`larson 5 8
 *               1000 5000 100 4141 T`): T lineages of LMB_CHUNKS objects of LMB_MIN..LMB_MAX-1
 *               bytes, made by the main thread (its warm-up: the objects, a shuffle, then four
 *               random replacements per object); each thread replaces a random object of its
 *               lineage (free, then allocate a random size and write two bytes) LMB_ROUNDS x
 *               LMB_CHUNKS times, then starts its successor, which takes the lineage over. Where
 *               larson stops after 5 s, the count of allocations does (split evenly).
 * xmalloc-test  Lever & Boreham's xmalloc-test as mimalloc-bench runs it (`-w T -t 5 -s 64`):
 *               T producers allocate objects of XMT_SIZE bytes in batches of XMT_BATCH, writing
 *               the first 128 bytes of each at most, and push each batch on one locked stack of
 *               at most XMT_LIMIT batches; T consumers pop batches and free their objects. Where
 *               it stops after 5 s, the count of objects freed does.
 */
#ifndef POOL_TOOLS_POOL_BENCH_PUBLIC_H
#define POOL_TOOLS_POOL_BENCH_PUBLIC_H

#include "pool-bench-backend.h"
#include "pool-bench-server.h"

#define MS_COOKIE 0xbf58476d1ce4e5b9ull

/* The smallest pool of the server's (8 << cls bytes) that holds `size` bytes (>= 1). */
static inline unsigned int pub_class(size_t size)
{
	return size <= 8 ? 0 : (unsigned int)(64 - __builtin_clzll((unsigned long long)size - 1)) - 3;
}

/* ------------------------------------------------------------------------------------------ */
/* mstress                                                                                    */

struct ms_state {
	const struct bench_params *bp;
	_Atomic(uint64_t *) transfer[MS_TRANSFERS];
	unsigned int round;
};

struct ms_thread {
	pthread_t thread;
	struct ms_state *st;
	unsigned int idx;
	uint64_t **data;            /* harness: what the thread holds with random lifetimes */
	uint64_t **retained;        /* harness: what it keeps to the end */
	uint64_t allocs;            /* over every round */
	char cpus[128];
} __attribute__((aligned(64)));

/* The allocations (not retained) of thread `idx` in a round. */
static inline size_t ms_allocs(unsigned int idx)
{
	return (size_t)100 * MS_SCALE * (idx % 8 + 1);
}

static inline int ms_chance(unsigned int percent, uint64_t *r)
{
	return srv_rand(r) % 100 <= percent;
}

/* An object of 2^k words, zero-filled, then word i written with (words - i) ^ MS_COOKIE. */
static uint64_t *ms_alloc(unsigned int k)
{
	size_t words = (size_t)1 << k, i;
	uint64_t *p = bk_server_zalloc(k);

	if (!p) {
		bench_fail("an allocation of %zu bytes returned NULL", words * 8);
		return NULL;
	}
	for (i = 0; i < words; i++)
		p[i] = (words - i) ^ MS_COOKIE;
	return p;
}

/* Check every word of an object of ms_alloc() (NULL: none), then free it. */
static void ms_free(uint64_t *p)
{
	size_t words, i;

	if (!p)
		return;
	words = (size_t)(p[0] ^ MS_COOKIE);
	if (!words || words > 64 || (words & (words - 1))) {
		bench_fail("an object at %p was corrupted while live (first word %#llx)", (void *)p,
		           (unsigned long long)p[0]);
		return;
	}
	for (i = 0; i < words; i++)
		if ((p[i] ^ MS_COOKIE) != words - i) {
			bench_fail("an object of %zu bytes at %p was corrupted while live (word %zu)",
			           words * 8, (void *)p, i);
			return;
		}
	bk_server_free((unsigned int)__builtin_ctzll(words), p);
}

static void *ms_thread_main(void *arg)
{
	struct ms_thread *th = arg;
	struct ms_state *st = th->st;
	uint64_t r = srv_seed(st->round, th->idx);
	size_t allocs = ms_allocs(th->idx), retain = allocs / 2, top = 0, kept = 0, i, k;

	bench_place(st->bp, th->idx);
	if (st->round == 0)
		bench_cpus_allowed(th->cpus, sizeof(th->cpus));
	while ((allocs || retain) && !atomic_load_explicit(&bench_failed, memory_order_relaxed)) {
		if (!retain || (ms_chance(50, &r) && allocs)) {
			allocs--;
			th->data[top++] = ms_alloc((unsigned int)(srv_rand(&r) % 5));
		} else {
			th->retained[kept++] = ms_alloc((unsigned int)(srv_rand(&r) % 7));
			retain--;
		}
		th->allocs++;
		if (ms_chance(66, &r) && top) {
			k = srv_rand(&r) % top;
			ms_free(th->data[k]);
			th->data[k] = NULL;
		}
		if (ms_chance(25, &r) && top) {
			k = srv_rand(&r) % top;
			th->data[k] = atomic_exchange(&st->transfer[srv_rand(&r) % MS_TRANSFERS],
			                              th->data[k]);
		}
	}
	for (i = 0; i < kept; i++)
		ms_free(th->retained[i]);
	for (i = 0; i < top; i++)
		ms_free(th->data[i]);
	return NULL;
}

static int bench_run_mstress_once(const struct bench_params *bp, uint64_t count,
                                  struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, rounds, i;
	struct ms_state *st = calloc(1, sizeof(*st));
	struct ms_thread *th = bench_line_alloc(sizeof(*th) * n);
	uint64_t per_round = 0, r = srv_seed(~0u, 1);
	double start;
	int rc = 0;

	if (!st || !th) {
		free(st);
		free(th);
		bench_fail("out of memory for %u threads", n);
		return -1;
	}
	memset(th, 0, sizeof(*th) * n);
	st->bp = bp;
	for (i = 0; i < n; i++) {
		per_round += ms_allocs(i) + ms_allocs(i) / 2;
		th[i].st = st;
		th[i].idx = i;
		th[i].data = srv_harness_alloc(sizeof(*th[i].data) * ms_allocs(i));
		th[i].retained = srv_harness_alloc(sizeof(*th[i].retained) * (ms_allocs(i) / 2));
		if (!th[i].data || !th[i].retained) {
			bench_fail("out of memory for the arrays of %u threads", n);
			rc = -1;
			goto out;
		}
	}
	rounds = count / per_round < SRV_MIN_ROUNDS ? SRV_MIN_ROUNDS : (unsigned int)(count / per_round);
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (st->round = 0; st->round < rounds && !rc; st->round++) {
		for (i = 0; i < n; i++)
			if (pthread_create(&th[i].thread, NULL, ms_thread_main, &th[i]) != 0) {
				bench_fail("cannot create thread %u of %u", i, n);
				rc = -1;
				break;
			}
		while (i-- > 0)
			pthread_join(th[i].thread, NULL);
		for (i = 0; i < MS_TRANSFERS; i++)
			if (ms_chance(50, &r) || st->round + 1 == rounds || rc)
				ms_free(atomic_exchange(&st->transfer[i], NULL));
	}
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	res->units = 0;
	for (i = 0; i < n; i++)
		res->units += th[i].allocs;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement && !rc)
		bench_print_placement(th[0].cpus, sizeof(*th), n);
out:
	for (i = 0; i < n; i++) {
		free(th[i].data);
		free(th[i].retained);
	}
	free(th);
	free(st);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* larson-mb                                                                                  */

struct lmb_state {
	const struct bench_params *bp;
	uint64_t per_lineage;       /* allocations each lineage makes */
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* a lineage ended */
	unsigned int ended;
};

/* A lineage: its objects, their sizes, and the thread that now holds them. */
struct lmb_lineage {
	struct lmb_state *st;
	char **obj;                 /* LMB_CHUNKS */
	uint16_t *size;
	unsigned int idx;
	unsigned int gen;
	uint64_t seed;
	pthread_t prev;             /* the predecessor, which the successor joins */
	pthread_t last;             /* the lineage's last thread, joined by the main thread */
	uint64_t allocs;
	char cpus[128];             /* first generation's Cpus_allowed_list */
} __attribute__((aligned(64)));

static inline unsigned int lmb_size(uint64_t *r)
{
	return LMB_MIN + (unsigned int)(srv_rand(r) % (LMB_MAX - LMB_MIN));
}

/* Replace the object at `v` of a lineage: free it, allocate a random size, write two bytes. */
static inline int lmb_replace(char **obj, uint16_t *size, unsigned int v, uint64_t *r)
{
	volatile char *c;

	if (obj[v])
		bk_server_free(pub_class(size[v]), obj[v]);
	size[v] = (uint16_t)lmb_size(r);
	obj[v] = bk_server_alloc(pub_class(size[v]));
	if (!obj[v]) {
		bench_fail("an allocation of %u bytes returned NULL", size[v]);
		return -1;
	}
	c = obj[v];
	c[0] = 'a';
	(void)c[0];
	c[1] = 'b';
	return 0;
}

/*
 * One thread of a lineage: collect the predecessor, replace random objects LMB_ROUNDS x
 * LMB_CHUNKS times (fewer when the lineage's count ends first), then start the successor and
 * exit without touching the lineage again, or, as the last, tell the main thread.
 */
static void *lmb_thread_main(void *arg)
{
	struct lmb_lineage *ln = arg;
	struct lmb_state *st = ln->st;
	uint64_t r = ln->seed, i;
	pthread_t next;

	if (ln->gen > 0)
		pthread_join(ln->prev, NULL);
	bench_place(st->bp, ln->idx);
	if (ln->gen == 0)
		bench_cpus_allowed(ln->cpus, sizeof(ln->cpus));
	for (i = 0; i < (uint64_t)LMB_ROUNDS * LMB_CHUNKS && ln->allocs < st->per_lineage &&
	     !atomic_load_explicit(&bench_failed, memory_order_relaxed); i++) {
		if (lmb_replace(ln->obj, ln->size, (unsigned int)(srv_rand(&r) % LMB_CHUNKS), &r) < 0)
			break;
		ln->allocs++;
	}
	ln->seed = r;
	if (ln->allocs < st->per_lineage && !atomic_load(&bench_failed)) {
		ln->prev = pthread_self();
		ln->gen++;
		if (pthread_create(&next, NULL, lmb_thread_main, ln) == 0)
			return NULL;
		ln->gen--;
		bench_fail("cannot start generation %u of lineage %u", ln->gen + 1, ln->idx);
	}
	ln->last = pthread_self();
	pthread_mutex_lock(&st->lock);
	st->ended++;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

static int bench_run_larson_mb_once(const struct bench_params *bp, uint64_t count,
                                    struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, total = n * LMB_CHUNKS, started, i, k;
	struct lmb_state st = { .bp = bp };
	struct lmb_lineage *ln = bench_line_alloc(sizeof(*ln) * n);
	char **obj = srv_harness_alloc(sizeof(*obj) * total);
	uint16_t *size = srv_harness_alloc(sizeof(*size) * total);
	uint64_t r = srv_seed(LMB_SEED, 0);
	pthread_t tid;
	double start;
	int rc = 0;

	if (!ln || !obj || !size) {
		free(ln);
		free(obj);
		free(size);
		bench_fail("out of memory for %u lineages", n);
		return -1;
	}
	memset(ln, 0, sizeof(*ln) * n);
	st.per_lineage = count / n ? count / n : 1;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	/* untimed: larson's warm-up on the main thread */
	for (i = 0; i < total && !rc; i++)
		rc = lmb_replace(obj, size, i, &r);
	for (i = total; i > 1 && !rc; i--) {
		char *tp;
		uint16_t ts;

		k = (unsigned int)(srv_rand(&r) % i);
		tp = obj[k], obj[k] = obj[i - 1], obj[i - 1] = tp;
		ts = size[k], size[k] = size[i - 1], size[i - 1] = ts;
	}
	for (i = 0; i < 4 * total && !rc; i++)
		rc = lmb_replace(obj, size, (unsigned int)(srv_rand(&r) % total), &r);
	for (i = 0; i < n; i++) {
		ln[i].st = &st;
		ln[i].idx = i;
		ln[i].obj = obj + (size_t)i * LMB_CHUNKS;
		ln[i].size = size + (size_t)i * LMB_CHUNKS;
		ln[i].seed = srv_rand(&r) | 1;
	}
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (started = 0; started < n && !rc; started++)
		if (pthread_create(&tid, NULL, lmb_thread_main, &ln[started]) != 0) {
			bench_fail("cannot create thread %u of %u", started, n);
			rc = -1;
			break;
		}
	pthread_mutex_lock(&st.lock);
	while (st.ended < started)
		pthread_cond_wait(&st.cond, &st.lock);
	pthread_mutex_unlock(&st.lock);
	for (i = 0; i < started; i++)
		pthread_join(ln[i].last, NULL);
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	res->units = 0;
	for (i = 0; i < n; i++)
		res->units += ln[i].allocs;
	for (i = 0; i < total; i++)
		if (obj[i])
			bk_server_free(pub_class(size[i]), obj[i]);
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement && !rc)
		bench_print_placement(ln[0].cpus, sizeof(*ln), n);
	pthread_cond_destroy(&st.cond);
	pthread_mutex_destroy(&st.lock);
	free(size);
	free(obj);
	free(ln);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* xmalloc-test                                                                               */

struct xmt_batch {
	struct xmt_batch *next;
	void *obj[XMT_BATCH];
};

struct xmt_state {
	const struct bench_params *bp;
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull;
	struct xmt_batch *stack;    /* a LIFO, as xmalloc-test's */
	unsigned int queued;
	_Atomic uint64_t batches;   /* batches still to make */
	unsigned int producing;     /* producers not finished */
};

struct xmt_thread {
	pthread_t thread;
	struct xmt_state *st;
	unsigned int idx;           /* even: consumer, odd: producer (as xmalloc-test starts them) */
	uint64_t freed;
	char cpus[128];
} __attribute__((aligned(64)));

static void xmt_produce(struct xmt_state *st)
{
	unsigned int cls = pub_class(XMT_SIZE), i;
	size_t w = XMT_SIZE > 128 ? 128 : XMT_SIZE;

	while (!atomic_load_explicit(&bench_failed, memory_order_relaxed)) {
		uint64_t left = atomic_load_explicit(&st->batches, memory_order_relaxed);
		struct xmt_batch *b;

		do {
			if (!left)
				goto done;
		} while (!atomic_compare_exchange_weak(&st->batches, &left, left - 1));
		/* the batch itself is the program's, as xmalloc-test's is (malloc) */
		b = malloc(sizeof(*b));
		if (!b) {
			bench_fail("out of memory for a batch");
			break;
		}
		for (i = 0; i < XMT_BATCH; i++) {
			b->obj[i] = bk_server_alloc(cls);
			if (!b->obj[i]) {
				bench_fail("an allocation of %u bytes returned NULL", XMT_SIZE);
				break;
			}
			memset(b->obj[i], (int)(i % 256), w);
		}
		for (; i < XMT_BATCH; i++)
			b->obj[i] = NULL;
		pthread_mutex_lock(&st->lock);
		while (st->queued >= XMT_LIMIT)
			pthread_cond_wait(&st->nonfull, &st->lock);
		b->next = st->stack;
		st->stack = b;
		st->queued++;
		pthread_cond_signal(&st->nonempty);
		pthread_mutex_unlock(&st->lock);
	}
done:
	pthread_mutex_lock(&st->lock);
	if (--st->producing == 0)
		pthread_cond_broadcast(&st->nonempty);
	pthread_mutex_unlock(&st->lock);
}

static void xmt_consume(struct xmt_thread *th)
{
	struct xmt_state *st = th->st;
	unsigned int cls = pub_class(XMT_SIZE), i;

	for (;;) {
		struct xmt_batch *b;

		pthread_mutex_lock(&st->lock);
		while (!st->stack && st->producing)
			pthread_cond_wait(&st->nonempty, &st->lock);
		b = st->stack;
		if (b) {
			st->stack = b->next;
			st->queued--;
			pthread_cond_signal(&st->nonfull);
		}
		pthread_mutex_unlock(&st->lock);
		if (!b)
			return;
		for (i = 0; i < XMT_BATCH && b->obj[i]; i++)
			bk_server_free(cls, b->obj[i]);
		th->freed += i;
		free(b);
	}
}

static void *xmt_thread_main(void *arg)
{
	struct xmt_thread *th = arg;

	bench_place(th->st->bp, th->idx);
	bench_cpus_allowed(th->cpus, sizeof(th->cpus));
	if (th->idx % 2)
		xmt_produce(th->st);
	else
		xmt_consume(th);
	return NULL;
}

static int bench_run_xmtest_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res, int report_placement)
{
	unsigned int n = 2 * bp->threads, i;
	struct xmt_state st = { .bp = bp };
	struct xmt_thread *th = bench_line_alloc(sizeof(*th) * n);
	double start;

	if (!th) {
		bench_fail("out of memory for %u threads", n);
		return -1;
	}
	memset(th, 0, sizeof(*th) * n);
	atomic_store(&st.batches, (count + XMT_BATCH - 1) / XMT_BATCH);
	st.producing = bp->threads;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.nonempty, NULL);
	pthread_cond_init(&st.nonfull, NULL);
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (i = 0; i < n; i++) {
		th[i].st = &st;
		th[i].idx = i;
		if (pthread_create(&th[i].thread, NULL, xmt_thread_main, &th[i]) != 0) {
			/* the stack needs every thread: the ones started cannot finish */
			fprintf(stderr, "pool-bench: cannot create thread %u of %u\n", i, n);
			_exit(BENCH_EXIT_FAILED);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i].thread, NULL);
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	res->units = 0;
	for (i = 0; i < n; i++)
		res->units += th[i].freed;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement)
		bench_print_placement(th[0].cpus, sizeof(*th), n);
	pthread_cond_destroy(&st.nonfull);
	pthread_cond_destroy(&st.nonempty);
	pthread_mutex_destroy(&st.lock);
	free(th);
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_PUBLIC_H */
