/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_version() and the POOL_VERSION_* macros: the string is "MAJOR.MINOR.PATCH" made of the
 * three macros, the shared library loaded at run time reports the version its file name carries
 * (libpool.so.MAJOR.MINOR.PATCH), and the comparison macro orders versions.
 *
 * Public-API test: it includes only <pool/pool.h>, and must be linked with the shared library
 * (which the Makefile does for public tests) to find the file it was loaded from.
 */
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pool/pool.h>

#include "testutil.h"

START_TEST(test_version_string)
{
	char expect[64];
	const char *v = pool_version();

	ck_assert_ptr_nonnull(v);
	snprintf(expect, sizeof(expect), "%d.%d.%d", POOL_VERSION_MAJOR, POOL_VERSION_MINOR,
	         POOL_VERSION_PATCH);
	ck_assert_str_eq(POOL_VERSION_STRING, expect);
	/* built from these headers, so the run-time and compile-time versions agree */
	ck_assert_str_eq(v, POOL_VERSION_STRING);
	/* a static string: the same pointer every time */
	ck_assert_ptr_eq(pool_version(), v);
}
END_TEST

START_TEST(test_version_is_the_loaded_library)
{
	Dl_info info;
	char *path;
	const char *base, *tail;

	ck_assert_int_ne(dladdr((void *)pool_version, &info), 0);
	ck_assert_ptr_nonnull(info.dli_fname);
	/* loaded through the soname link libpool.so.MAJOR: the file it points to has the version */
	path = realpath(info.dli_fname, NULL);
	ck_assert_ptr_nonnull(path);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	tail = strstr(base, "libpool.so.");
	/* the Makefile links this public-API test with the shared library */
	ck_assert_msg(tail != NULL, "pool_version() is not in a libpool.so.*: %s", path);
	ck_assert_str_eq(tail + strlen("libpool.so."), pool_version());
	free(path);
}
END_TEST

START_TEST(test_version_num)
{
	ck_assert_int_eq(POOL_VERSION_NUM,
	                 POOL_MKVERSION(POOL_VERSION_MAJOR, POOL_VERSION_MINOR, POOL_VERSION_PATCH));
	ck_assert(POOL_MKVERSION(0, 1, 0) < POOL_MKVERSION(0, 1, 1));
	ck_assert(POOL_MKVERSION(0, 1, 99) < POOL_MKVERSION(0, 2, 0));
	ck_assert(POOL_MKVERSION(0, 99, 99) < POOL_MKVERSION(1, 0, 0));
}
END_TEST

static Suite *version_suite(void)
{
	Suite *s = suite_create("version");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_version_string);
	tcase_add_test(tc, test_version_is_the_loaded_library);
	tcase_add_test(tc, test_version_num);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(version_suite)
