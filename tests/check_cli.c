/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_cli_exec(): every command and every error path; pool_cli_listen()/pool_cli_stop(): every
 * error of listen, mode 0600, stale socket replaced, non-socket path refused with EEXIST, the
 * line protocol (pipelining, \r\n, status lines, quit, NUL bytes, empty lines never inside an
 * answer), many concurrent clients, one client too many, an over-long line, silent clients
 * closed after the timeout while others are served, clients that disconnect mid-answer or send
 * garbage.
 *
 * Check forks every test: each test starts with no pool and no server, and leaves the server
 * stopped. SIGPIPE keeps its default action, so a send to a closed client that raised it would
 * kill the test.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "pool-int.h"

#if defined(__SANITIZE_THREAD__)
#define RUNNING_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RUNNING_TSAN 1
#endif
#endif
#ifndef RUNNING_TSAN
#define RUNNING_TSAN 0
#endif

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* pool_cli_exec(line) into a malloc()ed string; *ret receives its return value. */
static char *exec(const char *line, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r, e;

	ck_assert_ptr_nonnull(f);
	errno = 0;
	r = pool_cli_exec(line, f);
	e = errno;
	if (ret)
		*ret = r;
	ck_assert_int_eq(fclose(f), 0);
	errno = e;   /* fclose() may change it */
	return buf;
}

static unsigned int count_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Refused with exactly the one line `want`, errno EINVAL, debugging flags unchanged. */
static void check_refused(const char *line, const char *want)
{
	unsigned int flags = pool_debugging;
	int r;
	char *s = exec(line, &r);

	ck_assert_msg(r != 0, "'%s' was accepted: %s", line, s);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(s, want);
	ck_assert_uint_eq(pool_debugging, flags);
	free(s);
}

static char tmpdir[64];
static char sock_path[100];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_cli_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(sock_path, sizeof(sock_path), "%s/pools.sock", tmpdir);
}

static void remove_tmpdir(void)
{
	char cmd[128];

	pool_cli_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* A client connection with its receive buffer. Receives time out after 60 s (a hang). */
struct conn {
	int fd;
	size_t len;
	char buf[1 << 16];
};

static int try_connect(const char *path)
{
	struct sockaddr_un sa;
	struct timeval tv = { .tv_sec = 60 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	return fd;
}

static struct conn *conn_open(void)
{
	struct conn *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	c->fd = try_connect(sock_path);
	ck_assert_msg(c->fd >= 0, "connect %s: %s", sock_path, strerror(errno));
	return c;
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c);
}

static void conn_send(struct conn *c, const char *data, size_t len)
{
	while (len) {
		ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);

		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		data += n;
		len -= (size_t)n;
	}
}

static void conn_puts(struct conn *c, const char *s)
{
	conn_send(c, s, strlen(s));
}

/* Receive more bytes; returns 0 at EOF. Fails the test on a timeout (the server hung). */
static ssize_t conn_fill(struct conn *c)
{
	ssize_t n;

	ck_assert_uint_lt(c->len, sizeof(c->buf) - 1);
	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
	ck_assert_msg(n >= 0, "recv: %s", strerror(errno));
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	return n;
}

/* The next answer (up to and including its empty line), malloc()ed. */
static char *conn_answer(struct conn *c)
{
	for (;;) {
		char *end = NULL, *a;
		size_t alen;

		if (c->len >= 1 && c->buf[0] == '\n')
			end = c->buf;   /* an empty answer */
		else if (c->len >= 2)
			end = memmem(c->buf, c->len, "\n\n", 2), end = end ? end + 1 : NULL;
		if (end) {
			alen = (size_t)(end - c->buf) + 1;
			a = strndup(c->buf, alen);
			ck_assert_ptr_nonnull(a);
			memmove(c->buf, c->buf + alen, c->len - alen);
			c->len -= alen;
			c->buf[c->len] = 0;
			return a;
		}
		ck_assert_msg(conn_fill(c) > 0, "EOF before a whole answer; got '%s'", c->buf);
	}
}

