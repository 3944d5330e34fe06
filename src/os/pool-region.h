/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The region of sampled objects (pool-region.c), part of the OS layer: address space reserved
 * once, in which each sampled object has pages of its own, so that the inline pool_free() tells
 * a sampled object from any other by its address (pool__sampled, <pool/pool-inline.h>). Private
 * header. It knows nothing of pools or of the profile: a slot's owner is opaque; the
 * sampler (src/tcache/pool-sample.c) decides what comes here.
 */
#ifndef POOL_SRC_POOL_REGION_H
#define POOL_SRC_POOL_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <pool/pool.h>

#define POOL_REGION_BYTES       (1ul << 30)   /* address space reserved (less when refused) */
#define POOL_REGION_BYTES_MIN   (16ul << 20)  /* the least worth reserving */
#define POOL_REGION_SLOTS       8192u         /* slots at once: live, quarantined, recycled */
#define POOL_REGION_QUARANTINE  512u          /* guarded slots kept inaccessible once freed */
#define POOL_REGION_QUARANTINE_BYTES (64ul << 20)   /* ... and their address space at most */
#define POOL_REGION_RECYCLE     64u           /* freed slots kept mapped for the next samples */
#define POOL_REGION_RECYCLE_BYTES (4ul << 20) /* ... and their bytes at most */

/* Is `p` inside the region? (exact bounds; the inline test of pool.h reads the same words) */
static inline int pool__region_owns(const void *p)
{
	return (uintptr_t)p - __atomic_load_n(&pool__sampled.base, __ATOMIC_RELAXED) <
	       __atomic_load_n(&pool__sampled.len, __ATOMIC_RELAXED);
}

/*
 * Reserve the region (PROT_NONE, no memory committed), once: 0, or -1 when no reservation of
 * at least POOL_REGION_BYTES_MIN could be made (nothing changes; a later call tries again).
 * pool__sampled then holds its bounds for good. Thread-safe.
 */
int pool__region_reserve(void);

/*
 * A slot for an object of `size` bytes aligned on `align` (a power of two, at most the page
 * size): the object's pages, mapped read-write, and a page after them that stays inaccessible.
 * `guard`: the object ends where that page starts (alignment permitting), so that an overflow
 * faults, and its pages are kept inaccessible for a while once freed (the quarantine);
 * otherwise it starts at its first page. The contents are whatever the slot last held (zero
 * for pages mapped fresh). `owner` is kept for pool__region_find(). Returns the
 * object, with its slot in *slot, or NULL: no region, no slot or address space left, or the
 * mapping refused (ENOMEM). Thread-safe (the region's lock, a leaf).
 */
void *pool__region_alloc(size_t size, size_t align, int guard, const void *owner,
                         unsigned int *slot);

/* What the region knows of an address (pool__region_find(), pool__region_lookup()). */
enum pool_region_state {
	POOL_REGION_FREE = 0,           /* no object: never used, or its pages went back */
	POOL_REGION_LIVE,               /* an object handed out */
	POOL_REGION_QUARANTINED,        /* a guarded object freed: its pages are inaccessible */
};

struct pool_region_hit {
	unsigned int slot;              /* the slot (0: the address is in no slot) */
	enum pool_region_state state;
	const void *obj;                /* its object and the object's size in bytes */
	size_t size;
	const void *owner;              /* as pool__region_alloc() was given it */
	int guard;                      /* a guarded slot */
	long offset;                    /* the address's offset from the object's first byte */
};

/*
 * The slot of `obj`, an address of the region a program frees, into *hit under the region's
 * lock: 0, or -1 when `obj` is not the first byte of a slot's object (hit->slot still names
 * the slot whose pages hold it, if any). Thread-safe.
 */
int pool__region_lookup(const void *obj, struct pool_region_hit *hit);

/*
 * Give slot `slot`, holding `obj`, back: a guarded one goes to the quarantine, inaccessible;
 * another is kept mapped for the next samples (up to POOL_REGION_RECYCLE slots) or its pages
 * go back to the system. 0, or -1 when the slot does not hold `obj` live any more (a second
 * free racing the first): nothing changes. Thread-safe.
 */
int pool__region_free(unsigned int slot, const void *obj);

/*
 * Which slot holds `addr`, or guards it: 1 and *hit filled, or 0 (outside the region, or in a
 * page no slot owns nor borders). An address in the page after a slot's object pages (or in a
 * free page just before a slot) names that slot, with its offset from the object. For the fault
 * handler: lock-free (a slot changing meanwhile gives a vaguer answer) and async-signal-safe.
 */
int pool__region_find(const void *addr, struct pool_region_hit *hit);

/* The slots freed and kept mapped go back to the system (pool_gc(NULL), pool_trim()). */
void pool__region_trim(void);

/* The region's figures, bytes unless said. */
struct pool_region_usage {
	size_t reserved;                /* address space reserved (0: none) */
	size_t mapped;                  /* mapped read-write: live objects' and recycled slots' */
	unsigned int live;              /* slots holding an object */
	unsigned int quarantined;       /* guarded slots freed, still inaccessible */
	unsigned int recycled;          /* freed slots kept mapped */
	uint64_t refused;               /* allocations refused: slots or space used up, or ENOMEM */
};
void pool__region_usage(struct pool_region_usage *u);

/* fork(): the region's lock across it, released alike in the parent and the child. */
void pool__region_fork_prepare(void);
void pool__region_fork_after(void);

#endif
