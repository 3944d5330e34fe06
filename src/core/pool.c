/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool core, the pool heads: creation, merging, layout, destruction and the graveyard of
 * destroyed heads, the public calls of memory return and limits, iteration, run-time debugging
 * options, fork() and unloading (the slow paths and the bulk calls: pool-alloc.c; statistics:
 * pool-stats.c).
 *
 * The map. Each folder of src/ is a layer that calls only down (tests/package/check-layers.py), and
 * each mechanism is told at the top of the file that owns it. From the program down: the
 * inline fast path (include/pool/pool.h), the slow paths (core/pool-alloc.c), the thread caches
 * (tcache/), the shared lists and demand (shared/), the slab tier and the limit (slab/), the OS
 * layer (os/); beside them memory return (core/pool-release.c), debug/, config/, introspect/.
 * Objects move between the tiers as whole magazines: no move reads or writes a free object,
 * but integrity's and backup's fill and check.
 *
 * Locks, in the order they are taken (a lock is never taken while a later one is held):
 *   pool list lock (this file: pool list, creators, slot table, layout, debugging options; the
 *      releaser only tries it) -> registry lock (pool-thread.c) -> the threads' sections
 *      (pool-tcache.c: not a lock, but a quiescer waits for them, so a section takes no lock
 *      above the uaf table's) -> a pool's pass lock (pool-demand.c; slow paths only try it,
 *      outside their sections) -> a pool's slab shard locks (pool-slab.c: taken inside
 *      sections, one at a time) -> the uaf table lock (pool-uaf.c) -> the OS layer's first-call
 *      lock (pool-os.c) -> the head set's lock (pool-headset.c) -> the profile's lock
 *      (pool-profile.c) -> the stacks' lock (pool-stack.c) -> jemalloc's own. The last three
 *      are leaves. No lock is held inside a BUSY window. The pool list lock knows its owner
 *      (pool-lock.h): pool_for_each() holds it while its callback runs, and the callback may
 *      call the library.
 *
 * Invariants (A: POOL_ASSERT() checks it; doc/internals.md, 10, says where each is checked):
 *   - per thread: sum of reserved_objs * cache_cost == reserved - credit <= budget (A);
 *   - per bucket: a head is stored only by its owner, BUSY right before (A); its stack holds
 *     free_objects objects; its empties are at most 16 empty magazines;
 *   - per pool: allocated == used + shared free + slab free when no move is in flight;
 *     allocated == os_allocs - os_releases - lost; used == 0 once every object was freed and
 *     every cache flushed; the limit's count never goes below 0 (A); a slab goes back only
 *     when all its objects are free (A);
 *   - a thread's slots change only inside its sections, or under a quiescer that keeps it out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool-assert.h"
#include "shared/pool-bucket.h"
#include "shared/pool-demand.h"
#include "config/pool-config.h"
#include "debug/pool-debug.h"
#include "debug/pool-guard.h"
#include "core/pool-headset.h"
#include "core/pool-int.h"
#include "core/pool-layout.h"
#include "base/pool-lock.h"
#include "tcache/pool-magazine.h"
#include "os/pool-os.h"
#include "os/pool-region.h"
#include "debug/pool-profile.h"
#include "debug/pool-symbols.h"
#include "os/pool-san.h"
#include "slab/pool-limit.h"
#include "slab/pool-slab.h"
#include "tcache/pool-thread.h"
#include "os/pool-uaf.h"
#include "base/pool-util.h"

struct pool_lock pool__list_lock = POOL_LOCK_INITIALIZER;
struct pool_head *pool__list_head;
static struct pool_head *pool_list_tail;
unsigned int pool__nb_pools;

/* A pool head's alignment: its buckets are aligned on two cache lines. */
#define HEAD_ALIGN _Alignof(struct pool_head)

/*
 * Is `pool` a live pool head? The set of known heads says (pool-headset.c), without reading
 * the memory `pool` points to: NULL, destroyed heads and pointers it does not know are not.
 */
