/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool private types: the pool head, its buckets, free objects in the shared lists, and a
 * thread's caches and context. Types, constants and macros only (HAProxy's -t.h rule): any src/
 * file may include it, whatever its layer, since it calls nothing. Never installed.
 *
 *   struct pool_head    a pool: the read-mostly part the inline fast path reads (ro), the layout,
 *                       the creators merged into it, and its buckets.
 *   struct pool_bucket  two cache lines: the head of a shared free list and its counters.
 *   struct pool_item    a free object in a shared list, seen through its first two words.
 *   struct pool_thread  a thread: its state, registry id and fault-injection state (in TLS).
 *   struct pool_thread_caches  a registered thread's caches of every pool (the array the TLS
 *                       pointer points to), budget, eviction clock and lock (allocated).
 */
#ifndef POOL_SRC_POOL_HEAD_T_H
#define POOL_SRC_POOL_HEAD_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <pool/pool-t.h>

#define POOL_CACHE_LINE       64u          /* bytes; bucket and head alignment */
#define POOL_BUCKETS_MAX      64u          /* most buckets a pool may have (pool_configure) */
#define POOL_DEFAULT_ALIGN    16u          /* object alignment when none is asked for (malloc's) */
#define POOL_MIN_OBJECT       16u          /* two link words: next and down */
#define POOL_CALLER_SLOTS     32u          /* live-object counts per allocating caller */

/* Marker swapped into a shared free list head by the thread that owns it. */
#define POOL_BUSY             ((struct pool_item *)1)

/*
 * The first word of every pool head: a live pool carries POOL_HEAD_LIVE, a destroyed one
 * POOL_HEAD_DEAD (the head's memory is kept recognisable, see pool_destroy()). The crash report
 * and the tag check read it to tell whether an address is a pool head.
 */
#define POOL_HEAD_LIVE        UINT64_C(0x4C4F4F504C495645)   /* "LOOPLIVE" */
#define POOL_HEAD_DEAD        UINT64_C(0x4C4F4F5044454144)   /* "LOOPDEAD" */

/*
 * A free object in a shared list, seen through its first two words. Every object of a cluster
 * chains the next one through `next` (NULL ends the cluster); the first object of a cluster also
 * holds `down`: the next cluster of its bucket's stack, tagged in its 4 low bits with the number
 * of objects of the cluster minus one (objects are 16-byte aligned, so the bits are free). So a
 * cluster is popped, counted and given to a thread cache without a walk.
 */
struct pool_item {
	struct pool_item *next;
	uintptr_t down;                         /* next cluster | (objects - 1) */
};

#define POOL_DOWN_COUNT_MASK  ((uintptr_t)15)   /* tag bits of pool_item.down */

/*
 * One bucket: the head of a shared free list and the counters of what moved through it, on two
 * cache lines (128 bytes; adjacent-line prefetchers fetch them together). Only the thread that
 * owns the head (it swapped POOL_BUSY in and got a cluster or NULL back) writes these counters,
 * with plain relaxed loads and stores: a cluster moved costs the head's exchange and no other
 * atomic read-modify-write. Counts are objects; sums over buckets are the pool's totals. Which
 * bucket counts a move does not matter to the sums; `allocated` and `used` of one bucket can
 * even wrap below 0 (they are unsigned and add up right).
 */
struct pool_bucket {
	/* line 1: the head and what every pop and push writes */
	_Atomic(struct pool_item *) free_list;  /* NULL, a cluster stack, or POOL_BUSY */
	atomic_ulong allocated;                 /* objects obtained from the OS layer, net */
	atomic_ulong used;                      /* objects handed out or in thread caches, net */
	atomic_ulong free_objects;              /* objects in this bucket's stack */
	_Atomic uint32_t low_cur;               /* least free_objects since the marks last rotated */
	_Atomic uint32_t low_prev;              /* ... before that (both saturate at 2^32-1) */
	atomic_uint epoch;                      /* the pool's demand window of the last rotation */
	uint32_t spare;
	atomic_ulong get_objects;               /* cumulative: objects popped by threads */
	atomic_ulong put_objects;               /* cumulative: objects pushed by threads */
	/* line 2: written by the owner too, less often; and two counters that are not owned */
	atomic_ulong get_clusters;              /* cumulative: pops (one exchange each) */
	atomic_ulong put_clusters;              /* cumulative: pushes (one exchange each) */
	atomic_ulong os_allocs;                 /* cumulative: objects from the OS layer */
	atomic_ulong os_releases;               /* cumulative: objects back to the OS layer */
	atomic_ulong lost;                      /* objects lost when a fork() child reset the head */
	atomic_ulong failed;                    /* failures of threads hashed here (fetch_add) */
	struct pool_item *fork_saved;           /* the head, kept here across fork() */
	atomic_int fork_owned;                  /* 1 while fork_prepare() owns the head */
} __attribute__((aligned(2 * POOL_CACHE_LINE)));

/*
 * Demand tracking and memory return of a pool, on lines of its own (written once per demand
 * window, read by the pass that releases memory). A window lasts decay_ms; an object that stayed
 * in a shared list through a whole window was not needed and is given back to the OS layer when
 * the window ends. See the essay in pool.c, step 6.
 */
