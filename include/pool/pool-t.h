/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool public types.
 *
 * Glossary
 *   pool            a set of fixed-size objects of one type (connections, 16 KiB buffers...).
 *   pool head       struct pool_head: the description of a pool (name, size, alignment, flags,
 *                   limit) followed by its buckets. Opaque to users except for the read-mostly
 *                   part the inline fast path needs (struct pool_head_ro).
 *   thread cache    per thread and per pool, magazines of free objects: the loaded one, which
 *                   the inline fast path pops and pushes (struct pool_tcache, an entry of the
 *                   array pool__tls_cache points to), a previous one and a stack of full ones.
 *                   Only its own thread touches it on the hot path.
 *   magazine        an array of pointers to free objects (Bonwick & Adams 2001).
 *   cluster         the objects one magazine holds: what moves between a thread cache and a
 *                   shared free list with one atomic operation (32 by default, at most 64,
 *                   fewer for large objects). Moving one touches no object.
 *   budget          the bytes one thread may keep in all its thread caches together.
 *   bucket          two cache lines of a pool: the head of a shared free list and the counters
 *                   (allocated, used, free objects, traffic) of the magazines moved through it,
 *                   written only by the thread that owns the head; a pool's totals are sums.
 *   shared free list  per bucket, a stack of magazines, self-locked by swapping a BUSY marker in.
 *   eviction        moving magazines out of a thread cache when the thread is over its budget.
 *   needed_avg      the most objects the pool used over its demand window (decay_ms), as the
 *                   last release pass measured it (the name is HAProxy's, whose pools keep a
 *                   sliding average, swrate, instead of a window over time).
 *   releasable      objects a pool holds beyond what needed_avg says it needs: those that stayed
 *                   in the shared free lists through the whole demand window.
 *   trim            asking the OS layer to return free memory to the system.
 *   releaser        what ends the demand windows and gives back what they found unused: a
 *                   library thread by default, or the program's own calls of pool_release_run().
 *
 * This header holds types, constants and macros only, and includes only other -t.h headers and
 * the C library's.
 */
#ifndef POOL_POOL_T_H
#define POOL_POOL_T_H

#include <stddef.h>
#include <stdint.h>

/*
 * The version of these headers (Semantic Versioning 2.0.0: MAJOR changes break the API or the
 * ABI, MINOR adds to them, PATCH fixes). The Makefile reads the version from these three lines:
 * change it here only. pool_version() returns the version of the library actually loaded.
 */
#define POOL_VERSION_MAJOR  0
#define POOL_VERSION_MINOR  3
#define POOL_VERSION_PATCH  0
#define POOL_VERSION_STRING "0.3.0"
/* One number for comparisons, e.g. #if POOL_VERSION_NUM >= POOL_MKVERSION(0, 2, 0) (MINOR and
 * PATCH stay below 100). */
#define POOL_MKVERSION(major, minor, patch) ((major) * 10000L + (minor) * 100L + (patch))
#define POOL_VERSION_NUM POOL_MKVERSION(POOL_VERSION_MAJOR, POOL_VERSION_MINOR, POOL_VERSION_PATCH)

#if defined(POOL_BUILDING_LIBRARY)
#define POOL_API __attribute__((visibility("default")))
#else
#define POOL_API
#endif

#define POOL_LIKELY(x)   __builtin_expect(!!(x), 1)
#define POOL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define POOL_NOINLINE    __attribute__((noinline))
#define POOL_COLD        __attribute__((cold))
#define POOL_INLINE      static inline __attribute__((always_inline))

/* Creation flags for pool_create() and pool_create_aligned(). */
#define POOL_F_SHARED     0x0001u  /* may be merged with a compatible pool (see pool_create()) */
#define POOL_F_EXACT      0x0002u  /* keep the requested size, do not round it up to 8 bytes */
#define POOL_F_CREATE_MASK (POOL_F_SHARED | POOL_F_EXACT)

