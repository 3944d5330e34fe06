/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The `malloc` backend (-dMmalloc): each object of a pool created with the `malloc` layout
 * comes from the C library's malloc() (posix_memalign() above its alignment) and goes back with
 * free(), one by one, so that a tool that replaces or watches those calls (Valgrind's memcheck,
 * an application built with -fsanitize=address or memory, any LD_PRELOADed malloc) sees each
 * object as the application's own block, of exactly the bytes the pool's layout uses. Private
 * header of the OS layer.
 */
#ifndef POOL_SRC_POOL_MALLOC_H
#define POOL_SRC_POOL_MALLOC_H

#include <stddef.h>

/*
 * `size` bytes (exactly: the block is not rounded up) aligned on `align` (a power of two >= 16):
 * malloc() when the C library's alignment suffices, else posix_memalign(). NULL when out of
 * memory (or at the fault-injection site of pool__os_alloc()).
 */
void *pool__malloc_alloc(size_t size, size_t align);

/* Give back an object of pool__malloc_alloc(): free(). */
void pool__malloc_free(void *obj);

/*
 * The process's malloc() gives its free pages back to the system now: glibc's malloc_trim(0),
 * which walks every arena (milliseconds on big heaps); nothing for an allocator that replaced
 * glibc's. For the memory a library that libpool loaded (libdw) took and freed.
 */
void pool__malloc_trim(void);

#endif
