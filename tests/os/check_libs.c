/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The libraries libpool loads itself, with dlopen(3), rather than link them: libdw, libunwind
 * and hwloc. libunwind (src/debug/pool-stack.c): not loaded by linking libpool nor by using
 * pools, but when stacks are first wanted (pool__stack_prepare(): a profile, a report); a
 * thread's stacks past its first 48 (glibc's) are then libunwind's and still begin at the
 * caller. When it cannot be loaded (pool__libunwind_soname), or under TSan, they stay glibc's.
 * libdw (src/debug/pool-symbols.c): not loaded by linking libpool nor by using pools, but by
 * the first report that names frames; that report names a static function of this program with
 * its file and line (libdw reads .symtab and the line table). When libdw cannot be loaded
 * (pool__libdw_soname pointed at a library that does not exist), frames are named with
 * dladdr(3): the module and an offset for a static function, the dynamic symbol for an exported
 * one, and libdw stays unloaded. hwloc (src/config/topology.c): loaded to read the topology and
 * unloaded after it (check_topology.c checks that on this machine); when it cannot be loaded
 * (pool__hwloc_soname), the topology is sysconf()'s, said once on stderr with the reason.
 *
 * Internal test (it includes private headers): linked with the static library and what the
 * Makefile's LIB_LIBS names, which holds neither -ldw nor -lhwloc. Check runs each test in a
 * child process of its own, so each starts with nothing tried. Under ASan the program runs with
 * LeakSanitizer on (with_leak_checks()), which died at exit when hwloc's plugins had come and
 * gone before libdw was loaded (topology.c).
 */
#include <check.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <pool/pool.h>

#include "config/pool-topology.h"
#include "debug/pool-stack.h"
#include "debug/pool-symbols.h"
#include "testutil.h"

#define LIBDW "libdw.so.1"
#define LIBUNWIND "libunwind.so.8"
#define CAPTURES 100u   /* past pool-stack.c's COLD_CAPTURES (48): libunwind's stacks too */

