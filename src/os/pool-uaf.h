/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The use-after-free backend of the OS layer (`-dMuaf`): one mapping per object, ending at a
 * guard page, quarantined when freed. Private header. It knows nothing of pools: an object's
 * owner is an opaque pointer (the core passes its pool head), and the core does the accounting
 * (allocated, used, limits) as for any other backend.
 */
#ifndef POOL_SRC_POOL_UAF_H
#define POOL_SRC_POOL_UAF_H

#include <stddef.h>

/* What pool__uaf_check_free() found. */
enum pool_uaf_verdict {
	POOL_UAF_OK = 0,          /* a live object of that owner, canary and slack intact */
	POOL_UAF_UNKNOWN,         /* not an object of this backend (never allocated, long freed) */
	POOL_UAF_DOUBLE_FREE,     /* the object is in the quarantine */
	POOL_UAF_WRONG_OWNER,     /* a live object of another owner */
	POOL_UAF_UNDERFLOW,       /* the canary before the object was overwritten */
	POOL_UAF_OVERFLOW,        /* the slack between the object and its guard page changed */
};

/* What pool__uaf_lookup() tells of an address inside one of the backend's mappings. */
struct pool_uaf_hit {
	const void *obj;          /* the object whose mapping holds the address */
	const void *owner;        /* its owner */
	size_t size;              /* its usable size in bytes */
	int quarantined;          /* 1: freed (in quarantine), 0: live */
	int past_end;             /* 1: the address lies past the object's last byte */
};

/*
 * A new object of `size` usable bytes aligned on `align` (a power of two <= the page size) for
 * `owner`: header pages, the object ending at the end of its last page (alignment permitting,
 * the few bytes after it hold a slack pattern), then a PROT_NONE guard page. Unmaps the oldest
 * quarantined objects first when the backend's mappings near their ceiling (three quarters of
 * vm.max_map_count, see pool-uaf.c). NULL when a mapping fails, the object table is full, or
 * live objects alone fill the ceiling. Installs nothing: the caller installs the fault handler
 * (pool-report.c) before the first object. Thread-safe.
 */
void *pool__uaf_alloc(size_t size, size_t align, const void *owner);

/* Bytes of mapping one object of `size` bytes costs (header, object, slack and guard pages). */
size_t pool__uaf_object_cost(size_t size, size_t align);

/*
 * Before `obj` is freed by `owner`: is it a live object of that owner with its canary and slack
 * intact? Touches only the table and the object's own mapping. Thread-safe.
 */
enum pool_uaf_verdict pool__uaf_check_free(const void *obj, const void *owner, size_t size);

/* Record the caller that allocated `obj` (shown in reports); returns the previous one. */
const void *pool__uaf_note_alloc(const void *obj, const void *caller);

/* The caller that allocated / freed `obj` (NULL if unknown). Lock-free reads for reports. */
const void *pool__uaf_alloc_caller(const void *obj);
const void *pool__uaf_free_caller(const void *obj);

/*
 * Free `obj`: its whole mapping becomes PROT_NONE and enters the quarantine (64 MiB of mappings
 * and 65536 objects at most, fewer when new objects need the mappings; the oldest are unmapped
 * first), so that any later access faults. `free_caller` (may be NULL) is kept for the report.
 * Thread-safe.
 */
void pool__uaf_free(void *obj, const void *free_caller);

/* Unmap every quarantined object of `owner` (the pool is destroyed). Thread-safe. */
void pool__uaf_release_owner(const void *owner);

/*
 * Which object's mapping holds `addr`? 1 and *hit filled, or 0. For the fault handler: it takes
 * no lock (a torn entry only makes the answer vaguer) and is async-signal-safe.
 */
int pool__uaf_lookup(const void *addr, struct pool_uaf_hit *hit);

/*
 * For tests: make `ceiling` (>= 4) the most mappings the backend may hold (0 keeps it); returns
 * the ceiling in effect before (three quarters of vm.max_map_count unless set). Thread-safe.
 */
size_t pool__uaf_set_map_ceiling(size_t ceiling);

/* fork(): the table lock must not be held by a thread that will not exist in the child. */
void pool__uaf_fork_prepare(void);
void pool__uaf_fork_after(void);

#endif
