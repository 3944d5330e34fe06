/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The releaser: memory comes back with no call from the program (pool-demand.c tells the windows,
 * doc/internals.md, 8.5).
 *
 * What it does, once per demand window (decay_ms): it takes the spare magazines of every thread
 * that entered no cache section through the window (pool__thread_reclaim(): their previous,
 * full and empty magazines, which the inline fast path never touches), ends every pool's window
 * and counts what stayed unused through it (what the pool owes), then pays it back in steps of at
 * most STEP_OBJS objects under the pool list lock, one after the other until nothing is owed;
 * when a window's payments reached PURGE_MIN_BYTES, the OS layer is trimmed (pool__os_trim()), so
 * that jemalloc's dirty pages of what went back, unused for a window already, do not wait for
 * its own decay. A burst freed at time t was in use in the window around t and unused through
 * the next one, which ends before t + 2 * decay_ms: that is the bound, whatever its size.
 *
 * Who runs it, and why a thread. The inline fast path has no room for a clock (19 instructions
 * per pair) and a program that runs fast-path pairs only, or sleeps, calls no slow path at all;
 * something else must look at the clock. A library thread does, as jemalloc's background_thread
 * and tcmalloc's background release do: started by the first slow path of an allocation or of a
 * free (pool__release_start(), which tries again later when it fails), it sleeps on a timed
 * condition wait until the next window ends, does the work and sleeps again: with nothing to
 * give back, one wake-up per window. A program that forbids library threads sets
 * POOL_RELEASE=caller (or struct pool_config.release = POOL_RELEASE_CALLER) and calls
 * pool_release_run() from its event loop, which does the same work in one bounded step and says
 * when to call again. Without either, the slow paths end the windows (pool__demand_tick()), once
 * no releaser stepped for two windows.
 *
 * Safety. The thread blocks every signal, so that signals reach the program's threads; its stack
 * is STACK_BYTES, not the default 8 MiB, for programs under RLIMIT_AS. It takes the pool list
 * lock with trylock only (a pool_for_each() callback may hold it for long, or fork()), the
 * registry lock, pass locks with trylock, and the OS layer's: the lock order of pool.c.
 * A flag (`stepping`) serialises its steps with pool_release_run(); rel_lock, never held with
 * another lock, guards the thread's state. The work of a step is done under the pool list lock,
 * which fork() takes, so a child is never forked in the middle of it (release_fork_child() says
 * when a child starts its own). The library's destructor (dlclose(), exit()) stops and joins the
 * thread before the code goes away.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pool/pool.h>

#include "base/pool-assert.h"
#include "base/pool-util.h"
#include "shared/pool-bucket.h"
#include "shared/pool-demand.h"
#include "config/pool-config.h"
#include "core/pool-int.h"
#include "core/pool-release.h"
#include "os/pool-os.h"
#include "tcache/pool-thread.h"

#define STEP_OBJS         16384u          /* objects one step gives back (about a millisecond) */
#define PURGE_MIN_BYTES   (1ul << 20)     /* a window's payments that trim the OS layer */
#define STACK_BYTES       (256u << 10)    /* the thread's stack */
#define BUSY_BACKOFF_MS   1u              /* the pool list lock was held: try again after */
#define STUCK_BACKOFF_MS  10u             /* owed, but every bucket it could take from was BUSY */
#define RETRY_MIN_MS      1u              /* a failed start: the first try again after (ms) */
#define FORK_START_WAIT_MS 1000u          /* fork() waits this long at most for a starting thread */

/* Sanitizer runtimes want bigger frames and stacks of their own: their default stack there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SAN_STACKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SAN_STACKS 1
#endif
#endif
#ifndef SAN_STACKS
#define SAN_STACKS 0
#endif

/*
 * ThreadSanitizer cannot start threads in the child of a multi-threaded fork() ("not supported.
 * Dying"): under it a child does without the thread (the slow paths and pool_release_run()).
 */
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#ifndef TSAN_BUILD
#define TSAN_BUILD 0
#endif

/* The outcome of a step. */
enum {
	STEP_DONE,                      /* nothing owed until the next window's end */
	STEP_MORE,                      /* gave back STEP_OBJS, more is owed: step again now */
	STEP_BUSY,                      /* the pool list lock was held: nothing done */
	STEP_STUCK,                     /* more owed, but nothing could be taken this time */
};

