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
 *   struct pool_bucket  two cache lines: the head of a shared free list, a stack of empty
 *                       magazines, and its counters.
 *   struct pool_mag     a magazine: an array of pointers to free objects, the unit that moves
 *                       between a thread cache and a shared free list (a "cluster").
 *   struct pool_slab    the header of a slab: a block taken whole from the OS layer, aligned on
 *                       its size, whose objects are carved at their stride (pool-slab.c).
 *   struct pool_slabs   a pool's slab tier: its lock, the slabs' geometry, the heap of slabs
 *                       with free lines, and its counters.
 *   struct pool_tslot   a thread's magazines of one pool beyond the one the fast path uses.
 *   struct pool_thread  a thread: its state, registry id and fault-injection state (in TLS).
 *   struct pool_thread_caches  a registered thread's caches of every pool (the array the TLS
 *                       pointer points to), budget, eviction clock (allocated).
 */
#ifndef POOL_SRC_POOL_HEAD_T_H
#define POOL_SRC_POOL_HEAD_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <pool/pool-t.h>

#include "base/pool-lock-t.h"

#define POOL_CACHE_LINE       64u          /* bytes; bucket and head alignment */
#define POOL_BUCKETS_MAX      64u          /* most buckets a pool may have (pool_configure) */
#define POOL_DEFAULT_ALIGN    16u          /* object alignment when none is asked for (malloc's) */
#define POOL_MIN_OBJECT       8u           /* smallest object layout: a tag or caller word
                                              follows it aligned */
#define POOL_CALLER_SLOTS     32u          /* live-object counts per allocating caller */

struct pool_sampler;                       /* a thread's profile sampler (pool-sample.c) */

/* Marker swapped into a shared free list head by the thread that owns it. */
#define POOL_BUSY             ((struct pool_mag *)1)

/*
 * The first word of every pool head: a live pool carries POOL_HEAD_LIVE, a destroyed one
 * POOL_HEAD_DEAD (the head's memory is kept recognisable, see pool_destroy()). The crash report
 * and the tag check read it to tell whether an address is a pool head.
 */
#define POOL_HEAD_LIVE        UINT64_C(0x4C4F4F504C495645)   /* "LOOPLIVE" */
#define POOL_HEAD_DEAD        UINT64_C(0x4C4F4F5044454144)   /* "LOOPDEAD" */

/*
 * A magazine (Bonwick & Adams, "Magazines and Vmem", USENIX 2001; DPDK's per-lcore mempool cache
 * works the same way): an array of pointers to free objects. It is the unit that moves between
 * a thread cache and a shared free list, so that a move touches the magazine's header and never
 * the objects: no link is stored in a free object, and nothing walks objects to cut or chain a
 * group of them. A magazine is library metadata (pool__os_meta_alloc()), made for one pool with
 * that pool's capacity (pool->cluster pointers). `next` links it into whichever stack holds it:
 * a bucket's stack of magazines with objects, a bucket's stack of empty magazines, or a thread's
 * stack of full magazines of one pool, which also keeps `prev` (the thread evicts from the
 * bottom of that stack, its coldest magazines, without a walk).
 */
struct pool_mag {
	struct pool_mag *next;
	struct pool_mag *prev;                  /* thread stacks only (toward the top) */
	uint32_t n;                             /* pointers held in obj[0..n-1] (while a thread
	                                           cache's fast path uses it, its entry's count
	                                           is the truth and n is stale) */
	uint32_t cap;                           /* capacity of obj[] (the pool's cluster) */
	void *obj[];
};

/*
 * One bucket: the head of a shared free list and the counters of what moved through it, on two
 * cache lines (128 bytes). Only the thread that owns the head (it swapped POOL_BUSY in and got a
 * stack or NULL back) writes these counters, with plain relaxed loads and stores: a magazine
 * moved costs the head's exchange and no other atomic read-modify-write. Counts are objects;
 * sums over buckets are the pool's totals. Which bucket counts a move does not matter to the
 * sums; `allocated` of one bucket can even wrap below 0 (it is unsigned and adds up right).
 * A pop or a push between a thread cache and the shared list writes line 1 only: the one line
 * (with the magazines' own) that crosses between the cores of a producer and a consumer. The
 * objects used (handed out or cached) are not kept: they are allocated - free_objects, bucket
 * by bucket, since every move changes two of the three by as much (a `used` written by every
 * pop and push, or the magazine counts on line 2, would make both lines travel).
 */
