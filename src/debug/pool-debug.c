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
 * allocates from a pool and never takes a pool lock. Nothing here calls the core: the core calls these checks
 * and applies the parsed settings (pool_parse_debugging() in pool.c).
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

/*
 * Defaults: nothing that costs on the fast path. Every per-object check (tag, caller,
 * integrity, poison, uaf, backup) takes allocations off the inline fast path, which costs far
 * more than the check itself (see doc/debugging.md for the measured costs); merging, caches and
 * shared lists are on.
 */
POOL_API unsigned int pool__debugging;

/*
 * The defaults of the valued options: `poison` fills with 0x50 ('P'), HAProxy's -dM default, and
 * `fail` alone fails 1% of the allocations.
 */
#define DBG_POISON_BYTE_DEF   0x50
#define DBG_FAIL_PERCENT_DEF  1
#define DBG_STR_(x) #x
#define DBG_STR(x)  DBG_STR_(x)

/*
 * The values of the valued options in effect (`flags` unused: pool_debugging is the flag word).
 * Slow paths read a field with a relaxed atomic load while pool__debug_apply() stores the new
 * values, one relaxed atomic store per row of the option table.
 */
static struct pool_debug_settings dbg_values = {
	.poison_byte = DBG_POISON_BYTE_DEF,
	.fail_percent = DBG_FAIL_PERCENT_DEF,
	.profile_rate = POOL_PROFILE_RATE_DEF,
};
#define DBG_VALUE(field) __atomic_load_n(&dbg_values.field, __ATOMIC_RELAXED)
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

/* What `<set word>=<value>` takes; the value goes to a size_t of struct pool_debug_settings. */
enum dbg_kind {
	DBG_FLAG = 0,    /* no value: the word only sets or clears its flag */
	DBG_PERCENT,     /* 0..100, read by strtol(3) with base 0 (decimal, 0x hex, 0 octal) */
	DBG_BYTE,        /* 0..255, likewise */
	DBG_BYTES,       /* bytes: decimal digits and an optional k, m or g (512k, 2m) */
};

/* Per kind: the value's spelling in an error message, and its bounds. */
static const struct {
	const char *expect;
	unsigned long long min, max;
} dbg_kinds[] = {
	[DBG_FLAG]    = { "", 0, 0 },
	[DBG_PERCENT] = { "<0..100>", 0, 100 },
	[DBG_BYTE]    = { "<0..255>", 0, 255 },
	[DBG_BYTES]   = { "<1..2^40>[k|m|g]", 1, POOL_PROFILE_RATE_MAX },
};

/*
 * A row of the -dM table: the flag, the word that sets it and the word that clears it, the
 * flags the set word also sets, the kind of value the set word may take and the settings field
 * it goes to (offsetof(struct pool_debug_settings, ...), unused for DBG_FLAG), and the line of
 * `help`. pool_debugging_show() prints the rows in this order. A new option is one row.
 */
struct dbg_option {
	unsigned int flag;
	const char *set;
	const char *clear;
	unsigned int implies;
	enum dbg_kind kind;
	size_t field;
	const char *help;
};

#define DBG_NO_FIELD 0
#define DBG_FIELD(f) offsetof(struct pool_debug_settings, f)

