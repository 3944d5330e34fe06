/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-server.h - server, larson and xmalloc, the rows of the server table: objects of
 * several pools, each checked when it is freed, on threads that come and go.
 *
 * server is the shape of mimalloc's test-stress (test/test-stress.c in microsoft/mimalloc),
 * adapted to pools, swept over what users with large live sets see (issue 20). One pool per
 * power-of-two size from 8 B to 16 KiB; sizes 8 B-1 KiB are drawn uniformly 125 times in 128
 * and 2-16 KiB otherwise ("linear in powers of two, some extra large", as test-stress draws
 * them). Each thread owns `live` slots (key live=, default SRV_LIVE): an allocation replaces
 * the object of a random slot (freeing it), so lifetimes are random; one allocation in 16 is
 * retained longer (up to live/2 objects); a quarter of the slot allocations are swapped with a
 * random entry of a shared transfer array (one per size), so that the object is freed by
 * whichever thread takes it, and may outlive the thread that made it.
 *
 * Thread i of every round continues lineage i: its slots and retained objects. Two dimensions:
 *   lifetime=short  threads are created and joined in rounds of srv_steps(live) allocations per
 *                   thread (test-stress: about 22,500 allocations per thread and round at its
 *                   default scale, 50 rounds); the count sets the number of rounds (at least 2),
 *                   never the work per thread, so that thread start and exit weigh the same for
 *                   every backend;
 *   lifetime=long   one round: each thread makes count/threads allocations (at least what two
 *                   short rounds make) and then ends;
 *   teardown=burst  before it exits, each thread frees its whole live set (slots and retained
 *                   objects) in one burst, as a server does when a connection storm ends;
 *   teardown=handover
 *                   a thread exits leaving its live set to the next thread of its lineage, which
 *                   frees those objects as it replaces them; what is live after the last round
 *                   is freed by the main thread after the timed part (the same objects for every
 *                   backend).
 * The first round is the warm-up of the OS-layer share.
 */
#ifndef POOL_TOOLS_POOL_BENCH_SERVER_H
#define POOL_TOOLS_POOL_BENCH_SERVER_H

#include "pool-bench-backend.h"

struct srv_slot {
	void *p;
	unsigned int cls;
};

/* The object size of each pool (size class), set by bench_child_main(). */
static size_t srv_sizes[SRV_CLASSES];

/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators"). */
static inline uint64_t srv_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* A seed per thread and round (or generation), never 0 (xorshift would stay at 0). */
static inline uint64_t srv_seed(unsigned int round, unsigned int idx)
{
	return ((uint64_t)round + 1) * 0x9e3779b97f4a7c15ull ^ (idx + 1);
}

/* The pattern an object of class cls at p carries while it is live. */
static inline uint64_t srv_pattern(const void *p, unsigned int cls)
{
	return ((uint64_t)(uintptr_t)p ^ SRV_COOKIE) + cls;
}

/*
 * Allocate an object of class cls: zero-filled (zero != 0: checked, first, middle and last
 * word) or not; then write its pattern into the first word and the complement into the last
 * one. Returns NULL (and records the failure) when the backend returned NULL.
 */
static inline void *srv_alloc(unsigned int cls, int zero)
{
	size_t words = srv_sizes[cls] / 8;
	uint64_t *p = zero ? bk_server_zalloc(cls) : bk_server_alloc(cls);

	if (!p) {
		bench_fail("an allocation of %zu bytes returned NULL", srv_sizes[cls]);
		return NULL;
	}
	if (zero && (p[0] || p[words / 2] || p[words - 1])) {
		bench_fail("an object of %zu bytes at %p was not zero-filled", srv_sizes[cls],
		           (void *)p);
		return p;
	}
	p[0] = srv_pattern(p, cls);
	if (words > 1)
		p[words - 1] = ~srv_pattern(p, cls);
	return p;
}

