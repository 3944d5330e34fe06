/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Debug checks: the -dM flag word, its pure parser and help table, fault injection, tags,
 * callers, integrity patterns, backups, poisoning, and the glue to the use-after-free backend
 * and the sanitizers.
 *
 * Everything here runs on slow paths only: any flag that needs per-object work is in
 * POOL_DBG_SLOW, which sends the inline fast path of pool.h to the slow path with one
 * predictable branch. A failed check calls the crash report (pool-report.c), which never
 * allocates and never takes a lock. Nothing here calls the core: the core calls these checks
 * and applies the parsed settings (pool_parse_debugging() in pool.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool-debug.h"
#include "pool-report.h"
#include "pool-san.h"
#include "pool-uaf.h"

/*
 * Defaults: nothing that costs on the fast path. Every per-object check (tag, caller,
 * integrity, poison, uaf, backup) takes allocations off the inline fast path, which costs far
 * more than the check itself (see doc/debugging.md for the measured costs); merging, caches and
 * shared lists are on.
 */
POOL_API unsigned int pool_debugging;

/* read by slow paths while pool__debug_apply() changes them: relaxed atomics */
static _Atomic unsigned char poison_byte = 0x50;    /* HAProxy's -dM default */
static atomic_uint fail_percent = 1;
static int fail_seed_set;
static uint64_t fail_seed;
static atomic_uint integrity_epoch = 1;

#define TAG_ADDR_MASK   UINT64_C(0x0000FFFFFFFFFFFF)
#define TAG_KIND_MASK   UINT64_C(0xFFFF000000000000)
#define TAG_LIVE_KIND   UINT64_C(0xA11C000000000000)
#define TAG_FREED_KIND  UINT64_C(0xF4EE000000000000)
#define INTEGRITY_KEY   UINT64_C(0x6B1D5EA5ED0FF1CE)
#define BACKUP_KEY      UINT64_C(0xBAC0BAC0BAC0BAC0)

/* ------------------------------------------------------------------------------------------ */
/* The option table, the parser and the help                                                  */
/* ------------------------------------------------------------------------------------------ */

struct dbg_option {
	unsigned int flag;
	const char *set;        /* the word that sets `flag` */
	const char *clear;      /* the word that clears it */
	const char *help;
};

static const struct dbg_option dbg_options[] = {
	{ POOL_DBG_FAIL, "fail", "no-fail",
	  "fail allocations at random (fail=<percent>, 1 by default; POOL_FAIL_SEED repeats)" },
	{ POOL_DBG_NO_MERGE, "no-merge", "merge",
	  "merge only pools of the same name (merge: compatible POOL_F_SHARED pools)" },
	{ POOL_DBG_COLD_FIRST, "cold-first", "hot-first",
	  "hand out the least recently freed cached object first" },
	{ POOL_DBG_INTEGRITY, "integrity", "no-integrity",
	  "fill cached objects with a pattern, check it when they leave the cache" },
	{ POOL_DBG_NO_GLOBAL, "no-global", "global",
	  "bypass the shared free lists: evicted objects go back to the OS layer" },
	{ POOL_DBG_NO_CACHE, "no-cache", "cache",
	  "bypass the thread caches" },
	{ POOL_DBG_CALLER, "caller", "no-caller",
	  "record the last allocating/freeing caller in each object (layout)" },
	{ POOL_DBG_TAG, "tag", "no-tag",
	  "tag objects with their pool: wrong-pool free, overflow, double free (layout)" },
	{ POOL_DBG_POISON, "poison", "no-poison",
	  "fill objects handed out with the poison byte (poison=<byte>, 0x50 by default)" },
	{ POOL_DBG_UAF, "uaf", "no-uaf",
	  "a mapping per object, guard page, freed objects quarantined; implies no-cache (layout)" },
	{ POOL_DBG_BACKUP, "backup", "no-backup",
	  "keep a copy of each freed object, compare it when it leaves the cache (layout)" },
};
#define NB_DBG_OPTIONS (sizeof(dbg_options) / sizeof(dbg_options[0]))

static void set_error(char **err, const char *fmt, const char *word, size_t wlen)
{
	char buf[256];
	char w[64];

	if (!err)
		return;
	if (wlen >= sizeof(w))
		wlen = sizeof(w) - 1;
	memcpy(w, word, wlen);
	w[wlen] = 0;
	snprintf(buf, sizeof(buf), fmt, w);
	*err = strdup(buf);
}

/* Parse a number (decimal, 0x hex, 0 octal) spanning exactly [s, s+len); 0 on success. */
static int parse_long(const char *s, size_t len, long *out)
{
	char buf[32];
	char *end;
	long v;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	v = strtol(buf, &end, 0);
	if (errno || *end || end == buf)
		return -1;
	*out = v;
	return 0;
}

POOL_API void pool_debugging_help(FILE *out)
{
	unsigned int cur = POOL__DEBUGGING();
	size_t i;

	if (!out)
		return;
	fprintf(out,
	        "Pool debugging options, from POOL_DEBUG, -dM<options> or pool_parse_debugging().\n"
	        "Syntax: [<poison byte>][,<option>[=<value>]]... applied left to right; a leading\n"
	        "number sets the poison byte and turns poisoning on (empty: 0x50; negative: off).\n"
	        "'*' marks the side in effect now. (layout) options are fixed once a pool exists.\n\n"
	        "   %-15s  %-15s %s\n", "set", "clear", "description");
	for (i = 0; i < NB_DBG_OPTIONS; i++) {
		const struct dbg_option *o = &dbg_options[i];
		int on = !!(cur & o->flag);

		fprintf(out, "  %c%-15s %c%-15s %s\n", on ? '*' : ' ', o->set, on ? ' ' : '*',
		        o->clear, o->help);
	}
	fprintf(out,
	        "\nExamples:\n"
	        "  POOL_DEBUG=uaf                      catch use after free with guard pages\n"
	        "  POOL_DEBUG=tag,integrity,caller     catch wrong-pool and double frees and\n"
	        "                                      writes after free, with their callers\n"
	        "  POOL_DEBUG=fail=5                   make 5%% of allocations fail\n"
	        "  -dM0x41,no-merge                    poison with 0x41, keep pools apart by name\n"
	        "  -dMuaf,cache                        uaf but keep the thread caches\n");
}

POOL_API void pool_debugging_show(FILE *out)
{
	unsigned int cur = POOL__DEBUGGING();
	size_t i;

	if (!out)
		return;
	for (i = 0; i < NB_DBG_OPTIONS; i++) {
		const struct dbg_option *o = &dbg_options[i];

		fprintf(out, "%s%s", i ? "," : "", (cur & o->flag) ? o->set : o->clear);
		if (o->flag == POOL_DBG_FAIL && (cur & o->flag))
			fprintf(out, "=%u", fail_percent);
		if (o->flag == POOL_DBG_POISON && (cur & o->flag))
			fprintf(out, "=0x%02x", poison_byte);
	}
	fputc('\n', out);
}

POOL_API unsigned int pool_debugging_poison_byte(void)
{
	return poison_byte;
}

void pool__debug_current(struct pool_debug_settings *cur)
{
	cur->flags = __atomic_load_n(&pool_debugging, __ATOMIC_ACQUIRE);
	cur->poison_byte = poison_byte;
	cur->fail_percent = fail_percent;
}

int pool__debug_parse(const char *str, const struct pool_debug_settings *cur_s, int layout_fixed,
                      int runtime_only, struct pool_debug_settings *out, int *help_out,
                      char **err)
{
	unsigned int cur = cur_s->flags, flags = cur;
	unsigned int pbyte = cur_s->poison_byte, fpct = cur_s->fail_percent;
	const char *p, *word, *eq, *end;
	int help = 0;
	size_t len, i;
	long v;

	if (err)
		*err = NULL;
	if (!str) {
		set_error(err, "no pool debugging options given%s", "", 0);
		errno = EINVAL;
		return -1;
	}
	p = str;

	/* an optional leading number: the poison byte */
	if (!*p) {
		flags |= POOL_DBG_POISON;
		pbyte = 0x50;
		goto validated;
	} else if (isdigit((unsigned char)*p) || (*p == '-' && isdigit((unsigned char)p[1]))) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (parse_long(p, len, &v) < 0 || v > 255) {
			set_error(err, "invalid poison byte '%s' (expected 0..255, or negative for off)",
			          p, len);
			goto fail;
		}
		if (v < 0) {
			flags &= ~POOL_DBG_POISON;
		} else {
			flags |= POOL_DBG_POISON;
			pbyte = (unsigned int)v;
		}
		p += len;
		if (*p == ',')
			p++;
		else
			goto validated;
	}

	for (;;) {
		word = p;
		end = strchr(word, ',');
		len = end ? (size_t)(end - word) : strlen(word);
		if (len == 0) {
			set_error(err, "empty pool debugging option in '%s'", str, strlen(str));
			goto fail;
		}
		eq = memchr(word, '=', len);
		{
			size_t klen = eq ? (size_t)(eq - word) : len;
			const char *val = eq ? eq + 1 : NULL;
			size_t vlen = eq ? len - klen - 1 : 0;
			unsigned int old = flags;
			int found = 0;

			if (klen == 4 && !memcmp(word, "help", 4) && !eq) {
				help = 1;
				found = 1;
			}
			for (i = 0; !found && i < NB_DBG_OPTIONS; i++) {
				const struct dbg_option *o = &dbg_options[i];

				if (strlen(o->set) == klen && !memcmp(word, o->set, klen)) {
					flags |= o->flag;
					found = 1;
					if (o->flag == POOL_DBG_UAF)
						flags |= POOL_DBG_NO_CACHE;
				} else if (strlen(o->clear) == klen && !memcmp(word, o->clear, klen)) {
					if (eq)
						break;
					flags &= ~o->flag;
					found = 1;
				} else {
					continue;
				}
				if (eq && o->flag == POOL_DBG_FAIL && flags & o->flag) {
					if (parse_long(val, vlen, &v) < 0 || v < 0 || v > 100) {
						set_error(err, "invalid value in '%s' (expected fail=<0..100>)",
						          word, len);
						goto fail;
					}
					fpct = (unsigned int)v;
				} else if (eq && o->flag == POOL_DBG_POISON && flags & o->flag) {
					if (parse_long(val, vlen, &v) < 0 || v < 0 || v > 255) {
						set_error(err, "invalid value in '%s' (expected poison=<0..255>)",
						          word, len);
						goto fail;
					}
					pbyte = (unsigned int)v;
				} else if (eq) {
					set_error(err, "pool debugging option '%s' takes no value", word, len);
					goto fail;
				}
				if ((layout_fixed || runtime_only) && ((old ^ flags) & POOL_DBG_LAYOUT) &&
				    ((flags ^ cur) & o->flag & POOL_DBG_LAYOUT)) {
					set_error(err, runtime_only ?
					          "pool debugging option '%s' changes the object layout "
					          "and cannot change at run time" :
					          "pool debugging option '%s' changes the object layout "
					          "and cannot change once a pool exists", word, len);
					goto fail;
				}
			}
			if (!found) {
				if (eq && klen)
					set_error(err, "unknown pool debugging option '%s' (or it takes no "
					          "value)", word, len);
				else
					set_error(err, "unknown pool debugging option '%s'", word, len);
				goto fail;
			}
		}
		if (!end)
			break;
		p = end + 1;
	}

validated:
	/* keep the internal sanitizer bit whatever the words said */
	out->flags = (flags & ~POOL_DBG_SANITIZER) | (cur & POOL_DBG_SANITIZER);
	out->poison_byte = pbyte;
	out->fail_percent = fpct;
	*help_out = help;
	return 0;
fail:
	errno = EINVAL;
	return -1;
}


