/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Guard pages in production (`guard` debugging): a share of the profile's samples between
 * inaccessible pages, and the report of what faults there. A public-API test (<pool/pool.h>
 * only): every allocation is sampled (profile=1) and guarded (guard, 100% by default), so that
 * the object a test allocates is a guarded one. The test is linked with -rdynamic: dladdr(3),
 * which names the frames the handler prints, finds the allocating and freeing functions below.
 * Misuse: each bug in a child, which must die of SIGABRT with the report (run_child()), or
 * (tcase_add_test_raise_signal) die so in Check's own fork. Core: what stays the same for
 * the program: counts, a read past an unguarded sample, the handlers found before.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../testutil.h"

#define SIZE 208

/* Non-static and not inlined: dladdr(3) names them in the report's stacks. */
__attribute__((noinline)) void *guard_alloc_site(struct pool_head *p);
__attribute__((noinline)) void guard_free_site(struct pool_head *p, void *o);

void *guard_alloc_site(struct pool_head *p)
{
	void *o = pool_alloc(p);

	__asm__ volatile("" : "+r"(o));
	return o;
}

void guard_free_site(struct pool_head *p, void *o)
{
	pool_free(p, o);
	__asm__ volatile("" ::: "memory");
}

/* Every allocation sampled and guarded, in this process. */
static struct pool_head *guarded_pool(const char *name, size_t size)
{
	struct pool_head *p;

