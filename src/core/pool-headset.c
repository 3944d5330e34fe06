/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The set of known pool heads (see pool-headset.h): an open-addressing hash table of head
 * addresses with linear probing (Knuth, TAOCP vol. 3, 6.4, algorithm L), keyed by Fibonacci
 * hashing of the address (pool-util.h). A slot holds 0 (empty), TOMBSTONE (a head forgotten:
 * probes go on past it), or a head's address with DEAD_BIT set once the head is destroyed
 * (heads are aligned on 128 bytes, so the low bits are free).
 *
 * The table is rebuilt, without its tombstones, when the slots in use (heads and tombstones)
 * would pass three quarters of it: to twice the heads it holds, and never below 32 slots. A
 * rebuild allocates the new table before it takes the set's lock and frees the old one after,
 * so nothing allocates or frees under the lock; writers are serialised by the pool list lock,
 * so no other writer can change the table in between. Costs: a lookup is one lock and, at a
 * load of at most 3/4, 2.5 probes on average for a hit (Knuth's formula (1 + 1/(1-a)) / 2);
 * 8 bytes per slot, at most 8 slots per head known after a rebuild (16 heads: 256 bytes).
 *
 * The report of a pointer that a slow path found not live (pool__bad_head(), pool-int.h) is
 * here too: the set tells a destroyed head from one it never knew.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "core/pool-headset.h"
#include "core/pool-int.h"
#include "base/pool-lock.h"
#include "os/pool-os.h"
#include "debug/pool-report.h"
#include "base/pool-util.h"

#define MIN_BITS    5u            /* 32 slots at least */
#define TOMBSTONE   ((uintptr_t)1)
#define DEAD_BIT    ((uintptr_t)2)

static struct pool_lock set_lock = POOL_LOCK_INITIALIZER;
static uintptr_t *slots;           /* NULL until the first head */
static unsigned int bits;          /* slots == 1 << bits */
static unsigned int heads;         /* live and dead heads in the table (under set_lock) */
static unsigned int in_use;        /* heads + tombstones (under set_lock) */

static inline uintptr_t key_of(const void *p)
{
	return (uintptr_t)p & ~(TOMBSTONE | DEAD_BIT);
}

/* The slot holding `p`, or the table size when absent. set_lock held (or the table private). */
static size_t find(const uintptr_t *tab, unsigned int tbits, const void *p)
{
	size_t mask = ((size_t)1 << tbits) - 1, i = pool__hash_ptr(p, tbits), n;

	POOL_ASSERT(tab != slots || pool__lock_held(&set_lock));
	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t v = tab[i];

		if (!v)
			break;
		if (v != TOMBSTONE && key_of((const void *)v) == (uintptr_t)p)
			return i;
	}
	return mask + 1;
}

/*
 * Put `v` (an address with its state bit) into the first free slot of its probe sequence.
 * set_lock held, or the table private (a rebuild).
 */
static void place(uintptr_t *tab, unsigned int tbits, uintptr_t v)
{
	size_t mask = ((size_t)1 << tbits) - 1, i = pool__hash_ptr((const void *)key_of((void *)v),
	                                                           tbits);

	POOL_ASSERT(tab != slots || pool__lock_held(&set_lock));
	while (tab[i] && tab[i] != TOMBSTONE)
		i = (i + 1) & mask;
	tab[i] = v;
}

int pool__headset_add(const struct pool_head *pool)
{
	uintptr_t *old = NULL, *tab = NULL;
	unsigned int nbits = MIN_BITS;
	size_t i, old_n = (size_t)1 << bits;

	POOL_ASSERT(((uintptr_t)pool & (TOMBSTONE | DEAD_BIT)) == 0);
	/*
	 * The pool list lock keeps every other writer out, so slots, bits, heads and in_use cannot
	 * change under us; readers only read. The new table is built before the set's lock.
	 */
	if (!slots || (size_t)(in_use + 1) * 4 > ((size_t)3 << bits)) {
		while (((size_t)1 << nbits) < (size_t)(heads + 1) * 2)
			nbits++;
		tab = pool__os_meta_alloc(((size_t)1 << nbits) * sizeof(*tab), sizeof(*tab));
		if (!tab) {
			errno = ENOMEM;
			return -1;
		}
		for (i = 0; slots && i < old_n; i++)
			if (slots[i] && slots[i] != TOMBSTONE)
				place(tab, nbits, slots[i]);
	}
	pool__lock(&set_lock);
	if (tab) {
		old = slots;
		slots = tab;
		bits = nbits;
		in_use = heads;
	}
	place(slots, bits, (uintptr_t)pool);
	heads++;
	in_use++;
	pool__unlock(&set_lock);
	if (old)
		pool__os_meta_free(old, old_n * sizeof(*old), sizeof(*old));
	return 0;
}

void pool__headset_kill(const struct pool_head *pool)
{
	size_t i;

	pool__lock(&set_lock);
	i = slots ? find(slots, bits, pool) : 0;
	POOL_ASSERT(slots && i < ((size_t)1 << bits) && !(slots[i] & DEAD_BIT));
	if (slots && i < ((size_t)1 << bits))
		slots[i] |= DEAD_BIT;
	pool__unlock(&set_lock);
}

void pool__headset_forget(const struct pool_head *pool)
{
	size_t i;

	pool__lock(&set_lock);
	i = slots ? find(slots, bits, pool) : 0;
	POOL_ASSERT(slots && i < ((size_t)1 << bits));
	if (slots && i < ((size_t)1 << bits)) {
		slots[i] = TOMBSTONE;
		heads--;
	}
	pool__unlock(&set_lock);
}

enum pool_headset_state pool__headset_state(const void *p)
{
	enum pool_headset_state st = POOL_HEADSET_UNKNOWN;
	size_t i;

	if (!p || ((uintptr_t)p & (TOMBSTONE | DEAD_BIT)))
		return POOL_HEADSET_UNKNOWN;
	pool__lock(&set_lock);
	if (slots) {
		i = find(slots, bits, p);
		if (i < ((size_t)1 << bits))
			st = (slots[i] & DEAD_BIT) ? POOL_HEADSET_DEAD : POOL_HEADSET_LIVE;
	}
	pool__unlock(&set_lock);
	return st;
}

void pool__headset_fork_prepare(void)
{
	pool__lock(&set_lock);
}

void pool__headset_fork_after(void)
{
	pool__unlock(&set_lock);
}

/* ------------------------------------------------------------------------------------------ */
/* A pointer that is not a live head                                                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * The first word of what may be a pool head, read without faulting (0 if unreadable, or where
 * process_vm_readv(2) is refused): only for the report of a pointer the set does not know.
 */
static uint64_t head_magic(const struct pool_head *pool)
{
	uint64_t magic = 0;

	if (pool__os_safe_read(&magic, &pool->magic, sizeof(magic)) < 0)
		return 0;
	return magic;
}

void pool__bad_head(const struct pool_head *pool, const void *obj, const void *caller)
{
	enum pool_headset_state known = pool__headset_state(pool);
	struct pool_report r;

	memset(&r, 0, sizeof(r));
	r.caller = caller;
	r.obj = obj;
	/* a head the set still calls live, which the caller found not live, is being destroyed */
	if (known == POOL_HEADSET_DEAD || known == POOL_HEADSET_LIVE ||
	    (known == POOL_HEADSET_UNKNOWN && head_magic(pool) == POOL_HEAD_DEAD)) {
		r.what = "use of a destroyed pool (pool_destroy() was called on it)";
		r.pool = pool;
	} else {
		r.what = "not a pool head (a NULL, freed or corrupted pool pointer)";
	}
	pool__report(&r);
}