struct pool_bucket {
	/* line 1: the head and what every pop and push writes */
	_Atomic(struct pool_mag *) free_list;   /* NULL, a stack of magazines, or POOL_BUSY */
	struct pool_mag *empties;               /* a stack of empty magazines that threads leave
	                                           here and take again (owner only) */
	atomic_ulong free_objects;              /* objects in this bucket's stack */
	_Atomic uint32_t low_cur;               /* least free_objects since the marks last rotated
	                                           (saturates at 2^32-1, as low_prev) */
	atomic_uint nempties;                   /* magazines on `empties` */
	atomic_ulong get_objects;               /* cumulative: objects popped by threads */
	atomic_ulong put_objects;               /* cumulative: objects pushed by threads */
	atomic_ulong get_clusters;              /* cumulative: magazines popped */
	atomic_ulong put_clusters;              /* cumulative: magazines pushed */
	/* line 2: written by the owner too, less often; and two counters that are not owned */
	atomic_ulong allocated;                 /* objects above the slab tier (carved from the
	                                           pool's slabs, or obtained from the OS layer), net:
	                                           handed out, cached, or in this bucket's stack */
	_Atomic uint32_t low_prev;              /* low_cur before the marks last rotated */
	atomic_uint epoch;                      /* the pool's demand window of the last rotation */
	atomic_ulong slab_get_objects;          /* cumulative: objects taken from the slab tier
	                                           (pool_stats.slab_get_objects) */
	atomic_ulong slab_put_objects;          /* cumulative: objects given down to it (written by
	                                           pool__bucket_count_down() only) */
	atomic_ulong lost;                      /* objects lost when a fork() child reset the head */
	atomic_ulong failed;                    /* failures of threads hashed here (fetch_add) */
	struct pool_mag *fork_saved;            /* the head fork_prepare() owns across fork(), or
	                                           POOL_BUSY when it could not own it */
} __attribute__((aligned(2 * POOL_CACHE_LINE)));

/*
 * Demand tracking and memory return of a pool, on lines of its own (written once per demand
 * window, read by the pass that releases memory). A window lasts decay_ms; an object that stayed
 * in a shared list through a whole window was not needed and is given back to the OS layer when
 * the window ends (pool-demand.c).
 */
struct pool_demand {
	atomic_uint epoch;                      /* windows ended since the pool was created */
	struct pool_lock pass_lock;             /* one release pass at a time (trylock from slow
	                                           paths, lock from pool_gc()) */
	_Atomic uint64_t epoch_ns;              /* CLOCK_MONOTONIC time the current one began */
	uint64_t window_ns;                     /* decay_ms, in nanoseconds (fixed) */
	atomic_ulong owed;                      /* objects the last window end found unused beyond
	                                           the floor and not yet given back (pass lock) */
	atomic_ulong gc_released_bytes;         /* cumulative: bytes the passes and pool_flush()
	                                           gave back */
	/* counts of moves that found every bucket BUSY (fetch_add; rare) */
	atomic_ulong spill_allocated, spill_used, spill_slab_get_objects, spill_slab_put_objects;
	/*
	 * needed_avg, the average of `used` over time (pool-demand.c, "The average"): written by
	 * one sample at a time, which makes avg_seq odd with a compare-and-swap and even again
	 * after, read by pool__demand_needed_avg() with no lock. The doubles are kept as their
	 * bits.
	 */
	atomic_uint avg_seq;
	atomic_uint avg_have_prev;              /* a window has ended: avg_prev is known */
	_Atomic uint64_t avg_start_ns;          /* the current window's start */
	_Atomic uint64_t avg_last_ns;           /* the last sample */
	atomic_ulong avg_last_used;             /* `used` then */
	_Atomic uint64_t avg_sum;               /* double: used x ns, from avg_start_ns to the last
	                                           sample */
	_Atomic uint64_t avg_prev;              /* double: the ended window's average, objects */
	_Atomic uint64_t tick_ns;               /* the latest slow path's tick (any thread) */
} __attribute__((aligned(POOL_CACHE_LINE)));

