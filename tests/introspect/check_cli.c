/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_cli_exec() and pool_cli_exec_level(): every command and every error path, each command
 * at each access level (refused below its level with EACCES and nothing changed), addresses
 * only at admin (`pools profile heap` too), `show pools`, flush and limit; pool_cli_listen_level()/pool_cli_stop(): every
 * error of listen, modes, several listeners with their levels, the connection's `level`
 * command, stale socket replaced, non-socket path refused with EEXIST, a symbolic link planted
 * at the socket path never followed (also while an attacker replaces the path as it appears),
 * the line protocol (pipelining, \r\n, status lines, quit, NUL bytes, empty lines never inside
 * an answer) also through socat, many concurrent clients, an over-long line, silent clients
 * closed after the timeout while others are served, clients that disconnect mid-answer or send
 * garbage, a server that runs out of descriptors, and fork().
 *
 * Public-API test: it includes only <pool/pool.h> (and the tests' helpers), as an embedding
 * program does. The tests that need the server's internals (its line timeout, its round
 * counter, fault injection) are check_cli_int.c's.
 *
 * Check forks every test: each test starts with no pool and no server, and leaves the server
 * stopped. SIGPIPE keeps its default action, so a send to a closed client that raised it would
 * kill the test.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "testcli.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* pool_cli_exec(line): the program's own access, level admin, in test_capture()'s shape. */
static int cli_exec(FILE *out, const char *line)
{
	return pool_cli_exec(line, out);
}

/* The level cli_exec_at() runs its line at (test_capture() passes one argument). */
static enum pool_cli_level exec_level;

static int cli_exec_at(FILE *out, const char *line)
{
	return pool_cli_exec_level(line, out, exec_level);
}

/* pool_cli_exec_level(line, level) into a malloc()ed string; *ret receives its return value. */
static char *exec_at(const char *line, enum pool_cli_level level, int *ret)
{
	exec_level = level;
	return test_capture(cli_exec_at, line, ret);
}

/* Refused with exactly the one line `want`, errno EINVAL, debugging flags unchanged. */
static void check_refused(const char *line, const char *want)
{
	unsigned int flags = pool_debugging;
	int r;
	char *s = test_capture(cli_exec, line, &r);

	ck_assert_msg(r != 0, "'%s' was accepted: %s", line, s);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(s, want);
	ck_assert_uint_eq(pool_debugging, flags);
	free(s);
}

/*
 * What a socket of level `level` must answer for `line`: pool_cli_exec_level()'s output, empty
 * lines dropped.
 */
static char *expected_answer_at(const char *line, enum pool_cli_level level, int status_mode)
{
	char *s, *w, *r;
	int ret;
	size_t n;

	s = exec_at(line, level, &ret);
	for (r = w = s; *r; r++) {
		if (*r == '\n' && (w == s || w[-1] == '\n'))
			continue;
		*w++ = *r;
	}
	*w = 0;
	n = strlen(s);
	s = realloc(s, n + 16);
	ck_assert_ptr_nonnull(s);
	if (n && s[n - 1] != '\n')
		strcat(s, "\n");
	if (status_mode)
		strcat(s, ret == 0 ? "OK\n" : "ERROR\n");
	strcat(s, "\n");
	return s;
}

/* The same for a socket of the default level, operator. */
static char *expected_answer(const char *line, int status_mode)
{
	return expected_answer_at(line, POOL_CLI_OPERATOR, status_mode);
}

