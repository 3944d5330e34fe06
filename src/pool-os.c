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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
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

void *pool__os_alloc(size_t size, size_t align)
{
	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	return mallocx(size, MALLOCX_ALIGN(align));
}

void pool__os_free(void *ptr, size_t size, size_t align)
{
	sdallocx(ptr, size, MALLOCX_ALIGN(align));
}

void *pool__os_meta_alloc(size_t size, size_t align)
{
	if (pool__fault(POOL_FAULT_META))
		return NULL;
	return mallocx(size, MALLOCX_ALIGN(align) | MALLOCX_ZERO);
}

void pool__os_meta_free(void *ptr, size_t size, size_t align)
{
	if (ptr)
		sdallocx(ptr, size, MALLOCX_ALIGN(align));
}

/*
 * Purging every arena gives dirty pages back to the kernel with madvise(); it costs a system
 * call per run of dirty pages, so it belongs to pool_gc()/pool_trim(), never a hot path.
 * "arena.<i>.purge" with i = MALLCTL_ARENAS_ALL is documented in jemalloc(3).
 */
void pool__os_trim(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "arena.%u.purge", (unsigned int)MALLCTL_ARENAS_ALL);
	mallctl(cmd, NULL, NULL, NULL, 0);
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

	*allocated = *resident = 0;
	mallctl("epoch", &epoch, &len, &epoch, len);
	len = sizeof(size_t);
	if (mallctl("stats.allocated", allocated, &len, NULL, 0) != 0)
		*allocated = 0;
	len = sizeof(size_t);
	if (mallctl("stats.resident", resident, &len, NULL, 0) != 0)
		*resident = 0;
}

#else /* C library */

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
