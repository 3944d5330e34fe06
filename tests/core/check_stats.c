/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Statistics that can grow (src/core/pool-stats.c): pool_get_stats() and pool_get_os_stats() write
 * the caller's `size` bytes and nothing past them, whatever header the caller was built with.
 * A program built against a newer header (its structure has a field more at the end) gets every
 * field this library knows and 0 in the new one; a program built against an older header (a
 * shorter structure) gets its fields and not a byte more; libpool 0.1's two-argument
 * pool_get_stats() still answers under its old symbol version, in the 0.1 layout.
 *
 * Public-API test: it includes only <pool/pool.h> and calls the shared library as built, as a
 * program compiled against another version of the header would.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pool/pool.h>

#include "testutil.h"

#define CANARY 0xA5

/*
 * struct pool_stats as a newer header would declare it: the same fields, then one more. The
 * copy is checked against the real one field by field (offsets), so it cannot drift.
 */
struct newer_stats {
	size_t size, align, stride, allocated, used, cached, shared_free, needed_avg, failed, limit;
	unsigned int creators, flags, buckets;
	uint64_t shared_get_objects, shared_get_clusters, shared_put_objects, shared_put_clusters;
	uint64_t os_allocs, os_releases, gc_released_bytes, lost;
	size_t slabs, slab_bytes, slab_free;
	uint64_t slabs_released, slab_get_objects, slab_put_objects, slab_purged_bytes;
	size_t reserve;
	uint64_t added_later;        /* the field this library does not know */
};

