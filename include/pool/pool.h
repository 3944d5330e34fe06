/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool: fixed-size object pools with thread-local caches over bucketed, self-locked shared
 * free lists, for event-driven servers on many threads.
 *
 * Link with `pkg-config --cflags --libs libpool`. Every function here is thread-safe unless its
 * comment says otherwise. Sizes are in bytes.
 */
#ifndef POOL_POOL_H
#define POOL_POOL_H

#include <stdio.h>
#include <string.h>
#include <pool/pool-t.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The debugging flags in effect (POOL_DBG_*). Read-mostly; change it with pool_parse_debugging(). */
POOL_API extern unsigned int pool_debugging;

/*
 * The calling thread's caches, indexed by pool (an array of POOL_MAX_CACHED_POOLS entries), or
 * an array of empty entries until the thread first reaches a slow path and whenever it works
 * without a cache. Internal to the inline fast path below: do not touch. It is one pointer of
 * initial-exec TLS, small enough for glibc's static TLS surplus, so the library may be dlopen()ed.
 */
POOL_API extern __thread struct pool_tcache *pool__tls_cache
	__attribute__((tls_model("initial-exec")));

/*
 * pool_version - the version of the libpool library loaded at run time, as "MAJOR.MINOR.PATCH"
 * (e.g. "0.1.0"). It is the version the library was built as, which differs from
 * POOL_VERSION_STRING (the version of the headers the caller was compiled with) when the
 * program was built against other headers than the shared library it runs with; compare the
 * two to detect that. Returns a pointer to a static, NUL-terminated string that stays valid
 * while the library is loaded; never NULL. Cannot fail; thread-safe; async-signal-safe.
 */
POOL_API const char *pool_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Creating and destroying pools                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_create - create a pool of objects of `size` bytes, aligned like malloc() (16 bytes).
 * Same as pool_create_aligned(name, size, 0, flags).
 */
POOL_API struct pool_head *pool_create(const char *name, size_t size, unsigned int flags);

/*
 * pool_create_aligned - create (or join, see POOL_F_SHARED) a pool.
 *
 * `name`: 1 to 31 bytes of [A-Za-z0-9_.-], copied. `size`: usable bytes per object, 1 to 1 GiB,
 * rounded up to a multiple of 8 unless POOL_F_EXACT is given (objects always hold at least 16
 * bytes internally). `align`: 0 for the default (16), else a power of two no larger than the page
 * size; smaller than 16 is raised to 16. `flags`: POOL_F_SHARED and/or POOL_F_EXACT.
 *
 * With POOL_F_SHARED, the call may return an existing POOL_F_SHARED pool instead of a new one
 * (its `users` count grows by one): same alignment, sizes within 1% or 16 bytes of each other,
 * and, once that pool has allocated an object, only for exactly the same size. The merged pool
 * takes the larger size. With the `no-merge` debugging option only pools of the same name merge.
 *
 * Returns the pool head, or NULL with errno set: EINVAL for a NULL, empty, too long or badly
 * formed name, a size of 0, a layout (size plus debugging extras, rounded to the alignment) over
 * 1 GiB or overflowing, unknown flags, or an alignment that is not a power of two or is larger
 * than the page size; ENOMEM when the pool head cannot be allocated.
 * Thread-safe (creation is serialised by a global lock; never on a hot path).
 */
POOL_API struct pool_head *pool_create_aligned(const char *name, size_t size, size_t align,
                                               unsigned int flags);