void pool__debug_apply(const struct pool_debug_settings *s)
{
	unsigned int cur = POOL__DEBUGGING();
	unsigned int flags = (s->flags & ~POOL_DBG_SANITIZER) | (cur & POOL_DBG_SANITIZER);

	poison_byte = (unsigned char)s->poison_byte;
	fail_percent = s->fail_percent;
	if ((flags & POOL_DBG_INTEGRITY) && !(cur & POOL_DBG_INTEGRITY))
		atomic_fetch_add_explicit(&integrity_epoch, 1, memory_order_release);
	__atomic_store_n(&pool_debugging, flags, __ATOMIC_RELEASE);
}

unsigned int pool__debug_integrity_epoch(void)
{
	return atomic_load_explicit(&integrity_epoch, memory_order_acquire);
}

/* ------------------------------------------------------------------------------------------ */
/* Fault injection                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014). */
static uint64_t splitmix64(uint64_t x)
{
	x += UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

/*
 * Returns 1 when this allocation must fail. xorshift64* (Vigna, "An experimental exploration of
 * Marsaglia's xorshift generators, scrambled", 2016), one state per thread, seeded from
 * POOL_FAIL_SEED and the thread's registry id (so a single-threaded run repeats exactly).
 */
int pool__debug_fail_roll(uint64_t *rng, unsigned int id)
{
	uint64_t x = *rng;

	if (!x) {
		uint64_t base = fail_seed_set ? fail_seed :
		                (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)rng;

		x = splitmix64(base + id) | 1;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return ((x * UINT64_C(0x2545F4914F6CDD1D)) >> 32) % 10000 < (uint64_t)fail_percent * 100;
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

static inline uint64_t pattern_word(const void *obj)
{
	return INTEGRITY_KEY ^ (uint64_t)(uintptr_t)obj;
}

void pool__debug_fill_cached(struct pool_head *pool, void *obj, int integrity)
{
	size_t size = pool->ro.size, off;
	uint64_t pat = pattern_word(obj);

	if (pool__san_on())
		pool__san_access(obj, pool->stride);
	if (integrity) {
		for (off = sizeof(void *); off + 8 <= size; off += 8)
			write_word(obj, off, pat);
		for (; off < size; off++)
			((unsigned char *)obj)[off] = (unsigned char)(pat >> (8 * (off & 7)));
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

	if (pool__san_on())
		pool__san_access(obj, pool->stride);
	if (integrity) {
		for (off = sizeof(void *); off + 8 <= size; off += 8)
			if (read_word(obj, off) != pat)
				goto damaged;
		for (; off < size; off++)
			if (o[off] != (unsigned char)(pat >> (8 * (off & 7))))
				goto damaged;
	}
	if (pool->backup_off &&
	    read_word(obj, pool->backup_off) == (BACKUP_KEY ^ (uint64_t)(uintptr_t)obj)) {
		if (size > sizeof(void *) &&
		    memcmp(o + sizeof(void *), o + pool->backup_off + 8 + sizeof(void *),
		           size - sizeof(void *)) != 0)
			report("write after free detected by the backup copy (the freed object "
			       "changed while it was cached)", pool, obj, caller);
		write_word(obj, pool->backup_off, 0);
	}
	if (pool__san_on())
		pool__san_noaccess(obj, pool->stride);
	return;
damaged:
	report("write after free detected by the integrity check (the pattern of a cached "
	       "object was overwritten)", pool, obj, caller);
}

void pool__debug_san_handout(struct pool_head *pool, void *obj)
{
	/* uaf objects are protected by their own pages, which report better: ASan leaves them */
	if (!(pool->layout & POOL_DBG_UAF) && pool__san_asan_build())
		pool__san_access(obj, pool->os_size);
	pool__san_mempool_alloc(pool, obj, pool->ro.size, pool->stride);
}

/*
 * ASan: the object is out: its usable bytes are the user's, what lies past them up to os_size
 * (padding, tag, caller word, backup: its redzone) stays poisoned, so that an overflow is
 * reported at the write, before it reaches the next object.
 */
static void san_redzone(struct pool_head *pool, void *obj)
{
	if (!(pool->layout & POOL_DBG_UAF) && pool__san_asan_build()) {
		pool__san_noaccess(obj, pool->os_size);
		pool__san_access(obj, pool->ro.size);
	}
}

void pool__debug_san_freed(struct pool_head *pool, void *obj)
{
	if (!(pool->layout & POOL_DBG_UAF) && pool__san_asan_build())
		pool__san_noaccess(obj, pool->os_size);
	pool__san_mempool_free(pool, obj, pool->stride);
}

void pool__debug_on_alloc(struct pool_head *pool, void *obj, unsigned int flags,
                          const void *caller, unsigned int dbg, int from_cache, int integrity)
{

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
		memset(obj, poison_byte, pool->ro.size);
	if (dbg & POOL_DBG_SANITIZER)
		san_redzone(pool, obj);
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

/* Under ASan, an object being freed that is still poisoned is already free: a double free. */
static void san_check_free(struct pool_head *pool, void *obj, const void *caller)
{
	if ((pool->layout & POOL_DBG_UAF) || !pool__san_is_poisoned(obj))
		return;
	if (pool->tag_off) {
		/* with tag on, the tag check reports it with who freed it */
		pool__san_access(obj, pool->os_size);
		return;
	}
	report("double free (the object is already free: AddressSanitizer still has it "
	       "poisoned)", pool, obj, caller);
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

	if (pool__san_on())
		san_check_free(pool, obj, caller);
	if (pool->layout & POOL_DBG_UAF) {
		uaf_check_free(pool, obj, caller);
		return;
	}
	/* ASan: the checks read the redzone, poisoned while the object was out */
	if (pool__san_on() && pool__san_asan_build())
		pool__san_access(obj, pool->os_size);
	if (pool->tag_off)
		tag_check_free(pool, obj, caller);
	if (pool->caller_off) {
		memcpy(&last, (char *)obj + pool->caller_off, sizeof(last));
		caller_count(pool, last, -1);
		memcpy((char *)obj + pool->caller_off, &caller, sizeof(caller));
	}
}

void pool__debug_pool_created(struct pool_head *pool)
{
	if (pool__san_on())
		pool__san_mempool_create(pool);
	if (pool->layout & POOL_DBG_UAF)
		pool__report_catch_faults();
}

void pool__debug_pool_destroyed(struct pool_head *pool)
{
	if (pool->layout & POOL_DBG_UAF)
		pool__uaf_release_owner(pool);
	if (pool__san_on())
		pool__san_mempool_destroy(pool);
}

/* ------------------------------------------------------------------------------------------ */
/* Start-up                                                                                   */
/* ------------------------------------------------------------------------------------------ */

void pool__debug_init(void)
{
	const char *env = getenv("POOL_DEBUG");
	const char *seed = getenv("POOL_FAIL_SEED");
	struct pool_debug_settings cur, next;
	char *err = NULL;
	int help;

	if (pool__san_asan_build() || pool__san_under_memcheck())
		pool_debugging |= POOL_DBG_SANITIZER;
	if (seed && *seed) {
		char *end;

		errno = 0;
		fail_seed = strtoull(seed, &end, 0);
		if (errno || *end)
			fprintf(stderr, "libpool: ignoring POOL_FAIL_SEED='%s': not a number\n", seed);
		else
			fail_seed_set = 1;
	}
	if (!env)
		return;
	pool__debug_current(&cur);
	if (pool__debug_parse(env, &cur, 0, 0, &next, &help, &err) < 0) {
		fprintf(stderr, "libpool: ignoring POOL_DEBUG='%s': %s\n", env,
		        err ? err : "out of memory");
		free(err);
		return;
	}
	if (help)
		pool_debugging_help(stdout);
	else
		pool__debug_apply(&next);
}