/* Allocation flags for pool_alloc_flags(). */
#define POOL_F_MUST_ZERO  0x0100u  /* return the object filled with zeroes */
#define POOL_F_NO_POISON  0x0200u  /* do not poison it even when poisoning is on */
#define POOL_F_NO_FAIL    0x0400u  /* exempt from fault injection (-dMfail) */
#define POOL_F_ALLOC_MASK (POOL_F_MUST_ZERO | POOL_F_NO_POISON | POOL_F_NO_FAIL)

/* Limits. */
#define POOL_NAME_MAX          31u           /* longest pool name, in bytes, without the NUL */
#define POOL_SIZE_MAX          (1ul << 30)   /* largest object layout, in bytes */
#define POOL_MAX_CACHED_POOLS  256u          /* pools with a thread cache; others have none */
#define POOL_MAX_THREADS       4096u         /* threads with a cache at once; others have none */
#define POOL_CLUSTER_DEFAULT   32u           /* objects per magazine: moved together between a
                                                thread cache and the shared lists */
#define POOL_CLUSTER_MAX       64u           /* most objects per magazine */
#define POOL_CACHE_BYTES_MIN   4096u         /* smallest per-thread cache budget, bytes */
#define POOL_DECAY_MS_DEF      10000u        /* default demand window, ms (jemalloc's
                                                dirty_decay_ms) */
#define POOL_DECAY_MS_MAX      3600000u      /* longest demand window, ms (one hour) */

/* How memory return runs (struct pool_config.release, POOL_RELEASE). */
#define POOL_RELEASE_THREAD    1u            /* a library thread, started with the first
                                                allocation (the default) */
#define POOL_RELEASE_CALLER    2u            /* no thread: the program calls pool_release_run() */

/* Debugging flags: the bits of pool_debugging (see pool_parse_debugging()). */
#define POOL_DBG_FAIL        0x0001u  /* random allocation failures */
#define POOL_DBG_NO_MERGE    0x0002u  /* only pools of the same name merge */
#define POOL_DBG_COLD_FIRST  0x0004u  /* hand out the oldest cached object first */
#define POOL_DBG_INTEGRITY   0x0008u  /* fill cached objects with a pattern and check it */
#define POOL_DBG_NO_GLOBAL   0x0010u  /* bypass the shared free lists */
#define POOL_DBG_NO_CACHE    0x0020u  /* bypass the thread caches */
#define POOL_DBG_CALLER      0x0040u  /* store the last caller with each object */
#define POOL_DBG_TAG         0x0080u  /* store the pool's identity past each object */
#define POOL_DBG_POISON      0x0100u  /* fill objects handed out with the poison byte */
#define POOL_DBG_UAF         0x0200u  /* one mapping per object, guard page, quarantine */
#define POOL_DBG_BACKUP      0x0400u  /* keep a copy of freed objects and compare it */
#define POOL_DBG_SANITIZER   0x0800u  /* internal: tell ASan/Valgrind about cached objects */
#define POOL_DBG_PROFILE     0x1000u  /* sampled allocation-site profile (pool_profile_start()):
                                         the inline fast path keeps running */
#define POOL_DBG_FAIL_REPORT 0x2000u  /* report a failed allocation on stderr, once per burst */
#define POOL_DBG_MALLOC      0x4000u  /* each object from the C library's malloc()/free() */
#define POOL_DBG_GUARD       0x8000u  /* a share of the profile's samples between guard pages,
                                         faults reported (implies POOL_DBG_PROFILE) */
/* Flags that change the object layout: fixed once the first pool exists. */
#define POOL_DBG_LAYOUT      (POOL_DBG_CALLER | POOL_DBG_TAG | POOL_DBG_UAF | POOL_DBG_BACKUP | \
                              POOL_DBG_MALLOC)