/* A static function (no dynamic symbol: only .symtab names it) whose address a frame names. */
static __attribute__((noinline, used)) int symbols_probe(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

/*
 * Use a pool the way a program does: create, allocate, free, dump (`pools show`; with
 * `detailed` it names each pool's creator, a report that needs names), destroy.
 */
static void use_a_pool(void)
{
	struct pool_head *p = pool_create("symbols-test", 64, 0);
	FILE *out = fopen("/dev/null", "w");
	void *o;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(out);
	o = pool_alloc(p);
	ck_assert_ptr_nonnull(o);
	pool_free(p, o);
	ck_assert_int_eq(pool_dump(out, NULL), 0);
	fclose(out);
	pool_destroy(p);
}

/* CAPTURES stacks taken from here: each begins at this function's caller, 0 when not. */
static __attribute__((noinline)) int captures_begin_at_caller(void)
{
	const void *caller = __builtin_return_address(0);
	uintptr_t f[8];
	unsigned int i, n;

	for (i = 0; i < CAPTURES; i++) {
		n = pool__stack_capture(f, 8, caller);
		if (n < 2 || f[0] != (uintptr_t)caller)
			return 0;
	}
	return 1;
}

START_TEST(test_libunwind_loaded_when_stacks_are_first_wanted)
{
	ck_assert_msg(!test_library_loaded(LIBUNWIND), "libunwind is in the process at start");
	use_a_pool();
	ck_assert_msg(!test_library_loaded(LIBUNWIND), "creating and using a pool loaded libunwind");
	ck_assert_int_eq(pool__stack_unwinder_loaded(), 0);

	pool__stack_prepare();
	ck_assert_int_eq(pool__stack_ready(), 1);
	ck_assert_int_eq(pool__stack_unwinder_loaded(), !TEST_TSAN);
	ck_assert_int_eq(test_library_loaded(LIBUNWIND), !TEST_TSAN);
	ck_assert_int_eq(captures_begin_at_caller(), 1);
	pool__stack_prepare();       /* again: nothing more */
	ck_assert_int_eq(pool__stack_unwinder_loaded(), !TEST_TSAN);
}
END_TEST

START_TEST(test_without_libunwind_stacks_are_glibcs)
{
	pool__libunwind_soname = "libpool-check-no-such-libunwind.so.8";
	pool__stack_prepare();
	ck_assert_int_eq(pool__stack_ready(), 1);
	ck_assert_int_eq(pool__stack_unwinder_loaded(), 0);
	ck_assert_msg(!test_library_loaded(LIBUNWIND), "libunwind was loaded, its soname naming nothing");
	ck_assert_int_eq(captures_begin_at_caller(), 1);
}
END_TEST

START_TEST(test_libdw_loaded_by_the_first_names)
{
	struct pool_sym f[4];
	uintptr_t pc = (uintptr_t)symbols_probe + 1;   /* a "return address" inside it */
	unsigned int n;

	ck_assert_msg(!test_library_loaded(LIBDW), "libdw is in the process before a report");
	use_a_pool();
	ck_assert_msg(!test_library_loaded(LIBDW), "creating and using a pool loaded libdw");

	ck_assert_int_eq(pool__sym_begin(0), 0);
	n = pool__sym_frames(pc, f, 4);
	pool__sym_end();
	ck_assert_msg(test_library_loaded(LIBDW), "the first session did not load libdw");
	ck_assert_uint_ge(n, 1);
	/* the outermost frame is the function that holds pc: from .symtab, with its line */
	ck_assert_str_eq(f[n - 1].function, "symbols_probe");
	ck_assert_uint_eq(f[n - 1].offset, 1);
	ck_assert_str_eq(f[n - 1].file, "check_libs.c");
	ck_assert_uint_gt(f[n - 1].line, 0);

	/* a second session keeps libdw and names the same way */
	ck_assert_int_eq(pool__sym_begin(0), 0);
	ck_assert_uint_eq(pool__sym_frames(pc, f, 4), n);
	pool__sym_end();
	ck_assert_str_eq(f[n - 1].function, "symbols_probe");
}
END_TEST

START_TEST(test_without_libdw_frames_come_from_dladdr)
{
	struct pool_sym f[4];
	char name[256], want[256];
	Dl_info info;
	void *getpid_fn = dlsym(RTLD_DEFAULT, "getpid");

	ck_assert_ptr_nonnull(getpid_fn);
	pool__libdw_soname = "libpool-check-no-such-libdw.so.1";

	/* a static function: no dynamic symbol, so its module and an offset, no file, no line */
	ck_assert_int_eq(pool__sym_begin(0), 0);
	ck_assert_uint_eq(pool__sym_frames((uintptr_t)symbols_probe + 1, f, 4), 1);
	pool__sym_end();
	ck_assert_str_eq(f[0].function, "");
	ck_assert_str_eq(f[0].module, "check_libs");
	ck_assert_str_eq(f[0].file, "");
	ck_assert_uint_eq(f[0].line, 0);

	/* an exported function of the C library: its dynamic symbol, the one dladdr(3) gives */
	ck_assert_int_ne(dladdr(getpid_fn, &info), 0);
	ck_assert_ptr_nonnull(info.dli_sname);
	ck_assert_ptr_eq(info.dli_saddr, getpid_fn);
	ck_assert_int_eq(pool__sym_begin(0), 0);
	ck_assert_uint_eq(pool__sym_frames((uintptr_t)getpid_fn + 1, f, 4), 1);
	pool__sym_end();
	ck_assert_str_eq(f[0].function, info.dli_sname);
	ck_assert_uint_eq(f[0].offset, 1);
	ck_assert_msg(strncmp(f[0].module, "libc.so", 7) == 0, "module \"%s\"", f[0].module);
	pool__sym_format(name, sizeof(name), &f[0], 0);
	snprintf(want, sizeof(want), "%s+0x1 (%s)", info.dli_sname, f[0].module);
	ck_assert_str_eq(name, want);

	/* the failed load is not retried at each report, and nothing loaded libdw */
	pool__sym_name(name, sizeof(name), (uintptr_t)getpid_fn + 1, POOL_SYM_FUNCTION);
	ck_assert_str_eq(name, info.dli_sname);
	ck_assert_msg(!test_library_loaded(LIBDW), "libdw was loaded, its soname naming nothing");
}
END_TEST

/* A double free from a static function (`tag`): the report names its caller. */
static __attribute__((noinline)) void twice_freed(void)
{
	struct pool_head *p;
	void *o;

	if (pool_parse_debugging("tag", NULL) != 0)
		_exit(99);
	p = pool_create("twice", 64, 0);
	o = pool_alloc(p);
	pool_free(p, o);
	pool_free(p, o);
}

static __attribute__((noinline)) void double_free_child(void *arg)
{
	if (arg)
		pool__libdw_soname = "libpool-check-no-such-libdw.so.1";
	twice_freed();
	/* not reached (the second free aborts); the call keeps this frame, which a tail call to
	   twice_freed() drops under clang, on the stack the report names */
	_exit(98);
}

START_TEST(test_reports_name_callers_with_libdw_or_dladdr)
{
	struct death d;

	/* libdw: the static function by name, with its file and line, and the stack beyond it */
	run_child(double_free_child, NULL, &d);
	ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == SIGABRT, "%s", d.out);
	ck_assert_msg(strstr(d.out, "libpool:   caller: twice_freed+0x") &&
	              strstr(d.out, " (check_libs.c:") &&
	              strstr(d.out, "\nlibpool:     <- double_free_child"), "%s", d.out);
	ck_assert_msg(strstr(d.out, "already freed by: twice_freed+0x"), "%s", d.out);
	/* without libdw: the module and the offset (no "(+0x...)" after a path) */
	run_child(double_free_child, (void *)1, &d);
	ck_assert_msg(WIFSIGNALED(d.status) && WTERMSIG(d.status) == SIGABRT, "%s", d.out);
	ck_assert_msg(strstr(d.out, "libpool:   caller: check_libs+0x") &&
	              strstr(d.out, "already freed by: check_libs+0x") &&
	              !strstr(d.out, "(+0x") && !strstr(d.out, "check_libs.c:"), "%s", d.out);
}
END_TEST

