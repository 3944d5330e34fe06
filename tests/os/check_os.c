/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The OS layer (src/os/pool-os.c) called directly: object memory aligned for every alignment and
 * for sizes that are and are not multiples of it, metadata zero-filled, the page-level calls the
 * use-after-free allocator needs (map, protect, a read that does not fault on a protected page),
 * the fault context a SIGSEGV handler reads (the crash report's), the allocator's name and usage,
 * the thread id, and when the jemalloc layer reads RLIMIT_AS: at load, pool_create(),
 * pool_trim()/pool_gc(), and after running out, never at a new thread's first call (160 threads
 * once cost 161 prlimit64 system calls; tests/os/test_syscalls.sh counts the system calls).
 *
 * Internal test: it includes "pool-os.h", the OS layer's private header, because the layer has
 * no public entry point; what pools get from it is checked through the public API in
 * check_pool.c (alignment, contents, with the thread cache and the shared lists on and off).
 */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <pool/pool.h>

#include "os/pool-os.h"
#include "testutil.h"

#define MiB (1024ul * 1024ul)

/* ------------------------------------------------------------------------------------------ */
/* Core: object and metadata memory                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Object memory, for sizes that are and are not multiples of the alignment. */
START_TEST(test_os_layer_alignment)
{
	static const size_t sizes[] = { 16, 24, 100, 4096, 4100, 65536 + 8 };
	size_t align;
	unsigned int s;

	for (align = 16; align <= 4096; align *= 2) {
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			void *p = pool__os_alloc(sizes[s], align);

			ck_assert_ptr_nonnull(p);
			ck_assert_msg(((uintptr_t)p & (align - 1)) == 0, "%p size %zu align %zu", p,
			              sizes[s], align);
			memset(p, 0x5a, sizes[s]);
			pool__os_free(p, sizes[s], align);
		}
	}
}
END_TEST

/* Metadata comes zero-filled and aligned, also where freed memory was dirty just before. */
START_TEST(test_meta_alloc_zeroed)
{
	static const size_t sizes[] = { 8, 64, 100, 4096, 5000 };
	size_t align, i;
	unsigned int s, round;

	for (align = 8; align <= 4096; align *= 2) {
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			for (round = 0; round < 2; round++) {
				unsigned char *p = pool__os_meta_alloc(sizes[s], align);
				size_t nonzero = 0;

				ck_assert_ptr_nonnull(p);
				ck_assert_uint_eq((uintptr_t)p & (align - 1), 0);
				for (i = 0; i < sizes[s]; i++)
					nonzero += p[i] != 0;
				ck_assert_msg(nonzero == 0, "size %zu align %zu: %zu bytes not zero",
				              sizes[s], align, nonzero);
				memset(p, 0xff, sizes[s]);   /* the next round may get it back */
				pool__os_meta_free(p, sizes[s], align);
			}
		}
	}
	pool__os_meta_free(NULL, 64, 64);   /* no-op */
}
END_TEST

