/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-stress-workloads.c - what the worker threads of pool-stress do: the workloads (local,
 * pipeline, bleed, mixed, spike, soak; see doc/stress.md) and the soak's chaos thread. Every
 * object carries a canary written right after allocation and verified right before it is freed:
 *
 *   word 0  allocating thread (low 32 bits) and usable size of the pool (high 32 bits)
 *   word 1  that thread's sequence number for the object
 *   word 2  checksum over the whole object (every 64-bit word but this one)
 *   word 3+ a pattern derived from (thread, sequence number)
 *
 * so an object handed out twice, written after free, overlapped by a neighbour or returned with
 * foreign content fails the check: the run stops with a report on stderr and exit status 1. The
 * canaries also watch the slab tier: a slab given back to the OS layer while one of its objects
 * is live would be handed out again (zeroed, as a new slab) under that object.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pool/pool.h>

#include "pool-stress.h"

#define MIXED_BIG_LIVE   8u       /* mixed: 2 MiB objects live at once over all threads */
#define CANARY_WORDS     3u
#define SOAK_LIFE_MS     3000u    /* soak: a worker exits after 200 ms to this, and is replaced */

static atomic_int bind_failed;  /* binding is refused on some machines: said once, run goes on */
atomic_long corrupt_countdown = -1;

/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators", 2016). */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

static inline size_t rng_below(uint64_t *s, size_t n)
{
	return (size_t)(rng_next(s) % n);
}