	ck_assert_int_eq(pool_parse_debugging("guard,profile=1", NULL), 0);
	p = pool_create(name, size, 0);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void overflow_child(void *arg)
{
	struct pool_head *p = guarded_pool("guarded", SIZE);
	volatile unsigned char *o = guard_alloc_site(p);

	(void)arg;
	o[0] = 1;
	o[SIZE] = 1;            /* one byte past the end: the guard page */
	_exit(9);
}

static void uaf_child(void *arg)
{
	struct pool_head *p = guarded_pool("guarded", SIZE);
	volatile unsigned char *o = guard_alloc_site(p);

	(void)arg;
	o[10] = 1;
	guard_free_site(p, (void *)o);
	(void)o[10];            /* a read after the free: the pages are inaccessible */
	_exit(9);
}

static void double_free_child(void *arg)
{
	struct pool_head *p = guarded_pool("guarded", SIZE);
	void *o = guard_alloc_site(p);

	(void)arg;
	guard_free_site(p, o);
	guard_free_site(p, o);
	_exit(9);
}

static void wrong_pool_child(void *arg)
{
	struct pool_head *p = guarded_pool("guarded", SIZE);
	struct pool_head *q = pool_create("other", SIZE, 0);
	void *o = guard_alloc_site(p);

	(void)arg;
	ck_assert_ptr_nonnull(q);
	pool_free(q, o);
	_exit(9);
}

static void interior_free_child(void *arg)
{
	struct pool_head *p = guarded_pool("guarded", SIZE);
	unsigned char *o = guard_alloc_site(p);

	(void)arg;
	pool_free(p, o + 16);
	_exit(9);
}

/* A page-sized object starts where its page does: the byte before it is the page before. */
static void underflow_child(void *arg)
{
	struct pool_head *p = guarded_pool("pages", (size_t)sysconf(_SC_PAGESIZE));
	volatile unsigned char *o = guard_alloc_site(p);

	(void)arg;
	o[-1] = 1;
	_exit(9);
}

START_TEST(test_guard_overflow_of_one_byte)
{
	static const char *const words[] = {
		"libpool: FATAL: overflow past the end of a sampled object in pool 'guarded' "
		"(208 bytes) object 0x",
		"(guard pages)\n",
		": 0 bytes past its end, write\n",
		"libpool:   allocated by thread ",
		"guard_alloc_site+0x",
		NULL
	};

	if (TEST_ASAN)
		return;   /* ASan's redzone past the object reports it first (check_asan.c) */
	expect_death(overflow_child, NULL, SIGABRT, words);
}
END_TEST

START_TEST(test_guard_use_after_free)
{
	static const char *const words[] = {
		"libpool: FATAL: use after free of a sampled object in pool 'guarded' (208 bytes)",
		": byte 10 of it, read\n",
		"libpool:   allocated by thread ",
		"guard_alloc_site+0x",
		"libpool:   freed by thread ",
		"guard_free_site+0x",
		NULL
	};

	expect_death(uaf_child, NULL, SIGABRT, words);
}
END_TEST

START_TEST(test_guard_double_free)
{
	static const char *const words[] = {
		"libpool: FATAL: double free of a sampled object in pool 'guarded' (208 bytes)",
		"libpool:   freed again by: guard_free_site+0x",
		"libpool:   freed by thread ",
		NULL
	};

	expect_death(double_free_child, NULL, SIGABRT, words);
}
END_TEST

START_TEST(test_guard_free_into_wrong_pool)
{
	static const char *const words[] = {
		"libpool: FATAL: free into the wrong pool of a sampled object in pool 'guarded'",
		"libpool:   freed into pool 'other' at 0x",
		NULL
	};

	expect_death(wrong_pool_child, NULL, SIGABRT, words);
}
END_TEST

START_TEST(test_guard_free_of_interior_address)
{
	static const char *const words[] = {
		"libpool: FATAL: free of an address inside a sampled object, not its start",
		NULL
	};

	expect_death(interior_free_child, NULL, SIGABRT, words);
}
END_TEST

START_TEST(test_guard_underflow)
{
	static const char *const words[] = {
		"libpool: FATAL: underflow before a sampled object in pool 'pages'",
		": 1 bytes before it, write\n",
		NULL
	};

	if (TEST_ASAN)
		return;   /* ASan's shadow is its report's business */
	expect_death(underflow_child, NULL, SIGABRT, words);
}
END_TEST

/* Check's own fork: the test dies of SIGABRT, the report's abort(). */
START_TEST(test_guard_overflow_aborts)
{
	struct pool_head *p = guarded_pool("aborts", SIZE);
	volatile unsigned char *o = guard_alloc_site(p);

	o[SIZE + 7] = 1;
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* What stays the same for the program                                                         */
/* ------------------------------------------------------------------------------------------ */

static sigjmp_buf caught;

/* An address no mapping holds, through an empty asm: the compiler cannot see it. */
static volatile int *bad_address(void)
{
	volatile int *p = (volatile int *)(uintptr_t)16;

	__asm__ volatile("" : "+r"(p));
	return p;
}

static void own_handler(int sig)
{
	(void)sig;
	siglongjmp(caught, 1);
}

/*
 * A fault outside the region goes to the handler the program installed before: guard's handler
 * chains to it (here, twice: the program's handler survives the first).
 */
START_TEST(test_guard_chains_to_the_program_handler)
{
	struct sigaction sa;
	volatile int caught_n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = own_handler;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
	guarded_pool("chained", SIZE);
	while (caught_n < 2) {
		if (sigsetjmp(caught, 1) == 0)
			*bad_address() = 1;
		caught_n++;
	}
	ck_assert_int_eq(caught_n, 2);
}
END_TEST

static void outside_child(void *arg)
{
	(void)arg;
	guarded_pool("outside", SIZE);
	*bad_address() = 1;
	_exit(9);
}

/*
 * Without a handler of the program's, a fault outside the region kills as it always did; with
 * one installed before libpool's (a sanitizer's: ASan, TSan, UBSan's SEGV report), that one
 * has it, and libpool reports nothing.
 */
START_TEST(test_guard_leaves_other_faults_alone)
{
	struct sigaction before;
	struct death d;

	ck_assert_int_eq(sigaction(SIGSEGV, NULL, &before), 0);
	run_child(outside_child, NULL, &d);
	if (!(before.sa_flags & SA_SIGINFO) && before.sa_handler == SIG_DFL)
		ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == SIGSEGV,
		              "status 0x%x: %s", d.status, d.out);
	else
		ck_assert_msg(!WIFEXITED(d.status) || WEXITSTATUS(d.status) != 9, "status 0x%x: %s",
		              d.status, d.out);
	ck_assert_ptr_null(strstr(d.out, "libpool: FATAL"));
}
END_TEST

/* A guarded sample counts in its pool as any object; freed, the pool can go. */
START_TEST(test_guard_counts_like_any_object)
{
	struct pool_head *p = guarded_pool("counted", SIZE);
	struct pool_stats st;
	void *o[10];
	int i;

	for (i = 0; i < 10; i++) {
		o[i] = guard_alloc_site(p);
		ck_assert_ptr_nonnull(o[i]);
		/* the object ends against its guard page: the next page is the guard */
		ck_assert_uint_eq(((uintptr_t)o[i] + SIZE) % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
		memset(o[i], 0xab, SIZE);
	}
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.used - st.cached, 10);
	for (i = 0; i < 10; i++)
		guard_free_site(p, o[i]);
	ck_assert_int_eq(pool_get_stats(p, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.used - st.cached, 0);
	pool_profile_stop();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* A sample the profile takes without guard starts its page: a read just past it is harmless. */
START_TEST(test_unguarded_sample_reads_past_its_end)
{
	struct pool_head *p;
	volatile unsigned char *o;

	ck_assert_int_eq(pool_profile_start(1), 0);
	p = pool_create("unguarded", SIZE, 0);
	o = guard_alloc_site(p);
	ck_assert_ptr_nonnull((void *)o);
	ck_assert_uint_eq((uintptr_t)o % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
	(void)o[SIZE + 8];
	guard_free_site(p, (void *)o);
	pool_profile_stop();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* `guard` is a -dM word: on, off, a share, shown; it implies the profile. */
START_TEST(test_guard_word)
{
	char buf[512];
	char *err = NULL;
	FILE *f;

	ck_assert_int_eq(pool_parse_debugging("guard=25", &err), 0);
	ck_assert_uint_ne(pool_debugging & POOL_DBG_GUARD, 0);
	ck_assert_uint_ne(pool_debugging & POOL_DBG_PROFILE, 0);
	f = fmemopen(buf, sizeof(buf), "w");
	ck_assert_ptr_nonnull(f);
	pool_debugging_show(f);
	fclose(f);
	ck_assert_msg(strstr(buf, ",guard=25,"), "%s", buf);
	ck_assert_int_eq(pool_parse_debugging("guard=101", &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "guard=101"));
	free(err);
	/* no profile, no guard */
	ck_assert_int_eq(pool_parse_debugging("no-profile", NULL), 0);
	ck_assert_uint_eq(pool_debugging & (POOL_DBG_GUARD | POOL_DBG_PROFILE), 0);
	ck_assert_int_eq(pool_parse_debugging("guard,no-guard", NULL), 0);
	ck_assert_uint_eq(pool_debugging & POOL_DBG_GUARD, 0);
	ck_assert_uint_ne(pool_debugging & POOL_DBG_PROFILE, 0);
	pool_profile_stop();
}
END_TEST

static Suite *guard_suite(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("Misuse");

	tcase_add_test(tc, test_guard_overflow_of_one_byte);
	/* under ASan its redzones, poisoning and quarantine see these first (its own business) */
	if (!TEST_ASAN) {
		tcase_add_test(tc, test_guard_use_after_free);
		tcase_add_test(tc, test_guard_double_free);
	}
	tcase_add_test(tc, test_guard_free_into_wrong_pool);
	tcase_add_test(tc, test_guard_free_of_interior_address);
	tcase_add_test(tc, test_guard_underflow);
	if (!TEST_ASAN)
		tcase_add_test_raise_signal(tc, test_guard_overflow_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	tc = tcase_create("Core");
	tcase_add_test(tc, test_guard_chains_to_the_program_handler);
	tcase_add_test(tc, test_guard_leaves_other_faults_alone);
	if (!TEST_ASAN) {
		tcase_add_test(tc, test_guard_counts_like_any_object);
		tcase_add_test(tc, test_unguarded_sample_reads_past_its_end);
	}
	tcase_add_test(tc, test_guard_word);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(guard_suite)