/* Flags that take the inline fast path out of the way. */
#define POOL_DBG_SLOW        (POOL_DBG_FAIL | POOL_DBG_COLD_FIRST | POOL_DBG_INTEGRITY | \
                              POOL_DBG_NO_CACHE | POOL_DBG_CALLER | POOL_DBG_TAG | \
                              POOL_DBG_POISON | POOL_DBG_UAF | POOL_DBG_BACKUP | \
                              POOL_DBG_SANITIZER | POOL_DBG_MALLOC)

/*
 * The read-mostly part of a pool head that the inline fast path reads. It is the first member of
 * struct pool_head; nothing writes it after pool_create() returns except pool_destroy().
 */
struct pool_head_ro {
	uint32_t cache_off;     /* byte offset of this pool's entry in a thread's cache array */
	uint32_t index;         /* slot of this pool in every thread's cache array, 0: no cache */
	uint32_t flags;         /* POOL_F_* creation flags in effect */
	size_t size;            /* usable object size in bytes */
};

struct pool_head;               /* opaque: defined in src/base/pool-head-t.h */

/*
 * One thread's cache of one pool as the inline fast path sees it: the loaded magazine's pointer
 * array, from `base` to `end`, filled up to `top`. pool_alloc() pops *--top while top > base
 * and `left`, counted down first, stays >= 0; pool_free() stores *top++ while top < end;
 * anything else is the slow path's (an entry of NULLs always sends both there, and so does one
 * closed with base at the highest address and end NULL, whatever its top). Only the owning
 * thread writes it, except at thread exit, in pool_destroy() and after fork(). Statistics read
 * `top` and `base` from other threads with relaxed loads (see POOL__TC_TOP_SET in
 * pool-inline.h). 32 bytes: two entries to a cache line, none across two.
 */
struct pool_tcache {
	void **top;             /* the next free pointer slot of the loaded magazine */
	void **base;            /* its first pointer slot (NULL without a magazine) */
	void **end;             /* one past its last pointer slot */
	long left;              /* allocations the fast path may serve before the profile's next
	                           sample of this pool is due (huge when no profile runs): the
	                           allocation that takes it below 0 goes to the slow path */
} __attribute__((aligned(32)));

/*
 * Statistics of one pool, filled by pool_get_stats(pool, &st, sizeof(st)). Counts are objects
 * unless stated. This structure only grows: a release may append fields at its end, and never
 * removes, reorders or resizes one. pool_get_stats() writes the first `size` bytes only, so a
 * program built against an older header keeps working with a newer library, and one built
 * against a newer header gets 0 in the fields an older library does not know.
 */
