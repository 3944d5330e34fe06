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
 * (its `creators` count grows by one): same alignment, sizes within 1% or 16 bytes of each other,
 * and, once that pool has allocated an object, only for exactly the same size. The merged pool
 * takes the larger size. With the `no-merge` debugging option only pools of the same name merge.
 *
 * Returns the pool head, or NULL with errno set: EINVAL for a NULL, empty, too long or badly
 * formed name, a size of 0, a layout (size plus debugging extras, rounded to the alignment) over
 * 1 GiB or overflowing, unknown flags, or an alignment that is not a power of two or is larger
 * than the page size; ENOMEM when the pool head cannot be allocated.
 * Thread-safe (creation is serialised by a global lock; never on a hot path); may be called from
 * a pool_for_each() callback. With jemalloc it reads RLIMIT_AS (one system call), so that a
 * limit the program set after the library was loaded guards the first calls of its threads.
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
 * The library tells live heads from others by the set of heads it created, without reading the
 * memory a pointer points to, so all this holds in sandboxes that refuse process_vm_readv(2).
 * May be called from a pool_for_each() callback, on any pool.
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
 * The fast path updates `room` with a plain read-modify-write (one instruction on x86) and reads
 * the debugging word with a plain load. Other threads read `room` only for statistics,
 * tolerating a stale value, and a thread that reads the debugging word a little late takes one
 * more fast path (every slow path rereads it with acquire): both races are meant. Under
 * ThreadSanitizer both accesses are relaxed atomic ones, so that these tolerated races are not
 * reported.
 */
#if defined(__SANITIZE_THREAD__)
#define POOL__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL__TSAN 1
#endif
#endif
#ifdef POOL__TSAN
#define POOL_TC_ROOM_ADD(tc, n) \
	__atomic_store_n(&(tc)->room, (tc)->room + (uint32_t)(n), __ATOMIC_RELAXED)