/*
 * pool_destroy - drop one creator of a pool; the last one destroys it.
 *
 * Must be called when no other thread allocates from or frees to the pool. When other creators
 * remain (merged pools), returns 0 and changes nothing else. For the last creator: drains every
 * thread's cache of this pool, gives all free objects back to the OS layer and retires the
 * head, returning 0. If objects are still handed out, returns -1 with errno = EBUSY and leaves
 * the pool intact and usable.
 *
 * A destroyed head is marked dead and kept readable until 16 more pools have been destroyed, so
 * that misuse is reported rather than corrupting memory: destroying it again returns -1 with
 * errno = EINVAL, and pool_alloc(), pool_zalloc(), pool_free() and the bulk calls on it abort
 * with a report "use of a destroyed pool" naming the pool and the caller (a late caller's fast
 * path always falls to the slow path, which checks); pool_get_stats(), pool_set_limit() fail
 * with EINVAL, pool_name() returns NULL and pool_object_size() 0, pool_gc() and pool_flush() do
 * nothing. Past those 16, using the head is undefined. NULL: returns -1 with errno = EINVAL.
 */
POOL_API int pool_destroy(struct pool_head *pool);

/*
 * POOL_DECLARE(var, name, size) - declare `struct pool_head *var`, a POOL_F_SHARED pool of
 * `size`-byte objects named `name`, created before main() (after POOL_DEBUG was read). If
 * creation fails, the program prints the reason on stderr and exits with status 1 before main()
 * runs.
 *
 * At exit (the destructor, when main() returns or exit() is called, or when a library holding
 * it is unloaded) the exiting thread's cached objects go back to the shared lists
 * (pool_thread_flush()), and that is all: the pool is never destroyed then, because other
 * threads (detached workers, or threads of another library) may still allocate from it while
 * the process exits. Its memory goes with the process; leak checkers (LeakSanitizer, Valgrind)
 * see the pool head as reachable through `var`. Call pool_destroy(var) yourself where you know
 * that no thread uses the pool any more.
 */
#define POOL_DECLARE(var, name, size)                                                  \
	struct pool_head *var;                                                          \
	__attribute__((constructor(201))) static void pool_declare_init_##var(void)    \
	{ var = pool__declare_create(name, size); }                                     \
	__attribute__((destructor(201))) static void pool_declare_exit_##var(void)     \
	{ pool__declare_destroy(var); }

/*
 * Internal to POOL_DECLARE: create or exit(1) with a message; at exit, flush the calling
 * thread's caches and leave the pool alone (the name stays for the ABI).
 */
POOL_API struct pool_head *pool__declare_create(const char *name, size_t size);
POOL_API void pool__declare_destroy(struct pool_head *pool);

/* ------------------------------------------------------------------------------------------ */
/* Allocating and freeing                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Out-of-line slow paths of the inline functions below: do not call them directly. */
POOL_API void *pool__alloc_slow(struct pool_head *pool, unsigned int flags);
POOL_API void pool__free_slow(struct pool_head *pool, void *ptr);

/*
 * The slow paths record their return address as the caller shown by `caller` debugging and in
 * reports. The empty asm after each call keeps the compiler from turning it into a jump when
 * pool_alloc()/pool_free() ends a function, which would show that function's caller instead.
 * It emits no instruction.
 */
POOL_INLINE void *pool__alloc_call(struct pool_head *pool, unsigned int flags)
{
	void *obj = pool__alloc_slow(pool, flags);

	__asm__ volatile("" : "+r"(obj));
	return obj;
}

POOL_INLINE void pool__free_call(struct pool_head *pool, void *ptr)
{
	pool__free_slow(pool, ptr);
	__asm__ volatile("" ::: "memory");
}

/* This thread's cache entry for a pool: the TLS array plus the pool's precomputed byte offset. */
#define POOL__TCACHE(ro) \
	((struct pool_tcache *)((char *)pool__tls_cache + (ro)->cache_off))

/*
 * The fast path updates `room` with a plain read-modify-write (one instruction on x86). Other
 * threads read it only for statistics, tolerating a stale value; under ThreadSanitizer the
 * update is a relaxed atomic one, so that this tolerated race is not reported.
 */
#if defined(__SANITIZE_THREAD__)
#define POOL_TC_ROOM_ADD(tc, n) \
	__atomic_store_n(&(tc)->room, (tc)->room + (uint32_t)(n), __ATOMIC_RELAXED)
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL_TC_ROOM_ADD(tc, n) \
	__atomic_store_n(&(tc)->room, (tc)->room + (uint32_t)(n), __ATOMIC_RELAXED)
