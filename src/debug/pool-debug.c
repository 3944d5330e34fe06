/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Debug checks: fault injection, tags, callers, integrity patterns, backups, poisoning, the
 * glue to the use-after-free backend and the sanitizers, and the start-up (POOL_FAIL_SEED,
 * POOL_DEBUG, the ASan note). The flag word, its values and their parser are in
 * pool-debug-parse.c.
 *
 * Everything here runs on slow paths only: any flag that needs per-object work is in
 * POOL_DBG_SLOW, which sends the inline fast path of pool.h to the slow path with one
 * predictable branch. A failed check calls the crash report (pool-report.c), which never
 * allocates from a pool and never takes a pool lock. Nothing here calls the core: the core
 * calls these checks and applies the parsed settings (pool_parse_debugging() in pool.c).
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "debug/pool-debug.h"
#include "debug/pool-debug-san.h"
#include "debug/pool-profile.h"
#include "debug/pool-report.h"
#include "os/pool-san.h"
#include "os/pool-uaf.h"
#include "base/pool-util.h"

static int fail_seed_set;
static uint64_t fail_seed;

#define TAG_ADDR_MASK   UINT64_C(0x0000FFFFFFFFFFFF)
#define TAG_KIND_MASK   UINT64_C(0xFFFF000000000000)
#define TAG_LIVE_KIND   UINT64_C(0xA11C000000000000)
#define TAG_FREED_KIND  UINT64_C(0xF4EE000000000000)
#define INTEGRITY_KEY   UINT64_C(0x6B1D5EA5ED0FF1CE)
#define BACKUP_KEY      UINT64_C(0xBAC0BAC0BAC0BAC0)

/* ------------------------------------------------------------------------------------------ */
/* Fault injection                                                                            */
/* ------------------------------------------------------------------------------------------ */

/*
 * Returns 1 when this allocation must fail. xorshift64* (pool-util.h), one state per thread,
 * seeded with splitmix64 from POOL_FAIL_SEED and the thread's registry id (so a single-threaded
 * run repeats exactly).
 */
int pool__debug_fail_roll(uint64_t *rng, unsigned int id)
{
	if (!*rng) {
		uint64_t base = fail_seed_set ? fail_seed :
		                (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)rng;

		*rng = pool__splitmix64(base + id) | 1;
	}
	return (pool__xorshift64s(rng) >> 32) % 10000 < (uint64_t)pool__debug_fail_percent() * 100;
}

/* ------------------------------------------------------------------------------------------ */
/* Tags, callers, integrity, backup, poison                                                   */
/* ------------------------------------------------------------------------------------------ */

static inline uint64_t live_tag(const struct pool_head *pool)
{
	return TAG_LIVE_KIND | ((uintptr_t)pool & TAG_ADDR_MASK);
}

static inline uint64_t freed_tag(const void *caller)
{
	return TAG_FREED_KIND | ((uintptr_t)caller & TAG_ADDR_MASK);
}

static inline uint64_t read_word(const void *obj, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)obj + off, sizeof(v));
	return v;
}

static inline void write_word(void *obj, size_t off, uint64_t v)
{
	memcpy((char *)obj + off, &v, sizeof(v));
}

/* Report a failed check on `obj` of `pool`, seen from `caller`. */
__attribute__((noreturn)) static void report(const char *what, const struct pool_head *pool,
                                             const void *obj, const void *caller)
{
	struct pool_report r;

	memset(&r, 0, sizeof(r));
	r.what = what;
	r.pool = pool;
	r.obj = obj;
	r.caller = caller;
	pool__report(&r);
}

