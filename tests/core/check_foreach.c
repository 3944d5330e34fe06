/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_for_each() and what its callback may call. The callback runs with the pool list lock
 * held by the walking thread, and the library lets that thread call back into it: limits
 * ("limit every pool named conn*"), pool_gc(NULL), pool_dump(), pool_parse_debugging(),
 * pool_cli_exec(), a nested pool_for_each(), pool_create() and pool_destroy() (of the pool being
 * visited or of any other), and fork(). Before, each of these deadlocked the process. A
 * deadlock here ends the test at its Check timeout (10 s), which fails it.
 *
 * Public-API test: only <pool/pool.h>.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "testutil.h"

#define NPOOLS 6

static struct pool_head *make_pool(const char *name, size_t size)
{
	struct pool_head *p = pool_create(name, size, 0);

	ck_assert_msg(p != NULL, "pool_create(%s): %s", name, strerror(errno));
	return p;
}

/* The pools of a test: conn-a, conn-b, task, conn-c, buf, other (in creation order). */
static void make_pools(struct pool_head **p)
{
	static const char *const names[NPOOLS] = { "fe-conn-a", "fe-conn-b", "fe-task",
	                                           "fe-conn-c", "fe-buf", "fe-other" };
	int i;

	for (i = 0; i < NPOOLS; i++)
		p[i] = make_pool(names[i], 64 + 16 * (size_t)i);
}

