/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The use-after-free backend (-dMuaf), part of the OS layer.
 *
 * Each object gets its own mapping: header pages, then the object ending at the end of its last
 * page (alignment permitting; the few slack bytes after it hold a pattern), then a PROT_NONE
 * guard page, so an overflow faults at once. An 8-byte canary just before the object catches an
 * underflow at free. A freed object's whole mapping is made PROT_NONE and quarantined (64 MiB,
 * oldest unmapped first), so reads and writes after free fault; the crash report's fault
 * handler (pool-report.c) asks pool__uaf_lookup() whose mapping a faulting address is in. A
 * table of every object (live or quarantined) finds double frees and frees by the wrong owner
 * without touching the object.
 *
 * Mappings are a resource of their own: Linux gives a process at most vm.max_map_count of them
 * (65530 by default) and every live object here takes two (its data pages and the PROT_NONE
 * guard, which the kernel cannot merge), a quarantined one one or two. Past the count, every
 * mmap() and mprotect() of the process fails, jemalloc's and the program's included. So the
 * backend counts the mappings it holds (two per object, live or quarantined, and the two
 * tables) against a ceiling of three quarters of vm.max_map_count, read once from /proc (65530
 * when unreadable): the last quarter is the rest of the process's (its libraries, thread
 * stacks, jemalloc's extents; a few hundred in a typical server, so a quarter is a wide margin
 * that still leaves uaf 49147 of the default count, about 24500 objects). A new object first
 * unmaps the oldest quarantined ones when the ceiling is near, and fails (NULL) only when live
 * objects alone fill it.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "os/pool-os.h"
#include "os/pool-san.h"
#include "os/pool-uaf.h"
#include "base/pool-util.h"

#define UAF_TABLE_BITS       17u
#define UAF_TABLE_SIZE       (1u << UAF_TABLE_BITS)
#define UAF_RING_SIZE        65536u
#define UAF_QUARANTINE_BYTES (64ul << 20)
#define UAF_CANARY_KEY       UINT64_C(0xCA7A11C0DEADBEEF)
#define UAF_SLACK_BYTE       0xC5
#define UAF_HEADER_BYTES     (2 * sizeof(uint64_t))   /* the canary and its padding */
#define UAF_MAPS_PER_OBJECT  2u          /* data pages + guard page (an upper bound once freed) */
#define UAF_TABLE_MAPS       2u          /* the object table and the quarantine ring */
#define MAX_MAP_COUNT_DEF    65530ul     /* Linux's DEFAULT_MAX_MAP_COUNT (USHRT_MAX - 5) */

enum uaf_state { UAF_EMPTY = 0, UAF_LIVE, UAF_QUARANTINED };

struct uaf_entry {
	uintptr_t obj;
	uintptr_t base;
	size_t len;
	size_t size;
	const void *owner;
	const void *alloc_caller;
	const void *free_caller;
	unsigned int state;
};

static struct pool_lock uaf_lock = POOL_LOCK_INITIALIZER;
static struct uaf_entry *uaf_table;
static uintptr_t *uaf_ring;
static unsigned int uaf_ring_head, uaf_ring_count;
static size_t uaf_quarantined_bytes;
static size_t uaf_maps;                 /* mappings held: objects and tables (under uaf_lock) */
static size_t uaf_map_ceiling;          /* most mappings we may hold; 0: not read yet */

static unsigned int uaf_hash(uintptr_t obj)
{
	return pool__hash_ptr((const void *)obj, UAF_TABLE_BITS);
}

static uint64_t canary_of(uintptr_t obj)
{
	return UAF_CANARY_KEY ^ (uint64_t)obj;
}

/* Under uaf_lock, or lock-free for reads that tolerate a torn entry. */
static struct uaf_entry *uaf_find(uintptr_t obj)
{
	unsigned int i, h;

	if (!uaf_table)
		return NULL;
	h = uaf_hash(obj);
	for (i = 0; i < UAF_TABLE_SIZE; i++) {
		struct uaf_entry *e = &uaf_table[(h + i) & (UAF_TABLE_SIZE - 1)];

		if (e->state == UAF_EMPTY)
			return NULL;
		if (e->obj == obj)
			return e;
	}
	return NULL;
}

/* Under uaf_lock: linear probing with backward-shift deletion (Knuth TAOCP vol. 3, 6.4, R). */
static void uaf_remove(struct uaf_entry *e)
{
	unsigned int i = (unsigned int)(e - uaf_table), j = i, k;

	POOL_ASSERT(pool__lock_held(&uaf_lock));
	POOL_ASSERT(i < UAF_TABLE_SIZE && e->state != UAF_EMPTY);
	for (;;) {
		uaf_table[i].state = UAF_EMPTY;
		for (;;) {
			j = (j + 1) & (UAF_TABLE_SIZE - 1);
			if (uaf_table[j].state == UAF_EMPTY)
				return;
			k = uaf_hash(uaf_table[j].obj);
			if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j)))
				break;
		}
		uaf_table[i] = uaf_table[j];
		i = j;
	}
}