/*
 * A slab (pool-slab.c): a block of `bytes` (a power of two) from the OS layer, aligned on its
 * size, so that the header of an object's slab is at the object's address rounded down to it
 * (no object is read to find it). The header, then objects at the pool's os_size stride from
 * `first` (pool_slabs). Objects are handed out by line groups: the fewest objects that end on a
 * cache-line boundary (1, 2 or 4), so that objects carved for different threads never share a
 * line. Objects [0, carved) have been carved; a set bit of free[] is a carved object given back
 * (free here), so a group is wholly free when all its bits are set. Only the holder of the
 * lock of the slab's shard reads or writes a header (but `pool` and `shard`, set before the
 * slab's first object is handed out and never changed).
 */
struct pool_slab {
	const struct pool_head *pool;   /* the owner, checked when an object comes back */
	struct pool_slab *next, *prev;  /* the pool's slabs; once given back, a list of slabs to
	                                   free after the lock is dropped */
	uint32_t heap_idx;              /* position in the pool's heap, or UINT32_MAX when out */
	uint32_t nfree;                 /* objects free here: never carved, or given back */
	uint32_t gfree;                 /* groups wholly free: what a refill may take */
	uint32_t carved;                /* objects carved so far, a multiple of the group */
	uint32_t hint;                  /* no bitmap word below this one has a bit set */
	uint8_t color;                  /* its objects start color * color_unit bytes past `first`
	                                   (pool_slabs.colors), for life */
	uint8_t purge;                  /* 1: objects came back since its last purge (in the
	                                   header's padding: the header stays 56 bytes) */
	uint16_t shard;                 /* its shard (pool_slabs.shard[]), for life */
	uint32_t spare_lo, spare_hi;    /* spares: objects of a group carved for one object
	                                   (their bits set), never handed out, so not counted in
	                                   `allocated` until they are */
	uint64_t free[];                /* a bit per carved object given back */
};

/* A slab heap entry: its key (density class, then address) and the slab. */
struct pool_slab_ref {
	uint64_t key;
	struct pool_slab *slab;
};

/*
 * The slab tier's shards (pool-slab.c): a refill takes the lock of its thread's shard, or of
 * the next one that is free, so that 64 threads on a few CPUs do not all queue, or sleep, on one
 * lock per pool while its holder waits for a CPU (one lock per pool makes 10 times the
 * voluntary context switches and 2.2 times the peak RSS at 64 threads). After jemalloc's
 * arenas, which shard its bins the same way (4 per CPU by default).
 */
#define POOL_SLAB_SHARDS 8u

/*
 * One shard, on lines of its own: its lock, the heap of its slabs that have a wholly free group
 * (densest first, then lowest address), every slab it holds, and its counters (written under
 * its lock, read by statistics with relaxed loads). A slab belongs to one shard for life.
 */
struct pool_slab_shard {
	struct pool_lock lock;          /* the shard's lock: a leaf (pool-slab.c) */
	struct pool_slab_ref *heap;     /* heap[0..nheap) */
	uint32_t nheap, heap_cap;
	struct pool_slab *all;          /* every slab held, linked by next and prev */
	atomic_ulong nslabs;            /* slabs held */
	atomic_ulong free_objs;         /* carved objects given back, free in their slabs */
	atomic_ulong carved;            /* cumulative: objects carved from fresh slab space */
	atomic_ulong released_objs;     /* cumulative: carved objects gone back with their slab */
	atomic_ulong released;          /* cumulative: slabs given back whole */
	atomic_ulong purged;            /* cumulative: resident bytes the purge gave the kernel */
} __attribute__((aligned(POOL_CACHE_LINE)));

/*
 * A pool's slab tier (pool-slab.c): the geometry, set when the pool is made and read-only
 * after, and the shards.
 */