static int live_head(const struct pool_head *pool)
{
	return pool__headset_state(pool) == POOL_HEADSET_LIVE;
}

int pool__live_head(const struct pool_head *pool)
{
	return live_head(pool);
}

/* ------------------------------------------------------------------------------------------ */
/* Creation and destruction                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* Record one more pool_create() call merged into `pool`; 0, or -1 when out of memory. */
static int add_creator(struct pool_head *pool, const char *name, size_t size, size_t align,
                       unsigned int flags, const void *where)
{
	struct pool_creator *u;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	POOL_ASSERT(pool->creators <= pool->creators_cap);
	if (pool->creators == pool->creators_cap) {
		unsigned int cap = pool->creators_cap ? pool->creators_cap * 2 : 4;

		u = pool__os_meta_alloc(cap * sizeof(*u), POOL_DEFAULT_ALIGN);
		if (!u)
			return -1;
		if (pool->creator)
			memcpy(u, pool->creator, pool->creators * sizeof(*u));
		pool__os_meta_free(pool->creator, pool->creators_cap * sizeof(*u), POOL_DEFAULT_ALIGN);
		pool->creator = u;
		pool->creators_cap = cap;
	}
	u = &pool->creator[pool->creators++];
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->size = size;
	u->align = align;
	u->flags = flags;
	u->where = where;
	return 0;
}

/*
 * A merge takes the larger size, but only while the pool has never allocated: the first
 * allocation (open_for_allocation() in pool-alloc.c) and this resize exclude each other through
 * ever_allocated
 * (0 open, 2 resizing, 1 allocated), so no allocation reads a layout being rewritten. Returns 1
 * when the layout grew, 0 when the pool allocated first (it keeps its size).
 */
static int grow_layout(struct pool_head *pool, size_t size, size_t align, unsigned int layout)
{
	int open = 0;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	if (!atomic_compare_exchange_strong_explicit(&pool->ever_allocated, &open, 2,
	                                             memory_order_acquire, memory_order_relaxed))
		return 0;
	pool__layout_compute(pool, size, align, layout);
	pool__slab_geometry(pool);
	atomic_store_explicit(&pool->ever_allocated, 0, memory_order_release);
	return 1;
}

static struct pool_head *find_mergeable(const char *name, size_t size, size_t align,
                                        unsigned int layout)
{
	struct pool_head *p;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (p = pool__list_head; p; p = p->next) {
		if (!(p->ro.flags & POOL_F_SHARED) || p->align != align || p->layout != layout)
			continue;
		if ((POOL__DEBUGGING() & POOL_DBG_NO_MERGE) && strcmp(p->name, name) != 0)
			continue;
		if (p->ro.size == size)
			return p;
		/* under `malloc` an object is as large as its creator asked, and no larger */
		if (pool__sizes_mergeable(p->ro.size, size) && !atomic_load(&p->ever_allocated) &&
		    !(layout & POOL_DBG_MALLOC))
			return p;
	}
	return NULL;
}

/*
 * Tier 2 of the assertions (pool-assert.h), under the pool list lock: the list walked against
 * its links, its tail and its count, and each pool against its cache slot. At the end of every
 * creation and destruction and in pool_gc(NULL): a cost of the number of pools.
 */
static void walk_pool_list(void)
{
	const struct pool_head *p, *prev = NULL;
	unsigned int n = 0;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (p = pool__list_head; p; prev = p, p = p->next, n++) {
		POOL_ASSERT(n < pool__nb_pools && p->prev == prev && p->magic == POOL_HEAD_LIVE);
		POOL_ASSERT(p->creators >= 1 && p->creators <= p->creators_cap);
		POOL_ASSERT(p->ro.index < POOL_MAX_CACHED_POOLS &&
		            (!p->ro.index || pool__slots[p->ro.index] == p));
	}
	POOL_ASSERT(n == pool__nb_pools && prev == pool_list_tail);
}

