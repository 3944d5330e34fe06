/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Helpers shared by the Check tests: running a function in a child process and capturing what
 * it writes on stderr, to check both how it died and the words of its report, or to bring back
 * what it saw; a pool's stats; capturing what a function writes to a stream; counting lines and
 * words; the main() of a test program; running this test program again, or a shell command, and
 * capturing its output.
 *
 * How the tests are laid out (every tests/<folder>/check_*.c follows it):
 * - Files. One <folder>/check_<module>.c per module. A file that includes only <pool/pool.h> (and
 *   this header) tests what users get: the Makefile builds it without -Isrc and links it with
 *   the shared library, so a hidden symbol or a private type is a build error there. A file
 *   that includes a private "pool-*.h" is an internal test: built with -Isrc, linked with the
 *   static library. Only tests that cannot be written through the public API go to an internal
 *   file, the one of their module: check_tier.c (the core tiers and the pool head),
 *   check_os.c (the OS layer), check_cli_int.c (the CLI server's loop and its fault sites),
 *   check_limit.c (the limit's count and its test hook), check_assert.c (the assertion tiers:
 *   states broken on purpose).
 *   Each file's header comment says which of the two it is, and why.
 * - Test names. Every START_TEST is test_<what it checks>, in snake_case, saying the behaviour
 *   rather than the function (test_trim_keeps_objects_in_use, test_bad_cache_size), so that a
 *   failure line of Check ("check_x.c:12:F:Errors:test_bad_cache_size:0: ...") reads alone.
 * - TCase names. One capitalised word for the kind of test, the house style's: Core (what the
 *   module does with good input), Limits (bounds, sizes and limits at their edges), Errors (bad
 *   input and failures: a clear error and nothing lost), Threads (concurrency), Misuse (the
 *   program's bugs caught and reported: death tests), Faults (injected allocation failures);
 *   a module adds a word of its own only for a group of its own (Socket, Formats, Bind).
 *   CK_RUN_CASE=<name> runs one case (tests/debug/test_debug_modes.sh runs check_pool's Threads).
 * - main(). POOL_TEST_MAIN(suite_fn), or POOL_TEST_MAIN_ARGS(suite_fn, before_fn) for a
 *   program that clears its environment first or is also its own child (test_run_self()).
 * - Helpers. Anything two test files need goes here (or, for the CLI socket tests only, into
 *   tests/introspect/testcli.h), never into a local copy.
 */
#ifndef POOL_TESTS_TESTUTIL_H
#define POOL_TESTS_TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pool/pool.h>

/*
 * The sanitizer this program was built with, 1 or 0: gcc says so with __SANITIZE_ADDRESS__ and
 * __SANITIZE_THREAD__, clang with __has_feature(). (UBSan has neither: the Makefile defines
 * POOL_SAN_UNDEFINED.)
 */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif

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

struct test_child_call {
	void (*fn)(void *result, const void *arg);
	void *result;
	const void *arg;
};

static inline void test_child_call(void *call)
{
	struct test_child_call *c = call;

	c->fn(c->result, c->arg);
}

/*
 * Run fn(result, arg) in a child (run_child()), which must exit 0, and copy the `size` bytes it
 * left in its `result` (zeroed first, and shared with the child through an anonymous mapping)
 * into `result`; d receives the child's status and stderr. For what can be seen once per process
 * only: the configuration and the topology load at their first use.
 */
static inline void test_child_result(void (*fn)(void *result, const void *arg), const void *arg,
                                     void *result, size_t size, struct death *d)
{
	void *shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct test_child_call call = { fn, shared, arg };

	ck_assert(shared != MAP_FAILED);
	run_child(test_child_call, &call, d);
	ck_assert_msg(WIFEXITED(d->status) && WEXITSTATUS(d->status) == 0,
	              "the child ended with status 0x%x; stderr:\n%s", d->status, d->out);
	memcpy(result, shared, size);
	ck_assert_int_eq(munmap(shared, size), 0);
}

/*
 * A write after free into a cached object: our check reports it when the object leaves the
 * cache; in an ASan build, ASan sees the write itself first (the object is poisoned), which is
 * what we want there, and the process exits with ASan's report instead.
 */
static inline void test_expect_write_after_free_arg(void (*fn)(void *), void *arg,
                                                    const char *const *words)
{
#if defined(__SANITIZE_ADDRESS__)
	struct death d;

	(void)words;
	run_child(fn, arg, &d);
	ck_assert_msg(!(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0), "%s", d.out);
	ck_assert_msg(strstr(d.out, "AddressSanitizer: use-after-poison") != NULL, "%s", d.out);
#else
	expect_death(fn, arg, SIGABRT, words);
#endif
}

static inline void test_expect_write_after_free(void (*fn)(void *),
                                                const char *const *words)
{
	test_expect_write_after_free_arg(fn, NULL, words);
}

/*
 * Threads of this process named `comm` ("pool-releaser": libpool's releaser thread), from
 * /proc/self/task; -1 when that cannot be read.
 */
static inline int test_threads_named(const char *comm)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[32];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;       /* the thread ended meanwhile */
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			n += !strcmp(buf, comm);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The statistics of `pool` (the call must succeed). */
static inline struct pool_stats test_stats(const struct pool_head *pool)
{
	struct pool_stats st;

	ck_assert_int_eq(pool_get_stats(pool, &st, sizeof(st)), 0);
	return st;
}

/*
 * Objects of `pool` handed out: used less cached (exact when the process is quiet). A refill
 * that reaches the slab tier takes half a magazine, so `used` counts the objects a thread
 * cache got with it too.
 */
static inline size_t test_handed_out(const struct pool_head *pool)
{
	struct pool_stats st = test_stats(pool);

	return st.used - st.cached;
}

/* The books of a quiet pool: what it holds is handed out, cached, shared or free in slabs. */
static inline void test_books(const struct pool_head *pool)
{
	struct pool_stats st = test_stats(pool);

	ck_assert_uint_ge(st.used, st.cached);
	ck_assert_uint_eq(st.allocated, st.used + st.shared_free + st.slab_free);
	ck_assert_uint_eq(st.allocated, st.os_allocs - st.os_releases - st.lost);
}

/*
 * How deep a thread's slot of a pool of `stride`-byte objects starts (pool-demand.c): the
 * configured cluster, or 1/16 of the thread budget for large objects, but at least 8 while
 * that is 1/4 of the budget at most; at least 1 (pool_configure(3)).
 */
static inline size_t test_depth_of(size_t stride)
{
	struct pool_config cfg;
	size_t share, most;

	pool_get_config(&cfg);
	share = cfg.cache_bytes / 16 / stride;
	most = cfg.cache_bytes / 4 / stride;
	if (share < 8)
		share = most < 8 ? (most > share ? most : share) : 8;
	return share < cfg.cluster ? (share ? share : 1) : cfg.cluster;
}

/*
 * The objects one magazine of such a pool holds, which a slot's loaded magazine may come to
 * hold as the slot goes deeper: the configured cluster, or 1/4 of the thread budget for large
 * objects, at least the starting depth.
 */
static inline size_t test_magazine_of(size_t stride)
{
	struct pool_config cfg;
	size_t cap;

	pool_get_config(&cfg);
	cap = cfg.cache_bytes / 4 / stride;
	if (cap > cfg.cluster)
		cap = cfg.cluster;
	return cap > test_depth_of(stride) ? cap : test_depth_of(stride);
}

/* The objects one magazine of `pool` holds. */
static inline size_t test_magazine(const struct pool_head *pool)
{
	return test_magazine_of(test_stats(pool).stride);
}

/* The objects a refill of pool_alloc() takes from the slab tier: half the starting depth, >= 1. */
static inline size_t test_slab_refill(const struct pool_head *pool)
{
	size_t m = test_depth_of(test_stats(pool).stride) / 2;

	return m ? m : 1;
}

/*
 * The pages that the objects objs[0..n) (`stride` bytes apart, the first `size` bytes of each
 * the program's) lie on, by what mincore(2) says of them: pages[0] gets the pages covered
 * wholly by objects that are not live (live[i] == 0) and still resident, pages[1] those no
 * longer resident, pages[2] the pages under part of a live object that are not resident. After
 * the slab tier's purge (pool__slab_purge()), pages[0] and pages[2] are 0. Each page is looked
 * at once, at the lowest object over it; a page no longer mapped counts as not resident.
 * Returns 0, or -1 when mincore() failed otherwise (errno as it set it).
 */
static inline int test_pages(void *const *objs, const unsigned char *live, unsigned int n,
                             size_t stride, size_t size, unsigned int pages[3])
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE), a, b, pg, lo, hi;
	unsigned int i, j;
	unsigned char v;

	pages[0] = pages[1] = pages[2] = 0;
	for (i = 0; i < n; i++) {
		a = (uintptr_t)objs[i];
		for (pg = a & ~(ps - 1); pg < a + stride; pg += ps) {
			size_t covered = 0;
			int any_live = 0, lowest = 1;

			for (j = 0; j < n && lowest; j++) {
				b = (uintptr_t)objs[j];
				lo = b > pg ? b : pg;
				hi = b + stride < pg + ps ? b + stride : pg + ps;
				if (hi <= lo)
					continue;
				lowest = b >= a;
				covered += hi - lo;
				any_live |= live[j] && b < pg + ps && b + size > pg;
			}
			if (!lowest)
				continue;
			if (mincore((void *)pg, ps, &v) != 0) {
				if (errno != ENOMEM)
					return -1;
				v = 0;    /* not mapped any more: a slab given back whole, unmapped */
			}
			if (any_live)
				pages[2] += !(v & 1);
			else if (covered == ps)
				pages[(v & 1) ? 0 : 1]++;
		}
	}
	return 0;
}