/* The name pools report, the allocator the build chose; usage grows with what it handed out. */
START_TEST(test_name_and_usage)
{
	struct pool_head *pool = pool_create("os-name", 64, 0);
	size_t alloc0, res0, alloc1, res1;
	unsigned char *p;

	ck_assert_ptr_nonnull(pool);
	ck_assert_str_eq(pool__os_name(), POOL_USE_JEMALLOC ? "jemalloc" : "libc");
	ck_assert_str_eq(test_os_stats().layer, pool__os_name());
	pool__os_usage(&alloc0, &res0);
	p = pool__os_alloc(16 * MiB, 64);
	ck_assert_ptr_nonnull(p);
	memset(p, 1, 16 * MiB);
	pool__os_usage(&alloc1, &res1);
	if (alloc0 == 0 && alloc1 == 0) {
		/* an allocator that cannot tell (a sanitizer's, in place of the C library's) */
		printf("check_os: %s cannot report its usage here\n", pool__os_name());
	} else {
		ck_assert_uint_ge(alloc1, alloc0 + 16 * MiB);
		ck_assert_uint_ge(res1, 16 * MiB);
	}
	pool__os_free(p, 16 * MiB, 64);
	pool__os_trim();
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

static void *thread_id_of(void *arg)
{
	*(unsigned long *)arg = pool__os_thread_id();
	return NULL;
}

/* The kernel's thread id: gettid() for this thread, another one for another thread. */
START_TEST(test_thread_id)
{
	unsigned long other = 0;
	pthread_t t;

	ck_assert_uint_eq(pool__os_thread_id(), (unsigned long)syscall(SYS_gettid));
	ck_assert_uint_eq(pool__os_thread_id(), (unsigned long)getpid());   /* the main thread */
	ck_assert_int_eq(pthread_create(&t, NULL, thread_id_of, &other), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_ne(other, 0);
	ck_assert_uint_ne(other, pool__os_thread_id());
}
END_TEST

static void *first_call_thread(void *arg)
{
	struct pool_head *pool = arg;
	void *o = pool_alloc(pool);

	ck_assert_ptr_nonnull(o);
	pool_free(pool, o);
	return NULL;
}

#define CHURN_THREADS 160

/*
 * 160 new threads, each with its first call into the OS layer: RLIMIT_AS is not read again.
 * pool_create() and pool_trim() read it (a program that set the limit after the library was
 * loaded calls one of them: doc/debugging.md). The C library layer never reads it.
 */
START_TEST(test_new_threads_do_not_read_the_limit)
{
	struct pool_head *pool;
	unsigned long before, after;
	pthread_t t[8];
	int i, k;

	before = pool__os_limit_reads();
	pool = pool_create("os-churn", 64, 0);
	ck_assert_ptr_nonnull(pool);
	after = pool__os_limit_reads();
	ck_assert_uint_eq(after - before, POOL_USE_JEMALLOC ? 1 : 0);
	before = after;
	for (i = 0; i < CHURN_THREADS; i += 8) {
		for (k = 0; k < 8; k++)
			ck_assert_int_eq(pthread_create(&t[k], NULL, first_call_thread, pool), 0);
		for (k = 0; k < 8; k++)
			ck_assert_int_eq(pthread_join(t[k], NULL), 0);
	}
	after = pool__os_limit_reads();
	ck_assert_msg(after == before, "%lu reads of RLIMIT_AS for %d new threads", after - before,
	              CHURN_THREADS);
	pool_trim();
	ck_assert_uint_eq(pool__os_limit_reads() - after, POOL_USE_JEMALLOC ? 1 : 0);
	ck_assert_int_eq(pool_destroy(pool), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Pages: what the use-after-free allocator and the crash report use                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * Two mapped pages, the second made inaccessible: reading it with pool__os_safe_read() fails
 * without a fault, the first page still reads, and access comes back with what was written.
 */
START_TEST(test_map_protect_safe_read)
{
	size_t page = pool__os_page_size();
	unsigned char *m, buf[64];

	ck_assert_uint_eq(page, (size_t)sysconf(_SC_PAGESIZE));
	ck_assert_uint_eq(page & (page - 1), 0);
	m = pool__os_map(2 * page);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq((uintptr_t)m & (page - 1), 0);
	ck_assert_uint_eq(m[0], 0);                      /* anonymous: zero-filled */
	memset(m, 0x11, page);
	memset(m + page, 0x22, page);
	ck_assert_int_eq(pool__os_protect(m + page, page, 0), 0);
	ck_assert_int_eq(pool__os_safe_read(buf, m + page - 32, 32), 0);
	ck_assert_uint_eq(buf[0], 0x11);
	ck_assert_uint_eq(buf[31], 0x11);
	ck_assert_int_eq(pool__os_safe_read(buf, m + page, sizeof(buf)), -1);
	ck_assert_int_eq(pool__os_safe_read(buf, m + page - 32, sizeof(buf)), -1);   /* straddles */
	ck_assert_int_eq(pool__os_safe_read(buf, NULL, sizeof(buf)), -1);
	ck_assert_int_eq(pool__os_protect(m + page, page, 1), 0);
	ck_assert_int_eq(pool__os_safe_read(buf, m + page - 32, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[31], 0x11);
	ck_assert_uint_eq(buf[32], 0x22);
	ck_assert_uint_eq(m[2 * page - 1], 0x22);
	pool__os_unmap(m, 2 * page);
	ck_assert_int_eq(pool__os_safe_read(buf, m, sizeof(buf)), -1);   /* unmapped */
}
END_TEST

struct fault_seen {
	int handled;          /* the SIGSEGV handler ran */
	int write_fault;      /* what pool__os_fault_context() said */
	uintptr_t pc;         /* the instruction address it gave, 0 when none */
};

static struct fault_seen *fault_result;
static volatile unsigned char *fault_page;

/* Global, not static, so that dladdr() names it: the faulting instruction must lie in it. */
void os_touch(int write);
__attribute__((noinline)) void os_touch(int write)
{
	if (write)
		fault_page[8] = 1;
	else
		(void)fault_page[8];
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
	const void *pc;
	int write_fault;

	(void)sig;
	(void)si;
	pool__os_fault_context(uctx, &pc, &write_fault);
	fault_result->handled = 1;
	fault_result->write_fault = write_fault;
	fault_result->pc = (uintptr_t)pc;
	_exit(0);
}

/* In a child: touch a protected page (a write when *arg is 1, else a read) and catch it. */
static void fault_child(void *result, const void *arg)
{
	struct sigaction sa;
	size_t page = pool__os_page_size();

	fault_result = result;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	fault_page = pool__os_map(page);
	if (!fault_page || pool__os_protect((void *)fault_page, page, 0) != 0)
		_exit(2);
	os_touch(*(const int *)arg);
	_exit(3);   /* the access did not fault */
}

/*
 * The crash report's view of a fault: a write or a read, and where. x86-64 reads the page-fault
 * error code and RIP; elsewhere the layer says it cannot tell (NULL, -1).
 */
START_TEST(test_fault_context)
{
	int kinds[2] = { 1, 0 }, i;

	for (i = 0; i < 2; i++) {
		struct fault_seen r;
		struct death d;

		test_child_result(fault_child, &kinds[i], &r, sizeof(r), &d);
		ck_assert_msg(r.handled, "%s: the handler did not run", kinds[i] ? "write" : "read");
#if defined(__x86_64__)
		{
			Dl_info info;

			ck_assert_int_eq(r.write_fault, kinds[i]);
			/* the child is a fork() of this process: the same addresses */
			ck_assert_int_ne(dladdr((void *)r.pc, &info), 0);
			ck_assert_ptr_nonnull(info.dli_sname);
			ck_assert_str_eq(info.dli_sname, "os_touch");
		}
#else
		ck_assert_int_eq(r.write_fault, -1);
		ck_assert_uint_eq(r.pc, 0);
#endif
	}
}
END_TEST

static Suite *os_suite(void)
{
	Suite *s = suite_create("os");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_os_layer_alignment);
	tcase_add_test(tc, test_meta_alloc_zeroed);
	tcase_add_test(tc, test_name_and_usage);
	tcase_add_test(tc, test_thread_id);
	tcase_add_test(tc, test_new_threads_do_not_read_the_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("Pages");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_map_protect_safe_read);
	tcase_add_test(tc, test_fault_context);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(os_suite)
