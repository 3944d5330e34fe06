/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Internals of the core tiers that the public API cannot show: thread ids are recycled (5000
 * threads one after another need a couple of registry slots), fork() never hangs on a
 * shared-list head held BUSY by a thread that died inside its BUSY window (the child resets it
 * and counts what it held as lost), nor does a refill (it goes round the buckets a bounded
 * number of times, then grows the pool), and the pool head's caller table counts live objects.
 * A slot of a pool of large objects goes deeper as its thread fills it while the budget has
 * room, is made shallow again by the CLOCK before anything is evicted, takes a deeper magazine
 * from the shared lists counted in the budget (by evictions when it must), and its objects are
 * counted by the statistics below its depth. pool_destroy() of an idle pool never fails with
 * EBUSY because another thread's busy word was set for an instant (48 threads destroying their
 * pools, and a busy word flickered on purpose), while a thread stuck inside a section still
 * makes it fail.
 *
 * Internal test: it includes "pool-head-t.h", "pool-magazine.h" and "pool-tcache.h" to read a
 * pool head's buckets and caller table, a thread's registry id and slots, and to hold a head
 * BUSY, none of which the public API shows.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "tcache/pool-magazine.h"
#include "tcache/pool-tcache.h"
#include "tcache/pool-thread.h"
#include "testutil.h"

static struct pool_head *churn_pool;
static _Atomic unsigned int churn_max_id;

static _Atomic unsigned int churn_null;

static void *churn_thread(void *arg)
{
	void *o = pool_alloc(churn_pool);
	unsigned int id;

	(void)arg;
	churn_null += !o;
	pool_free(churn_pool, o);
	id = pool__thread_id(pool__thread_self(&id));
	if (id > churn_max_id)
		churn_max_id = id;
	return NULL;
}

START_TEST(test_thread_churn_5000)
{
	unsigned int i, errors = 0;

	churn_pool = pool_create("churn", 64, 0);
	for (i = 0; i < 5000; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
			errors++;
	}
	ck_assert_uint_eq(errors, 0);
	ck_assert_uint_eq(churn_null, 0);
	/* ids are recycled: one thread at a time never needs more than a couple */
	ck_assert_uint_le(churn_max_id, 4);
	ck_assert_uint_eq(test_stats(churn_pool).used, 0);
	/* one refill from the slab tier went round from thread to thread */
	ck_assert_uint_le(test_stats(churn_pool).allocated, test_slab_refill(churn_pool));
}
END_TEST

/*
 * A thread died inside its BUSY window (asynchronous cancellation, a longjmp out of a signal
 * handler): bucket 0's head stays BUSY forever. fork() must not wait for it without bound: it
 * gives up after a bounded wait, the parent leaves the head to its (dead) owner, and the child
 * resets it, counting the objects its list held as lost, and allocates normally.
 */
/*
 * A pool named `name` whose 64 objects of 64 bytes lie in the shared lists, in bucket *b, whose
 * head this thread then holds BUSY, playing its dead owner: returns the pool, and the head it
 * swapped out in *saved.
 */
static struct pool_head *stock_and_hold(const char *name, int *b, struct pool_mag **saved)
{
	struct pool_head *p = pool_create_aligned(name, 64, 0, 0);
	void *o[64];
	int i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 64; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	for (i = 0; i < 64; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).shared_free, 64);
	ck_assert_uint_eq(test_stats(p).allocated, 64);
	for (i = 0; !p->buckets[i].free_objects; i++)
		;
	*b = i;
	*saved = atomic_exchange(&p->buckets[i].free_list, POOL_BUSY);
	ck_assert_ptr_ne(*saved, POOL_BUSY);
	return p;
}

