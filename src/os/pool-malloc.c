/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The `malloc` backend (-dMmalloc, doc/debugging.md): objects from the C library's malloc(),
 * one block per object, back with free(). Whatever answers those calls answers here: glibc's
 * allocator natively, Valgrind's memcheck (which replaces them and keeps a redzone and the
 * stacks of the allocation and of the free for each block), the runtime of an application built
 * with -fsanitize=address or -fsanitize=memory (its interceptors are the process's malloc and
 * free, whether libpool was built with the sanitizer or not), or an LD_PRELOADed allocator. The
 * call is always the process's `malloc` symbol, never jemalloc's mallocx(), which no such tool
 * sees: in the jemalloc build libc comes before libjemalloc in the dynamic linker's search
 * order (the program links libc itself), and a preloaded allocator or a sanitizer runtime comes
 * before both.
 *
 * The stack of a free is the stack of this free(): the core calls it synchronously from the
 * pool_free() that gave the object back (a pool of the `malloc` layout has no thread cache and
 * no shared list), so the tool's report names the application's function that called
 * pool_free().
 *
 * The same malloc() serves the libraries libpool loads (libdw): pool__malloc_trim() gives the
 * pages they freed back to the system.
 */
#include <malloc.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

#include "os/pool-fault.h"
#include "os/pool-malloc.h"

void *pool__malloc_alloc(size_t size, size_t align)
{
	void *p;

	if (pool__fault(POOL_FAULT_OS_ALLOC))
		return NULL;
	if (align <= alignof(max_align_t))
		return malloc(size);
	/* posix_memalign() takes any size, so the block ends where the object does */
	return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

void pool__malloc_free(void *obj)
{
	free(obj);
}

void pool__malloc_trim(void)
{
	malloc_trim(0);
}
