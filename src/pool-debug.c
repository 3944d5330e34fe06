/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Pool debugging: the -dM flag word, its parser and help table, fault injection, tags, callers,
 * integrity patterns, backups, poisoning, the use-after-free allocator, sanitizer and Valgrind
 * annotations, and the crash report.
 *
 * Everything here runs on slow paths only: any flag that needs per-object work is in
 * POOL_DBG_SLOW, which sends the inline fast path of pool.h here with one predictable branch.
 * Report paths never allocate and never take a pool lock.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/uio.h>

#include "pool-int.h"
#include "pool-os.h"

#if defined(__SANITIZE_ADDRESS__)
#define POOL_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_HAVE_ASAN 1
#endif
#endif
#ifdef POOL_HAVE_ASAN
#include <sanitizer/asan_interface.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#define POOL_HAVE_VALGRIND 1
#include <valgrind/memcheck.h>
#endif
#endif

/*
 * Defaults: nothing that costs on the fast path. Every per-object check (tag, caller,
 * integrity, poison, uaf, backup) takes allocations off the inline fast path, which costs far
 * more than the check itself (see doc/debugging.md for the measured costs); merging, caches and
 * shared lists are on.
 */
POOL_API unsigned int pool_debugging;

static unsigned char poison_byte = 0x50;    /* HAProxy's -dM default */
static unsigned int fail_percent = 1;
static int fail_seed_set;
static uint64_t fail_seed;

#define TAG_ADDR_MASK   UINT64_C(0x0000FFFFFFFFFFFF)
#define TAG_KIND_MASK   UINT64_C(0xFFFF000000000000)
#define TAG_LIVE_KIND   UINT64_C(0xA11C000000000000)
#define TAG_FREED_KIND  UINT64_C(0xF4EE000000000000)
#define INTEGRITY_KEY   UINT64_C(0x6B1D5EA5ED0FF1CE)
#define BACKUP_KEY      UINT64_C(0xBAC0BAC0BAC0BAC0)
#define UAF_CANARY_KEY  UINT64_C(0xCA7A11C0DEADBEEF)
#define UAF_SLACK_BYTE  0xC5

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
	unsigned int cur = pool_debugging;
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
	unsigned int cur = pool_debugging;
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

POOL_API int pool_parse_debugging(const char *str, char **err)
{
	return pool__parse_debugging(str, err, stdout, 0);
}

