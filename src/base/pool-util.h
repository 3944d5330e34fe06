/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Small helpers shared by every layer (rounding, hashing, random numbers, decimal numbers, the
 * monotonic clock, functions looked up in a loaded library). Private header; inline only, it
 * calls nothing of libpool.
 */
#ifndef POOL_SRC_POOL_UTIL_H
#define POOL_SRC_POOL_UTIL_H

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* `v` rounded up to a multiple of `a`, a power of two. */
static inline size_t pool__round_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * The top `bits` bits (1..32) of Fibonacci hashing of `v` (Knuth, TAOCP vol. 3, 6.4:
 * multiplication by 2^64 / phi), which spreads consecutive or aligned addresses evenly. Pointers
 * to objects are hashed without their 4 low bits, which are always zero (16-byte alignment).
 */
static inline unsigned int pool__hash_bits(uint64_t v, unsigned int bits)
{
	return (unsigned int)((v * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

static inline unsigned int pool__hash_ptr(const void *p, unsigned int bits)
{
	return pool__hash_bits((uint64_t)(uintptr_t)p >> 4, bits);
}

/*
 * Copy the `n` pointers of src[] to dst[] (arrays that do not overlap) and look for a NULL in
 * the same pass, four at a time (one branch per four pointers, where a copy then a look spent
 * two passes): 1 when none was NULL and dst[0..n-1] is the copy; 0 when it met one, dst[] then
 * written partly. The bulk calls' moves into magazines use it: a magazine never holds NULL.
 */
static inline int pool__copy_nonnull(void **restrict dst, void *const *restrict src, size_t n)
{
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		void *a = src[i], *b = src[i + 1], *c = src[i + 2], *d = src[i + 3];

		dst[i] = a;
		dst[i + 1] = b;
		dst[i + 2] = c;
		dst[i + 3] = d;
		if (__builtin_expect(!a || !b || !c || !d, 0))
			return 0;
	}
	for (; i < n; i++) {
		dst[i] = src[i];
		if (__builtin_expect(!src[i], 0))
			return 0;
	}
	return 1;
}

/*
 * Fill dst[0..room) from src[0..n), NULL entries skipped (pool_free_bulk() accepts them, a
 * magazine never holds one): the pointers written are returned, the entries of src[] consumed
 * (from the first) go to *consumed. The common case, no NULL among the first min(n, room), is
 * pool__copy_nonnull()'s one pass; a NULL met sends it to a loop that skips them.
 */
static inline size_t pool__copy_skip_null(void **restrict dst, size_t room,
                                          void *const *restrict src, size_t n, size_t *consumed)
{
	size_t k = n < room ? n : room, i, w = 0;

	if (pool__copy_nonnull(dst, src, k)) {
		*consumed = k;
		return k;
	}
	for (i = 0; i < n && w < room; i++)
		if (src[i])
			dst[w++] = src[i];
	*consumed = i;
	return w;
}

/* A spin-wait's pause: tells the core a loop is waiting (no memory effect). */
static inline void pool__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/*
 * splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA
 * 2014): `x` mixed into a 64-bit value fit to seed the generator below from a weak seed (a time,
 * a thread id).
 */
static inline uint64_t pool__splitmix64(uint64_t x)
{
	x += UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

/*
 * One step of xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
 * generators, scrambled", ACM TOMS 2016) on *state, which must not be 0 (it never becomes 0):
 * returns the scrambled output, whose high bits are the good ones (take them with a shift).
 */
static inline uint64_t pool__xorshift64s(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

/*
 * Nanoseconds on `clock`: CLOCK_MONOTONIC, or CLOCK_MONOTONIC_COARSE where a few milliseconds
 * of resolution are plenty (demand windows, failure bursts, retries) and the cheaper read pays.
 * Both come from the vDSO without a system call; they never fail for these clock ids.
 */
static inline uint64_t pool__clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A decimal number s[0..len): digits only (no sign, no blank, no 0x), and with `suffix` one
 * optional k, m or g after them, upper or lower case, multiplying by 2^10, 2^20 or 2^30 (the
 * byte sizes of POOL_CACHE_SIZE and of the -dM options that take bytes). Returns 0 and sets *out
 * when the value is at most `max`; -1 for anything else (empty, another character, a suffix
 * alone, overflow, above `max`), *out unchanged.
 */
static inline int pool__parse_decimal(const char *s, size_t len, int suffix,
                                      unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0, lim;
	unsigned int shift = 0;
	size_t i;

	if (suffix && len > 1) {
		switch (s[len - 1]) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: break;
		}
		len -= shift != 0;
	}
	if (len == 0)
		return -1;
	lim = max >> shift;
	for (i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (s[i] < '0' || s[i] > '9' || d > lim || v > (lim - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v << shift;
	return 0;
}

/*
 * The functions libpool looks up in a library it loads itself rather than link it: hwloc
 * (topology.c), libdw (pool-symbols.c). LIST(F, v) calls F(v, name) for each function's name.
 * POOL_DL_TABLE(v, LIST) declares a static struct `v` of one pointer per function, typed as the
 * library's header declares it (__typeof__: a call through one is checked as a direct call
 * is), with v_names[] and v_slots[] for pool__dlsym_all(); POOL_DL_COUNT(v) counts them.
 */
#define POOL_DL_POINTER(v, name) __typeof__(name) *name;
#define POOL_DL_NAME(v, name) #name,
#define POOL_DL_SLOT(v, name) (void **)&v.name,
#define POOL_DL_TABLE(v, LIST)                                                                  \
	static struct {                                                                          \
		LIST(POOL_DL_POINTER, v)                                                         \
	} v;                                                                                     \
	static const char *const v##_names[] = { LIST(POOL_DL_NAME, v) };                        \
	static void **const v##_slots[] = { LIST(POOL_DL_SLOT, v) }
#define POOL_DL_COUNT(v) (sizeof(v##_names) / sizeof(*v##_names))

/*
 * Look up the `n` functions names[i] in `lib` (a dlopen(3) handle) into *slots[i], each slot a
 * function pointer seen as a void * (as POSIX's dlsym() hands them out). Returns NULL when all
 * were found, else the first name missing (the slots before it are set).
 */
static inline const char *pool__dlsym_all(void *lib, const char *const *names,
                                          void **const *slots, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(*slots[i] = dlsym(lib, names[i])))
			return names[i];
	return NULL;
}

#endif