/* Read until the server closes the connection; returns what came before. */
static char *conn_until_eof(struct conn *c)
{
	while (conn_fill(c) > 0)
		if (c->len > sizeof(c->buf) / 2) {
			c->len = 0;
			c->buf[0] = 0;
		}
	return strdup(c->buf);
}

/* What the socket must answer for `line`: pool_cli_exec()'s output, empty lines dropped. */
static char *expected_answer(const char *line, int status_mode)
{
	char *s, *w, *r;
	int ret;
	size_t n;

	s = exec(line, &ret);
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

static void start_server(void)
{
	make_tmpdir();
	ck_assert_msg(pool_cli_listen(sock_path) == 0, "listen: %s", strerror(errno));
}

/* ------------------------------------------------------------------------------------------ */
/* Commands                                                                                   */
/* ------------------------------------------------------------------------------------------ */

START_TEST(exec_errors)
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
	s = exec("pools debug no-tag", &r);
	ck_assert_int_eq(r, 0);
	free(s);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(exec_layout_refused_without_pools)
{
	/* even before the first pool, when the library would accept them */
	check_refused("pools debug tag", "pool debugging option 'tag' changes the object layout "
	              "and cannot change at run time\n");
	ck_assert_uint_eq(pool_debugging & POOL_DBG_TAG, 0);
}
END_TEST

START_TEST(exec_commands)
{
	struct pool_head *p = pool_create("cmd", 256, 0);
	char *s, *d;
	int r;

	ck_assert_ptr_nonnull(p);
	s = exec("help", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(strncmp(s, "Commands:\n", 10), 0);
	ck_assert_ptr_nonnull(strstr(s, "  pools show [byname|bysize|byusage] [detailed] "
	                             "[match <prefix>] [<max>] [json|prometheus]\n"));
	ck_assert_ptr_nonnull(strstr(s, "  pools trim "));
	ck_assert_ptr_nonnull(strstr(s, "  pools debug <options> "));
	free(s);

	/* pools show is pool_dump() */
	s = exec(" pools  show\tbysize  1 \r\n", &r);
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
	s = exec("pools topology", &r);
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
	s = exec("", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "");
	free(s);
	s = exec(" \t\r\n", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "");
	free(s);

	/* pools debug: show, change, help */
	s = exec("pools debug", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "no-fail,merge,hot-first,no-integrity,global,cache,no-caller,no-tag,"
	                    "no-poison,no-uaf,no-backup\n");
	free(s);
	s = exec("pools debug no-merge,poison=0x41,integrity", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(s, "Pool debugging options now: no-fail,no-merge,hot-first,integrity,"
	                    "global,cache,no-caller,no-tag,poison=0x41,no-uaf,no-backup\n");
	ck_assert_uint_ne(pool_debugging & POOL_DBG_NO_MERGE, 0);
	ck_assert_uint_eq(pool_debugging_poison_byte(), 0x41);
	free(s);
	s = exec("pools debug merge,no-poison,no-integrity", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(pool_debugging & (POOL_DBG_NO_MERGE | POOL_DBG_POISON |
	                                    POOL_DBG_INTEGRITY), 0);
	free(s);
	s = exec("pools debug help", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(s, "Pool debugging options"));
	ck_assert_ptr_nonnull(strstr(s, "no-merge"));
	free(s);
	/* help among valid words changes nothing; among invalid ones it is an error */
	s = exec("pools debug no-merge,help", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(pool_debugging & POOL_DBG_NO_MERGE, 0);
	free(s);
	check_refused("pools debug help,bogus", "unknown pool debugging option 'bogus'\n");
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

START_TEST(exec_trim)
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
	/*
	 * The 4000 objects were just used, so a pool_gc() now rightly keeps them: it ends the
	 * demand half-window in which they were needed. After it they lie idle, and the next
	 * collection (the command) gives them back.
	 */
	pool_gc(p);
	pool_get_stats(p, &before);
	ck_assert_uint_eq(before.allocated, 4000);
	ck_assert_uint_eq(before.used, 0);
	s = exec("pools trim", &r);
	pool_get_stats(p, &after);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(sscanf(s, "Released %zu bytes to the OS layer (the pools held %zu bytes, "
	                        "now %zu).", &released, &held, &now), 3);
	ck_assert_uint_eq(count_lines(s), 1);
	/* single-threaded: the figures are exactly the pool's before and after pool_gc() */
	ck_assert_uint_eq(held, before.allocated * before.stride);
	ck_assert_uint_eq(now, after.allocated * after.stride);
	ck_assert_uint_eq(released, held - now);
	/* nothing used, nothing needed: all but about one cluster went back */
	ck_assert_uint_gt(released, 0);
	ck_assert_uint_lt(now, held / 2);
	free(s);
	s = exec("pools trim", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(sscanf(s, "Released %zu bytes", &released), 1);
	free(s);
	ck_assert_int_eq(pool_destroy(p), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Listening                                                                                  */
/* ------------------------------------------------------------------------------------------ */

START_TEST(listen_errors)
{
	char longpath[200], file[128], dir[128];
	struct stat st;
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

	/* one server per process */
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(sock_path), -1);
	ck_assert_int_eq(errno, EBUSY);
	snprintf(file, sizeof(file), "%s/other.sock", tmpdir);
	errno = 0;
	ck_assert_int_eq(pool_cli_listen(file), -1);
	ck_assert_int_eq(errno, EBUSY);
	pool_cli_stop();
	pool_cli_stop();   /* no-op */
	remove_tmpdir();
}
END_TEST

START_TEST(listen_mode_stale_live)
{
	struct sockaddr_un sa;
	struct stat st;
	struct conn *c;
	char *a;
	int fd;

	make_tmpdir();
	/* mode 0600 even with a permissive umask */
	umask(0);
	ck_assert_int_eq(pool_cli_listen(sock_path), 0);
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	c = conn_open();
	conn_puts(c, "help\n");
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, "Commands:\n", 10), 0);
	free(a);
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
	conn_puts(c, "help\n");
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, "Commands:\n", 10), 0);
	free(a);
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

/* ------------------------------------------------------------------------------------------ */
/* The protocol                                                                               */
/* ------------------------------------------------------------------------------------------ */

START_TEST(protocol)
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
	a = conn_until_eof(c);
	ck_assert_str_eq(a, "");
	free(a);
	conn_close(c);

	/* the answers are those of the process: a change is seen by the next command */
	c = conn_open();
	conn_puts(c, "pools debug no-merge\npools debug\n");
	free(conn_answer(c));
	a = conn_answer(c);
	ck_assert_ptr_nonnull(strstr(a, ",no-merge,"));
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

START_TEST(many_clients)
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

START_TEST(too_many_clients)
{
	struct conn *c[POOL_CLI_MAX_CLIENTS], *extra;
	unsigned int i;
	char *a;

	start_server();
	/* each one answered, so the server has accepted all of them */
	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++) {
		c[i] = conn_open();
		conn_puts(c[i], "\n");
		a = conn_answer(c[i]);
		ck_assert_str_eq(a, "\n");
		free(a);
	}
	extra = conn_open();
	a = conn_until_eof(extra);
	ck_assert_str_eq(a, "Too many clients: try again later.\n\n");
	free(a);
	conn_close(extra);
	/* the others are still served; once one leaves, a newcomer is */
	conn_puts(c[7], "help\n");
	a = conn_answer(c[7]);
	ck_assert_int_eq(strncmp(a, "Commands:", 9), 0);
	free(a);
	conn_close(c[7]);
	/* the server sees the departure asynchronously: retry while it says it is full */
	for (i = 0; i < 1000; i++) {
		c[7] = conn_open();
		conn_puts(c[7], "pools show\n");
		a = conn_answer(c[7]);
		if (strcmp(a, "Too many clients: try again later.\n\n") != 0)
			break;
		free(a);
		conn_close(c[7]);
		usleep(10000);
	}
	ck_assert_int_eq(strncmp(a, "Dumping pools usage.", 20), 0);
	free(a);
	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
		conn_close(c[i]);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Hostile and broken clients                                                                 */
/* ------------------------------------------------------------------------------------------ */

START_TEST(long_line)
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
	a = conn_until_eof(c);
	ck_assert_str_eq(a, "Line too long (over 4096 bytes): closing.\n\n");
	free(a);
	conn_close(c);

	/* an endless line without a newline: the same */
	c = conn_open();
	memset(line, 'r', sizeof(line));
	conn_send(c, line, sizeof(line));
	a = conn_until_eof(c);
	ck_assert_str_eq(a, "Line too long (over 4096 bytes): closing.\n\n");
	free(a);
	conn_close(c);

	/* nobody else noticed */
	conn_puts(other, "help\n");
	a = conn_answer(other);
	ck_assert_int_eq(strncmp(a, "Commands:", 9), 0);
	free(a);
	conn_close(other);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(silent_clients)
{
	struct conn *silent, *partial, *active;
	char *a;

	ck_assert_int_eq(pool_cli_set_timeout_ms(300), 0);
	start_server();
	silent = conn_open();
	partial = conn_open();
	conn_puts(partial, "pools sh");
	/* while those two say nothing, another client is served */
	active = conn_open();
	conn_puts(active, "help\n");
	a = conn_answer(active);
	ck_assert_int_eq(strncmp(a, "Commands:", 9), 0);
	free(a);
	/* both are closed by the server (a receive timeout of 60 s would fail the test) */
	a = conn_until_eof(silent);
	ck_assert_str_eq(a, "");
	free(a);
	a = conn_until_eof(partial);
	ck_assert_str_eq(a, "");
	free(a);
	conn_close(silent);
	conn_close(partial);
	conn_close(active);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(disconnect_mid_answer)
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

START_TEST(garbage)
{
	struct conn *c;
	char buf[8192], *a;
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
	conn_puts(c, "pools show\n");
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, "Dumping pools usage.", 20), 0);
	free(a);
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(accept_out_of_fds)
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
	ck_assert_int_eq(strncmp(a, "Commands:", 9), 0);
	free(a);
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(fork_child_has_no_server)
{
	struct conn *c;
	pid_t pid;
	int status;
	char *a;

	start_server();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char own[128];
		struct stat st;

		/* no server to stop here (it would join a thread the child does not have) */
		pool_cli_stop();
		if (lstat(sock_path, &st) != 0)
			_exit(3);
		if (RUNNING_TSAN)
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
	c = conn_open();
	conn_puts(c, "help\n");
	a = conn_answer(c);
	ck_assert_int_eq(strncmp(a, "Commands:", 9), 0);
	free(a);
	conn_close(c);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	tc = tcase_create("Core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exec_commands);
	tcase_add_test(tc, exec_trim);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exec_errors);
	tcase_add_test(tc, exec_layout_refused_without_pools);
	tcase_add_test(tc, listen_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("Socket");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, listen_mode_stale_live);
	tcase_add_test(tc, protocol);
	tcase_add_test(tc, long_line);
	tcase_add_test(tc, silent_clients);
	tcase_add_test(tc, disconnect_mid_answer);
	tcase_add_test(tc, garbage);
	tcase_add_test(tc, accept_out_of_fds);
	tcase_add_test(tc, fork_child_has_no_server);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, many_clients);
	tcase_add_test(tc, too_many_clients);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cli_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