START_TEST(test_without_hwloc_the_topology_is_sysconfs)
{
	const struct pool_topology *t;
	long pus = sysconf(_SC_NPROCESSORS_ONLN);
	char err[4096];
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(saved, 0);
	pool__hwloc_soname = "libpool-check-no-such-hwloc.so.15";
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
	t = pool_topology();
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	rewind(f);
	n = fread(err, 1, sizeof(err) - 1, f);
	err[n] = 0;
	fclose(f);

	ck_assert_uint_eq(t->source, POOL_TOPO_SYSCONF);
	ck_assert_uint_eq(t->pus, (unsigned int)pus);
	ck_assert_uint_eq(pool__topology_hwloc_api(), 0);
	/* said once, with dlopen()'s reason, which names the library */
	ck_assert_msg(strstr(err, "libpool: hwloc could not load the topology "
	                     "(libpool-check-no-such-hwloc.so.15: ") &&
	              strstr(err, "using sysconf()"), "stderr: %s", err);
	ck_assert_ptr_eq(pool_topology(), t);
	/* pools work on the fallback's defaults */
	use_a_pool();
}
END_TEST

static Suite *libs_suite(void)
{
	Suite *s = suite_create("libs");
	TCase *tc = tcase_create("libdw");

	tcase_add_test(tc, test_libdw_loaded_by_the_first_names);
	tcase_add_test(tc, test_libunwind_loaded_when_stacks_are_first_wanted);
	tcase_add_test(tc, test_without_libunwind_stacks_are_glibcs);
	tcase_add_test(tc, test_without_libdw_frames_come_from_dladdr);
	tcase_add_test(tc, test_reports_name_callers_with_libdw_or_dladdr);
	suite_add_tcase(s, tc);
	tc = tcase_create("hwloc");
	tcase_add_test(tc, test_without_hwloc_the_topology_is_sysconfs);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * Under AddressSanitizer, this program runs with LeakSanitizer on, which tests/run.sh turns
 * off for the others (they end with objects handed out on purpose; these free theirs): it
 * re-executes itself with detect_leaks=1 last in ASAN_OPTIONS. Libraries loaded and unloaded
 * with dlopen(3) are where LeakSanitizer's reading of dynamic TLS broke (topology.c: hwloc's
 * plugins), and only a leak check at exit shows it. Returns -1 (run the suite) once on.
 */
static int with_leak_checks(int argc, char **argv)
{
	(void)argc;
#if TEST_ASAN
	return test_reexec_with_asan_options(argv, "detect_leaks=1", "check_libs");
#else
	(void)argv;
	return -1;
#endif
}

POOL_TEST_MAIN_ARGS(libs_suite, with_leak_checks)