#endif
#endif
#ifndef POOL_TC_ROOM_ADD
#define POOL_TC_ROOM_ADD(tc, n) ((tc)->room += (uint32_t)(n))
#endif

/*
 * pool_alloc_flags - get one object from `pool`.
 *
 * `flags`: POOL_F_MUST_ZERO (zero-filled), POOL_F_NO_POISON (never poisoned), POOL_F_NO_FAIL
 * (exempt from -dMfail). Returns an object of pool_object_size() bytes aligned as requested at
 * creation, or NULL when the pool is at its limit, the OS layer is out of memory, or fault
 * injection fired; every NULL is counted in the pool's `failed` counter and errno is set to
 * ENOMEM. Thread-safe; on the fast path (object in this thread's cache, no debugging) it is a
 * pop from a thread-local list: no atomic, no lock, no call. `pool` must be a pool from
 * pool_create(): the fast path reads it without a check, so NULL faults (SIGSEGV) there; a
 * destroyed pool is reported (see pool_destroy()).
 */
POOL_INLINE void *pool_alloc_flags(struct pool_head *pool, unsigned int flags)
{
	const struct pool_head_ro *ro = (const struct pool_head_ro *)pool;
	struct pool_tcache *tc;
	void **item;

	if (POOL_UNLIKELY(pool_debugging & POOL_DBG_SLOW))
		return pool__alloc_call(pool, flags);
	tc = POOL__TCACHE(ro);
	item = (void **)tc->head;
	if (POOL_UNLIKELY(!item))
		return pool__alloc_call(pool, flags);
	tc->head = *item;
	POOL_TC_ROOM_ADD(tc, 1);
	if (flags & POOL_F_MUST_ZERO)
		memset(item, 0, ro->size);
	return item;
}

/* pool_alloc - pool_alloc_flags(pool, 0). */
POOL_INLINE void *pool_alloc(struct pool_head *pool)
{
	return pool_alloc_flags(pool, 0);
}

/*
 * pool_zalloc - pool_alloc_flags(pool, POOL_F_MUST_ZERO): a zero-filled object, or NULL. Inline
 * like pool_alloc(): a pop from this thread's cache, then a memset() of pool_object_size()
 * bytes.
 */
POOL_INLINE void *pool_zalloc(struct pool_head *pool)
{
	return pool_alloc_flags(pool, POOL_F_MUST_ZERO);
}

/*
 * pool_free - give `ptr`, obtained from `pool`, back. NULL is a no-op.
 *
 * Any thread may free an object allocated by another. The object goes to this thread's cache; a
 * thread over its cache budget evicts its coldest objects to the shared lists or the OS layer.
 * Freeing into the wrong pool or twice is undefined unless a debugging check (tag, uaf) is on,
 * which then aborts with a report naming the pool, the object, the check and the caller.
 */
POOL_INLINE void pool_free(struct pool_head *pool, void *ptr)
{
	const struct pool_head_ro *ro = (const struct pool_head_ro *)pool;
	struct pool_tcache *tc;

	if (POOL_UNLIKELY(!ptr))
		return;
	tc = POOL__TCACHE(ro);
	if (POOL_UNLIKELY((pool_debugging & POOL_DBG_SLOW) || !tc->room)) {
		pool__free_call(pool, ptr);
		return;
	}
	*(void **)ptr = tc->head;
	tc->head = ptr;
	POOL_TC_ROOM_ADD(tc, -1);
	tc->referenced = 1;
}