/* pool_create_aligned() for a call that returns to `where`, its creator's code. */
static struct pool_head *create(const char *name, size_t size, size_t align, unsigned int flags,
                                const void *where)
{
	const struct pool_config *cfg;
	struct pool_head tmp, *pool;
	unsigned int layout, nb;
	size_t head_size;
	int took;

	if (!pool__name_valid(name) || size == 0 || (flags & ~POOL_F_CREATE_MASK) ||
	    (align & (align - 1)) || align > pool__os_page_size()) {
		errno = EINVAL;
		return NULL;
	}
	if (align < POOL_DEFAULT_ALIGN)
		align = POOL_DEFAULT_ALIGN;
	if (!(flags & POOL_F_EXACT)) {
		if (size > POOL_SIZE_MAX) {
			errno = EINVAL;
			return NULL;
		}
		size = pool__round_up(size, sizeof(void *));
	}

	cfg = pool__config_get();
	/* a program sets RLIMIT_AS before it creates its pools: the OS layer's guard reads it */
	pool__os_reread_limit();
	took = pool__lock_enter(&pool__list_lock);
	pool__config_freeze();
	layout = POOL__DEBUGGING() & POOL_DBG_LAYOUT;
	memset(&tmp, 0, sizeof(tmp));
	if (pool__layout_compute(&tmp, size, align, layout) < 0) {
		pool__lock_leave(&pool__list_lock, took);
		errno = EINVAL;
		return NULL;
	}
	if (flags & POOL_F_SHARED) {
		pool = find_mergeable(name, size, align, layout);
		if (pool) {
			if (add_creator(pool, name, size, align, flags, where) < 0) {
				pool__lock_leave(&pool__list_lock, took);
				errno = ENOMEM;
				return NULL;
			}
			if (size > pool->ro.size && !grow_layout(pool, size, align, layout)) {
				/* it allocated meanwhile: this creator gets a pool of its own */
				pool->creators--;
				goto create;
			}
			pool__lock_leave(&pool__list_lock, took);
			return pool;
		}
	}

create:
	nb = cfg->buckets;
	POOL_ASSERT(nb >= 1 && nb <= POOL_BUCKETS_MAX && !(nb & (nb - 1)));
	head_size = sizeof(*pool) + nb * sizeof(struct pool_bucket);
	pool = pool__os_meta_alloc(head_size, HEAD_ALIGN);
	if (!pool) {
		pool__lock_leave(&pool__list_lock, took);
		errno = ENOMEM;
		return NULL;
	}
	pool__layout_compute(pool, size, align, layout);
	pool->ro.flags = flags;
	pool->nbuckets = nb;
	pool->magic = POOL_HEAD_LIVE;
	pool__demand_init(pool, cfg->cluster, cfg->cache_bytes, cfg->decay_ms);
	pool__slab_init(pool);
	pool__slab_geometry(pool);
	snprintf(pool->name, sizeof(pool->name), "%s", name);
	if (add_creator(pool, name, size, align, flags, where) < 0 || pool__headset_add(pool) < 0) {
		pool__os_meta_free(pool->creator, pool->creators_cap * sizeof(*pool->creator),
		                   POOL_DEFAULT_ALIGN);
		pool__demand_fini(pool);
		pool__slab_fini(pool);
		pool__os_meta_free(pool, head_size, HEAD_ALIGN);
		pool__lock_leave(&pool__list_lock, took);
		errno = ENOMEM;
		return NULL;
	}
	/* a slot in every thread's cache array, or none (0) when all are taken or under `malloc` */
	if (!(layout & POOL_DBG_MALLOC))
		pool__magazine_attach(pool);
	pool->prev = pool_list_tail;
	if (pool_list_tail)
		pool_list_tail->next = pool;
	else
		pool__list_head = pool;
	pool_list_tail = pool;
	pool__nb_pools++;
	pool__debug_pool_created(pool);
	if (POOL_ASSERTS >= 2)
		walk_pool_list();
	pool__lock_leave(&pool__list_lock, took);
	return pool;
}