static const struct dbg_option dbg_options[] = {
	{ POOL_DBG_FAIL, "fail", "no-fail", 0, DBG_PERCENT, DBG_FIELD(fail_percent),
	  "fail allocations at random (fail=<percent>, " DBG_STR(DBG_FAIL_PERCENT_DEF)
	  " by default; POOL_FAIL_SEED repeats)" },
	{ POOL_DBG_NO_MERGE, "no-merge", "merge", 0, DBG_FLAG, DBG_NO_FIELD,
	  "merge only pools of the same name (merge: compatible POOL_F_SHARED pools)" },
	{ POOL_DBG_COLD_FIRST, "cold-first", "hot-first", 0, DBG_FLAG, DBG_NO_FIELD,
	  "hand out the least recently freed cached object first" },
	{ POOL_DBG_INTEGRITY, "integrity", "no-integrity", 0, DBG_FLAG, DBG_NO_FIELD,
	  "fill cached objects with a pattern, check it when they leave the cache" },
	{ POOL_DBG_NO_GLOBAL, "no-global", "global", 0, DBG_FLAG, DBG_NO_FIELD,
	  "bypass the shared free lists: evicted objects go back to the OS layer" },
	{ POOL_DBG_NO_CACHE, "no-cache", "cache", 0, DBG_FLAG, DBG_NO_FIELD,
	  "bypass the thread caches" },
	{ POOL_DBG_CALLER, "caller", "no-caller", 0, DBG_FLAG, DBG_NO_FIELD,
	  "record the last allocating/freeing caller in each object (layout)" },
	{ POOL_DBG_TAG, "tag", "no-tag", 0, DBG_FLAG, DBG_NO_FIELD,
	  "tag objects with their pool: wrong-pool free, overflow, double free (layout)" },
	{ POOL_DBG_POISON, "poison", "no-poison", 0, DBG_BYTE, DBG_FIELD(poison_byte),
	  "fill objects handed out with the poison byte (poison=<byte>, "
	  DBG_STR(DBG_POISON_BYTE_DEF) " by default)" },
	{ POOL_DBG_UAF, "uaf", "no-uaf", POOL_DBG_NO_CACHE, DBG_FLAG, DBG_NO_FIELD,
	  "a mapping per object, guard page, freed objects quarantined; implies no-cache (layout)" },
	{ POOL_DBG_BACKUP, "backup", "no-backup", 0, DBG_FLAG, DBG_NO_FIELD,
	  "keep a copy of each freed object, compare it when it leaves the cache (layout)" },
	{ POOL_DBG_PROFILE, "profile", "no-profile", 0, DBG_BYTES, DBG_FIELD(profile_rate),
	  "sample one allocation per about <bytes> allocated per thread, for `pools profile` "
	  "(profile=<bytes>, " DBG_STR(POOL_PROFILE_RATE_DEF_KIB) "k by default)" },
	{ POOL_DBG_FAIL_REPORT, "fail-report", "no-fail-report", 0, DBG_FLAG, DBG_NO_FIELD,
	  "report a failed allocation on stderr: the pool, its limit and use, the top sites "
	  "(once per burst)" },
	{ POOL_DBG_MALLOC, "malloc", "no-malloc", 0, DBG_FLAG, DBG_NO_FIELD,
	  "each object from the C library's malloc()/free(), no cache, no shared list: Valgrind "
	  "and sanitizers see it (layout)" },
};
#define NB_DBG_OPTIONS (sizeof(dbg_options) / sizeof(dbg_options[0]))

/* The value of row `o` in `s`. */
static size_t field_get(const struct pool_debug_settings *s, const struct dbg_option *o)
{
	size_t v;

	POOL_ASSERT(o->kind != DBG_FLAG);
	memcpy(&v, (const char *)s + o->field, sizeof(v));
	return v;
}

static void field_set(struct pool_debug_settings *s, const struct dbg_option *o, size_t v)
{
	POOL_ASSERT(o->kind != DBG_FLAG && v <= dbg_kinds[o->kind].max);
	memcpy((char *)s + o->field, &v, sizeof(v));
}

/* The field of row `o` in the values in effect, for its relaxed atomic loads and stores. */
static size_t *value_of(const struct dbg_option *o)
{
	POOL_ASSERT(o->kind != DBG_FLAG);
	return (size_t *)((char *)&dbg_values + o->field);
}

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