struct pool_stats {
	size_t size;            /* usable object size in bytes */
	size_t align;           /* object alignment in bytes */
	size_t stride;          /* bytes each object takes including debugging extras */
	size_t allocated;       /* objects obtained from the OS layer and not given back */
	size_t used;            /* objects handed out plus objects lying free in thread caches */
	size_t cached;          /* approximate objects in thread caches */
	size_t shared_free;     /* objects in the shared free lists */
	size_t needed_avg;      /* the most objects used over the demand window (or used now, if
	                           more): what the pool keeps when it gives memory back */
	size_t failed;          /* allocations that returned NULL */
	size_t limit;           /* maximum allocated objects, 0: none */
	unsigned int creators;  /* pool_create() calls merged into this pool (its creators) */
	unsigned int flags;     /* POOL_F_* creation flags */
	unsigned int buckets;   /* shared-list buckets */
	/* Cumulative traffic below the thread caches since the pool was created (never reset). */
	uint64_t shared_get_objects;   /* objects taken from the shared free lists */
	uint64_t shared_get_clusters;  /* clusters (magazines) taken: one head exchange takes one
	                                  or a few */
	uint64_t shared_put_objects;   /* objects given to the shared free lists */
	uint64_t shared_put_clusters;  /* clusters (magazines) given */
	uint64_t os_allocs;            /* objects obtained from the OS layer */
	uint64_t os_releases;          /* objects given back to the OS layer */
	uint64_t gc_released_bytes;    /* bytes (objects x stride) given back to the OS layer by the
	                                  release passes (automatic and pool_gc()) and pool_flush() */
	uint64_t lost;                 /* objects lost in a fork() child: held BUSY at fork time by a
	                                  thread that died inside its BUSY window (normally 0) */
	/* The slab tier, since 0.3. Objects are carved from slabs the pool takes whole from the OS
	   layer; `allocated` counts the carved objects of the slabs it holds, slab_free among them,
	   and os_allocs and os_releases count objects carved and objects gone back with their slab.
	   The slab figures are 0 for a pool off slabs (uaf, malloc, objects over 504 KiB). */
	size_t slabs;                  /* slabs held */
	size_t slab_bytes;             /* bytes of the slabs held: the pool's memory */
	size_t slab_free;              /* objects back in their slab, free there (in allocated) */
	uint64_t slabs_released;       /* slabs given back whole to the OS layer */
	uint64_t slab_get_objects;     /* objects the shared lists' tier took from the tier below
	                                  them (slabs; the OS layer for a pool off slabs) */
	uint64_t slab_put_objects;     /* objects it gave down to that tier */
	uint64_t slab_purged_bytes;    /* resident bytes of free objects' whole pages given to the
	                                  kernel (madvise(MADV_DONTNEED)) while their slab kept live
	                                  objects; the slabs' address space stays (slab_bytes) */
	/* 0.3, after slab_purged_bytes: */
	size_t reserve;                /* free objects memory return leaves in the shared lists,
	                                  0: none (pool_set_reserve()) */
};

/*
 * The OS layer under every pool, for the whole process: pool_get_os_stats(&os, sizeof(os)).
 * Grows as struct pool_stats does.
 */
struct pool_os_stats {
	const char *layer;        /* "jemalloc" or "libc": where objects come from */
	size_t allocated_bytes;   /* bytes the OS layer has handed out (to all its users, not only
	                             pools), 0 if unknown */
	size_t resident_bytes;    /* bytes the OS layer holds resident, 0 if unknown */
};

/* Process-wide settings for pool_configure(); 0 in a field keeps the current value. */
struct pool_config {
	unsigned int buckets;   /* shared-list buckets per pool: power of two, 1..64 */
	size_t cache_bytes;     /* per-thread cache budget in bytes, 0 or 4096..1 GiB */
	unsigned int cluster;   /* objects per magazine, 1..POOL_CLUSTER_MAX (64); a pool of large
	                           objects uses fewer (see pool_configure()) */
	unsigned int decay_ms;  /* demand window: how long a peak of `used` is remembered, ms,
	                           1..3600000 (see pool_configure()) */
	unsigned int release;   /* who gives memory back: POOL_RELEASE_THREAD or _CALLER (0.3) */
};

/* ------------------------------------------------------------------------------------------ */
/* The allocation-site profile (src/debug/pool-profile.c, pool_profile_start())                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * The mean bytes allocated between two samples of a thread when none is given, in KiB and in
 * bytes (the reasoning behind the figure is in doc/debugging.md, "Profiling where memory is
 * held"), and the largest mean pool_profile_start() and profile=<bytes> take (1 TiB).
 */
#define POOL_PROFILE_RATE_DEF_KIB 512
#define POOL_PROFILE_RATE_DEF     ((size_t)POOL_PROFILE_RATE_DEF_KIB * 1024u)
#define POOL_PROFILE_RATE_MAX     ((size_t)1 << 40)

/* ------------------------------------------------------------------------------------------ */
/* Topology (src/config/topology.c)                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* Where struct pool_topology came from (its `source`). */
#define POOL_TOPO_SYSTEM   0u    /* hwloc discovered this machine */
#define POOL_TOPO_XML      1u    /* hwloc loaded the XML file named by HWLOC_XMLFILE */
#define POOL_TOPO_SYSCONF  2u    /* hwloc failed: counts from sysconf(), see pool_topology() */

