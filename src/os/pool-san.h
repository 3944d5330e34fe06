/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Sanitizer and Valgrind annotations, in one inline header (part of the OS layer: it wraps the
 * compiler's and Valgrind's client interfaces and calls nothing of libpool). Each function
 * compiles to nothing unless the build has AddressSanitizer or the program runs under Valgrind;
 * the callers decide whether to call them at all (the POOL_DBG_SANITIZER bit).
 */
#ifndef POOL_SRC_POOL_SAN_H
#define POOL_SRC_POOL_SAN_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define POOL_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_HAVE_ASAN 1
#endif
#endif
#ifdef POOL_HAVE_ASAN
#include <sanitizer/asan_interface.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#define POOL_HAVE_VALGRIND 1
#include <valgrind/memcheck.h>
#endif
#endif

#ifdef POOL_HAVE_VALGRIND
#define POOL_ON_VALGRIND() RUNNING_ON_VALGRIND
#else
#define POOL_ON_VALGRIND() 0
#endif

/* 1 in a build with AddressSanitizer. */
static inline int pool__san_asan_build(void)
{
#ifdef POOL_HAVE_ASAN
	return 1;
#else
	return 0;
#endif
}

/*
 * 1 when AddressSanitizer's runtime is in the process: this library was built with it, or the
 * program was (its interface, __asan_init, is then a symbol of the process, whichever of the
 * compilers' runtimes it links).
 */
static inline int pool__san_asan_process(void)
{
	return pool__san_asan_build() || dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
}

/*
 * 1 when the program runs under Valgrind's memcheck tool, the one tool that must see every
 * object go in and out of the pools. RUNNING_ON_VALGRIND says that some Valgrind tool runs the
 * program; which one shows in LD_PRELOAD, where Valgrind puts its tool's preload library
 * (vgpreload_memcheck-<platform>.so; callgrind and cachegrind have none, DRD and Helgrind their
 * own). Read once at start-up, before the program can change its environment.
 */
static inline int pool__san_under_memcheck(void)
{
	const char *preload;

	if (!POOL_ON_VALGRIND())
		return 0;
	preload = getenv("LD_PRELOAD");
	return preload && strstr(preload, "vgpreload_memcheck") != NULL;
}

/* The library itself is done with [ptr, ptr+len): any access by anyone is an error. */
static inline void pool__san_noaccess(const void *ptr, size_t len)
{
#ifdef POOL_HAVE_ASAN
	ASAN_POISON_MEMORY_REGION(ptr, len);
#endif
#ifdef POOL_HAVE_VALGRIND
	if (POOL_ON_VALGRIND())
		VALGRIND_MAKE_MEM_NOACCESS(ptr, len);
#endif
	(void)ptr;
	(void)len;
}

/* The library is about to read or write [ptr, ptr+len) (a pattern, a copy, a tag). */
static inline void pool__san_access(const void *ptr, size_t len)
{
#ifdef POOL_HAVE_ASAN
	ASAN_UNPOISON_MEMORY_REGION(ptr, len);
#endif
#ifdef POOL_HAVE_VALGRIND
	if (POOL_ON_VALGRIND())
		VALGRIND_MAKE_MEM_DEFINED(ptr, len);
#endif
	(void)ptr;
	(void)len;
}

/* Is the byte at `ptr` poisoned for ASan (0 without ASan)? */
static inline int pool__san_is_poisoned(const void *ptr)
{
#ifdef POOL_HAVE_ASAN
	return __asan_address_is_poisoned(ptr);
#else
	(void)ptr;
	return 0;
#endif
}

/*
 * Valgrind mempools: a pool (anchored at its head) is a memcheck mempool whose chunks are the
 * objects handed out, so that memcheck reports an access to a freed object with the stack of the
 * free. `size` is the usable size; the rest of the stride (tag, caller...) stays accessible to
 * the library.
 */
static inline void pool__san_mempool_create(const void *anchor)
{
#ifdef POOL_HAVE_VALGRIND
	if (POOL_ON_VALGRIND())
		VALGRIND_CREATE_MEMPOOL(anchor, 0, 0);
#endif
	(void)anchor;
}

static inline void pool__san_mempool_destroy(const void *anchor)
{
#ifdef POOL_HAVE_VALGRIND
	if (POOL_ON_VALGRIND())
		VALGRIND_DESTROY_MEMPOOL(anchor);
#endif
	(void)anchor;
}

static inline void pool__san_mempool_alloc(const void *anchor, void *obj, size_t size,
                                           size_t stride)
{
#ifdef POOL_HAVE_VALGRIND
	if (POOL_ON_VALGRIND()) {
		VALGRIND_MEMPOOL_ALLOC(anchor, obj, size);
		VALGRIND_MAKE_MEM_DEFINED((char *)obj + size, stride - size);
	}
#endif
	(void)anchor;
	(void)obj;
	(void)size;
	(void)stride;
}

static inline void pool__san_mempool_free(const void *anchor, void *obj, size_t stride)
{
#ifdef POOL_HAVE_VALGRIND
	if (POOL_ON_VALGRIND()) {
		VALGRIND_MEMPOOL_FREE(anchor, obj);
		VALGRIND_MAKE_MEM_NOACCESS(obj, stride);
	}
#endif
	(void)anchor;
	(void)obj;
	(void)stride;
}

#endif