/* The figures of the OS layer (the call must succeed). */
static inline struct pool_os_stats test_os_stats(void)
{
	struct pool_os_stats os;

	ck_assert_int_eq(pool_get_os_stats(&os, sizeof(os)), 0);
	return os;
}

/* Lines in `s` (a final line without "\n" counts too). */
static inline unsigned int test_count_lines(const char *s)
{
	unsigned int n = 0;

	for (; s && *s; s++)
		n += *s == '\n' || !s[1];
	return n;
}

/* How many times `needle` occurs in `s` (occurrences may overlap). */
static inline unsigned int test_count(const char *s, const char *needle)
{
	unsigned int n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s++;
	}
	return n;
}

/*
 * Set the environment variable `name` to `value`, or unset it when value is NULL. Also for code
 * that runs outside a test (a `before` function, a child): a failure (ENOMEM) aborts.
 */
static inline void test_setenv(const char *name, const char *value)
{
	if ((value ? setenv(name, value, 1) : unsetenv(name)) != 0) {
		perror(name);
		abort();
	}
}

/*
 * The directory of the hwloc XML exports of large machines: $POOL_TOPOLOGY_DIR, or
 * tests/topologies (from the repository root, where make check runs the tests).
 */
static inline const char *test_topology_dir(void)
{
	const char *d = getenv("POOL_TOPOLOGY_DIR");

	return d && *d ? d : "tests/topologies";
}