/* ------------------------------------------------------------------------------------------ */
/* Commands                                                                                   */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_exec_errors)
{
	char line[5000], want[200];
	struct pool_head *p;
	int r;
	char *s;

	p = pool_create("exec", 64, 0);
	ck_assert_ptr_nonnull(p);
	/* NULL arguments: nothing written */
	errno = 0;
	ck_assert_int_eq(pool_cli_exec(NULL, stdout), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_cli_exec("help", NULL), -1);
	ck_assert_int_eq(errno, EINVAL);

	check_refused("frob", "Unknown command 'frob'. Try 'help'.\n");
	check_refused("  frob  the pools\n", "Unknown command 'frob'. Try 'help'.\n");
	check_refused("pools", "Unknown command 'pools'. Try 'help'.\n");
	check_refused("pools   \r\n", "Unknown command 'pools'. Try 'help'.\n");
	check_refused("pools frob", "Unknown command 'frob'. Try 'help'.\n");
	check_refused("pools SHOW", "Unknown command 'SHOW'. Try 'help'.\n");
	check_refused("Pools show", "Unknown command 'Pools'. Try 'help'.\n");
	check_refused("help me", "Unknown command 'me'. Try 'help'.\n");
	check_refused("pools trim now", "Unknown command 'now'. Try 'help'.\n");
	check_refused("pools topology now", "Unknown command 'now'. Try 'help'.\n");
	check_refused("pools show bogus", "Unknown option 'bogus' for 'pools show' (expected pools "
	              "show [byname|bysize|byusage] [detailed] [match <prefix>] [<max>] "
	              "[json|prometheus]). Try 'help'.\n");
	check_refused("pools show byname bysize",
	              "Option 'bysize' conflicts with 'byname' in 'pools show'. Try 'help'.\n");
	check_refused("pools show 0", "Invalid count '0' (expected a number of pools from 1 up) in "
	              "'pools show'. Try 'help'.\n");
	check_refused("pools show match", "Option 'match' needs a prefix in 'pools show'. "
	              "Try 'help'.\n");
	/* client bytes come back printable, on one line, cut after 64 bytes */
	check_refused("\x01\x7f\xc3\xa9", "Unknown command '\\x01\\x7f\\xc3\\xa9'. Try 'help'.\n");
	check_refused("pools it's", "Unknown command 'it\\x27s'. Try 'help'.\n");
	memset(line, 'z', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	snprintf(want, sizeof(want), "Unknown command '%.64s...'. Try 'help'.\n", line);
	check_refused(line, want);

	/* debugging options: the parser's errors, nothing changed */
	check_refused("pools debug bogus", "unknown pool debugging option 'bogus'\n");
	check_refused("pools debug no-merge,bogus", "unknown pool debugging option 'bogus'\n");
	check_refused("pools debug fail=500", "invalid value in 'fail=500' (expected "
	              "fail=<0..100>)\n");
	check_refused("pools debug poison=x", "invalid value in 'poison=x' (expected "
	              "poison=<0..255>)\n");
	check_refused("pools debug cache=1", "unknown pool debugging option 'cache=1' (or it takes "
	              "no value)\n");
	check_refused("pools debug tag=1", "pool debugging option 'tag=1' takes no value\n");
	check_refused("pools debug no-merge,,cache", "empty pool debugging option in "
	              "'no-merge,,cache'\n");
	check_refused("pools debug 300", "invalid poison byte '300' (expected 0..255, or negative "
	              "for off)\n");
	check_refused("pools debug no-merge, cache", "unknown pool debugging option ' cache'\n");
	check_refused("pools debug bo\x01gus", "unknown pool debugging option 'bo\\x01gus'\n");
	/* layout options are never changed from the CLI */
	check_refused("pools debug tag", "pool debugging option 'tag' changes the object layout "
	              "and cannot change at run time\n");
	check_refused("pools debug no-merge,uaf", "pool debugging option 'uaf' changes the object "
	              "layout and cannot change at run time\n");
	check_refused("pools debug caller", "pool debugging option 'caller' changes the object "
	              "layout and cannot change at run time\n");
	check_refused("pools debug backup", "pool debugging option 'backup' changes the object "
	              "layout and cannot change at run time\n");
	ck_assert_uint_eq(pool_debugging & POOL_DBG_NO_MERGE, 0);

	/* stating a layout option's current value changes nothing and is accepted */
	s = test_capture(cli_exec, "pools debug no-tag", &r);
	ck_assert_int_eq(r, 0);
	free(s);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_exec_layout_refused_without_pools)
{
	/* even before the first pool, when the library would accept them */
	check_refused("pools debug tag", "pool debugging option 'tag' changes the object layout "
	              "and cannot change at run time\n");
	ck_assert_uint_eq(pool_debugging & POOL_DBG_TAG, 0);
}
END_TEST

START_TEST(test_exec_commands)
{
	struct pool_head *p = pool_create("cmd", 256, 0);
	char *s, *d;
	int r;

	ck_assert_ptr_nonnull(p);
	s = test_capture(cli_exec, "help", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(strncmp(s, "Commands at level admin:\n", 25), 0);
	ck_assert_ptr_nonnull(strstr(s, "  pools show [byname|bysize|byusage] [detailed] "
	                             "[match <prefix>] [<max>] [json|prometheus]\n"));
	ck_assert_ptr_nonnull(strstr(s, "  pools trim "));
	ck_assert_ptr_nonnull(strstr(s, "  pools debug <options> "));
	free(s);

	/* pools show is pool_dump() */
	s = test_capture(cli_exec, " pools  show\tbysize  1 \r\n", &r);
	ck_assert_int_eq(r, 0);
	d = NULL;
	{
		size_t len;
		FILE *f = open_memstream(&d, &len);

		ck_assert_int_eq(pool_dump(f, "bysize 1"), 0);
		fclose(f);
	}
	ck_assert_str_eq(s, d);
	ck_assert_ptr_nonnull(strstr(s, "  - Pool cmd (256 bytes/16) : "));
	free(s);
	free(d);

	/* pools topology is pool_topology_show() */
	s = test_capture(cli_exec, "pools topology", &r);
	ck_assert_int_eq(r, 0);
	d = NULL;
	{
		size_t len;
		FILE *f = open_memstream(&d, &len);

		pool_topology_show(f);
		fclose(f);
	}
	ck_assert_str_eq(s, d);
	ck_assert_ptr_nonnull(strstr(s, "topology: "));
	free(s);
	free(d);

	/* blank lines do nothing */
	s = test_capture(cli_exec, "", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "");
	free(s);
	s = test_capture(cli_exec, " \t\r\n", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "");
	free(s);

	/* pools debug: show, change, help */
	s = test_capture(cli_exec, "pools debug", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "no-fail,merge,hot-first,no-integrity,global,cache,no-caller,no-tag,"
	                    "no-poison,no-uaf,no-backup,no-profile,no-guard,no-fail-report,"
	                    "no-malloc\n");
	free(s);
	s = test_capture(cli_exec, "pools debug no-merge,poison=0x41,integrity", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "Pool debugging options now: no-fail,no-merge,hot-first,integrity,"
	                    "global,cache,no-caller,no-tag,poison=0x41,no-uaf,no-backup,"
	                    "no-profile,no-guard,no-fail-report,no-malloc\n");
	ck_assert_uint_ne(pool_debugging & POOL_DBG_NO_MERGE, 0);
	ck_assert_uint_eq(pool_debugging_poison_byte(), 0x41);
	free(s);
	s = test_capture(cli_exec, "pools debug merge,no-poison,no-integrity", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(pool_debugging & (POOL_DBG_NO_MERGE | POOL_DBG_POISON |
	                                    POOL_DBG_INTEGRITY), 0);
	free(s);
	s = test_capture(cli_exec, "pools debug help", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, "Pool debugging options"));
	ck_assert_ptr_nonnull(strstr(s, "no-merge"));
	ck_assert_ptr_nonnull(strstr(s, "  guard "));
	free(s);
	/* guard pages: a share of the profile's samples, switched at run time, profile implied */
	s = test_capture(cli_exec, "pools debug guard=10", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, ",profile=524288,guard=10,"));
	ck_assert_uint_ne(pool_debugging & POOL_DBG_GUARD, 0);
	free(s);
	s = test_capture(cli_exec, "pools debug no-profile", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, ",no-profile,no-guard,"));
	free(s);
	/* help among valid words changes nothing; among invalid ones it is an error */
	s = test_capture(cli_exec, "pools debug no-merge,help", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(pool_debugging & POOL_DBG_NO_MERGE, 0);
	free(s);
	check_refused("pools debug help,bogus", "unknown pool debugging option 'bogus'\n");
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_exec_trim)
{
	struct pool_head *p = pool_create("trim", 512, 0);
	struct pool_stats before, after;
	size_t released, held, now;
	void *o[4000];
	unsigned int i;
	char *s;
	int r;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 4000; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	for (i = 0; i < 4000; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	/* nothing is in use: the command's first call gives back everything (no floor) */
	pool_get_stats(p, &before, sizeof(before));
	ck_assert_uint_eq(before.allocated, 4000);
	ck_assert_uint_eq(before.used, 0);
	s = test_capture(cli_exec, "pools trim", &r);
	pool_get_stats(p, &after, sizeof(after));
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(sscanf(s, "Released %zu bytes to the OS layer (the pools held %zu bytes, "
	                        "now %zu).", &released, &held, &now), 3);
	ck_assert_uint_eq(test_count_lines(s), 1);
	/* single-threaded: the figures are exactly the pool's before and after pool_gc() */
	ck_assert_uint_eq(held, before.allocated * before.stride);
	ck_assert_uint_eq(now, after.allocated * after.stride);
	ck_assert_uint_eq(released, held - now);
	/* nothing used, nothing needed: all but about one cluster went back */
	ck_assert_uint_gt(released, 0);
	ck_assert_uint_lt(now, held / 2);
	free(s);
	s = test_capture(cli_exec, "pools trim", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(sscanf(s, "Released %zu bytes", &released), 1);
	free(s);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Access levels, flush, limit                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Refused for lack of level: exactly `want`, errno EACCES, debugging flags unchanged. */
static void check_denied(const char *line, enum pool_cli_level level, const char *want)
{
	unsigned int flags = pool_debugging;
	int r;
	char *s = exec_at(line, level, &r);

	ck_assert_msg(r == -1, "'%s' was accepted at level %d: %.2000s", line, (int)level, s);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_str_eq(s, want);
	ck_assert_uint_eq(pool_debugging, flags);
	free(s);
}

/* Accepted at `level`; returns the answer. */
static char *check_allowed(const char *line, enum pool_cli_level level)
{
	int r;
	char *s = exec_at(line, level, &r);

	ck_assert_msg(r == 0, "'%s' was refused at level %d: %s", line, (int)level, s);
	return s;
}

/*
 * A merged pool keeps every creator's name: "conn", "session" and "task" of one size merge into
 * one pool, named "conn" (pool_name(), the first creator's), and each of the three names reaches
 * it in every command and filter, through pool_cli_exec_level() and over the socket: `pools
 * limit` (at admin, over the socket's admin level), `pools flush`, `pools show match`,
 * `pools profile pool`; `pools show detailed` lists each creator with the code that created it
 * (admin only: an address). A limit is the pool's: it caps the objects of all its creators.
 */
/* exported (the test links with -rdynamic), so that dladdr() names it */
struct pool_head *create_session_pool(void);
__attribute__((noinline)) struct pool_head *create_session_pool(void)
{
	struct pool_head *p = pool_create("session", 100, POOL_F_SHARED);

	__asm__ volatile("" ::: "memory");
	return p;
}

START_TEST(test_merged_pool_every_name)
{
	struct pool_head *conn = pool_create("conn", 100, POOL_F_SHARED);
	struct pool_head *session = create_session_pool();
	struct pool_head *task = pool_create("task", 100, POOL_F_SHARED);
	static const char *const names[] = { "conn", "session", "task" };
	char line[128], want[256], *s;
	struct pool_stats st;
	struct conn *c;
	unsigned int i;
	void *o[8];

	ck_assert_ptr_eq(session, conn);
	ck_assert_ptr_eq(task, conn);
	ck_assert_str_eq(pool_name(task), "conn");
	for (i = 0; i < 3; i++) {
		snprintf(line, sizeof(line), "pools limit %s %u", names[i], 5 + i);
		s = check_allowed(line, POOL_CLI_ADMIN);
		snprintf(want, sizeof(want), "Limit of pool 'conn' now %u objects (was %s).\n"
		         "  (a merged pool: the limit counts the objects of all its 3 creators: conn "
		         "session task)\n", 5 + i, i ? (i == 1 ? "5" : "6") : "none");
		ck_assert_str_eq(s, want);
		free(s);
		ck_assert_int_eq(pool_get_stats(conn, &st, sizeof(st)), 0);
		ck_assert_uint_eq(st.limit, 5 + i);
		snprintf(line, sizeof(line), "pools flush %s", names[i]);
		free(check_allowed(line, POOL_CLI_OPERATOR));
		snprintf(line, sizeof(line), "pools show match %.4s", names[i]);
		s = check_allowed(line, POOL_CLI_USER);
		ck_assert_msg(strstr(s, "  - Pool conn (104 bytes/16) : ") != NULL, "%s: %s", line, s);
		free(s);
		snprintf(line, sizeof(line), "pools profile pool %s", names[i]);
		free(check_allowed(line, POOL_CLI_USER));
	}
	/* the limit of 7 set through "task" caps what "session" allocates too */
	for (i = 0; i < 7; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(session));
	ck_assert_ptr_null(pool_alloc(conn));
	for (i = 0; i < 7; i++)
		pool_free(task, o[i]);
	s = check_allowed("pools show detailed match session", POOL_CLI_ADMIN);
	ck_assert_msg(strstr(s, "      created as conn: 104 bytes/16, flags SHARED, at ") != NULL,
	              "%s", s);
	ck_assert_msg(strstr(s, "      created as session: 104 bytes/16, flags SHARED, at "
	                     "create_session_pool+0x") != NULL, "%s", s);
	ck_assert_msg(strstr(s, "      created as task: 104 bytes/16, flags SHARED, at ") != NULL,
	              "%s", s);
	free(s);
	s = check_allowed("pools show detailed match session", POOL_CLI_USER);
	ck_assert_msg(strstr(s, "      created as session: 104 bytes/16, flags SHARED\n") != NULL,
	              "%s", s);
	free(s);
	/* the same over the socket, at its admin level */
	make_tmpdir();
	ck_assert_int_eq(pool_cli_listen_level(sock_path, POOL_CLI_ADMIN, 0), 0);
	c = conn_open();
	conn_expect_start(c, "pools limit session 0", "Limit of pool 'conn' now none (was 7).\n"
	                  "  (a merged pool: the limit counts the objects of all its 3 creators");
	conn_expect_start(c, "pools flush task", "Released ");
	conn_expect_start(c, "pools show match sess", "Dumping pools usage. Use 'pools trim' to "
	                  "release unused memory.\n  - Pool conn (104 bytes/16) : ");
	conn_expect_start(c, "pools show detailed match task json", "{\"format\": 2,");
	conn_close(c);
	remove_tmpdir();
	ck_assert_int_eq(pool_get_stats(conn, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.limit, 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pool_destroy(conn), 0);
}
END_TEST

START_TEST(test_exec_levels)
{
	static const struct {
		const char *line, *what;
		enum pool_cli_level need;
	} cmds[] = {
		{ "help", "help", POOL_CLI_USER },
		{ "pools show", "pools show", POOL_CLI_USER },
		{ "show pools byname json", "show pools", POOL_CLI_USER },
		{ "pools topology", "pools topology", POOL_CLI_USER },
		{ "pools debug", "pools debug", POOL_CLI_USER },
		{ "pools debug  help ", "pools debug", POOL_CLI_USER },
		{ "pools trim", "pools trim", POOL_CLI_OPERATOR },
		{ "pools flush", "pools flush", POOL_CLI_OPERATOR },
		{ "pools flush lvl", "pools flush", POOL_CLI_OPERATOR },
		{ "pools debug no-merge", "pools debug <options>", POOL_CLI_ADMIN },
		{ "pools debug merge,poison=0x33", "pools debug <options>", POOL_CLI_ADMIN },
		{ "pools limit lvl 100", "pools limit", POOL_CLI_ADMIN },
		{ "pools limit lvl 0", "pools limit", POOL_CLI_ADMIN },
	};
	static const char *const names[] = { "", "user", "operator", "admin" };
	struct pool_head *p = pool_create("lvl", 64, 0);
	unsigned int i;
	int level, r;
	char want[256], *s;
	void *o;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(o = pool_alloc(p));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (level = POOL_CLI_USER; level <= POOL_CLI_ADMIN; level++) {
			if (level >= (int)cmds[i].need) {
				free(check_allowed(cmds[i].line, (enum pool_cli_level)level));
				continue;
			}
			snprintf(want, sizeof(want), "Permission denied: '%s' needs level %s; this "
			         "session is %s.\n", cmds[i].what, names[cmds[i].need], names[level]);
			check_denied(cmds[i].line, (enum pool_cli_level)level, want);
		}
	}
	/* nothing a refused command asked for happened */
	ck_assert_uint_eq(pool_debugging_poison_byte(), 0x33);   /* set by the admin run only */

	/* levels that are not one: nothing written */
	for (i = 0; i < 4; i++) {
		static const int bad[4] = { -1, 0, POOL_CLI_ADMIN + 1, 100 };
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		errno = 0;
		ck_assert_int_eq(pool_cli_exec_level("help", f, (enum pool_cli_level)bad[i]), -1);
		ck_assert_int_eq(errno, EINVAL);
		fclose(f);
		ck_assert_uint_eq(len, 0);
		free(buf);
	}
	errno = 0;
	ck_assert_int_eq(pool_cli_exec_level("help", stdout, 0), -1);
	ck_assert_int_eq(errno, EINVAL);

	/* help lists what the level allows, and says that it is not everything */
	s = check_allowed("help", POOL_CLI_USER);
	ck_assert_int_eq(strncmp(s, "Commands at level user (higher levels have more):\n", 50), 0);
	ck_assert_ptr_nonnull(strstr(s, "\n  pools show [byname"));
	ck_assert_ptr_nonnull(strstr(s, "\n  pools debug  "));
	ck_assert_ptr_null(strstr(s, "pools trim"));
	ck_assert_ptr_null(strstr(s, "pools debug <options>"));
	ck_assert_ptr_nonnull(strstr(s, "\n  level [user|operator] "));
	free(s);
	s = check_allowed("help", POOL_CLI_OPERATOR);
	ck_assert_ptr_nonnull(strstr(s, "\n  pools trim "));
	ck_assert_ptr_nonnull(strstr(s, "\n  pools flush [<pool>] "));
	ck_assert_ptr_null(strstr(s, "pools limit"));
	free(s);
	s = check_allowed("help", POOL_CLI_ADMIN);
	ck_assert_int_eq(strncmp(s, "Commands at level admin:\n", 25), 0);
	ck_assert_ptr_nonnull(strstr(s, "\n  pools debug <options> "));
	ck_assert_ptr_nonnull(strstr(s, "\n  pools limit <pool> <objects>\n"));
	free(s);

	/* an unknown command is unknown at every level, not a permission matter */
	check_refused("pools frob", "Unknown command 'frob'. Try 'help'.\n");
	s = exec_at("pools frob", POOL_CLI_USER, &r);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(s, "Unknown command 'frob'. Try 'help'.\n");
	free(s);
	pool_free(p, o);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_exec_addresses_admin_only)
{
	struct pool_head *p;
	char addr[64], line[96], *s;
	void *o;
	int level;

	/* caller debugging: detailed lists callers, which are code addresses */
	ck_assert_int_eq(pool_parse_debugging("caller", NULL), 0);
	p = pool_create("addr", 64, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(o = pool_alloc(p));
	snprintf(addr, sizeof(addr), "%p", (void *)p);
	/* a refill takes half a magazine from the slab tier */
	snprintf(line, sizeof(line), "  - Pool addr (64 bytes/16) : %zu allocated",
	         test_stats(p).allocated);
	for (level = POOL_CLI_USER; level <= POOL_CLI_ADMIN; level++) {
		int admin = level == POOL_CLI_ADMIN;

		s = check_allowed("pools show detailed", (enum pool_cli_level)level);
		ck_assert_int_eq(strstr(s, addr) != NULL, admin);
		ck_assert_int_eq(strstr(s, ", @0x") != NULL, admin);
		ck_assert_int_eq(strstr(s, "      caller ") != NULL, admin);
		ck_assert_ptr_nonnull(strstr(s, line));
		free(s);
		s = check_allowed("show pools json detailed", (enum pool_cli_level)level);
		ck_assert_int_eq(strstr(s, addr) != NULL, admin);
		ck_assert_int_eq(strstr(s, "\"address\"") != NULL, admin);
		ck_assert_int_eq(strstr(s, "\"callers\"") != NULL, admin);
		free(s);
	}
	pool_free(p, o);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/*
 * The profile's views at each level: the heap profile is code addresses and the process's
 * mappings (/proc/self/maps), so it is admin's only; the other views are answered at every
 * level, their frames named without an address below admin (doc/pools-show.md).
 */
START_TEST(test_exec_profile_addresses_admin_only)
{
	static const char *const views[] = { "pools profile", "pools profile json",
	                                     "pools profile folded", "pools profile prometheus" };
	static const char *const names[] = { "", "user", "operator", "admin" };
	struct pool_head *p = pool_create("profiled", 64, 0);
	char want[160], *s;
	unsigned int i;
	int level;
	void *o[32];

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pool_profile_start(1), 0);      /* every allocation sampled */
	for (i = 0; i < 32; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(p));
	pool_profile_stop();
	for (level = POOL_CLI_USER; level <= POOL_CLI_ADMIN; level++) {
		if (level == POOL_CLI_ADMIN) {
			s = check_allowed("pools profile heap", POOL_CLI_ADMIN);
			ck_assert_msg(strstr(s, "] @ 0x") && strstr(s, "\nMAPPED_LIBRARIES:\n") &&
			              strstr(s, "[stack]"), "%.2000s", s);
			free(s);
		} else {
			snprintf(want, sizeof(want), "Permission denied: 'pools profile heap' needs "
			         "level admin; this session is %s.\n", names[level]);
			check_denied("pools profile heap", (enum pool_cli_level)level, want);
			check_denied("pools profile heap pool profiled 1",
			             (enum pool_cli_level)level, want);
		}
		for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
			s = check_allowed(views[i], (enum pool_cli_level)level);
			/* folded stacks name functions, not pools */
			ck_assert_msg(strstr(s, i == 2 ? "test_exec_profile_addresses_admin_only" :
			                     "profiled") != NULL, "%s: %.2000s", views[i], s);
			if (level < POOL_CLI_ADMIN)
				ck_assert_msg(!strstr(s, "MAPPED_LIBRARIES") && !strstr(s, "@ 0x") &&
				              !strstr(s, "\"address\"") && !strstr(s, "(0x"),
				              "%s at level %s: %.2000s", views[i], names[level], s);
			free(s);
		}
	}
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_exec_show_pools_alias)
{
	/* (json and prometheus include the OS layer's figures, which move between two calls) */
	static const char *const args[] = { "", " byname 1", " detailed", " bysize match sh" };
	struct pool_head *p = pool_create("shown", 128, 0);
	unsigned int i;
	char line[64], *a, *b;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		snprintf(line, sizeof(line), "pools show%s", args[i]);
		a = check_allowed(line, POOL_CLI_OPERATOR);
		snprintf(line, sizeof(line), "show pools%s", args[i]);
		b = check_allowed(line, POOL_CLI_OPERATOR);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
	}
	a = check_allowed("show pools json", POOL_CLI_USER);
	ck_assert_int_eq(strncmp(a, "{\"format\": 2,\n", 14), 0);
	ck_assert_ptr_nonnull(strstr(a, "\n \"pools\": [\n  {\"name\": \"shown\", "));
	free(a);
	a = check_allowed("show pools prometheus", POOL_CLI_USER);
	ck_assert_ptr_nonnull(strstr(a, "{pool=\"shown\"}"));
	free(a);
	check_refused("show", "Unknown command 'show'. Try 'help'.\n");
	check_refused("show frob", "Unknown command 'frob'. Try 'help'.\n");
	check_refused("show pools bogus", "Unknown option 'bogus' for 'pools show' (expected pools "
	              "show [byname|bysize|byusage] [detailed] [match <prefix>] [<max>] "
	              "[json|prometheus]). Try 'help'.\n");
	check_refused("SHOW pools", "Unknown command 'SHOW'. Try 'help'.\n");
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(test_exec_flush_limit)
{
	struct pool_head *a = pool_create("fl", 256, 0), *b = pool_create("other", 256, 0);
	struct pool_head *dup = pool_create("fl", 4096, 0);
	struct pool_stats st;
	void *o[600];
	size_t released, held, now;
	unsigned int i;
	char *s;
	int r;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(dup);
	/* objects in the shared free lists of both pools */
	for (i = 0; i < 600; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(i % 2 ? a : b));
	for (i = 0; i < 600; i++)
		pool_free(i % 2 ? a : b, o[i]);
	pool_thread_flush();
	ck_assert_int_eq(pool_get_stats(a, &st, sizeof(st)), 0);
	ck_assert_uint_gt(st.shared_free, 0);
	/* flush one pool by name: the other keeps its free objects */
	s = check_allowed("pools flush fl", POOL_CLI_OPERATOR);
	ck_assert_int_eq(sscanf(s, "Released %zu bytes to the OS layer (the pools held %zu bytes, "
	                        "now %zu).", &released, &held, &now), 3);
	ck_assert_uint_eq(released, held - now);
	ck_assert_uint_eq(held, st.allocated * st.stride);   /* dup holds nothing */
	ck_assert_uint_eq(now, 0);
	free(s);
	ck_assert_int_eq(pool_get_stats(a, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.shared_free, 0);
	ck_assert_uint_eq(st.allocated, 0);
	ck_assert_int_eq(pool_get_stats(b, &st, sizeof(st)), 0);
	ck_assert_uint_gt(st.shared_free, 0);
	/* flush every pool */
	s = check_allowed("pools flush", POOL_CLI_OPERATOR);
	ck_assert_int_eq(sscanf(s, "Released %zu bytes to the OS layer (the pools held %zu bytes, "
	                        "now %zu).", &released, &held, &now), 3);
	ck_assert_uint_eq(held, st.allocated * st.stride);
	ck_assert_uint_eq(now, 0);
	free(s);
	ck_assert_int_eq(pool_get_stats(b, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.allocated, 0);
	errno = 0;
	s = test_capture(cli_exec, "pools flush nothing", &r);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(s, "No pool named 'nothing'. Try 'pools show'.\n");
	free(s);
	check_refused("pools flush fl other", "Unknown command 'other'. Try 'help'.\n");

	/* limit: every pool of that name, one line each, and allocation honours it */
	s = check_allowed("pools limit fl 3", POOL_CLI_ADMIN);
	ck_assert_str_eq(s, "Limit of pool 'fl' now 3 objects (was none).\n"
	                    "Limit of pool 'fl' now 3 objects (was none).\n");
	free(s);
	for (i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(o[i] = pool_alloc(a));
	ck_assert_ptr_null(pool_alloc(a));
	ck_assert_int_eq(pool_get_stats(a, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.limit, 3);
	ck_assert_uint_eq(st.failed, 1);
	s = check_allowed(" pools  limit  fl  0 ", POOL_CLI_ADMIN);
	ck_assert_str_eq(s, "Limit of pool 'fl' now none (was 3).\n"
	                    "Limit of pool 'fl' now none (was 3).\n");
	free(s);
	ck_assert_ptr_nonnull(o[3] = pool_alloc(a));
	for (i = 0; i < 4; i++)
		pool_free(a, o[i]);
	errno = 0;
	s = test_capture(cli_exec, "pools limit nothing 5", &r);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(s, "No pool named 'nothing'. Try 'pools show'.\n");
	free(s);
	check_refused("pools limit", "Usage: pools limit <pool> <objects> (0: no limit). "
	              "Try 'help'.\n");
	check_refused("pools limit fl", "Usage: pools limit <pool> <objects> (0: no limit). "
	              "Try 'help'.\n");
	check_refused("pools limit fl -1", "Invalid number of objects '-1' in 'pools limit' "
	              "(expected 0 for no limit, or a decimal count). Try 'help'.\n");
	check_refused("pools limit fl 99999999999999999999999", "Invalid number of objects "
	              "'99999999999999999999999' in 'pools limit' (expected 0 for no limit, or a "
	              "decimal count). Try 'help'.\n");
	check_refused("pools limit fl 5 more", "Unknown command 'more'. Try 'help'.\n");
	ck_assert_int_eq(pool_get_stats(a, &st, sizeof(st)), 0);
	ck_assert_uint_eq(st.limit, 0);
	ck_assert_int_eq(pool_destroy(a), 0);
	ck_assert_int_eq(pool_destroy(b), 0);
	ck_assert_int_eq(pool_destroy(dup), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Listening                                                                                  */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_listen_errors)
{
	char longpath[200], file[128], dir[128];
	struct stat st;
	unsigned int i;
	int fd;

	make_tmpdir();
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(""), -1);
	ck_assert_int_eq(errno, EINVAL);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(longpath), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	snprintf(dir, sizeof(dir), "%s/missing/pools.sock", tmpdir);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(dir), -1);
	ck_assert_int_eq(errno, ENOENT);

	/* a regular file is refused with EEXIST and left untouched */
	snprintf(file, sizeof(file), "%s/data", tmpdir);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "keep", 4), 4);
	close(fd);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(file), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_size, 4);
	/* so is a directory */
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(tmpdir), -1);
	ck_assert_int_eq(errno, EEXIST);

	/* timeouts out of range */
	errno = 0;
	ck_assert_int_eq(pool_cli_set_timeout_ms(0), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_cli_set_timeout_ms(POOL_CLI_TIMEOUT_MS_MAX + 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pool_cli_set_timeout_ms(POOL_CLI_TIMEOUT_MS_MAX), 0);
	ck_assert_int_eq(pool_cli_set_timeout_ms(POOL_CLI_TIMEOUT_MS_DEF), 0);

	/* bad levels and modes, a directory part too long for the temporary name */
	snprintf(file, sizeof(file), "%s/lvl.sock", tmpdir);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen_level(file, 0, 0600), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen_level(file, POOL_CLI_ADMIN + 1, 0600), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen_level(file, POOL_CLI_USER, 01666), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen_level(file, POOL_CLI_USER, 04600), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(lstat(file, &st), -1);
	memset(longpath, 'd', 100);
	memcpy(longpath + 100, "/x.sock", 8);
	longpath[0] = '/';
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(longpath), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);

	/* up to POOL_CLI_MAX_LISTENERS sockets, each path once */
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(sock_path), -1);
	ck_assert_int_eq(errno, EADDRINUSE);
	for (i = 1; i < POOL_CLI_MAX_LISTENERS; i++) {
		snprintf(file, sizeof(file), "%s/other%u.sock", tmpdir, i);
		ck_assert_int_eq(pool_cli_listen(file), 0);
	}
	snprintf(file, sizeof(file), "%s/one-too-many.sock", tmpdir);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(file), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(lstat(file, &st), -1);
	pool_cli_stop();
	pool_cli_stop();   /* no-op */
	remove_tmpdir();
}
END_TEST

START_TEST(test_listen_mode_stale_live)
{
	struct sockaddr_un sa;
	struct stat st;
	struct conn *c;
	int fd;

	make_tmpdir();
	/* mode 0600 even with a permissive umask */
	umask(0);
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	c = conn_open();
	conn_expect_start(c, "help", HELP_OPERATOR);
	conn_close(c);
	/* stop removes the socket */
	pool_cli_stop();
	ck_assert_int_eq(lstat(sock_path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);

	/* a stale socket (bound, nobody listening) is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);
	c = conn_open();
	conn_expect_start(c, "help", HELP_OPERATOR);
	conn_close(c);
	pool_cli_stop();

	/* a socket someone serves is not taken over */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(sock_path), -1);
	ck_assert_int_eq(errno, EADDRINUSE);
	close(fd);
	/* and stop does not remove a socket file that is not ours */
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);   /* now stale: replaced */
	ck_assert_int_eq(unlink(sock_path), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	pool_cli_stop();
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	close(fd);
	remove_tmpdir();
}
END_TEST

/* A connection to `path` (a listener other than sock_path). */
static struct conn *conn_open_path(const char *path)
{
	struct conn *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	c->fd = try_connect(path);
	ck_assert_msg(c->fd >= 0, "connect %s: %s", path, strerror(errno));
	return c;
}

/* Send one line and return its answer. */
static char *conn_ask(struct conn *c, const char *line)
{
	conn_puts(c, line);
	conn_puts(c, "\n");
	return conn_answer(c);
}

/* Send one line; its answer must be `want`. */
static void conn_expect(struct conn *c, const char *line, const char *want)
{
	char *a = conn_ask(c, line);

	ck_assert_msg(strcmp(a, want) == 0, "'%s' answered '%s', not '%s'", line, a, want);
	free(a);
}

START_TEST(test_listen_levels)
{
	char user_path[128], admin_path[128], *a;
	struct conn *u, *o, *ad;
	struct stat st;

	make_tmpdir();
	umask(0);
	snprintf(user_path, sizeof(user_path), "%s/user.sock", tmpdir);
	snprintf(admin_path, sizeof(admin_path), "%s/admin.sock", tmpdir);
	/* three sockets, three levels, their own modes, one thread */
	ck_assert_int_eq(pool_cli_listen_level(user_path, POOL_CLI_USER, 0666), 0);
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);
	ck_assert_int_eq(pool_cli_listen_level(admin_path, POOL_CLI_ADMIN, 0), 0);
	ck_assert_int_eq(lstat(user_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0666);
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(lstat(admin_path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	u = conn_open_path(user_path);
	o = conn_open();
	ad = conn_open_path(admin_path);

	/* each connection has its socket's level */
	conn_expect(u, "level", "user\n\n");
	conn_expect(o, "level", "operator\n\n");
	conn_expect(ad, "level", "admin\n\n");

	/* and each command is refused or run accordingly; the server carries on */
	conn_expect(u, "pools trim",
	            "Permission denied: 'pools trim' needs level operator; this session is "
	            "user.\n\n");
	conn_expect_start(u, "pools show", "Dumping pools usage.");
	conn_expect_start(o, "pools trim", "Released ");
	conn_expect(o, "pools debug no-merge",
	            "Permission denied: 'pools debug <options>' needs level admin; this session "
	            "is operator.\n\n");
	ck_assert_uint_eq(pool_debugging & POOL_DBG_NO_MERGE, 0);
	conn_puts(o, "set status on\n");
	free(conn_answer(o));
	conn_expect(o, "pools limit x 1",
	            "Permission denied: 'pools limit' needs level admin; this session is "
	            "operator.\nERROR\n\n");
	conn_expect_start(ad, "pools debug no-merge", "Pool debugging options now: ");
	ck_assert_uint_ne(pool_debugging & POOL_DBG_NO_MERGE, 0);

	/* a connection may lower its level, never raise it */
	conn_expect(u, "level admin",
	            "Permission denied: this session is user and cannot raise its level to "
	            "admin.\n\n");
	conn_expect(u, "level operator",
	            "Permission denied: this session is user and cannot raise its level to "
	            "operator.\n\n");
	conn_expect(u, "level user", "Level now user.\n\n");
	conn_expect(u, "level bogus",
	            "Unknown level (expected user, operator or admin). Try 'help'.\n\n");
	conn_expect(ad, " level   operator ", "Level now operator.\n\n");
	conn_expect(ad, "pools debug merge",
	            "Permission denied: 'pools debug <options>' needs level admin; this session "
	            "is operator.\n\n");
	conn_expect(ad, "level admin",
	            "Permission denied: this session is operator and cannot raise its level to "
	            "admin.\n\n");
	conn_expect(ad, "level user", "Level now user.\n\n");
	conn_expect(ad, "pools flush",
	            "Permission denied: 'pools flush' needs level operator; this session is "
	            "user.\n\n");
	/* the lowering is the connection's only: a new one has the socket's level */
	conn_close(ad);
	ad = conn_open_path(admin_path);
	conn_expect(ad, "level", "admin\n\n");
	/* with status lines */
	conn_puts(u, "set status on\n");
	free(conn_answer(u));
	conn_expect(u, "level", "user\nOK\n\n");
	a = conn_ask(u, "level admin");
	ck_assert_int_eq(strcmp(a + strlen(a) - 8, "\nERROR\n\n"), 0);
	free(a);
	/* three words: not the connection's command */
	conn_expect(u, "level user now", "Unknown command 'level'. Try 'help'.\nERROR\n\n");

	conn_close(u);
	conn_close(o);
	conn_close(ad);
	/* stop removes every socket */
	pool_cli_stop();
	ck_assert_int_eq(lstat(user_path, &st), -1);
	ck_assert_int_eq(lstat(sock_path, &st), -1);
	ck_assert_int_eq(lstat(admin_path, &st), -1);
	remove_tmpdir();
}
END_TEST

/* Nothing but `want` (and "." / "..") in tmpdir: no temporary name left behind. */
static void check_tmpdir_holds(const char *const *want, unsigned int n)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	unsigned int i, found = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		for (i = 0; i < n; i++)
			if (!strcmp(e->d_name, want[i]))
				break;
		ck_assert_msg(i < n, "unexpected entry '%s' in %s", e->d_name, tmpdir);
		found++;
	}
	closedir(d);
	ck_assert_uint_eq(found, n);
}

START_TEST(test_listen_symlink_not_followed)
{
	static const char *const left[] = { "target", "pools.sock" };
	char target[128], dangling[128];
	struct stat st;
	int fd;

	make_tmpdir();
	snprintf(target, sizeof(target), "%s/target", tmpdir);
	fd = open(target, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "keep", 4), 4);
	close(fd);
	/* a symbolic link planted at the socket path: refused, and nothing is touched */
	ck_assert_int_eq(symlink(target, sock_path), 0);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(sock_path), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(stat(target, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(st.st_size, 4);
	check_tmpdir_holds(left, 2);
	/* so is a dangling one, which is not followed to create its target */
	ck_assert_int_eq(unlink(sock_path), 0);
	snprintf(dangling, sizeof(dangling), "%s/nowhere", tmpdir);
	ck_assert_int_eq(symlink(dangling, sock_path), 0);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(sock_path), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(lstat(dangling, &st), -1);
	check_tmpdir_holds(left, 2);
	ck_assert_int_eq(unlink(sock_path), 0);
	remove_tmpdir();
}
END_TEST

static atomic_int planter_stop;
static char planter_target[128];

/*
 * An attacker with write access to the directory: whenever a file appears at the socket path
 * (inotify), it is replaced at once by a symbolic link to planter_target, which a chmod() of
 * the path would then follow.
 */
static void *planter(void *arg)
{
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;

	(void)arg;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(inotify_add_watch(fd, tmpdir, IN_CREATE | IN_MOVED_TO), 0);
	while (!atomic_load(&planter_stop)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = read(fd, u.buf, sizeof(u.buf));
		if (n <= 0)
			continue;
		if (unlink(sock_path) == 0 && symlink(planter_target, sock_path) < 0)
			break;
	}
	close(fd);
	return NULL;
}

START_TEST(test_listen_symlink_race)
{
	static const char *const left[] = { "target" };
	unsigned int i, served = 0, refused = 0;
	struct stat st;
	pthread_t t;
	int fd;

	make_tmpdir();
	snprintf(planter_target, sizeof(planter_target), "%s/target", tmpdir);
	fd = open(planter_target, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	atomic_store(&planter_stop, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, planter, NULL), 0);
	/*
	 * Whenever the link lands between two steps of pool_cli_listen(), nothing may reach its
	 * target: with chmod() on the final path (the old way), the target would become 0600.
	 */
	for (i = 0; i < 300; i++) {
		if (pool_cli_listen(sock_path) == 0) {
			served++;
			pool_cli_stop();
		} else {
			ck_assert_msg(errno == EEXIST, "listen: %s", strerror(errno));
			refused++;
		}
		ck_assert_int_eq(stat(planter_target, &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777, 0644);
		unlink(sock_path);   /* the planted link, so that the next round gets as far */
	}
	atomic_store(&planter_stop, 1);
	pthread_join(t, NULL);
	ck_assert_uint_eq(served + refused, 300);
	ck_assert_uint_gt(served, 0);
	unlink(sock_path);
	check_tmpdir_holds(left, 1);   /* no temporary directory or socket left behind */
	remove_tmpdir();
}
END_TEST

/* What `printf '<input>' | socat <args>` prints. */
static char *run_socat(const char *input, const char *address)
{
	char cmd[512], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "printf '%s' | socat -t 5 - '%s'", input, address);
	out = test_run_command(cmd, &st);
	ck_assert_msg(st == 0, "socat failed (%d): %s", st, out);
	return out;
}

START_TEST(test_socat_client)
{
	struct pool_head *p = pool_create("socat", 64, 0);
	char address[160], *out, *want, *w1, *w2, *w3;
	size_t n;

	/* before the server starts, so that a failure leaves nothing behind */
	ck_assert_msg(system("command -v socat >/dev/null 2>&1") == 0,
	              "socat is not installed (Debian package socat; make check installs it)");
	ck_assert_ptr_nonnull(p);
	start_server();
	snprintf(address, sizeof(address), "UNIX-CONNECT:%s", sock_path);
	/* as HAProxy's stats socket is used: commands piped in, answers out, empty-line ended */
	out = run_socat("show pools\\nhelp\\npools frob\\n", address);
	w1 = expected_answer("show pools", 0);
	w2 = expected_answer("help", 0);
	w3 = expected_answer("pools frob", 0);
	n = strlen(w1) + strlen(w2) + strlen(w3) + 1;
	want = malloc(n);
	ck_assert_ptr_nonnull(want);
	snprintf(want, n, "%s%s%s", w1, w2, w3);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(strncmp(out, "Dumping pools usage.", 20), 0);
	free(w1);
	free(w2);
	free(w3);
	free(want);
	free(out);
	/* status lines, and JSON whole through socat */
	out = run_socat("set status on\\npools show match socat json\\n", address);
	ck_assert_int_eq(strncmp(out, "OK\n\n{\"format\": 2,\n", 18), 0);
	ck_assert_int_eq(strcmp(out + strlen(out) - 4, "OK\n\n"), 0);
	free(out);
	pool_cli_stop();
	remove_tmpdir();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The protocol                                                                               */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_line_protocol)
{
	struct pool_head *p = pool_create("proto", 64, 0);
	struct conn *c;
	char *a, *want;

	ck_assert_ptr_nonnull(p);
	start_server();
	c = conn_open();

	/* one command, its answer and the empty line */
	conn_puts(c, "pools show\n");
	a = conn_answer(c);
	want = expected_answer("pools show", 0);
	ck_assert_str_eq(a, want);
	free(a);
	free(want);

	/* \r\n, and pipelined commands answered in order */
	conn_puts(c, "help\r\npools show bysize detailed\npools frob\npools debug\n");
	a = conn_answer(c);
	want = expected_answer("help", 0);
	ck_assert_str_eq(a, want);
	free(a);
	free(want);
	a = conn_answer(c);
	ck_assert_str_eq(a, (want = expected_answer("pools show bysize detailed", 0)));
	free(a);
	free(want);
	a = conn_answer(c);
	ck_assert_str_eq(a, "Unknown command 'frob'. Try 'help'.\n\n");
	free(a);
	a = conn_answer(c);
	ck_assert_str_eq(a, (want = expected_answer("pools debug", 0)));
	free(a);
	free(want);

	/* an answer never holds an empty line: the help table's are dropped */
	conn_puts(c, "pools debug help\n");
	a = conn_answer(c);
	ck_assert_ptr_nonnull(strstr(a, "Pool debugging options"));
	ck_assert_ptr_nonnull(strstr(a, "\n  POOL_DEBUG=uaf"));
	ck_assert_ptr_eq(strstr(a, "\n\n"), a + strlen(a) - 2);
	free(a);

	/* an empty line gets an empty answer */
	conn_puts(c, "\n");
	a = conn_answer(c);
	ck_assert_str_eq(a, "\n");
	free(a);

	/* a line holding a NUL byte is refused */
	conn_send(c, "help\0me\n", 8);
	a = conn_answer(c);
	ck_assert_str_eq(a, "Unknown command: the line holds a NUL byte. Try 'help'.\n\n");
	free(a);

	/* status lines */
	conn_puts(c, "set status on\n");
	a = conn_answer(c);
	ck_assert_str_eq(a, "OK\n\n");
	free(a);
	conn_puts(c, "pools show match proto\npools show frob\n\n");
	a = conn_answer(c);
	ck_assert_str_eq(a, (want = expected_answer("pools show match proto", 1)));
	ck_assert_int_eq(strcmp(a + strlen(a) - 4, "OK\n\n"), 0);
	free(a);
	free(want);
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, "Unknown option 'frob'", 21), 0);
	ck_assert_int_eq(strcmp(a + strlen(a) - 7, "ERROR\n\n"), 0);
	free(a);
	a = conn_answer(c);
	ck_assert_str_eq(a, "OK\n\n");   /* the empty line: nothing to say, success */
	free(a);
	conn_puts(c, "set status off\npools frob\n");
	a = conn_answer(c);
	ck_assert_str_eq(a, "\n");
	free(a);
	a = conn_answer(c);
	ck_assert_str_eq(a, "Unknown command 'frob'. Try 'help'.\n\n");
	free(a);
	/* only the exact forms are connection commands */
	conn_puts(c, "set status maybe\n");
	a = conn_answer(c);
	ck_assert_str_eq(a, "Unknown command 'set'. Try 'help'.\n\n");
	free(a);

	/* quit closes, even with lines behind it */
	conn_puts(c, "quit\nhelp\n");
	conn_expect_eof(c, "");
	conn_close(c);

	/* the answers are those of the process: a change is seen by the next command */
	c = conn_open();
	conn_puts(c, "pools trim\npools show match proto\n");
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, "Released ", 9), 0);
	free(a);
	a = conn_answer(c);
	ck_assert_ptr_nonnull(strstr(a, "  - Pool proto (64 bytes/16) : 0 allocated"));
	free(a);
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Many clients                                                                               */
/* ------------------------------------------------------------------------------------------ */