START_TEST(test_fork_with_a_head_held_forever)
{
	struct pool_head *p;
	struct pool_mag *saved;
	struct pool_stats st;
	void *o[64];
	int status, i;
	pid_t pid;

	p = stock_and_hold("stuck", &i, &saved);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pool_stats cs;

		pool_get_stats(p, &cs, sizeof(cs));
		if (cs.lost == 0 || cs.lost > 64 || cs.shared_free + cs.lost != 64)
			_exit(2);
		for (i = 0; i < 64; i++)
			if (!(o[i] = pool_alloc(p)))
				_exit(3);
		for (i = 0; i < 64; i++)
			pool_free(p, o[i]);
		pool_thread_flush();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	/* the parent's head is still its owner's: nothing was lost here */
	ck_assert_ptr_eq(atomic_load(&p->buckets[i].free_list), POOL_BUSY);
	atomic_store(&p->buckets[i].free_list, saved);
	st = test_stats(p);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.shared_free, 64);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * A refill that meets the one stocked bucket BUSY goes round the buckets again, a bounded number
 * of times (pool-bucket.c, POP_BUSY_ROUNDS and POP_BUSY_YIELDS): held for ever by a dead owner,
 * the head does not hold the refill, which grows the pool from the slab tier instead and leaves
 * the stuck list as it was. (That the rounds keep a producer/consumer handover from growing is
 * check_shared.c's.)
 */
START_TEST(test_refill_passes_a_head_held_forever)
{
	struct pool_head *p;
	struct pool_mag *saved;
	struct pool_stats before, st;
	void *extra;
	int i;

	p = stock_and_hold("stuck-refill", &i, &saved);
	before = test_stats(p);
	ck_assert_ptr_nonnull(extra = pool_alloc(p));
	ck_assert_ptr_eq(atomic_load(&p->buckets[i].free_list), POOL_BUSY);
	atomic_store(&p->buckets[i].free_list, saved);
	st = test_stats(p);
	ck_assert_uint_gt(st.allocated, before.allocated);      /* grown from the slab tier */
	ck_assert_uint_eq(st.shared_free, 64);                  /* the stuck list untouched */
	ck_assert_uint_eq(st.shared_get_objects, before.shared_get_objects);
	pool_free(p, extra);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).used, 0);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* A slot's depth (pool-magazine.c, deepen(); pool-demand.c, MAG_DEEP_SHARE)                   */
/* ------------------------------------------------------------------------------------------ */

/* What a child saw of slot `s` of the calling thread's caches, and of its budget. */
struct depth_seen {
	unsigned int pool_depth, cluster;       /* the pool's starting depth and capacity */
	unsigned int depth, count, loaded;      /* the slot's depth, loaded count, loaded or not */
	unsigned int counted;                   /* 1: reserved_objs == held + depth (if loaded) */
	unsigned int within;                    /* 1: the thread's reserved <= its budget */
	unsigned long cached, other;            /* pool_get_stats().cached: this pool, another */
};

/* A 2 MiB thread budget: a 16 KiB pool starts at 8 objects deep, in magazines of 32. */
static void configure_budget(size_t bytes)
{
	struct pool_config cfg = { 0 };

	cfg.cache_bytes = bytes;
	if (pool_configure(&cfg))
		abort();
}

static void see_slot(struct depth_seen *r, struct pool_head *p)
{
	unsigned int dbg;
	struct pool_thread_caches *c = pool__thread_self(&dbg)->caches;
	struct pool_tslot *sl = &c->slot[p->ro.index];

	r->pool_depth = p->depth;
	r->cluster = p->cluster;
	r->loaded = sl->loaded != NULL;
	r->depth = sl->depth;
	r->count = sl->loaded ? (unsigned int)(c->tc[p->ro.index].top - sl->loaded->obj) : 0;
	r->counted = sl->reserved_objs == sl->held + (sl->loaded ? sl->depth : 0);
	r->within = c->reserved <= c->budget;
	r->cached = test_stats(p).cached;
}

/* A batch of 64 objects allocated, then freed last first, as pool-bench's `batch` does. */
static void batch_of_64(struct pool_head *p)
{
	void *o[64];
	int i;

	for (i = 0; i < 64; i++)
		o[i] = pool_alloc(p);
	for (i = 64; i-- > 0;)
		pool_free(p, o[i]);
}

/* 64 objects of 16 KiB allocated and freed: the slot goes from 8 deep to the magazine's 32. */
static void deepen_child(void *result, const void *arg)
{
	struct depth_seen *r = result;
	struct pool_head *p;

	(void)arg;
	configure_budget(2u << 20);
	p = pool_create("deep", 16384, 0);
	batch_of_64(p);
	see_slot(r, p);
}

START_TEST(test_slot_goes_deeper_within_budget)
{
	struct depth_seen r;
	struct death d;

	test_child_result(deepen_child, NULL, &r, sizeof(r), &d);
	ck_assert_uint_eq(r.pool_depth, 8);
	ck_assert_uint_eq(r.cluster, 32);
	ck_assert_uint_eq(r.loaded, 1);
	ck_assert_uint_eq(r.depth, 32);
	ck_assert_uint_eq(r.counted, 1);
	ck_assert_uint_eq(r.within, 1);
	ck_assert_uint_eq(r.cached, 64);         /* every object freed stays in the thread */
}
END_TEST