static inline int test_library_seen(struct dl_phdr_info *info, size_t size, void *soname)
{
	const char *name = info->dlpi_name, *slash = strrchr(name, '/');

	(void)size;
	return strcmp(slash ? slash + 1 : name, (const char *)soname) == 0;
}

/*
 * Is the shared library `soname` in the process (libraries libpool loads itself: check_libs.c,
 * check_topology.c)? The loaded objects' names, from dl_iterate_phdr(3), which touches nothing
 * (a dlopen(3) with RTLD_NOLOAD before and after the library came confused LeakSanitizer's
 * accounting of dynamic TLS, which then crashed at exit).
 */
static inline int test_library_loaded(const char *soname)
{
	return dl_iterate_phdr(test_library_seen, (void *)soname) != 0;
}

/*
 * For a `before` function of POOL_TEST_MAIN_ARGS() in an AddressSanitizer build: unless
 * ASAN_OPTIONS already ends with `opts` (LeakSanitizer's, which tests/run.sh turns off for the
 * tests that end with objects handed out on purpose), re-execute this program with `opts`
 * appended. Returns -1 when they are in place (run the suite), 1 when execv() failed (said on
 * stderr); it does not return otherwise. `who` names the program in the message.
 */
static inline int test_reexec_with_asan_options(char **argv, const char *opts, const char *who)
{
	const char *cur = getenv("ASAN_OPTIONS");
	size_t n = cur ? strlen(cur) : 0, w = strlen(opts);
	char buf[1024];

	if (n >= w && strcmp(cur + n - w, opts) == 0)
		return -1;
	snprintf(buf, sizeof(buf), "%s%s%s", cur ? cur : "", n ? ":" : "", opts);
	setenv("ASAN_OPTIONS", buf, 1);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "%s: re-executing with ASAN_OPTIONS=%s: %s\n", who, buf, strerror(errno));
	return 1;
}

