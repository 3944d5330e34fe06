/*
 * libpool internals shared between src/ files (pool__ prefix). Private header: never installed.
 * Tests that need internals include it and link the static library.
 */
#ifndef POOL_SRC_POOL_INT_H
#define POOL_SRC_POOL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <pool/pool.h>

#define POOL_CACHE_LINE       64u
#define POOL_BUCKETS_MAX      64u
#define POOL_CLUSTER_MAX      64u
#define POOL_DEFAULT_ALIGN    16u
#define POOL_MIN_OBJECT       16u          /* two link words: next and down */
#define POOL_CACHE_BYTES_DEF  (512u * 1024u)
#define POOL_BUCKETS_DEF      16u

/* Marker swapped into a shared free list head by the thread that owns it for a pop. */
#define POOL_BUSY             ((struct pool_item *)1)

/* A free object in a shared list: `next` chains a cluster, `down` the next cluster. */
struct pool_item {
	struct pool_item *next;
	struct pool_item *down;
};

/*
 * One bucket: a shared free list head and the counters of the objects whose address hashes here.
 * One cache line each so that no line is written by every thread.
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

/* One pool_create() call merged into a pool, for `pools show detailed`. */
struct pool_user {
	char name[POOL_NAME_MAX + 1];
	size_t size;
	size_t align;
	unsigned int flags;
};

#define POOL_CALLER_SLOTS 32u   /* live-object counts per allocating caller (caller debugging) */

struct pool_caller_stat {
	_Atomic(uintptr_t) caller;
	atomic_long live;
};

struct pool_head {
	struct pool_head_ro ro;        /* read by the inline fast path: must stay first */
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
	unsigned int users;            /* merged pool_create() calls, under the pool list lock */
	unsigned int users_cap;
	struct pool_user *user;        /* users[0..users-1] */
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

/* A thread's private context, next to its public pool_thread_cache in TLS. */
struct pool_thread_ctx {
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
	struct pool_thread_cache *cache;
};

/* Global state (src/pool.c). */
extern pthread_mutex_t pool__list_lock;
extern struct pool_head *pool__list_head;
extern struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];
extern unsigned int pool__nb_pools;
extern struct pool_config pool__config;
extern atomic_uint pool__integrity_epoch;

/* Pointer hash: the bucket of an object (Fibonacci hashing, Knuth TAOCP vol. 3, 6.4). */
static inline unsigned int pool__bucket_of(const struct pool_head *pool, const void *ptr)
{
	if (pool->nbuckets == 1)
		return 0;
	return (unsigned int)((((uintptr_t)ptr >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >>
	                      pool->bucket_shift);
}

/* Sum of a bucket counter over a pool (relaxed reads: stats and limits only). */
unsigned long pool__sum_allocated(const struct pool_head *pool);
unsigned long pool__sum_used(const struct pool_head *pool);
unsigned long pool__sum_needed(const struct pool_head *pool);
unsigned long pool__sum_failed(const struct pool_head *pool);
unsigned long pool__sum_cached(const struct pool_head *pool);
unsigned long pool__sum_shared_free(const struct pool_head *pool);

/* swrate: sliding sum over n samples (HAProxy's swrate_add(), include/haproxy/freq_ctr.h). */
static inline unsigned long pool__swrate_next(unsigned long sum, unsigned long n, unsigned long v)
{
	return sum - (sum + n - 1) / n + v;
}

static inline unsigned long pool__swrate_avg(unsigned long sum, unsigned long n)
{
	return (sum + n - 1) / n;
}

/* Debugging (src/pool-debug.c). */
/*
 * pool_parse_debugging() with the help table written to `help_out` (the CLI's answer) and, when
 * `runtime_only` is set, layout options refused as if a pool existed (the CLI changes only the
 * flags that may change at run time).
 */
int pool__parse_debugging(const char *str, char **err, FILE *help_out, int runtime_only);
void pool__debug_init(void);
int pool__debug_fail_roll(struct pool_thread_ctx *ctx);
void pool__debug_on_alloc(struct pool_head *pool, void *obj, unsigned int flags,
                          const void *caller, int from_cache);
void pool__debug_on_free(struct pool_head *pool, void *obj, const void *caller);
/* An object enters a thread cache: integrity pattern (when on) and backup copy (layout). */
void pool__debug_fill_cached(struct pool_head *pool, void *obj);
/* An object leaves a thread cache: check the pattern and the backup; abort on damage. */
void pool__debug_check_cached(struct pool_head *pool, void *obj, const void *caller);
/* Use-after-free allocator: a mapping per object (counted as allocated and used). */
void *pool__uaf_alloc(struct pool_head *pool);
/* An object handed out is freed: checks, uncounts, protects and quarantines it. */
void pool__uaf_free(struct pool_head *pool, void *obj, const void *caller);
/* An object already uncounted goes to quarantine (eviction of a uaf pool's cache). */
void pool__uaf_quarantine(struct pool_head *pool, void *obj, const void *caller);
/* The pool is destroyed: unmap its quarantined objects. */
void pool__uaf_release(struct pool_head *pool);
/* fork(): take the debugging file's locks before, release them after (parent and child). */
void pool__debug_fork_prepare(void);
void pool__debug_fork_after(void);
/* Process-wide defaults from the topology and the environment (src/topology.c). */
void pool__config_defaults(struct pool_config *cfg);

/*
 * Sanitizer and Valgrind annotations (only called when POOL_DBG_SANITIZER is set): a pool is
 * created/destroyed, an object is handed out to the user / comes back from the user, and the
 * library itself touches a free object between pool__san_access() and pool__san_noaccess().
 */
void pool__san_pool_created(struct pool_head *pool);
void pool__san_pool_destroyed(struct pool_head *pool);
void pool__san_handout(struct pool_head *pool, void *obj);
void pool__san_freed(struct pool_head *pool, void *obj);
void pool__san_noaccess(const void *ptr, size_t len);
void pool__san_access(const void *ptr, size_t len);
/* Before a free: abort on an object the sanitizer still sees as free (double free). */
void pool__san_check_free(struct pool_head *pool, void *obj, const void *caller);

/*
 * The crash report: written to stderr with write(2), never allocating or locking, then abort().
 * `expected_tag`/`found_tag` are printed when `expected_tag` is not 0.
 */
__attribute__((noreturn)) void pool__report(const char *what, const struct pool_head *pool,
                                            const void *obj, const void *caller,
                                            uint64_t expected_tag, uint64_t found_tag);

/* Core internals for the debugging file. */
struct pool_thread_ctx *pool__thread_ctx(void);
void *pool__get_object(struct pool_head *pool, struct pool_thread_ctx *ctx);
void pool__put_object(struct pool_head *pool, struct pool_thread_ctx *ctx, void *obj);
void pool__count_os_alloc(struct pool_head *pool, void *obj);
void pool__count_os_release(struct pool_head *pool, void *obj);
int pool__limit_reserve(struct pool_head *pool);
/* pool_set_limit() for a caller that holds pool__list_lock (`pools limit`, from pool_for_each()). */
void pool__set_limit_locked(struct pool_head *pool, size_t max_objects);
void pool__limit_unreserve(struct pool_head *pool);

#endif