POOL_API struct pool_head *pool_create_aligned(const char *name, size_t size, size_t align,
                                               unsigned int flags)
{
	return create(name, size, align, flags, __builtin_return_address(0));
}

POOL_API struct pool_head *pool_create(const char *name, size_t size, unsigned int flags)
{
	return create(name, size, 0, flags, __builtin_return_address(0));
}

/*
 * The walks of pool_for_each() in progress, innermost first: all of the thread that holds the
 * pool list lock (a callback may walk again). Each visits the pools from the list's head to
 * `last`, its tail when the walk began, so a pool that a callback creates (at the tail) is not
 * visited; `next` is the pool to visit next. A pool that a callback destroys is unlinked by
 * walks_forget() first: a walk whose next pool it was moves on to the one after it, and a walk
 * that was to end at it ends at the pool before it.
 */
struct pool_walk {
	struct pool_head *next;        /* NULL: the walk is over */
	struct pool_head *last;
	struct pool_walk *outer;
};

static struct pool_walk *pool_walks;

/* Pool list lock held: `pool` is about to leave the list. */
static void walks_forget(const struct pool_head *pool)
{
	struct pool_walk *w;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (w = pool_walks; w; w = w->outer) {
		if (w->next == pool)
			w->next = pool == w->last ? NULL : pool->next;
		if (w->last == pool)
			w->last = pool->prev;
	}
}

/*
 * Destroyed pool heads are kept, marked POOL_HEAD_DEAD and still readable, for the last
 * GRAVEYARD_HEADS destructions (under the pool list lock), so that a second pool_destroy() and a
 * pool_alloc()/pool_free() on a destroyed pool are reported instead of corrupting the heap or
 * the pool list. The oldest is freed when the graveyard is full (about 9 KiB a head with 64
 * buckets).
 */
#define GRAVEYARD_HEADS 16u

static struct pool_head *graveyard[GRAVEYARD_HEADS];
static unsigned int graveyard_next;

static size_t head_bytes(const struct pool_head *pool)
{
	return sizeof(*pool) + pool->nbuckets * sizeof(struct pool_bucket);
}

/* Under the pool list lock: keep a destroyed head, freeing the oldest one kept. */
static void bury(struct pool_head *pool)
{
	struct pool_head *old = graveyard[graveyard_next];

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	POOL_ASSERT(pool->magic == POOL_HEAD_DEAD && graveyard_next < GRAVEYARD_HEADS);
	graveyard[graveyard_next] = pool;
	graveyard_next = (graveyard_next + 1) % GRAVEYARD_HEADS;
	if (old) {
		pool__headset_forget(old);
		pool__os_meta_free(old, head_bytes(old), HEAD_ALIGN);
	}
}

/*
 * pool_destroy(): under the pool list lock, the drain (pool-thread.c) keeps the other threads
 * out of their sections and takes back each one's slot of the pool: its magazines go to the
 * shared lists as they are, its empty ones are freed, its entry is closed and its budget
 * credited. Objects still handed out, or a thread still inside a section after the drain's
 * bounded wait (said on stderr): EBUSY, the pool intact. Otherwise the pool is marked dead
 * before any thread may enter a section again (a thread racing the destruction, which is
 * forbidden, finds it dead and its slow path reports it); then the shared lists are flushed down
 * to the slabs, which all go back, and the head is kept dead among the last GRAVEYARD_HEADS.
 */
