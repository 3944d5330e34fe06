/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A program that owns the pool_ names: it defines, with its own meanings, every name HAProxy
 * 2.6 and 3.x define in their pool headers (the variable pool_debugging, the functions
 * pool_gc(), pool_flush(), pool_destroy(), pool_parse_debugging() and the rest, struct
 * pool_head, the POOL_F_ and POOL_DBG_ flags, the pool_alloc() and pool_free() macros), and
 * uses libpool through <pool/libpool.h> as such a program must (libpool(7), "Programs with
 * their own pool_ names"). Each of its functions aborts with its name when called, and its
 * pool_debugging holds every bit: libpool must never call them nor read or write that word,
 * whatever it does (allocation on every path, memory return, destruction, the CLI, the
 * debugging switches, POOL_DEBUG read at load, LIBPOOL_DECLARE). Against libpool 0.3.0 before
 * libpool.so.2, the library's `pools flush` called this program's pool_flush() and crashed.
 *
 * Public-API test, built as users build: it includes <pool/libpool.h> only, and not
 * testutil.h, which includes <pool/pool.h> (the names would meet); it has its own main() and
 * runs itself again (/proc/self/exe) for what POOL_DEBUG sets at load.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/libpool.h>

/* ------------------------------------------------------------------------------------------ */
/* The program's own pool names (HAProxy's, as its include/haproxy/pool*.h declare them)      */
/* ------------------------------------------------------------------------------------------ */

#define MEM_F_SHARED        0x1
#define MEM_F_EXACT         0x2
#define POOL_BUSY           ((void *)1)
#define POOL_AVG_SAMPLES    1024
#define POOL_F_NO_POISON    0x00000001
#define POOL_F_MUST_ZERO    0x00000002
#define POOL_F_NO_FAIL      0x00000004
#define POOL_DBG_FAIL_ALLOC 0x00000001
#define POOL_DBG_DONT_MERGE 0x00000002
#define POOL_DBG_COLD_FIRST 0x00000004
#define POOL_DBG_INTEGRITY  0x00000008
#define POOL_DBG_NO_GLOBAL  0x00000010
#define POOL_DBG_NO_CACHE   0x00000020
#define POOL_DBG_CALLER     0x00000040
#define POOL_DBG_TAG        0x00000080
#define POOL_DBG_POISON     0x00000100
#define POOL_DBG_UAF        0x00000200
#define POOL_EXTRA_MARK     (sizeof(void *))
#define POOL_EXTRA_CALLER   (sizeof(void *))
#define POOL_LINK(pool, item) ((void **)(item))

struct pool_cache_head { unsigned int count; };
struct pool_cache_item { struct pool_cache_item *next, *prev; };
struct pool_item { struct pool_item *next, *down; };
struct pool_head {
	unsigned int limit, minavail, size, flags, users, alloc_sz;
	void *base_addr;
	char name[12];
	struct pool_item *free_list;
	unsigned int used, needed_avg, allocated, failed;
};

/* Every bit set: a library that read it would see all its own flags on. */
unsigned int pool_debugging = 0xffffffffu;
int mem_poison_byte = 'P';
__thread size_t pool_cache_bytes;
__thread size_t pool_cache_count;

/* A function of the program that libpool must never call (its parameters are not read). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define HOST_FN(ret, name, params)                                                  \
	ret name params;                                                            \
	ret name params                                                             \
	{                                                                           \
		fprintf(stderr, "libpool called the program's " #name "()\n");     \
		abort();                                                            \
	}

HOST_FN(void *, pool_get_from_os, (struct pool_head *pool))
HOST_FN(void, pool_put_to_os, (struct pool_head *pool, void *ptr))
HOST_FN(void *, pool_alloc_nocache, (struct pool_head *pool))
HOST_FN(void, pool_free_nocache, (struct pool_head *pool, void *ptr))
HOST_FN(void, dump_pools_to_trash, (void))
HOST_FN(void, dump_pools, (void))
HOST_FN(int, pool_parse_debugging, (const char *str, char **err))
HOST_FN(int, pool_total_failures, (void))
HOST_FN(unsigned long long, pool_total_allocated, (void))
HOST_FN(unsigned long long, pool_total_used, (void))
HOST_FN(void, pool_flush, (struct pool_head *pool))
HOST_FN(void, pool_gc, (struct pool_head *pool_ctx))
HOST_FN(struct pool_head *, create_pool, (char *name, unsigned int size, unsigned int flags))
HOST_FN(void, create_pool_callback, (struct pool_head **ptr, char *name, unsigned int size))
HOST_FN(void *, pool_destroy, (struct pool_head *pool))
HOST_FN(void, pool_destroy_all, (void))
HOST_FN(void *, __pool_alloc, (struct pool_head *pool, unsigned int flags))
HOST_FN(void, __pool_free, (struct pool_head *pool, void *ptr))
HOST_FN(void, pool_evict_from_local_cache, (struct pool_head *pool, int full))
HOST_FN(void, pool_evict_from_local_caches, (void))
HOST_FN(void, pool_put_to_cache, (struct pool_head *pool, void *ptr, const void *caller))
HOST_FN(void, pool_fill_pattern, (struct pool_cache_head *pch, struct pool_cache_item *item,
                                  unsigned int size))
HOST_FN(void, pool_check_pattern, (struct pool_cache_head *pch, struct pool_cache_item *item,
                                   unsigned int size))
HOST_FN(void, pool_refill_local_from_shared, (struct pool_head *pool,
                                              struct pool_cache_head *pch))
HOST_FN(void, pool_put_to_shared_cache, (struct pool_head *pool, struct pool_item *item,
                                         unsigned int count))
HOST_FN(void *, pool_alloc_area_uaf, (size_t size))
HOST_FN(void, pool_free_area_uaf, (void *area, size_t size))
/* 3.x */
HOST_FN(void, trim_all_pools, (void))
HOST_FN(void, pool_inspect_item, (const char *msg, struct pool_head *pool, const void *item,
                                  const void *caller))
/* the names libpool uses for its own API, which this program could have as well */
HOST_FN(void, pool_trim, (void))
HOST_FN(struct pool_head *, pool_create, (const char *name, size_t size, unsigned int flags))
HOST_FN(void, pool_thread_flush, (void))
HOST_FN(int, pool_set_limit, (struct pool_head *pool, size_t n))
HOST_FN(int, pool_for_each, (void *fn, void *arg))
HOST_FN(int, pool_dump, (FILE *out, const char *args))
HOST_FN(const char *, pool_name, (const struct pool_head *pool))
HOST_FN(const char *, pool_version, (void))
HOST_FN(int, pool_get_stats, (const struct pool_head *pool, void *st, size_t size))
HOST_FN(int, pool_json_write_string, (FILE *out, const char *s))
HOST_FN(void, pool_debugging_help, (FILE *out))
HOST_FN(void, pool_debugging_show, (FILE *out))
HOST_FN(unsigned int, pool_release_run, (void))
#pragma GCC diagnostic pop

#define pool_alloc(pool)      __pool_alloc((pool), 0)
#define pool_zalloc(pool)     __pool_alloc((pool), POOL_F_MUST_ZERO)
#define pool_free(pool, ptr)  __pool_free((pool), (ptr))

/* ------------------------------------------------------------------------------------------ */
/* libpool, through its prefixed names                                                        */
/* ------------------------------------------------------------------------------------------ */

LIBPOOL_DECLARE(declared_conn, "host-declared", 96)

/*
 * What libpool_cli_exec(line) writes, or with `dump` libpool_dump(line), as a malloc()ed string:
 * both run library code that calls pool_flush(), pool_gc(), pool_for_each()...
 */
static char *text_of(const char *line, int dump)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(dump ? libpool_dump(f, line) : libpool_cli_exec(line, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static char *cli_text(const char *line)
{
	return text_of(line, 0);
}

static char *dump_text(const char *args)
{
	return text_of(args, 1);
}

START_TEST(test_objects_on_every_path)
{
	struct libpool_head *p = libpool_create("host-conn", 192, LIBPOOL_F_SHARED);
	struct libpool_stats st;
	void *objs[256];
	unsigned int i;

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(libpool_debugging & ~LIBPOOL_DBG_SANITIZER, 0);
	for (i = 0; i < 256; i++) {
		objs[i] = i % 2 ? libpool_alloc(p) : libpool_zalloc(p);
		ck_assert_ptr_nonnull(objs[i]);
		memset(objs[i], 0xa5, 192);
	}
	for (i = 0; i < 256; i++)
		libpool_free(p, objs[i]);
	ck_assert_uint_eq(libpool_alloc_bulk(p, objs, 64), 64);
	libpool_free_bulk(p, objs, 64);
	ck_assert_int_eq(libpool_get_stats(p, &st, sizeof(st)), 0);
	/* no tag, no caller word: the program's word, all bits set, was not read at creation */
	ck_assert_uint_eq(st.stride, 192);
	ck_assert_uint_eq(st.failed, 0);
	libpool_thread_flush();
	libpool_flush(p);
	libpool_gc(p);
	libpool_gc(NULL);
	libpool_trim();
	(void)libpool_release_run();
	ck_assert_int_eq(libpool_set_limit(p, 1000), 0);
	ck_assert_int_eq(libpool_set_reserve(p, 4), 0);
	libpool_flush(p);
	ck_assert_int_eq(libpool_destroy(p), 0);
	ck_assert_uint_eq(pool_debugging, 0xffffffffu);
}
END_TEST

START_TEST(test_cli_and_dumps)
{
	struct libpool_head *p = libpool_create("host-buf", 1024, 0);
	void *o;
	char *s;

	ck_assert_ptr_nonnull(p);
	o = libpool_alloc(p);
	ck_assert_ptr_nonnull(o);
	libpool_free(p, o);
	free(cli_text("pools flush host-buf"));
	free(cli_text("pools trim"));
	free(cli_text("pools limit host-buf 10"));
	free(cli_text("pools debug"));
	free(cli_text("help"));
	s = cli_text("pools show");
	ck_assert_ptr_nonnull(strstr(s, "host-buf"));
	free(s);
	s = dump_text("json detailed");
	ck_assert_ptr_nonnull(strstr(s, "\"host-buf\""));
	free(s);
	free(dump_text("prometheus"));
	ck_assert_int_eq(libpool_destroy(p), 0);
	ck_assert_uint_eq(pool_debugging, 0xffffffffu);
}
END_TEST

START_TEST(test_debugging_switches_are_the_library_s)
{
	char *err = (char *)1;

	ck_assert_int_eq(libpool_parse_debugging("no-merge,poison=0x41", &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(libpool_debugging & ~LIBPOOL_DBG_SANITIZER,
	                  LIBPOOL_DBG_NO_MERGE | LIBPOOL_DBG_POISON);
	ck_assert_uint_eq(libpool_debugging_poison_byte(), 0x41);
	ck_assert_uint_eq(pool_debugging, 0xffffffffu);
	free(cli_text("pools debug merge,no-poison"));
	ck_assert_uint_eq(libpool_debugging & ~LIBPOOL_DBG_SANITIZER, 0);
	ck_assert_uint_eq(pool_debugging, 0xffffffffu);
	ck_assert_int_eq(libpool_parse_debugging("bogus", &err), -1);
	ck_assert_ptr_nonnull(err);
	free(err);
}
END_TEST

START_TEST(test_declared_pool)
{
	void *o;

	ck_assert_ptr_nonnull(declared_conn);
	ck_assert_str_eq(libpool_name(declared_conn), "host-declared");
	o = libpool_alloc(declared_conn);
	ck_assert_ptr_nonnull(o);
	libpool_free(declared_conn, o);
}
END_TEST

/* Run this program again with POOL_DEBUG set: its child_main() reports what it saw. */
static int run_child(const char *pool_debug)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("POOL_DEBUG", pool_debug, 1);
		execl("/proc/self/exe", "check_host", "child", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child died (status %#x)", status);
	return WEXITSTATUS(status);
}

/*
 * The child: POOL_DEBUG was read at load into libpool's word only; the layout options took
 * effect (tag, caller: a pool's stride grows) and the program's word is as it was.
 */
static int child_main(void)
{
	struct libpool_head *p;
	struct libpool_stats st;
	void *o;

	if ((libpool_debugging & ~LIBPOOL_DBG_SANITIZER) !=
	    (LIBPOOL_DBG_TAG | LIBPOOL_DBG_CALLER | LIBPOOL_DBG_INTEGRITY))
		return 10;
	if (pool_debugging != 0xffffffffu)
		return 11;
	p = libpool_create("host-child", 64, 0);
	if (!p || !(o = libpool_alloc(p)))
		return 12;
	libpool_free(p, o);
	if (libpool_get_stats(p, &st, sizeof(st)) != 0 || st.stride <= 64)
		return 13;
	libpool_trim();
	if (libpool_destroy(p) != 0)
		return 14;
	return 0;
}

START_TEST(test_pool_debug_at_load)
{
	ck_assert_int_eq(run_child("tag,caller,integrity"), 0);
}
END_TEST

static Suite *host_suite(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_objects_on_every_path);
	tcase_add_test(tc, test_cli_and_dumps);
	tcase_add_test(tc, test_debugging_switches_are_the_library_s);
	tcase_add_test(tc, test_declared_pool);
	tcase_add_test(tc, test_pool_debug_at_load);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc == 2 && strcmp(argv[1], "child") == 0)
		return child_main();
	sr = srunner_create(host_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
