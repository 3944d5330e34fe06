/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Debugging flags: the -dM parser and its errors, the help, and every check acting — each
 * detection as a death test that checks both the signal and the words of the report.
 *
 * Check runs every test in a fresh child, where no pool exists yet, so tests may set layout
 * options first.
 *
 * Public-API test: it includes only <pool/pool.h>, as a program debugging its use of the
 * library does; the reports name this program's functions through dladdr() (linked with
 * -rdynamic). The caller table's internals are check_tier.c's.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <pool/pool.h>

#include "testutil.h"

static unsigned int user_flags(void)
{
	return pool_debugging & ~POOL_DBG_SANITIZER;
}

/* Global, not static, so that dladdr() names them in the reports the tests read. */
void wrong_pool_child(void *arg);
void overflow_child(void *arg);
void double_free_child(void *arg);
void integrity_child(void *arg);
void integrity_evict_child(void *arg);
void integrity_first_word_child(void *arg);
void integrity_far_child(void *arg);
void backup_child(void *arg);
void uaf_read_child(void *arg);
void uaf_write_child(void *arg);
void uaf_guard_child(void *arg);
void uaf_canary_child(void *arg);
void uaf_double_child(void *arg);
void uaf_wrong_pool_child(void *arg);
void uaf_no_handler_child(void *arg);
void uaf_foreign_child(void *arg);
void uaf_interior_child(void *arg);
void asan_child(void *arg);