POOL_API int pool_destroy(struct pool_head *pool)
{
	char name[POOL_NAME_MAX + 1];
	int took, stuck;

	if (!live_head(pool)) {
		errno = EINVAL;
		return -1;
	}
	took = pool__lock_enter(&pool__list_lock);
	if (!live_head(pool)) {
		/* destroyed by another thread meanwhile */
		pool__lock_leave(&pool__list_lock, took);
		errno = EINVAL;
		return -1;
	}
	if (pool->creators > 1) {
		pool->creators--;
		pool__lock_leave(&pool__list_lock, took);
		return 0;
	}
	POOL_ASSERT(pool->creators == 1 && pool__nb_pools >= 1);
	stuck = pool__thread_drain_begin(pool);
	if (stuck || pool__sum_used(pool) != 0) {
		pool__thread_drain_end();
		memcpy(name, pool->name, sizeof(name));
		pool__lock_leave(&pool__list_lock, took);
		/* objects in use are the program's business; a thread stuck there is worth a line */
		if (stuck)
			fprintf(stderr, "libpool: pool_destroy() of pool '%s': EBUSY, a thread stayed "
			        "inside a change of its thread cache through the bounded wait (stuck "
			        "there, or using the pool, which is forbidden); the pool is intact\n",
			        name);
		errno = EBUSY;
		return -1;
	}
	/*
	 * Dead before any thread uses its caches again: a thread that races the destruction (which
	 * is forbidden) finds it so in its next cache section, before it touches the pool's slot,
	 * and its slow path reports the destroyed pool (check_transfer.c).
	 */
	atomic_store_explicit((_Atomic uint64_t *)&pool->magic, POOL_HEAD_DEAD,
	                      memory_order_release);
	pool__thread_drain_end();
	pool__demand_flush(pool, 0);
	pool__prof_pool_gone(pool);
	pool__debug_pool_destroyed(pool);
	walks_forget(pool);
	if (pool->prev)
		pool->prev->next = pool->next;
	else
		pool__list_head = pool->next;
	if (pool->next)
		pool->next->prev = pool->prev;
	else
		pool_list_tail = pool->prev;
	pool__magazine_detach(pool);
	pool__nb_pools--;
	/* the fast path of a late caller finds slot 0, always empty, and takes the slow path */
	pool->ro.index = 0;
	pool->ro.cache_off = 0;
	pool->prev = pool->next = NULL;
	pool__os_meta_free(pool->creator, pool->creators_cap * sizeof(*pool->creator),
	                   POOL_DEFAULT_ALIGN);
	pool->creator = NULL;
	pool->creators = pool->creators_cap = 0;
	pool__demand_fini(pool);
	pool__slab_fini(pool);
	pool__headset_kill(pool);
	bury(pool);
	if (POOL_ASSERTS >= 2)
		walk_pool_list();
	pool__lock_leave(&pool__list_lock, took);
	return 0;
}

POOL_API struct pool_head *pool__declare_create(const char *name, size_t size)
{
	struct pool_head *pool = create(name, size, 0, POOL_F_SHARED, __builtin_return_address(0));

	if (!pool) {
		fprintf(stderr, "libpool: POOL_DECLARE(%s, %zu): %s\n", name ? name : "(null)",
		        size, strerror(errno));
		exit(1);
	}
	return pool;
}

/*
 * A POOL_DECLARE pool at exit: other threads may still use it (detached workers run until the
 * process is gone, and exit() does not stop them), so destroying it here would pull the head
 * from under them (a report of a destroyed pool in use, or a crash: 8 exits in 10 in the issue,
 * 6 to 11 in 50 in tests/core/check_exit.c). Only the exiting thread's caches are ours to touch; the
 * rest goes with the process.
 */
POOL_API void pool__declare_destroy(struct pool_head *pool)
{
	if (pool)
		pool_thread_flush();
}

/* ------------------------------------------------------------------------------------------ */
/* Memory return                                                                              */
/* ------------------------------------------------------------------------------------------ */

POOL_API void pool_flush(struct pool_head *pool)
{
	if (live_head(pool)) {
		/*
		 * Under the pass lock, as the release passes: fork() takes it, so no flush is
		 * between a bucket counting its objects out and their slabs taking them back when
		 * the process is copied (the child would have lost them uncounted).
		 */
		pool__lock(&pool->demand.pass_lock);
		pool__demand_flush(pool, atomic_load_explicit(&pool->reserve, memory_order_relaxed));
		pool__unlock(&pool->demand.pass_lock);
		pool__slab_trim(pool);
		pool__slab_purge(pool);
	}
}