/*
 * Check an object's pattern (and, if it came zero-filled, that its middle word still is), then
 * free it.
 */
static inline void srv_free(void *obj, unsigned int cls, int zeroed)
{
	size_t words = srv_sizes[cls] / 8;
	uint64_t *p = obj;

	if (p[0] != srv_pattern(p, cls) || (words > 1 && p[words - 1] != ~srv_pattern(p, cls)) ||
	    (zeroed && words > 2 && p[words / 2]))
		bench_fail("an object of %zu bytes at %p was corrupted while live (first word "
		           "%#llx, expected %#llx)", srv_sizes[cls], obj, (unsigned long long)p[0],
		           (unsigned long long)srv_pattern(p, cls));
	bk_server_free(cls, obj);
}

/* Harness memory, taken and touched before the timed part, so that no backend pays its faults. */
static void *srv_harness_alloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p)
		memset(p, 0, size);
	return p;
}

/* 125 times in 128: 8 B..1 KiB, uniformly; else 2..16 KiB. */
static inline unsigned int srv_class(uint64_t r)
{
	return (r & 127) < 125 ? (unsigned int)((r >> 8) % 8) : 8 + (unsigned int)((r >> 8) % 4);
}

/*
 * larson, xmalloc: a size drawn uniformly in LAR_MIN_SIZE..LAR_MAX_SIZE, as the smallest class
 * that holds it (8 << cls >= size).
 */
static inline unsigned int lar_class(uint64_t r)
{
	unsigned int span = LAR_MAX_SIZE - LAR_MIN_SIZE + 1;
	unsigned int size = LAR_MIN_SIZE + (unsigned int)((r >> 32) % span);
	unsigned int cls = 0;

	while (((size_t)8 << cls) < size)
		cls++;
	return cls;
}

/* What a thread of the server holds, handed from round to round (teardown=handover). */
struct srv_lineage {
	struct srv_slot *slot;      /* live slots, random lifetimes */
	struct srv_slot *retain;    /* live / 2 slots, kept until the teardown */
	unsigned int nretain;
};

struct srv_state {
	const struct bench_params *bp;
	_Atomic(void *) transfer[SRV_CLASSES][SRV_TRANSFER];
	struct srv_lineage *lin;    /* one per thread index */
	uint64_t steps;             /* allocations per thread and round */
	unsigned int rounds;
	unsigned int round;
};

struct srv_thread {
	pthread_t thread;
	struct srv_state *st;
	unsigned int idx;
	uint64_t allocs;
	char cpus[128];
} __attribute__((aligned(64)));

/* Free everything a lineage holds (the teardown burst, or the clean-up after the run). */
static void srv_free_lineage(struct srv_lineage *ln, unsigned int live)
{
	unsigned int i;

	for (i = 0; i < live; i++)
		if (ln->slot[i].p) {
			srv_free(ln->slot[i].p, ln->slot[i].cls, 1);
			ln->slot[i].p = NULL;
		}
	for (i = 0; i < ln->nretain; i++)
		srv_free(ln->retain[i].p, ln->retain[i].cls, 1);
	ln->nretain = 0;
}