/*
 * A deep slot holding 4 objects, then another pool that needs the room: the CLOCK makes the
 * deep slot shallow again (its reservation back) before it evicts anything, so the 4 objects
 * stay where they are.
 */
static void shallower_child(void *result, const void *arg)
{
	struct depth_seen *r = result;
	struct pool_head *p, *q;
	static void *o[64], *b[400];
	int i;

	(void)arg;
	configure_budget(2u << 20);
	p = pool_create("deep", 16384, 0);
	q = pool_create("crowd", 4096, 0);
	batch_of_64(p);
	for (i = 0; i < 64; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 4; i++)
		pool_free(p, o[i]);
	/* 400 x 4 KiB (1.6 MiB) do not fit beside 32 x 16 KiB (512 KiB) under 2 MiB */
	for (i = 0; i < 400; i++)
		b[i] = pool_alloc(q);
	for (i = 400; i-- > 0;)
		pool_free(q, b[i]);
	see_slot(r, p);
	r->other = test_stats(q).cached;
}

START_TEST(test_clock_makes_a_deep_slot_shallower_first)
{
	struct depth_seen r;
	struct death d;

	test_child_result(shallower_child, NULL, &r, sizeof(r), &d);
	ck_assert_uint_eq(r.loaded, 1);
	ck_assert_uint_eq(r.depth, r.pool_depth);
	ck_assert_uint_eq(r.count, 4);
	ck_assert_uint_eq(r.counted, 1);
	ck_assert_uint_eq(r.within, 1);
	ck_assert_uint_eq(r.other, 400);
}
END_TEST

struct refill_arg {
	struct pool_head *p, *crowd;
	struct depth_seen r;
};

/* A deep slot's magazines go to the shared lists at the thread's exit. */
static void *fill_deep(void *arg)
{
	batch_of_64(arg);
	return NULL;
}

/* A new thread takes one of them: its slot goes as deep as the magazine, counted. */
static void *take_deep(void *arg)
{
	struct refill_arg *a = arg;
	static void *b[480];
	void *o;
	int i;

	if (a->crowd) {
		/* the budget nearly full of another pool: the refill must evict to count it */
		for (i = 0; i < 480; i++)
			b[i] = pool_alloc(a->crowd);
		for (i = 480; i-- > 0;)
			pool_free(a->crowd, b[i]);
	}
	o = pool_alloc(a->p);
	see_slot(&a->r, a->p);
	if (a->crowd)
		a->r.other = test_stats(a->crowd).cached;
	pool_free(a->p, o);
	return NULL;
}

static void refill_child(void *result, const void *arg)
{
	struct refill_arg a = { 0 };
	pthread_t t;

	configure_budget(2u << 20);
	a.p = pool_create("deep", 16384, 0);
	if (arg)
		a.crowd = pool_create("crowd", 4096, 0);
	if (pthread_create(&t, NULL, fill_deep, a.p) || pthread_join(t, NULL))
		abort();
	if (pthread_create(&t, NULL, take_deep, &a) || pthread_join(t, NULL))
		abort();
	memcpy(result, &a.r, sizeof(a.r));
}

START_TEST(test_refill_takes_a_deeper_magazine)
{
	struct depth_seen r;
	struct death d;
	int crowded = _i;

	test_child_result(refill_child, crowded ? "crowded" : NULL, &r, sizeof(r), &d);
	/* the magazine held more than 8: the slot is as deep as it was full, one object out */
	ck_assert_uint_gt(r.depth, r.pool_depth);
	ck_assert_uint_le(r.depth, r.cluster);
	ck_assert_uint_eq(r.count + 1, r.depth);
	ck_assert_uint_eq(r.counted, 1);
	ck_assert_uint_eq(r.within, 1);
	if (crowded)                             /* 480 x 4 KiB cached at first: some went */
		ck_assert_uint_lt(r.other, 480);
}
END_TEST

/*
 * Statistics of a slot whose thread only frees (its entry's base at the end of the depth, the
 * objects below it): 5 objects freed by such a thread count 5 more cached objects while the
 * slot is shallower than its magazine.
 */
struct free_only_arg {
	struct pool_head *p;
	void *o[5];
	pthread_barrier_t freed, seen;
};

static void *free_only(void *arg)
{
	struct free_only_arg *a = arg;
	int i;

	for (i = 0; i < 5; i++)
		pool_free(a->p, a->o[i]);
	pthread_barrier_wait(&a->freed);
	pthread_barrier_wait(&a->seen);
	return NULL;
}

