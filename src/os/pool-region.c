/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The region of sampled objects, part of the OS layer (the shape of GWP-ASan's guarded pool in
 * tcmalloc, Chromium and scudo).
 *
 * 1. Address space. POOL_REGION_BYTES reserved once, PROT_NONE and MAP_NORESERVE (halved
 *    until the kernel accepts, down to POOL_REGION_BYTES_MIN): no memory, one mapping. Its
 *    bounds go to pool__sampled, which the inline pool_free() reads: an address inside is a
 *    sampled object, whose free takes the slow path. Before the reservation both words are 0
 *    and no address passes; after it they never change, so a reader never races a change.
 * 2. Slots. A sampled object gets a slot: the pages that hold it, mapped read-write, and one
 *    page after them left inaccessible; page 0 of the region is never given, so every slot's
 *    pages lie between two inaccessible pages. A bitmap of pages finds room (next fit), an
 *    array names each page's slot (the lookups of a free and of the fault handler).
 * 3. Guarded slots. The object ends where the inaccessible page begins (its alignment
 *    permitting), so that an overflow faults at its first byte. Freed, its pages are made
 *    inaccessible (and their memory discarded) and the slot waits in a FIFO quarantine
 *    (POOL_REGION_QUARANTINE slots, POOL_REGION_QUARANTINE_BYTES of address space), so that a
 *    use after free faults too; the oldest leaves it when it is full.
 * 4. Other slots start the object at the first page: the profile alone must not fault on a
 *    read a few bytes past an object, which a program's pool would have let pass. Freed, the
 *    slot stays mapped for the next samples of the same page count (POOL_REGION_RECYCLE slots,
 *    POOL_REGION_RECYCLE_BYTES), so that a steady profile makes no system call; the rest go
 *    back to the system, as do these at pool__region_trim().
 *
 * Concurrency: one lock (a leaf) guards the bitmap, the slots and the lists. The fault handler
 * reads the page array and the slots without it (relaxed loads: a torn answer is vaguer, never
 * a wrong address dereferenced; it reads no object).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"
#include "os/pool-os.h"
#include "os/pool-region.h"
#include "os/pool-san.h"

/* The inline pool_free()'s bounds: 0 and 0 until the region is reserved (see the top). */
POOL_API struct pool__region pool__sampled;

struct region_slot {
	uintptr_t obj;                  /* the object (0: the slot is free) */
	size_t size;
	const void *owner;
	uint32_t first;                 /* its first page, and its pages before the guard page */
	uint32_t pages;
	uint32_t next;                  /* the free, recycled or quarantine list it is on */
	uint8_t state;                  /* enum pool_region_state */
	uint8_t guard;
	uint8_t mapped;                 /* its pages are read-write */
};

struct slot_list {
	uint32_t head, tail, n;         /* slot ids, 0: none */
	size_t bytes;
};

static struct pool_lock region_lock = POOL_LOCK_INITIALIZER;
static unsigned char *region;           /* the reservation, NULL: none */
static size_t region_pages, page_bytes;
static unsigned int page_shift;
static _Atomic uint16_t *page_slot;     /* per page: the slot it belongs to (0: none) */
static uint64_t *page_used;             /* per page: a bit set while a slot holds it */
static struct region_slot *slots;       /* [1, POOL_REGION_SLOTS): slot 0 is none */
static uint32_t free_slots;             /* slots without pages, linked by next */
static uint32_t next_fit;               /* where the page search goes on */
static struct slot_list quarantine, recycled;
static unsigned int live;
static size_t mapped_bytes;
static uint64_t refused;

_Static_assert(POOL_REGION_SLOTS <= UINT16_MAX, "a page names its slot in 16 bits");

/* ------------------------------------------------------------------------------------------ */
/* The reservation                                                                            */
/* ------------------------------------------------------------------------------------------ */

static size_t meta_bytes(size_t pages)
{
	return pool__round_up(pages * sizeof(*page_slot) + (pages + 63) / 64 * sizeof(*page_used) +
	                      POOL_REGION_SLOTS * sizeof(*slots), page_bytes);
}