/* The value of kind `kind` spelled s[0..len), within the kind's bounds: 0 and *v, or -1. */
static int parse_value(enum dbg_kind kind, const char *s, size_t len, unsigned long long *v)
{
	long l;

	switch (kind) {
	case DBG_PERCENT:
	case DBG_BYTE:
		if (parse_long(s, len, &l) < 0 || l < 0 || (unsigned long long)l > dbg_kinds[kind].max)
			return -1;
		*v = (unsigned long long)l;
		return 0;
	case DBG_BYTES:
		if (pool__parse_decimal(s, len, 1, dbg_kinds[kind].max, v) < 0 ||
		    *v < dbg_kinds[kind].min)
			return -1;
		return 0;
	case DBG_FLAG:
		break;
	}
	return -1;
}

/* The row whose set word (*set = 1) or clear word (*set = 0) is w[0..len), or NULL. */
static const struct dbg_option *find_option(const char *w, size_t len, int *set)
{
	size_t i;

	for (i = 0; i < NB_DBG_OPTIONS; i++) {
		const struct dbg_option *o = &dbg_options[i];

		if (strlen(o->set) == len && !memcmp(w, o->set, len)) {
			*set = 1;
			return o;
		}
		if (strlen(o->clear) == len && !memcmp(w, o->clear, len)) {
			*set = 0;
			return o;
		}
	}
	return NULL;
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
	        "number sets the poison byte and turns poisoning on (empty: "
	        DBG_STR(DBG_POISON_BYTE_DEF) "; negative: off).\n"
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
	        "  -dMuaf,cache                        uaf but keep the thread caches\n"
	        "  POOL_DEBUG=malloc                   let Valgrind, ASan and MSan see every object\n");
}

POOL_API void pool_debugging_show(FILE *out)
{
	struct pool_debug_settings cur;
	size_t i;

	if (!out)
		return;
	pool__debug_current(&cur);
	for (i = 0; i < NB_DBG_OPTIONS; i++) {
		const struct dbg_option *o = &dbg_options[i];
		int on = !!(cur.flags & o->flag);

		fprintf(out, "%s%s", i ? "," : "", on ? o->set : o->clear);
		if (!on)
			continue;
		if (o->kind == DBG_BYTE)
			fprintf(out, "=0x%02zx", field_get(&cur, o));
		else if (o->kind != DBG_FLAG)
			fprintf(out, "=%zu", field_get(&cur, o));
	}
	fputc('\n', out);
}

size_t pool__debug_profile_rate(void)
{
	return DBG_VALUE(profile_rate);
}

POOL_API unsigned int pool_debugging_poison_byte(void)
{
	return (unsigned int)DBG_VALUE(poison_byte);
}

void pool__debug_current(struct pool_debug_settings *cur)
{
	size_t i;

	cur->flags = __atomic_load_n(&pool__debugging, __ATOMIC_ACQUIRE);
	for (i = 0; i < NB_DBG_OPTIONS; i++) {
		const struct dbg_option *o = &dbg_options[i];

		if (o->kind != DBG_FLAG)
			field_set(cur, o, __atomic_load_n(value_of(o), __ATOMIC_RELAXED));
	}
}

/* What the words of one pool__debug_parse() call share. */
struct dbg_parse {
	const char *str;                        /* the whole string, for the messages */
	const struct pool_debug_settings *cur;  /* the settings before it */
	int layout_fixed;                       /* layout options may not change... */
	int runtime_only;                       /* ...because the CLI said so (its message) */
	struct pool_debug_settings next;        /* the settings after the words so far */
	int help;                               /* `help` was among them */
	char **err;
};

/*
 * One word of the string, word[0..len): look it up, set or clear its flag (and what it implies),
 * parse and store its value by the row's kind, then check the layout rule. 0, or -1 with the
 * message in *ps->err.
 */