/* The pattern word `i` of object (thread, seq): splitmix64's finaliser over a per-object seed. */
static inline uint64_t pattern_word(uint64_t seed, size_t i)
{
	uint64_t z = seed + (uint64_t)i * UINT64_C(0x9E3779B97F4A7C15);

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline uint64_t object_seed(uint64_t w0, uint64_t seq)
{
	return (w0 << 1) ^ (seq * UINT64_C(0xD6E8FEB86659FD93));
}

/* Checksum over every word but word 2: a multiply-xor fold (FNV-1a's shape on 64-bit words). */
static uint64_t checksum(const uint64_t *w, size_t nwords)
{
	uint64_t h = UINT64_C(0xCBF29CE484222325);
	size_t i;

	for (i = 0; i < nwords; i++) {
		if (i == 2)
			continue;
		h ^= w[i];
		h *= UINT64_C(0x100000001B3);
		h ^= h >> 29;
	}
	return h;
}

static void canary_write(struct worker *w, void *obj, size_t size)
{
	uint64_t *wd = obj;
	size_t n = size / 8, i;
	uint64_t seq = ++w->seq;
	uint64_t seed;

	wd[0] = (uint64_t)w->id | ((uint64_t)size << 32);
	wd[1] = seq;
	seed = object_seed(wd[0], seq);
	for (i = CANARY_WORDS; i < n; i++)
		wd[i] = pattern_word(seed, i);
	wd[2] = checksum(wd, n);
}

/* Print what is wrong with `obj` and stop the whole process with exit status 1. */
static void __attribute__((noreturn)) canary_report(struct worker *w, const char *what,
                                                     const void *obj, size_t size)
{
	const uint64_t *wd = obj;
	size_t n = size / 8, i, bad = n;
	uint64_t seed = object_seed(wd[0], wd[1]);

	for (i = CANARY_WORDS; i < n; i++)
		if (wd[i] != pattern_word(seed, i)) {
			bad = i;
			break;
		}
	fprintf(stderr,
	        "pool-stress: CORRUPTION in workload '%s': %s\n"
	        "  object %p of %zu bytes, checked by thread %u before freeing it\n"
	        "  canary: allocating thread %u, size %llu, sequence %llu, "
	        "checksum stored 0x%016llx, computed 0x%016llx\n",
	        wl_names[w->run->wl], what, obj, size, w->id, (unsigned int)(wd[0] & 0xffffffffu),
	        (unsigned long long)(wd[0] >> 32), (unsigned long long)wd[1],
	        (unsigned long long)wd[2], (unsigned long long)checksum(wd, n));
	if (bad < n)
		fprintf(stderr, "  first word differing from the pattern: offset %zu, found 0x%016llx, "
		        "expected 0x%016llx\n", bad * 8, (unsigned long long)wd[bad],
		        (unsigned long long)pattern_word(seed, bad));
	fprintf(stderr, "pool-stress: stopping the run (exit 1)\n");
	fflush(NULL);
	_exit(1);
}

static void canary_check(struct worker *w, const void *obj, size_t size)
{
	const uint64_t *wd = obj;
	size_t n = size / 8;

	if ((wd[0] >> 32) != size)
		canary_report(w, "size in the canary is not the pool's", obj, size);
	if ((wd[0] & 0xffffffffu) >= w->run->nthreads)
		canary_report(w, "allocating thread in the canary does not exist", obj, size);
	if (checksum(wd, n) != wd[2])
		canary_report(w, "checksum mismatch", obj, size);
}

/*
 * Add `n` to one of a worker's counters (ops, failures, allocs): only the worker writes them
 * and the progress line reads them, so a relaxed load and store, no read-modify-write.
 */
static inline void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

/* Allocate from pool `pi` of the run and write the canary; NULL failures are counted. */
static void *obj_alloc(struct worker *w, unsigned int pi)
{
	struct run *r = w->run;
	void *p = pool_alloc(r->pools[pi]);

	count(&w->ops, 1);
	if (!p) {
		count(&w->failures, 1);
		return NULL;
	}
	count(&w->allocs, 1);
	canary_write(w, p, r->sizes[pi]);
	/* --self-test-corruption: overwrite one byte of a live object to prove the check works */
	if (r->opt->corrupt_after >= 0 &&
	    atomic_fetch_sub_explicit(&corrupt_countdown, 1, memory_order_relaxed) == 0)
		((unsigned char *)p)[r->sizes[pi] - 1] ^= 0x5a;
	return p;
}

static void obj_free(struct worker *w, unsigned int pi, void *p)
{
	struct run *r = w->run;

	canary_check(w, p, r->sizes[pi]);
	pool_free(r->pools[pi], p);
	count(&w->ops, 1);
}

static inline int stopping(struct run *r)
{
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

/* Pointers in scratch arrays carry the pool index in their low 3 bits (objects are 16-aligned). */
static inline void *tag_ptr(void *p, unsigned int pi)
{
	return (void *)((uintptr_t)p | pi);
}

static inline void *untag_ptr(void *t, unsigned int *pi)
{
	*pi = (unsigned int)((uintptr_t)t & 7u);
	return (void *)((uintptr_t)t & ~(uintptr_t)7u);
}

static void free_tagged(struct worker *w, void *t)
{
	unsigned int pi;
	void *p = untag_ptr(t, &pi);

	obj_free(w, pi, p);
}

/* Free w->live[0..n), last first or first first, at random (LIFO and FIFO reuse). */
static void free_live_either_way(struct worker *w, size_t n)
{
	size_t i;

	if (rng_next(&w->rng) & 1) {
		while (n)
			free_tagged(w, w->live[--n]);
	} else {
		for (i = 0; i < n; i++)
			free_tagged(w, w->live[i]);
	}
}

/*
 * `d` allocations, each from one of the first `npools` pools of the run at random, into
 * w->live with the pool index in the pointer's low bits; NULLs are skipped. Returns how many.
 */
static size_t alloc_batch(struct worker *w, size_t d, unsigned int npools)
{
	size_t i, n = 0;

	for (i = 0; i < d; i++) {
		unsigned int pi = (unsigned int)rng_below(&w->rng, npools);
		void *p = obj_alloc(w, pi);

		if (p)
			w->live[n++] = tag_ptr(p, pi);
	}
	return n;
}

/*
 * `d` objects of one pool at random through pool_alloc_bulk() into w->live (untagged), each
 * canary written, then checked and given back with pool_free_bulk(), one entry in eight set to
 * NULL first and that object freed alone: the bulk calls' whole-magazine moves under the same
 * checks as every other object. An all-or-nothing failure counts one failure.
 */
static void bulk_batch(struct worker *w, size_t d)
{
	struct run *r = w->run;
	unsigned int pi = (unsigned int)rng_below(&w->rng, r->npools);
	struct pool_head *pool = r->pools[pi];
	size_t i, n = pool_alloc_bulk(pool, w->live, d);

	count(&w->ops, d);
	if (n != d) {
		count(&w->failures, 1);
		return;
	}
	count(&w->allocs, n);
	for (i = 0; i < n; i++)
		canary_write(w, w->live[i], r->sizes[pi]);
	for (i = 0; i < n; i++) {
		canary_check(w, w->live[i], r->sizes[pi]);
		if (rng_below(&w->rng, 8) == 0) {
			pool_free(pool, w->live[i]);
			w->live[i] = NULL;
		}
	}
	pool_free_bulk(pool, w->live, n);
	count(&w->ops, n);
}

/*
 * local: random batch depths on one thread, freed LIFO or FIFO, over two pools; one batch in
 * four through the bulk calls instead.
 */
static void run_local(struct worker *w)
{
	struct run *r = w->run;
	size_t n, d;

	while (!stopping(r)) {
		d = 1 + rng_below(&w->rng, r->depth);
		if (rng_below(&w->rng, 4) == 0) {
			bulk_batch(w, d);
			continue;
		}
		n = alloc_batch(w, d, r->npools);
		free_live_either_way(w, n);
	}
}

static int ring_push(struct ring *q, void *p)
{
	size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	size_t h = atomic_load_explicit(&q->head, memory_order_acquire);

	if (t - h > q->mask)
		return 0;
	q->slot[t & q->mask] = p;
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	return 1;
}

static void *ring_pop(struct ring *q)
{
	size_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
	size_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
	void *p;

	if (h == t)
		return NULL;
	p = q->slot[h & q->mask];
	atomic_store_explicit(&q->head, h + 1, memory_order_release);
	return p;
}

/* pipeline: allocate here, free on the next thread of the ring, through a bounded queue. */
static void run_pipeline(struct worker *w)
{
	struct run *r = w->run;
	struct ring *out = &r->rings[(w->id + 1) % r->nthreads];
	struct ring *in = &r->rings[w->id];
	void *pending = NULL;
	void *p;
	int i, progress;

	while (!stopping(r)) {
		progress = 0;
		for (i = 0; i < 16; i++) {
			if (!pending)
				pending = obj_alloc(w, 0);
			if (!pending || !ring_push(out, pending))
				break;
			pending = NULL;
			progress = 1;
		}
		for (i = 0; i < 32 && (p = ring_pop(in)); i++) {
			obj_free(w, 0, p);
			progress = 1;
		}
		if (!progress)
			sched_yield();
	}
	if (pending)
		obj_free(w, 0, pending);
	pthread_barrier_wait(&r->barrier);   /* no producer is left: drain what we were sent */
	while ((p = ring_pop(in)))
		obj_free(w, 0, p);
}

/* bleed: hand objects to random other threads, which free them (Larson's server pattern). */
static void run_bleed(struct worker *w)
{
	struct run *r = w->run;
	struct inbox *mine = &r->inboxes[w->id];
	size_t i, k, n;

	while (!stopping(r)) {
		k = 1 + rng_below(&w->rng, 16);
		for (i = 0; i < k; i++) {
			void *p = obj_alloc(w, 0);
			struct inbox *to;
			int given = 0;

			if (!p)
				continue;
			to = &r->inboxes[r->nthreads > 1 ?
			                 (w->id + 1 + rng_below(&w->rng, r->nthreads - 1)) % r->nthreads :
			                 w->id];
			pthread_mutex_lock(&to->lock);
			if (to->count < to->cap) {
				to->slot[to->count++] = p;
				given = 1;
			}
			pthread_mutex_unlock(&to->lock);
			if (!given)
				obj_free(w, 0, p);
		}
		pthread_mutex_lock(&mine->lock);
		n = mine->count;
		memcpy(w->live, mine->slot, n * sizeof(void *));
		mine->count = 0;
		pthread_mutex_unlock(&mine->lock);
		for (i = 0; i < n; i++)
			obj_free(w, 0, w->live[i]);
		if (!n)
			sched_yield();
	}
	pthread_barrier_wait(&r->barrier);   /* nobody sends any more: drain the inbox */
	for (i = 0; i < mine->count; i++)
		obj_free(w, 0, mine->slot[i]);
	mine->count = 0;
}

/*
 * mixed: batches over pools from 32 bytes to 16 KiB plus some 2 MiB objects, while worker 0
 * flushes the 2 MiB pool and runs pool_gc() every 20 ms, so large objects go back to the OS
 * layer while other threads pop from the same pool.
 */
static void run_mixed(struct worker *w)
{
	struct run *r = w->run;
	unsigned int big = r->npools - 1;
	double next_gc = now_s() + 0.02;
	size_t n, d;

	while (!stopping(r)) {
		void *bigp = NULL;

		d = 1 + rng_below(&w->rng, r->depth);
		if (rng_below(&w->rng, 16) == 0) {
			if (atomic_fetch_add(&r->big_live, 1) < MIXED_BIG_LIVE)
				bigp = obj_alloc(w, big);
			if (!bigp)
				atomic_fetch_sub(&r->big_live, 1);
		}
		n = alloc_batch(w, d, big);
		while (n)
			free_tagged(w, w->live[--n]);
		if (bigp) {
			obj_free(w, big, bigp);
			atomic_fetch_sub(&r->big_live, 1);
		}
		if (w->id == 0 && now_s() >= next_gc) {
			pool_flush(r->pools[big]);
			pool_gc(NULL);
			next_gc = now_s() + 0.02;
		}
	}
}

long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = -1, res = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &res) != 2)
		res = -1;
	fclose(f);
	return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * spike: all threads grow a large working set together, worker 0 notes the peak, everybody drops
 * it and flushes its caches, and worker 0 runs pool_gc(). Four barriers a cycle keep the phases
 * apart; worker 0 alone decides whether another cycle starts.
 */