/* Under region_lock: the region and its tables; 0, or -1. */
static int reserve(void)
{
	size_t len, pages;
	unsigned char *meta;
	uint32_t i;

	POOL_ASSERT(pool__lock_held(&region_lock));
	if (region)
		return 0;
	page_bytes = pool__os_page_size();
	for (page_shift = 0; ((size_t)1 << page_shift) < page_bytes; page_shift++)
		;
	for (len = POOL_REGION_BYTES; len >= POOL_REGION_BYTES_MIN; len /= 2) {
		pages = len >> page_shift;
		meta = pool__os_map(meta_bytes(pages));
		if (!meta)
			return -1;
		region = pool__os_reserve(len);
		if (region)
			break;
		pool__os_unmap(meta, meta_bytes(pages));
	}
	if (!region)
		return -1;
	region_pages = pages;
	page_slot = (_Atomic uint16_t *)(void *)meta;
	page_used = (uint64_t *)(void *)(meta + pages * sizeof(*page_slot));
	slots = (struct region_slot *)(void *)((unsigned char *)page_used +
	                                       (pages + 63) / 64 * sizeof(*page_used));
	/* page 0 is never given: the first slot too has an inaccessible page before it */
	page_used[0] = 1;
	next_fit = 1;
	for (i = POOL_REGION_SLOTS - 1; i >= 1; i--) {
		slots[i].next = free_slots;
		free_slots = i;
	}
	/* the bounds last: a thread that sees them finds the tables made */
	__atomic_store_n(&pool__sampled.base, (uintptr_t)region, __ATOMIC_RELAXED);
	__atomic_store_n(&pool__sampled.len, pages << page_shift, __ATOMIC_RELEASE);
	return 0;
}