#define NB_CLIENTS 32
#define NB_ROUNDS  25

static const char *const client_cmds[] = {
	"pools show byname", "help", "pools frob", "pools show bysize match c 1", "pools debug",
};
static char *client_want[5];

static void *client_thread(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, r;
	struct conn *c = conn_open();

	for (r = 0; r < NB_ROUNDS; r++) {
		unsigned int k = (id + r) % 5;
		char *a;

		/* some rounds pipeline two commands in one write */
		if (r % 4 == 0) {
			char two[128];

			snprintf(two, sizeof(two), "%s\n%s\n", client_cmds[k], client_cmds[k]);
			conn_puts(c, two);
			a = conn_answer(c);
			ck_assert_str_eq(a, client_want[k]);
			free(a);
		} else {
			conn_puts(c, client_cmds[k]);
			conn_puts(c, "\n");
		}
		a = conn_answer(c);
		ck_assert_str_eq(a, client_want[k]);
		free(a);
	}
	conn_close(c);
	return NULL;
}

START_TEST(test_many_clients)
{
	struct pool_head *p[3];
	pthread_t t[NB_CLIENTS];
	unsigned int i;

	p[0] = pool_create("conn", 192, 0);
	p[1] = pool_create("buf", 4096, 0);
	p[2] = pool_create("cache", 96, 0);
	for (i = 0; i < 5; i++)
		client_want[i] = expected_answer(client_cmds[i], 0);
	start_server();
	for (i = 0; i < NB_CLIENTS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, client_thread, (void *)(uintptr_t)i), 0);
	for (i = 0; i < NB_CLIENTS; i++)
		pthread_join(t[i], NULL);
	pool_cli_stop();
	remove_tmpdir();
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pool_destroy(p[i]), 0);
	for (i = 0; i < 5; i++)
		free(client_want[i]);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Hostile and broken clients                                                                 */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_long_line)
{
	char line[POOL_CLI_LINE_MAX + 2], want[200];
	struct conn *c, *other;
	char *a;

	start_server();
	other = conn_open();

	/* exactly 4096 bytes is a line: refused as an unknown command, the client stays */
	c = conn_open();
	memset(line, 'q', POOL_CLI_LINE_MAX);
	line[POOL_CLI_LINE_MAX] = '\n';
	conn_send(c, line, POOL_CLI_LINE_MAX + 1);
	a = conn_answer(c);
	snprintf(want, sizeof(want), "Unknown command '%.64s...'. Try 'help'.\n\n", line);
	ck_assert_str_eq(a, want);
	free(a);
	conn_puts(c, "help\n");
	free(conn_answer(c));

	/* 4097 bytes: an error and the connection is closed, the rest of it is ignored */
	memset(line, 'q', POOL_CLI_LINE_MAX + 1);
	line[POOL_CLI_LINE_MAX + 1] = '\n';
	conn_send(c, line, POOL_CLI_LINE_MAX + 2);
	conn_expect_eof(c, "Line too long (over 4096 bytes): closing.\n\n");
	conn_close(c);

	/* an endless line without a newline: the same */
	c = conn_open();
	memset(line, 'r', sizeof(line));
	conn_send(c, line, sizeof(line));
	conn_expect_eof(c, "Line too long (over 4096 bytes): closing.\n\n");
	conn_close(c);

	/* nobody else noticed */
	conn_expect_start(other, "help", HELP_OPERATOR);
	conn_close(other);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(test_silent_clients)
{
	struct conn *silent, *partial, *active;

	ck_assert_int_eq(pool_cli_set_timeout_ms(300), 0);
	start_server();
	silent = conn_open();
	partial = conn_open();
	conn_puts(partial, "pools sh");
	/* while those two say nothing, another client is served */
	active = conn_open();
	conn_expect_start(active, "help", HELP_OPERATOR);
	/*
	 * Both are closed by the server (a receive timeout of 60 s would fail the test); the one
	 * that began a line is told (the idle timeout shortens the line timeout).
	 */
	conn_expect_eof(silent, "");
	conn_expect_eof(partial, "Line not finished within the line timeout: closing.\n\n");
	conn_close(silent);
	conn_close(partial);
	conn_close(active);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(test_disconnect_mid_answer)
{
	struct pool_head *p[150];
	struct conn *c;
	char name[32], *a;
	unsigned int i, k;
	size_t one;

	for (i = 0; i < 150; i++) {
		snprintf(name, sizeof(name), "p%03u", i);
		ck_assert_ptr_nonnull(p[i] = pool_create(name, 64 + 16 * i, 0));
	}
	a = expected_answer("pools show detailed", 0);
	one = strlen(a);
	free(a);
	ck_assert_uint_gt(one, 30000);
	start_server();
	for (k = 0; k < 5; k++) {
		int small = 4096;

		/* far more answer than the socket buffers hold, then gone after a few bytes */
		c = conn_open();
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		for (i = 0; i < 60; i++)
			conn_puts(c, "pools show detailed\n");
		ck_assert_int_gt(conn_fill(c), 0);
		conn_close(c);

		/* or gone right after asking */
		c = conn_open();
		conn_puts(c, "pools show detailed\npools show json detailed\n");
		conn_close(c);
	}
	/* the server is alive and well (and no SIGPIPE killed this process) */
	c = conn_open();
	conn_puts(c, "pools show detailed\n");
	a = conn_answer(c);
	ck_assert_uint_eq(strlen(a), one);
	free(a);
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
	for (i = 0; i < 150; i++)
		ck_assert_int_eq(pool_destroy(p[i]), 0);
}
END_TEST

START_TEST(test_garbage_from_client)
{
	struct conn *c;
	char buf[8192];
	uint64_t x = 0x9E3779B97F4A7C15ull;
	unsigned int i, k;

	start_server();
	for (k = 0; k < 8; k++) {
		c = conn_open();
		for (i = 0; i < sizeof(buf); i++) {
			/* xorshift64 (Marsaglia 2003): bytes of any value, a newline now and then */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (x & 0x3f) == 0 ? '\n' : (char)(x >> 24);
		}
		/* the server may close us for a long line at any point: ignore send errors */
		for (i = 0; i < sizeof(buf); i += 512)
			if (send(c->fd, buf + i, 512, MSG_NOSIGNAL) < 0)
				break;
		conn_close(c);
	}
	c = conn_open();
	conn_expect_start(c, "pools show", "Dumping pools usage.");
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(test_accept_out_of_fds)
{
	int fds[4096], n = 0, fd, i;
	struct conn *c = calloc(1, sizeof(*c));
	struct rlimit rl;
	char *a;

	ck_assert_ptr_nonnull(c);
	start_server();
	/* a low limit (this forked test only), then use up every descriptor but one */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = 256;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	while (n < 4096 && (fd = dup(0)) >= 0)
		fds[n++] = fd;
	ck_assert_int_eq(errno, EMFILE);
	ck_assert_int_gt(n, 1);
	close(fds[--n]);
	c->fd = try_connect(sock_path);
	ck_assert_int_ge(c->fd, 0);   /* queued in the backlog: the server cannot accept it */
	conn_puts(c, "help\n");
	/* give descriptors back: the server accepts it after its back-off and answers */
	for (i = 0; i < n; i++)
		close(fds[i]);
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, HELP_OPERATOR, strlen(HELP_OPERATOR)), 0);
	free(a);
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

#if !TEST_TSAN    /* the child starts the server's thread: TSan refuses after a threaded fork */
/*
 * exit() from a pool_for_each() callback while a command of the CLI server waits for the pool
 * list lock that the callback holds: the library's destructor, which stops the server at exit
 * (and at dlclose()), must not wait for that command (it would for 10 s, then abort): it only
 * removes the socket file, and the process exits with the status it was given.
 */
static const char *exit_cb_path;

static int exit_from_callback(struct pool_head *pool, void *arg)
{
	int fd = try_connect(exit_cb_path);
	struct timespec pause = { 0, 300000000 };

	(void)pool;
	(void)arg;
	if (fd < 0 || send(fd, "pools show\n", 11, MSG_NOSIGNAL) != 11)
		_exit(3);
	nanosleep(&pause, NULL);    /* the server reads the line and waits for the lock */
	exit(0);
}

START_TEST(test_exit_from_a_callback_with_the_server_running)
{
	struct stat st;
	pid_t pid;
	int status;

	make_tmpdir();
	exit_cb_path = sock_path;
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (!pool_create("exit-cb", 64, 0) || pool_cli_listen(sock_path) != 0)
			_exit(2);
		pool_for_each(exit_from_callback, NULL);
		_exit(4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	ck_assert_msg(lstat(sock_path, &st) != 0 && errno == ENOENT, "the socket file is left");
	remove_tmpdir();
}
END_TEST
#endif

START_TEST(test_fork_child_has_no_server)
{
	struct conn *c;
	pid_t pid;
	int status;

	start_server();
	/*
	 * One answered command first, and the connection kept open, so that the server thread
	 * sits in poll() at the fork: in ASan builds the C library's malloc is ASan's, whose lock a
	 * fork can leave held in the child by a thread that is not there (the child then waits
	 * forever in its first malloc).
	 */
	c = conn_open();
	conn_expect_start(c, "help", HELP_OPERATOR);    /* answered: the server waits in poll() */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char own[128];
		struct stat st;

		/* no server to stop here (it would join a thread the child does not have) */
		pool_cli_stop();
		if (lstat(sock_path, &st) != 0)
			_exit(3);
		if (TEST_TSAN)
			_exit(0);   /* ThreadSanitizer cannot start threads after a threaded fork */
		/* the parent's server is not the child's: it may serve a socket of its own */
		snprintf(own, sizeof(own), "%s/child.sock", tmpdir);
		if (pool_cli_listen(own) != 0 || lstat(own, &st) != 0)
			_exit(1);
		pool_cli_stop();
		/* and stopping removed its own socket, not the parent's */
		_exit(lstat(own, &st) == 0 || lstat(sock_path, &st) != 0 ? 2 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	conn_expect_start(c, "help", HELP_OPERATOR);    /* the parent's server carries on */
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Fault injection: every allocation of the CLI fails in turn                                 */
/* ------------------------------------------------------------------------------------------ */

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exec_commands);
	tcase_add_test(tc, test_exec_trim);
	tcase_add_test(tc, test_exec_show_pools_alias);
	tcase_add_test(tc, test_exec_flush_limit);
	tcase_add_test(tc, test_merged_pool_every_name);
	suite_add_tcase(s, tc);

	tc = tcase_create("Levels");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exec_levels);
	tcase_add_test(tc, test_exec_addresses_admin_only);
	tcase_add_test(tc, test_exec_profile_addresses_admin_only);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exec_errors);
	tcase_add_test(tc, test_exec_layout_refused_without_pools);
	tcase_add_test(tc, test_listen_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("Socket");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_listen_mode_stale_live);
	tcase_add_test(tc, test_listen_levels);
	tcase_add_test(tc, test_listen_symlink_not_followed);
	tcase_add_test(tc, test_listen_symlink_race);
	tcase_add_test(tc, test_socat_client);
	tcase_add_test(tc, test_line_protocol);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_silent_clients);
	tcase_add_test(tc, test_disconnect_mid_answer);
	tcase_add_test(tc, test_garbage_from_client);
	tcase_add_test(tc, test_accept_out_of_fds);
	tcase_add_test(tc, test_fork_child_has_no_server);
#if !TEST_TSAN
	tcase_add_test(tc, test_exit_from_a_callback_with_the_server_running);
#endif
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_many_clients);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN(cli_suite)