/*
 * pool_alloc_bulk - allocate `n` objects into objs[0..n-1], all or nothing.
 *
 * Without per-object debugging, the objects come from this thread's cache first, then whole
 * clusters from the shared free lists (one atomic exchange per cluster) or the OS layer; what a
 * cluster holds beyond the request refills the cache. Returns `n`; or 0 when they cannot all
 * be had (the pool's limit, no memory, -dMfail on one of them): then no object is handed out
 * (those already taken go back), objs[] is left with unspecified pointers, one failure is
 * counted and errno is ENOMEM. 0 also for a NULL pool or objs, or n = 0 (errno unchanged). On a
 * destroyed pool: the report of pool_destroy(). Thread-safe.
 */
POOL_API size_t pool_alloc_bulk(struct pool_head *pool, void **objs, size_t n);

/*
 * pool_free_bulk - give objs[0..n-1] back to `pool` (NULL entries are skipped), as pool_free()
 * does for each: into this thread's cache in one splice when its budget holds them, otherwise as
 * clusters to the shared free lists with one atomic exchange. Nothing happens for a NULL pool or
 * objs. Thread-safe.
 */
POOL_API void pool_free_bulk(struct pool_head *pool, void **objs, size_t n);

/* ------------------------------------------------------------------------------------------ */
/* Memory return                                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_flush - give every object in `pool`'s shared free lists back to the OS layer, whatever
 * the pool's need. Objects in thread caches and handed out are not touched. A bucket held BUSY
 * by another thread for longer than a bounded number of yields (about 100000) is skipped. NULL
 * or a destroyed pool: no-op. Thread-safe.
 */
POOL_API void pool_flush(struct pool_head *pool);

/*
 * pool_gc - release what a pool does not need, now.
 *
 * A pool tracks its demand over time: each shared free list keeps the low-water mark of its
 * free objects over half-windows of decay_ms / 2 (pool_configure(), POOL_DECAY_MS; 10 s by
 * default), and objects that stayed free through two half-windows in a row were not needed. The
 * library gives those back by itself when a half-window ends and the pool is in use (a slow
 * path notices). pool_gc() ends the current half-window at once and gives back what stayed free
 * through it and the previous one, beyond a floor of min(one cluster, 64 KiB) of objects (at
 * least one), then trims the OS layer (see pool_trim()). So after load drops, a pool_gc() call
 * keeps what the load just used, and the next one, once the pool stayed idle in between, gives
 * the rest back: call it periodically (or twice) to give a spike back at once. needed_avg
 * becomes the most objects used over that window. NULL: every pool. Never call it on a hot
 * path: it visits every bucket, waits for busy ones a bounded time, and may take milliseconds.
 * Thread-safe.
 */
POOL_API void pool_gc(struct pool_head *pool);

/*
 * pool_thread_flush - give the calling thread's cached objects of every pool back to the shared
 * free lists (or to the OS layer where a pool holds more than it needs). The thread may keep
 * using pools afterwards. Call it from a thread that goes idle; threads that exit do it
 * automatically. Only affects the calling thread.
 */
POOL_API void pool_thread_flush(void);

/* ------------------------------------------------------------------------------------------ */
/* Limits, statistics, iteration                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_set_limit - cap the objects `pool` may hold from the OS layer at `max_objects` (0: no
 * limit). Past the cap, allocations return NULL and count a failure until objects come back.
 * The cap is exact when set before the pool is shared between threads; set later, allocations
 * already past the check may exceed it once. Returns 0, or -1 with errno = EINVAL for NULL.
 */
POOL_API int pool_set_limit(struct pool_head *pool, size_t max_objects);

/*
 * pool_get_stats - fill *st with `pool`'s counters (see struct pool_stats). Counters are read
 * without stopping any thread, so they are a consistent-enough snapshot, not an atomic one.
 * Returns 0, or -1 with errno = EINVAL if pool or st is NULL. Thread-safe.
 */
POOL_API int pool_get_stats(const struct pool_head *pool, struct pool_stats *st);

/* pool_name - the pool's name (of its first creator when merged); NULL for NULL. Thread-safe. */
POOL_API const char *pool_name(const struct pool_head *pool);

/* pool_object_size - usable bytes per object; 0 for NULL. Thread-safe. */
POOL_API size_t pool_object_size(const struct pool_head *pool);