static void free_only_child(void *result, const void *arg)
{
	static struct free_only_arg a;
	unsigned long *seen = result;
	pthread_t t;
	int i;

	(void)arg;
	configure_budget(2u << 20);
	a.p = pool_create("deep", 16384, 0);
	for (i = 0; i < 5; i++)
		a.o[i] = pool_alloc(a.p);
	seen[0] = test_stats(a.p).cached;
	pthread_barrier_init(&a.freed, NULL, 2);
	pthread_barrier_init(&a.seen, NULL, 2);
	if (pthread_create(&t, NULL, free_only, &a))
		abort();
	pthread_barrier_wait(&a.freed);
	seen[1] = test_stats(a.p).cached;
	seen[2] = a.p->depth < a.p->cluster;
	pthread_barrier_wait(&a.seen);
	pthread_join(t, NULL);
}

START_TEST(test_free_only_slot_counted_below_its_depth)
{
	unsigned long seen[3];
	struct death d;

	test_child_result(free_only_child, NULL, seen, sizeof(seen), &d);
	ck_assert_uint_eq(seen[2], 1);
	ck_assert_uint_eq(seen[1], seen[0] + 5);
}
END_TEST

void *alloc_from_here(struct pool_head *p) __attribute__((noinline));
void *alloc_from_here(struct pool_head *p)
{
	return pool_alloc(p);
}

/*
 * The caller table of `-dM caller` (the pool head's callers[]): the live count of the function
 * that allocated rises with each object it holds and comes back to 0 as they are freed.
 * (check_dump.c checks what `pools show detailed` prints from it.)
 */
START_TEST(test_caller_live_table)
{
	struct pool_head *p;
	void *o[5];
	int i, found = 0;

	ck_assert_int_eq(pool_parse_debugging("caller", NULL), 0);
	p = pool_create("traced", 64, 0);
	for (i = 0; i < 5; i++)
		o[i] = alloc_from_here(p);
	for (i = 0; i < (int)POOL_CALLER_SLOTS; i++) {
		uintptr_t c = atomic_load(&p->callers[i].caller);
		Dl_info info;

		if (c && dladdr((void *)c, &info) && info.dli_sname &&
		    !strcmp(info.dli_sname, "alloc_from_here")) {
			ck_assert_int_eq(atomic_load(&p->callers[i].live), 5);
			found = 1;
		}
	}
	ck_assert(found);
	for (i = 0; i < 5; i++)
		pool_free(p, o[i]);
	for (i = 0; i < (int)POOL_CALLER_SLOTS; i++)
		ck_assert_int_eq(atomic_load(&p->callers[i].live), 0);
}
END_TEST

/*
 * pool__copy_nonnull(), the bulk calls' copy into a magazine: for every length up to three
 * blocks of four and a tail, 1 and an exact copy when no pointer is NULL; 0 wherever the one
 * NULL falls (first, inside or after a block of four, last).
 */
START_TEST(test_copy_nonnull)
{
	void *src[13], *dst[13];
	size_t n, i, at;

	for (i = 0; i < 13; i++)
		src[i] = (char *)dst + 8 * (i + 1);
	for (n = 0; n <= 13; n++) {
		memset(dst, 0, sizeof(dst));
		ck_assert_int_eq(pool__copy_nonnull(dst, src, n), 1);
		ck_assert_int_eq(memcmp(dst, src, n * sizeof(*src)), 0);
		for (i = n; i < 13; i++)
			ck_assert_ptr_null(dst[i]);
		for (at = 0; at < n; at++) {
			void *keep = src[at];

			src[at] = NULL;
			ck_assert_msg(pool__copy_nonnull(dst, src, n) == 0, "n %zu, NULL at %zu", n, at);
			src[at] = keep;
		}
	}
}
END_TEST

/*
 * pool__copy_skip_null(): NULL entries skipped wherever they fall, at most `room` written, and
 * *consumed the entries up to the last one written (all of src[] when room was left); without
 * NULL, a plain copy of min(n, room).
 */