struct pool_slabs {
	size_t bytes;                   /* one slab, a power of two (0: the pool is off slabs) */
	uint32_t capacity;              /* objects per slab, a multiple of the group */
	uint32_t group;                 /* objects per line group: 1, 2 or 4 */
	uint32_t first;                 /* offset of the first object in a slab */
	uint32_t words;                 /* words of a slab's bitmap */
	uint32_t step;                  /* bytes from one object to the next in a slab: os_size, or
	                                   a line more (pool__slab_geometry()) */
	uint32_t colors;                /* offsets a slab's objects may start at (1: no room for
	                                   more), color_unit bytes apart: Bonwick's slab coloring */
	uint32_t color_unit;            /* bytes: a cache line, or the pool's alignment if more */
	uint64_t div_magic;             /* (off * div_magic) >> 32 == off / os_size for every
	                                   offset of an object (Granlund & Montgomery 1994) */
	struct pool_slab_shard shard[POOL_SLAB_SHARDS];
} __attribute__((aligned(POOL_CACHE_LINE)));

/*
 * One pool_create() call merged into a pool (its creator): its name stays valid in every command
 * and filter, and `pools show detailed` lists it.
 */
struct pool_creator {
	char name[POOL_NAME_MAX + 1];
	size_t size;
	size_t align;
	unsigned int flags;
	const void *where;             /* the return address of its pool_create() call */
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
	unsigned int cluster;          /* objects per magazine, its capacity: the configured
	                                  cluster, less for large objects (pool__demand_init()) */
	unsigned int depth;            /* how many of them a slot's loaded magazine starts with
	                                  (<= cluster; less for large objects): it goes deeper
	                                  while the thread's budget has room (pool-magazine.c) */
	unsigned int floor;            /* objects pool_gc() keeps beyond the need: 64 KiB worth,
	                                  at most a starting depth, possibly 0 */
	size_t mag_bytes;              /* bytes of one magazine of this pool (header + cluster
	                                  pointers) */
	atomic_size_t limit;           /* maximum allocated objects, 0: none */
	atomic_size_t reserve;         /* free objects memory return and pool_flush() leave in
	                                  the shared lists, 0: none (pool_set_reserve()) */
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
	atomic_uint prof_live;         /* objects of this pool the profile samples and has not seen
	                                  freed (pool-profile.c), far from `ro`: written on samples */
	atomic_uint prof_chosen;       /* the token of the profile that chose this pool, when a
	                                  profile samples chosen pools only (pool-profile.h) */
	struct pool_demand demand;
	struct pool_slabs slabs;       /* the tier below the shared lists (pool-slab.c) */
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
 * A thread's magazines of one pool beyond the loaded one (Bonwick & Adams 2001, section 3: a
 * CPU layer of a loaded and a previous magazine over a depot of full and empty ones; here the
 * thread keeps a small depot of its own, within its byte budget, before the shared free lists).
 * The loaded magazine is the one the inline fast path pops and pushes through the thread's
 * struct pool_tcache entry (base = loaded->obj, top, end = base + cap). Only the owning thread
 * touches a slot, except pool_destroy()'s drain and fork(), which wait until the owner is
 * outside its sections and keep it out while they look (see pool-tcache.c).
 */
struct pool_tslot {
	struct pool_mag *loaded;       /* the fast path's magazine (NULL: none yet) */
	struct pool_mag *prev;         /* the previous magazine: full, partial or empty, or NULL */
	struct pool_mag *top;          /* stack of full magazines: most recently pushed ... */
	struct pool_mag *bottom;       /* ... and least recently pushed (the coldest) */
	struct pool_mag *empty;        /* stack of empty magazines */
	uint32_t nfull;                /* magazines from top to bottom */
	uint32_t nempty;               /* magazines on `empty` */
	uint32_t held;                 /* objects in prev and the full stack (the loaded count is
	                                  the tcache entry's) */
	uint8_t referenced;            /* CLOCK bit: set when a slow path moves a magazine here */
	uint8_t took;                  /* 1 once the thread allocated from this slot; until then
	                                  what it caches was freed by it and made by others, and
	                                  the fast path only pushes (pool-magazine.c) */
	uint8_t depth;                 /* the pointers of the loaded magazine the fast path may
	                                  fill, from the pool's depth to its cluster (at most
	                                  POOL_CLUSTER_MAX); 0 after the slot was emptied
	                                  (pool-magazine.c) */
	uint32_t reserved_objs;        /* objects this slot counts in the budget: held, plus the
	                                  loaded magazine's depth */
	uint32_t low_full;             /* the fewest full magazines since the releaser last looked:
	                                  that many at the bottom of the stack stayed unused */
};

