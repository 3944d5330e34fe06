/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * OS layer: jemalloc's non-standard API by default (mallocx/sdallocx, mallctl to purge and to
 * read its statistics), or the C library with USE_JEMALLOC=0 (aligned_alloc/free, malloc_trim).
 * Also the page-level calls the use-after-free allocator needs. No other file calls an allocator
 * or mmap for objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "base/pool-assert.h"
#include "os/pool-fault.h"
#include "base/pool-lock.h"
#include "os/pool-os.h"
#include "base/pool-util.h"

/* The page size when sysconf() cannot tell (the smallest page of every platform we run on). */
#define PAGE_SIZE_FALLBACK 4096u
#define PURGE_VEC          256u     /* pages pool__os_resident() asks mincore() about at once */

#if POOL_USE_JEMALLOC
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif

#if POOL_USE_JEMALLOC

/*
 * A thread's first call into jemalloc, and the address-space limit.
 *
 * jemalloc (5.3.0) sets a thread up on its first allocating call: it allocates the thread's
 * tcache stack from arena 0, then binds the thread to an arena, creating one when every arena
 * has threads and fewer than opt.narenas (4 per CPU) exist. Neither step may fail there: a
 * failed arena creation crashes (arena_choose_hard() returns NULL and tcache_arena_associate()
 * locks a mutex inside it: jemalloc issue #2289), and a tcache without its stack reads through
 * NULL. Under RLIMIT_AS both happen while small allocations still succeed, since a new arena maps
 * a 2 MiB block aligned on 2 MiB (8 threads allocating until NULL at 30 MB crash in 7 runs of
 * 10). Frees are safe before the first call; any mallctl() is a first call too.
 *
 * So a thread's first call from this layer goes through first_call_begin(), under je_first_lock
 * only while a limit is set (without one, the lock is taken after it to note_arena()). Under one:
 *   - while an automatic arena may still be created and no spare waits, the call needs
 *     FIRST_CALL_HEADROOM of fresh address space (the arena's base block, 4 MiB while aligned,
 *     the tcache's stack, 2 MiB for threads allocating meanwhile);
 *   - once every automatic arena exists, or while a spare waits, it needs only arena 0's room
 *     for its tcache's stack: REUSE_HEADROOM of fresh address space, or else the lifeboat, a
 *     LIFEBOAT_BYTES block a set-up thread allocated from arena 0 and that the new thread frees
 *     right before its first call; the thread then allocates the next lifeboat. Spares are
 *     arenas made ahead of new threads while there is room (arenas_ahead()), or left by a
 *     thread that exited (pool__os_thread_exit()), since jemalloc binds a new thread to an
 *     arena without threads before it creates one; a thread whose own
 *     arena cannot grow under the limit allocates in the others, where a burst's memory is
 *     retained (alloc_elsewhere()). Without spares and lifeboat, threads started after a burst
 *     that filled the limit get nothing (0 of 1,000 objects): jemalloc retains what it purged.
 * Fresh address space is measured by mapping it, PROT_NONE, and unmapping it at once: the
 * kernel checks every mapping against RLIMIT_AS as it will check jemalloc's; no file
 * descriptor, no /proc, and a refusal for any cause refuses the call (NULL, counted by the
 * core; the thread's next call tries again). The limit is read when the library loads, at
 * pool_create(), pool_gc() and pool_trim(), after an allocation this layer could not satisfy,
 * and after a refused first call: a program that sets RLIMIT_AS after creating its pools calls
 * pool_trim() afterwards (doc/debugging.md).
 *
 * What it cannot close: threads already set up may map what was measured (the 2 MiB of slack is
 * for them); a first call that began before the limit was read, or the program's own first call
 * into a jemalloc it links, is not checked; more threads started at once after a burst than
 * spares get nothing new until threads exit; strict overcommit is not checked. Under a tight
 * RLIMIT_AS, set MALLOC_CONF=narenas:1 (retain:false to get address space back), or build
 * USE_JEMALLOC=0.
 */