START_TEST(test_copy_skip_null)
{
	void *src[13], *dst[13];
	size_t n, room, at, w, used, i, j;

	for (i = 0; i < 13; i++)
		src[i] = (char *)dst + 8 * (i + 1);
	for (n = 0; n <= 13; n++)
		for (room = 0; room <= 13; room++) {
			w = pool__copy_skip_null(dst, room, src, n, &used);
			ck_assert_uint_eq(w, n < room ? n : room);
			ck_assert_uint_eq(used, w);
			ck_assert_int_eq(memcmp(dst, src, w * sizeof(*src)), 0);
			for (at = 0; at < n; at++) {
				void *keep = src[at];
				size_t want = room < n - 1 ? room : n - 1;

				src[at] = NULL;
				memset(dst, 0, sizeof(dst));
				w = pool__copy_skip_null(dst, room, src, n, &used);
				ck_assert_msg(w == want, "n %zu, room %zu, NULL at %zu: %zu written", n, room,
				              at, w);
				/* what was written is src[] without the NULL, in order */
				for (i = 0, j = 0; j < w; i++)
					if (src[i])
						ck_assert_ptr_eq(dst[j++], src[i]);
				/* to the end of src[] when room was left, else just past the last one */
				ck_assert_uint_eq(used, w < room ? n : i);
				src[at] = keep;
			}
		}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* pool_destroy()'s drain and threads' sections                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * A thread that finds a quiescer up when it enters a section stores 1 into its busy word, sees
 * the flag and clears it again: a transient busy, which the drain of pool_destroy() must not take
 * for a thread stuck inside a section. DESTROYERS threads each create a private pool, use it and
 * destroy it, DESTROYS times, while USERS threads use pools of their own, entering sections all
 * the time; no destroy of an idle pool may fail.
 */
#define DESTROYERS 48u
#define USERS      8u
#define DESTROYS   (TEST_TSAN ? 40u : 400u)

static atomic_int destroy_stop;
static atomic_uint destroy_busy, destroy_other, destroys_done;

static void *destroyer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, i, k;
	char name[32];
	void *o[80];

	for (i = 0; i < DESTROYS; i++) {
		struct pool_head *p;

		snprintf(name, sizeof(name), "private-%u-%u", id, i);
		p = pool_create(name, 64 + 64 * (i % 4), 0);
		if (!p) {
			destroy_other++;
			continue;
		}
		/* past a magazine: refills and a spill, sections of this thread */
		for (k = 0; k < 80; k++)
			o[k] = pool_alloc(p);
		for (k = 0; k < 80; k++)
			pool_free(p, o[k]);
		while (pool_destroy(p) != 0) {
			if (errno != EBUSY) {
				destroy_other++;
				break;
			}
			/* counted, then destroyed: the pool must not outlive the test */
			destroy_busy++;
		}
		destroys_done++;
	}
	return NULL;
}

static void *user(void *arg)
{
	struct pool_head *p = arg;
	void *o[200];
	unsigned int k;

	while (!atomic_load(&destroy_stop)) {
		for (k = 0; k < 200; k++)
			o[k] = pool_alloc(p);
		for (k = 0; k < 200; k++)
			pool_free(p, o[k]);
		pool_thread_flush();
	}
	return NULL;
}

START_TEST(test_destroy_of_an_idle_pool_never_fails_busy)
{
	pthread_t d[DESTROYERS], u[USERS];
	struct pool_head *own[USERS];
	char name[32];
	unsigned int i;

	for (i = 0; i < USERS; i++) {
		snprintf(name, sizeof(name), "user-%u", i);
		ck_assert_ptr_nonnull(own[i] = pool_create(name, 128, 0));
		ck_assert_int_eq(pthread_create(&u[i], NULL, user, own[i]), 0);
	}
	for (i = 0; i < DESTROYERS; i++)
		ck_assert_int_eq(pthread_create(&d[i], NULL, destroyer, (void *)(uintptr_t)i), 0);
	for (i = 0; i < DESTROYERS; i++)
		pthread_join(d[i], NULL);
	atomic_store(&destroy_stop, 1);
	for (i = 0; i < USERS; i++) {
		pthread_join(u[i], NULL);
		ck_assert_int_eq(pool_destroy(own[i]), 0);
	}
	printf("check_tier: %u destroys of idle private pools beside %u threads using theirs: %u "
	       "EBUSY\n", destroys_done, USERS, destroy_busy);
	ck_assert_uint_eq(destroy_other, 0);
	ck_assert_uint_eq(destroys_done, DESTROYERS * DESTROYS);
	ck_assert_uint_eq(destroy_busy, 0);
}
END_TEST

/*
 * The same race, made certain: a registered thread, idle, whose busy word another thread sets
 * and clears over and over, as section_enter() does each time it finds a quiescer up. Every
 * pool_destroy() of an idle pool must succeed while it flickers; but a busy word that stays set
 * (a thread stuck or killed inside a section) still makes pool_destroy() fail with EBUSY,
 * after its bounded wait, said on stderr, and the pool stays usable.
 */