static void *srv_thread_main(void *arg)
{
	struct srv_thread *th = arg;
	struct srv_state *st = th->st;
	const struct bench_params *bp = st->bp;
	struct srv_lineage *ln = &st->lin[th->idx];
	uint64_t seed = srv_seed(st->round, th->idx);
	unsigned int live = bp->live, i;
	uint64_t s;

	bench_place(bp, th->idx);
	if (st->round == 0)
		bench_cpus_allowed(th->cpus, sizeof(th->cpus));
	for (s = 0; s < st->steps && !atomic_load_explicit(&bench_failed, memory_order_relaxed);
	     s++) {
		uint64_t r = srv_rand(&seed);
		unsigned int cls = srv_class(r);
		void *p;

		if ((r >> 16) % 16 == 0 && ln->nretain < live / 2) {
			p = srv_alloc(cls, 1);
			if (!p)
				break;
			ln->retain[ln->nretain].p = p;
			ln->retain[ln->nretain++].cls = cls;
		} else {
			struct srv_slot *sl = &ln->slot[(r >> 24) % live];

			if (sl->p)
				srv_free(sl->p, sl->cls, 1);
			sl->p = srv_alloc(cls, 1);
			sl->cls = cls;
			if (!sl->p)
				break;
			if ((r >> 40) % 4 == 0)   /* hand it to whichever thread takes it next */
				sl->p = atomic_exchange(&st->transfer[cls][(r >> 44) % SRV_TRANSFER],
				                        sl->p);
		}
		th->allocs++;
		if (th->allocs == bp->corrupt && th->idx == 0 && st->round == 0) {
			void *obj = ln->nretain ? ln->retain[ln->nretain - 1].p : NULL;

			for (i = 0; !obj && i < live; i++)
				obj = ln->slot[i].p;
			if (obj)
				*(volatile uint8_t *)obj ^= 1;
		}
	}
	if (bp->teardown == SRV_BURST)
		srv_free_lineage(ln, live);
	return NULL;
}

static int bench_run_server_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, live = bp->live, i, c;
	struct srv_state *st = calloc(1, sizeof(*st));
	struct srv_thread *th = bench_line_alloc(sizeof(*th) * n);
	uint64_t allocs = 0, os;
	double start;
	int rc = 0;

	if (!st || !th || !(st->lin = calloc(n, sizeof(*st->lin)))) {
		free(st);
		free(th);
		bench_fail("out of memory for %u threads", n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		st->lin[i].slot = srv_harness_alloc(sizeof(struct srv_slot) * live);
		st->lin[i].retain = srv_harness_alloc(sizeof(struct srv_slot) * (live / 2));
		if (!st->lin[i].slot || !st->lin[i].retain) {
			bench_fail("out of memory for %u slots of %u threads", live, n);
			rc = -1;
			n = i + 1;
			goto out;
		}
	}
	memset(th, 0, sizeof(*th) * n);
	st->bp = bp;
	st->steps = srv_steps(live);
	if (bp->lifetime == SRV_SHORT) {
		st->rounds = (unsigned int)(count / (st->steps * n));
		if (st->rounds < SRV_MIN_ROUNDS)
			st->rounds = SRV_MIN_ROUNDS;
	} else {
		st->rounds = 1;
		if (count / n > SRV_MIN_ROUNDS * st->steps)
			st->steps = count / n;
		else
			st->steps *= SRV_MIN_ROUNDS;
	}
	res->have_os = 0;
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (st->round = 0; st->round < st->rounds && !rc; st->round++) {
		for (i = 0; i < n; i++) {
			th[i].st = st;
			th[i].idx = i;
			if (pthread_create(&th[i].thread, NULL, srv_thread_main, &th[i]) != 0) {
				bench_fail("cannot create thread %u of %u", i, n);
				rc = -1;
				break;
			}
		}
		while (i-- > 0)
			pthread_join(th[i].thread, NULL);
		if (st->round == 0) {
			for (i = 0; i < n; i++)
				allocs += th[i].allocs;
			res->allocs_warm = allocs;
			res->have_os = bk_server_os_allocs(&os) == 0;
			res->os_warm = res->have_os ? os : 0;
		}
	}
	res->elapsed_ns = bench_now_ns() - start;
	res->cpu_ns = bench_cpu_ns() - res->cpu_ns;
	/* untimed: what the last threads handed over, and what the transfer array holds */
	for (i = 0; i < n; i++)
		srv_free_lineage(&st->lin[i], live);
	for (c = 0; c < SRV_CLASSES; c++)
		for (i = 0; i < SRV_TRANSFER; i++) {
			void *p = atomic_exchange(&st->transfer[c][i], NULL);

			if (p)
				srv_free(p, c, 1);
		}
	res->units = 0;
	for (i = 0; i < n; i++)
		res->units += th[i].allocs;
	res->allocs_all = res->units;
	if (res->have_os && bk_server_os_allocs(&os) == 0)
		res->os_all = os;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement && !rc)
		bench_print_placement(th[0].cpus, sizeof(*th), n);