POOL_API void pool_gc(struct pool_head *pool)
{
	struct pool_head *p;

	if (pool) {
		if (live_head(pool)) {
			pool__demand_gc(pool);
			pool__slab_trim(pool);
			pool__slab_purge(pool);
		}
	} else {
		int took = pool__lock_enter(&pool__list_lock);

		if (POOL_ASSERTS >= 2)
			walk_pool_list();
		for (p = pool__list_head; p; p = p->next) {
			pool__demand_gc(p);
			pool__slab_trim(p);
			pool__slab_purge(p);
		}
		pool__lock_leave(&pool__list_lock, took);
		/* the profile's freed slots kept mapped for the next samples */
		pool__region_trim();
	}
	pool__os_trim();
}

POOL_API void pool_trim(void)
{
	pool_gc(NULL);
}

void pool__trim_os_layer(void)
{
	pool__os_trim();
}

/* ------------------------------------------------------------------------------------------ */
/* Limits, statistics, debugging                                                              */
/* ------------------------------------------------------------------------------------------ */

POOL_API int pool_set_limit(struct pool_head *pool, size_t max_objects)
{
	if (!live_head(pool)) {
		errno = EINVAL;
		return -1;
	}
	pool__limit_set(pool, max_objects);
	return 0;
}

POOL_API int pool_set_reserve(struct pool_head *pool, size_t objects)
{
	if (!live_head(pool)) {
		errno = EINVAL;
		return -1;
	}
	/* read by each window's count and each flush, under the pass lock: the next one obeys */
	atomic_store_explicit(&pool->reserve, objects, memory_order_relaxed);
	return 0;
}

POOL_API const char *pool_name(const struct pool_head *pool)
{
	return live_head(pool) ? pool->name : NULL;
}

POOL_API size_t pool_object_size(const struct pool_head *pool)
{
	return live_head(pool) ? pool->ro.size : 0;
}

POOL_API void pool_for_each(int (*fn)(struct pool_head *pool, void *arg), void *arg)
{
	struct pool_walk w;
	struct pool_head *p;
	int took;

	if (!fn)
		return;
	took = pool__lock_enter(&pool__list_lock);
	w.next = pool__list_head;
	w.last = pool_list_tail;
	w.outer = pool_walks;
	pool_walks = &w;
	while ((p = w.next) != NULL) {
		w.next = p == w.last ? NULL : p->next;
		if (fn(p, arg))
			break;
	}
	pool_walks = w.outer;
	pool__lock_leave(&pool__list_lock, took);
}

POOL_API int pool_parse_debugging(const char *str, char **err)
{
	return pool__parse_debugging(str, err, stdout, 0);
}