/* Count a live object for `caller` (the `pools show detailed` table); best effort when full. */
static void caller_count(struct pool_head *pool, const void *caller, long delta)
{
	unsigned int i, h = (unsigned int)(((uintptr_t)caller >> 2) % POOL_CALLER_SLOTS);

	if (!caller)
		return;
	for (i = 0; i < POOL_CALLER_SLOTS; i++) {
		struct pool_caller_stat *cs = &pool->callers[(h + i) % POOL_CALLER_SLOTS];
		uintptr_t cur = atomic_load_explicit(&cs->caller, memory_order_relaxed);

		if (!cur && delta > 0 &&
		    atomic_compare_exchange_strong(&cs->caller, &cur, (uintptr_t)caller))
			cur = (uintptr_t)caller;
		if (cur == (uintptr_t)caller) {
			atomic_fetch_add_explicit(&cs->live, delta, memory_order_relaxed);
			return;
		}
	}
}

size_t pool__debug_callers(const struct pool_head *pool, struct pool_caller_live *out,
                           size_t max)
{
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < POOL_CALLER_SLOTS && n < max; i++) {
		uintptr_t c = atomic_load_explicit(&pool->callers[i].caller, memory_order_relaxed);
		long live = atomic_load_explicit(&pool->callers[i].live, memory_order_relaxed);

		if (c && live > 0) {
			out[n].caller = c;
			out[n++].live = live;
		}
	}
	return n;
}

static inline uint64_t pattern_word(const void *obj)
{
	return INTEGRITY_KEY ^ (uint64_t)(uintptr_t)obj;
}

/* Byte `off` of the integrity pattern: the word `pat`, as memory holds it, repeated. */
static inline unsigned char pattern_byte(uint64_t pat, size_t off)
{
	unsigned char b[sizeof(pat)];

	memcpy(b, &pat, sizeof(pat));
	return b[off & 7];
}

/*
 * Report a write after free into the cached `obj`, whose byte `at` is the first that differs
 * from what it should hold: the integrity pattern (`copy` NULL) or the backup copy `copy`. The
 * report shows the rows of 16 bytes around it (the one before, its own and the one after,
 * within the object), with what they should hold.
 */
__attribute__((noreturn)) static void report_changed(const char *what, struct pool_head *pool,
                                                     const void *obj, const void *caller,
                                                     size_t at, const unsigned char *copy)
{
	uint64_t pat = pattern_word(obj);
	size_t size = pool->ro.size, row = at & ~(size_t)15, start, end, i;
	struct pool_report r;

	POOL_ASSERT(at < size);
	memset(&r, 0, sizeof(r));
	r.what = what;
	r.pool = pool;
	r.obj = obj;
	r.caller = caller;
	r.changed = 1;
	r.changed_off = at;
	start = row >= 16 ? row - 16 : 0;
	end = start + POOL_REPORT_WINDOW < size ? start + POOL_REPORT_WINDOW : size;
	r.window_off = start;
	r.window_len = end - start;
	for (i = start; i < end; i++)
		r.expected[i - start] = copy ? copy[i] : pattern_byte(pat, i);
	r.expected_what = copy ? "the backup copy: what the object held when it was freed" :
	                  "the integrity pattern";
	pool__report(&r);
}

void pool__debug_fill_cached(struct pool_head *pool, void *obj, int integrity)
{
	size_t size = pool->ro.size, off;
	uint64_t pat = pattern_word(obj);

	/* the pattern stays inside the object, the backup inside the stride (pool__layout_compute()) */
	POOL_ASSERT(obj && size <= pool->stride);
	POOL_ASSERT(!pool->backup_off || pool->backup_off + 8 + size <= pool->stride);
	if (pool__san_on())
		pool__san_access(obj, pool->stride);
	/* the whole object: a free object holds no link (its pointer is in a magazine) */
	if (integrity) {
		for (off = 0; off + 8 <= size; off += 8)
			write_word(obj, off, pat);
		for (; off < size; off++)
			((unsigned char *)obj)[off] = pattern_byte(pat, off);
	}
	if (pool->backup_off) {
		write_word(obj, pool->backup_off, BACKUP_KEY ^ (uint64_t)(uintptr_t)obj);
		memcpy((char *)obj + pool->backup_off + 8, obj, size);
	}
	if (pool__san_on())
		pool__san_noaccess(obj, pool->stride);
}