/* ------------------------------------------------------------------------------------------ */
/* Parser                                                                                     */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_parse_words)
{
	ck_assert_int_eq(pool_parse_debugging("uaf", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_UAF | POOL_DBG_NO_CACHE);
	ck_assert_int_eq(pool_parse_debugging("no-uaf,uaf,cache", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_UAF);      /* left to right: cache re-enabled */
	ck_assert_int_eq(pool_parse_debugging("no-uaf,tag,caller,integrity,cold-first", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_TAG | POOL_DBG_CALLER | POOL_DBG_INTEGRITY |
	                                POOL_DBG_COLD_FIRST);
	ck_assert_int_eq(pool_parse_debugging("no-tag,no-caller,no-integrity,hot-first,no-merge,"
	                                      "no-global,backup", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_NO_MERGE | POOL_DBG_NO_GLOBAL | POOL_DBG_BACKUP);
	ck_assert_int_eq(pool_parse_debugging("merge,global,no-backup,fail=50", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_FAIL);
	ck_assert_int_eq(pool_parse_debugging("no-fail", NULL), 0);
	ck_assert_uint_eq(user_flags(), 0);
}
END_TEST

START_TEST(test_parse_poison_number)
{
	ck_assert_int_eq(pool_parse_debugging("", NULL), 0);          /* -dM alone */
	ck_assert_uint_eq(user_flags(), POOL_DBG_POISON);
	ck_assert_uint_eq(pool_debugging_poison_byte(), 0x50);
	ck_assert_int_eq(pool_parse_debugging("0x41", NULL), 0);
	ck_assert_uint_eq(pool_debugging_poison_byte(), 0x41);
	ck_assert_int_eq(pool_parse_debugging("-1", NULL), 0);        /* negative: off */
	ck_assert_uint_eq(user_flags(), 0);
	ck_assert_int_eq(pool_parse_debugging("7,tag", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_POISON | POOL_DBG_TAG);
	ck_assert_uint_eq(pool_debugging_poison_byte(), 7);
	ck_assert_int_eq(pool_parse_debugging("poison=0xAA", NULL), 0);
	ck_assert_uint_eq(pool_debugging_poison_byte(), 0xAA);
}
END_TEST

/* Each bad string fails with its word in the message and leaves every flag as it was. */
START_TEST(test_parse_errors)
{
	static const struct {
		const char *str;
		const char *words;
	} bad[] = {
		{ "bogus", "unknown pool debugging option 'bogus'" },
		{ "tag,bogus", "'bogus'" },
		{ "tag,,caller", "empty" },
		{ "uaf,", "empty" },
		{ "fail=101", "'fail=101'" },
		{ "fail=x", "'fail=x'" },
		{ "fail=", "'fail='" },
		{ "poison=256", "'poison=256'" },
		{ "no-tag=1", "'no-tag=1'" },
		{ "tag=1", "takes no value" },
		{ "300", "invalid poison byte '300'" },
		{ "12abc,tag", "'12abc'" },
		{ "help=1", "'help=1'" },
		{ "uaf,malloc", "'uaf' and 'malloc' exclude each other" },
		{ "malloc=1", "takes no value" },
	};
	unsigned int before, i;
	unsigned char pbyte;

	ck_assert_int_eq(pool_parse_debugging("integrity,0", NULL), -1); /* number only first */
	ck_assert_int_eq(pool_parse_debugging("integrity,poison=0x33", NULL), 0);
	before = pool_debugging;
	pbyte = (unsigned char)pool_debugging_poison_byte();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *err = (char *)1;

		errno = 0;
		ck_assert_int_eq(pool_parse_debugging(bad[i].str, &err), -1);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_ptr_nonnull(err);
		ck_assert_msg(strstr(err, bad[i].words) != NULL, "'%s': message '%s' lacks '%s'",
		              bad[i].str, err, bad[i].words);
		free(err);
		ck_assert_uint_eq(pool_debugging, before);
		ck_assert_uint_eq(pool_debugging_poison_byte(), pbyte);
	}
	ck_assert_int_eq(pool_parse_debugging(NULL, NULL), -1);
	ck_assert_uint_eq(pool_debugging, before);
}
END_TEST

START_TEST(test_parse_layout_frozen)
{
	char *err = NULL;

	ck_assert_int_eq(pool_parse_debugging("tag", NULL), 0);
	ck_assert_ptr_nonnull(pool_create("frozen", 64, 0));
	ck_assert_int_eq(pool_parse_debugging("integrity,no-tag", &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "'no-tag'"));
	ck_assert_ptr_nonnull(strstr(err, "layout"));
	free(err);
	ck_assert_uint_eq(user_flags(), POOL_DBG_TAG);         /* integrity was not applied */
	ck_assert_int_eq(pool_parse_debugging("uaf", &err), -1);
	free(err);
	ck_assert_int_eq(pool_parse_debugging("malloc", &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "'malloc' changes the object layout"));
	free(err);
	ck_assert_int_eq(pool_parse_debugging("tag,integrity,poison,fail=1,no-fail,cold-first,"
	                                      "no-cache,cache,no-global,global,no-merge", NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_TAG | POOL_DBG_INTEGRITY | POOL_DBG_POISON |
	                                POOL_DBG_COLD_FIRST | POOL_DBG_NO_MERGE);
}
END_TEST

START_TEST(test_help_and_show)
{
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(pool_parse_debugging("tag", NULL), 0);
	f = open_memstream(&buf, &len);
	pool_debugging_help(f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "Examples"));
	ck_assert_ptr_nonnull(strstr(buf, "set"));
	/* tag is on: its set side is starred; integrity is off: its clear side is */
	line = strstr(buf, "*tag ");
	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_nonnull(strstr(line, " no-tag "));
	line = strstr(buf, " integrity ");
	ck_assert_msg(line != NULL && strstr(line, "*no-integrity") == line + 17, "%s", buf);
	free(buf);

	/* show prints what the parser takes back */
	buf = NULL;
	ck_assert_int_eq(pool_parse_debugging("fail=7,poison=0x21", NULL), 0);
	f = open_memstream(&buf, &len);
	pool_debugging_show(f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "fail=7"));
	ck_assert_ptr_nonnull(strstr(buf, "poison=0x21"));
	ck_assert_ptr_nonnull(strstr(buf, "tag"));
	buf[strcspn(buf, "\n")] = 0;
	ck_assert_int_eq(pool_parse_debugging("-1,no-fail,no-tag", NULL), 0);
	ck_assert_int_eq(pool_parse_debugging(buf, NULL), 0);
	ck_assert_uint_eq(user_flags(), POOL_DBG_FAIL | POOL_DBG_POISON | POOL_DBG_TAG);
	free(buf);
	ck_assert_int_eq(pool_parse_debugging("help", NULL), 1);
	ck_assert_uint_eq(user_flags(), POOL_DBG_FAIL | POOL_DBG_POISON | POOL_DBG_TAG);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Detections (death tests)                                                                   */
/* ------------------------------------------------------------------------------------------ */


static void set_flags(const char *s)
{
	char *err = NULL;

	if (pool_parse_debugging(s, &err) != 0) {
		fprintf(stderr, "setup failed: %s\n", err);
		_exit(99);
	}
}

/*
 * The report's line `<label>: <fn>+0x<offset> (check_debug.c:<line>)`: the function named with
 * its file and a line within [first, last] (libdw reads this program's line table). Not under
 * the fault handler, which names with dladdr(3) only.
 */
static void expect_named(const char *out, const char *label, const char *fn, int first,
                         int last)
{
	char want[128];
	const char *at, *file;
	int line;

	snprintf(want, sizeof(want), "%s: %s+0x", label, fn);
	at = strstr(out, want);
	ck_assert_msg(at != NULL, "no '%s' in the report:\n%s", want, out);
	file = strstr(at, " (check_debug.c:");
	ck_assert_msg(file && file < strchr(at, '\n'), "'%s' without its file:\n%s", want, out);
	ck_assert_int_eq(sscanf(file, " (check_debug.c:%d)", &line), 1);
	ck_assert_msg(line >= first && line <= last, "%s at line %d, not within %d-%d:\n%s", fn,
	              line, first, last, out);
}

enum { WRONG_POOL_CHILD_FIRST = __LINE__ };
void wrong_pool_child(void *arg)
{
	struct pool_head *a, *b;
	void *o;

	(void)arg;
	set_flags("tag");
	a = pool_create("conn", 64, 0);
	b = pool_create("stream", 64, 0);
	o = pool_alloc(a);
	pool_free(b, o);
}
enum { WRONG_POOL_CHILD_LAST = __LINE__ };

START_TEST(test_tag_wrong_pool)
{
	static const char *const w[] = { "libpool: FATAL: free into the wrong pool",
	                                 "in pool 'stream' (64 bytes)", "the found tag is that of "
	                                 "pool 'conn'", "caller: wrong_pool_child+", "expected tag",
	                                 "object start", NULL };
	struct death d;

	expect_death(wrong_pool_child, NULL, SIGABRT, w);
	/* the caller by function, file and line, not a module and an offset */
	run_child(wrong_pool_child, NULL, &d);
	expect_named(d.out, "caller", "wrong_pool_child", WRONG_POOL_CHILD_FIRST,
	             WRONG_POOL_CHILD_LAST);
}
END_TEST

/* arg: the object size (24, or 8: the smallest, whose tag follows it too) */
void overflow_child(void *arg)
{
	size_t size = (size_t)(uintptr_t)arg;
	struct pool_head *p;
	unsigned char *o;

	set_flags("tag");
	p = pool_create("buf", size, 0);
	o = pool_alloc(p);
	memset(o, 'x', size + 1);                /* one byte too many */
	pool_free(p, o);
}

START_TEST(test_tag_overflow_one_byte)
{
	static const size_t sizes[] = { 24, 8 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *arg = (void *)(uintptr_t)sizes[i];
#if defined(__SANITIZE_ADDRESS__)
		/* in an ASan build the bytes past the object are poisoned: ASan reports the write */
		struct death d;

		run_child(overflow_child, arg, &d);
		ck_assert_msg(!(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0), "%s", d.out);
		ck_assert_msg(strstr(d.out, "AddressSanitizer: use-after-poison") != NULL, "%s",
		              d.out);
#else
		char name[32];
		const char *const w[] = { "tag mismatch: overflow past the end of the object", name,
		                          "around the end", "78 78", NULL };

		snprintf(name, sizeof(name), "pool 'buf' (%zu bytes)", sizes[i]);
		expect_death(overflow_child, arg, SIGABRT, w);
#endif
	}
}
END_TEST

enum { DOUBLE_FREE_CHILD_FIRST = __LINE__ };
void double_free_child(void *arg)
{
	struct pool_head *p;
	void *o;

	(void)arg;
	set_flags("tag,caller");
	p = pool_create("task", 96, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	pool_free(p, o);
}
enum { DOUBLE_FREE_CHILD_LAST = __LINE__ };

START_TEST(test_tag_double_free)
{
	static const char *const w[] = { "double free", "pool 'task' (96 bytes)",
	                                 "already freed by: double_free_child+",
	                                 "last caller recorded in the object: double_free_child+",
	                                 NULL };
	struct death d;

	expect_death(double_free_child, NULL, SIGABRT, w);
	/* every caller of the report by function, file and line */
	run_child(double_free_child, NULL, &d);
	expect_named(d.out, "caller", "double_free_child", DOUBLE_FREE_CHILD_FIRST,
	             DOUBLE_FREE_CHILD_LAST);
	expect_named(d.out, "already freed by", "double_free_child", DOUBLE_FREE_CHILD_FIRST,
	             DOUBLE_FREE_CHILD_LAST);
	expect_named(d.out, "last caller recorded in the object", "double_free_child",
	             DOUBLE_FREE_CHILD_FIRST, DOUBLE_FREE_CHILD_LAST);
}
END_TEST

void integrity_child(void *arg)
{
	struct pool_head *p;
	unsigned char *o;

	(void)arg;
	set_flags("integrity");
	p = pool_create("sess", 128, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	o[40] ^= 0xff;          /* write after free into a cached object: a byte of the pattern */
	pool_alloc(p);
}

START_TEST(test_integrity_write_after_free)
{
	/* the byte written, the rows of 16 around it (16..63), and the pattern it overwrote */
	static const char *const w[] = { "write after free detected by the integrity check",
	                                 "pool 'sess' (128 bytes)", "caller: integrity_child+",
	                                 "first changed byte at offset 40 of 128: found 0x",
	                                 ", expected 0x", " (the integrity pattern)\n",
	                                 "bytes 16 to 63 of the object:\n",
	                                 "\nlibpool:     offset 32   found    ",
	                                 "\nlibpool:                 expected ", NULL };
	test_expect_write_after_free(integrity_child, w);
}
END_TEST

/* arg: the offset written after the free, in an object of 4096 bytes */
void integrity_far_child(void *arg)
{
	size_t at = (size_t)(uintptr_t)arg;
	struct pool_head *p;
	unsigned char *o;

	set_flags("integrity");
	p = pool_create("big", 4096, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	o[at] ^= 0xff;
	pool_alloc(p);
}

START_TEST(test_integrity_names_the_offset)
{
	static const size_t at[] = { 3001, 4095, 7 };
	static const char *const rows[] = { "bytes 2976 to 3023 of the object:\n"
	                                    "libpool:     offset 2976 found    ",
	                                    "bytes 4064 to 4095 of the object:\n"
	                                    "libpool:     offset 4064 found    ",
	                                    "bytes 0 to 47 of the object:\n"
	                                    "libpool:     offset 0    found    " };
	unsigned int i;

	/* wherever the write lies: far in the object, its last byte, its first word */
	for (i = 0; i < 3; i++) {
		char first[96];
		const char *const w[] = { "write after free detected by the integrity check",
		                          first, rows[i], NULL };

		snprintf(first, sizeof(first), "first changed byte at offset %zu of 4096: found "
		         "0x", at[i]);
		test_expect_write_after_free_arg(integrity_far_child, (void *)(uintptr_t)at[i], w);
	}
}
END_TEST

void integrity_first_word_child(void *arg)
{
	struct pool_head *p;
	unsigned char *o;

	(void)arg;
	set_flags("integrity");
	p = pool_create("sess", 128, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	o[0] ^= 0xff;          /* the first word too: a free object holds no link to skip */
	pool_alloc(p);
}

START_TEST(test_integrity_first_word)
{
	static const char *const w[] = { "write after free detected by the integrity check",
	                                 "pool 'sess' (128 bytes)", NULL };
	test_expect_write_after_free(integrity_first_word_child, w);
}
END_TEST

void integrity_evict_child(void *arg)
{
	struct pool_head *p;
	unsigned char *o;

	(void)arg;
	set_flags("integrity");
	p = pool_create("sess", 128, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	o[100] ^= 0xff;
	pool_thread_flush();                     /* checked when evicted too */
}

START_TEST(test_integrity_on_eviction)
{
	static const char *const w[] = { "write after free detected by the integrity check",
	                                 NULL };
	test_expect_write_after_free(integrity_evict_child, w);
}
END_TEST

void backup_child(void *arg)
{
	struct pool_head *p;
	unsigned char *o;

	(void)arg;
	set_flags("backup");
	p = pool_create("bk", 64, 0);
	o = pool_alloc(p);
	memset(o, 3, 64);
	pool_free(p, o);
	o[20] = 4;
	pool_alloc(p);
}

START_TEST(test_backup_write_after_free)
{
	/* what changed against what the object held when freed (3 everywhere) */
	static const char *const w[] = { "write after free detected by the backup copy",
	                                 "pool 'bk'", "first changed byte at offset 20 of 64: found "
	                                 "0x04, expected 0x03 (the backup copy: what the object "
	                                 "held when it was freed)\n",
	                                 "bytes 0 to 47 of the object:\n",
	                                 "libpool:     offset 16   found    03 03 03 03 04 03 ",
	                                 "\nlibpool:                 expected 03 03 03 03 03 03 ",
	                                 NULL };
	test_expect_write_after_free(backup_child, w);
}
END_TEST

void uaf_read_child(void *arg)
{
	struct pool_head *p;
	volatile unsigned char *o;
	unsigned char c;

	(void)arg;
	set_flags("uaf");
	p = pool_create("req", 200, 0);
	o = pool_alloc(p);
	o[0] = 1;
	pool_free(p, (void *)o);
	c = o[10];                               /* read after free */
	(void)c;
}

void uaf_write_child(void *arg)
{
	struct pool_head *p;
	volatile unsigned char *o;

	(void)arg;
	set_flags("uaf");
	p = pool_create("req", 200, 0);
	o = pool_alloc(p);
	pool_free(p, (void *)o);
	o[10] = 1;                               /* write after free */
}

START_TEST(test_uaf_read_and_write_after_free)
{
	static const char *const r[] = { "use after free: access to a freed object",
	                                 "read", "pool 'req' (200 bytes)", "freed by: uaf_read_child+",
	                                 NULL };
	static const char *const w[] = { "use after free", "write", "pool 'req'",
	                                 "caller: uaf_write_child+", NULL };
	expect_death(uaf_read_child, NULL, SIGABRT, r);
	expect_death(uaf_write_child, NULL, SIGABRT, w);
}
END_TEST

void uaf_guard_child(void *arg)
{
	struct pool_head *p;
	volatile unsigned char *o;

	(void)arg;
	set_flags("uaf");
	p = pool_create("guarded", 4096, 0);
	o = pool_alloc(p);
	o[4096] = 1;                             /* first byte past the object: the guard page */
}

START_TEST(test_uaf_guard_page)
{
	static const char *const w[] = { "overflow past the end of the object into its guard page",
	                                 "write", "pool 'guarded' (4096 bytes)", NULL };
	expect_death(uaf_guard_child, NULL, SIGABRT, w);
}
END_TEST

void uaf_canary_child(void *arg)
{
	struct pool_head *p;
	unsigned char *o;

	(void)arg;
	set_flags("uaf");
	p = pool_create("under", 64, 0);
	o = pool_alloc(p);
	o[-1] = 0;                               /* underflow into the canary */
	pool_free(p, o);
}

START_TEST(test_uaf_underflow)
{
	static const char *const w[] = { "underflow: the canary before the object was overwritten",
	                                 "pool 'under'", "caller: uaf_canary_child+", NULL };
	expect_death(uaf_canary_child, NULL, SIGABRT, w);
}
END_TEST

void uaf_double_child(void *arg)
{
	struct pool_head *p;
	void *o;

	(void)arg;
	set_flags("uaf");
	p = pool_create("twice", 64, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	pool_free(p, o);
}

START_TEST(test_uaf_double_free)
{
	static const char *const w[] = { "double free (the object is in the use-after-free "
	                                 "quarantine)", "pool 'twice'", NULL };
	expect_death(uaf_double_child, NULL, SIGABRT, w);
}
END_TEST

void uaf_wrong_pool_child(void *arg)
{
	struct pool_head *a, *b;
	void *o;

	(void)arg;
	set_flags("uaf");
	a = pool_create("ua", 64, 0);
	b = pool_create("ub", 64, 0);
	o = pool_alloc(a);
	pool_free(b, o);
}

START_TEST(test_uaf_wrong_pool)
{
	static const char *const w[] = { "free into the wrong pool", "pool 'ub'", NULL };
	expect_death(uaf_wrong_pool_child, NULL, SIGABRT, w);
}
END_TEST

/* A free of `bad` under uaf: the child says which address it passes, then frees it. */
static void uaf_free_unknown(void *bad, struct pool_head *p)
{
	fprintf(stderr, "child frees %p\n", bad);
	fflush(stderr);
	pool_free(p, bad);
}

static _Alignas(64) char foreign_buffer[256];

void uaf_foreign_child(void *arg)
{
	struct pool_head *p;

	(void)arg;
	set_flags("uaf");
	p = pool_create("foreign", 64, 0);
	uaf_free_unknown(foreign_buffer + 64, p);
}

void uaf_interior_child(void *arg)
{
	struct pool_head *p;
	char *o;

	(void)arg;
	set_flags("uaf");
	p = pool_create("interior", 64, 0);
	o = pool_alloc(p);
	uaf_free_unknown(o + 16, p);
}

/*
 * A pointer the uaf backend does not know (foreign memory, or inside an object): the report
 * names the address that was passed (it printed "object 0x0" before).
 */
START_TEST(test_uaf_unknown_pointer_names_it)
{
	static const char *const w[] = { "free of an address that is not an object of any pool "
	                                 "under uaf", NULL };
	void (*const children[2])(void *) = { uaf_foreign_child, uaf_interior_child };
	int i;

	for (i = 0; i < 2; i++) {
		char want[64];
		const char *at;
		struct death d;
		void *bad = NULL;

		run_child(children[i], NULL, &d);
		ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == SIGABRT,
		              "status 0x%x; stderr:\n%s", d.status, d.out);
		ck_assert_msg(strstr(d.out, w[0]), "%s", d.out);
		at = strstr(d.out, "child frees ");
		ck_assert_msg(at && sscanf(at, "child frees %p", &bad) == 1 && bad, "%s", d.out);
		snprintf(want, sizeof(want), "object %p\n", bad);
		ck_assert_msg(strstr(d.out, want), "report lacks '%s'; stderr:\n%s", want, d.out);
		ck_assert_msg(!strstr(d.out, "object 0x0\n"), "%s", d.out);
	}
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Behaviour of the run-time options                                                          */
/* ------------------------------------------------------------------------------------------ */

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* (ThreadSanitizer keeps the handlers a program installs to itself: no sigaction() call) */
#if defined(TEST_AUDIT_ARCH) && !TEST_TSAN
/*
 * A sandbox that refuses sigaction(SIGSEGV): a seccomp filter (seccomp(2), the kernel's
 * Documentation/userspace-api/seccomp_filter.rst) that answers rt_sigaction(SIGSEGV, ...) with
 * EPERM and lets every other call through. 0, or -1 with errno set.
 */
static int deny_segv_handlers(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigaction, 0, 3),
		/* the signal number: the low word of args[0] (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGSEGV, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

void uaf_no_handler_child(void *arg)
{
	struct pool_head *a, *b;
	void *o;

	(void)arg;
	if (deny_segv_handlers() < 0) {
		fprintf(stderr, "seccomp filter refused: %s\n", strerror(errno));
		_exit(3);
	}
	set_flags("uaf");
	a = pool_create("sandboxed", 64, 0);
	b = pool_create("sandboxed-too", 128, 0);
	if (!a || !b)
		_exit(4);
	/* the pools work: only the report of a fault is lost */
	o = pool_alloc(a);
	if (!o)
		_exit(5);
	memset(o, 1, 64);
	pool_free(a, o);
}

/* A uaf pool whose fault handler cannot be installed says so, once, and works. */
START_TEST(test_uaf_without_fault_handler)
{
	struct death d;

	run_child(uaf_no_handler_child, NULL, &d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
	              "status 0x%x; stderr:\n%s", d.status, d.out);
	ck_assert_uint_eq(test_count(d.out, "libpool: uaf: cannot install the SIGSEGV handler "
	                             "(sigaction: Operation not permitted)"), 1);
	ck_assert_ptr_nonnull(strstr(d.out, "without libpool's report"));
}
END_TEST
#endif

START_TEST(test_uaf_counts_and_quarantine)
{
	struct pool_head *p;
	void *o[100];
	int i;

	ck_assert_int_eq(pool_parse_debugging("uaf", NULL), 0);
	p = pool_create("uafc", 1000, 0);
	for (i = 0; i < 100; i++) {
		o[i] = pool_alloc(p);
		ck_assert_ptr_nonnull(o[i]);
		/* the object ends where its guard page starts */
		ck_assert_uint_le((uintptr_t)getpagesize() -
		                  ((uintptr_t)o[i] + 1000) % (uintptr_t)getpagesize(), 16);
		memset(o[i], 1, 1000);
	}
	ck_assert_uint_eq(test_stats(p).allocated, 100);
	ck_assert_uint_eq(test_stats(p).used, 100);
	for (i = 0; i < 100; i++)
		pool_free(p, o[i]);
	ck_assert_uint_eq(test_stats(p).allocated, 0);
	ck_assert_uint_eq(test_stats(p).used, 0);
	ck_assert_uint_eq(test_stats(p).cached, 0);             /* uaf implies no-cache */
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_fail_half)
{
	struct pool_head *p;
	unsigned long nulls = 0;
	int i;

	ck_assert_int_eq(pool_parse_debugging("fail=50", NULL), 0);
	p = pool_create("flaky", 64, 0);
	for (i = 0; i < 100000; i++) {
		void *o = pool_alloc(p);

		if (!o)
			nulls++;
		pool_free(p, o);
	}
	ck_assert_uint_gt(nulls, 45000);
	ck_assert_uint_lt(nulls, 55000);
	ck_assert_uint_eq(test_stats(p).failed, nulls);          /* every failure counted */
	ck_assert_uint_le(test_stats(p).allocated, 64);          /* and nothing leaked */
}
END_TEST

START_TEST(test_fail_exempt)
{
	struct pool_head *p;
	int i;

	ck_assert_int_eq(pool_parse_debugging("fail=100", NULL), 0);
	p = pool_create("sturdy", 64, 0);
	ck_assert_ptr_null(pool_alloc(p));
	for (i = 0; i < 10000; i++) {
		void *o = pool_alloc_flags(p, POOL_F_NO_FAIL);

		ck_assert_ptr_nonnull(o);
		pool_free(p, o);
	}
	ck_assert_uint_eq(test_stats(p).failed, 1);
}
END_TEST

START_TEST(test_poison_fill)
{
	struct pool_head *p;
	unsigned char *o;
	int i;

	ck_assert_int_eq(pool_parse_debugging("poison=0xAA", NULL), 0);
	p = pool_create("poisoned", 100, 0);
	o = pool_alloc(p);
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(o[i], 0xAA);
	memset(o, 0, 100);
	pool_free(p, o);
	o = pool_alloc(p);                       /* reused objects are poisoned again */
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(o[i], 0xAA);
	pool_free(p, o);
	o = pool_zalloc(p);                      /* zeroing wins */
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(o[i], 0);
	memset(o, 0x11, 100);
	pool_free(p, o);
	o = pool_alloc_flags(p, POOL_F_NO_POISON);
	ck_assert_uint_eq(o[50], 0x11);          /* exempt: left as it was */
}
END_TEST

START_TEST(test_cold_first)
{
	struct pool_head *p;
	void *o[POOL_CLUSTER_MAX];
	size_t i, m;

	ck_assert_int_eq(pool_parse_debugging("cold-first", NULL), 0);
	p = pool_create("cold", 64, 0);
	/* what the first refill took from the slab tier, handed out whole */
	m = test_slab_refill(p);
	for (i = 0; i < m; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 4; i++)
		pool_free(p, o[i]);
	for (i = 0; i < 4; i++)
		ck_assert_ptr_eq(pool_alloc(p), o[i]);   /* oldest freed first */
	ck_assert_int_eq(pool_parse_debugging("hot-first", NULL), 0);
	for (i = 0; i < 4; i++)
		pool_free(p, o[i]);
	ck_assert_ptr_eq(pool_alloc(p), o[3]);
}
END_TEST

/*
 * -dMmalloc: each object a block of the C library's malloc(), of exactly the pool's layout (24
 * bytes here: no rounding to the alignment, no 16-byte minimum), never cached, never in a shared
 * list; the counters, the limit and the dump work as for any pool; pools merge only at the same
 * size, so that no creator's objects are larger than it asked; alignments above malloc's come
 * from posix_memalign(). It is a layout option: refused once a pool exists, and with `uaf`.
 */
START_TEST(test_malloc_layout)
{
	struct pool_head *p, *same, *other, *al;
	char *buf = NULL;
	size_t len = 0;
	void *o[100];
	FILE *f;
	int i;

	ck_assert_int_eq(pool_parse_debugging("malloc", NULL), 0);
	ck_assert(pool_debugging & POOL_DBG_MALLOC);
	p = pool_create("mal", 24, POOL_F_SHARED);
	same = pool_create("mal-same", 20, POOL_F_SHARED);   /* 24 once rounded: merges */
	other = pool_create("mal-other", 32, POOL_F_SHARED); /* within 16 bytes: does not */
	ck_assert_ptr_eq(same, p);
	ck_assert_ptr_ne(other, p);
	ck_assert_uint_eq(test_stats(p).stride, 24);
	for (i = 0; i < 100; i++) {
		o[i] = pool_alloc(p);
		ck_assert_ptr_nonnull(o[i]);
		memset(o[i], 0x5a, 24);
	}
	for (i = 0; i < 50; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).allocated, 50);
	ck_assert_uint_eq(test_stats(p).used, 50);
	ck_assert_uint_eq(test_stats(p).cached, 0);
	ck_assert_uint_eq(test_stats(p).shared_free, 0);
	ck_assert_uint_eq(test_stats(p).os_allocs, 100);
	ck_assert_uint_eq(test_stats(p).os_releases, 50);
	ck_assert_int_eq(pool_set_limit(p, 50), 0);
	errno = 0;
	ck_assert_ptr_null(pool_alloc(p));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_uint_eq(test_stats(p).failed, 1);
	for (i = 50; i < 100; i++)
		pool_free(p, o[i]);
	ck_assert_uint_eq(test_stats(p).allocated, 0);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(pool_dump(f, "match mal"), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "  - Pool mal (24 bytes/16) : 0 allocated (0 bytes), 0 used") !=
	              NULL, "%s", buf);
	free(buf);
	al = pool_create_aligned("mal-al", 100, 256, 0);
	for (i = 0; i < 8; i++) {
		o[i] = pool_alloc(al);
		ck_assert_uint_eq((uintptr_t)o[i] % 256, 0);
	}
	for (i = 0; i < 8; i++)
		pool_free(al, o[i]);
	ck_assert_int_eq(pool_parse_debugging("no-malloc", NULL), -1);
	ck_assert_int_eq(pool_destroy(same), 0);
	ck_assert_int_eq(pool_destroy(p), 0);
	ck_assert_int_eq(pool_destroy(other), 0);
	ck_assert_int_eq(pool_destroy(al), 0);
}
END_TEST

START_TEST(test_no_cache_no_global)
{
	struct pool_head *p;
	void *o[32];
	int i;

	ck_assert_int_eq(pool_parse_debugging("no-cache", NULL), 0);
	p = pool_create("nc", 64, 0);
	for (i = 0; i < 32; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);
	ck_assert_uint_eq(test_stats(p).cached, 0);             /* nothing in thread caches */
	ck_assert_uint_eq(test_stats(p).used, 0);
	ck_assert_uint_eq(test_stats(p).allocated, test_stats(p).shared_free);

	ck_assert_int_eq(pool_parse_debugging("cache,no-global", NULL), 0);
	for (i = 0; i < 32; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);
	ck_assert_uint_gt(test_stats(p).cached, 0);
	pool_thread_flush();
	/* the 32 new objects were evicted straight to their slabs; the old ones were not used */
	ck_assert_uint_eq(test_stats(p).shared_free, 32);
	ck_assert_uint_eq(test_stats(p).slab_free, 32);
	ck_assert_uint_eq(test_stats(p).allocated, 64);
	ck_assert_uint_eq(test_stats(p).slab_put_objects, 32);

	/* switching no-cache on flushes what a thread cached before */
	ck_assert_int_eq(pool_parse_debugging("global", NULL), 0);
	for (i = 0; i < 32; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);
	ck_assert_uint_gt(test_stats(p).cached, 0);
	ck_assert_int_eq(pool_parse_debugging("no-cache", NULL), 0);
	pool_free(p, pool_alloc(p));
	ck_assert_uint_eq(test_stats(p).cached, 0);
}
END_TEST

START_TEST(test_integrity_switched_on_late)
{
	struct pool_head *p;
	void *o[64];
	int i;

	p = pool_create("late", 256, 0);
	for (i = 0; i < 64; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 64; i++)
		pool_free(p, o[i]);                  /* cached without a pattern */
	ck_assert_int_eq(pool_parse_debugging("integrity", NULL), 0);
	for (i = 0; i < 64; i++)                 /* no false report */
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	for (i = 0; i < 64; i++)
		pool_free(p, o[i]);
	ck_assert_int_eq(pool_parse_debugging("no-integrity", NULL), 0);
	pool_free(p, pool_alloc(p));
	ck_assert_int_eq(pool_parse_debugging("integrity", NULL), 0);
	for (i = 0; i < 64; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	pool_free_bulk(p, o, 64);
	pool_thread_flush();
	ck_assert_uint_eq(test_stats(p).used, 0);
}
END_TEST

#if defined(__SANITIZE_ADDRESS__)
void asan_child(void *arg)
{
	struct pool_head *p;
	volatile unsigned char *o;

	(void)arg;
	p = pool_create("asan", 64, 0);
	o = pool_alloc(p);
	pool_free(p, (void *)o);                 /* cached, caching stays on */
	o[8] = 1;                                /* write after free */
}

/* The program's function that frees: ASan's stack of the free must name it. */
__attribute__((noinline)) static void malloc_release(struct pool_head *p, void *o)
{
	pool_free(p, o);
	__asm__ volatile("" ::: "memory");
}

static void malloc_overflow_child(void *arg)
{
	struct pool_head *p;
	volatile char *o;

	(void)arg;
	ck_assert_int_eq(pool_parse_debugging("malloc", NULL), 0);
	p = pool_create("mal", 24, 0);
	o = pool_alloc(p);
	o[24] = 1;                               /* one byte past the object */
}

static void malloc_uaf_child(void *arg)
{
	struct pool_head *p;
	volatile char *o;

	(void)arg;
	ck_assert_int_eq(pool_parse_debugging("malloc", NULL), 0);
	p = pool_create("mal", 24, 0);
	o = pool_alloc(p);
	malloc_release(p, (void *)o);
	o[3] = 1;                                /* write after free */
}

/*
 * Under `malloc` the objects are ASan's own heap blocks: ASan reports an overflow of one byte
 * as a heap-buffer-overflow of a 24-byte region (not the library's poisoned redzone), and a
 * write after free with the stack that freed it, through the function that called pool_free().
 */
START_TEST(test_asan_sees_malloc_objects)
{
	struct death d;

	run_child(malloc_overflow_child, NULL, &d);
	ck_assert_msg(!(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0), "%s", d.out);
	ck_assert_msg(strstr(d.out, "AddressSanitizer: heap-buffer-overflow") != NULL, "%s", d.out);
	/* "0 bytes to the right of" (gcc 12's runtime) or "0 bytes after" (newer ones) */
	ck_assert_msg(strstr(d.out, "is located 0 bytes ") != NULL &&
	              strstr(d.out, " 24-byte region") != NULL, "%s", d.out);
	run_child(malloc_uaf_child, NULL, &d);
	ck_assert_msg(strstr(d.out, "AddressSanitizer: heap-use-after-free") != NULL, "%s", d.out);
	ck_assert_msg(strstr(d.out, "freed by thread") != NULL, "%s", d.out);
	ck_assert_msg(strstr(strstr(d.out, "freed by thread"), "malloc_release") != NULL, "%s",
	              d.out);
}
END_TEST

START_TEST(test_asan_sees_write_after_free)
{
	struct death d;

	ck_assert(pool_debugging & POOL_DBG_SANITIZER);
	run_child(asan_child, NULL, &d);
	ck_assert_msg(!(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0), "%s", d.out);
	ck_assert_msg(strstr(d.out, "AddressSanitizer: use-after-poison") != NULL, "%s", d.out);
	ck_assert_msg(strstr(d.out, "WRITE of size 1") != NULL, "%s", d.out);
}
END_TEST
#endif

/* ------------------------------------------------------------------------------------------ */

/*
 * `check_debug --fail-sequence`: print which of 64 allocations fail (tests/debug/test_debug_modes.sh
 * checks POOL_FAIL_SEED with it) and exit 0; `check_debug --show`: print the options in effect
 * (pool_debugging_show(), what POOL_DEBUG made of them) and exit 0; -1 without either argument
 * (run the suite).
 */
static int fail_sequence(int argc, char **argv)
{
	struct pool_head *p;
	int i;

	if (argc >= 2 && strcmp(argv[1], "--show") == 0) {
		pool_debugging_show(stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "--fail-sequence") != 0)
		return -1;
	p = pool_create("seq", 64, 0);
	for (i = 0; i < 64; i++) {
		void *o = pool_alloc(p);

		putchar(o ? '.' : 'x');
		pool_free(p, o);
	}
	putchar('\n');
	return 0;
}

static Suite *debug_suite(void)
{
	Suite *s = suite_create("debug");
	TCase *tc;

	tc = tcase_create("Parser");
	tcase_add_test(tc, test_parse_words);
	tcase_add_test(tc, test_parse_poison_number);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_parse_layout_frozen);
	tcase_add_test(tc, test_help_and_show);
	suite_add_tcase(s, tc);

	tc = tcase_create("Misuse");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tag_wrong_pool);
	tcase_add_test(tc, test_tag_overflow_one_byte);
	tcase_add_test(tc, test_tag_double_free);
	tcase_add_test(tc, test_integrity_write_after_free);
	tcase_add_test(tc, test_integrity_first_word);
	tcase_add_test(tc, test_integrity_names_the_offset);
	tcase_add_test(tc, test_integrity_on_eviction);
	tcase_add_test(tc, test_backup_write_after_free);
	tcase_add_test(tc, test_uaf_read_and_write_after_free);
	tcase_add_test(tc, test_uaf_guard_page);
	tcase_add_test(tc, test_uaf_underflow);
	tcase_add_test(tc, test_uaf_double_free);
	tcase_add_test(tc, test_uaf_wrong_pool);
	tcase_add_test(tc, test_uaf_unknown_pointer_names_it);
#if defined(__SANITIZE_ADDRESS__)
	tcase_add_test(tc, test_asan_sees_write_after_free);
	tcase_add_test(tc, test_asan_sees_malloc_objects);
#endif
	suite_add_tcase(s, tc);

	tc = tcase_create("Options");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_uaf_counts_and_quarantine);
#if defined(TEST_AUDIT_ARCH) && !TEST_TSAN
	tcase_add_test(tc, test_uaf_without_fault_handler);
#endif
	tcase_add_test(tc, test_fail_half);
	tcase_add_test(tc, test_fail_exempt);
	tcase_add_test(tc, test_poison_fill);
	tcase_add_test(tc, test_cold_first);
	tcase_add_test(tc, test_malloc_layout);
	tcase_add_test(tc, test_no_cache_no_global);
	tcase_add_test(tc, test_integrity_switched_on_late);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(debug_suite, fail_sequence)