/*
 * A `before` function for POOL_TEST_MAIN_ARGS(): unset the variables that change the topology
 * and the configuration (HWLOC_XMLFILE, POOL_BUCKETS, POOL_CACHE_SIZE, POOL_DECAY_MS,
 * POOL_RELEASE), so that
 * the caller's environment changes nothing a test checks; returns -1 (run the suite).
 */
static inline int test_clear_environment(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	test_setenv("HWLOC_XMLFILE", NULL);
	test_setenv("POOL_BUCKETS", NULL);
	test_setenv("POOL_CACHE_SIZE", NULL);
	test_setenv("POOL_DECAY_MS", NULL);
	test_setenv("POOL_RELEASE", NULL);
	return -1;
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

/* python3, from /usr/bin when it is there (the Debian package the tests need). */
static inline const char *test_python3(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/*
 * Write `text` to a temporary file, run `script` (no single quote in it) on it with python3
 * (the file's path is sys.argv[1]), and return what the script printed, malloc()ed; the test
 * fails if the script does.
 */
static inline char *test_run_python(const char *text, const char *script)
{
	char path[] = "/tmp/pool_test_py_XXXXXX", *cmd, *out;
	size_t len = strlen(script) + 256;
	FILE *f;
	int fd = mkstemp(path), st;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	cmd = malloc(len);
	ck_assert_ptr_nonnull(cmd);
	snprintf(cmd, len, "%s -c '%s' %s 2>&1", test_python3(), script, path);
	out = test_run_command(cmd, &st);
	free(cmd);
	unlink(path);
	ck_assert_msg(st == 0, "python3 failed (%d): %s", st, out);
	return out;
}

/*
 * What fn(out, arg) writes to `out`, an in-memory stream, as a malloc()ed string (free() it),
 * e.g. test_capture(pool_dump, "byname", &ret). *ret receives fn's return value (ret may be
 * NULL); errno is left as fn left it (0 when fn set none), whatever closing the stream did.
 */
static inline char *test_capture(int (*fn)(FILE *out, const char *arg), const char *arg,
                                 int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int r, e;

	ck_assert_ptr_nonnull(out);
	errno = 0;
	r = fn(out, arg);
	e = errno;
	if (ret)
		*ret = r;
	ck_assert_int_eq(fclose(out), 0);
	errno = e;
	return buf;
}

/*
 * The main() of a Check test program (the Check manual's check_money.c): stdout line-buffered,
 * so that a test's lines reach the log before its forked child ends; then before(argc, argv)
 * when given, which returns an exit status to end the program there (a mode in which the
 * program is its own child, run through test_run_self()) or -1 to go on, after any setup of
 * its own (an environment cleared); then suite_fn()'s suite. Returns EXIT_FAILURE iff a test
 * failed.
 */
static inline int test_main(int argc, char **argv, Suite *(*suite_fn)(void),
                            int (*before)(int argc, char **argv))
{
	SRunner *sr;
	int failed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (before) {
		int status = before(argc, argv);

		if (status >= 0)
			return status;
	}
	sr = srunner_create(suite_fn());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* main() running `suite_fn`'s suite (see test_main()). */
#define POOL_TEST_MAIN(suite_fn)                                                   \
	int main(int argc, char **argv)                                            \
	{                                                                          \
		return test_main(argc, argv, suite_fn, NULL);                      \
	}

/* main() running before(argc, argv) first, then `suite_fn`'s suite (see test_main()). */
#define POOL_TEST_MAIN_ARGS(suite_fn, before)                                      \
	int main(int argc, char **argv)                                            \
	{                                                                          \
		return test_main(argc, argv, suite_fn, before);                    \
	}

#endif