void pool__debug_check_cached(struct pool_head *pool, void *obj, const void *caller,
                              int integrity)
{
	size_t size = pool->ro.size, off;
	uint64_t pat = pattern_word(obj);
	unsigned char *o = obj;

	POOL_ASSERT(obj && size <= pool->stride);
	if (pool__san_on())
		pool__san_access(obj, pool->stride);
	if (integrity) {
		/* a word at a time, then the byte that differs in the first word that does */
		for (off = 0; off + 8 <= size && read_word(obj, off) == pat; off += 8)
			;
		for (; off < size && o[off] == pattern_byte(pat, off); off++)
			;
		if (off < size)
			report_changed("write after free detected by the integrity check (the pattern "
			               "of a cached object was overwritten)", pool, obj, caller, off,
			               NULL);
	}
	if (pool->backup_off &&
	    read_word(obj, pool->backup_off) == (BACKUP_KEY ^ (uint64_t)(uintptr_t)obj)) {
		const unsigned char *copy = o + pool->backup_off + 8;

		if (memcmp(o, copy, size) != 0) {
			for (off = 0; o[off] == copy[off]; off++)
				;
			report_changed("write after free detected by the backup copy (the freed "
			               "object changed while it was cached)", pool, obj, caller, off,
			               copy);
		}
		write_word(obj, pool->backup_off, 0);
	}
	if (pool__san_on())
		pool__san_noaccess(obj, pool->stride);
}

void pool__debug_on_alloc(struct pool_head *pool, void *obj, unsigned int flags,
                          const void *caller, unsigned int dbg, int from_cache, int integrity)
{
	/* what the layout put past the object lies within what the OS layer gave (os_size) */
	POOL_ASSERT(obj && ((uintptr_t)obj & (pool->align - 1)) == 0);
	POOL_ASSERT(!pool->tag_off || pool->tag_off + sizeof(uint64_t) <= pool->os_size);
	POOL_ASSERT(!pool->caller_off || pool->caller_off + sizeof(void *) <= pool->stride);
	POOL_ASSERT(!integrity || from_cache);
	if (!pool__debug_san_books(pool))
		dbg &= ~POOL_DBG_SANITIZER;
	if (dbg & POOL_DBG_SANITIZER)
		pool__debug_san_handout(pool, obj);
	if (from_cache && (integrity || pool->backup_off))
		pool__debug_check_cached(pool, obj, caller, integrity);
	if (dbg & POOL_DBG_SANITIZER)
		pool__san_access(obj, pool->os_size);
	if (pool->layout & POOL_DBG_UAF) {
		pool__uaf_note_alloc(obj, caller);
		if (pool->layout & POOL_DBG_CALLER)
			caller_count(pool, caller, 1);
	} else {
		if (pool->tag_off)
			write_word(obj, pool->tag_off, live_tag(pool));
		if (pool->caller_off) {
			caller_count(pool, caller, 1);
			memcpy((char *)obj + pool->caller_off, &caller, sizeof(caller));
		}
	}
	if (flags & POOL_F_MUST_ZERO)
		memset(obj, 0, pool->ro.size);
	else if ((dbg & POOL_DBG_POISON) && !(flags & POOL_F_NO_POISON))
		memset(obj, (int)pool_debugging_poison_byte(), pool->ro.size);
	if (dbg & POOL_DBG_SANITIZER)
		pool__debug_san_redzone(pool, obj);
}

