/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's sampler: what each thread samples and how it sees the allocations and frees
 * that the inline fast path serves (the essay at the top of pool-sample.c). Private header of
 * the thread-cache tier: its callers are the tier's slow paths (pool-tcache.c), the thread
 * registry (pool-thread.c) and the slow paths of pool-alloc.c.
 */
#ifndef POOL_SRC_POOL_SAMPLE_H
#define POOL_SRC_POOL_SAMPLE_H

#include <stdint.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "tcache/pool-magazine.h"
#include "debug/pool-profile.h"

/*
 * One (thread, pool) slot as the sampler sees it: its countdown, what every slow path of the
 * slot reads and writes (two slots to a cache line), and its event, what only events and
 * candidates use.
 */
struct sample_countdown {
	int64_t left;                   /* allocations until the next sample (<= 0: due) */
	void **mark;                    /* the entry's top when the sampler last left the slot */
	void **mark_base;               /* the array of the magazine loaded then (NULL: none);
	                                   compared with the loaded one's, never read */
	unsigned int gen;               /* the profile the countdown was drawn for */
	uint8_t quiet;                  /* no candidate, no retry, no narrow window, a magazine
	                                   marked: pool__sample_after() may take its short way */
	uint8_t narrowed;               /* the entry shows the fast path a narrower window */
	uint8_t retry;                  /* the next allocation is sampled: the last candidate
	                                   was freed at once */
	uint8_t hunt;                   /* this event still looks for a candidate that lives */
};

struct sample_event {
	const struct pool_head *pool;   /* the pool of the slot the state was made for (a slot
	                                   reused by another pool starts afresh) */
	void *watch;                    /* the candidate: sampled, until the slot's next free */
	uint32_t watch_stack;           /* its call stack (pool-stack.h; 0: not stored) */
	uint8_t watch_named;            /* pool__sample_handout() took its stack */
	uint64_t event_ns;              /* CLOCK_MONOTONIC time of the last event: the candidates
	                                   of an event are born then, give or take its hunt */
	uint64_t hunt_until_ns;         /* tries go on until then (see HUNT_SHARE_PERMILLE) */
};

struct pool_sampler {
	struct sample_countdown countdown[POOL_MAX_CACHED_POOLS];
	struct sample_event event[POOL_MAX_CACHED_POOLS];
	uint64_t rng;                   /* pool__prof_interval()'s generator */
	void *due;                      /* what this slow path hands out is to be sampled */
	int due_now;                    /* ... and remembered at once (no fast path: every free
	                                   is seen) rather than watched as a candidate */
	unsigned int narrowed;          /* slots with narrowed = 1 */
};

/*
 * Allocations and frees the sampler has to know of, inside the section of a slow path of the
 * calling thread on slot `s`, after the slot's magazines changed: `delta` objects the slow
 * path took from the loaded magazine (negative: handed out) or gave it (positive: freed into
 * it), `obj` the one handed out or freed (NULL when none or several). It charges the
 * countdown with what the fast path handed out, net, since the sampler last looked, decides
 * whether `obj` is to be sampled, and gives the fast path the window it may use until the next
 * sample is due. With the profile off, it gives the slot its whole window back and, once no
 * slot is narrowed, frees the thread's sampler. pool__sample_hook() is its inline front.
 */
void pool__sample_after(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg,
                        void *obj, int delta);

/*
 * The front of pool__sample_after(): one predictable branch when the profile never ran on this
 * thread; with the profile on, the common case in a few instructions, inline: no candidate
 * waiting, no window narrowed, and no sample due soon (for objects much smaller than the rate,
 * nearly always). A free then only notes a new magazine (the countdown is charged at the next
 * allocation that comes to a slow path, with what left the cache net since the last one); an
 * allocation charges the countdown and marks where the fast path resumes.
 */
POOL_INLINE void pool__sample_hook(struct pool_thread_caches *ctx, unsigned int s,
                              unsigned int dbg, void *obj, int delta)
{
	struct pool_sampler *sampler = ctx->sampler;
	struct sample_countdown *cd;
	void **objs, **top;
	int64_t left, popped;

	if (POOL_LIKELY(!((uintptr_t)sampler | (dbg & POOL_DBG_PROFILE))))
		return;
	if (POOL_UNLIKELY(!sampler ||
	                  (dbg & (POOL_DBG_PROFILE | POOL_DBG_SLOW)) != POOL_DBG_PROFILE))
		goto slow;
	cd = &sampler->countdown[s];
	objs = pool__tc_objs(ctx, s);
	if (POOL_UNLIKELY(!cd->quiet || cd->gen != pool__prof_gen() || !objs))
		goto slow;
	top = ctx->tc[s].top;
	if (delta > 0) {
		if (cd->mark_base != objs) {
			/* a rotation: the magazine the fast path left went out full */
			cd->mark = top;
			cd->mark_base = objs;
		}
		return;
	}
	/* an object sampled before, handed out again (its free went unseen): the slow way */
	if (obj && pool__prof_maybe(obj))
		goto slow;
	/* net pops since the mark; a reload: the fast path had emptied the magazine it left */
	popped = cd->mark_base == objs ? cd->mark - top + delta : cd->mark - cd->mark_base;
	left = cd->left + delta - (popped > 0 ? popped : 0);
	/* due, or so close that the fast path needs a narrower window: the slow way */
	if (POOL_UNLIKELY(left <= top - objs))
		goto slow;
	cd->left = left;
	cd->mark = top;
	cd->mark_base = objs;
	return;
slow:
	pool__sample_after(ctx, s, dbg, obj, delta);
}

/*
 * A slow path of the calling thread (`self`) hands `obj` of `pool` out to `caller`, with the
 * profile on; `cached`: it came through the thread's cache, whose sampler decided
 * (pool__sample_after(), which also credited an earlier sample of the same address, freed
 * unseen since it is handed out again), and this is called only when pool__sample_due() says
 * so; else the sampler credits and draws here. Records `obj`, or makes it the candidate it
 * watches, when it is to be sampled. Outside any section.
 */
void pool__sample_handout(struct pool_head *pool, struct pool_thread *self, void *obj,
                          const void *caller, int cached);

/* Is `obj`, which a slow path of the calling thread hands out from its cache, to be sampled? */
static inline int pool__sample_due(const struct pool_thread *self, const void *obj)
{
	return self->caches && self->caches->sampler && self->caches->sampler->due == obj;
}

/*
 * A thread's caches go (exit, the fork() child's other threads): its sampler with them, its
 * candidates remembered as samples (no free of theirs came). No section: nothing else uses
 * them any more.
 */
void pool__sample_release(struct pool_thread_caches *ctx);

/*
 * The calling thread's candidates (sampled objects waiting for their slot's next free) become
 * samples the profile remembers: the audit does it before a view, so that a thread's own
 * candidates are counted. The candidates of other threads stay theirs: at most one per pool
 * and thread is missing from a view.
 */
void pool__sample_keep_candidates(struct pool_thread_caches *ctx);

/*
 * The audit: credit every sampled object that lies, free, in the caches `c` of a thread kept
 * out of its sections (or of the calling thread). Reads the pointers of the magazines only,
 * never an object; those of the loaded magazine racily, while its owner's fast path may move
 * them (a pointer caught in flight is one free credited early or late).
 */
void pool__sample_audit(struct pool_thread_caches *c);

#endif
