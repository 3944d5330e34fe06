/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Misuse is always reported in an AddressSanitizer build, with no debugging option set: ASan
 * builds give every object a tag (past the stride when `tag` is off) whose bytes are the
 * object's redzone, poisoned while the object is out. So an overflow of a live object is
 * reported by ASan at the write, before it reaches the next object, and pool_free() checks that
 * the pointer is an object of that pool: a free into the wrong pool, of an interior pointer or
 * twice aborts with libpool's report. One death test per case, each checking the words of the
 * report. Skipped (exit 77) in other builds, where these need `-dMtag` (tests/debug/check_debug.c).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

#include "testutil.h"

/* Global, not static, so that the reports name them. */
void wrong_pool_child(void *arg);
void overflow_child(void *arg);
void overflow_exact_child(void *arg);
void interior_child(void *arg);
void double_free_child(void *arg);

/* An ASan report of a write to poisoned memory, and the process did not carry on. */
static void expect_asan_write(void (*fn)(void *))
{
	struct death d;

	run_child(fn, NULL, &d);
	ck_assert_msg(!(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0),
	              "the overflow went unreported; stderr:\n%s", d.out);
	ck_assert_msg(strstr(d.out, "AddressSanitizer: use-after-poison") != NULL, "%s", d.out);
	ck_assert_msg(strstr(d.out, "WRITE of size 1") != NULL, "%s", d.out);
}

void wrong_pool_child(void *arg)
{
	struct pool_head *a, *b;
	void *o;

	(void)arg;
	a = pool_create("conn", 64, 0);
	b = pool_create("stream", 64, 0);
	o = pool_alloc(a);
	pool_free(b, o);
}

START_TEST(test_asan_wrong_pool)
{
	static const char *const w[] = { "libpool: FATAL: free into the wrong pool",
	                                 "in pool 'stream' (64 bytes)",
	                                 "the found tag is that of pool 'conn'",
	                                 "caller: wrong_pool_child+", NULL };

	ck_assert_uint_eq(pool_debugging & POOL_DBG_TAG, 0);    /* nothing asked for */
	expect_death(wrong_pool_child, NULL, SIGABRT, w);
}
END_TEST

void overflow_child(void *arg)
{
	struct pool_head *p;
	volatile unsigned char *o;

	(void)arg;
	p = pool_create("buf", 64, 0);
	o = pool_alloc(p);
	(void)pool_alloc(p);                     /* the next object, live */
	o[64] = 'x';                             /* one byte past the end of a live object */
}

START_TEST(test_asan_overflow_live_object)
{
	expect_asan_write(overflow_child);
}
END_TEST

void overflow_exact_child(void *arg)
{
	struct pool_head *p;
	volatile unsigned char *o;

	(void)arg;
	p = pool_create("odd", 13, POOL_F_EXACT);
	o = pool_alloc(p);
	o[12] = 'x';                             /* the last byte is the user's */
	o[13] = 'x';                             /* the next one is not */
}

START_TEST(test_asan_overflow_exact_size)
{
	expect_asan_write(overflow_exact_child);
}
END_TEST

void interior_child(void *arg)
{
	struct pool_head *p;
	char *o;

	(void)arg;
	p = pool_create("conn", 64, 0);
	o = pool_alloc(p);
	pool_free(p, o + 16);
}

START_TEST(test_asan_interior_pointer)
{
	static const char *const w[] = { "libpool: FATAL: tag mismatch",
	                                 "not an object of this pool", "in pool 'conn' (64 bytes)",
	                                 "caller: interior_child+", NULL };

	expect_death(interior_child, NULL, SIGABRT, w);
}
END_TEST

void double_free_child(void *arg)
{
	struct pool_head *p;
	void *o;

	(void)arg;
	p = pool_create("conn", 64, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	pool_free(p, o);
}

START_TEST(test_asan_double_free)
{
	static const char *const w[] = { "libpool: FATAL: double free", "in pool 'conn'",
	                                 "caller: double_free_child+", NULL };

	expect_death(double_free_child, NULL, SIGABRT, w);
}
END_TEST

/*
 * The note of an ASan process at start-up (`check_asan --idle`: the library's constructors,
 * nothing else): once, saying what ASan sees of pool objects in a library built with it and
 * what POOL_DEBUG=malloc adds; not when the program set POOL_DEBUG, even empty, nor with
 * POOL_ASAN_NOTE=0 (tests/run.sh sets it for every other test).
 */
START_TEST(test_asan_note_at_start)
{
	char *argv[] = { "check_asan", "--idle", NULL };
	static char out[4096];
	int status;

	ck_assert_int_eq(unsetenv("POOL_DEBUG"), 0);
	status = test_run_self(argv, "POOL_ASAN_NOTE", NULL, out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_uint_eq(test_count(out, "libpool: note: AddressSanitizer sees pool objects in "
	                                  "part"), 1);
	ck_assert_ptr_nonnull(strstr(out, "without the stacks of the allocation and the free"));
	ck_assert_ptr_nonnull(strstr(out, "POOL_DEBUG=malloc makes"));
	ck_assert_uint_eq(test_count(out, "libpool: "), 4);
	status = test_run_self(argv, "POOL_ASAN_NOTE", "0", out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(unsetenv("POOL_ASAN_NOTE"), 0);
	status = test_run_self(argv, "POOL_DEBUG", "", out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_str_eq(out, "");
	status = test_run_self(argv, "POOL_DEBUG", "tag", out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_str_eq(out, "");
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("asan");
	TCase *tc = tcase_create("Misuse");
	SRunner *sr;
	int failed;

	if (argc == 2 && !strcmp(argv[1], "--idle"))
		return 0;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_asan_wrong_pool);
	tcase_add_test(tc, test_asan_overflow_live_object);
	tcase_add_test(tc, test_asan_overflow_exact_size);
	tcase_add_test(tc, test_asan_interior_pointer);
	tcase_add_test(tc, test_asan_double_free);
	tcase_add_test(tc, test_asan_note_at_start);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
#if !TEST_ASAN
	printf("check_asan: skipped: these cases are caught by ASan builds (make check "
	       "SAN=address); other builds need -dMtag (check_debug)\n");
	srunner_free(sr);
	return 77;
#endif
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
