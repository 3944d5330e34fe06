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
 *   struct pool_bucket  one cache line: the head of a shared free list and counters.
 *   struct pool_item    a free object in a shared list, seen through its first two words.
 *   struct pool_thread  one thread's caches of every pool (the array the TLS pointer points to)
 *                       and its private context: registry id, budget, eviction clock, lock.
 */
#ifndef POOL_SRC_POOL_HEAD_T_H
#define POOL_SRC_POOL_HEAD_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <pool/pool-t.h>

#define POOL_CACHE_LINE       64u          /* bytes; bucket and head alignment */
#define POOL_BUCKETS_MAX      64u          /* most buckets a pool may have (pool_configure) */
#define POOL_CLUSTER_MAX      64u          /* most objects per cluster (pool_configure) */
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

/* A free object in a shared list: `next` chains a cluster, `down` the next cluster. */
struct pool_item {
	struct pool_item *next;
	struct pool_item *down;
};

/*
 * One bucket: a shared free list head and the counters of the objects it accounts for. One
 * cache line each, so that no line is written by every thread.
 */
struct pool_bucket {
	_Atomic(struct pool_item *) free_list;  /* NULL, a cluster, or POOL_BUSY */
	atomic_ulong allocated;                 /* objects of this bucket held from the OS layer */
	atomic_ulong used;                      /* ... handed out or in thread caches */
	atomic_ulong needed_sum;                /* swrate sum: needed_avg * POOL_AVG_SAMPLES */
	atomic_ulong failed;                    /* failures of threads hashed to this bucket */
	atomic_ulong free_objects;              /* objects sitting in this bucket's free list */
	struct pool_item *fork_saved;           /* the head, kept here across fork() */
	atomic_ulong gc_seen_sum;               /* needed_sum at the previous pool_gc() */
	atomic_ulong shared_get_objects;        /* cumulative traffic (struct pool_stats) */
	atomic_ulong shared_get_clusters;
	atomic_ulong shared_put_objects;
	atomic_ulong shared_put_clusters;
	atomic_ulong os_allocs;
	atomic_ulong os_releases;
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
	size_t align;                  /* alignment in bytes */
	size_t tag_off;                /* offset of the tag, or 0 without tag */
	size_t caller_off;             /* offset of the caller word, or 0 without caller */
	size_t backup_off;             /* offset of the backup copy, or 0 without backup */
	unsigned int layout;           /* POOL_DBG_LAYOUT flags this pool was created with */
	unsigned int nbuckets;         /* power of two */
	unsigned int bucket_shift;     /* 64 - log2(nbuckets) for the pointer hash */
	unsigned int cluster;          /* objects per cluster */
	size_t limit;                  /* maximum allocated objects, 0: none */
	atomic_long limit_count;       /* allocated objects, kept exact only while limit != 0 */
	atomic_int ever_allocated;     /* set at the first allocation (merging rule) */
	atomic_ulong gc_released_bytes; /* bytes pool_gc() and pool_flush() gave back */
	unsigned int creators;         /* merged pool_create() calls, under the pool list lock */
	unsigned int creators_cap;     /* entries allocated in creator[] */
	struct pool_creator *creator;  /* creator[0..creators-1] */
	struct pool_head *prev, *next; /* pool list, under the pool list lock */
	char name[POOL_NAME_MAX + 1];
	struct pool_caller_stat callers[POOL_CALLER_SLOTS];
	struct pool_bucket buckets[] __attribute__((aligned(POOL_CACHE_LINE)));
};

/* Thread states. */
enum pool_thread_state {
	POOL_THREAD_NEW = 0,           /* never used a pool */
	POOL_THREAD_CACHED,            /* has an id and a cache */
	POOL_THREAD_UNCACHED,          /* no id left (over POOL_MAX_THREADS): works without cache */
	POOL_THREAD_EXITED,            /* past its exit flush: works without cache */
};

/*
 * A thread's caches of every pool and its private context. The inline fast path reaches tc[]
 * through the thread-local pointer pool__tls_cache; nothing else of it. Its other fields are
 * the slow path's.
 */
struct pool_thread {
	struct pool_tcache tc[POOL_MAX_CACHED_POOLS];  /* by struct pool_head_ro.index; 0 unused */
	enum pool_thread_state state;
	unsigned int id;               /* registry slot, or a hash for UNCACHED/EXITED threads */
	size_t budget;                 /* bytes this thread may cache */
	size_t reserved;               /* sum over pools of limit * stride */
	atomic_size_t credit;          /* reservation bytes released by other threads (destroy) */
	unsigned int hand;             /* eviction clock hand (pool slot) */
	unsigned int integrity_epoch;  /* pool__integrity_epoch when this cache was last filled */
	uint64_t rng;                  /* fault-injection generator state */
	pthread_mutex_t lock;          /* held by the owner while touching other slots, by others
	                                  while draining this thread's caches */
};

#endif