static void run_spike(struct worker *w)
{
	struct run *r = w->run;
	double deadline = now_s() + r->opt->seconds;   /* worker 0's: threads are all up */
	size_t i, n;

	for (;;) {
		/* at least one cycle, however long starting the threads took */
		if (w->id == 0)
			r->spike_go = !r->spike_cycles || (!stopping(r) && now_s() < deadline);
		pthread_barrier_wait(&r->barrier);
		if (!r->spike_go)
			break;
		for (n = 0; n < r->spike_per_thread; n++)
			w->live[n] = obj_alloc(w, 0);   /* NULL when it failed: skipped below */
		pthread_barrier_wait(&r->barrier);
		if (w->id == 0) {
			struct pool_stats st;
			long rss = rss_kb();

			pool_get_stats(r->pools[0], &st, sizeof(st));
			if (st.allocated > r->spike_peak_allocated)
				r->spike_peak_allocated = st.allocated;
			if (rss > r->spike_rss_peak_kb)
				r->spike_rss_peak_kb = rss;
			r->spike_cycles++;
		}
		pthread_barrier_wait(&r->barrier);
		for (i = 0; i < n; i++)
			if (w->live[i])
				obj_free(w, 0, w->live[i]);
		pool_thread_flush();
		pthread_barrier_wait(&r->barrier);
		if (w->id == 0)
			pool_gc(r->pools[0]);
	}
}