#define SAME_OFFSET(f) \
	_Static_assert(offsetof(struct newer_stats, f) == offsetof(struct pool_stats, f), #f)
SAME_OFFSET(size);
SAME_OFFSET(limit);
SAME_OFFSET(buckets);
SAME_OFFSET(shared_get_objects);
SAME_OFFSET(lost);
SAME_OFFSET(slabs);
SAME_OFFSET(slab_put_objects);
SAME_OFFSET(slab_purged_bytes);
SAME_OFFSET(reserve);
_Static_assert(offsetof(struct newer_stats, added_later) >= sizeof(struct pool_stats),
               "the new field lies past this library's structure");

static struct pool_head *pool;
static void *objs[12];

/* A quiet pool with counters that are not 0: every call sees the same values. */
static void setup(void)
{
	unsigned int i;

	pool = pool_create("grow", 96, 0);
	ck_assert_ptr_nonnull(pool);
	ck_assert_int_eq(pool_set_limit(pool, 1000), 0);
	for (i = 0; i < 12; i++)
		ck_assert_ptr_nonnull(objs[i] = pool_alloc(pool));
	for (i = 0; i < 4; i++)
		pool_free(pool, objs[i]);
	pool_thread_flush();
}

/* Every byte of buf[from..to) is the canary. */
static void untouched(const unsigned char *buf, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		ck_assert_msg(buf[i] == CANARY, "byte %zu of %zu written (0x%02x)", i, to, buf[i]);
}

START_TEST(test_newer_header)
{
	unsigned char buf[sizeof(struct newer_stats) + 64];
	struct newer_stats *n = (struct newer_stats *)buf;
	struct pool_stats st;

	ck_assert_int_eq(pool_get_stats(pool, &st, sizeof(st)), 0);
	memset(buf, CANARY, sizeof(buf));
	ck_assert_int_eq(pool_get_stats(pool, (struct pool_stats *)buf, sizeof(*n)), 0);
	/* what this library knows, as a caller of its own size gets it */
	ck_assert_int_eq(memcmp(buf, &st, sizeof(st)), 0);
	ck_assert_uint_eq(n->size, 96);
	ck_assert_uint_ge(n->allocated, 12);
	ck_assert_uint_eq(n->used, 8);
	ck_assert_uint_eq(n->limit, 1000);
	ck_assert_uint_ge(n->os_allocs, 12);
	/* the field it does not know: 0, and nothing past the caller's size */
	ck_assert_uint_eq(n->added_later, 0);
	untouched(buf, sizeof(*n), sizeof(buf));
}
END_TEST

/* Every size an older (shorter) structure may have: its bytes filled, not one more. */
START_TEST(test_older_header)
{
	unsigned char buf[sizeof(struct pool_stats) + 64];
	struct pool_stats st;
	size_t size;

	ck_assert_int_eq(pool_get_stats(pool, &st, sizeof(st)), 0);
	for (size = 1; size <= sizeof(st); size++) {
		memset(buf, CANARY, sizeof(buf));
		ck_assert_int_eq(pool_get_stats(pool, (struct pool_stats *)buf, size), 0);
		ck_assert_msg(memcmp(buf, &st, size) == 0, "size %zu: other values", size);
		untouched(buf, size, sizeof(buf));
	}
	/* e.g. a header that ended at `buckets` */
	size = offsetof(struct pool_stats, buckets) + sizeof(st.buckets);
	memset(buf, CANARY, sizeof(buf));
	ck_assert_int_eq(pool_get_stats(pool, (struct pool_stats *)buf, size), 0);
	ck_assert_uint_eq(((struct pool_stats *)buf)->buckets, st.buckets);
	untouched(buf, size, sizeof(buf));
}
END_TEST

START_TEST(test_os_stats_grow)
{
	unsigned char buf[sizeof(struct pool_os_stats) + sizeof(uint64_t) + 64];
	struct pool_os_stats os;
	size_t size;

	ck_assert_int_eq(pool_get_os_stats(&os, sizeof(os)), 0);
	ck_assert_ptr_nonnull(os.layer);
	ck_assert_msg(!strcmp(os.layer, "jemalloc") || !strcmp(os.layer, "libc"), "%s", os.layer);
	/* a newer header: one more field, 0 */
	memset(buf, CANARY, sizeof(buf));
	size = sizeof(os) + sizeof(uint64_t);
	ck_assert_int_eq(pool_get_os_stats((struct pool_os_stats *)buf, size), 0);
	ck_assert_ptr_eq(((struct pool_os_stats *)buf)->layer, os.layer);
	for (unsigned int i = sizeof(os); i < size; i++)
		ck_assert_uint_eq(buf[i], 0);
	untouched(buf, size, sizeof(buf));
	/* an older one: only the name */
	memset(buf, CANARY, sizeof(buf));
	ck_assert_int_eq(pool_get_os_stats((struct pool_os_stats *)buf, sizeof(os.layer)), 0);
	ck_assert_ptr_eq(((struct pool_os_stats *)buf)->layer, os.layer);
	untouched(buf, sizeof(os.layer), sizeof(buf));
}
END_TEST

START_TEST(test_errors)
{
	struct pool_os_stats os;
	struct pool_stats st;
	struct pool_head *gone;

	memset(&st, CANARY, sizeof(st));
	errno = 0;
	ck_assert_int_eq(pool_get_stats(pool, &st, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	untouched((const unsigned char *)&st, 0, sizeof(st));
	errno = 0;
	ck_assert_int_eq(pool_get_stats(pool, NULL, sizeof(st)), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_get_stats(NULL, &st, sizeof(st)), -1);
	ck_assert_int_eq(errno, EINVAL);
	gone = pool_create("gone", 32, 0);
	ck_assert_ptr_nonnull(gone);
	ck_assert_int_eq(pool_destroy(gone), 0);
	errno = 0;
	ck_assert_int_eq(pool_get_stats(gone, &st, sizeof(st)), -1);
	ck_assert_int_eq(errno, EINVAL);
	untouched((const unsigned char *)&st, 0, sizeof(st));
	errno = 0;
	ck_assert_int_eq(pool_get_os_stats(NULL, sizeof(os)), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_get_os_stats(&os, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/*
 * pool_get_stats() is versioned LIBPOOL_0.2 alone: the soname changed with 0.2 (libpool.so.1),
 * so no program built for the two-argument form of 0.1 can load this library, and no 0.1 form
 * is kept.
 */
START_TEST(test_version_node)
{
	void *now = dlvsym(RTLD_DEFAULT, "pool_get_stats", "LIBPOOL_0.2");

	ck_assert_msg(now != NULL, "pool_get_stats@LIBPOOL_0.2: %s", dlerror());
	ck_assert_ptr_eq(now, (void *)pool_get_stats);
	ck_assert_ptr_null(dlvsym(RTLD_DEFAULT, "pool_get_stats", "LIBPOOL_0.1"));
	ck_assert_ptr_nonnull(dlvsym(RTLD_DEFAULT, "pool_create", "LIBPOOL_0.1"));
}

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("Core");
	TCase *err = tcase_create("Errors");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_newer_header);
	tcase_add_test(tc, test_older_header);
	tcase_add_test(tc, test_os_stats_grow);
	tcase_add_test(tc, test_version_node);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(err, setup, NULL);
	tcase_add_test(err, test_errors);
	suite_add_tcase(s, err);
	return s;
}

POOL_TEST_MAIN(stats_suite)