/*
 * pool_for_each - call fn(pool, arg) for every pool, in creation order, until fn returns
 * non-zero. Pools are not created or destroyed while it runs (it holds the pool list lock), so
 * fn must not call pool_create() or pool_destroy(). Thread-safe.
 */
POOL_API void pool_for_each(int (*fn)(struct pool_head *pool, void *arg), void *arg);

/*
 * pool_configure - set process-wide defaults before the first pool is created: buckets per pool
 * (power of two, 1..64), per-thread cache budget in bytes (4096..1 GiB), objects per cluster
 * (1..16), demand window decay_ms in milliseconds (1..POOL_DECAY_MS_MAX = 1 hour; default
 * POOL_DECAY_MS_DEF = 10 s, or the environment variable POOL_DECAY_MS); a 0 field keeps the
 * current value. Returns 0, or -1 with errno = EINVAL for a value
 * out of range or a NULL cfg (nothing is changed), EBUSY once a pool exists.
 * pool_get_config() fills *cfg with the values in effect.
 */
POOL_API int pool_configure(const struct pool_config *cfg);
POOL_API void pool_get_config(struct pool_config *cfg);

/* ------------------------------------------------------------------------------------------ */
/* Debugging (src/pool-debug.c)                                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_parse_debugging - change the debugging flags from a -dM style string.
 *
 * Syntax (HAProxy's -dM): an optional leading number is the poison byte and turns poisoning on
 * (the empty string: 0x50; a negative number: poisoning off), then comma-separated words applied
 * left to right, each with a set and a clear form: fail[=<percent 0..100>]/no-fail,
 * no-merge/merge, cold-first/hot-first, integrity/no-integrity, no-global/global,
 * no-cache/cache, caller/no-caller, tag/no-tag, poison[=<byte>]/no-poison, uaf/no-uaf,
 * backup/no-backup, and help. `uaf` implies no-cache unless `cache` follows it.
 *
 * The whole string is validated before anything is applied. Returns 0 when applied; 1 when it
 * held `help`: the table was printed on stdout and nothing changed; -1 with errno = EINVAL and
 * nothing changed for an unknown word, a malformed value, or a layout option (tag, caller, uaf,
 * backup) that would change while a pool exists. On -1, if `err` is not NULL, *err receives a
 * message naming the offending word ("unknown pool debugging option 'bogus'"), allocated with
 * malloc() (free() it; NULL if that allocation failed); otherwise *err is set to NULL.
 * Thread-safe: the new word is published atomically; threads see it on their next call.
 */
POOL_API int pool_parse_debugging(const char *str, char **err);

/*
 * pool_debugging_help - print the options table (set and clear names, '*' on the side in effect,
 * a description each) and examples to `out`. NULL: no-op. Thread-safe.
 */
POOL_API void pool_debugging_help(FILE *out);

/*
 * pool_debugging_show - print the options in effect on one line, in the parser's syntax (e.g.
 * "no-fail,merge,hot-first,...,poison=0x50,..."), so that it can be fed back to
 * pool_parse_debugging(). NULL: no-op. Thread-safe.
 */
POOL_API void pool_debugging_show(FILE *out);

/* pool_debugging_poison_byte - the byte `poison` fills objects with (0..255). Thread-safe. */
POOL_API unsigned int pool_debugging_poison_byte(void);

