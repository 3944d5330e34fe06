/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Helpers shared by the Check tests: running a function in a child process and capturing what
 * it writes on stderr, to check both how it died and the words of its report; a pool's stats;
 * capturing what a function writes to a stream; counting lines; the main() of a test program;
 * running this test program again, or a shell command, and capturing its output.
 */
#ifndef POOL_TESTS_TESTUTIL_H
#define POOL_TESTS_TESTUTIL_H

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

struct death {
	int status;             /* from waitpid() */
	char out[16384];        /* what the child wrote on stderr, NUL-terminated */
};

/* Run fn(arg) in a child with stderr captured; the child exits 0 if fn returns. */
static inline void run_child(void (*fn)(void *), void *arg, struct death *d)
{
	int fds[2];
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	memset(d, 0, sizeof(*d));
	ck_assert_int_eq(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sigaction sa;

		/* the report must come from the library, not from a handler of Check's */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGABRT, &sa, NULL);
		close(fds[0]);
		dup2(fds[1], 2);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	while (n < sizeof(d->out) - 1 && (r = read(fds[0], d->out + n, sizeof(d->out) - 1 - n)) > 0)
		n += (size_t)r;
	close(fds[0]);
	d->out[n] = 0;
	ck_assert_int_eq(waitpid(pid, &d->status, 0), pid);
}

/* The child must have died of `sig` and its stderr must contain every word of `words`. */
static inline void expect_death(void (*fn)(void *), void *arg, int sig, const char *const *words)
{
	struct death d;

	run_child(fn, arg, &d);
	ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == sig,
	              "expected death by signal %d, got status 0x%x; stderr:\n%s", sig, d.status,
	              d.out);
	for (; words && *words; words++)
		ck_assert_msg(strstr(d.out, *words) != NULL, "report lacks '%s'; stderr:\n%s", *words,
		              d.out);
}

/* The statistics of `pool` (the call must succeed). */
static inline struct pool_stats test_stats(const struct pool_head *pool)
{
	struct pool_stats st;

	ck_assert_int_eq(pool_get_stats(pool, &st), 0);
	return st;
}

/* Lines in `s` (a final line without "\n" counts too). */
static inline unsigned int test_count_lines(const char *s)
{
	unsigned int n = 0;

	for (; s && *s; s++)
		n += *s == '\n' || !s[1];
	return n;
}

/* Read fd until EOF into out (at most size - 1 bytes, then NUL-terminated); the length read. */
static inline size_t test_read_all(int fd, char *out, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n < size - 1 && (r = read(fd, out + n, size - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	return n;
}

/*
 * Run this test program again (/proc/self/exe) with `argv`, its stdout and stderr captured into
 * out (size bytes, NUL-terminated), with the environment variable `name` set to `value` (unset
 * when value is NULL; untouched when name is NULL). Returns its wait status.
 */
static inline int test_run_self(char *const argv[], const char *name, const char *value,
                                char *out, size_t size)
{
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		if (name && value)
			setenv(name, value, 1);
		else if (name)
			unsetenv(name);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(fds[1]);
	test_read_all(fds[0], out, size);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

/* The output of the shell command `cmd`, malloc()ed; *status receives pclose()'s. */
static inline char *test_run_command(const char *cmd, int *status)
{
	char chunk[4096], *out = NULL;
	size_t len = 0, n;
	FILE *f = popen(cmd, "r"), *o;

	ck_assert_ptr_nonnull(f);
	o = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(o);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, o);
	*status = pclose(f);
	ck_assert_int_eq(fclose(o), 0);
	return out;
}

/*
 * Run fn(out, arg) with `out` an in-memory stream and return what it wrote (malloc()ed, free()
 * it); *ret receives fn's return value.
 */
static inline char *test_capture(int (*fn)(FILE *out, const char *arg), const char *arg,
                                 int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(out);
	*ret = fn(out, arg);
	fclose(out);
	return buf;
}

/* The main() of a Check test program: runs `suite_fn`'s suite, fails iff a test failed. */
#define POOL_TEST_MAIN(suite_fn)                                                    \
	int main(void)                                                             \
	{                                                                          \
		SRunner *sr = srunner_create(suite_fn());                          \
		int failed;                                                        \
		srunner_run_all(sr, CK_NORMAL);                                    \
		failed = srunner_ntests_failed(sr);                                \
		srunner_free(sr);                                                  \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;                       \
	}

#endif