out:
	for (i = 0; i < n; i++) {
		free(st->lin[i].slot);
		free(st->lin[i].retain);
	}
	free(st->lin);
	free(th);
	free(st);
	return rc;
}

/*
 * larson: the shape of the server simulation of Larson & Krishnan, "Memory allocation for
 * long-running server applications" (ISMM 1998), written from its description. Each of the
 * `threads` lineages owns an array of LAR_OBJECTS objects, filled by the main thread before
 * the timed part; a thread replaces LAR_STEPS random objects of its array (frees the one in
 * the slot, allocates a new one), then starts its successor, hands it the array and exits; the
 * successor collects it (pthread_join()) and goes on. So most objects are freed by a thread
 * other than the one that made them, and threads keep being replaced, each lineage at its own
 * pace. Sizes are drawn uniformly in bytes from LAR_MIN_SIZE to LAR_MAX_SIZE (Larson draws
 * "random sizes between a minimum and a maximum"); the object comes from the smallest of the
 * six pools of 16..512 B that holds it (the mallocs get that pool's size too). The count sets
 * the generations (at least 2).
 */
struct lar_state {
	const struct bench_params *bp;
	unsigned int gens;          /* threads per lineage, one after the other */
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* a lineage ended */
	unsigned int ended;
};

/* A lineage: its objects and the thread that now holds them. */
struct lar_lineage {
	struct lar_state *st;
	struct srv_slot *obj;       /* LAR_OBJECTS */
	unsigned int idx;
	unsigned int gen;           /* generation of the thread that holds the objects */
	pthread_t prev;             /* its predecessor, which it joins */
	pthread_t last;             /* the lineage's last thread, joined by the main thread */
	uint64_t allocs;
	char cpus[128];             /* first generation's Cpus_allowed_list */
} __attribute__((aligned(64)));

/*
 * One thread of a lineage: collect the predecessor, replace LAR_STEPS random objects, then start
 * the successor and exit without touching the lineage again (the successor owns it from
 * pthread_create() on), or, as the last generation, tell the main thread.
 */