int pool__parse_debugging(const char *str, char **err, FILE *help_out, int runtime_only)
{
	struct pool_debug_settings cur, next;
	int help = 0, took;

	took = pool__lock_enter(&pool__list_lock);
	pool__debug_current(&cur);
	if (pool__debug_parse(str, &cur, pool__nb_pools > 0, runtime_only, &next, &help,
	                      err) < 0) {
		pool__lock_leave(&pool__list_lock, took);
		return -1;
	}
	if (!help) {
		pool__debug_apply(&next);
		/* the fast path tests no flag: the threads' views of their caches go instead */
		if ((next.flags & POOL_DBG_SLOW) && !(cur.flags & POOL_DBG_SLOW))
			pool__thread_kick();
	}
	pool__lock_leave(&pool__list_lock, took);
	/* a profile stopped: what its views kept goes (not under the list lock: a dlclose()) */
	if (!help && took && (cur.flags & POOL_DBG_PROFILE) && !(next.flags & POOL_DBG_PROFILE))
		pool__sym_release();
	if (help) {
		pool_debugging_help(help_out);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* fork(): the child must be able to allocate                                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * Before fork() we take the locks in their order (pool list, registry, every pool's pass and
 * slab locks, the uaf table, the OS layer's, the head set's), keep every thread out of its cache
 * sections (pool-tcache.c) and own every bucket head, waiting a bounded time for each
 * (FORK_BUSY_TRIES yields: a head held longer is a thread's that died inside its BUSY window),
 * so that no lock is held, no cache is half changed and no head is BUSY because of a thread
 * that will not exist in the child. After it, the parent gives back the heads it owns; the
 * child also resets the others, counting what they held as lost, and takes back the slots of
 * the threads that did not follow it (doc/internals.md, 9.4). A fork() from a pool_for_each()
 * callback finds the pool list lock held by its own thread: it goes on under that hold
 * (fork_took_list 0), and the child, whose only thread is that one, is still in the callback
 * and holds it too.
 */
static int fork_took_list;

static void fork_prepare(void)
{
	struct pool_head *p;

	fork_took_list = pool__lock_enter(&pool__list_lock);
	pool__thread_fork_prepare();
	for (p = pool__list_head; p; p = p->next)
		pool__lock(&p->demand.pass_lock);
	for (p = pool__list_head; p; p = p->next)
		pool__slab_fork_prepare(p);
	pool__uaf_fork_prepare();
	pool__os_fork_prepare();
	pool__headset_fork_prepare();
	pool__prof_fork_prepare();
	pool__region_fork_prepare();
	pool__guard_fork_prepare();
	for (p = pool__list_head; p; p = p->next)
		pool__bucket_fork_prepare(p);
}

/* The parent and the child alike, once the heads are settled: the locks of the middle. */
static void fork_unlock_middle(void)
{
	struct pool_head *p;

	pool__guard_fork_after();
	pool__region_fork_after();
	pool__prof_fork_after();
	pool__headset_fork_after();
	pool__os_fork_after();
	pool__uaf_fork_after();
	for (p = pool__list_head; p; p = p->next)
		pool__slab_fork_after(p);
	for (p = pool__list_head; p; p = p->next)
		pool__unlock(&p->demand.pass_lock);
}

static void fork_parent(void)
{
	struct pool_head *p;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (p = pool__list_head; p; p = p->next)
		pool__bucket_fork_parent(p);
	fork_unlock_middle();
	pool__thread_fork_parent();
	pool__lock_leave(&pool__list_lock, fork_took_list);
}

static void fork_child(void)
{
	struct pool_head *p;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (p = pool__list_head; p; p = p->next)
		pool__bucket_fork_child(p);
	pool__sym_fork_child();     /* its own lock, which fork_prepare() does not take */
	fork_unlock_middle();
	pool__thread_fork_child();
	/* the forking thread took the list lock in fork_prepare(): it owns it in the child too */
	pool__lock_leave(&pool__list_lock, fork_took_list);
}

/*
 * Unloading (dlclose(), and the end of the process): what the library keeps for itself goes, so
 * that a program that loads and unloads it again and again (a plugin host) leaks neither pthread
 * keys nor memory: the calling thread's caches and the thread-exit key (pool-thread.c), and the
 * destroyed heads kept for reports (the releaser thread is joined before, pool-release.c).
 * Pools still live are the program's: pool_destroy() them before dlclose(). The list lock is
 * only tried: at exit, another thread may hold it.
 */
__attribute__((destructor(101))) static void pool_core_fini(void)
{
	unsigned int i;

	if (pool__lock_try(&pool__list_lock) == 0) {
		for (i = 0; i < GRAVEYARD_HEADS; i++) {
			if (graveyard[i]) {
				pool__headset_forget(graveyard[i]);
				pool__os_meta_free(graveyard[i], head_bytes(graveyard[i]), HEAD_ALIGN);
			}
			graveyard[i] = NULL;
		}
		pool__unlock(&pool__list_lock);
	}
	pool__thread_unload();
}

/*
 * Start-up: fork handlers, then the debugging options (POOL_DEBUG), before any pool exists, and
 * a word on stderr for each bad value of the configuration's variables.
 */
__attribute__((constructor(101))) static void pool_core_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	pool__debug_init();
	pool__config_check_env();
}
