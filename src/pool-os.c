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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "pool-fault.h"
#include "pool-os.h"
#include "pool-util.h"

/* The page size when sysconf() cannot tell (the smallest page of every platform we run on). */
#define PAGE_SIZE_FALLBACK 4096u

#if POOL_USE_JEMALLOC
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif

#if POOL_USE_JEMALLOC

/*
 * A thread's first call into jemalloc, and the address-space limit.
 *
 * jemalloc (5.3.0, Debian's libjemalloc2) sets a thread up on its first allocating call: it
 * binds the thread to an arena, creating the arena if every existing one already has threads
 * (up to opt.narenas = 4 per CPU), and allocates the thread's tcache. Neither step may fail
 * there: when creating the arena fails, arena_choose_hard() returns NULL and
 * tcache_arena_associate() locks a mutex inside that NULL arena (SIGSEGV at address 0x28e8,
 * jemalloc issue #2289, open); when the tcache's stack cannot be allocated, the tcache stays
 * enabled with no stack and the allocation reads through a NULL stack pointer. Under an
 * address-space limit (RLIMIT_AS, `ulimit -v`) both happen as soon as the limit is near: a new
 * arena maps a 2 MiB base block aligned on 2 MiB (up to 4 MiB of address space while it is
 * trimmed), so it fails while small allocations still succeed from memory jemalloc holds. We
 * measured 7 crashes in 10 runs of 8 threads allocating until NULL at 30 MB, inside mallocx()
 * on a thread's first call. Frees are safe (a thread's first free sets up a minimal state
 * without tcache or arena).
 *
 * So a thread's first allocating call (mallocx, mallctl) from this layer goes first through
 * first_call_begin(): when the process has an RLIMIT_AS, the calls are serialised and made only
 * while the limit leaves FIRST_CALL_HEADROOM bytes of address space (the limit minus VmSize from
 * /proc/self/statm); otherwise the allocation fails (NULL, which the core counts) without
 * calling jemalloc, and the next call tries again. 6 MiB covers a new arena's base block (4 MiB
 * of address space while it is aligned, 2 MiB after), the tcache's stack (tens of KiB from
 * arena 0), and leaves 2 MiB for other threads allocating meanwhile; the arena's first extent
 * may then fail, which jemalloc handles (NULL). More would starve threads at small limits: at
 * 30 MB a program linked with libpool, hwloc and Check has about 8 MiB left once started, and
 * a thread refused here never gets memory until some is unmapped. Without RLIMIT_AS, or when
 * /proc cannot be read, nothing is checked. This protects the library's calls only: a thread
 * whose first call into jemalloc is the program's own malloc() (jemalloc replaces it) can still
 * crash there; programs that run under a tight RLIMIT_AS should also set MALLOC_CONF=narenas:1
 * (no arena to create) or build with USE_JEMALLOC=0 (glibc falls back to its main arena).
 * Strict overcommit (vm.overcommit_memory = 2) fails mappings the same way and is not checked.
 */
#define FIRST_CALL_HEADROOM (6ul << 20)

static __thread int je_thread_ready;        /* this thread called jemalloc through us */
static pthread_mutex_t je_first_lock = PTHREAD_MUTEX_INITIALIZER;

/* Bytes of address space RLIMIT_AS still allows; SIZE_MAX without a limit or when unknown. */
static size_t address_space_left(void)
{
	struct rlimit rl;
	unsigned long pages;
	size_t vm;

	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	/* the first number of statm is VmSize in pages */
	if (pool__os_read_number("/proc/self/statm", &pages) < 0)
		return SIZE_MAX;
	vm = pages * pool__os_page_size();
	return vm < rl.rlim_cur ? (size_t)rl.rlim_cur - vm : 0;
}

/*
 * Before an allocating call into jemalloc: 0 to go on (the thread is set up), 1 to go on
 * holding je_first_lock (its first call: first_call_end() after it), -1 to fail instead.
 */
static int first_call_begin(void)
{
	if (__builtin_expect(je_thread_ready, 1))
		return 0;
	pthread_mutex_lock(&je_first_lock);
	if (address_space_left() < FIRST_CALL_HEADROOM) {
		pthread_mutex_unlock(&je_first_lock);
		return -1;
	}
	return 1;
}

static void first_call_end(int state)
{
	if (state == 1) {
		je_thread_ready = 1;
		pthread_mutex_unlock(&je_first_lock);
	}
}

/*
 * fork(): the child's only thread must not find the lock held by a thread it does not have. The
 * core's fork handlers call these last and first (pool.c): the lock is the last of the lock
 * order, since a thread may take it under the pool list lock (its first call into jemalloc
 * inside pool_create()).
 */
void pool__os_fork_prepare(void)
{
	pthread_mutex_lock(&je_first_lock);
}

void pool__os_fork_after(void)
{
	pthread_mutex_unlock(&je_first_lock);
}

/*
 * Start-up: the thread that loads the library (main(), or the caller of dlopen()) makes its
 * first call now, while the process is small, so that creating pools from it never waits for
 * headroom.
 */
__attribute__((constructor)) static void os_init(void)
{
	int first = first_call_begin();

	if (first >= 0) {
		void *p = mallocx(1, 0);

		if (p)
			dallocx(p, 0);
		first_call_end(first);
	}
}

void *pool__os_alloc(size_t size, size_t align)
{
	int first;
	void *p;

	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	first = first_call_begin();
	if (first < 0)
		return NULL;
	p = mallocx(size, MALLOCX_ALIGN(align));
	first_call_end(first);
	return p;
}

void pool__os_free(void *ptr, size_t size, size_t align)
{
	sdallocx(ptr, size, MALLOCX_ALIGN(align));
}

void *pool__os_meta_alloc(size_t size, size_t align)
{
	int first;
	void *p;

	if (pool__fault(POOL_FAULT_META))
		return NULL;
	first = first_call_begin();
	if (first < 0)
		return NULL;
	p = mallocx(size, MALLOCX_ALIGN(align) | MALLOCX_ZERO);
	first_call_end(first);
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
 */
void pool__os_trim(void)
{
	char cmd[64];
	int first = first_call_begin();

	if (first < 0)
		return;
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	snprintf(cmd, sizeof(cmd), "arena.%u.purge", (unsigned int)MALLCTL_ARENAS_ALL);
	mallctl(cmd, NULL, NULL, NULL, 0);
	first_call_end(first);
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
