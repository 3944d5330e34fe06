/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * POOL_DECLARE: a file-scope pool created before main() and destroyed at exit.
 *
 * Public-API test: it includes only <pool/pool.h>; POOL_DECLARE is a public macro.
 */
#include <check.h>
#include <stdlib.h>
#include <pool/pool.h>

#include "testutil.h"

POOL_DECLARE(declared_pool, "declared", 128)
POOL_DECLARE(declared_twin, "declared-twin", 128)

START_TEST(test_pool_declare)
{
	struct pool_stats st;
	void *o;

	ck_assert_ptr_nonnull(declared_pool);
	ck_assert_str_eq(pool_name(declared_pool), "declared");
	/* declared pools are POOL_F_SHARED: the same size merges */
	ck_assert_ptr_eq(declared_twin, declared_pool);
	ck_assert_int_eq(pool_get_stats(declared_pool, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.creators, 2);
	o = pool_alloc(declared_pool);
	ck_assert_ptr_nonnull(o);
	pool_free(declared_pool, o);
}
END_TEST

static Suite *declare_suite(void)
{
	Suite *s = suite_create("declare");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_pool_declare);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(declare_suite)