/*
 * A thread's caches of every pool and the state that goes with them, allocated when the thread
 * registers and freed at its exit. The inline fast path reaches tc[] through the thread-local
 * pointer pool__tls_cache; nothing else of it. Other threads reach it through the registry.
 */
struct pool_thread_caches {
	struct pool_tcache tc[POOL_MAX_CACHED_POOLS];   /* by struct pool_head_ro.index; 0 unused */
	struct pool_tslot slot[POOL_MAX_CACHED_POOLS];
	unsigned int id;               /* the thread's registry slot */
	size_t budget;                 /* bytes this thread may cache */
	size_t reserved;               /* sum over pools of slot.reserved_objs * cache_cost */
	atomic_size_t credit;          /* reserved bytes released by other threads (destroy) */
	unsigned int hand;             /* eviction clock hand (pool slot) */
	unsigned int integrity_epoch;  /* pool__debug_integrity_epoch() when every object of these
	                                  caches last carried the integrity pattern */
	atomic_int busy;               /* 1 while the owner changes its slots (a section): fork()
	                                  and pool_destroy() wait for 0 before they look at them
	                                  (see pool-tcache.c, "Sections") */
	atomic_int hold;               /* 1 while the releaser keeps this thread alone out of its
	                                  sections (pool-tcache.c, "Sections") */
	int stuck;                     /* 1: the last quiescer's wait gave up on this thread inside
	                                  a section (written by the quiescer, registry lock) */
	atomic_uint sections;          /* sections entered (owner: a load and a store); the
	                                  releaser tells a thread idle through a window by it */
	unsigned int seen_sections;    /* `sections` when the releaser last looked (registry lock) */
	unsigned int taken_sections;   /* ... when it last took this thread's spare magazines */
	struct pool_sampler *sampler;  /* the profile's state of this thread (pool-sample.c), NULL
	                                  until the profile first samples here */
	struct pool_tcache **tls;      /* the thread's pool__tls_cache: other threads point it at
	                                  empty entries to take its fast path away (pool-thread.c) */
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

/*
 * The sizes the design depends on (doc/internals.md, 4.2 to 4.5), checked where the structures
 * are defined, so that a field added to one of them fails the build instead of the cache lines:
 * the fast path's part of the head and an entry (two to a cache line) read by the inline code
 * of pool.h; a bucket's two lines (every pop and push writes the first only, pool-bucket.c); a
 * magazine's header (mag_bytes = 24 + 8 x cluster); and the thread's initial-exec TLS, which
 * with pool__tls_cache makes most of the library's TLS block, small enough for glibc's surplus
 * of static TLS (dlopen()).
 */
_Static_assert(sizeof(struct pool_head_ro) == 24, "the fast path reads 24 bytes of the head");
_Static_assert(sizeof(struct pool_tcache) == 32, "two thread-cache entries to a cache line");
_Static_assert(sizeof(struct pool_bucket) == 2 * POOL_CACHE_LINE, "a bucket is two cache lines");
_Static_assert(offsetof(struct pool_bucket, allocated) == POOL_CACHE_LINE,
               "what every pop and push writes fits the bucket's first cache line");
_Static_assert(offsetof(struct pool_mag, obj) == 24, "a magazine's header is 24 bytes");
_Static_assert(sizeof(struct pool_thread) == 32, "a thread's TLS state is 32 bytes");
_Static_assert(sizeof(struct pool_tslot) == POOL_CACHE_LINE, "a thread's slot is one cache line");
_Static_assert(POOL_CLUSTER_MAX <= UINT8_MAX, "a slot's depth fits a byte");

#endif