/* Under uaf, the backend's table knows every object: check it before the free. */
static void uaf_check_free(struct pool_head *pool, void *obj, const void *caller)
{
	switch (pool__uaf_check_free(obj, pool, pool->ro.size)) {
	case POOL_UAF_OK:
		break;
	case POOL_UAF_UNKNOWN:
		report("free of an address that is not an object of any pool under uaf (never "
		       "allocated, or freed long ago)", pool, obj, caller);
	case POOL_UAF_DOUBLE_FREE: {
		struct pool_report r;

		memset(&r, 0, sizeof(r));
		r.what = "double free (the object is in the use-after-free quarantine)";
		r.pool = pool;
		r.obj = obj;
		r.caller = caller;
		r.freed_by = pool__uaf_free_caller(obj);
		pool__report(&r);
	}
	case POOL_UAF_WRONG_OWNER:
		report("free into the wrong pool (the object belongs to another pool)", pool, obj,
		       caller);
	case POOL_UAF_UNDERFLOW:
		report("underflow: the canary before the object was overwritten", pool, obj,
		       caller);
	case POOL_UAF_OVERFLOW:
		report("overflow past the end of the object (slack before the guard page "
		       "overwritten)", pool, obj, caller);
	}
	if (pool->layout & POOL_DBG_CALLER)
		caller_count(pool, pool__uaf_alloc_caller(obj), -1);
}

static void tag_check_free(struct pool_head *pool, void *obj, const void *caller)
{
	uint64_t tag = read_word(obj, pool->tag_off);
	struct pool_report r;

	if (tag == live_tag(pool)) {
		write_word(obj, pool->tag_off, freed_tag(caller));
		return;
	}
	memset(&r, 0, sizeof(r));
	r.pool = pool;
	r.obj = obj;
	r.caller = caller;
	r.expected_tag = live_tag(pool);
	r.found_tag = tag;
	if ((tag & TAG_KIND_MASK) == TAG_FREED_KIND) {
		r.what = "double free (the object's tag says it was already freed)";
		r.freed_by = (const void *)(uintptr_t)(tag & TAG_ADDR_MASK);
	} else if ((tag & TAG_KIND_MASK) == TAG_LIVE_KIND &&
	           pool__report_is_pool((const void *)(uintptr_t)(tag & TAG_ADDR_MASK))) {
		r.what = "free into the wrong pool (the object's tag names another pool)";
		r.tag_pool = (const struct pool_head *)(uintptr_t)(tag & TAG_ADDR_MASK);
	} else {
		r.what = "tag mismatch: overflow past the end of the object, or not an object of "
		         "this pool";
	}
	pool__report(&r);
}

void pool__debug_on_free(struct pool_head *pool, void *obj, const void *caller)
{
	const void *last;

	POOL_ASSERT(obj);
	if (pool__san_on())
		pool__debug_san_check_free(pool, obj, caller);
	if (pool->layout & POOL_DBG_UAF) {
		uaf_check_free(pool, obj, caller);
		return;
	}
	/* ASan: the checks read the redzone, poisoned while the object was out */
	if (pool__san_on() && pool__debug_san_poisons(pool))
		pool__san_access(obj, pool->os_size);
	if (pool->tag_off)
		tag_check_free(pool, obj, caller);
	if (pool->caller_off) {
		memcpy(&last, (char *)obj + pool->caller_off, sizeof(last));
		caller_count(pool, last, -1);
		memcpy((char *)obj + pool->caller_off, &caller, sizeof(caller));
	}
}

/*
 * A uaf pool relies on the fault handler for its report of a use after free or of an overflow
 * into a guard page; without it (sigaction() refused, e.g. by a seccomp filter) such an access
 * still faults, but kills the process with no word from libpool. Say so on stderr, once per
 * process, when the first uaf pool finds the handler missing.
 */
static void catch_faults(void)
{
	static atomic_int warned;
	int err;

	if (pool__report_catch_faults() == 0)
		return;
	err = errno;
	if (!atomic_exchange_explicit(&warned, 1, memory_order_relaxed))
		fprintf(stderr, "libpool: uaf: cannot install the SIGSEGV handler (sigaction: %s): a "
		        "use after free or an overflow into a guard page will kill the process "
		        "without libpool's report\n", strerror(err));
}

