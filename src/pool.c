/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool core, the pool heads: creation, merging, layout, destruction, the slow paths of the
 * inline fast path, the bulk calls, limits, run-time debugging options, fork() (statistics:
 * pool-stats.c). The design essay of the whole core opens this file; doc/internals.md tells it
 * at length.
 *
 * How it works
 *
 * 1. A pool hands out objects of one size. Each thread keeps, per pool, a LIFO list of free
 *    objects (its thread cache: struct pool_tcache, an entry of the array that the 8-byte
 *    initial-exec TLS pointer pool__tls_cache points to). pool_alloc(), pool_zalloc() and
 *    pool_free() are inline in pool.h: a load of the debugging word, the TLS pointer plus the
 *    pool's offset, a pop or a push and a count update (19 instructions per alloc+free pair
 *    under callgrind, net of the loop). No atomic, no lock, no call. Everything else happens in
 *    the slow paths below, which a thread also takes until it has registered (its pointer then
 *    points at entries that are always empty).
 *
 * 2. The cache budget (pool-tcache.c). A thread may cache at most `budget` bytes over all pools
 *    (the topology's L2 share, pool_configure()). Rather than counting bytes on every push and
 *    pop, each (thread, pool) cache holds a reservation `limit` in objects, and the thread keeps
 *    sum(limit * cost) == reserved <= budget, where an object's cost is its stride (under uaf,
 *    its pages: pool__uaf_object_cost()). pool_free() compares only the room left in the
 *    reservation with 0; at 0 the slow path grows the reservation from the unreserved part of
 *    the budget, takes back reservations other pools do not use, and, when that is not enough,
 *    evicts. A thread destroying a pool drains the other threads' caches of it and cannot touch
 *    their `reserved`: it credits them (ctx->credit, an atomic), and each owner takes its credit
 *    back on its next slow path.
 *
 * 3. Eviction is approximate LRU: pools are chosen by a CLOCK (second chance, Corbato 1968) over
 *    this thread's caches, whose reference bit pool_free() sets; within the chosen pool, half of
 *    its objects go, taken from the top of its LIFO list, so that the cut walks only what leaves
 *    (tcmalloc's thread caches release from the top too), and the walk builds the clusters as it
 *    unlinks. A whole eviction is one push. The bulk calls keep a small array of pointers per
 *    (thread, pool), the bulk magazine, which they fill and empty with a copy (as DPDK's mempool
 *    cache does); its objects count in the same reservation, and every other path first moves
 *    them onto the list.
 *
 * 4. Shared free lists (pool-bucket.c). Each pool has N buckets (a power of two, two cache lines
 *    each). A bucket head is NULL, a stack of clusters, or BUSY. A cluster is up to 16 objects
 *    chained by their first word; its first object links the next cluster and carries its count
 *    in the 4 low bits of that link. Protocol:
 *      own:  read the head; if BUSY, go to the next bucket; else swap BUSY in with one atomic
 *            exchange. A BUSY back means another thread owns it: go on (BUSY over BUSY changed
 *            nothing). Anything else: this thread owns the bucket until it stores a new head.
 *      pop:  own; a NULL head is stored back; else read the top cluster's down link and count
 *            (a refill: up to 4 clusters' down links, cutting the last one's), count the move
 *            once, store the link (release). The clusters taken are chained into one list
 *            after the window, so that a thread that only allocates pays one exchange per
 *            4 clusters.
 *      push: own; link the bottom cluster of the stack being pushed above the head, count the
 *            move, store the top (release). A push tries 2N times, then gives the objects to
 *            the OS layer.
 *    A thread starts its pops and pushes at its own bucket (its registry id modulo N): a thread
 *    that frees and reallocates finds its own clusters there first, and threads spread over the
 *    buckets, so that few threads write one bucket's lines.
 *    Why it is safe: only an owner reads a cluster's down link, and while the head is BUSY nobody
 *    else can pop that cluster and free it (the race HAProxy met with musl, GH #1275); only an
 *    owner stores a head, so it cannot go A->B->A under anybody (no ABA, and no CAS at all).
 *    Every loop over the heads is bounded; the BUSY window holds no lock and calls nothing that
 *    can block, and walks at most one cluster's objects (a release that splits one). The Promela
 *    model tests/model/busy.pml checks this for 3 threads and 2 buckets. Two waits are not
 *    counted but cannot last: a pool's first allocation waits out a merge that is rewriting its
 *    layout (a few instructions under the pool list lock), and the limit's compare-and-swap
 *    retries only when another thread's succeeded (lock-free).
 *
 * 5. Counters move with clusters. allocated (objects from the OS layer), used (objects handed
 *    out or in thread caches), free objects and the traffic counters of a bucket are written
 *    only by the owner of its head, with plain relaxed stores: a cluster moved costs its head's
 *    exchange and no other atomic read-modify-write, and the counts land on the line that
 *    exchange took. Totals are sums over buckets (stats and limits only), exact when the process
 *    is quiet. A move that owns no head (an object from the OS layer) owns one bucket to count,
 *    or, when all are BUSY, counts in the pool's spill counters with fetch_add. failed is
 *    counted in the bucket of the thread. The fast path counts nothing: a cached object is used.
 *
 * 6. Memory return over time. Each bucket keeps the low-water mark of its free objects during
 *    the current demand window (decay_ms, 10 s by default after jemalloc's dirty_decay_ms).
 *    When a window ends, a slow path that notices (one in 16 of a thread's, through a coarse
 *    clock) runs the release pass under the pool's pass lock (trylock): what stayed free through
 *    the whole window was not needed and goes back to the OS layer, beyond a floor of min(one
 *    cluster, 64 KiB) of objects, and every bucket's marks rotate; an object goes back between
 *    decay_ms and twice that after it was last needed. needed_avg is what the pool held minus
 *    what stayed free. pool_gc() ends the window at once, so a second call after load drops
 *    gives a spike back. Eviction never goes to the OS layer: a steady load does not churn
 *    through it.
 *
 * 7. Threads (pool-tcache.c). A thread registers on its first slow path: an id from the
 *    registry (POOL_MAX_THREADS slots, the lowest free one), its caches (allocated, so that the
 *    library's TLS block stays under 64 bytes and it can be dlopen()ed), and a pthread key whose
 *    destructor flushes them at exit. A thread without an id or without memory for its caches
 *    works without a cache, and so does one past its exit flush.
 *
 * 8. Debugging is a leaf under the core (pool-debug.c, pool-report.c): the slow paths call its
 *    checks; pool_parse_debugging() below applies what its pure parser returns, under the pool
 *    list lock. A switch is safe at any moment: each thread's caches carry the epoch at which
 *    they were last filled with the integrity pattern, and only such caches are checked.
 *
 * Locks, in the order they are taken (a lock is never taken while a later one is held):
 *   pool list lock (pool.c: pool list, creators, slot table, layout, debugging options)
 *   -> registry lock (pool-tcache.c: registry, thread ids)
 *   -> a thread's caches lock (its other slots while it evicts; others while they drain them)
 *   -> a pool's pass lock (pool-bucket.c; slow paths only try it)
 *   -> the uaf table lock (pool-uaf.c)
 *   -> the OS layer's first-call lock (pool-os.c: a thread's first call into jemalloc, which
 *      pool_create() may make under the pool list lock)
 *   -> the head set's lock (pool-headset.c: a leaf, nothing is locked or allocated under it)
 *   and, last, jemalloc's own. No lock is held inside a BUSY window. The pool list lock knows
 *   its owner (pool-lock.h), and every function that takes it goes on under its caller's hold:
 *   pool_for_each() holds it while its callback runs, and the callback may call the library.
 *
 * fork(): before it, the forking thread takes every lock above in that order and owns every
 * bucket head, waiting a bounded time for each (FORK_BUSY_TRIES yields): a head held longer
 * belongs to a thread that died inside its BUSY window (asynchronous cancellation, a longjmp out
 * of a signal handler: the window is not async-cancel-safe, like most of libc). After it, the
 * parent gives the heads it owns back and leaves the others to their owners; the child gives
 * back the ones it owns, resets the others to empty and counts what they held as lost
 * (struct pool_stats.lost), then takes back the caches of the threads that did not follow it.
 *
 * Invariants. POOL_ASSERT() checks those marked (A) in `make DEBUG=1` and the sanitizer builds;
 * the tests check the sums (check_shared.c), the Promela model the protocol.
 *   - per thread: sum over pools of limit * cache_cost == reserved - credit <= budget (A);
 *     count <= limit (A);
 *   - per bucket: a head is stored only by its owner, and is BUSY right before that store (A);
 *     free_objects >= what a pop or a release takes (A); objects in its stack == free_objects;
 *   - per pool: sum(allocated) == sum(used) + sum(free_objects) when no move is in flight;
 *     allocated == os_allocs - os_releases - lost; used == 0 once every object was freed and
 *     every cache flushed;
 *   - a thread cache is written only by its thread, except under its lock by pool_destroy()
 *     (which the caller guarantees no other thread is using) and in the child after fork().
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-assert.h"
#include "pool-bucket.h"
#include "pool-config.h"
#include "pool-debug.h"
#include "pool-headset.h"
#include "pool-int.h"
#include "pool-lock.h"
#include "pool-magazine.h"
#include "pool-os.h"
#include "pool-report.h"
#include "pool-san.h"
#include "pool-thread.h"
#include "pool-uaf.h"
#include "pool-util.h"

struct pool_lock pool__list_lock = POOL_LOCK_INITIALIZER;
struct pool_head *pool__list_head;
static struct pool_head *pool_list_tail;
unsigned int pool__nb_pools;

/* A pool head's alignment: its buckets are aligned on two cache lines. */
#define HEAD_ALIGN _Alignof(struct pool_head)

/* Sizes within 1% or this many bytes of each other may merge (see pool_create_aligned()). */
#define MERGE_SLACK_BYTES 16u


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

/*
 * The first word of what may be a pool head, read without faulting (0 if unreadable, or where
 * process_vm_readv(2) is refused): only for the report of a pointer the set does not know.
 */
static uint64_t head_magic(const struct pool_head *pool)
{
	uint64_t magic = 0;

	if (pool__os_safe_read(&magic, &pool->magic, sizeof(magic)) < 0)
		return 0;
	return magic;
}

void pool__bad_head(const struct pool_head *pool, const void *obj, const void *caller)
{
	enum pool_headset_state known = pool__headset_state(pool);
	struct pool_report r;

	memset(&r, 0, sizeof(r));
	r.caller = caller;
	r.obj = obj;
	/* a head the set still calls live, which the caller found not live, is being destroyed */
	if (known == POOL_HEADSET_DEAD || known == POOL_HEADSET_LIVE ||
	    (known == POOL_HEADSET_UNKNOWN && head_magic(pool) == POOL_HEAD_DEAD)) {
		r.what = "use of a destroyed pool (pool_destroy() was called on it)";
		r.pool = pool;
	} else {
		r.what = "not a pool head (a NULL, freed or corrupted pool pointer)";
	}
	pool__report(&r);
}




/* ------------------------------------------------------------------------------------------ */
/* Creation and destruction                                                                   */
/* ------------------------------------------------------------------------------------------ */

static int valid_name(const char *name)
{
	size_t len;
	const char *p;

	if (!name)
		return 0;
	len = strlen(name);
	if (len == 0 || len > POOL_NAME_MAX)
		return 0;
	for (p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/*
 * Object layout for `size` usable bytes with the layout debugging flags `layout`:
 *   [object: max(size, 16)][tag: 8 bytes at offset max(size, 16)][caller: 8][backup: 8 + size]
 * rounded up to the alignment. The tag follows the object's last byte, so that an overflow of a
 * single byte reaches it (objects under 16 bytes keep it past their two link words).
 * Returns 0, or -1 when the layout exceeds POOL_SIZE_MAX.
 */
static int compute_layout(struct pool_head *pool, size_t size, size_t align, unsigned int layout)
{
	size_t off = size < POOL_MIN_OBJECT ? POOL_MIN_OBJECT : size;
	/* under uaf the object ends at a guard page: its caller lives in the uaf table instead */
	unsigned int extras = (layout & POOL_DBG_UAF) ? 0 : layout;

	POOL_ASSERT(align >= POOL_DEFAULT_ALIGN && !(align & (align - 1)));
	POOL_ASSERT(!(layout & ~POOL_DBG_LAYOUT));
	if (size > POOL_SIZE_MAX)
		return -1;
	pool->tag_off = pool->caller_off = pool->backup_off = 0;
	if (extras & POOL_DBG_TAG) {
		pool->tag_off = off;
		off += sizeof(uint64_t);
	}
	if (extras & POOL_DBG_CALLER) {
		pool->caller_off = pool__round_up(off, sizeof(void *));
		off = pool->caller_off + sizeof(void *);
	}
	if (extras & POOL_DBG_BACKUP) {
		pool->backup_off = pool__round_up(off, sizeof(uint64_t));
		off = pool->backup_off + sizeof(uint64_t) + size;
	}
	off = pool__round_up(off, align);
	if (off > POOL_SIZE_MAX)
		return -1;
	pool->ro.size = size;
	pool->stride = off;
	/*
	 * ASan builds tag every object: without `tag`, the tag lies past the stride, hidden from the
	 * layout and the statistics. It is the object's redzone (poisoned while the object is out:
	 * an overflow is reported at the write) and lets pool_free() check that a pointer is an
	 * object of that pool, which ASan cannot tell of memory jemalloc hands out.
	 */
	pool->os_size = off;
	if (!(extras & POOL_DBG_TAG) && !(layout & POOL_DBG_UAF) && pool__san_asan_build()) {
		pool->tag_off = off;
		pool->os_size = pool__round_up(off + sizeof(uint64_t), align);
	}
	/* a uaf object costs its pages, not its stride: caches must not pin thousands of them */
	pool->cache_cost = (layout & POOL_DBG_UAF) ? pool__uaf_object_cost(size, align) : off;
	pool->align = align;
	pool->layout = layout;
	POOL_ASSERT(pool->stride >= size && pool->stride % align == 0 &&
	            pool->os_size >= pool->stride && pool->cache_cost >= pool->stride);
	return 0;
}

static int sizes_mergeable(size_t a, size_t b)
{
	size_t big = a > b ? a : b, small = a > b ? b : a;
	size_t tol = big / 100 > MERGE_SLACK_BYTES ? big / 100 : MERGE_SLACK_BYTES;

	return big - small <= tol;
}

/* Record one more pool_create() call merged into `pool`; 0, or -1 when out of memory. */
static int add_creator(struct pool_head *pool, const char *name, size_t size, size_t align,
                       unsigned int flags)
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
	compute_layout(pool, size, align, layout);
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
		if (sizes_mergeable(p->ro.size, size) && !atomic_load(&p->ever_allocated))
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

POOL_API struct pool_head *pool_create_aligned(const char *name, size_t size, size_t align,
                                               unsigned int flags)
{
	const struct pool_config *cfg;
	struct pool_head tmp, *pool;
	unsigned int layout, nb;
	size_t head_size;
	int took;

	if (!valid_name(name) || size == 0 || (flags & ~POOL_F_CREATE_MASK) ||
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
	if (compute_layout(&tmp, size, align, layout) < 0) {
		pool__lock_leave(&pool__list_lock, took);
		errno = EINVAL;
		return NULL;
	}
	if (flags & POOL_F_SHARED) {
		pool = find_mergeable(name, size, align, layout);
		if (pool) {
			if (add_creator(pool, name, size, align, flags) < 0) {
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
	compute_layout(pool, size, align, layout);
	pool->ro.flags = flags;
	pool->nbuckets = nb;
	pool->magic = POOL_HEAD_LIVE;
	pool__bucket_init(pool, cfg->cluster, cfg->cache_bytes, cfg->decay_ms);
	snprintf(pool->name, sizeof(pool->name), "%s", name);
	if (add_creator(pool, name, size, align, flags) < 0 || pool__headset_add(pool) < 0) {
		pool__os_meta_free(pool->creator, pool->creators_cap * sizeof(*pool->creator),
		                   POOL_DEFAULT_ALIGN);
		pool__bucket_fini(pool);
		pool__os_meta_free(pool, head_size, HEAD_ALIGN);
		pool__lock_leave(&pool__list_lock, took);
		errno = ENOMEM;
		return NULL;
	}
	/* a slot in every thread's cache array, or none (0) when all are taken */
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

POOL_API struct pool_head *pool_create(const char *name, size_t size, unsigned int flags)
{
	return pool_create_aligned(name, size, 0, flags);
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

POOL_API int pool_destroy(struct pool_head *pool)
{
	int took;

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
	pool__thread_drain_begin(pool);
	if (pool__sum_used(pool) != 0) {
		pool__thread_drain_end();
		pool__lock_leave(&pool__list_lock, took);
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
	pool__bucket_flush(pool);
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
	pool__bucket_fini(pool);
	pool__headset_kill(pool);
	bury(pool);
	if (POOL_ASSERTS >= 2)
		walk_pool_list();
	pool__lock_leave(&pool__list_lock, took);
	return 0;
}

POOL_API struct pool_head *pool__declare_create(const char *name, size_t size)
{
	struct pool_head *pool = pool_create(name, size, POOL_F_SHARED);

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
 * 6 to 11 in 50 in tests/check_exit.c). Only the exiting thread's caches are ours to touch; the
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
	if (live_head(pool))
		pool__bucket_flush(pool);
}

POOL_API void pool_gc(struct pool_head *pool)
{
	struct pool_head *p;

	if (pool) {
		if (live_head(pool))
			pool__bucket_gc(pool);
	} else {
		int took = pool__lock_enter(&pool__list_lock);

		if (POOL_ASSERTS >= 2)
			walk_pool_list();
		for (p = pool__list_head; p; p = p->next)
			pool__bucket_gc(p);
		pool__lock_leave(&pool__list_lock, took);
	}
	pool__os_trim();
}

POOL_API void pool_trim(void)
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
	pool__bucket_set_limit(pool, max_objects);
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
	if (!help)
		pool__debug_apply(&next);
	pool__lock_leave(&pool__list_lock, took);
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
 * Before fork() we take the locks in their order (pool list, registry, every pool's pass lock,
 * the uaf table, the OS layer's, the head set's), keeps every thread out of its cache sections
 * (pool-tcache.c) and owns every bucket head, waiting a bounded time for each (see the essay),
 * so that no lock is held, no cache is half changed and no head is BUSY because of a thread
 * that will not exist in the child, which takes back the caches of the threads that did not
 * follow it. A fork() from a pool_for_each() callback finds the pool list lock held by its own
 * thread: it goes on under that hold (fork_took_list 0), and the child, whose only thread is
 * that one, is still in the callback and holds it too.
 */
static int fork_took_list;

static void fork_prepare(void)
{
	struct pool_head *p;

	fork_took_list = pool__lock_enter(&pool__list_lock);
	pool__thread_fork_prepare();
	for (p = pool__list_head; p; p = p->next)
		pool__lock(&p->demand.pass_lock);
	pool__uaf_fork_prepare();
	pool__os_fork_prepare();
	pool__headset_fork_prepare();
	for (p = pool__list_head; p; p = p->next)
		pool__bucket_fork_prepare(p);
}

static void fork_parent(void)
{
	struct pool_head *p;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (p = pool__list_head; p; p = p->next)
		pool__bucket_fork_parent(p);
	pool__headset_fork_after();
	pool__os_fork_after();
	pool__uaf_fork_after();
	for (p = pool__list_head; p; p = p->next)
		pool__unlock(&p->demand.pass_lock);
	pool__thread_fork_parent();
	pool__lock_leave(&pool__list_lock, fork_took_list);
}

static void fork_child(void)
{
	struct pool_head *p;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	for (p = pool__list_head; p; p = p->next)
		pool__bucket_fork_child(p);
	pool__headset_fork_after();
	pool__os_fork_after();
	pool__uaf_fork_after();
	for (p = pool__list_head; p; p = p->next)
		pool__unlock(&p->demand.pass_lock);
	pool__thread_fork_child();
	/* the forking thread took the list lock in fork_prepare(): it owns it in the child too */
	pool__lock_leave(&pool__list_lock, fork_took_list);
}

/*
 * Unloading (dlclose(), and the end of the process): what the library keeps for itself goes, so
 * that a program that loads and unloads it again and again (a plugin host) leaks neither pthread
 * keys nor memory: the calling thread's caches and the thread-exit key (pool-thread.c), and the
 * destroyed heads kept for reports. Pools still live are the program's: pool_destroy() them
 * before dlclose(). The list lock is only tried: at exit, another thread may hold it.
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

/* Start-up: fork handlers, then the debugging options (POOL_DEBUG), before any pool exists. */
__attribute__((constructor(101))) static void pool_core_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	pool__debug_init();
}