/* ------------------------------------------------------------------------------------------ */
/* Topology, defaults and trim (src/topology.c)                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_topology - the machine's topology and the defaults derived from it.
 *
 * Loaded once, on the first call (the library calls it before its first pool or thread cache),
 * with hwloc (https://www.open-mpi.org/projects/hwloc/): I/O objects (PCI, OS devices) are
 * filtered out, so only CPUs, caches and memory are discovered. If HWLOC_XMLFILE is set and not
 * empty, that XML file is loaded instead of this machine (source POOL_TOPO_XML), as the tests do
 * with the machines in tests/topologies/. Measured cost of the load on the 2-PU KVM guest we
 * develop on: 2.7-4.3 ms of CPU, 3.6 ms of wall time at best (doc/tuning.md); `load_us` and
 * `load_cpu_us` hold the times of the actual load.
 *
 * If hwloc fails (no memory, a missing or malformed HWLOC_XMLFILE...), the topology comes from
 * sysconf(): PUs = _SC_NPROCESSORS_ONLN, one core per PU, one package, one NUMA node, the cache
 * sizes glibc reports (_SC_LEVEL1_DCACHE_SIZE...), one L2 per PU; `source` is POOL_TOPO_SYSCONF
 * and one message goes to stderr: "libpool: hwloc could not load the topology (<why>); using
 * sysconf(): ...". It is never printed again.
 *
 * Derived defaults (the values before POOL_BUCKETS, POOL_CACHE_SIZE and pool_configure()):
 *   default_buckets     = the largest power of two <= pus, clamped to 8..64.
 *     Each thread starts its pushes and pops at its own bucket, so with one bucket per one or
 *     two PUs two threads rarely meet on one shared-list head. HAProxy measured gains up to 64
 *     buckets on 80 threads (its shared pool buckets, CONFIG_HAP_POOL_BUCKETS); past 64 the
 *     stats sums and pool_gc() walks grow with no measured gain. 8 keeps small machines (and
 *     their helper threads) out of each other's way for 512 bytes per pool.
 *   default_cache_bytes = l2_per_pu_bytes (sum of L2 sizes / pus), rounded down to 4 KiB,
 *     clamped to 256 KiB..2 MiB; 512 KiB when no L2 is known.
 *     A thread cache holds recently freed objects so that the next allocation gets a line that
 *     is still in this core's private cache; caching more than the L2 share of the hardware
 *     thread mostly keeps cold memory away from other threads. 512 KiB is HAProxy's per-thread
 *     default (CONFIG_HAP_POOL_CACHE_SIZE); 256 KiB still holds 16 buffers of 16 KiB (two
 *     clusters); 2 MiB bounds what a thread pins (384 threads x 2 MiB = 768 MiB).
 *
 * Returns a pointer to a process-lifetime structure, never NULL. Thread-safe (pthread_once);
 * the hwloc topology stays loaded for pool_topology_bind_thread().
 */
POOL_API const struct pool_topology *pool_topology(void);

/*
 * pool_topology_bind_thread - bind the calling thread to one PU, chosen round-robin over cores
 * first, then over the hardware threads of each core: index i goes to core (i mod cores), its
 * ((i / cores) mod PUs-of-that-core)-th PU, so that the first `cores` threads get a core each.
 *
 * Returns 0 when bound. Returns -1 and leaves the thread unbound (the caller carries on) with
 * errno = ENOTSUP when the topology is not this machine's (loaded from HWLOC_XMLFILE), or the
 * errno of the failed binding call where binding is not allowed or not supported: EPERM, EINVAL
 * (the PU is outside the process's allowed CPUs), ENOSYS or EXDEV (hwloc_set_cpubind(3)). With
 * the sysconf() fallback, index i binds to the (i mod n)-th CPU the process may run on
 * (pthread_setaffinity_np). Thread-safe.
 */
POOL_API int pool_topology_bind_thread(unsigned int index);

/*
 * pool_topology_show - print to `out` what pool_topology() found (source, PUs, cores, packages,
 * NUMA nodes, cache line, cache sizes, load time), the defaults derived from it with their
 * formulas, and the configuration in effect after overrides (pool_get_config()). Used by the
 * `pools topology` command and `pool-topology`. NULL: no-op. Thread-safe.
 */
POOL_API void pool_topology_show(FILE *out);