int pool__parse_debugging(const char *str, char **err, FILE *help_out, int runtime_only)
{
	unsigned int cur, flags;
	unsigned int pbyte = poison_byte, fpct = fail_percent;
	const char *p, *word, *eq, *end;
	int help = 0, pools_exist;
	size_t len, i;
	long v;

	if (err)
		*err = NULL;
	if (!str) {
		set_error(err, "no pool debugging options given%s", "", 0);
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&pool__list_lock);
	cur = flags = pool_debugging;
	pools_exist = runtime_only || pool__nb_pools > 0;
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
				if (pools_exist && ((old ^ flags) & POOL_DBG_LAYOUT & ~0u) &&
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
	if (help) {
		pthread_mutex_unlock(&pool__list_lock);
		pool_debugging_help(help_out);
		return 1;
	}
	/* keep the internal sanitizer bit whatever the words said */
	flags = (flags & ~POOL_DBG_SANITIZER) | (cur & POOL_DBG_SANITIZER);
	poison_byte = (unsigned char)pbyte;
	fail_percent = fpct;
	if ((flags & POOL_DBG_INTEGRITY) && !(cur & POOL_DBG_INTEGRITY))
		atomic_fetch_add(&pool__integrity_epoch, 1);
	__atomic_store_n(&pool_debugging, flags, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pool__list_lock);
	return 0;
fail:
	pthread_mutex_unlock(&pool__list_lock);
	errno = EINVAL;
	return -1;
}

POOL_API unsigned int pool_debugging_poison_byte(void)
{
	return poison_byte;
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
int pool__debug_fail_roll(struct pool_thread_ctx *ctx)
{
	uint64_t x = ctx->rng;

	if (!x) {
		uint64_t base = fail_seed_set ? fail_seed :
		                (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)ctx;

		x = splitmix64(base + ctx->id) | 1;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ctx->rng = x;
	return ((x * UINT64_C(0x2545F4914F6CDD1D)) >> 32) % 10000 < (uint64_t)fail_percent * 100;
}

/* ------------------------------------------------------------------------------------------ */
/* Sanitizers and Valgrind                                                                    */
/* ------------------------------------------------------------------------------------------ */

#ifdef POOL_HAVE_VALGRIND
#define ON_VALGRIND() RUNNING_ON_VALGRIND
#else
#define ON_VALGRIND() 0
#endif

void pool__san_noaccess(const void *ptr, size_t len)
{
#ifdef POOL_HAVE_ASAN
	ASAN_POISON_MEMORY_REGION(ptr, len);
#endif
#ifdef POOL_HAVE_VALGRIND
	if (ON_VALGRIND())
		VALGRIND_MAKE_MEM_NOACCESS(ptr, len);
#endif
	(void)ptr;
	(void)len;
}

void pool__san_access(const void *ptr, size_t len)
{
#ifdef POOL_HAVE_ASAN
	ASAN_UNPOISON_MEMORY_REGION(ptr, len);
#endif
#ifdef POOL_HAVE_VALGRIND
	if (ON_VALGRIND())
		VALGRIND_MAKE_MEM_DEFINED(ptr, len);
#endif
	(void)ptr;
	(void)len;
}

/*
 * Under Valgrind each pool is a memcheck mempool (VALGRIND_CREATE_MEMPOOL, anchored at the pool
 * head): objects handed out are its chunks, and a freed object is a freed chunk, so memcheck
 * reports a later access with the stack of the free. Under ASan the object is poisoned.
 */
void pool__san_pool_created(struct pool_head *pool)
{
#ifdef POOL_HAVE_VALGRIND
	if (ON_VALGRIND())
		VALGRIND_CREATE_MEMPOOL(pool, 0, 0);
#endif
	(void)pool;
}

void pool__san_pool_destroyed(struct pool_head *pool)
{
#ifdef POOL_HAVE_VALGRIND
	if (ON_VALGRIND())
		VALGRIND_DESTROY_MEMPOOL(pool);
#endif
	(void)pool;
}

/* uaf objects are protected by their own pages, which report better: ASan leaves them alone. */
void pool__san_handout(struct pool_head *pool, void *obj)
{
#ifdef POOL_HAVE_ASAN
	if (!(pool->layout & POOL_DBG_UAF))
		ASAN_UNPOISON_MEMORY_REGION(obj, pool->stride);
#endif
#ifdef POOL_HAVE_VALGRIND
	if (ON_VALGRIND()) {
		VALGRIND_MEMPOOL_ALLOC(pool, obj, pool->ro.size);
		VALGRIND_MAKE_MEM_DEFINED((char *)obj + pool->ro.size,
		                          pool->stride - pool->ro.size);
	}
#endif
	(void)pool;
	(void)obj;
}

void pool__san_freed(struct pool_head *pool, void *obj)
{
#ifdef POOL_HAVE_ASAN
	if (!(pool->layout & POOL_DBG_UAF))
		ASAN_POISON_MEMORY_REGION(obj, pool->stride);
#endif
#ifdef POOL_HAVE_VALGRIND
	if (ON_VALGRIND()) {
		VALGRIND_MEMPOOL_FREE(pool, obj);
		VALGRIND_MAKE_MEM_NOACCESS(obj, pool->stride);
	}
#endif
	(void)pool;
	(void)obj;
}

static inline int san_on(void)
{
	return POOL_UNLIKELY(pool_debugging & POOL_DBG_SANITIZER);
}

/*
 * Under ASan, an object being freed that is still poisoned is already free (we poison objects
 * as they come back and unpoison them as they go out): a double free, caught even without tag.
 * With tag on, the object is unpoisoned so that the tag check reports it with who freed it.
 */
void pool__san_check_free(struct pool_head *pool, void *obj, const void *caller)
{
#ifdef POOL_HAVE_ASAN
	if (!(pool->layout & POOL_DBG_UAF) && __asan_address_is_poisoned(obj)) {
		if (pool->tag_off && !(pool->layout & POOL_DBG_UAF)) {
			ASAN_UNPOISON_MEMORY_REGION(obj, pool->stride);
			return;
		}
		pool__report("double free (the object is already free: AddressSanitizer still has "
		             "it poisoned)", pool, obj, caller, 0, 0);
	}
#endif
	(void)pool;
	(void)obj;
	(void)caller;
}

/* ------------------------------------------------------------------------------------------ */
/* The crash report                                                                           */
/* ------------------------------------------------------------------------------------------ */

struct rbuf {
	char b[1024];
	size_t n;
};

static void r_flush(struct rbuf *r)
{
	size_t off = 0;

	while (off < r->n) {
		ssize_t w = write(2, r->b + off, r->n - off);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	r->n = 0;
}

static void r_str(struct rbuf *r, const char *s)
{
	while (s && *s) {
		if (r->n == sizeof(r->b))
			r_flush(r);
		r->b[r->n++] = *s++;
	}
}

static void r_hex(struct rbuf *r, uint64_t v, int digits)
{
	char tmp[20];
	int i, n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v || n < digits);
	r_str(r, "0x");
	for (i = n - 1; i >= 0; i--) {
		char c[2] = { tmp[i], 0 };

		r_str(r, c);
	}
}

static void r_dec(struct rbuf *r, uint64_t v)
{
	char tmp[24];
	int n = sizeof(tmp) - 1;

	tmp[n] = 0;
	do {
		tmp[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	r_str(r, tmp + n);
}

/* symbol+offset (file) of a code address, with dladdr() */
static void r_sym(struct rbuf *r, const void *addr)
{
	Dl_info info;

	if (!addr) {
		r_str(r, "(unknown)");
		return;
	}
	if (dladdr(addr, &info) && info.dli_sname) {
		r_str(r, info.dli_sname);
		r_str(r, "+");
		r_hex(r, (uint64_t)((uintptr_t)addr - (uintptr_t)info.dli_saddr), 1);
		r_str(r, " (");
		r_str(r, info.dli_fname ? strrchr(info.dli_fname, '/') ?
		         strrchr(info.dli_fname, '/') + 1 : info.dli_fname : "?");
		r_str(r, ")");
	} else if (dladdr(addr, &info) && info.dli_fname) {
		/* a static function: file(+offset), as backtrace_symbols() writes it, for addr2line */
		r_str(r, info.dli_fname);
		r_str(r, "(+");
		r_hex(r, (uint64_t)((uintptr_t)addr - (uintptr_t)info.dli_fbase), 1);
		r_str(r, ")");
	} else {
		r_hex(r, (uint64_t)(uintptr_t)addr, 1);
	}
}

/* Copy memory that may be unreadable (protected, unmapped) without faulting. */
static int safe_read(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)src, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static void r_dump(struct rbuf *r, const char *title, const unsigned char *from, size_t len,
                   const unsigned char *obj)
{
	unsigned char buf[64];
	size_t i;

	if (len > sizeof(buf))
		len = sizeof(buf);
	r_str(r, "libpool:   ");
	r_str(r, title);
	r_str(r, " (offset ");
	r_dec(r, (uint64_t)(from - obj));
	r_str(r, ", ");
	r_dec(r, len);
	r_str(r, " bytes):");
#ifdef POOL_HAVE_ASAN
	ASAN_UNPOISON_MEMORY_REGION(from, len);
#endif
	if (safe_read(buf, from, len) < 0) {
		r_str(r, " (unreadable)\n");
		return;
	}
	for (i = 0; i < len; i++) {
		if (i % 16 == 0)
			r_str(r, "\nlibpool:     ");
		{
			char c[4] = { "0123456789abcdef"[buf[i] >> 4], "0123456789abcdef"[buf[i] & 15],
			              ' ', 0 };
			r_str(r, c);
		}
	}
	r_str(r, "\n");
}

static const void *uaf_free_caller_of(const void *obj);

__attribute__((noreturn)) void pool__report(const char *what, const struct pool_head *pool,
                                            const void *obj, const void *caller,
                                            uint64_t expected_tag, uint64_t found_tag)
{
	struct rbuf r;
	const struct pool_head *p;

	r.n = 0;
	r_str(&r, "libpool: FATAL: ");
	r_str(&r, what);
	r_str(&r, " in pool '");
	r_str(&r, pool ? pool->name : "?");
	r_str(&r, "' (");
	r_dec(&r, pool ? pool->ro.size : 0);
	r_str(&r, " bytes) object ");
	r_hex(&r, (uint64_t)(uintptr_t)obj, 1);
	r_str(&r, "\nlibpool:   thread ");
	r_dec(&r, (uint64_t)gettid());
	r_str(&r, "\nlibpool:   caller: ");
	r_sym(&r, caller);
	r_str(&r, "\n");
	if (pool && pool->caller_off && obj) {
		const void *last = NULL;

		if (safe_read(&last, (const char *)obj + pool->caller_off, sizeof(last)) == 0) {
			r_str(&r, "libpool:   last caller recorded in the object: ");
			r_sym(&r, last);
			r_str(&r, "\n");
		}
	}
	if (pool && (pool->layout & POOL_DBG_UAF) && uaf_free_caller_of(obj)) {
		r_str(&r, "libpool:   freed by: ");
		r_sym(&r, uaf_free_caller_of(obj));
		r_str(&r, "\n");
	}
	if (expected_tag) {
		r_str(&r, "libpool:   expected tag ");
		r_hex(&r, expected_tag, 16);
		r_str(&r, ", found ");
		r_hex(&r, found_tag, 16);
		r_str(&r, "\n");
		if ((found_tag & TAG_KIND_MASK) == TAG_FREED_KIND) {
			r_str(&r, "libpool:   the found tag marks an object already freed by: ");
			r_sym(&r, (const void *)(uintptr_t)(found_tag & TAG_ADDR_MASK));
			r_str(&r, "\n");
		}
		for (p = pool__list_head; p; p = p->next) {
			if ((TAG_LIVE_KIND | ((uintptr_t)p & TAG_ADDR_MASK)) == found_tag) {
				r_str(&r, "libpool:   the found tag is that of pool '");
				r_str(&r, p->name);
				r_str(&r, "' (");
				r_dec(&r, p->ro.size);
				r_str(&r, " bytes)\n");
			}
		}
	}
	if (obj && pool) {
		size_t size = pool->ro.size;
		const unsigned char *o = obj;
		size_t before = size < 16 ? size : 16;

		r_dump(&r, "object start", o, size < 64 ? size : 64, o);
		r_dump(&r, "around the end", o + size - before,
		       before + ((pool->layout & POOL_DBG_UAF) ? 0 : 16), o);
	}
	r_flush(&r);
	abort();
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

void pool__debug_fill_cached(struct pool_head *pool, void *obj)
{
	size_t size = pool->ro.size, off;
	uint64_t pat = pattern_word(obj);

	if (san_on())
		pool__san_access(obj, pool->stride);
	if (pool_debugging & POOL_DBG_INTEGRITY) {
		for (off = sizeof(void *); off + 8 <= size; off += 8)
			write_word(obj, off, pat);
		for (; off < size; off++)
			((unsigned char *)obj)[off] = (unsigned char)(pat >> (8 * (off & 7)));
	}
	if (pool->backup_off) {
		write_word(obj, pool->backup_off, BACKUP_KEY ^ (uint64_t)(uintptr_t)obj);
		memcpy((char *)obj + pool->backup_off + 8, obj, size);
	}
	if (san_on())
		pool__san_noaccess(obj, pool->stride);
}

void pool__debug_check_cached(struct pool_head *pool, void *obj, const void *caller)
{
	size_t size = pool->ro.size, off;
	uint64_t pat = pattern_word(obj);
	unsigned char *o = obj;

	if (san_on())
		pool__san_access(obj, pool->stride);
	if (pool_debugging & POOL_DBG_INTEGRITY) {
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
			pool__report("write after free detected by the backup copy (the freed object "
			             "changed while it was cached)", pool, obj, caller, 0, 0);
		write_word(obj, pool->backup_off, 0);
	}
	if (san_on())
		pool__san_noaccess(obj, pool->stride);
	return;
damaged:
	pool__report("write after free detected by the integrity check (the pattern of a cached "
	             "object was overwritten)", pool, obj, caller, 0, 0);
}

static void uaf_on_alloc(struct pool_head *pool, void *obj, const void *caller);
static void uaf_check_free(struct pool_head *pool, void *obj, const void *caller);

void pool__debug_on_alloc(struct pool_head *pool, void *obj, unsigned int flags,
                          const void *caller, int from_cache)
{
	unsigned int dbg = pool_debugging;

	if (dbg & POOL_DBG_SANITIZER)
		pool__san_handout(pool, obj);
	if (from_cache && ((dbg & POOL_DBG_INTEGRITY) || pool->backup_off))
		pool__debug_check_cached(pool, obj, caller);
	if (dbg & POOL_DBG_SANITIZER)
		pool__san_access(obj, pool->stride);
	if (pool->layout & POOL_DBG_UAF) {
		uaf_on_alloc(pool, obj, caller);
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
}

/* Is `tag` the live tag of an existing pool? (report path: reads the list without the lock) */
static int tag_names_a_pool(uint64_t tag)
{
	const struct pool_head *p;

	for (p = pool__list_head; p; p = p->next)
		if (live_tag(p) == tag)
			return 1;
	return 0;
}

void pool__debug_on_free(struct pool_head *pool, void *obj, const void *caller)
{
	const void *last;
	uint64_t tag;

	if (pool->layout & POOL_DBG_UAF) {
		uaf_check_free(pool, obj, caller);
		return;
	}
	if (pool->tag_off) {
		tag = read_word(obj, pool->tag_off);
		if (tag != live_tag(pool)) {
			if ((tag & TAG_KIND_MASK) == TAG_FREED_KIND)
				pool__report("double free (the object's tag says it was already freed)",
				             pool, obj, caller, live_tag(pool), tag);
			if (tag_names_a_pool(tag))
				pool__report("free into the wrong pool (the object's tag names another "
				             "pool)", pool, obj, caller, live_tag(pool), tag);
			pool__report("tag mismatch: overflow past the end of the object, or not an "
			             "object of this pool", pool, obj, caller, live_tag(pool), tag);
		}
		write_word(obj, pool->tag_off, freed_tag(caller));
	}
	if (pool->caller_off) {
		memcpy(&last, (char *)obj + pool->caller_off, sizeof(last));
		caller_count(pool, last, -1);
		memcpy((char *)obj + pool->caller_off, &caller, sizeof(caller));
	}
}

/* ------------------------------------------------------------------------------------------ */
/* The use-after-free allocator                                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * Each object gets its own mapping: header pages, then the object ending at the end of its last
 * page (alignment permitting; the few slack bytes after it hold a pattern), then a PROT_NONE
 * guard page, so an overflow faults at once. An 8-byte canary just before the object catches an
 * underflow at free. A freed object's whole mapping is made PROT_NONE and quarantined (64 MiB,
 * oldest unmapped first), so reads and writes after free fault; a SIGSEGV handler turns such a
 * fault into a report. A table of every uaf object (live or quarantined) finds double frees and
 * frees into the wrong pool without touching the object.
 */
#define UAF_TABLE_BITS       17u
#define UAF_TABLE_SIZE       (1u << UAF_TABLE_BITS)
#define UAF_RING_SIZE        65536u
#define UAF_QUARANTINE_BYTES (64ul << 20)

enum uaf_state { UAF_EMPTY = 0, UAF_LIVE, UAF_QUARANTINED };

struct uaf_entry {
	uintptr_t obj;
	uintptr_t base;
	size_t len;
	struct pool_head *pool;
	const void *alloc_caller;
	const void *free_caller;
	unsigned int state;
};

static pthread_mutex_t uaf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uaf_entry *uaf_table;
static uintptr_t *uaf_ring;
static unsigned int uaf_ring_head, uaf_ring_count;
static size_t uaf_quarantined_bytes;
static struct sigaction uaf_old_segv;
static int uaf_handler_installed;

static unsigned int uaf_hash(uintptr_t obj)
{
	return (unsigned int)(((obj >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - UAF_TABLE_BITS));
}

/* under uaf_lock */
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

/* under uaf_lock: linear probing with backward-shift deletion (Knuth TAOCP vol. 3, 6.4, R) */
static void uaf_remove(struct uaf_entry *e)
{
	unsigned int i = (unsigned int)(e - uaf_table), j = i, k;

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

static const char *uaf_fault_kind(const struct uaf_entry *e, uintptr_t addr)
{
	if (e->state == UAF_QUARANTINED)
		return "use after free: access to a freed object (caught by its PROT_NONE pages)";
	if (addr >= e->obj + e->pool->ro.size)
		return "overflow past the end of the object into its guard page";
	return "invalid access near the object";
}

static void uaf_segv(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	const void *pc = NULL;
	unsigned int i;

#if defined(__x86_64__)
	pc = (const void *)((ucontext_t *)uctx)->uc_mcontext.gregs[REG_RIP];
#else
	(void)uctx;
#endif
	for (i = 0; uaf_table && i < UAF_TABLE_SIZE; i++) {
		const struct uaf_entry *e = &uaf_table[i];

		if (e->state != UAF_EMPTY && addr >= e->base && addr < e->base + e->len) {
			char what[160];
			const char *kind = uaf_fault_kind(e, addr);
#if defined(__x86_64__)
			int write_fault = !!(((ucontext_t *)uctx)->uc_mcontext.gregs[REG_ERR] & 2);
#else
			int write_fault = -1;
#endif
			snprintf(what, sizeof(what), "%s, %s", kind,
			         write_fault < 0 ? "access" : write_fault ? "write" : "read");
			pool__report(what, e->pool, (const void *)e->obj, pc, 0, 0);
		}
	}
	/* not ours: put the previous handler back and let the fault happen again */
	sigaction(sig, &uaf_old_segv, NULL);
}

static const void *uaf_free_caller_of(const void *obj)
{
	unsigned int i;

	for (i = 0; uaf_table && i < UAF_TABLE_SIZE; i++)
		if (uaf_table[i].state != UAF_EMPTY && uaf_table[i].obj == (uintptr_t)obj)
			return uaf_table[i].free_caller;
	return NULL;
}

/* under uaf_lock: the tables, mapped lazily, and the fault handler */
static int uaf_setup(void)
{
	struct sigaction sa;

	if (uaf_table)
		return 0;
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
	if (!uaf_handler_installed) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = uaf_segv;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, &uaf_old_segv) == 0)
			uaf_handler_installed = 1;
	}
	return 0;
}

static void uaf_geometry(const struct pool_head *pool, size_t *data_len, size_t *map_len)
{
	size_t page = pool__os_page_size();
	size_t need = sizeof(uint64_t) * 2 + pool->ro.size + pool->align;

	*data_len = (need + page - 1) & ~(page - 1);
	*map_len = *data_len + page;
}

void *pool__uaf_alloc(struct pool_head *pool)
{
	size_t data_len, map_len, i;
	unsigned char *base, *obj, *guard;
	struct uaf_entry *e = NULL;
	unsigned int h;

	if (!pool__limit_reserve(pool))
		return NULL;
	atomic_store(&pool->ever_allocated, 1);
	uaf_geometry(pool, &data_len, &map_len);
	base = pool__os_map(map_len);
	if (!base)
		goto fail;
	/* a fresh mapping may reuse addresses whose ASan shadow still says "poisoned by user" */
	pool__san_access(base, data_len);
	guard = base + data_len;
	if (pool__os_protect(guard, map_len - data_len, 0) < 0)
		goto fail_unmap;
	obj = (unsigned char *)((uintptr_t)(guard - pool->ro.size) & ~(uintptr_t)(pool->align - 1));
	write_word(obj, (size_t)-8, UAF_CANARY_KEY ^ (uint64_t)(uintptr_t)obj);
	for (i = 0; obj + pool->ro.size + i < guard; i++)
		obj[pool->ro.size + i] = UAF_SLACK_BYTE;

	pthread_mutex_lock(&uaf_lock);
	if (uaf_setup() == 0) {
		h = uaf_hash((uintptr_t)obj);
		for (i = 0; i < UAF_TABLE_SIZE / 2; i++) {
			struct uaf_entry *c = &uaf_table[(h + i) & (UAF_TABLE_SIZE - 1)];

			if (c->state == UAF_EMPTY) {
				e = c;
				break;
			}
		}
	}
	if (e) {
		e->obj = (uintptr_t)obj;
		e->base = (uintptr_t)base;
		e->len = map_len;
		e->pool = pool;
		e->alloc_caller = e->free_caller = NULL;
		e->state = UAF_LIVE;
	}
	pthread_mutex_unlock(&uaf_lock);
	if (!e)
		goto fail_unmap;
	pool__count_os_alloc(pool, obj);
	return obj;
fail_unmap:
	pool__os_unmap(base, map_len);
fail:
	pool__limit_unreserve(pool);
	return NULL;
}

static void uaf_on_alloc(struct pool_head *pool, void *obj, const void *caller)
{
	struct uaf_entry *e;

	pthread_mutex_lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e) {
		e->alloc_caller = caller;
		e->free_caller = NULL;
	}
	pthread_mutex_unlock(&uaf_lock);
	if (pool->layout & POOL_DBG_CALLER)
		caller_count(pool, caller, 1);
}

static void uaf_check_free(struct pool_head *pool, void *obj, const void *caller)
{
	struct uaf_entry *e, copy;
	unsigned char *o = obj;
	uintptr_t guard;
	size_t i;

	pthread_mutex_lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e)
		copy = *e;
	pthread_mutex_unlock(&uaf_lock);
	if (!e)
		pool__report("free of an address that is not an object of any pool under uaf (never "
		             "allocated, or freed long ago)", pool, NULL, caller, 0, 0);
	if (copy.state == UAF_QUARANTINED)
		pool__report("double free (the object is in the use-after-free quarantine)", pool,
		             obj, caller, 0, 0);
	if (copy.pool != pool)
		pool__report("free into the wrong pool (the object belongs to another pool)", pool,
		             obj, caller, 0, 0);
	if (read_word(obj, (size_t)-8) != (UAF_CANARY_KEY ^ (uint64_t)(uintptr_t)obj))
		pool__report("underflow: the canary before the object was overwritten", pool, obj,
		             caller, 0, 0);
	guard = copy.base + copy.len - pool__os_page_size();
	for (i = pool->ro.size; (uintptr_t)(o + i) < guard; i++)
		if (o[i] != UAF_SLACK_BYTE)
			pool__report("overflow past the end of the object (slack before the guard page "
			             "overwritten)", pool, obj, caller, 0, 0);
	if (pool->layout & POOL_DBG_CALLER)
		caller_count(pool, copy.alloc_caller, -1);
	pthread_mutex_lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e)
		e->free_caller = caller;
	pthread_mutex_unlock(&uaf_lock);
}

/* under uaf_lock: unmap the oldest quarantined objects until `need` more bytes fit */
static void uaf_quarantine_trim(size_t need)
{
	while (uaf_ring_count &&
	       (uaf_quarantined_bytes + need > UAF_QUARANTINE_BYTES ||
	        uaf_ring_count == UAF_RING_SIZE)) {
		unsigned int tail = (uaf_ring_head - uaf_ring_count) & (UAF_RING_SIZE - 1);
		uintptr_t obj = uaf_ring[tail];
		struct uaf_entry *e;

		uaf_ring_count--;
		if (!obj)
			continue;
		e = uaf_find(obj);
		if (e && e->state == UAF_QUARANTINED) {
			uaf_quarantined_bytes -= e->len;
			pool__os_unmap((void *)e->base, e->len);
			uaf_remove(e);
		}
	}
}

void pool__uaf_quarantine(struct pool_head *pool, void *obj, const void *caller)
{
	struct uaf_entry *e;

	(void)pool;
	pthread_mutex_lock(&uaf_lock);
	e = uaf_find((uintptr_t)obj);
	if (e && e->state == UAF_LIVE) {
		if (caller)
			e->free_caller = caller;
		pool__os_protect((void *)e->base, e->len, 0);
		uaf_quarantine_trim(e->len);
		e = uaf_find((uintptr_t)obj);   /* trimming may have moved it */
		e->state = UAF_QUARANTINED;
		uaf_quarantined_bytes += e->len;
		uaf_ring[uaf_ring_head] = (uintptr_t)obj;
		uaf_ring_head = (uaf_ring_head + 1) & (UAF_RING_SIZE - 1);
		uaf_ring_count++;
	}
	pthread_mutex_unlock(&uaf_lock);
}

void pool__uaf_free(struct pool_head *pool, void *obj, const void *caller)
{
	pool__count_os_release(pool, obj);
	pool__uaf_quarantine(pool, obj, caller);
}

void pool__uaf_release(struct pool_head *pool)
{
	unsigned int i, n;

	pthread_mutex_lock(&uaf_lock);
	for (n = 0; uaf_ring && n < uaf_ring_count; n++) {
		i = (uaf_ring_head - 1 - n) & (UAF_RING_SIZE - 1);
		if (uaf_ring[i]) {
			struct uaf_entry *e = uaf_find(uaf_ring[i]);

			if (e && e->pool == pool) {
				uaf_quarantined_bytes -= e->len;
				pool__os_unmap((void *)e->base, e->len);
				uaf_remove(e);
				uaf_ring[i] = 0;
			}
		}
	}
	pthread_mutex_unlock(&uaf_lock);
}

/* fork(): the uaf table lock must not be held by a thread that will not exist in the child. */
void pool__debug_fork_prepare(void)
{
	pthread_mutex_lock(&uaf_lock);
}

void pool__debug_fork_after(void)
{
	pthread_mutex_unlock(&uaf_lock);
}

/* ------------------------------------------------------------------------------------------ */
/* Start-up                                                                                   */
/* ------------------------------------------------------------------------------------------ */

void pool__debug_init(void)
{
	const char *env = getenv("POOL_DEBUG");
	const char *seed = getenv("POOL_FAIL_SEED");
	char *err = NULL;

#ifdef POOL_HAVE_ASAN
	pool_debugging |= POOL_DBG_SANITIZER;
#endif
	if (ON_VALGRIND())
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
	if (env && pool_parse_debugging(env, &err) < 0) {
		fprintf(stderr, "libpool: ignoring POOL_DEBUG='%s': %s\n", env,
		        err ? err : "out of memory");
		free(err);
	}
}