/* vm.max_map_count, or Linux's default when /proc cannot tell. */
static size_t max_map_count(void)
{
	unsigned long v;

	if (pool__os_read_number("/proc/sys/vm/max_map_count", &v) < 0 || v < 64)
		return MAX_MAP_COUNT_DEF;
	return v;
}

/* Under uaf_lock: three quarters of vm.max_map_count, once (see the top of this file). */
static void ceiling_init(void)
{
	size_t count;

	POOL_ASSERT(pool__lock_held(&uaf_lock));
	if (uaf_map_ceiling)
		return;
	count = max_map_count();
	uaf_map_ceiling = count - count / 4;
}

/* Under uaf_lock: the tables, mapped on first use. 0, or -1 when a mapping fails. */
static int uaf_setup(void)
{
	POOL_ASSERT(pool__lock_held(&uaf_lock));
	if (uaf_table)
		return 0;
	ceiling_init();
	uaf_table = pool__os_map(UAF_TABLE_SIZE * sizeof(*uaf_table));
	uaf_ring = pool__os_map(UAF_RING_SIZE * sizeof(*uaf_ring));
	if (!uaf_table || !uaf_ring) {
		if (uaf_table)
			pool__os_unmap(uaf_table, UAF_TABLE_SIZE * sizeof(*uaf_table));
		if (uaf_ring)
			pool__os_unmap(uaf_ring, UAF_RING_SIZE * sizeof(*uaf_ring));
		uaf_table = NULL;
		uaf_ring = NULL;
		return -1;
	}
	uaf_maps += UAF_TABLE_MAPS;
	return 0;
}

static void uaf_quarantine_trim(size_t need_bytes, size_t need_maps);

static void uaf_geometry(size_t size, size_t align, size_t *data_len, size_t *map_len)
{
	size_t page = pool__os_page_size();
	size_t need = UAF_HEADER_BYTES + size + align;

	*data_len = pool__round_up(need, page);
	*map_len = *data_len + page;
}

size_t pool__uaf_object_cost(size_t size, size_t align)
{
	size_t data_len, map_len;

	uaf_geometry(size, align, &data_len, &map_len);
	return map_len;
}

/*
 * Under uaf_lock: reserve the mappings of one more object, unmapping the oldest quarantined
 * objects if the ceiling is near. 0, or -1 when live objects alone leave no room (or the tables
 * cannot be mapped).
 */
static int uaf_reserve_maps(void)
{
	POOL_ASSERT(pool__lock_held(&uaf_lock));
	if (uaf_setup() < 0)
		return -1;
	if (uaf_maps + UAF_MAPS_PER_OBJECT > uaf_map_ceiling)
		uaf_quarantine_trim(0, UAF_MAPS_PER_OBJECT);
	if (uaf_maps + UAF_MAPS_PER_OBJECT > uaf_map_ceiling)
		return -1;
	uaf_maps += UAF_MAPS_PER_OBJECT;
	return 0;
}

static void uaf_unreserve_maps(void)
{
	pool__lock(&uaf_lock);
	POOL_ASSERT(uaf_maps >= UAF_TABLE_MAPS + UAF_MAPS_PER_OBJECT);
	uaf_maps -= UAF_MAPS_PER_OBJECT;
	pool__unlock(&uaf_lock);
}

void *pool__uaf_alloc(size_t size, size_t align, const void *owner)
{
	size_t data_len, map_len, i;
	unsigned char *base, *obj, *guard;
	struct uaf_entry *e = NULL;
	uint64_t canary;
	unsigned int h;
	int ok;

	POOL_ASSERT(size && align && !(align & (align - 1)) && align <= pool__os_page_size());
	uaf_geometry(size, align, &data_len, &map_len);
	pool__lock(&uaf_lock);
	ok = uaf_reserve_maps() == 0;
	pool__unlock(&uaf_lock);
	if (!ok)
		return NULL;
	base = pool__os_map(map_len);
	if (!base) {
		uaf_unreserve_maps();
		return NULL;
	}
	/* a fresh mapping may reuse addresses whose ASan shadow still says "poisoned by user" */
	pool__san_access(base, data_len);
	guard = base + data_len;
	if (pool__os_protect(guard, map_len - data_len, 0) < 0)
		goto fail_unmap;
	obj = (unsigned char *)((uintptr_t)(guard - size) & ~(uintptr_t)(align - 1));
	canary = canary_of((uintptr_t)obj);
	memcpy(obj - sizeof(canary), &canary, sizeof(canary));
	for (i = 0; obj + size + i < guard; i++)
		obj[size + i] = UAF_SLACK_BYTE;

	pool__lock(&uaf_lock);
	h = uaf_hash((uintptr_t)obj);
	/* at most half full, so that probes stay short */
	for (i = 0; i < UAF_TABLE_SIZE / 2; i++) {
		struct uaf_entry *c = &uaf_table[(h + i) & (UAF_TABLE_SIZE - 1)];

		if (c->state == UAF_EMPTY) {
			e = c;
			break;
		}
	}
	if (e) {
		e->obj = (uintptr_t)obj;
		e->base = (uintptr_t)base;
		e->len = map_len;
		e->size = size;
		e->owner = owner;
		e->alloc_caller = e->free_caller = NULL;
		e->state = UAF_LIVE;
	}
	pool__unlock(&uaf_lock);
	if (!e)
		goto fail_unmap;
	return obj;
fail_unmap:
	pool__os_unmap(base, map_len);
	uaf_unreserve_maps();
	return NULL;
}