/*
 * pool_trim - ask the OS layer to give free memory back to the system: with jemalloc, a purge of
 * every arena (mallctl "arena.<MALLCTL_ARENAS_ALL>.purge": madvise() of its dirty pages); with
 * the C library, malloc_trim(0). Pool objects are not touched: pool_gc() releases them first
 * and then trims. Cost: a system call per run of free pages, so it grows with the free memory
 * the allocator holds; measured (doc/tuning.md): 5-8 us with nothing to return, 8.5 ms with
 * jemalloc after 64 MiB of 16 KiB objects were freed (glibc returns most at free() already).
 * Never call it on a hot path. Thread-safe; cannot fail.
 */
POOL_API void pool_trim(void);

/* ------------------------------------------------------------------------------------------ */
/* Introspection: `pools show` (src/pool-dump.c) and the command line (src/pool-cli.c)        */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_dump - write `pools show` for every pool to `out`.
 *
 * `args`: the words after "pools show", separated by blanks, in any order, each at most once
 * (NULL or "" for none):
 *   byname | bysize | byusage   sort by name (then creation order), by object size (largest
 *                               first), or by bytes allocated (largest first; pools with nothing
 *                               allocated are left out); default: creation order.
 *   detailed                    (text, json) add each pool's stride, buckets, shared free
 *                               objects and limit, one line per merged pool_create() call (name,
 *                               requested size, alignment, flags), and, for pools created with
 *                               `caller` debugging, the (up to 5) callers with the most live
 *                               objects, resolved with dladdr(3) to symbol+offset.
 *   match <prefix>              only pools whose name starts with <prefix> (compared bytewise).
 *   <max>                       a decimal number >= 1: only the first <max> pools after sorting
 *                               and filtering; the header then says "(limited to the first <max>
 *                               entries)", only when pools were left out.
 *   json | prometheus           the format (default: text). doc/pools-show.md documents the text
 *                               lines, the JSON schema and the Prometheus metrics.
 * Object sizes are usable bytes; byte figures are objects times the stride (object plus
 * debugging extras, rounded to the alignment).
 *
 * The pools are copied under the pool list lock (pool_for_each()), so a pool created, merged into
 * or destroyed meanwhile appears whole or not at all; counters are read without stopping any
 * thread and no pool's allocation path is called or locked. `out` is written after the lock is
 * released. Thread-safe.
 *
 * Returns 0. On error returns -1 with errno set: EINVAL when `out` is NULL (nothing written) or
 * `args` is bad (an unknown word, two sort orders or formats, a word given twice, `match`
 * without a prefix, a count that is 0, not a number or too large, `detailed` with
 * `prometheus`): then one error line naming the word, ending "Try 'help'.", is written to `out`
 * and nothing else; ENOMEM when the copy cannot be allocated (one line says so); or the errno of
 * a failed write to `out` (EIO if the stream did not set one).
 */
POOL_API int pool_dump(FILE *out, const char *args);

/*
 * pool_cli_exec - run one command line and write its answer to `out`.
 *
 * `line`: words separated by blanks (space, tab, CR, LF: a trailing "\r\n" and extra blanks
 * are ignored; the socket server splits lines before they get here).
 *   help                     the list of commands.
 *   pools show [args]        pool_dump(out, args).
 *   pools trim               pool_gc(NULL), then "Released N bytes to the OS layer (the pools
 *                            held B bytes, now A)." where B and A are the sums of allocated *
 *                            stride over every pool before and after, and N = B - A (0 if other
 *                            threads allocated more meanwhile).
 *   pools debug              the debugging options in effect (pool_debugging_show()).
 *   pools debug <options>    pool_parse_debugging(<options>) for the options that may change
 *                            at run time: the same syntax and error messages, except that
 *                            layout options (tag, caller, uaf, backup) are refused whenever
 *                            they would change a flag, even before the first pool exists;
 *                            `help` among them writes the options table to `out` and changes
 *                            nothing. On success, "Pool debugging options now: <options>".
 *   pools topology           pool_topology_show(out): the topology and the defaults from it.
 * A line of blanks only does nothing and returns 0.
 *
 * Returns 0 on success. Returns -1 with errno = EINVAL, having changed nothing, for a NULL `line`
 * or `out` (nothing written), an unknown command or an extra word ("Unknown command '<word>'.
 * Try 'help'."), bad `pools show` arguments (see pool_dump()), or bad debugging options (the
 * parser's message, one line). Client bytes echoed in an error are kept printable (\xNN) and cut
 * after 64 bytes. ENOMEM or a write error as for pool_dump(). Thread-safe.
 */
