/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Helpers of the CLI socket tests (check_cli.c, check_cli_int.c): a private temporary directory
 * for the sockets, a server on sock_path in it, and a client connection that sends lines and
 * reads answers (each ends with an empty line), with 60 s timeouts so that a hung server fails
 * the test instead of hanging it.
 */
#ifndef POOL_TESTS_TESTCLI_H
#define POOL_TESTS_TESTCLI_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <pool/pool.h>

/* The first line of `help` on a socket of the default level. */
#define HELP_OPERATOR "Commands at level operator (higher levels have more):\n"

/* The test's temporary directory (make_tmpdir()) and the server's socket in it. */
static char tmpdir[64];
static char sock_path[100];

/* A new private directory in /tmp, and sock_path in it. */
static inline void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_cli_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(sock_path, sizeof(sock_path), "%s/pools.sock", tmpdir);
}

/* Stop the server and remove the directory with whatever the test left in it. */
static inline void remove_tmpdir(void)
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
	char buf[1 << 17];           /* pools show detailed of 150 pools: over 64 KiB */
};

/* A connection to the socket at `path`, or -1 with errno set (nothing listens there...). */
static inline int try_connect(const char *path)
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

/* A connection to sock_path (it must succeed). */
static inline struct conn *conn_open(void)
{
	struct conn *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	c->fd = try_connect(sock_path);
	ck_assert_msg(c->fd >= 0, "connect %s: %s", sock_path, strerror(errno));
	return c;
}

static inline void conn_close(struct conn *c)
{
	close(c->fd);
	free(c);
}

/* Send all of data (a short send is retried; a failure fails the test). */
static inline void conn_send(struct conn *c, const char *data, size_t len)
{
	while (len) {
		ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);

		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		data += n;
		len -= (size_t)n;
	}
}

static inline void conn_puts(struct conn *c, const char *s)
{
	conn_send(c, s, strlen(s));
}

/* Receive more bytes; returns 0 at EOF. Fails the test on a timeout (the server hung). */
static inline ssize_t conn_fill(struct conn *c)
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
static inline char *conn_answer(struct conn *c)
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
static inline char *conn_until_eof(struct conn *c)
{
	while (conn_fill(c) > 0)
		if (c->len > sizeof(c->buf) / 2) {
			c->len = 0;
			c->buf[0] = 0;
		}
	return strdup(c->buf);
}

/* Send `line` (with its newline); its answer must start with `prefix`. */
static inline void conn_expect_start(struct conn *c, const char *line, const char *prefix)
{
	char *a;

	conn_puts(c, line);
	conn_puts(c, "\n");
	a = conn_answer(c);
	ck_assert_msg(strncmp(a, prefix, strlen(prefix)) == 0, "'%s' answered '%s'", line, a);
	free(a);
}

/* What the server sends until it closes the connection must be `want`. */
static inline void conn_expect_eof(struct conn *c, const char *want)
{
	char *a = conn_until_eof(c);

	ck_assert_str_eq(a, want);
	free(a);
}

/* make_tmpdir(), then serve sock_path at the default level (pool_cli_listen()). */
static inline void start_server(void)
{
	make_tmpdir();
	ck_assert_msg(pool_cli_listen(sock_path) == 0, "listen: %s", strerror(errno));
}

#endif