/* Bounds of the derived defaults (see pool_topology() for the formulas). */
#define POOL_TOPO_BUCKETS_MIN      8u               /* default buckets, lower bound */
#define POOL_TOPO_BUCKETS_MAX      64u              /* default buckets, upper bound */
#define POOL_TOPO_CACHE_MIN        (256u * 1024u)   /* default cache budget, bytes, lower */
#define POOL_TOPO_CACHE_MAX        (2048u * 1024u)  /* default cache budget, bytes, upper */
#define POOL_TOPO_CACHE_FALLBACK   (512u * 1024u)   /* budget when no L2 size is known */

/*
 * The machine as pool_topology() saw it, and the defaults derived from it. Sizes in bytes; a
 * cache level hwloc (or sysconf) does not report has size 0 and count 0.
 */
struct pool_topology {
	unsigned int source;          /* POOL_TOPO_SYSTEM, POOL_TOPO_XML or POOL_TOPO_SYSCONF */
	const char *xml_file;         /* HWLOC_XMLFILE when set (also if it failed to load), or NULL */
	unsigned int pus;             /* processing units (hardware threads) usable by the process */
	unsigned int cores;           /* cores holding those PUs */
	unsigned int packages;        /* sockets */
	unsigned int numa_nodes;      /* NUMA nodes (memory), at least 1 */
	unsigned int cache_line;      /* data cache line size, bytes (64 when unknown) */
	size_t l1d_bytes;             /* size of one L1 data (or unified) cache */
	size_t l2_bytes;              /* size of one L2 cache (the first one) */
	size_t l3_bytes;              /* size of one L3 cache (the first one) */
	unsigned int l2_count;        /* L2 caches */
	unsigned int l3_count;        /* L3 caches */
	size_t l2_per_pu_bytes;       /* sum of all L2 sizes / pus: the input of the cache budget */
	unsigned int default_buckets; /* derived bucket count (before any override) */
	size_t default_cache_bytes;   /* derived per-thread cache budget, bytes (before overrides) */
	unsigned long load_us;        /* wall-clock time the load took, microseconds */
	unsigned long load_cpu_us;    /* CPU time (user + system) of the load, microseconds */
};

/* ------------------------------------------------------------------------------------------ */
/* Introspection and command line interface (src/introspect/pool-dump.c, src/introspect/pool-cli.c)                 */
/* ------------------------------------------------------------------------------------------ */

#define POOL_CLI_LINE_MAX        4096u    /* longest command line on the socket, in bytes */
#define POOL_CLI_TIMEOUT_MS_DEF  10000u   /* a silent socket client is closed after this (ms) */
#define POOL_CLI_TIMEOUT_MS_MAX  3600000u /* largest timeout pool_cli_set_timeout_ms() takes */
#define POOL_CLI_MAX_CLIENTS     64u      /* socket clients served at once, all listeners */
#define POOL_CLI_MAX_LISTENERS   4u       /* sockets one process serves at once */
#define POOL_CLI_READ_TIMEOUT_MS 1000u    /* a client that started a line must end it this fast */

/*
 * Access levels of the command line, as HAProxy's stats socket has them (its "level user",
 * "level operator", "level admin"): each level may run what the levels below it may.
 *   POOL_CLI_USER      read-only: pools show (no addresses), pools topology, pools debug with
 *                      no options (or `help`), help.
 *   POOL_CLI_OPERATOR  and memory return: pools trim, pools flush. Changes no behaviour.
 *   POOL_CLI_ADMIN     and what changes behaviour or reveals addresses: pools debug <options>,
 *                      pools limit, and the heap and code addresses in pools show.
 */
enum pool_cli_level {
	POOL_CLI_USER = 1,
	POOL_CLI_OPERATOR = 2,
	POOL_CLI_ADMIN = 3,
};

#endif /* POOL_POOL_T_H */
