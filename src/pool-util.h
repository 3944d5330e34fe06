/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Small pure helpers shared by every layer (rounding, hashing). Private header; inline only, it
 * calls nothing.
 */
#ifndef POOL_SRC_POOL_UTIL_H
#define POOL_SRC_POOL_UTIL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
