/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Fault injection for the tests' sweep (see pool-fault.h).
 */
#include <stdatomic.h>

#include "os/pool-fault.h"

atomic_uint pool__fault_armed;
static atomic_ulong countdown[POOL_FAULT_SITES];
static atomic_ulong calls[POOL_FAULT_SITES];

int pool__fault_hit(enum pool_fault_site site)
{
	unsigned long left;

	if (!(atomic_load_explicit(&pool__fault_armed, memory_order_acquire) & (1u << site)))
		return 0;
	atomic_fetch_add_explicit(&calls[site], 1, memory_order_relaxed);
	left = atomic_fetch_sub_explicit(&countdown[site], 1, memory_order_relaxed);
	if (left != 1)
		return 0;
	atomic_fetch_and_explicit(&pool__fault_armed, ~(1u << site), memory_order_release);
	return 1;
}

unsigned long pool__fault_arm(enum pool_fault_site site, unsigned long k)
{
	unsigned long seen = atomic_exchange_explicit(&calls[site], 0, memory_order_relaxed);

	if (!k) {
		atomic_fetch_and_explicit(&pool__fault_armed, ~(1u << site), memory_order_release);
		return seen;
	}
	atomic_store_explicit(&countdown[site], k, memory_order_relaxed);
	atomic_fetch_or_explicit(&pool__fault_armed, 1u << site, memory_order_release);
	return seen;
}
