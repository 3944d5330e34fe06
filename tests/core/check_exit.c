/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Clean exits: main() returns while detached threads still allocate from and free to
 * POOL_DECLARE pools. Nothing may destroy those pools at exit (the destructors only flush the
 * exiting thread's cache), so no run may crash. Each run is a child process running this program
 * with `--child`; POOL_EXIT_RUNS sets the number of runs (50 by default, 20 under TSan;
 * `make stress` runs 1000). In an AddressSanitizer build the children run with LeakSanitizer on
 * (tests/run.sh turns it off for the other tests): what the pools hold at exit must stay
 * reachable.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pool/pool.h>

#include "testutil.h"

POOL_DECLARE(exit_small, "exit-small", 64)
POOL_DECLARE(exit_big, "exit-big", 4096)

#if TEST_ASAN
#define LEAK_CHECKER 1
#endif

#define WORKERS      4
#define KEEP         64            /* objects a worker keeps live while it churns */
/* runs by default; under ThreadSanitizer a run costs about 1 s on 2 cores, so fewer */
#define RUNS_DEF     (TEST_TSAN ? 20u : 50u)
#define RUNS_MAX     100000

static atomic_uint started;

/*
 * Allocate and free forever: in exit-small each object is freed at once (so that the pool often
 * has nothing handed out, and a destructor that destroyed it would succeed), in exit-big up to
 * KEEP objects stay live.
 */
static void *worker_main(void *arg)
{
	void *keep[KEEP] = { NULL };
	unsigned long i;

	(void)arg;
	for (i = 0;; i++) {
		unsigned int k = (unsigned int)(i % KEEP);
		void *o = pool_alloc(exit_small);

		if (o)
			memset(o, 0x5A, 64);
		pool_free(exit_small, o);
		pool_free(exit_big, keep[k]);
		keep[k] = pool_alloc(exit_big);
		if (keep[k])
			memset(keep[k], 0xA5, 4096);
		if (i == 1000)
			atomic_fetch_add(&started, 1);
		if (i % 4096 == 0)
			pool_thread_flush();    /* the shared lists and the OS layer see traffic too */
	}
	return NULL;
}

/* The child: start detached workers, let them run, return from main() under their feet. */
static int child(void)
{
	pthread_attr_t attr;
	pthread_t tid;
	int i;

	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0)
		return 2;
	for (i = 0; i < WORKERS; i++)
		if (pthread_create(&tid, &attr, worker_main, NULL) != 0)
			return 2;
	while (atomic_load(&started) < WORKERS)
		sched_yield();
	return 0;
}

static unsigned int runs(void)
{
	const char *e = getenv("POOL_EXIT_RUNS");
	char *end;
	unsigned long v;

	if (!e || !*e)
		return RUNS_DEF;
	errno = 0;
	v = strtoul(e, &end, 10);
	ck_assert_msg(!errno && !*end && v >= 1 && v <= RUNS_MAX,
	              "POOL_EXIT_RUNS='%s': expected 1..%u", e, RUNS_MAX);
	return (unsigned int)v;
}

START_TEST(test_exit_while_threads_allocate)
{
	static char out[16384];
	char *const argv[] = { "check_exit", "--child", NULL };
	const char *env_name = NULL, *env_value = NULL;
	unsigned int n = runs(), run, crashed = 0;
	int first_sig = 0;
#ifdef LEAK_CHECKER
	char opts[1024];
	const char *cur = getenv("ASAN_OPTIONS");

	/* the last setting of an option wins */
	snprintf(opts, sizeof(opts), "%s%sdetect_leaks=1", cur ? cur : "", cur && *cur ? ":" : "");
	env_name = "ASAN_OPTIONS";
	env_value = opts;
#endif

	for (run = 0; run < n; run++) {
		int status = test_run_self(argv, env_name, env_value, out, sizeof(out));

		if (WIFSIGNALED(status)) {
			if (!crashed++)
				first_sig = WTERMSIG(status);
			continue;
		}
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "run %u: the child exited with status %d (2: setup, 127: exec):\n%s",
		              run, WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
	}
	ck_assert_msg(crashed == 0, "%u of %u exits crashed (first: signal %d)", crashed, n,
	              first_sig);
}
END_TEST

static Suite *exit_suite(void)
{
	Suite *s = suite_create("exit");
	TCase *tc = tcase_create("Exit");

	tcase_set_timeout(tc, 1800);
	tcase_add_test(tc, test_exit_while_threads_allocate);
	suite_add_tcase(s, tc);
	return s;
}

/* `check_exit --child`: the program whose exits the test watches */
static int before(int argc, char **argv)
{
	return argc == 2 && !strcmp(argv[1], "--child") ? child() : -1;
}

POOL_TEST_MAIN_ARGS(exit_suite, before)
