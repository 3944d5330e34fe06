/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * OS layer: the only place that gets memory from below (jemalloc by default, the C library with
 * USE_JEMALLOC=0) or from the kernel (mmap for the use-after-free allocator). Private header.
 */
#ifndef POOL_SRC_POOL_OS_H
#define POOL_SRC_POOL_OS_H

#include <stddef.h>

/*
 * Objects: `size` bytes aligned on `align` (a power of two >= 16). NULL when out of memory, and
 * with jemalloc also when this thread's first call into jemalloc would have too little address
 * space under RLIMIT_AS to set the thread up (a crash in jemalloc; see pool-os.c).
 */
void *pool__os_alloc(size_t size, size_t align);
/* Give back an object from pool__os_alloc() with the same size and alignment. */
void pool__os_free(void *ptr, size_t size, size_t align);

/*
 * A slab for the slab tier: `size` bytes (a power of two, at least 16 KiB) aligned on `size`.
 * With jemalloc it reads as zero (MALLOCX_ZERO: free for a fresh extent, a memset for the sizes
 * its tcache keeps, up to 32 KiB, else madvise(MADV_DONTNEED); jemalloc 5.3,
 * ehooks_default_zero_impl()), with the C library not. Nothing relies on it: pool_zalloc()
 * clears every object (pool-alloc.c); without the zeroing, the server rows at 16,384 live
 * objects take 1-21% longer (median 8%, six alternating pairs), and a slab given back too early
 * would keep a live object's canary in check_slab. NULL as
 * pool__os_alloc() (the same fault-injection site).
 */
void *pool__os_slab_alloc(size_t size);
/* Give back a slab from pool__os_slab_alloc() of the same size. */
void pool__os_slab_free(void *ptr, size_t size);

/* Metadata (pool heads, tables): zero-filled, `align` a power of two. NULL as pool__os_alloc(). */
void *pool__os_meta_alloc(size_t size, size_t align);
void pool__os_meta_free(void *ptr, size_t size, size_t align);

/*
 * Ask the allocator to return free memory to the system. Never on a hot path. With jemalloc it
 * also reads RLIMIT_AS again (pool__os_reread_limit()).
 */
void pool__os_trim(void);

/*
 * Read RLIMIT_AS again (one system call) for the first-call guard of the jemalloc layer, which
 * otherwise reads it at load, at pool_trim() and after the layer runs out (pool-os.c says when
 * and why); the C library layer needs no guard and does nothing. pool_create() calls it.
 */
void pool__os_reread_limit(void);

/*
 * Has the calling thread made its first call into jemalloc (always 1 with the C library)? A
 * thread the first-call guard refused (no room under RLIMIT_AS) may still take objects from
 * slabs other threads made, but gets no new slab until it is set up (tests/os/check_oom.c).
 */
int pool__os_thread_ready(void);

/*
 * The calling thread exits (the core's thread-exit destructor, after its last call into this
 * layer): with jemalloc under RLIMIT_AS, the arena it leaves counts again among the spares that
 * let new threads in (pool-os.c). Nothing with the C library.
 */
void pool__os_thread_exit(void);

/* How many times the layer has read RLIMIT_AS since the library loaded (tests count them). */
unsigned long pool__os_limit_reads(void);

/* "jemalloc" or "libc". */
const char *pool__os_name(void);

/* Bytes the allocator has handed out and holds resident; 0 where it cannot tell. */
void pool__os_usage(size_t *allocated, size_t *resident);

/* The system page size in bytes. */
size_t pool__os_page_size(void);

/*
 * The bytes of [addr, addr + len), both page-aligned, within a block this layer handed out,
 * that are resident now (mincore(2), a page at a time; all of them where it cannot tell).
 */
size_t pool__os_resident(const void *addr, size_t len);

/*
 * Give the kernel the pages of [addr, addr + len), both page-aligned, within a block this layer
 * handed out and still counts as handed out (a slab): madvise(MADV_DONTNEED), so that they
 * leave the resident set at once and read as zero at their next touch (a page fault then).
 * mincore() first: when none of them is resident (a run purged before), nothing is done.
 * Returns the bytes of them that were resident, every byte where mincore() cannot tell, or -1
 * when madvise() refused (errno as it set it); nothing else changes.
 */
long pool__os_purge(void *addr, size_t len);

/*
 * The first decimal number of the file at `path` (a /proc or /sys file: a limit, a count) into
 * *value: 0, or -1 when the file cannot be read or does not start with a number.
 */
int pool__os_read_number(const char *path, unsigned long *value);

/* Anonymous private mapping of `len` bytes (page multiple), read-write; NULL on failure. */
void *pool__os_map(size_t len);
void pool__os_unmap(void *addr, size_t len);
/* Make [addr, addr+len) inaccessible (access == 0) or read-write (access != 0); 0 or -1. */
int pool__os_protect(void *addr, size_t len, int access);

/*
 * Address space of `len` bytes (page multiple), inaccessible, no memory committed
 * (PROT_NONE, MAP_NORESERVE): pool__os_protect() maps parts of it. NULL on failure.
 */
void *pool__os_reserve(size_t len);

/*
 * Give the pages of [addr, addr + len) (page-aligned, in a reservation) back to the system and
 * make them inaccessible again, as reserved: one mmap(MAP_FIXED), or madvise() and mprotect()
 * where that is refused. Cannot fail.
 */
void pool__os_discard(void *addr, size_t len);

/*
 * Copy `len` bytes at `src`, which may be unreadable (protected, unmapped), into `dst` without
 * faulting: 0, or -1 when any of it could not be read. Async-signal-safe (one system call).
 */
int pool__os_safe_read(void *dst, const void *src, size_t len);

/*
 * From the ucontext_t a SA_SIGINFO handler receives: the faulting instruction's address (NULL
 * where the platform does not say) and whether the access was a write (1), a read (0) or
 * unknown (-1). Async-signal-safe.
 */
void pool__os_fault_context(const void *uctx, const void **pc, int *write_fault);

/*
 * fork(): take the OS layer's own lock before (the last lock of the order: pool.c's fork
 * handlers call it after taking theirs) and release it after, in the parent and the child.
 */
void pool__os_fork_prepare(void);
void pool__os_fork_after(void);

/* The calling thread's kernel id (gettid()). Async-signal-safe. */
unsigned long pool__os_thread_id(void);

#endif
