/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The -dM settings: the flag word (pool__debugging) and the values of the valued options in
 * effect, the option table, its pure parser, POOL_DEBUG's lenient reading at start-up, the help,
 * and pool__debug_apply(), which makes parsed settings the ones in effect. The checks that the
 * settings switch on are in pool-debug.c.
 *
 * The parser is a pure function of its input and the settings it starts from: it changes
 * nothing in effect, so that a refused -dM word changes nothing at run time. Values are read with
 * relaxed atomic loads while pool__debug_apply() stores them, under the callers' serialisation
 * (pool.c's list lock). Nothing here allocates from a pool or takes a pool lock.
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool-assert.h"
#include "debug/pool-debug-parse.h"
#include "debug/pool-guard.h"
#include "debug/pool-profile.h"

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
#define DBG_GUARD_PERCENT_DEF 100
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
	.guard_percent = DBG_GUARD_PERCENT_DEF,
};
#define DBG_VALUE(field) __atomic_load_n(&dbg_values.field, __ATOMIC_RELAXED)
static atomic_uint integrity_epoch = 1;

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
	{ POOL_DBG_GUARD, "guard", "no-guard", POOL_DBG_PROFILE, DBG_PERCENT,
	  DBG_FIELD(guard_percent),
	  "put guard=<percent> of the profile's samples (" DBG_STR(DBG_GUARD_PERCENT_DEF)
	  " by default) between guard pages, faults reported; implies profile" },
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
	/* a valued row names a size_t field: a plain store (gcc 12's -Wstringop-overflow takes a
	   memcpy() there for one into the flag word under -fsanitize=thread) */
	*(size_t *)(void *)((char *)s + o->field) = v;
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
	        "  POOL_DEBUG=malloc                   let Valgrind, ASan and MSan see every object\n"
	        "  POOL_DEBUG=guard                    in production: overflows and uses after free\n"
	        "                                      of the profile's samples fault and are named\n");
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

unsigned int pool__debug_guard_percent(void)
{
	return (unsigned int)DBG_VALUE(guard_percent);
}

size_t pool__debug_fail_percent(void)
{
	return DBG_VALUE(fail_percent);
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
	/* guard pages are a share of the profile's samples: no profile, no guard */
	if (!(ps.next.flags & POOL_DBG_PROFILE))
		ps.next.flags &= ~POOL_DBG_GUARD;
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
void pool__debug_parse_env(const char *str, const struct pool_debug_settings *cur,
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
	/* guard pages: the fault handler first, so that no guarded object faults unreported */
	if ((flags & POOL_DBG_GUARD) && !(cur & POOL_DBG_GUARD))
		pool__guard_start();
	__atomic_store_n(&pool__debugging, flags, __ATOMIC_RELEASE);
}

unsigned int pool__debug_integrity_epoch(void)
{
	return atomic_load_explicit(&integrity_epoch, memory_order_acquire);
}