#define POOL__DEBUGGING() __atomic_load_n(&pool_debugging, __ATOMIC_RELAXED)
#else
#define POOL__DEBUGGING() (pool_debugging)
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

	if (POOL_UNLIKELY(POOL__DEBUGGING() & POOL_DBG_SLOW))
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
 * thread over its cache budget evicts objects of its coldest pools (a CLOCK) to the shared free
 * lists, in clusters (to the OS layer only with the no-global or uaf debugging options, or when
 * every shared list stays busy).
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
	/*
	 * `room` is tested through a relaxed atomic load, which the compiler keeps apart from the
	 * decrement below: the decrement is then one read-modify-write of memory instead of a
	 * subtraction and a store (callgrind: 19 instructions per alloc+free pair net, 20 without).
	 */
	if (POOL_UNLIKELY((POOL__DEBUGGING() & POOL_DBG_SLOW) ||
	                  !__atomic_load_n(&tc->room, __ATOMIC_RELAXED))) {
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
 * Without per-object debugging, the objects come from this thread's bulk magazine for the pool
 * (what pool_free_bulk() put there: a copy of the pointers, the objects untouched), or from its
 * cache list, then whole clusters from the shared free lists (one atomic exchange per cluster)
 * or the OS layer; what a cluster holds beyond the request refills the cache. Returns `n`; or 0 when they cannot all
 * be had (the pool's limit, no memory, -dMfail on one of them): then no object is handed out
 * (those already taken go back), objs[] is left with unspecified pointers, one failure is
 * counted and errno is ENOMEM. 0 also for a NULL pool or objs, or n = 0 (errno unchanged). On a
 * destroyed pool: the report of pool_destroy(). Thread-safe.
 */
POOL_API size_t pool_alloc_bulk(struct pool_head *pool, void **objs, size_t n);

/*
 * pool_free_bulk - give objs[0..n-1] back to `pool` (NULL entries are skipped), as pool_free()
 * does for each: into this thread's bulk magazine for the pool (up to 64 pointers, copied; the
 * objects are not touched) when it has room and the thread's budget holds them, else onto its
 * cache list, else as clusters to the shared free lists with one atomic exchange. Nothing
 * happens for a NULL pool or objs. Thread-safe.
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
 * free objects over windows of decay_ms (pool_configure(), POOL_DECAY_MS; 10 s by default), and
 * the objects that stayed free through a whole window were not needed. The library gives those
 * back by itself when a window ends while the pool is in use (a slow path notices), so an object
 * goes back between decay_ms and twice that after it was last needed. pool_gc() ends the current
 * window at once and gives back what stayed free through it, beyond a floor of min(one cluster,
 * 64 KiB) of objects (at least one), then trims the OS layer (see pool_trim()). So after load
 * drops, a pool_gc() call keeps what the load just used, and the next one, once the pool stayed
 * idle in between, gives the rest back: call it periodically (or twice) to give a spike back at
 * once. needed_avg becomes the most objects used over that window. NULL: every pool; a destroyed
 * pool: no-op. Never call it on a hot path: it visits every bucket, waits for busy ones a bounded
 * time, and may take milliseconds. Thread-safe.
 */
POOL_API void pool_gc(struct pool_head *pool);

/*
 * pool_thread_flush - give the calling thread's cached objects of every pool back to the shared
 * free lists, in clusters (to the OS layer under no-global or uaf). The thread may keep
 * using pools afterwards. Call it from a thread that goes idle; threads that exit do it
 * automatically. Only affects the calling thread.
 */
POOL_API void pool_thread_flush(void);

/* ------------------------------------------------------------------------------------------ */
/* Limits, statistics, iteration                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_set_limit - cap the objects `pool` may hold from the OS layer at `max_objects` (0: no
 * limit; any other size_t is a cap, SIZE_MAX included, which lets everything through). Past the
 * cap, allocations return NULL and count a failure until objects come back. The cap is exact
 * whenever it is set, from any thread, while other threads allocate and free: the pool counts
 * every object it reserves from the OS layer, limit or not, and this call only stores the new
 * cap, which the reservations that follow obey. A cap below what the pool holds takes nothing
 * back: allocations from the OS layer fail until enough objects have gone back (pool_gc(),
 * pool_flush()). Lock-free; may be called from a pool_for_each() callback. Returns 0, or -1
 * with errno = EINVAL for NULL or a pool that is not a live one (destroyed, or never created).
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
 * pool_for_each - call fn(pool, arg) for every pool that exists when it starts, in creation
 * order, until fn returns non-zero. It holds the pool list lock while it runs, so other threads'
 * pool_create(), pool_destroy(), pool_gc(NULL), dumps, CLI commands and fork() wait for it;
 * keep fn short.
 *
 * fn runs on the calling thread and may call the library back, with that lock held for it:
 * pool_set_limit(), pool_get_stats(), pool_name(), pool_gc() (of a pool or NULL), pool_flush(),
 * pool_trim(), pool_dump(), pool_parse_debugging(), pool_cli_exec(), pool_for_each() itself
 * (a nested walk), the allocation calls, pool_create() and pool_destroy(). A pool fn creates
 * is not visited by this walk (nor by the walks it is nested in); a pool fn destroys, the one it
 * was given included, is not visited afterwards and the walk goes on with the next one. fork()
 * from fn is allowed: the child goes on in fn. fn must return (no longjmp() out of it) and must
 * not wait for another thread that takes the pool list lock (pool_create() and the rest above,
 * on that thread): that thread waits for the walk, a deadlock. NULL fn: nothing. Thread-safe.
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
 *     their helper threads) out of each other's way for 1 KiB per pool (128-byte buckets).
 *   default_cache_bytes = l2_per_pu_bytes (sum of L2 sizes / pus), rounded down to 4 KiB,
 *     clamped to 256 KiB..2 MiB; 512 KiB when no L2 is known.
 *     A thread cache holds recently freed objects so that the next allocation gets a line that
 *     is still in this core's private cache; caching more than the L2 share of the hardware
 *     thread mostly keeps cold memory away from other threads. 512 KiB is HAProxy's per-thread
 *     default (CONFIG_HAP_POOL_CACHE_SIZE); 256 KiB still holds 16 buffers of 16 KiB (two
 *     clusters); 2 MiB bounds what a thread pins (384 threads x 2 MiB = 768 MiB).
 *
 * Returns a pointer to a process-lifetime structure, never NULL. Thread-safe (pthread_once).
 * The hwloc topology is unloaded once read (it holds about 1.8 MiB of RSS while loaded);
 * pool_topology_bind_thread() keeps only the order of the PUs.
 */
POOL_API const struct pool_topology *pool_topology(void);

/*
 * pool_topology_bind_thread - bind the calling thread to one PU, chosen round-robin over cores
 * first, then over the hardware threads of each core: index i goes to core (i mod cores), its
 * ((i / cores) mod PUs-of-that-core)-th PU, so that the first `cores` threads get a core each.
 *
 * Returns 0 when bound. Returns -1 and leaves the thread unbound (the caller carries on) with
 * errno = ENOTSUP when the topology is not this machine's (loaded from HWLOC_XMLFILE), EINVAL
 * when the PU is outside the process's allowed CPUs (pthread_setaffinity_np(3)), EPERM where a
 * sandbox (seccomp) forbids the call, or ENOMEM when its CPU set (or, at load, the table of
 * PUs) could not be allocated. With the sysconf() fallback, index i binds to the (i mod n)-th
 * CPU the process may run on (pthread_setaffinity_np). Thread-safe.
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
 * pool_trim - ask the OS layer to give free memory back to the system: with jemalloc, a flush of
 * the calling thread's tcache and a purge of every arena (mallctl "thread.tcache.flush", then
 * "arena.<MALLCTL_ARENAS_ALL>.purge": madvise() of its dirty pages); with
 * the C library, malloc_trim(0). Pool objects are not touched: pool_gc() releases them first
 * and then trims. Cost: a system call per run of free pages, so it grows with the free memory
 * the allocator holds; measured (doc/tuning.md): 5-8 us with nothing to return, 8.5 ms with
 * jemalloc after 64 MiB of 16 KiB objects were freed (glibc returns most at free() already).
 * With jemalloc it also reads RLIMIT_AS again (one system call), for the guard in front of new
 * threads' first calls into jemalloc: a program that sets or lowers the limit after creating
 * its pools calls pool_trim() right after setrlimit() (doc/debugging.md, "Address-space
 * limits"). Never call it on a hot path. Thread-safe; cannot fail.
 */
POOL_API void pool_trim(void);

/* ------------------------------------------------------------------------------------------ */
/* Introspection: `pools show` (src/pool-dump.c) and the command line (src/pool-cli.c)        */
/* ------------------------------------------------------------------------------------------ */

/*
 * pool_dump - write `pools show` for every pool to `out`, as the program itself sees it
 * (access level admin: with the heap and code addresses; pool_cli_exec_level() gives the
 * address-free view of the lower levels).
 *
 * `args`: the words after "pools show", separated by blanks, in any order, each at most once
 * (NULL or "" for none):
 *   byname | bysize | byusage   sort by name (then creation order), by object size (largest
 *                               first), or by bytes allocated (largest first; pools with nothing
 *                               allocated are left out); default: creation order.
 *   detailed                    (text, json) add each pool's stride, buckets, shared free
 *                               objects and limit, its cumulative counters (text; JSON has them
 *                               always), one line per merged pool_create() call (name, requested
 *                               size, alignment, flags), and, for pools created with `caller`
 *                               debugging, the (up to 5) callers with the most live objects,
 *                               resolved with dladdr(3) to symbol+offset.
 *   match <prefix>              only pools whose name starts with <prefix> (compared bytewise).
 *   <max>                       a decimal number >= 1: only the first <max> pools after sorting
 *                               and filtering; the header then says "(limited to the first <max>
 *                               entries)", only when pools were left out.
 *   json | prometheus           the format (default: text). doc/pools-show.md documents the text
 *                               lines, the JSON schema ("format": 1) and the Prometheus metrics.
 * Object sizes are usable bytes; byte figures are objects times the stride (object plus
 * debugging extras, rounded to the alignment). The cumulative counters of struct pool_stats
 * (failed, shared_get_objects, shared_get_clusters, shared_put_objects, shared_put_clusters,
 * os_allocs, os_releases, gc_released_bytes, lost) keep their field names in every format: the
 * JSON keys, the text of `detailed`, and the Prometheus counters libpool_pool_<name>_total.
 *
 * The pools are copied under the pool list lock (pool_for_each()), so a pool created, merged into
 * or destroyed meanwhile appears whole or not at all; counters are read without stopping any
 * thread and no pool's allocation path is called or locked. `out` is written after the lock is
 * released. Thread-safe.
 *
 * At exit: with the environment variable POOL_STATS_ON_EXIT set when the library is loaded,
 * a handler registered with atexit(3) by a library constructor writes a line "libpool: pools at
 * exit of process <pid> (POOL_STATS_ON_EXIT=<value>):" and then pool_dump(stderr, args) to
 * stderr. Unset, empty or "0": off; "1": no arguments; any other value: the arguments (e.g.
 * "byusage detailed", "json"); bad arguments print their error line instead. It runs at exit()
 * or the return from main(), after the handlers the program registered and before destructors
 * (POOL_DECLARE pools are still there), not at _exit() or death by a signal; in a library
 * loaded with dlopen(), at dlclose(). It prints what exists then: pools destroyed earlier are
 * not listed, and a forked child that calls exit() prints its own pools with its own pid. An
 * exit() from a pool_for_each() callback prints them under the walk's hold of the pool list
 * lock; if another thread keeps that lock for 1 s (a callback that never returns), it prints
 * one line saying so instead of waiting for ever. With the static library, the
 * constructor is linked only into programs that call an introspection function.
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
 * pool_json_write_string - write the NUL-terminated string `s` to `out` as a JSON string
 * literal, quotes included: the one JSON escaper of libpool, used by the JSON of `pools show`
 * and by the tools, so that any string (a pool name, a symbol, an error message, a file name)
 * yields valid JSON.
 *
 * Escaping follows RFC 8259, section 7: `"` and `\` are escaped as \" and \\; the control
 * characters U+0000..U+001F as \b, \f, \n, \r, \t or \u00XX (lowercase hexadecimal), and DEL
 * (0x7f) as \u007f; U+2028 and U+2029 as \u2028 and \u2029 (valid JSON, but line ends in
 * JavaScript before ES2019, so the output may be pasted into a script). Other bytes from 0x20
 * to 0x7e are written as they are, and so is every well-formed UTF-8 sequence (RFC 3629: no
 * overlong form, no surrogate, nothing above U+10FFFF): the output is UTF-8, not ASCII-escaped.
 * An ill-formed sequence is not passed through: each maximal subpart of it (the Unicode
 * Standard, section 3.9, "U+FFFD Substitution of Maximal Subparts", as Python's
 * bytes.decode("utf-8", "replace") and the WHATWG Encoding Standard do) is written as \ufffd,
 * the replacement character, so the output is always valid UTF-8 and valid JSON. A byte string
 * that is not UTF-8 (Latin-1, binary) therefore does not come back byte for byte from a JSON
 * parser; \u00XX was not chosen for it because a parser would read those as other characters,
 * U+0080..U+00FF, that were never in the input.
 *
 * The string is written under the stream's lock (flockfile(3)), so another thread writing to
 * `out` cannot cut it in two. Returns 0 (errno unchanged). Returns -1 with errno = EINVAL when
 * `out` or `s` is NULL (nothing written), or with the errno of the failed write (EIO if the
 * stream did not set one); part of the literal may then have been written. As with fputs(), a
 * failure that the stream's buffering defers shows at the next fflush() or fclose() instead.
 * Thread-safe.
 */
POOL_API int pool_json_write_string(FILE *out, const char *s);

/*
 * pool_cli_exec_level - run one command line as a session of access level `level` and write
 * its answer to `out`.
 *
 * `line`: words separated by blanks (space, tab, CR, LF: a trailing "\r\n" and extra blanks
 * are ignored; the socket server splits lines before they get here). `level`: POOL_CLI_USER,
 * POOL_CLI_OPERATOR or POOL_CLI_ADMIN (see enum pool_cli_level); each command needs the level
 * in brackets, and a level may run every command of the levels below it:
 *   help                     [user] the commands `level` allows.
 *   pools show [args]        [user] pool_dump(out, args), except that below admin the heap and
 *   show pools [args]        code addresses are left out: no "@<address>" on the pool lines,
 *                            no "address" in the JSON, no callers with `detailed`. `show pools`
 *                            is HAProxy's spelling of the same command.
 *   pools topology           [user] pool_topology_show(out): the topology and its defaults.
 *   pools debug              [user] the debugging options in effect (pool_debugging_show()).
 *   pools debug help         [user] the options table; changes nothing.
 *   pools trim               [operator] pool_gc(NULL), then "Released N bytes to the OS layer
 *                            (the pools held B bytes, now A)." where B and A are the sums of
 *                            allocated * stride over every pool before and after, and N = B - A
 *                            (0 if other threads allocated more meanwhile).
 *   pools flush [<pool>]     [operator] pool_flush() on every pool, or on the pools named
 *                            exactly <pool>, then pool_trim(); the same line as pools trim over
 *                            those pools. Unlike trim, it gives back every free object of the
 *                            shared lists, also those the demand estimate would keep.
 *   pools debug <options>    [admin] pool_parse_debugging(<options>) for the options that may
 *                            change at run time: the same syntax and error messages, except
 *                            that layout options (tag, caller, uaf, backup) are refused whenever
 *                            they would change a flag, even before the first pool exists;
 *                            `help` among them writes the options table and changes nothing.
 *                            On success, "Pool debugging options now: <options>".
 *   pools limit <pool> <n>   [admin] pool_set_limit(pool, n) on every pool named exactly <pool>
 *                            (n: decimal objects, 0 for no limit); one line each, "Limit of pool
 *                            '<pool>' now <n> objects (was <m>)." ("none" for 0).
 * A line of blanks only does nothing and returns 0.
 *
 * Returns 0 on success. Returns -1 with errno set, having changed nothing (one error line is
 * written unless said otherwise):
 *   EINVAL  `line` or `out` is NULL or `level` is not a level (nothing written); an unknown
 *           command or an extra word ("Unknown command '<word>'. Try 'help'."); bad `pools
 *           show` arguments (see pool_dump()); bad debugging options (the parser's message);
 *           `pools limit` without its two words or with a count that is not a decimal number up
 *           to SIZE_MAX;
 *   EACCES  the command needs a higher level: "Permission denied: '<command>' needs level
 *           <level>; this session is <level>." (`pools debug <options>` names itself so);
 *   ENOENT  `pools flush <pool>` or `pools limit <pool> <n>` name no pool: "No pool named
 *           '<pool>'. Try 'pools show'.";
 *   ENOMEM, or the errno of a failed write to `out`, as for pool_dump().
 * Client bytes echoed in an error are kept printable (\xNN, and \x27 and \x5c for the quote
 * and the backslash) and cut after 64 bytes ("..."). Thread-safe.
 */
POOL_API int pool_cli_exec_level(const char *line, FILE *out, enum pool_cli_level level);

/*
 * pool_cli_exec - pool_cli_exec_level(line, out, POOL_CLI_ADMIN): the program's own access,
 * with every command and the addresses.
 */
POOL_API int pool_cli_exec(const char *line, FILE *out);

/*
 * pool_cli_listen_level - serve pool_cli_exec_level(..., `level`) on a UNIX stream socket at
 * `unix_path`, created with the permission bits `mode`, from one background thread, until
 * pool_cli_stop().
 *
 * `level`: the access level of every connection to this socket (enum pool_cli_level). `mode`:
 * the socket file's permission bits, which decide who may connect: 0600 (only this user) unless
 * given, e.g. 0660 to let a group in, which fits a `user` socket for monitoring next to an
 * `admin` socket at 0600; 0 means 0600.
 *
 * One process serves up to POOL_CLI_MAX_LISTENERS (4) sockets, each with its own level and
 * mode, from the same thread; a call while the thread runs adds a socket to it.
 *
 * Protocol: one command per line (at most POOL_CLI_LINE_MAX = 4096 bytes before the "\n"; a
 * "\r" before it is ignored); each answer is followed by one empty line and never contains
 * one (empty lines of an answer are dropped), so `socat - UNIX-CONNECT:<path>` works
 * interactively, and so does `echo 'show pools' | socat - UNIX-CONNECT:<path>`. Commands of one
 * client run in order; a client may pipeline lines. Commands that exist only on the socket:
 *   quit                   closes the connection;
 *   set status on|off      each following answer ends with a line "OK" or "ERROR" (as
 *                          pool_cli_exec_level() returned) before the empty line (the `pools`
 *                          tool uses it);
 *   level                  answers the connection's level ("operator");
 *   level <level>          lowers the connection's level for the rest of the connection
 *                          ("Level now user."), as HAProxy's `operator` and `user` commands do;
 *                          raising it is refused ("Permission denied: this session is user and
 *                          cannot raise its level to admin.").
 * A line holding a NUL byte is refused with an error answer. A line over 4096 bytes gets "Line
 * too long (over 4096 bytes): closing." and the connection is closed; so does a line not
 * finished within POOL_CLI_READ_TIMEOUT_MS (1 s) of its first byte ("Line not finished within
 * the line timeout: closing."). A client that neither sends nor reads a byte for the idle
 * timeout (see pool_cli_set_timeout_ms()) is closed. Out of memory, a command is answered "Not
 * enough memory to run the command." (or its own ENOMEM line) and the client carries on; when
 * not even the answer can be allocated, the client gets "Not enough memory to answer:
 * closing." and the connection ends; a client the server cannot allocate gets "Not enough
 * memory for a new client: try again later." Nothing leaks on any of these paths.
 *
 * Up to POOL_CLI_MAX_CLIENTS (64) clients are served at once over all sockets. Silent clients
 * cannot lock others out: when every slot is taken and a client connects, the one silent
 * longest among the clients that are idle (between commands), closing, or stalled (no byte sent
 * or read for 1 s) is told "Closing this idle connection: the server is full and a new client
 * came." and closed, and the newcomer is served; only when every client is busy does the
 * newcomer get "Too many clients: try again later." and is closed. No client can block another
 * (one poll(2) loop, non-blocking sockets, one pending answer per client), and sends use
 * MSG_NOSIGNAL so a client that goes away raises no SIGPIPE. The thread blocks every
 * asynchronous signal.
 *
 * The socket is created without following any symbolic link and without a moment at another
 * mode: it is bound in a new private directory next to `unix_path` (mkdtemp(3), "<dir>/.plXXXXXX",
 * mode 0700, removed again), given `mode`, made to listen, and moved to `unix_path` with
 * renameat2(RENAME_NOREPLACE) (or link(2) and unlink(2) on a file system without that flag),
 * which never replaces a file that appeared meanwhile nor follows a link planted at
 * `unix_path`. An existing socket file nobody listens on (stale: connect() is refused) is
 * replaced; anything else at `unix_path` is left untouched.
 *
 * After fork(), the child has no server: it closes its copies of the server's descriptors, leaves
 * the socket files to the parent, and may call pool_cli_listen_level() for sockets of its own.
 *
 * Returns 0 when the thread serves the socket. Returns -1 with errno set and nothing left
 * behind: EINVAL for a NULL or empty path, a `level` that is not one, or `mode` with bits outside
 * 0777; ENAMETOOLONG for a path of 108 bytes or more (sun_path), or whose directory part is
 * over 95 bytes (the temporary name must fit in sun_path); EBUSY when this process already
 * serves POOL_CLI_MAX_LISTENERS sockets; EEXIST when `unix_path` exists and is not a socket (a
 * file, a directory, a symbolic link: it is left untouched); EADDRINUSE when a process (this one
 * included) serves that socket; or the errno of mkdtemp(), socket(), bind(), chmod(), listen(),
 * renameat2(), link(), lstat(), unlink(), pipe2() or pthread_create() (e.g. EACCES, ENOENT for a
 * missing directory, EAGAIN); ENOMEM. Thread-safe with pool_cli_stop().
 */
POOL_API int pool_cli_listen_level(const char *unix_path, enum pool_cli_level level,
                                   unsigned int mode);

/*
 * pool_cli_listen - pool_cli_listen_level(unix_path, POOL_CLI_OPERATOR, 0600): the default
 * level is operator (read, and give memory back), as the embedding program did not choose one.
 */
POOL_API int pool_cli_listen(const char *unix_path);

/*
 * pool_cli_stop - stop the server started by pool_cli_listen_level(): wake and join its thread,
 * close every client (answers not yet sent are lost) and every listening socket, and remove each
 * socket file that is still ours (same device and inode). No-op when no server runs.
 * Blocks until the thread has exited, at most the time of the command it is running. Must not
 * be called from a command run by the server (there is no way to do that from a client).
 * Thread-safe.
 */
POOL_API void pool_cli_stop(void);

/*
 * pool_cli_set_timeout_ms - close socket clients silent for `timeout_ms` milliseconds (neither
 * a byte received nor a byte of an answer sent): the idle timeout between commands. Default
 * POOL_CLI_TIMEOUT_MS_DEF (10 s). The line timeout (POOL_CLI_READ_TIMEOUT_MS) is fixed; a
 * shorter idle timeout also shortens it. Takes effect at once, also for a running server and its
 * clients. Returns 0, or -1 with errno = EINVAL (nothing changed) for 0 or more than
 * POOL_CLI_TIMEOUT_MS_MAX (1 hour). Thread-safe.
 */
POOL_API int pool_cli_set_timeout_ms(unsigned int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* POOL_POOL_H */