static int parse_word(struct dbg_parse *ps, const char *word, size_t len)
{
	const char *eq = memchr(word, '=', len);
	size_t klen = eq ? (size_t)(eq - word) : len;
	unsigned int old = ps->next.flags;
	const struct dbg_option *o;
	unsigned long long v;
	int set = 0;

	POOL_ASSERT(ps->str && ps->cur);
	if (len == 0) {
		set_error(ps->err, "empty pool debugging option in '%s'", ps->str, strlen(ps->str));
		return -1;
	}
	if (!eq && len == 4 && !memcmp(word, "help", 4)) {
		ps->help = 1;
		return 0;
	}
	o = find_option(word, klen, &set);
	if (!o || (eq && !set)) {
		set_error(ps->err, eq && klen ? "unknown pool debugging option '%s' (or it takes no "
		          "value)" : "unknown pool debugging option '%s'", word, len);
		return -1;
	}
	if (set)
		ps->next.flags |= o->flag | o->implies;
	else
		ps->next.flags &= ~o->flag;
	if (eq && o->kind == DBG_FLAG) {
		set_error(ps->err, "pool debugging option '%s' takes no value", word, len);
		return -1;
	}
	if (eq) {
		char fmt[96];

		if (parse_value(o->kind, eq + 1, len - klen - 1, &v) < 0) {
			snprintf(fmt, sizeof(fmt), "invalid value in '%%s' (expected %s=%s)", o->set,
			         dbg_kinds[o->kind].expect);
			set_error(ps->err, fmt, word, len);
			return -1;
		}
		field_set(&ps->next, o, (size_t)v);
	}
	if ((ps->layout_fixed || ps->runtime_only) && ((old ^ ps->next.flags) & POOL_DBG_LAYOUT) &&
	    ((ps->next.flags ^ ps->cur->flags) & o->flag & POOL_DBG_LAYOUT)) {
		set_error(ps->err, ps->runtime_only ?
		          "pool debugging option '%s' changes the object layout "
		          "and cannot change at run time" :
		          "pool debugging option '%s' changes the object layout "
		          "and cannot change once a pool exists", word, len);
		return -1;
	}
	return 0;
}

/*
 * The leading poison byte, p[0..len): 0..255 turns poisoning on with that byte, a negative
 * number turns it off. 0, or -1 with the message in *ps->err.
 */
static int parse_poison_number(struct dbg_parse *ps, const char *p, size_t len)
{
	long v;

	if (parse_long(p, len, &v) < 0 || v > 255) {
		set_error(ps->err, "invalid poison byte '%s' (expected 0..255, or negative for off)",
		          p, len);
		return -1;
	}
	if (v < 0) {
		ps->next.flags &= ~POOL_DBG_POISON;
	} else {
		ps->next.flags |= POOL_DBG_POISON;
		ps->next.poison_byte = (size_t)v;
	}
	return 0;
}

/* The poison byte, p[0..len), when it comes first: a number or a minus and a number. */
static int is_poison_number(const struct dbg_parse *ps, const char *p)
{
	return p == ps->str && (isdigit((unsigned char)*p) ||
	                        (*p == '-' && isdigit((unsigned char)p[1])));
}

/* `uaf` and `malloc` together: 0, or -1 with the message in *err. */
static int check_exclusive(unsigned int flags, char **err)
{
	if ((flags & (POOL_DBG_UAF | POOL_DBG_MALLOC)) != (POOL_DBG_UAF | POOL_DBG_MALLOC))
		return 0;
	set_error(err, "pool debugging options 'uaf' and 'malloc' exclude each other (each "
	          "decides where objects come from)%s", "", 0);
	return -1;
}

int pool__debug_parse(const char *str, const struct pool_debug_settings *cur, int layout_fixed,
                      int runtime_only, struct pool_debug_settings *out, int *help, char **err)
{
	struct dbg_parse ps = { str, cur, layout_fixed, runtime_only, *cur, 0, err };
	const char *p = str, *end;
	size_t len;

	POOL_ASSERT(cur && out && help);
	if (err)
		*err = NULL;
	if (!str) {
		set_error(err, "no pool debugging options given%s", "", 0);
		goto fail;
	}
	if (!*p) {
		/* -dM alone: poisoning with the default byte */
		ps.next.flags |= POOL_DBG_POISON;
		ps.next.poison_byte = DBG_POISON_BYTE_DEF;
		goto validated;
	}
	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		/* a number comes first or not at all: the poison byte */
		if (is_poison_number(&ps, p)) {
			if (parse_poison_number(&ps, p, len) < 0)
				goto fail;
		} else if (parse_word(&ps, p, len) < 0) {
			goto fail;
		}
		if (!end)
			break;
		p = end + 1;
	}