atomic_int pool__release_pending = 1;

static pthread_mutex_t rel_lock = PTHREAD_MUTEX_INITIALIZER;   /* the thread's state below */
static pthread_cond_t rel_cond;                                /* CLOCK_MONOTONIC */
static pthread_t rel_thread;
static int rel_running, rel_stop;
static atomic_int rel_starting;         /* created, not yet in releaser_main() (fork()) */

static _Atomic uint64_t retry_at_ns;    /* after a failed start: no try before (COARSE ns) */
static uint64_t retry_wait_ns;          /* the wait after the last failed start (rel_lock) */
static unsigned int start_failures;     /* failed starts since the last success (rel_lock) */

static atomic_int stepping;             /* 1 while a thread steps: one step at a time */
static _Atomic uint64_t next_tick_ns;   /* when the next window ends (0: not yet set) */
static uint64_t released_bytes;         /* given back since the last trim (while stepping) */

static uint64_t window_ns(void)
{
	return (uint64_t)pool__config_get()->decay_ms * 1000000u;
}

/* One step at a time: 1 when the caller may step (then step_done()), 0 when another does. */
static int step_begin(void)
{
	return !atomic_exchange_explicit(&stepping, 1, memory_order_acquire);
}

static void step_done(void)
{
	atomic_store_explicit(&stepping, 0, memory_order_release);
}

/*
 * One step, between step_begin() and step_done(): at a window's end, what the threads' caches
 * kept unused and every pool's count; then up to STEP_OBJS objects of what the pools owe; a trim
 * once a window's debt is paid if it was large.
 */
static int step(uint64_t now)
{
	uint64_t window = window_ns(), tick_at = atomic_load(&next_tick_ns), bytes = 0;
	unsigned long budget = STEP_OBJS;
	struct pool_head *p;
	int tick, more = 0;

	if (!tick_at)
		atomic_store(&next_tick_ns, tick_at = now + window);
	tick = now >= tick_at;
	if (pool__lock_try(&pool__list_lock) != 0)
		return STEP_BUSY;
	pool__demand_releaser_seen();
	if (tick && pool__list_head)
		pool__thread_reclaim();
	for (p = pool__list_head; p; p = p->next) {
		uint64_t before;

		if (!tick && (!budget || !atomic_load_explicit(&p->demand.owed, memory_order_relaxed))) {
			more |= budget == 0 &&
			        atomic_load_explicit(&p->demand.owed, memory_order_relaxed) != 0;
			continue;
		}
		before = atomic_load_explicit(&p->demand.gc_released_bytes, memory_order_relaxed);
		if (pool__demand_release_step(p, tick, &budget) != 0)
			more = 1;
		bytes += atomic_load_explicit(&p->demand.gc_released_bytes, memory_order_relaxed) -
		         before;
	}
	pool__unlock(&pool__list_lock);
	if (tick)
		atomic_store(&next_tick_ns, tick_at + window > now ? tick_at + window : now + window);
	released_bytes += bytes;
	if (!more && released_bytes >= PURGE_MIN_BYTES) {
		pool__os_trim();
		released_bytes = 0;
	}
	if (!more)
		return STEP_DONE;
	return budget < STEP_OBJS ? STEP_MORE : STEP_STUCK;
}

/* When a step should run next after `outcome`, from `now`. */
static uint64_t next_step_ns(int outcome, uint64_t now)
{
	switch (outcome) {
	case STEP_MORE:
		return now;
	case STEP_BUSY:
		return now + BUSY_BACKOFF_MS * 1000000ull;
	case STEP_STUCK:
		return now + STUCK_BACKOFF_MS * 1000000ull;
	default:
		return atomic_load(&next_tick_ns);
	}
}