/*
 * soak: a worker lives 200 ms to SOAK_LIFE_MS, then returns and main starts another in its
 * slot. Meanwhile: batches of 1 to SOAK_DEPTH objects over the soak pools, a quarter of them
 * handed to a random other slot's inbox (freed there), the rest freed LIFO or FIFO, and its own
 * inbox drained.
 */
static void run_soak(struct worker *w)
{
	struct run *r = w->run;
	double end = now_s() + (200 + (double)rng_below(&w->rng, SOAK_LIFE_MS - 200)) / 1000;
	size_t i, n, kept, d;

	while (!stopping(r) && now_s() < end) {
		struct inbox *mine = &r->inboxes[w->id];

		d = 1 + rng_below(&w->rng, r->depth);
		n = alloc_batch(w, d, r->npools);
		for (kept = 0, i = 0; i < n; i++) {
			struct inbox *to;
			int given = 0;

			if (r->nthreads > 1 && (rng_next(&w->rng) & 3) == 0) {
				to = &r->inboxes[(w->id + 1 + rng_below(&w->rng, r->nthreads - 1)) %
				                 r->nthreads];
				pthread_mutex_lock(&to->lock);
				if (to->count < to->cap) {
					to->slot[to->count++] = w->live[i];
					given = 1;
				}
				pthread_mutex_unlock(&to->lock);
			}
			if (!given)
				w->live[kept++] = w->live[i];
		}
		free_live_either_way(w, kept);
		pthread_mutex_lock(&mine->lock);
		n = mine->count < w->live_cap ? mine->count : w->live_cap;
		mine->count -= n;
		memcpy(w->live, mine->slot + mine->count, n * sizeof(void *));
		pthread_mutex_unlock(&mine->lock);
		for (i = 0; i < n; i++)
			free_tagged(w, w->live[i]);
	}
}