enum pool_uaf_verdict pool__uaf_check_free(const void *obj, const void *owner, size_t size)
{
	const unsigned char *o = obj;
	struct uaf_entry *e, copy;
	uintptr_t guard;
	uint64_t canary;
	size_t i;

	pool__lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e)
		copy = *e;
	pool__unlock(&uaf_lock);
	if (!e)
		return POOL_UAF_UNKNOWN;
	if (copy.state == UAF_QUARANTINED)
		return POOL_UAF_DOUBLE_FREE;
	if (copy.owner != owner)
		return POOL_UAF_WRONG_OWNER;
	memcpy(&canary, o - sizeof(canary), sizeof(canary));
	if (canary != canary_of((uintptr_t)obj))
		return POOL_UAF_UNDERFLOW;
	guard = copy.base + copy.len - pool__os_page_size();
	for (i = size; (uintptr_t)(o + i) < guard; i++)
		if (o[i] != UAF_SLACK_BYTE)
			return POOL_UAF_OVERFLOW;
	return POOL_UAF_OK;
}

const void *pool__uaf_note_alloc(const void *obj, const void *caller)
{
	const void *prev = NULL;
	struct uaf_entry *e;

	pool__lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e) {
		prev = e->alloc_caller;
		e->alloc_caller = caller;
		e->free_caller = NULL;
	}
	pool__unlock(&uaf_lock);
	return prev;
}

const void *pool__uaf_alloc_caller(const void *obj)
{
	const struct uaf_entry *e = uaf_find((uintptr_t)obj);

	return e ? e->alloc_caller : NULL;
}

const void *pool__uaf_free_caller(const void *obj)
{
	const struct uaf_entry *e = uaf_find((uintptr_t)obj);

	return e ? e->free_caller : NULL;
}

/*
 * Under uaf_lock: unmap an object's mapping. The library poisons objects in thread caches for
 * ASan (`uaf,cache`); the shadow is cleared first, or whoever maps these
 * addresses next (jemalloc, the program) would find them poisoned.
 */
static void uaf_unmap_object(uintptr_t base, size_t len)
{
	POOL_ASSERT(pool__lock_held(&uaf_lock));
	POOL_ASSERT(uaf_maps >= UAF_TABLE_MAPS + UAF_MAPS_PER_OBJECT);
	pool__san_access((void *)base, len);
	pool__os_unmap((void *)base, len);
	uaf_maps -= UAF_MAPS_PER_OBJECT;
}

/*
 * Under uaf_lock: unmap the oldest quarantined objects until `need_bytes` more bytes fit in the
 * quarantine and `need_maps` more mappings under the ceiling.
 */
static void uaf_quarantine_trim(size_t need_bytes, size_t need_maps)
{
	POOL_ASSERT(pool__lock_held(&uaf_lock));
	POOL_ASSERT(uaf_ring_count <= UAF_RING_SIZE);
	while (uaf_ring_count &&
	       (uaf_quarantined_bytes + need_bytes > UAF_QUARANTINE_BYTES ||
	        uaf_ring_count == UAF_RING_SIZE || uaf_maps + need_maps > uaf_map_ceiling)) {
		unsigned int tail = (uaf_ring_head - uaf_ring_count) & (UAF_RING_SIZE - 1);
		uintptr_t obj = uaf_ring[tail];
		struct uaf_entry *e;

		uaf_ring_count--;
		if (!obj)
			continue;
		e = uaf_find(obj);
		if (e && e->state == UAF_QUARANTINED) {
			uaf_quarantined_bytes -= e->len;
			uaf_unmap_object(e->base, e->len);
			uaf_remove(e);
		}
	}
}