validated:
	if (check_exclusive(ps.next.flags, err) < 0)
		goto fail;
	/* keep the internal sanitizer bit whatever the words said */
	ps.next.flags = (ps.next.flags & ~POOL_DBG_SANITIZER) | (cur->flags & POOL_DBG_SANITIZER);
	*out = ps.next;
	*help = ps.help;
	return 0;
fail:
	errno = EINVAL;
	return -1;
}

/*
 * POOL_DEBUG at start-up, `str` not empty: as pool__debug_parse(), but a word it refuses (an
 * unknown word, a bad value, an empty word, `malloc` after `uaf` or the reverse) is named on
 * stderr and left out, and the other words apply, so that a misspelt word does not leave the
 * program running with no check at all. Returns the settings in *out and `help` in *help.
 */
static void parse_env(const char *str, const struct pool_debug_settings *cur,
                      struct pool_debug_settings *out, int *help)
{
	char *err = NULL;
	struct dbg_parse ps = { str, cur, 0, 0, *cur, 0, &err };
	const char *p = str, *end;
	size_t len;

	for (;;) {
		struct pool_debug_settings before = ps.next;
		int bad;

		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (is_poison_number(&ps, p))
			bad = parse_poison_number(&ps, p, len);
		else
			bad = parse_word(&ps, p, len);
		if (!bad)
			bad = check_exclusive(ps.next.flags, &err);
		if (bad) {
			ps.next = before;
			fprintf(stderr, "libpool: POOL_DEBUG='%s': ignoring '%.*s': %s; the other "
			        "options apply\n", str, (int)len, p, err ? err : "out of memory");
			free(err);
			err = NULL;
		}
		if (!end)
			break;
		p = end + 1;
	}
	ps.next.flags = (ps.next.flags & ~POOL_DBG_SANITIZER) | (cur->flags & POOL_DBG_SANITIZER);
	*out = ps.next;
	*help = ps.help;
}

void pool__debug_apply(const struct pool_debug_settings *s)
{
	unsigned int cur = POOL__DEBUGGING();
	unsigned int flags = (s->flags & ~POOL_DBG_SANITIZER) | (cur & POOL_DBG_SANITIZER);
	size_t i;

	for (i = 0; i < NB_DBG_OPTIONS; i++) {
		const struct dbg_option *o = &dbg_options[i];

		if (o->kind != DBG_FLAG) {
			/* the parser kept every value within its kind's bounds */
			POOL_ASSERT(field_get(s, o) <= dbg_kinds[o->kind].max);
			__atomic_store_n(value_of(o), field_get(s, o), __ATOMIC_RELAXED);
		}
	}
	if ((flags & POOL_DBG_INTEGRITY) && !(cur & POOL_DBG_INTEGRITY))
		atomic_fetch_add_explicit(&integrity_epoch, 1, memory_order_release);
	/* a profile switched on, or its rate changed: a new one, before any thread samples */
	if ((flags & POOL_DBG_PROFILE) &&
	    (!(cur & POOL_DBG_PROFILE) || s->profile_rate != pool__prof_rate()))
		pool__prof_reset(s->profile_rate);
	__atomic_store_n(&pool__debugging, flags, __ATOMIC_RELEASE);
}

unsigned int pool__debug_integrity_epoch(void)
{
	return atomic_load_explicit(&integrity_epoch, memory_order_acquire);
}

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
	return (pool__xorshift64s(rng) >> 32) % 10000 < (uint64_t)DBG_VALUE(fail_percent) * 100;
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
		memset(obj, (int)DBG_VALUE(poison_byte), pool->ro.size);
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
	parse_env(env, &cur, &next, &help);
	if (help)
		pool_debugging_help(stdout);
	else
		pool__debug_apply(&next);
}