static void *releaser_main(void *arg)
{
	int outcome = STEP_DONE;
	uint64_t last = pool__clock_ns(CLOCK_MONOTONIC);

	(void)arg;
	atomic_store(&rel_starting, 0);
	for (;;) {
		uint64_t now, due;

		pthread_mutex_lock(&rel_lock);
		for (;;) {
			struct timespec ts;

			if (rel_stop) {
				pthread_mutex_unlock(&rel_lock);
				return NULL;
			}
			now = pool__clock_ns(CLOCK_MONOTONIC);
			due = next_step_ns(outcome, last);
			if (!atomic_load(&next_tick_ns) || due <= now)
				break;
			ts.tv_sec = (time_t)(due / 1000000000u);
			ts.tv_nsec = (long)(due % 1000000000u);
			pthread_cond_timedwait(&rel_cond, &rel_lock, &ts);
		}
		pthread_mutex_unlock(&rel_lock);
		if (step_begin()) {
			outcome = step(now);
			step_done();
		} else {
			outcome = STEP_BUSY;       /* pool_release_run() steps now */
		}
		last = now;
		if (outcome == STEP_MORE)
			sched_yield();
	}
}

/*
 * Create the thread (rel_lock held, no thread running): 0, or the error of the call that failed,
 * named in *what.
 */