int pool__region_reserve(void)
{
	int r;

	if (__atomic_load_n(&pool__sampled.len, __ATOMIC_ACQUIRE))
		return 0;
	pool__lock(&region_lock);
	r = reserve();
	pool__unlock(&region_lock);
	return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Pages                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static int page_is_used(size_t p)
{
	return (page_used[p / 64] >> (p % 64)) & 1;
}

static void mark_pages(size_t first, size_t n, int used)
{
	size_t p;

	for (p = first; p < first + n; p++) {
		if (used)
			page_used[p / 64] |= UINT64_C(1) << (p % 64);
		else
			page_used[p / 64] &= ~(UINT64_C(1) << (p % 64));
	}
}

/* Under region_lock: the first of `n` free pages in a row, from the next fit on; 0: none. */
static size_t find_pages(size_t n)
{
	size_t p, run = 0, start = next_fit, scanned;

	POOL_ASSERT(pool__lock_held(&region_lock) && n >= 2);
	for (p = start, scanned = 0; scanned < region_pages + n; scanned++, p++) {
		if (p == region_pages) {
			p = 1;
			run = 0;
		}
		if (!(p % 64) && page_used[p / 64] == UINT64_MAX) {
			/* a word of used pages: skip it whole */
			scanned += 63;
			p += 63;
			run = 0;
			continue;
		}
		if (page_is_used(p)) {
			run = 0;
			continue;
		}
		if (++run == n) {
			next_fit = (uint32_t)(p + 1 < region_pages ? p + 1 : 1);
			return p + 1 - n;
		}
	}
	return 0;
}

/* Under region_lock: the slot's pages, object pages and guard page, as `id`'s (or nobody's). */
static void own_pages(const struct region_slot *s, uint16_t id)
{
	size_t p;

	for (p = s->first; p <= (size_t)s->first + s->pages; p++)
		atomic_store_explicit(&page_slot[p], id, memory_order_relaxed);
	mark_pages(s->first, (size_t)s->pages + 1, id != 0);
}

static void *page_addr(size_t p)
{
	return region + (p << page_shift);
}

/* Under region_lock: the slot's object pages back to the system, inaccessible. */
static void unmap_slot(struct region_slot *s)
{
	if (!s->mapped)
		return;
	pool__san_access(page_addr(s->first), (size_t)s->pages << page_shift);
	pool__os_discard(page_addr(s->first), (size_t)s->pages << page_shift);
	mapped_bytes -= (size_t)s->pages << page_shift;
	s->mapped = 0;
}

/* Under region_lock: slot `id` gives its pages back and joins the free slots. */
static void release_slot(uint32_t id)
{
	struct region_slot *s = &slots[id];

	unmap_slot(s);
	own_pages(s, 0);
	memset(s, 0, sizeof(*s));
	s->next = free_slots;
	free_slots = id;
}

static void list_push(struct slot_list *l, uint32_t id)
{
	slots[id].next = 0;
	if (l->tail)
		slots[l->tail].next = id;
	else
		l->head = id;
	l->tail = id;
	l->n++;
	l->bytes += (size_t)slots[id].pages << page_shift;
}

/* The oldest slot of `l`, or (with `pages`) the oldest of that many pages; 0: none. */
static uint32_t list_take(struct slot_list *l, uint32_t pages)
{
	uint32_t id, prev = 0;

	for (id = l->head; id && pages && slots[id].pages != pages; id = slots[id].next)
		prev = id;
	if (!id)
		return 0;
	if (prev)
		slots[prev].next = slots[id].next;
	else
		l->head = slots[id].next;
	if (l->tail == id)
		l->tail = prev;
	l->n--;
	l->bytes -= (size_t)slots[id].pages << page_shift;
	slots[id].next = 0;
	return id;
}

/* ------------------------------------------------------------------------------------------ */
/* Slots                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Under region_lock: a slot of `pages` object pages, mapped; 0 when none can be had. */
static uint32_t new_slot(uint32_t pages)
{
	uint32_t id = list_take(&recycled, pages);
	struct region_slot *s;
	size_t first = 0;

	if (id)
		return id;
	/* room first: the oldest recycled and quarantined slots make way */
	while (!free_slots || !(first = find_pages((size_t)pages + 1))) {
		if ((id = list_take(&recycled, 0)) || (id = list_take(&quarantine, 0)))
			release_slot(id);
		else
			return 0;
	}
	id = free_slots;
	s = &slots[id];
	if (pool__os_protect(page_addr(first), (size_t)pages << page_shift, 1) != 0)
		return 0;
	free_slots = s->next;
	memset(s, 0, sizeof(*s));
	s->first = (uint32_t)first;
	s->pages = pages;
	s->mapped = 1;
	mapped_bytes += (size_t)pages << page_shift;
	/* a fresh mapping may reuse addresses whose ASan shadow still says "poisoned by user" */
	pool__san_access(page_addr(first), (size_t)pages << page_shift);
	own_pages(s, (uint16_t)id);
	return id;
}

void *pool__region_alloc(size_t size, size_t align, int guard, const void *owner,
                         unsigned int *slot)
{
	size_t pages;
	struct region_slot *s;
	uintptr_t end;
	uint32_t id = 0;

	POOL_ASSERT(size && align && !(align & (align - 1)));
	pool__lock(&region_lock);
	pages = region ? pool__round_up(size, page_bytes) >> page_shift : 0;
	if (align <= page_bytes && pages && pages < region_pages / 4)
		id = new_slot((uint32_t)pages);
	if (!id) {
		refused++;
		pool__unlock(&region_lock);
		return NULL;
	}
	s = &slots[id];
	end = (uintptr_t)page_addr((size_t)s->first + s->pages);
	__atomic_store_n(&s->obj, guard ? (end - size) & ~(uintptr_t)(align - 1) :
	                 (uintptr_t)page_addr(s->first), __ATOMIC_RELAXED);
	__atomic_store_n(&s->size, size, __ATOMIC_RELAXED);
	/* a recycled slot's pages were poisoned for ASan when its object was freed */
	pool__san_access(page_addr(s->first), (size_t)s->pages << page_shift);
	__atomic_store_n(&s->owner, owner, __ATOMIC_RELAXED);
	__atomic_store_n(&s->guard, (uint8_t)!!guard, __ATOMIC_RELAXED);
	__atomic_store_n(&s->state, POOL_REGION_LIVE, __ATOMIC_RELAXED);
	live++;
	*slot = id;
	pool__unlock(&region_lock);
	return (void *)s->obj;
}

/* The hit of slot `id` for `addr` (no lock: the fault handler's reads, relaxed). */
static void fill_hit(uint32_t id, const void *addr, struct pool_region_hit *hit)
{
	const struct region_slot *s = &slots[id];

	hit->slot = id;
	hit->state = (enum pool_region_state)__atomic_load_n(&s->state, __ATOMIC_RELAXED);
	hit->obj = (const void *)__atomic_load_n(&s->obj, __ATOMIC_RELAXED);
	hit->size = __atomic_load_n(&s->size, __ATOMIC_RELAXED);
	hit->owner = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
	hit->guard = __atomic_load_n(&s->guard, __ATOMIC_RELAXED);
	hit->offset = (long)((uintptr_t)addr - (uintptr_t)hit->obj);
}

/* The slot whose pages (or guard page) hold page `p`, 0: none. */
static uint32_t slot_at(size_t p)
{
	return p < region_pages ? atomic_load_explicit(&page_slot[p], memory_order_relaxed) : 0;
}

int pool__region_lookup(const void *obj, struct pool_region_hit *hit)
{
	uint32_t id;
	int r = -1;

	memset(hit, 0, sizeof(*hit));
	pool__lock(&region_lock);
	if (region && pool__region_owns(obj)) {
		id = slot_at(((uintptr_t)obj - (uintptr_t)region) >> page_shift);
		if (id) {
			fill_hit(id, obj, hit);
			r = hit->obj == obj && hit->state != POOL_REGION_FREE ? 0 : -1;
		}
	}
	pool__unlock(&region_lock);
	return r;
}

int pool__region_free(unsigned int slot, const void *obj)
{
	struct region_slot *s;
	size_t len;

	pool__lock(&region_lock);
	s = slot && slot < POOL_REGION_SLOTS && region ? &slots[slot] : NULL;
	if (!s || s->state != POOL_REGION_LIVE || s->obj != (uintptr_t)obj) {
		pool__unlock(&region_lock);
		return -1;
	}
	POOL_ASSERT(live > 0);
	live--;
	len = (size_t)s->pages << page_shift;
	if (s->guard) {
		/* inaccessible from now on, its memory discarded: a use after free faults */
		unmap_slot(s);
		__atomic_store_n(&s->state, POOL_REGION_QUARANTINED, __ATOMIC_RELAXED);
		list_push(&quarantine, slot);
		while (quarantine.n > POOL_REGION_QUARANTINE ||
		       quarantine.bytes > POOL_REGION_QUARANTINE_BYTES)
			release_slot(list_take(&quarantine, 0));
	} else if (recycled.n < POOL_REGION_RECYCLE &&
	           recycled.bytes + len <= POOL_REGION_RECYCLE_BYTES) {
		__atomic_store_n(&s->state, POOL_REGION_FREE, __ATOMIC_RELAXED);
		s->obj = 0;
		list_push(&recycled, slot);
	} else {
		release_slot(slot);
	}
	pool__unlock(&region_lock);
	return 0;
}

int pool__region_find(const void *addr, struct pool_region_hit *hit)
{
	uintptr_t base = __atomic_load_n(&pool__sampled.base, __ATOMIC_RELAXED);
	size_t p;
	uint32_t id;

	memset(hit, 0, sizeof(*hit));
	if (!pool__region_owns(addr))
		return 0;
	p = ((uintptr_t)addr - base) >> page_shift;
	id = slot_at(p);
	/* a page no slot owns: the slot that starts right after it (an underflow) */
	if (!id)
		id = slot_at(p + 1);
	if (!id)
		return 0;
	fill_hit(id, addr, hit);
	return 1;
}

void pool__region_trim(void)
{
	uint32_t id;

	pool__lock(&region_lock);
	while ((id = list_take(&recycled, 0)))
		release_slot(id);
	pool__unlock(&region_lock);
}

void pool__region_usage(struct pool_region_usage *u)
{
	pool__lock(&region_lock);
	u->reserved = region ? region_pages << page_shift : 0;
	u->mapped = mapped_bytes;
	u->live = live;
	u->quarantined = quarantine.n;
	u->recycled = recycled.n;
	u->refused = refused;
	pool__unlock(&region_lock);
}

void pool__region_fork_prepare(void)
{
	pool__lock(&region_lock);
}

void pool__region_fork_after(void)
{
	pool__unlock(&region_lock);
}
