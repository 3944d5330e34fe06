/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool in sandboxes. One refuses process_vm_readv(2): a seccomp filter answering EPERM for
 * it, as an allow-list without it does (and a kernel without cross-memory attach answers
 * ENOSYS). The library once vouched for a pool head by reading its first word with that call,
 * so there every live pool looked invalid: pool_get_stats() and pool_set_limit() returned -1,
 * pool_name() NULL, `pools show` printed zeros, pool_destroy() failed with EINVAL, and
 * pool_gc(p) and pool_flush(p) did nothing. Now the set of known heads vouches for them without
 * reading memory: each of those calls must work, and a destroyed pool must still be refused.
 *
 * The other refuses clone(2) and clone3(2), as sandboxes that forbid new threads do: libpool's
 * releaser thread cannot start, pools work all the same, and memory still comes back by itself:
 * through the slow paths' look at the clock, and through pool_release_run(). Refused once
 * (EAGAIN, one thread under the filter), the start is said on stderr and tried again, and an
 * idle process gets its memory back once the thread starts.
 *
 * The filter is installed in a child process (run_child()), with PR_SET_NO_NEW_PRIVS so that an
 * unprivileged process may install it; raw BPF (the kernel's seccomp_filter.rst example), no
 * libseccomp. Where no filter can be installed (no CONFIG_SECCOMP_FILTER, a sandbox that forbids
 * it) or on an architecture the filter does not know, the program is skipped (exit 77).
 *
 * Public-API test: only <pool/pool.h>.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "testutil.h"

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef __NR_clone3
#define __NR_clone3 435         /* the same number on every architecture (Linux 5.3) */
#endif

#ifdef FILTER_ARCH
/*
 * Refuse the system calls nr[0..n-1] (n <= 2) with `err`; allow everything else. The filter is
 * the calling thread's, and its future threads': threads it started before keep theirs.
 */
static int refuse_syscalls(const int *nr, unsigned int n, int err)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr[0], 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr[n > 1 ? 1 : 0], 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(code) / sizeof(code[0])), code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#else
static int refuse_syscalls(const int *nr, unsigned int n, int err)
{
	(void)nr;
	(void)n;
	(void)err;
	errno = ENOSYS;
	return -1;
}
#endif

static int refuse_process_vm_readv(void)
{
	static const int nr[] = { __NR_process_vm_readv };

	return refuse_syscalls(nr, 1, EPERM);
}

/* In the sandbox the call must fail with EPERM: else the test proves nothing. */
static int readv_refused(void)
{
	char src[8] = "libpool", dst[8];
	struct iovec local = { dst, sizeof(dst) }, remote = { src, sizeof(src) };

	return syscall(__NR_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) < 0 &&
	       errno == EPERM;
}

#define CHILD_CHECK(cond)                                                           \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "sandbox child: failed: %s (line %d, errno %d)\n", \
			        #cond, __LINE__, errno);                            \
			_exit(1);                                                   \
		}                                                                   \
	} while (0)

/* What the child checks, under the filter; exit 0: all of it works. */
static void sandboxed(void *arg)
{
	struct pool_head *p, *q;
	struct pool_stats st;
	char *dump = NULL, used[64];
	size_t len = 0, i;
	FILE *out;
	void *objs[100];

	(void)arg;
	CHILD_CHECK(refuse_process_vm_readv() == 0);
	CHILD_CHECK(readv_refused());

	p = pool_create("sandboxed", 96, 0);
	q = pool_create("sandbox-other", 32, 0);
	CHILD_CHECK(p && q);
	CHILD_CHECK(pool_name(p) && !strcmp(pool_name(p), "sandboxed"));
	CHILD_CHECK(pool_object_size(p) == 96);
	CHILD_CHECK(pool_set_limit(p, 1000) == 0);
	for (i = 0; i < 100; i++)
		CHILD_CHECK((objs[i] = pool_alloc(p)) != NULL);
	CHILD_CHECK(pool_get_stats(p, &st, sizeof(st)) == 0);
	/* 100 handed out; refills take half a magazine from the slab tier, the rest cached */
	CHILD_CHECK(st.used - st.cached == 100 && st.limit == 1000 && st.size == 96);
	snprintf(used, sizeof(used), " %zu used", st.used);
	/* pools show: the real figures, not zeros */
	out = open_memstream(&dump, &len);
	CHILD_CHECK(out != NULL);
	CHILD_CHECK(pool_dump(out, "byname") == 0);
	CHILD_CHECK(fclose(out) == 0);
	CHILD_CHECK(strstr(dump, "sandboxed") != NULL);
	{
		/* the pool's line shows its 100 objects in use */
		const char *line = strstr(dump, "sandboxed");
		const char *end = strchr(line, '\n');
		char buf[512];
		size_t n = end ? (size_t)(end - line) : strlen(line);

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, line, n);
		buf[n] = 0;
		if (!strstr(buf, used)) {
			fprintf(stderr, "sandbox child: pools show line: %s\n", buf);
			_exit(1);
		}
	}
	free(dump);
	for (i = 0; i < 100; i++)
		pool_free(p, objs[i]);
	pool_thread_flush();
	CHILD_CHECK(pool_get_stats(p, &st, sizeof(st)) == 0 && st.shared_free == st.allocated &&
	            st.allocated >= 100);
	/* pool_gc(p) gives back what is not in use, with no floor, on its first call: down to
	 * the slabs, which go back once wholly free */
	pool_gc(p);
	CHILD_CHECK(pool_get_stats(p, &st, sizeof(st)) == 0 && st.allocated - st.slab_free < 100);
	/* pool_flush(p) gives back the rest */
	pool_flush(p);
	CHILD_CHECK(pool_get_stats(p, &st, sizeof(st)) == 0 && st.allocated == 0 &&
	            st.gc_released_bytes > 0);
	CHILD_CHECK(pool_destroy(p) == 0);
	/* a destroyed pool is refused, as outside the sandbox */
	errno = 0;
	CHILD_CHECK(pool_destroy(p) == -1 && errno == EINVAL);
	CHILD_CHECK(pool_get_stats(p, &st, sizeof(st)) == -1 && errno == EINVAL);
	CHILD_CHECK(pool_name(p) == NULL && pool_set_limit(p, 1) == -1);
	CHILD_CHECK(pool_destroy(q) == 0);
	_exit(0);
}