/* The run-time switches the chaos thread flips: set and clear words, and their flag. */
static const struct soak_switch {
	const char *set, *clear;
	unsigned int flag;
} soak_switches[] = {
	{ "integrity", "no-integrity", POOL_DBG_INTEGRITY },
	{ "cold-first", "hot-first", POOL_DBG_COLD_FIRST },
	{ "poison", "no-poison", POOL_DBG_POISON },
	{ "no-cache", "cache", POOL_DBG_NO_CACHE },
	{ "no-global", "global", POOL_DBG_NO_GLOBAL },
	{ "fail=2", "no-fail", POOL_DBG_FAIL },
};

#define NB_SOAK_SWITCHES (sizeof(soak_switches) / sizeof(soak_switches[0]))

static void soak_error(struct run *r, const char *what, const char *detail)
{
	if (!r->soak.error[0])
		snprintf(r->soak.error, sizeof(r->soak.error), "%s%s%s", what,
		         detail ? ": " : "", detail ? detail : "");
}

/*
 * soak: the chaos thread. One action at once, then one every 1 to 4 ms, at random: flip a
 * run-time debugging switch (pool_parse_debugging()), pool_gc() of one pool or of all,
 * pool_trim(), pool_flush(), pool_set_limit() (none, a little above what the pool holds, or
 * SIZE_MAX), or a pools show (pool_dump()) to /dev/null.
 */