static void destroy_pools(struct pool_head **p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (p[i])
			ck_assert_int_eq(pool_destroy(p[i]), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Core: the calls a callback makes                                                           */
/* ------------------------------------------------------------------------------------------ */

static int limit_conn(struct pool_head *pool, void *arg)
{
	unsigned int *n = arg;

	if (strncmp(pool_name(pool), "fe-conn", 7) == 0) {
		ck_assert_int_eq(pool_set_limit(pool, 100), 0);
		(*n)++;
	}
	return 0;
}

/* The natural use: limit every pool named conn*, from the callback. */
START_TEST(test_callback_limits_matching_pools)
{
	struct pool_head *p[NPOOLS];
	unsigned int n = 0;
	int i;

	make_pools(p);
	pool_for_each(limit_conn, &n);
	ck_assert_uint_eq(n, 3);
	for (i = 0; i < NPOOLS; i++)
		ck_assert_uint_eq(test_stats(p[i]).limit,
		                  strncmp(pool_name(p[i]), "fe-conn", 7) == 0 ? 100 : 0);
	destroy_pools(p, NPOOLS);
}
END_TEST

struct calls {
	unsigned int visits;
	char *dump;           /* what pool_dump() wrote from the first visit */
	char *cli;            /* what pool_cli_exec() answered */
	int dump_ret, cli_ret, debug_ret, name_ok, stats_ret;
};

static int call_everything(struct pool_head *pool, void *arg)
{
	struct calls *c = arg;
	struct pool_stats st;
	size_t len;
	FILE *out;
	char *err = NULL;
	void *o;

	if (c->visits++)
		return 0;
	/* the pool's own calls */
	o = pool_alloc(pool);
	ck_assert_ptr_nonnull(o);
	pool_free(pool, o);
	pool_flush(pool);
	pool_gc(pool);
	c->stats_ret = pool_get_stats(pool, &st, sizeof(st));
	c->name_ok = pool_name(pool) != NULL && pool_object_size(pool) > 0;
	/* the calls that take the pool list lock themselves */
	pool_gc(NULL);
	out = open_memstream(&c->dump, &len);
	ck_assert_ptr_nonnull(out);
	c->dump_ret = pool_dump(out, "byname");
	fclose(out);
	c->debug_ret = pool_parse_debugging("poison", &err);
	ck_assert_int_eq(pool_parse_debugging("no-poison", &err), 0);
	out = open_memstream(&c->cli, &len);
	ck_assert_ptr_nonnull(out);
	c->cli_ret = pool_cli_exec("pools limit fe-task 7", out);
	fclose(out);
	pool_trim();
	return 0;
}

/* pool_gc(NULL), pool_dump(), pool_parse_debugging(), pool_cli_exec() and the rest. */
START_TEST(test_callback_calls_library)
{
	struct pool_head *p[NPOOLS];
	struct calls c;

	memset(&c, 0, sizeof(c));
	make_pools(p);
	pool_for_each(call_everything, &c);
	ck_assert_uint_ge(c.visits, NPOOLS);
	ck_assert_int_eq(c.stats_ret, 0);
	ck_assert(c.name_ok);
	ck_assert_int_eq(c.dump_ret, 0);
	ck_assert_msg(strstr(c.dump, "fe-conn-a") && strstr(c.dump, "fe-other"), "%s", c.dump);
	ck_assert_int_eq(c.debug_ret, 0);
	ck_assert_int_eq(c.cli_ret, 0);
	ck_assert_msg(strstr(c.cli, "Limit of pool 'fe-task' now 7 objects"), "%s", c.cli);
	ck_assert_uint_eq(test_stats(p[2]).limit, 7);
	free(c.dump);
	free(c.cli);
	destroy_pools(p, NPOOLS);
}
END_TEST

struct nested {
	unsigned int outer, inner;
};

static int count_one(struct pool_head *pool, void *arg)
{
	(void)pool;
	(*(unsigned int *)arg)++;
	return 0;
}

static int walk_again(struct pool_head *pool, void *arg)
{
	struct nested *n = arg;

	(void)pool;
	n->outer++;
	pool_for_each(count_one, &n->inner);
	return 0;
}

/* A walk inside a walk sees every pool each time. */
START_TEST(test_nested_walks)
{
	struct pool_head *p[NPOOLS];
	struct nested n = { 0, 0 };
	unsigned int all = 0;

	make_pools(p);
	pool_for_each(count_one, &all);
	ck_assert_uint_ge(all, NPOOLS);
	pool_for_each(walk_again, &n);
	ck_assert_uint_eq(n.outer, all);
	ck_assert_uint_eq(n.inner, all * all);
	destroy_pools(p, NPOOLS);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Core: creating and destroying pools from the callback                                      */
/* ------------------------------------------------------------------------------------------ */

struct creating {
	unsigned int visits, made;
	struct pool_head *made_pool[NPOOLS];
};

/* For every fe-conn pool, create a pool: the walk does not visit the pools it created. */
static int create_per_pool(struct pool_head *pool, void *arg)
{
	struct creating *c = arg;
	char name[32];

	c->visits++;
	if (strncmp(pool_name(pool), "fe-", 3) != 0)
		return 0;
	ck_assert_msg(strncmp(pool_name(pool), "fe-new-", 7) != 0,
	              "the walk visited a pool created during it");
	snprintf(name, sizeof(name), "fe-new-%u", c->made);
	c->made_pool[c->made++] = make_pool(name, 48);
	return 0;
}

START_TEST(test_callback_creates_pools)
{
	struct pool_head *p[NPOOLS];
	struct creating c;
	unsigned int all = 0, after = 0;

	memset(&c, 0, sizeof(c));
	make_pools(p);
	pool_for_each(count_one, &all);
	pool_for_each(create_per_pool, &c);
	ck_assert_uint_eq(c.visits, all);
	ck_assert_uint_eq(c.made, NPOOLS);
	pool_for_each(count_one, &after);
	ck_assert_uint_eq(after, all + NPOOLS);
	destroy_pools(c.made_pool, NPOOLS);
	destroy_pools(p, NPOOLS);
}
END_TEST

struct destroying {
	struct pool_head **p;
	char seen[NPOOLS];
	unsigned int visits;
};

static int index_of(struct destroying *d, struct pool_head *pool)
{
	int i;

	for (i = 0; i < NPOOLS; i++)
		if (d->p[i] == pool)
			return i;
	return -1;
}

/*
 * Visiting fe-conn-a destroys it and fe-conn-b (the next pool); visiting fe-task destroys
 * fe-other (the last pool); fe-conn-c destroys fe-task (the previous one, already visited).
 */
static int destroy_some(struct pool_head *pool, void *arg)
{
	struct destroying *d = arg;
	int i = index_of(d, pool);

	d->visits++;
	if (i < 0)
		return 0;
	ck_assert_msg(!d->seen[i], "pool %d visited twice", i);
	d->seen[i] = 1;
	switch (i) {
	case 0:
		ck_assert_int_eq(pool_destroy(d->p[0]), 0);
		ck_assert_int_eq(pool_destroy(d->p[1]), 0);
		d->p[0] = d->p[1] = NULL;
		break;
	case 2:
		ck_assert_int_eq(pool_destroy(d->p[5]), 0);
		d->p[5] = NULL;
		break;
	case 3:
		ck_assert_int_eq(pool_destroy(d->p[2]), 0);
		d->p[2] = NULL;
		break;
	}
	return 0;
}

/* Destroying the pool being visited, the next, the last and a visited one: the walk goes on. */
START_TEST(test_callback_destroys_pools)
{
	struct pool_head *p[NPOOLS];
	struct destroying d;
	unsigned int left = 0;

	memset(&d, 0, sizeof(d));
	make_pools(p);
	d.p = p;
	pool_for_each(destroy_some, &d);
	/* visited: 0 (destroys 0 and 1), 2 (destroys 5), 3 (destroys 2), 4; never 1 or 5 */
	ck_assert(d.seen[0] && !d.seen[1] && d.seen[2] && d.seen[3] && d.seen[4] && !d.seen[5]);
	pool_for_each(count_one, &left);
	ck_assert_uint_eq(left, d.visits - 2);
	ck_assert(!p[0] && !p[1] && !p[2] && !p[5]);
	ck_assert_str_eq(pool_name(p[3]), "fe-conn-c");
	destroy_pools(p, NPOOLS);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Threads: fork() from a callback                                                            */
/* ------------------------------------------------------------------------------------------ */

static int fork_in_callback(struct pool_head *pool, void *arg)
{
	int *status = arg;
	pid_t pid;

	if (strcmp(pool_name(pool), "fe-task") != 0)
		return 0;
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* the child goes on in the callback, then creates and destroys a pool */
		struct pool_head *q = pool_create("fe-child", 32, 0);
		void *o = q ? pool_alloc(q) : NULL;

		if (!o)
			_exit(2);
		pool_free(q, o);
		_exit(pool_destroy(q) == 0 && pool_set_limit(pool, 3) == 0 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, status, 0), pid);
	return 1;
}

START_TEST(test_fork_in_callback)
{
	struct pool_head *p[NPOOLS];
	int status = -1;

	make_pools(p);
	pool_for_each(fork_in_callback, &status);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	/* and the parent's lock was given back: */
	ck_assert_int_eq(pool_set_limit(p[0], 5), 0);
	destroy_pools(p, NPOOLS);
}
END_TEST

static Suite *foreach_suite(void)
{
	Suite *s = suite_create("foreach");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_callback_limits_matching_pools);
	tcase_add_test(tc, test_callback_calls_library);
	tcase_add_test(tc, test_nested_walks);
	tcase_add_test(tc, test_callback_creates_pools);
	tcase_add_test(tc, test_callback_destroys_pools);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_fork_in_callback);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(foreach_suite)
