/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool's internals that the inline functions and macros of <pool/pool.h> expand to: the
 * thread's cache array, the slow paths and the way they are called, POOL_DECLARE's helpers.
 * Not API (POOL__ and pool__ names): include <pool/pool.h>, which includes this file, and call
 * what it documents.
 */
#ifndef POOL_POOL_INLINE_H
#define POOL_POOL_INLINE_H

#include <pool/pool-t.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Internal to the inline fast path: the calling thread's caches, indexed by pool (empty entries
 * until its first slow path, or without a cache). One pointer of initial-exec TLS, small enough
 * for glibc's static TLS surplus, so that the library may be dlopen()ed.
 */
POOL_API extern __thread struct pool_tcache *pool__tls_cache
	__attribute__((tls_model("initial-exec")));

/*
 * Internal: the debugging flags in effect (POOL_DBG_*), which programs read through pool.h's
 * pool_debugging (the inline functions do not test them). Its name is one no program has, so
 * that a program's own variable of the public name (HAProxy has one) cannot take its place in
 * the dynamic linker's eyes. Written only by the library, with release stores.
 */
POOL_API extern unsigned int pool__debugging;

/*
 * Internal to the inline pool_free(): the bounds of the region where the profile's sampled
 * objects live (src/os/pool-region.c). An object p with p - base < len is a sample, whose free
 * must reach the slow path. Both 0 until a profile first runs (no address passes), set once
 * then and never changed.
 */
struct pool__region {
	uintptr_t base;
	uintptr_t len;
};
POOL_API extern struct pool__region pool__sampled;

/*
 * Internal to POOL_DECLARE: create or exit(1) with a message; at exit, flush the calling
 * thread's caches and leave the pool alone (the name stays for the ABI).
 */
POOL_API struct pool_head *pool__declare_create(const char *name, size_t size);
POOL_API void pool__declare_destroy(struct pool_head *pool);

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

/*
 * The fast path writes `top` with a plain store and reads the TLS pointer and the region's
 * bounds with plain loads. Other threads read `top` only for statistics, tolerating a stale
 * value; a thread whose TLS pointer another switches to the empty entries (debugging that takes
 * the fast path away, src/tcache/pool-thread.c) may take one more fast path with the old one;
 * the bounds change once, before any object lies in the region: these races are meant. Under
 * ThreadSanitizer those accesses (and the slow paths' loads of the debugging word) are relaxed
 * atomic ones, so that the tolerated races are not reported. Internal: POOL__ names are not API.
 */
#if defined(__SANITIZE_THREAD__)
#define POOL__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL__TSAN 1
#endif
#endif
#ifdef POOL__TSAN
#define POOL__TC_TOP_SET(tc, v) __atomic_store_n(&(tc)->top, (v), __ATOMIC_RELAXED)
#define POOL__DEBUGGING() __atomic_load_n(&pool__debugging, __ATOMIC_RELAXED)
#define POOL__TLS_CACHE() __atomic_load_n(&pool__tls_cache, __ATOMIC_RELAXED)
#define POOL__SAMPLED(p) ((uintptr_t)(p) - __atomic_load_n(&pool__sampled.base, __ATOMIC_RELAXED) \
                          < __atomic_load_n(&pool__sampled.len, __ATOMIC_RELAXED))
#else
#define POOL__TC_TOP_SET(tc, v) ((tc)->top = (v))
#define POOL__DEBUGGING() ((unsigned int)pool__debugging)
#define POOL__TLS_CACHE() (pool__tls_cache)
#define POOL__SAMPLED(p) ((uintptr_t)(p) - pool__sampled.base < pool__sampled.len)
#endif

/* This thread's cache entry for a pool: the TLS array plus the pool's byte offset (aligned). */
#define POOL__TCACHE(ro) \
	((struct pool_tcache *)(void *)((char *)POOL__TLS_CACHE() + (ro)->cache_off))

#ifdef __cplusplus
}
#endif

#endif