void pool__debug_pool_created(struct pool_head *pool)
{
	POOL_ASSERT(pool->magic == POOL_HEAD_LIVE && !(pool->layout & ~POOL_DBG_LAYOUT));
	if (pool__san_on() && pool__debug_san_books(pool))
		pool__san_mempool_create(pool);
	if (pool->layout & POOL_DBG_UAF)
		catch_faults();
}

void pool__debug_pool_destroyed(struct pool_head *pool)
{
	/* dead before its uaf mappings go: a late free is reported as a use of a dead pool */
	POOL_ASSERT(pool->magic == POOL_HEAD_DEAD);
	if (pool->layout & POOL_DBG_UAF)
		pool__uaf_release_owner(pool);
	if (pool__san_on() && pool__debug_san_books(pool))
		pool__san_mempool_destroy(pool);
}

/* ------------------------------------------------------------------------------------------ */
/* Start-up                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * A program that runs AddressSanitizer expects it to see every object, and does not, for those
 * of the pools: say so once, at start-up, with what it does see and how to have it all, unless
 * the program chose already (POOL_DEBUG in its environment, even empty) or POOL_ASAN_NOTE=0.
 */
static void asan_note(const char *debug_env)
{
	const char *note = getenv("POOL_ASAN_NOTE");

	if (note && strcmp(note, "0") && strcmp(note, "1"))
		fprintf(stderr, "libpool: ignoring POOL_ASAN_NOTE='%s': expected 0 (no note) or 1\n",
		        note);
	if (debug_env || (note && !strcmp(note, "0")) || !pool__san_asan_process())
		return;
	if (pool__san_asan_build())
		fputs("libpool: note: AddressSanitizer sees pool objects in part: libpool, built with "
		      "it, poisons an object while it is free and the bytes past it while it is out, "
		      "so ASan reports\nlibpool: note: their use after free and an overflow past "
		      "them (use-after-poison), but without the stacks of the allocation and the free, "
		      "not once\nlibpool: note: the object was handed out again, and no leak of a pool "
		      "object (LeakSanitizer finds them held by their slabs). POOL_DEBUG=malloc makes\n"
		      "libpool: note: each pool object a malloc() block that ASan checks in full, with "
		      "both stacks. Setting POOL_DEBUG, or POOL_ASAN_NOTE=0, silences this note.\n",
		      stderr);
	else
		fputs("libpool: note: AddressSanitizer does not see pool objects: libpool carves them "
		      "from slabs of its own and keeps them in its caches after pool_free(), so ASan\n"
		      "libpool: note: reports no overflow, use after free or leak of a pool object. "
		      "POOL_DEBUG=malloc makes each pool object a malloc() block that ASan checks,\n"
		      "libpool: note: with the stacks of its allocation and free. Setting POOL_DEBUG, "
		      "or POOL_ASAN_NOTE=0, silences this note.\n", stderr);
}

void pool__debug_init(void)
{
	const char *env = getenv("POOL_DEBUG");
	const char *seed = getenv("POOL_FAIL_SEED");
	struct pool_debug_settings cur, next;
	int help;

	asan_note(env);
	if (pool__san_asan_build() || pool__san_under_memcheck())
		pool__debugging |= POOL_DBG_SANITIZER;
	if (seed && *seed) {
		char *end;

		errno = 0;
		fail_seed = strtoull(seed, &end, 0);
		if (errno || *end)
			fprintf(stderr, "libpool: ignoring POOL_FAIL_SEED='%s': not a number\n", seed);
		else
			fail_seed_set = 1;
	}
	/* empty is unset, as for POOL_LEAK_REPORT and POOL_STATS_ON_EXIT (-dM alone poisons) */
	if (!env || !*env)
		return;
	pool__debug_current(&cur);
	pool__debug_parse_env(env, &cur, &next, &help);
	if (help)
		pool_debugging_help(stdout);
	else
		pool__debug_apply(&next);
}