void *soak_chaos(void *arg)
{
	struct run *r = arg;
	uint64_t rng = UINT64_C(0xC4A05C4A05C4A05);
	FILE *devnull = fopen("/dev/null", "w");

	/* at least one action, even when the thread first runs after the run has ended */
	do {
		struct timespec ts = { 0, (long)(1 + rng_below(&rng, 4)) * 1000000L };
		struct pool_head *p = r->pools[rng_below(&rng, r->npools)];
		unsigned int action = (unsigned int)rng_below(&rng, 13);
		struct pool_stats st;
		char *err = NULL;

		if (action < 6) {
			const struct soak_switch *sw = &soak_switches[rng_below(&rng,
			                                                        NB_SOAK_SWITCHES)];

			if (pool_parse_debugging((rng_next(&rng) & 1) ? sw->set : sw->clear, &err)) {
				soak_error(r, "pool_parse_debugging", err);
				free(err);
			}
			r->soak.flips++;
		} else if (action == 6) {
			pool_gc(NULL);
			r->soak.gcs++;
		} else if (action == 7) {
			pool_gc(p);
			r->soak.gcs++;
		} else if (action == 8) {
			pool_trim();
			r->soak.trims++;
		} else if (action == 9) {
			pool_flush(p);
			r->soak.flushes++;
		} else if (action < 12) {
			size_t limit = 0;

			if (pool_get_stats(p, &st, sizeof(st)) == 0 && (rng_next(&rng) & 1))
				limit = (rng_next(&rng) & 3) ? st.allocated + 1 +
				        rng_below(&rng, 4096) : SIZE_MAX;
			if (pool_set_limit(p, limit) != 0)
				soak_error(r, "pool_set_limit", strerror(errno));
			r->soak.limits++;
		} else if (action == 12 && devnull) {
			if (pool_dump(devnull, "byname") != 0)
				soak_error(r, "pool_dump", strerror(errno));
			r->soak.dumps++;
		}
		nanosleep(&ts, NULL);
	} while (!stopping(r));
	if (devnull)
		fclose(devnull);
	return NULL;
}

/*
 * soak, once every thread is gone: free what the inboxes still hold, put the debugging
 * switches back as they were when the workload began, and lift the limits.
 */
void soak_settle(struct run *r)
{
	char opts[256] = "", *err = NULL;
	size_t i, k, len = 0;

	for (i = 0; i < r->nthreads; i++) {
		struct inbox *in = &r->inboxes[i];

		for (k = 0; k < in->count; k++)
			free_tagged(&r->workers[i], in->slot[k]);
		in->count = 0;
	}
	for (i = 0; i < NB_SOAK_SWITCHES; i++) {
		const struct soak_switch *sw = &soak_switches[i];

		if (sw->flag == POOL_DBG_FAIL && (r->soak_flags & sw->flag))
			len += (size_t)snprintf(opts + len, sizeof(opts) - len, "%sfail=%u",
			                        len ? "," : "", r->soak_fail_pct);
		else
			len += (size_t)snprintf(opts + len, sizeof(opts) - len, "%s%s",
			                        len ? "," : "",
			                        (r->soak_flags & sw->flag) ? sw->set : sw->clear);
	}
	if (pool_parse_debugging(opts, &err) != 0) {
		soak_error(r, "restoring the debugging options", err);
		free(err);
	}
	for (i = 0; i < r->npools; i++)
		if (pool_set_limit(r->pools[i], 0) != 0)
			soak_error(r, "pool_set_limit", strerror(errno));
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;

	if (r->opt->bind && pool_topology_bind_thread(w->id) < 0 &&
	    atomic_exchange(&bind_failed, 1) == 0)
		fprintf(stderr, "pool-stress: --bind: cannot bind threads (%s); running unbound\n",
		        strerror(errno));
	if (r->wl == WL_SOAK) {
		run_soak(w);
		atomic_store(&w->done, 1);
		return NULL;
	}
	pthread_barrier_wait(&r->barrier);
	switch (r->wl) {
	case WL_LOCAL: run_local(w); break;
	case WL_PIPELINE: run_pipeline(w); break;
	case WL_BLEED: run_bleed(w); break;
	case WL_MIXED: run_mixed(w); break;
	case WL_SPIKE: run_spike(w); break;
	case WL_SOAK:
	case WL_COUNT: break;
	}
	return NULL;   /* the thread's caches are flushed by the library at exit */
}