POOL_API int pool_cli_exec(const char *line, FILE *out);

/*
 * pool_cli_listen - serve pool_cli_exec() on a UNIX stream socket at `unix_path`, from one
 * background thread, until pool_cli_stop().
 *
 * Protocol: one command per line (at most POOL_CLI_LINE_MAX = 4096 bytes before the "\n"; a
 * "\r" before it is ignored); each answer is followed by one empty line and never contains
 * one (empty lines of an answer are dropped), so `socat - UNIX-CONNECT:<path>` works
 * interactively. Commands of one client run in order; a client may pipeline lines. Two
 * commands exist only on the socket: "quit" closes the connection, "set status on|off" makes
 * each following answer end with a line "OK" or "ERROR" (as pool_cli_exec() returned) before
 * the empty line (the `pools` tool uses it). A line holding a NUL byte is refused with an
 * error answer. A line over 4096 bytes gets "Line too long (over 4096 bytes): closing." and the
 * connection is closed. A client that neither sends nor reads a byte for the timeout (see
 * pool_cli_set_timeout_ms()) is closed. Up to POOL_CLI_MAX_CLIENTS (64) clients are served at
 * once; more get "Too many clients: try again later." and are closed. No client can block
 * another (one poll(2) loop, non-blocking sockets, one pending answer per client), and sends
 * use MSG_NOSIGNAL so a client that goes away raises no SIGPIPE. The thread blocks every
 * asynchronous signal.
 *
 * The socket file is created with mode 0600 before the socket listens. An existing socket
 * file nobody listens on (stale: connect() is refused) is replaced.
 *
 * After fork(), the child has no server: it closes its copies of the server's descriptors, leaves
 * the socket file to the parent, and may call pool_cli_listen() for a socket of its own.
 *
 * Returns 0 when the thread serves. Returns -1 with errno set and nothing left behind:
 * EINVAL for a NULL or empty path; ENAMETOOLONG for a path of 108 bytes or more (sun_path);
 * EBUSY when this process already serves a socket (stop it first); EEXIST when `unix_path`
 * exists and is not a socket (it is left untouched) or appeared between the check and bind();
 * EADDRINUSE when a process serves that socket; or the errno of lstat(), unlink(), socket(),
 * bind(), chmod(), listen(), pipe2() or pthread_create() (e.g. EACCES, ENOENT for a missing
 * directory, EAGAIN); ENOMEM. Thread-safe with pool_cli_stop().
 */
POOL_API int pool_cli_listen(const char *unix_path);

/*
 * pool_cli_stop - stop the server started by pool_cli_listen(): wake and join its thread,
 * close every client (answers not yet sent are lost) and the listening socket, and remove the
 * socket file if it is still ours (same device and inode). No-op when no server runs.
 * Blocks until the thread has exited, at most the time of the command it is running. Must not
 * be called from a command run by the server (there is no way to do that from a client).
 * Thread-safe.
 */
POOL_API void pool_cli_stop(void);

/*
 * pool_cli_set_timeout_ms - close socket clients silent for `timeout_ms` milliseconds (neither
 * a byte received nor a byte of an answer sent). Default POOL_CLI_TIMEOUT_MS_DEF (10 s). Takes
 * effect at once, also for a running server and its clients. Returns 0, or -1 with errno =
 * EINVAL (nothing changed) for 0 or more than POOL_CLI_TIMEOUT_MS_MAX (1 hour). Thread-safe.
 */
POOL_API int pool_cli_set_timeout_ms(unsigned int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* POOL_POOL_H */