static void *lar_thread_main(void *arg)
{
	struct lar_lineage *ln = arg;
	struct lar_state *st = ln->st;
	uint64_t seed = srv_seed(ln->gen, ln->idx);
	pthread_t next;
	unsigned int s;

	if (ln->gen > 0)
		pthread_join(ln->prev, NULL);
	bench_place(st->bp, ln->idx);
	if (ln->gen == 0)
		bench_cpus_allowed(ln->cpus, sizeof(ln->cpus));
	for (s = 0; s < LAR_STEPS && !atomic_load_explicit(&bench_failed, memory_order_relaxed);
	     s++) {
		uint64_t r = srv_rand(&seed);
		struct srv_slot *o = &ln->obj[(r >> 8) % LAR_OBJECTS];

		if (o->p)
			srv_free(o->p, o->cls, 0);
		o->cls = lar_class(r);
		o->p = srv_alloc(o->cls, 0);
		if (!o->p)
			break;
		ln->allocs++;
	}
	if (ln->gen + 1 < st->gens && !atomic_load(&bench_failed)) {
		ln->prev = pthread_self();
		ln->gen++;
		if (pthread_create(&next, NULL, lar_thread_main, ln) == 0)
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

static int bench_run_larson_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, started, i, k;
	struct lar_state st = { .bp = bp };
	struct lar_lineage *ln = bench_line_alloc(sizeof(*ln) * n);
	uint64_t seed = srv_seed(~0u, 0);
	pthread_t tid;
	double start;
	int rc = 0;

	if (!ln) {
		bench_fail("out of memory for %u lineages", n);
		return -1;
	}
	memset(ln, 0, sizeof(*ln) * n);
	st.gens = (unsigned int)(count / ((uint64_t)LAR_STEPS * n));
	if (st.gens < SRV_MIN_ROUNDS)
		st.gens = SRV_MIN_ROUNDS;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	/* untimed: the main thread fills every lineage's array, as Larson's driver does */
	for (i = 0; i < n && !rc; i++) {
		ln[i].st = &st;
		ln[i].idx = i;
		ln[i].obj = srv_harness_alloc(sizeof(struct srv_slot) * LAR_OBJECTS);
		if (!ln[i].obj) {
			bench_fail("out of memory for the objects of %u lineages", n);
			rc = -1;
			break;
		}
		for (k = 0; k < LAR_OBJECTS; k++) {
			ln[i].obj[k].cls = lar_class(srv_rand(&seed));
			ln[i].obj[k].p = srv_alloc(ln[i].obj[k].cls, 0);
			if (!ln[i].obj[k].p) {
				rc = -1;
				break;
			}
		}
	}
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (started = 0; started < n && !rc; started++)
		if (pthread_create(&tid, NULL, lar_thread_main, &ln[started]) != 0) {
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
	for (i = 0; i < n; i++) {
		res->units += ln[i].allocs;
		for (k = 0; ln[i].obj && k < LAR_OBJECTS; k++)
			if (ln[i].obj[k].p)
				srv_free(ln[i].obj[k].p, ln[i].obj[k].cls, 0);
		free(ln[i].obj);
	}
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement && !rc)
		bench_print_placement(ln[0].cpus, sizeof(*ln), n);
	pthread_cond_destroy(&st.cond);
	pthread_mutex_destroy(&st.lock);
	free(ln);
	return rc;
}

/*
 * xmalloc: the shape of xmalloc-test (Lever & Boreham, "malloc() Performance in a Multithreaded
 * Linux Environment", USENIX 2000, FREENIX track), written from its description: half the
 * threads (rounded up) produce, the others consume. A producer allocates objects (sizes as in
 * larson) in batches of XM_BATCH and queues each full batch; a consumer takes any queued batch
 * and frees its objects. At most XM_INFLIGHT batches per thread are in flight (a producer waits
 * for an empty batch), so memory stays bounded. The count is the allocations of all producers.
 */
struct xm_batch {
	struct xm_batch *next;
	unsigned int n;
	unsigned char cls[XM_BATCH];
	void *obj[XM_BATCH];
};

struct xm_state {
	const struct bench_params *bp;
	pthread_mutex_t lock;
	pthread_cond_t queued;      /* a full batch was queued, or the last producer finished */
	pthread_cond_t returned;    /* an empty batch came back */
	struct xm_batch *full, *full_tail;   /* queued batches, oldest first */
	struct xm_batch *empty;
	unsigned int producing;     /* producers not finished */
	uint64_t per_producer;      /* allocations */
};

struct xm_thread {
	pthread_t thread;
	struct xm_state *st;
	unsigned int idx;           /* even: producer, odd: consumer */
	uint64_t allocs;
	char cpus[128];
} __attribute__((aligned(64)));

static void xm_produce(struct xm_thread *th)
{
	struct xm_state *st = th->st;
	uint64_t seed = srv_seed(0, th->idx);
	struct xm_batch *b;
	unsigned int k, want;

	while (th->allocs < st->per_producer &&
	       !atomic_load_explicit(&bench_failed, memory_order_relaxed)) {
		pthread_mutex_lock(&st->lock);
		while (!st->empty)
			pthread_cond_wait(&st->returned, &st->lock);
		b = st->empty;
		st->empty = b->next;
		pthread_mutex_unlock(&st->lock);
		want = st->per_producer - th->allocs < XM_BATCH ?
		       (unsigned int)(st->per_producer - th->allocs) : XM_BATCH;
		for (k = 0; k < want; k++) {
			b->cls[k] = (unsigned char)lar_class(srv_rand(&seed));
			b->obj[k] = srv_alloc(b->cls[k], 0);
			if (!b->obj[k])
				break;
		}
		b->n = k;
		th->allocs += k;
		b->next = NULL;
		pthread_mutex_lock(&st->lock);
		if (st->full_tail)
			st->full_tail->next = b;
		else
			st->full = b;
		st->full_tail = b;
		pthread_cond_signal(&st->queued);
		pthread_mutex_unlock(&st->lock);
		if (k < want)
			break;
	}
	pthread_mutex_lock(&st->lock);
	if (--st->producing == 0)
		pthread_cond_broadcast(&st->queued);
	pthread_mutex_unlock(&st->lock);
}

/* Free the objects of queued batches until every producer is finished and the queue empty. */
static void xm_consume(struct xm_thread *th)
{
	struct xm_state *st = th->st;
	struct xm_batch *b;
	unsigned int k;

	for (;;) {
		pthread_mutex_lock(&st->lock);
		while (!st->full && st->producing)
			pthread_cond_wait(&st->queued, &st->lock);
		b = st->full;
		if (b) {
			st->full = b->next;
			if (!st->full)
				st->full_tail = NULL;
		}
		pthread_mutex_unlock(&st->lock);
		if (!b)
			return;
		for (k = 0; k < b->n; k++)
			srv_free(b->obj[k], b->cls[k], 0);
		pthread_mutex_lock(&st->lock);
		b->next = st->empty;
		st->empty = b;
		pthread_cond_signal(&st->returned);
		pthread_mutex_unlock(&st->lock);
	}
}

static void *xm_thread_main(void *arg)
{
	struct xm_thread *th = arg;

	bench_place(th->st->bp, th->idx);
	bench_cpus_allowed(th->cpus, sizeof(th->cpus));
	if (th->idx % 2 == 0)
		xm_produce(th);
	else
		xm_consume(th);
	return NULL;
}

static int bench_run_xmalloc_once(const struct bench_params *bp, uint64_t count,
                                  struct bench_result *res, int report_placement)
{
	unsigned int n = bp->threads, producers = (n + 1) / 2, nb = XM_INFLIGHT * n, i;
	struct xm_state st = { .bp = bp };
	struct xm_thread *th = bench_line_alloc(sizeof(*th) * n);
	struct xm_batch *batches = srv_harness_alloc(sizeof(*batches) * nb);
	double start;

	if (!th || !batches) {
		free(th);
		free(batches);
		bench_fail("out of memory for %u threads", n);
		return -1;
	}
	memset(th, 0, sizeof(*th) * n);
	for (i = 0; i < nb; i++) {
		batches[i].next = st.empty;
		st.empty = &batches[i];
	}
	st.producing = producers;
	st.per_producer = count / producers > XM_BATCH ? count / producers : XM_BATCH;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.queued, NULL);
	pthread_cond_init(&st.returned, NULL);
	res->cpu_ns = bench_cpu_ns();
	start = bench_now_ns();
	for (i = 0; i < n; i++) {
		th[i].st = &st;
		th[i].idx = i;
		if (pthread_create(&th[i].thread, NULL, xm_thread_main, &th[i]) != 0) {
			/* the queue needs every thread: the ones started cannot finish */
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
		res->units += th[i].allocs;
	res->ns = res->units ? res->elapsed_ns / (double)res->units : 0;
	res->shared = -1;
	if (report_placement)
		bench_print_placement(th[0].cpus, sizeof(*th), n);
	pthread_cond_destroy(&st.returned);
	pthread_cond_destroy(&st.queued);
	pthread_mutex_destroy(&st.lock);
	free(batches);
	free(th);
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_SERVER_H */