#define FIRST_CALL_HEADROOM (6ul << 20)
#define REUSE_HEADROOM      (2ul << 20)
#define LIFEBOAT_BYTES      (256ul << 10)   /* a tcache stack is under 64 KiB by default */
#define ARENAS_TRACKED      4096u           /* automatic arenas followed (4 per CPU: 1024 CPUs) */
#define ARENA_BYTES         (2ul << 20)     /* a new arena's first base block (a huge page) */
#define ARENAS_ROOM_SHARE   8u              /* arenas made ahead take at most 1/8 of the room */
#define ROOM_PROBE_MAX      (1ul << 40)     /* the largest room address_room() measures */
#define ELSEWHERE_TRIES     16u             /* other arenas an allocation falls back to */
#define AHEAD_RETRY_NS      100000000ull    /* a try that made no spare waits this long (100 ms)
                                               before the next: failures come in storms */

static __thread int je_thread_ready;        /* this thread called jemalloc through us */
static __thread unsigned int je_arena_noted;  /* 1 + the arena note_arena() saw it bound to */
static struct pool_lock je_first_lock = POOL_LOCK_INITIALIZER;
static atomic_int as_limited;               /* RLIMIT_AS was finite when last read */
static atomic_ulong as_limit_reads;         /* getrlimit(RLIMIT_AS) calls made */
static unsigned int narenas_auto;           /* opt.narenas (je_first_lock); 0: unknown */
static int narenas_read;                    /* narenas_auto was asked for (je_first_lock) */
static uint64_t arena_seen[ARENAS_TRACKED / 64];   /* automatic arenas in use (je_first_lock) */
static unsigned int arenas_seen;            /* bits set in arena_seen (je_first_lock) */
static atomic_int arenas_all_exist;         /* every automatic arena exists */
static uint64_t arena_ahead[ARENAS_TRACKED / 64];  /* arenas made ahead (je_first_lock) */
static unsigned int arenas_made;            /* bits set in arena_ahead (je_first_lock) */
static uint64_t arena_left[ARENAS_TRACKED / 64];   /* arenas a thread set up through us left
                                               when it exited (je_first_lock) */
static unsigned int arenas_left;            /* bits set in arena_left (je_first_lock) */
static atomic_uint spares;                  /* arenas made ahead that no thread is bound to, as
                                               last counted (je_first_lock to change) */
static atomic_uint elsewhere_hint;          /* the arena a fallback allocation last got from */
static uint64_t ahead_not_before_ns;        /* CLOCK_MONOTONIC_COARSE (je_first_lock) */
static void *lifeboat;                      /* the reserve in arena 0, or NULL (je_first_lock) */
static atomic_int lifeboat_wanted;          /* under a limit: make the reserves that are missing */

/*
 * Read the soft RLIMIT_AS (a failure counts as a limit: the guard then measures). Under a
 * limit, the next set-up thread through this layer makes a reserve if there is none: every
 * reading is at an event after which one may be wanted or possible (a limit set, memory given
 * back by pool_gc(), the layer run out, a first call refused).
 */
static void read_as_limit(void)
{
	struct rlimit rl;
	int limited;

	atomic_fetch_add_explicit(&as_limit_reads, 1, memory_order_relaxed);
	limited = getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY;
	atomic_store_explicit(&as_limited, limited, memory_order_relaxed);
	if (limited)
		atomic_store_explicit(&lifeboat_wanted, 1, memory_order_relaxed);
}

/* Would the kernel map `len` more bytes for us now? A mapping made and unmapped at once. */
static int address_space_for(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, len);
	return 1;
}

/* je_first_lock held: is automatic arena `i` known to exist? */
static int arena_known(unsigned int i)
{
	return i < ARENAS_TRACKED && (arena_seen[i / 64] >> (i % 64)) & 1;
}