void pool__uaf_free(void *obj, const void *free_caller)
{
	struct uaf_entry *e;

	pool__lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e && e->state == UAF_LIVE) {
		if (free_caller)
			e->free_caller = free_caller;
		pool__os_protect((void *)e->base, e->len, 0);
		uaf_quarantine_trim(e->len, 0);
		e = uaf_find((uintptr_t)obj);   /* trimming may have moved it */
		/* trimming unmaps quarantined objects only: this live one is still there */
		POOL_ASSERT(e && e->state == UAF_LIVE);
		e->state = UAF_QUARANTINED;
		uaf_quarantined_bytes += e->len;
		uaf_ring[uaf_ring_head] = (uintptr_t)obj;
		uaf_ring_head = (uaf_ring_head + 1) & (UAF_RING_SIZE - 1);
		uaf_ring_count++;
	}
	pool__unlock(&uaf_lock);
}

/*
 * Tier 2 of the assertions (pool-assert.h), under uaf_lock: the whole table (2^17 entries, 7
 * MiB: at a pool's destruction only) against the books. The quarantine's bytes are the sum of
 * its objects' mappings; each quarantined object is in the ring once, and the ring holds no
 * other (a slot is 0 once its object left); the mappings counted cover the tables and two per
 * object (more while an allocation is between its reservation and its entry).
 */
static void uaf_walk(void)
{
	size_t bytes = 0, objs = 0, quarantined = 0;
	unsigned int i, ring = 0;

	POOL_ASSERT(pool__lock_held(&uaf_lock));
	for (i = 0; uaf_table && i < UAF_TABLE_SIZE; i++) {
		const struct uaf_entry *e = &uaf_table[i];

		if (e->state == UAF_EMPTY)
			continue;
		POOL_ASSERT(e->state == UAF_LIVE || e->state == UAF_QUARANTINED);
		POOL_ASSERT(e->obj > e->base && e->obj + e->size < e->base + e->len);
		POOL_ASSERT(uaf_find(e->obj) == e);
		objs++;
		if (e->state == UAF_QUARANTINED) {
			quarantined++;
			bytes += e->len;
		}
	}
	for (i = 0; uaf_ring && i < uaf_ring_count; i++) {
		uintptr_t obj = uaf_ring[(uaf_ring_head - 1 - i) & (UAF_RING_SIZE - 1)];
		const struct uaf_entry *e = obj ? uaf_find(obj) : NULL;

		POOL_ASSERT(!obj || (e && e->state == UAF_QUARANTINED));
		ring += obj != 0;
	}
	POOL_ASSERT(bytes == uaf_quarantined_bytes && ring == quarantined);
	POOL_ASSERT(!uaf_table || uaf_maps >= UAF_TABLE_MAPS + objs * UAF_MAPS_PER_OBJECT);
}

void pool__uaf_release_owner(const void *owner)
{
	unsigned int i, n;

	pool__lock(&uaf_lock);
	if (POOL_ASSERTS >= 2)
		uaf_walk();
	for (n = 0; uaf_ring && n < uaf_ring_count; n++) {
		i = (uaf_ring_head - 1 - n) & (UAF_RING_SIZE - 1);
		if (uaf_ring[i]) {
			struct uaf_entry *e = uaf_find(uaf_ring[i]);

			if (e && e->owner == owner) {
				uaf_quarantined_bytes -= e->len;
				uaf_unmap_object(e->base, e->len);
				uaf_remove(e);
				uaf_ring[i] = 0;
			}
		}
	}
	pool__unlock(&uaf_lock);
}

int pool__uaf_lookup(const void *addr, struct pool_uaf_hit *hit)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned int i;

	for (i = 0; uaf_table && i < UAF_TABLE_SIZE; i++) {
		const struct uaf_entry *e = &uaf_table[i];

		if (e->state != UAF_EMPTY && a >= e->base && a < e->base + e->len) {
			hit->obj = (const void *)e->obj;
			hit->owner = e->owner;
			hit->size = e->size;
			hit->quarantined = e->state == UAF_QUARANTINED;
			hit->past_end = a >= e->obj + e->size;
			return 1;
		}
	}
	return 0;
}

size_t pool__uaf_set_map_ceiling(size_t ceiling)
{
	size_t prev;

	POOL_ASSERT(!ceiling || ceiling >= 4);
	pool__lock(&uaf_lock);
	ceiling_init();
	prev = uaf_map_ceiling;
	if (ceiling)
		uaf_map_ceiling = ceiling;
	pool__unlock(&uaf_lock);
	return prev;
}

void pool__uaf_fork_prepare(void)
{
	pool__lock(&uaf_lock);
}

void pool__uaf_fork_after(void)
{
	pool__unlock(&uaf_lock);
}