static int create_thread(const char **what)
{
	pthread_attr_t attr;
	sigset_t all, old;
	long min = sysconf(_SC_THREAD_STACK_MIN);
	size_t stack = STACK_BYTES;
	int err;

	*what = "pthread_attr_init";
	err = pthread_attr_init(&attr);
	if (err)
		return err;
	if (min > 0 && stack < (size_t)min)
		stack = (size_t)min;
	if (!SAN_STACKS)
		pthread_attr_setstacksize(&attr, stack);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*what = "pthread_create";
	atomic_store(&rel_starting, 1);
	err = pthread_create(&rel_thread, &attr, releaser_main, NULL);
	if (err)
		atomic_store(&rel_starting, 0);
	else {
		/* named here rather than by itself: it is visible as such once this returns */
		pthread_setname_np(rel_thread, "pool-releaser");
		rel_running = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return err;
}

void pool__release_start(void)
{
	const char *what = NULL;
	unsigned int failed;
	uint64_t now = 0;
	int err;

	/*
	 * Not from a thread that has not made its first call into jemalloc yet: pthread_create()
	 * allocates (the new thread's TLS, through the C library's calloc(), which jemalloc
	 * replaces) from the calling thread, and jemalloc crashes setting up a thread for which
	 * RLIMIT_AS left no room (the first-call guard of pool-os.c refuses the library's own calls;
	 * tests/os/check_oom.c, "nofile"). A later slow path of this thread, or another's, starts it.
	 */
	if (!pool__os_thread_ready())
		return;
	/* after a failed try, no other before its time (a clock read: a few slow paths only) */
	if (atomic_load_explicit(&retry_at_ns, memory_order_relaxed) &&
	    (now = pool__clock_ns(CLOCK_MONOTONIC_COARSE)) <
	    atomic_load_explicit(&retry_at_ns, memory_order_relaxed))
		return;
	pthread_mutex_lock(&rel_lock);
	if (!atomic_exchange(&pool__release_pending, 0) || rel_running || rel_stop ||
	    pool__config_get()->release != POOL_RELEASE_THREAD) {
		pthread_mutex_unlock(&rel_lock);
		return;
	}
	if (now && now < atomic_load_explicit(&retry_at_ns, memory_order_relaxed)) {
		/* another thread tried meanwhile, and failed */
		atomic_store(&pool__release_pending, 1);
		pthread_mutex_unlock(&rel_lock);
		return;
	}
	err = create_thread(&what);
	failed = start_failures;
	if (err) {
		/* 1 ms, then twice as long each time, up to a window */
		retry_wait_ns = !start_failures++ ? RETRY_MIN_MS * 1000000ull :
		                2 * retry_wait_ns < window_ns() ? 2 * retry_wait_ns : window_ns();
		atomic_store_explicit(&retry_at_ns, pool__clock_ns(CLOCK_MONOTONIC_COARSE) +
		                      retry_wait_ns, memory_order_relaxed);
		atomic_store(&pool__release_pending, 1);
	} else {
		atomic_store_explicit(&retry_at_ns, 0, memory_order_relaxed);
		start_failures = 0;
	}
	pthread_mutex_unlock(&rel_lock);
	if (err && !failed)
		fprintf(stderr, "libpool: the releaser thread could not start (%s: %s, errno %d): "
		        "until it does, freed memory goes back only from slow paths that find a "
		        "demand window over, pool_release_run() and pool_gc(), so a process that goes "
		        "idle keeps what it freed; retrying from later slow paths, at most once a "
		        "window (%u ms)\n", what, strerror(err), err, pool__config_get()->decay_ms);
	else if (!err && failed)
		fprintf(stderr, "libpool: the releaser thread started after %u failed tries: memory "
		        "comes back by itself again\n", failed);
}

POOL_API unsigned int pool_release_run(void)
{
	uint64_t now = pool__clock_ns(CLOCK_MONOTONIC), next;
	int outcome;

	if (!step_begin())
		return BUSY_BACKOFF_MS;         /* the releaser thread steps now */
	outcome = step(now);
	step_done();
	switch (outcome) {
	case STEP_MORE:
		return 0;
	case STEP_BUSY:
		return BUSY_BACKOFF_MS;
	case STEP_STUCK:
		return STUCK_BACKOFF_MS;
	default:
		next = atomic_load(&next_tick_ns);
		return next > now ? (unsigned int)((next - now + 999999u) / 1000000u) : 0;
	}
}

static void cond_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rel_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/*
 * fork(), before: a thread that is still starting may hold a lock of the runtime it starts in
 * (AddressSanitizer's allocator: its thread set-up frees what pthread_getattr_np() allocated,
 * and the libasan of gcc 12 does not take its allocator's locks across fork()), which the child
 * would inherit held, and its own releaser would wait for forever. So fork() waits until the
 * thread runs its own code, at most FORK_START_WAIT_MS (a thread that starts takes microseconds;
 * the bound is for a machine too loaded to schedule it). No lock is taken: this handler runs
 * before the core's (pthread_atfork() runs prepare handlers in reverse order of registration)
 * and must not order this file's locks before the pool list lock, which a pool_for_each()
 * callback holds when its allocation starts the thread, or when it forks.
 */
static void release_fork_prepare(void)
{
	struct timespec ms = { 0, 1000000 };
	unsigned int i;

	for (i = 0; atomic_load(&rel_starting) && i < FORK_START_WAIT_MS; i++)
		nanosleep(&ms, NULL);
}

/*
 * fork(), in the child: the releaser thread did not follow. The child starts one at its first
 * slow path, not at the fork: a child that calls exec() never starts one, and one that drops
 * the state it inherited overflows its cache on those frees and starts it there, even if every
 * allocation after is a fast-path pop from its full magazines (a pre-fork server's worker).
 * The thread's lock and condition may have been held or waited on by it: new ones. A step it
 * (or pool_release_run() on another thread) was making holds the pool list lock for its work,
 * which the core's fork handlers take, so the child finds the pools whole and only the step's
 * flag to clear. The state of a failed start stays: a child of a sandboxed parent says nothing
 * more and tries again on the same schedule.
 */
static void release_fork_child(void)
{
	pthread_mutex_init(&rel_lock, NULL);
	cond_init();
	atomic_store(&stepping, 0);
	atomic_store(&rel_starting, 0);
	if (rel_running) {
		rel_running = 0;
		pool__demand_releaser_gone();
		atomic_store(&pool__release_pending, !TSAN_BUILD);
	}
}

/* After pool.c's constructor: fork() runs its prepare handler before the core's, its child after */
__attribute__((constructor(102))) static void release_init(void)
{
	cond_init();
	pthread_atfork(release_fork_prepare, NULL, release_fork_child);
}

/*
 * Unloading (dlclose(), exit()): before pool.c's destructor, the thread is stopped and joined,
 * so that no code of the library runs once it is unmapped. A step in progress ends first (each
 * is bounded, and it waits for no lock but the registry's, held only briefly).
 */
__attribute__((destructor(102))) static void release_fini(void)
{
	pthread_t t;

	pthread_mutex_lock(&rel_lock);
	rel_stop = 1;
	atomic_store(&pool__release_pending, 0);
	if (!rel_running) {
		pthread_mutex_unlock(&rel_lock);
		return;
	}
	t = rel_thread;
	pthread_cond_signal(&rel_cond);
	pthread_mutex_unlock(&rel_lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&rel_lock);
	rel_running = 0;
	pthread_mutex_unlock(&rel_lock);
	pool__demand_releaser_gone();
}