/* je_first_lock held: automatic arena `i` exists (a thread is bound to it, or we made it). */
static void arena_exists(unsigned int i)
{
	POOL_ASSERT(pool__lock_held(&je_first_lock) && i < narenas_auto);
	if (arena_known(i))
		return;
	arena_seen[i / 64] |= (uint64_t)1 << (i % 64);
	if (++arenas_seen == narenas_auto)
		atomic_store_explicit(&arenas_all_exist, 1, memory_order_relaxed);
}

/* The most bytes of fresh address space the kernel would map now (a binary search of probes). */
static size_t address_room(void)
{
	size_t lo = 0, hi = ROOM_PROBE_MAX;

	while (hi - lo > ARENA_BYTES) {
		size_t mid = lo + (hi - lo) / 2;

		if (address_space_for(mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* je_first_lock held: was automatic arena `i` made ahead, or left by a thread that exited? */
static int arena_spare_kind(unsigned int i)
{
	return ((arena_ahead[i / 64] | arena_left[i / 64]) >> (i % 64)) & 1;
}

/*
 * je_first_lock held, by a thread set up: count again the arenas made ahead, or left by a
 * thread that exited, that no thread is bound to (threads that exited unbound theirs), from
 * jemalloc's statistics ("stats.arenas.<i>.nthreads" after an "epoch" refresh). Left as it was
 * when they cannot be read: it only ever counts down otherwise, which refuses calls rather than
 * crash.
 */
static void spares_recount(void)
{
	unsigned int i, n = 0, nthreads;
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);
	char name[48];

	if (mallctl("epoch", &epoch, &len, &epoch, len) != 0)
		return;
	for (i = 0; i < narenas_auto; i++) {
		if (!arena_spare_kind(i))
			continue;
		snprintf(name, sizeof(name), "stats.arenas.%u.nthreads", i);
		len = sizeof(nthreads);
		if (mallctl(name, &nthreads, &len, NULL, 0) != 0)
			return;
		n += nthreads == 0;
	}
	atomic_store_explicit(&spares, n, memory_order_relaxed);
}

/*
 * je_first_lock held, by a thread set up, under a limit: make ahead of new threads automatic
 * arenas that their first calls would otherwise have jemalloc create, so that those calls need
 * no address space for a new arena (a 2 MiB block aligned on 2 MiB), which a burst that filled
 * the limit leaves nowhere: jemalloc retains what it purged (without a spare, a thread started
 * after such a burst gets 0 of 1,000 objects). jemalloc binds a new thread to an existing arena that
 * has no thread before it creates one (arena_choose_hard()), so a spare, an arena made ahead
 * with no thread, is what a first call takes. An arena is made by binding this thread to its
 * index ("thread.arena", which creates a missing arena, and fails cleanly, EAGAIN, without
 * room) and back. Made when no spare is left (a try that makes none waits AHEAD_RETRY_NS
 * before the next); at most 1/ARENAS_ROOM_SHARE of the room the limit leaves goes to them,
 * counting those made before, and each keeps FIRST_CALL_HEADROOM free: all 8 arenas of
 * jemalloc's default on 2 CPUs under a 256 MiB room (16 MiB of address space);
 * doc/debugging.md says what the share leaves out.
 */
static void arenas_ahead(void)
{
	unsigned int mine, i, made = 0;
	size_t len = sizeof(mine), budget;
	uint64_t now_ns;

	POOL_ASSERT(pool__lock_held(&je_first_lock) && je_thread_ready);
	if (atomic_load_explicit(&arenas_all_exist, memory_order_relaxed) || !narenas_auto ||
	    narenas_auto > ARENAS_TRACKED || atomic_load_explicit(&spares, memory_order_relaxed))
		return;
	now_ns = pool__clock_ns(CLOCK_MONOTONIC_COARSE);
	if (now_ns < ahead_not_before_ns)
		return;
	if (arenas_made || arenas_left)
		spares_recount();   /* threads that exited left theirs */
	if (atomic_load_explicit(&spares, memory_order_relaxed) ||
	    mallctl("thread.arena", &mine, &len, NULL, 0) != 0)
		return;
	budget = (address_room() + arenas_made * ARENA_BYTES) / ARENAS_ROOM_SHARE / ARENA_BYTES;
	for (i = 0; i < narenas_auto && arenas_made < budget; i++) {
		if (arena_known(i))
			continue;
		if (!address_space_for(FIRST_CALL_HEADROOM) ||
		    mallctl("thread.arena", NULL, NULL, &i, sizeof(i)) != 0)
			break;
		arena_ahead[i / 64] |= (uint64_t)1 << (i % 64);
		arena_exists(i);
		arenas_made++;
		made++;
	}
	mallctl("thread.arena", NULL, NULL, &mine, sizeof(mine));
	atomic_fetch_add_explicit(&spares, made, memory_order_relaxed);
	ahead_not_before_ns = made ? 0 : now_ns + AHEAD_RETRY_NS;
}

/*
 * je_first_lock held, by a thread set up: under a limit, make the reserves that are missing,
 * the arenas ahead of new threads and the reserve in arena 0 (kept last: it is what a thread's
 * tcache stack uses when no room is left). One try each: when memory is short it fails, and
 * the next try waits for an event that may have given memory back or changed the limit
 * (read_as_limit() asks for one).
 */
static void lifeboat_arm(void)
{
	POOL_ASSERT(pool__lock_held(&je_first_lock));
	atomic_store_explicit(&lifeboat_wanted, 0, memory_order_relaxed);
	if (!atomic_load_explicit(&as_limited, memory_order_relaxed))
		return;
	arenas_ahead();
	if (!lifeboat)
		lifeboat = mallocx(LIFEBOAT_BYTES, MALLOCX_ARENA(0) | MALLOCX_TCACHE_NONE);
}

/* je_first_lock held, the calling thread just set up: note the arena jemalloc bound it to. */
static void note_arena(void)
{
	unsigned int arena;
	size_t len = sizeof(narenas_auto);

	POOL_ASSERT(pool__lock_held(&je_first_lock));
	if (!narenas_read) {
		narenas_read = 1;
		if (mallctl("opt.narenas", &narenas_auto, &len, NULL, 0) != 0)
			narenas_auto = 0;
	}
	if (atomic_load_explicit(&arenas_all_exist, memory_order_relaxed) || !narenas_auto ||
	    narenas_auto > ARENAS_TRACKED)
		return;
	len = sizeof(arena);
	if (mallctl("thread.arena", &arena, &len, NULL, 0) != 0 || arena >= narenas_auto)
		return;
	je_arena_noted = arena + 1;
	/* a spare taken (jemalloc binds a new thread to an arena with no thread first) */
	if (arena_spare_kind(arena) && atomic_load_explicit(&spares, memory_order_relaxed))
		atomic_fetch_sub_explicit(&spares, 1, memory_order_relaxed);
	arena_exists(arena);
}

/*
 * The calling thread exits, from the core's thread-exit destructor, which runs after
 * jemalloc's own (its key is older) has unbound the thread from its arena: under a limit, that
 * arena may have no thread now, and jemalloc gives such an arena to a new thread before it
 * creates one. So it counts among the spares from now on, as if made ahead: a thread started
 * after this one exited is let in as this one was, whereas spares_recount() otherwise runs only
 * after a thread is set up, which none can be once the spares ran out (tests/os/check_oom.c,
 * "sequel"). The count reads jemalloc's statistics, which sets up nothing in a thread past its
 * own exit.
 */
void pool__os_thread_exit(void)
{
	unsigned int arena = je_arena_noted;

	if (!arena-- || !je_thread_ready || !atomic_load_explicit(&as_limited, memory_order_relaxed))
		return;
	pool__lock(&je_first_lock);
	if (!atomic_load_explicit(&arenas_all_exist, memory_order_relaxed) &&
	    arena < ARENAS_TRACKED) {
		if (!((arena_left[arena / 64] >> (arena % 64)) & 1)) {
			arena_left[arena / 64] |= (uint64_t)1 << (arena % 64);
			arenas_left++;
		}
		spares_recount();
	}
	pool__unlock(&je_first_lock);
}

/*
 * Under a limit, an allocation that the calling thread's arena could not satisfy, from the
 * other automatic arenas that exist (`flags` without an arena), the one that served the last
 * such call first, at most ELSEWHERE_TRIES of them. A thread bound to an arena made ahead
 * (arenas_ahead()) finds it empty after a burst, and its growth needs address space that
 * jemalloc retains in the arenas of the threads that made the burst, which can serve the call.
 * Any thread may free the object later: jemalloc finds its arena from its address. NULL when
 * none can (the caller reads the limit again, as for any failure).
 */
static void *alloc_elsewhere(size_t size, int flags)
{
	unsigned int mine, start, n, tries = 0;
	size_t len = sizeof(mine);
	void *p = NULL;

	if (!atomic_load_explicit(&as_limited, memory_order_relaxed) ||
	    mallctl("thread.arena", &mine, &len, NULL, 0) != 0)
		return NULL;
	pool__lock(&je_first_lock);
	start = atomic_load_explicit(&elsewhere_hint, memory_order_relaxed);
	for (n = 0; !p && n < narenas_auto && tries < ELSEWHERE_TRIES; n++) {
		unsigned int i = (start + n) % narenas_auto;

		if (i == mine || !arena_known(i))
			continue;
		tries++;
		p = mallocx(size, flags | MALLOCX_ARENA(i));
		if (p)
			atomic_store_explicit(&elsewhere_hint, i, memory_order_relaxed);
	}
	pool__unlock(&je_first_lock);
	return p;
}

/*
 * Before an allocating call into jemalloc: 0 to go on (the thread is set up), 1 to go on
 * holding je_first_lock (its first call under a limit: first_call_end() after it), 2 to go on
 * without it (its first call, no limit: first_call_end() takes the lock for the bookkeeping
 * after it while some arena is not known yet), -1 to fail instead. Without a limit there is
 * nothing to measure, and jemalloc's set-up of the thread (its tcache's stack, perhaps a new
 * arena: page faults, a 2 MiB mapping) runs outside the lock: under it, threads started
 * together would wait in turn, asleep on the futex (the server rows with short-lived threads
 * at 2 threads get 1.3-1.6 CPUs' worth of time per unit of wall time that way, against 1.7-1.9
 * for the mallocs).
 */
static int first_call_begin(void)
{
	if (__builtin_expect(je_thread_ready, 1))
		return 0;
	if (!atomic_load_explicit(&as_limited, memory_order_relaxed))
		return 2;
	pool__lock(&je_first_lock);
	if (!atomic_load_explicit(&as_limited, memory_order_relaxed))
		return 1;
	/* an arena to create unless they all exist or a spare waits (arenas_ahead()) */
	if (!atomic_load_explicit(&arenas_all_exist, memory_order_relaxed) &&
	    !atomic_load_explicit(&spares, memory_order_relaxed)) {
		if (address_space_for(FIRST_CALL_HEADROOM))
			return 1;
	} else if (address_space_for(REUSE_HEADROOM)) {
		return 1;
	} else if (lifeboat) {
		dallocx(lifeboat, MALLOCX_TCACHE_NONE);
		lifeboat = NULL;
		return 1;
	}
	pool__unlock(&je_first_lock);
	read_as_limit();
	return -1;
}

static void first_call_end(int state)
{
	if (state == 2) {
		/* every arena known, no spare to count down: nothing to note, and no lock taken */
		if (atomic_load_explicit(&arenas_all_exist, memory_order_relaxed) &&
		    !atomic_load_explicit(&spares, memory_order_relaxed)) {
			je_thread_ready = 1;
			return;
		}
		pool__lock(&je_first_lock);
		state = 1;
	}
	if (state == 1) {
		je_thread_ready = 1;
		note_arena();
		lifeboat_arm();
		pool__unlock(&je_first_lock);
	}
}

/*
 * A thread set up, after an allocation the OS layer could not satisfy (`failed`: the limit
 * may be new), or when a reserve is wanted: the limit again, and a new reserve.
 */
static __attribute__((noinline, cold)) void os_short(int failed)
{
	if (failed)
		read_as_limit();
	pool__lock(&je_first_lock);
	lifeboat_arm();
	pool__unlock(&je_first_lock);
}

void pool__os_reread_limit(void)
{
	read_as_limit();
}

int pool__os_thread_ready(void)
{
	return je_thread_ready;
}

unsigned long pool__os_limit_reads(void)
{
	return atomic_load_explicit(&as_limit_reads, memory_order_relaxed);
}

/*
 * fork(): the child's only thread must not find the lock held by a thread it does not have. The
 * core's fork handlers call these last and first (pool.c): the lock is the last of the lock
 * order, since a thread may take it under the pool list lock (its first call into jemalloc
 * inside pool_create()).
 */
void pool__os_fork_prepare(void)
{
	pool__lock(&je_first_lock);
}

void pool__os_fork_after(void)
{
	pool__unlock(&je_first_lock);
}

/*
 * Start-up: the limit, and the first call of the thread that loads the library (main(), or the
 * caller of dlopen()), made now while the process is small so that creating pools from it
 * never waits for headroom (it also learns the number of arenas, and makes the reserve under
 * a limit).
 */
__attribute__((constructor)) static void os_init(void)
{
	int first;

	read_as_limit();
	first = first_call_begin();
	if (first >= 0) {
		void *p = mallocx(1, 0);

		if (p)
			dallocx(p, 0);
		first_call_end(first);
	}
}

/*
 * mallocx(size, flags) through the first-call guard. *refused: 1 when the guard refused the
 * call (NULL returned, and no other call into jemalloc may follow from this thread), else 0.
 */
static void *guarded_mallocx(size_t size, int flags, int *refused)
{
	int first = first_call_begin();
	void *p;

	*refused = first < 0;
	if (first < 0)
		return NULL;
	p = mallocx(size, flags);
	first_call_end(first);
	return p;
}

void *pool__os_alloc(size_t size, size_t align)
{
	int refused;
	void *p;

	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	p = guarded_mallocx(size, MALLOCX_ALIGN(align), &refused);
	if (refused)
		return NULL;
	if (__builtin_expect(!p, 0))
		p = alloc_elsewhere(size, MALLOCX_ALIGN(align));
	if (__builtin_expect(!p || atomic_load_explicit(&lifeboat_wanted, memory_order_relaxed), 0))
		os_short(!p);
	return p;
}

void pool__os_free(void *ptr, size_t size, size_t align)
{
	sdallocx(ptr, size, MALLOCX_ALIGN(align));
}

/*
 * Slabs come from the calling thread's arena through its tcache, as objects do: slabs are made
 * as often as a pool grows (one per 7 to 31 objects of 1 KiB and more, per 16 KiB of smaller
 * ones), and from arena 0 past every tcache, one lock for every thread, the server rows at 64
 * threads on 16 cores with 16,384 live objects each take 61 ns an allocation, against 18 from
 * the thread's arena. Under RLIMIT_AS a
 * thread whose own arena has no room (jemalloc keeps address space per arena, opt.retain) takes
 * the slab from the arenas that retain a burst's memory (alloc_elsewhere(), as for objects:
 * tests/os/check_oom.c). Any thread may free a slab: jemalloc finds its arena from its address.
 */
#define SLAB_FLAGS(size) (MALLOCX_ALIGN(size) | MALLOCX_ZERO)

void *pool__os_slab_alloc(size_t size)
{
	int refused;
	void *p;

	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	p = guarded_mallocx(size, SLAB_FLAGS(size), &refused);
	if (refused)
		return NULL;
	if (__builtin_expect(!p, 0))
		p = alloc_elsewhere(size, SLAB_FLAGS(size));
	if (__builtin_expect(!p || atomic_load_explicit(&lifeboat_wanted, memory_order_relaxed), 0))
		os_short(!p);
	return p;
}

void pool__os_slab_free(void *ptr, size_t size)
{
	sdallocx(ptr, size, SLAB_FLAGS(size));
}

void *pool__os_meta_alloc(size_t size, size_t align)
{
	int refused;
	void *p;

	if (pool__fault(POOL_FAULT_META))
		return NULL;
	p = guarded_mallocx(size, MALLOCX_ALIGN(align) | MALLOCX_ZERO, &refused);
	if (refused)
		return NULL;
	if (__builtin_expect(!p, 0))
		p = alloc_elsewhere(size, MALLOCX_ALIGN(align) | MALLOCX_ZERO);
	if (__builtin_expect(!p, 0))
		os_short(1);
	return p;
}

void pool__os_meta_free(void *ptr, size_t size, size_t align)
{
	if (ptr)
		sdallocx(ptr, size, MALLOCX_ALIGN(align));
}

/*
 * Purging every arena gives dirty pages back to the kernel with madvise(); it costs a system
 * call per run of dirty pages, so it belongs to pool_gc()/pool_trim(), never a hot path.
 * "arena.<i>.purge" with i = MALLCTL_ARENAS_ALL is documented in jemalloc(3). The calling
 * thread's tcache is flushed first ("thread.tcache.flush"): pool_gc() has just freed objects
 * from this thread, which jemalloc keeps in its tcache, so their slabs would stay in use and
 * their arenas could not reuse them (under RLIMIT_AS, another thread then found no memory).
 * The limit is read again first (a program that changed it calls pool_trim()), and under one,
 * a reserve for new threads is made if there is none (above).
 */
void pool__os_trim(void)
{
	char cmd[64];
	int first;

	read_as_limit();
	first = first_call_begin();
	if (first < 0)
		return;
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	snprintf(cmd, sizeof(cmd), "arena.%u.purge", (unsigned int)MALLCTL_ARENAS_ALL);
	mallctl(cmd, NULL, NULL, NULL, 0);
	first_call_end(first);
	if (atomic_load_explicit(&lifeboat_wanted, memory_order_relaxed))
		os_short(0);
}

const char *pool__os_name(void)
{
	return "jemalloc";
}

/* jemalloc caches its statistics: bump "epoch" first, as jemalloc(3) says. */
void pool__os_usage(size_t *allocated, size_t *resident)
{
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);
	int first = first_call_begin();

	*allocated = *resident = 0;
	if (first < 0)
		return;
	mallctl("epoch", &epoch, &len, &epoch, len);
	len = sizeof(size_t);
	if (mallctl("stats.allocated", allocated, &len, NULL, 0) != 0)
		*allocated = 0;
	len = sizeof(size_t);
	if (mallctl("stats.resident", resident, &len, NULL, 0) != 0)
		*resident = 0;
	first_call_end(first);
}

#else /* C library */

/*
 * The C library needs no first-call guard (glibc falls back to its main arena when it cannot
 * create one), so RLIMIT_AS is never read here.
 */
void pool__os_reread_limit(void)
{
}

int pool__os_thread_ready(void)
{
	return 1;
}

void pool__os_thread_exit(void)
{
}

unsigned long pool__os_limit_reads(void)
{
	return 0;
}

/* fork(): the C library backend holds no lock of its own. */
void pool__os_fork_prepare(void)
{
}

void pool__os_fork_after(void)
{
}

void *pool__os_alloc(size_t size, size_t align)
{
	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	/* aligned_alloc() wants the size to be a multiple of the alignment. */
	return aligned_alloc(align, pool__round_up(size, align));
}

void pool__os_free(void *ptr, size_t size, size_t align)
{
	(void)size;
	(void)align;
	free(ptr);
}

void *pool__os_slab_alloc(size_t size)
{
	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	/* size is a power of two: a multiple of the alignment, as aligned_alloc() wants */
	return aligned_alloc(size, size);
}

void pool__os_slab_free(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

void *pool__os_meta_alloc(size_t size, size_t align)
{
	void *p;

	if (pool__fault(POOL_FAULT_META))
		return NULL;
	p = aligned_alloc(align, pool__round_up(size, align));

	if (p)
		memset(p, 0, size);
	return p;
}

void pool__os_meta_free(void *ptr, size_t size, size_t align)
{
	(void)size;
	(void)align;
	free(ptr);
}

/* malloc_trim(0) walks every arena and madvise()s free pages away: milliseconds on big heaps. */
void pool__os_trim(void)
{
	malloc_trim(0);
}

const char *pool__os_name(void)
{
	return "libc";
}

/* mallinfo2() (glibc 2.33+): uordblks are bytes in use; arena + hblkhd what it got from the OS. */
void pool__os_usage(size_t *allocated, size_t *resident)
{
	struct mallinfo2 mi = mallinfo2();

	*allocated = mi.uordblks + mi.hblkhd;
	*resident = mi.arena + mi.hblkhd;
}

#endif

size_t pool__os_page_size(void)
{
	static size_t page;
	long v;

	if (!page) {
		v = sysconf(_SC_PAGESIZE);
		page = v > 0 ? (size_t)v : PAGE_SIZE_FALLBACK;
	}
	return page;
}

size_t pool__os_resident(const void *addr, size_t len)
{
	size_t page = pool__os_page_size(), off, n, i, resident = 0;
	unsigned char vec[PURGE_VEC];

	POOL_ASSERT(!((uintptr_t)addr & (page - 1)) && !(len & (page - 1)));
	for (off = 0; off < len; off += n * page) {
		n = (len - off) / page < PURGE_VEC ? (len - off) / page : PURGE_VEC;
		/* not known here (a sandbox without mincore()): all of it counts */
		if (mincore((char *)addr + off, n * page, vec) != 0)
			return len;
		for (i = 0; i < n; i++)
			resident += vec[i] & 1;
	}
	return resident * page;
}

long pool__os_purge(void *addr, size_t len)
{
	size_t resident = pool__os_resident(addr, len);

	if (!resident)
		return 0;
	if (madvise(addr, len, MADV_DONTNEED) != 0)
		return -1;
	return (long)resident;
}

int pool__os_read_number(const char *path, unsigned long *value)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return sscanf(buf, "%lu", value) == 1 ? 0 : -1;
}

void *pool__os_map(size_t len)
{
	void *p;

	if (pool__fault(POOL_FAULT_MAP))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void pool__os_unmap(void *addr, size_t len)
{
	munmap(addr, len);
}

int pool__os_protect(void *addr, size_t len, int access)
{
	return mprotect(addr, len, access ? PROT_READ | PROT_WRITE : PROT_NONE);
}

void *pool__os_reserve(size_t len)
{
	void *p;

	if (pool__fault(POOL_FAULT_MAP))
		return NULL;
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void pool__os_discard(void *addr, size_t len)
{
	/* one call, whose mapping merges with the reservation around it */
	if (mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
	         0) != MAP_FAILED)
		return;
	madvise(addr, len, MADV_DONTNEED);
	mprotect(addr, len, PROT_NONE);
}

int pool__os_safe_read(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)src, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

void pool__os_fault_context(const void *uctx, const void **pc, int *write_fault)
{
#if defined(__x86_64__)
	const ucontext_t *uc = uctx;

	*pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
	/* the page-fault error code: bit 1 set for a write (Intel SDM vol. 3A, 4.7) */
	*write_fault = !!(uc->uc_mcontext.gregs[REG_ERR] & 2);
#else
	(void)uctx;
	*pc = NULL;
	*write_fault = -1;
#endif
}

unsigned long pool__os_thread_id(void)
{
	return (unsigned long)gettid();
}