struct flicker {
	pthread_barrier_t bar;
	struct pool_thread_caches *caches;     /* the idle thread's */
	atomic_int stop;
};

static void *idle_registered(void *arg)
{
	struct flicker *f = arg;
	struct pool_head *p = pool_create("idle-registered", 64, 0);
	unsigned int dbg;

	pool_free(p, pool_alloc(p));
	f->caches = pool__thread_self(&dbg)->caches;
	pthread_barrier_wait(&f->bar);          /* registered */
	pthread_barrier_wait(&f->bar);          /* the test is over */
	ck_assert_int_eq(pool_destroy(p), 0);
	return NULL;
}

static void *flickerer(void *arg)
{
	struct flicker *f = arg;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		atomic_store_explicit(&f->caches->busy, 1, memory_order_relaxed);
		atomic_store_explicit(&f->caches->busy, 0, memory_order_release);
	}
	return NULL;
}

START_TEST(test_destroy_tells_a_transient_busy_from_a_stuck_thread)
{
	struct flicker f = { .caches = NULL, .stop = 0 };
	pthread_t idle, fl;
	unsigned int i, busy = 0;
	void *o;

	pthread_barrier_init(&f.bar, NULL, 2);
	ck_assert_int_eq(pthread_create(&idle, NULL, idle_registered, &f), 0);
	pthread_barrier_wait(&f.bar);
	ck_assert_ptr_nonnull(f.caches);
	ck_assert_int_eq(pthread_create(&fl, NULL, flickerer, &f), 0);
	for (i = 0; i < 200; i++) {
		struct pool_head *p = pool_create("flickered", 64, 0);

		ck_assert_ptr_nonnull(p);
		pool_free(p, pool_alloc(p));
		while (pool_destroy(p) != 0) {
			ck_assert_int_eq(errno, EBUSY);
			busy++;
		}
	}
	atomic_store(&f.stop, 1);
	pthread_join(fl, NULL);
	printf("check_tier: 200 destroys beside a flickering busy word: %u EBUSY\n", busy);
	ck_assert_uint_eq(busy, 0);
	/* stuck: the wait gives up, the destroy fails, and the pool works on */
	{
		struct pool_head *p = pool_create("stuck-beside", 64, 0);

		FILE *err = tmpfile();
		char said[512] = "";
		int saved = dup(2);

		ck_assert_ptr_nonnull(err);
		ck_assert_int_ge(saved, 0);
		atomic_store(&f.caches->busy, 1);
		fflush(stderr);
		dup2(fileno(err), 2);
		errno = 0;
		ck_assert_int_eq(pool_destroy(p), -1);
		ck_assert_int_eq(errno, EBUSY);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		rewind(err);
		ck_assert_ptr_nonnull(fgets(said, sizeof(said), err));
		fclose(err);
		/* said on stderr, with the pool's name */
		ck_assert_msg(strstr(said, "libpool: pool_destroy() of pool 'stuck-beside': EBUSY") &&
		              strstr(said, "stuck"), "stderr: %s", said);
		ck_assert_ptr_nonnull(o = pool_alloc(p));
		pool_free(p, o);
		atomic_store(&f.caches->busy, 0);
		ck_assert_int_eq(pool_destroy(p), 0);
	}
	pthread_barrier_wait(&f.bar);
	pthread_join(idle, NULL);
	pthread_barrier_destroy(&f.bar);
}
END_TEST

static Suite *tier_suite(void)
{
	Suite *s = suite_create("tier");
	TCase *tc = tcase_create("Threads");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_thread_churn_5000);
	tcase_add_test(tc, test_fork_with_a_head_held_forever);
	tcase_add_test(tc, test_refill_passes_a_head_held_forever);
	tcase_add_loop_test(tc, test_refill_takes_a_deeper_magazine, 0, 2);
	tcase_add_test(tc, test_free_only_slot_counted_below_its_depth);
	tcase_add_test(tc, test_destroy_of_an_idle_pool_never_fails_busy);
	tcase_add_test(tc, test_destroy_tells_a_transient_busy_from_a_stuck_thread);
	suite_add_tcase(s, tc);

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_caller_live_table);
	tcase_add_test(tc, test_slot_goes_deeper_within_budget);
	tcase_add_test(tc, test_clock_makes_a_deep_slot_shallower_first);
	tcase_add_test(tc, test_copy_nonnull);
	tcase_add_test(tc, test_copy_skip_null);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(tier_suite)