struct pool_demand {
	atomic_uint epoch;                      /* windows ended since the pool was created */
	pthread_mutex_t pass_lock;              /* one release pass at a time (trylock from slow
	                                           paths, lock from pool_gc()) */
	_Atomic uint64_t epoch_ns;              /* CLOCK_MONOTONIC time the current one began */
	uint64_t window_ns;                     /* decay_ms, in nanoseconds (fixed) */
	atomic_ulong need;                      /* needed_avg: the most objects used over the
	                                           window, measured at the last pass */
	atomic_ulong gc_released_bytes;         /* cumulative: bytes the passes and pool_flush()
	                                           gave back */
	/* counts of moves that found every bucket BUSY (fetch_add; rare) */
	atomic_ulong spill_allocated, spill_used, spill_os_allocs, spill_os_releases;
} __attribute__((aligned(POOL_CACHE_LINE)));

/* One pool_create() call merged into a pool (its creator), for `pools show detailed`. */
struct pool_creator {
	char name[POOL_NAME_MAX + 1];
	size_t size;
	size_t align;
	unsigned int flags;
};

/* Live objects per allocating caller (caller debugging), for `pools show detailed`. */
struct pool_caller_stat {
	_Atomic(uintptr_t) caller;
	atomic_long live;
};

struct pool_head {
	struct pool_head_ro ro;        /* read by the inline fast path: must stay first */
	uint64_t magic;                /* POOL_HEAD_LIVE, or POOL_HEAD_DEAD once destroyed */
	size_t stride;                 /* bytes per object including debugging extras */
	size_t cache_cost;             /* bytes a cached object counts in a thread's budget: the
	                                  stride, or under uaf its whole mapping (its pages) */
	size_t os_size;                /* bytes per object from the OS layer: the stride, and in
	                                  ASan builds without `tag` a hidden tag past it */
	size_t align;                  /* alignment in bytes */
	size_t tag_off;                /* offset of the tag, or 0 without tag */
	size_t caller_off;             /* offset of the caller word, or 0 without caller */
	size_t backup_off;             /* offset of the backup copy, or 0 without backup */
	unsigned int layout;           /* POOL_DBG_LAYOUT flags this pool was created with */
	unsigned int nbuckets;         /* power of two */
	unsigned int bucket_shift;     /* 64 - log2(nbuckets) for the pointer hash */
	unsigned int cluster;          /* objects per cluster */
	unsigned int floor;            /* objects pool_gc() keeps beyond the need (<= cluster) */
	atomic_size_t limit;           /* maximum allocated objects, 0: none */
	atomic_long limit_count;       /* objects reserved from the OS layer: allocated plus the
	                                  moves in flight, kept with or without a limit */
	atomic_int ever_allocated;     /* 0: never allocated, 2: a merge grows the layout, 1: the
	                                  first allocation happened (merges keep the size) */
	unsigned int creators;         /* merged pool_create() calls, under the pool list lock */
	unsigned int creators_cap;     /* entries allocated in creator[] */
	struct pool_creator *creator;  /* creator[0..creators-1] */
	struct pool_head *prev, *next; /* pool list, under the pool list lock */
	char name[POOL_NAME_MAX + 1];
	struct pool_caller_stat callers[POOL_CALLER_SLOTS];
	struct pool_demand demand;
	struct pool_bucket buckets[];
};

/* Thread states. */
enum pool_thread_state {
	POOL_THREAD_NEW = 0,           /* never used a pool */
	POOL_THREAD_CACHED,            /* has an id and caches */
	POOL_THREAD_UNCACHED,          /* no id or no memory for caches: works without them */
	POOL_THREAD_EXITED,            /* past its exit flush: works without caches */
};

/*
 * A bulk magazine: pool_free_bulk() puts the pointers it is given here, as they are, and
 * pool_alloc_bulk() takes them back with a copy, without touching the objects (DPDK's mempool
 * cache works this way). One per (thread, pool) that uses the bulk calls, allocated on first use.
 * Its objects are cached objects like those of the thread cache's list: they count in the same
 * reservation, and every other path first moves them onto the list (mag_spill()).
 */
#define POOL_MAG_OBJECTS 64u

struct pool_mag {
	uint32_t n;                    /* pointers in obj[] */
	void *obj[POOL_MAG_OBJECTS];
};

/*
 * A thread's caches of every pool and the state that goes with them, allocated when the thread
 * registers and freed at its exit. The inline fast path reaches tc[] through the thread-local
 * pointer pool__tls_cache; nothing else of it. Other threads reach it through the registry.
 */
struct pool_thread_caches {
	struct pool_tcache tc[POOL_MAX_CACHED_POOLS];  /* by struct pool_head_ro.index; 0 unused */
	uint32_t limit[POOL_MAX_CACHED_POOLS];   /* reservation per pool: objects this thread may
	                                            cache (count = limit - room: the list and
	                                            the magazine together) */
	struct pool_mag *mag[POOL_MAX_CACHED_POOLS];  /* bulk magazines, or NULL */
	unsigned int id;               /* the thread's registry slot */
	size_t budget;                 /* bytes this thread may cache */
	size_t reserved;               /* sum over pools of limit * cache_cost */
	atomic_size_t credit;          /* reservation bytes released by other threads (destroy) */
	unsigned int hand;             /* eviction clock hand (pool slot) */
	unsigned int integrity_epoch;  /* pool__debug_integrity_epoch() when every object of these
	                                  caches last carried the integrity pattern */
	pthread_mutex_t lock;          /* held by the owner while touching other slots, by others
	                                  while draining these caches */
};

/*
 * A thread as the library sees it: a few words of thread-local storage (so that the library's
 * TLS block stays small enough for dlopen()), and its caches while it has them.
 */
struct pool_thread {
	enum pool_thread_state state;
	unsigned int id;               /* registry slot, or a hash for threads without one */
	unsigned int ticks;            /* slow-path calls since the last look at the demand clock */
	uint64_t rng;                  /* fault-injection generator state */
	struct pool_thread_caches *caches;   /* while CACHED, else NULL */
};

#endif