START_TEST(test_pools_work_without_process_vm_readv)
{
	struct death d;

	run_child(sandboxed, NULL, &d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
	              "the sandboxed child ended with status 0x%x; stderr:\n%s", d.status, d.out);
}
END_TEST

/* No new thread may start from this thread: clone() and clone3() answer `err`. */
static int refuse_threads(int err)
{
	static const int nr[] = { __NR_clone, __NR_clone3 };

	return refuse_syscalls(nr, 2, err);
}

static void *nothing(void *arg)
{
	return arg;
}

/* Allocate and free n objects of p, then flush this thread's cache to the shared lists. */
static void churn(struct pool_head *p, unsigned int n)
{
	void *o[4096];
	unsigned int i;

	for (i = 0; i < n; i++)
		CHILD_CHECK((o[i] = pool_alloc(p)) != NULL);
	for (i = 0; i < n; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
}

#define THREADLESS_WINDOW_MS 100u

/* What the child checks, without new threads; exit 0: all of it works. */
static void threadless(void *arg)
{
	struct pool_config cfg = { .decay_ms = THREADLESS_WINDOW_MS };
	struct pool_head *a, *b;
	struct pool_stats st;
	pthread_t t;
	unsigned int round;

	(void)arg;
	CHILD_CHECK(refuse_threads(EPERM) == 0);
	CHILD_CHECK(pthread_create(&t, NULL, nothing, NULL) != 0);
	CHILD_CHECK(pool_configure(&cfg) == 0);
	a = pool_create("threadless", 256, 0);
	b = pool_create("threadless-b", 256, 0);
	CHILD_CHECK(a && b);
	churn(a, 4096);
	churn(b, 4096);
	CHILD_CHECK(test_threads_named("pool-releaser") == 0);
	/*
	 * No releaser: the slow paths look at the clock. Small churns keep them coming; the 4096
	 * objects of the first churn go back once unused through a window (the deadline, 600
	 * windows, is a hang guard for a loaded machine).
	 */
	for (round = 0; round < 600; round++) {
		churn(a, 64);
		CHILD_CHECK(pool_get_stats(a, &st, sizeof(st)) == 0);
		if (st.allocated <= 256)
			break;
		usleep(THREADLESS_WINDOW_MS * 1000 / 10);
	}
	if (st.allocated > 256) {
		fprintf(stderr, "sandbox child: slow paths: allocated %zu of 4096 after %u rounds\n",
		        st.allocated, round);
		_exit(1);
	}
	/* pool b, idle: the event loop's call gives it back */
	for (round = 0; round < 600; round++) {
		unsigned int ms = pool_release_run();

		CHILD_CHECK(pool_get_stats(b, &st, sizeof(st)) == 0);
		if (st.allocated <= 64)
			break;
		usleep((ms < THREADLESS_WINDOW_MS / 10 ? ms : THREADLESS_WINDOW_MS / 10) * 1000);
	}
	if (st.allocated > 64) {
		fprintf(stderr, "sandbox child: pool_release_run(): allocated %zu of 4096\n",
		        st.allocated);
		_exit(1);
	}
	CHILD_CHECK(test_threads_named("pool-releaser") == 0);
	_exit(0);
}

START_TEST(test_memory_comes_back_where_threads_are_refused)
{
	struct death d;

	run_child(threadless, NULL, &d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
	              "the sandboxed child ended with status 0x%x; stderr:\n%s", d.status, d.out);
}
END_TEST

/*
 * The releaser's start refused once: the main thread, under a filter that answers EAGAIN to
 * clone() (RLIMIT_NPROC during start-up answers the same), takes a burst and frees it; a thread
 * started before the filter, which has none, then makes one slow path and exits; both stay
 * idle. The library must say once what failed and what it means, try again later, and once the
 * thread starts, give the burst back with no further call.
 */
#define RETRY_WINDOW_MS 100u
#define RETRY_BURST     20000u

static int go[2];               /* the late thread waits for a byte on go[0] */

static void *late_thread(void *arg)
{
	struct pool_head *p = arg;
	char c;
	void *o;

	CHILD_CHECK(read(go[0], &c, 1) == 1);
	/* past the longest wait between two tries (a window) */
	usleep(2 * RETRY_WINDOW_MS * 1000);
	CHILD_CHECK((o = pool_alloc(p)) != NULL);
	pool_free(p, o);
	return NULL;
}

static void retried(void *arg)
{
	struct pool_config cfg = { .decay_ms = RETRY_WINDOW_MS };
	struct pool_head *p;
	struct pool_stats st;
	pthread_t t, none;
	void **o = calloc(RETRY_BURST, sizeof(void *));
	unsigned int i, round;

	(void)arg;
	CHILD_CHECK(o && pool_configure(&cfg) == 0 && pipe(go) == 0);
	p = pool_create("retried", 1024, 0);
	CHILD_CHECK(p && pthread_create(&t, NULL, late_thread, p) == 0);
	CHILD_CHECK(refuse_threads(EAGAIN) == 0);
	CHILD_CHECK(pthread_create(&none, NULL, nothing, NULL) == EAGAIN);
	for (i = 0; i < RETRY_BURST; i++)
		CHILD_CHECK((o[i] = pool_alloc(p)) != NULL);
	CHILD_CHECK(test_threads_named("pool-releaser") == 0);
	for (i = 0; i < RETRY_BURST; i++)
		pool_free(p, o[i]);
	free(o);
	CHILD_CHECK(write(go[1], "", 1) == 1);
	CHILD_CHECK(pthread_join(t, NULL) == 0);
	/* idle from now on: only the releaser can give the burst back (150 windows: a hang guard) */
	for (round = 0; round < 1500; round++) {
		CHILD_CHECK(pool_get_stats(p, &st, sizeof(st)) == 0);
		if (st.allocated - st.slab_free <= 128)
			break;
		usleep(RETRY_WINDOW_MS * 1000 / 10);
	}
	if (st.allocated - st.slab_free > 128) {
		fprintf(stderr, "sandbox child: idle after a refused start: %zu objects held of %u, "
		        "%d releaser threads\n", st.allocated - st.slab_free, RETRY_BURST,
		        test_threads_named("pool-releaser"));
		_exit(1);
	}
	CHILD_CHECK(test_threads_named("pool-releaser") == 1);
	fprintf(stderr, "sandbox child: idle after a refused start: %zu objects held of %u after "
	        "%u tenths of a window\n", st.allocated - st.slab_free, RETRY_BURST, round);
	_exit(0);
}

START_TEST(test_a_refused_releaser_start_is_said_and_retried)
{
	static const char *const words[] = {
		"libpool: the releaser thread could not start", "pthread_create",
		"Resource temporarily unavailable", "a process that goes idle keeps", "retrying",
		"libpool: the releaser thread started", NULL
	};
	struct death d;
	const char *const *w;

	run_child(retried, NULL, &d);
	printf("check_sandbox: %s", d.out);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0,
	              "the sandboxed child ended with status 0x%x; stderr:\n%s", d.status, d.out);
	for (w = words; *w; w++)
		ck_assert_msg(strstr(d.out, *w) != NULL, "no '%s' in its stderr:\n%s", *w, d.out);
	/* one message, however many slow paths tried again */
	ck_assert_uint_eq(test_count(d.out, "could not start"), 1);
}
END_TEST

static Suite *sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("Sandbox");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_pools_work_without_process_vm_readv);
	tcase_add_test(tc, test_memory_comes_back_where_threads_are_refused);
	tcase_add_test(tc, test_a_refused_releaser_start_is_said_and_retried);
	suite_add_tcase(s, tc);
	return s;
}

/* Skip (exit 77) where no seccomp filter can be installed: try in a child first. */
static int before(int argc, char **argv)
{
	int status;
	pid_t pid;

	test_clear_environment(argc, argv);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(refuse_process_vm_readv() == 0 && readv_refused() ? 0 : 77);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("check_sandbox: skipped: no seccomp filter can refuse process_vm_readv "
		       "here\n");
		return 77;
	}
	return -1;
}

POOL_TEST_MAIN_ARGS(sandbox_suite, before)
