/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The command handler (`pools show|trim|debug|topology`, `help`) and the optional UNIX-socket
 * CLI thread that serves it, in the way HAProxy's stats socket is used:
 *     socat - UNIX-CONNECT:/run/app/pools.sock
 *
 * The server
 *
 * One thread, one poll(2) loop, every socket non-blocking. It owns the listening socket, up to
 * POOL_CLI_MAX_CLIENTS clients, and the read end of a pipe that pool_cli_stop() writes to.
 * A single poll thread rather than a thread per client because:
 *   - a client can only ever cost the server a buffer (a 4 KiB line and one answer), never a
 *     thread, so many or hostile clients cannot exhaust threads or memory;
 *   - no client can block another: the server never waits on one socket, it waits on all at
 *     once, and a client that does not read its answer only stops its own command stream;
 *   - commands are short (a dump is a walk over the pools, pool_gc() milliseconds at most), so
 *     running them in the loop costs the other clients little latency, and the only state
 *     shared between clients is the pool library itself, which is thread-safe.
 *
 * Per client, in order:
 *   1. bytes are read into a line buffer of POOL_CLI_LINE_MAX + 1 bytes;
 *   2. while the client has no answer pending and the buffer holds a full line, the line is
 *      run by pool_cli_exec() into a memory stream, empty lines are dropped from the answer
 *      (so that an empty line always ends an answer), and the answer plus one empty line is
 *      queued; with `set status on`, a line "OK" or "ERROR" precedes that empty line;
 *   3. the answer is sent as the socket accepts it (MSG_NOSIGNAL: a client that went away
 *      cannot raise SIGPIPE); no new line is run until it is all sent, which bounds a client's
 *      memory to one answer however many commands it pipelines;
 *   4. a buffer full without a newline is a line over POOL_CLI_LINE_MAX bytes: the client gets
 *      one error line; once it is sent the server shuts its side down and drops whatever the
 *      client still sends until the client closes or the timeout (closing at once with client
 *      bytes unread would make the kernel reset the connection, losing the error line);
 *   5. a client that neither sends nor receives a byte for the timeout (10 s by default,
 *      pool_cli_set_timeout_ms()) is closed, answer pending or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "pool-int.h"
#include "pool-dump.h"

/* ------------------------------------------------------------------------------------------ */
/* The command handler                                                                        */
/* ------------------------------------------------------------------------------------------ */

static const char cli_help[] =
	"Commands:\n"
	"  help                      this list\n"
	"  pools show [byname|bysize|byusage] [detailed] [match <prefix>] [<max>] "
	"[json|prometheus]\n"
	"                            the pools and what they hold; byname: by name, bysize: "
	"largest objects\n"
	"                            first, byusage: most bytes allocated first (hides empty "
	"pools); match:\n"
	"                            names starting with <prefix>; <max>: the first <max> "
	"pools only\n"
	"  pools trim                give memory the pools do not need back to the system\n"
	"  pools debug               the debugging options in effect\n"
	"  pools debug <options>     change the options that may change at run time "
	"(pools debug help)\n"
	"  pools topology            the machine topology libpool detected and the defaults it "
	"derived\n"
	"On the socket only:\n"
	"  set status on|off         end each answer with a line OK or ERROR before the empty "
	"line\n"
	"  quit                      close the connection\n";

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static const char *skip_blanks(const char *p)
{
	while (*p && is_blank(*p))
		p++;
	return p;
}

static size_t word_len(const char *p)
{
	size_t n = 0;

	while (p[n] && !is_blank(p[n]))
		n++;
	return n;
}

static int word_is(const char *w, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(w, lit, len) == 0;
}

static int unknown_command(FILE *out, const char *w, size_t len)
{
	fputs("Unknown command '", out);
	pool__put_word(out, w, len);
	fputs("'. Try 'help'.\n", out);
	errno = EINVAL;
	return -1;
}

/* Returns -1 (after the error line) if anything but blanks follows p. */
static int no_more_words(FILE *out, const char *p)
{
	p = skip_blanks(p);
	if (*p)
		return unknown_command(out, p, word_len(p));
	return 0;
}

/* A message from the parser, kept on one printable line whatever the client sent. */
static void put_message(FILE *out, const char *msg)
{
	for (; *msg; msg++) {
		unsigned char c = (unsigned char)*msg;

		if (c < 0x20 || c > 0x7e)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('\n', out);
}

static int cmd_trim(FILE *out)
{
	size_t before = pool__allocated_bytes(), after;

	pool_gc(NULL);
	after = pool__allocated_bytes();
	fprintf(out, "Released %zu bytes to the OS layer (the pools held %zu bytes, now %zu).\n",
	        before > after ? before - after : 0, before, after);
	return 0;
}

static int cmd_debug(FILE *out, const char *opts)
{
	char *copy, *err = NULL;
	size_t len;
	int ret;

	opts = skip_blanks(opts);
	len = strlen(opts);
	while (len && is_blank(opts[len - 1]))
		len--;
	if (!len) {
		pool_debugging_show(out);
		return 0;
	}
	copy = strndup(opts, len);
	if (!copy) {
		fputs("Not enough memory to parse the debugging options.\n", out);
		errno = ENOMEM;
		return -1;
	}
	ret = pool__parse_debugging(copy, &err, out, 1);
	free(copy);
	if (ret < 0) {
		put_message(out, err ? err : "invalid pool debugging options");
		free(err);
		errno = EINVAL;
		return -1;
	}
	if (ret == 0) {
		fputs("Pool debugging options now: ", out);
		pool_debugging_show(out);
	}
	return 0;
}

POOL_API int pool_cli_exec(const char *line, FILE *out)
{
	const char *p, *w;
	size_t len;

	if (!line || !out) {
		errno = EINVAL;
		return -1;
	}
	w = skip_blanks(line);
	if (!*w)
		return 0;
	len = word_len(w);
	p = w + len;
	if (word_is(w, len, "help")) {
		if (no_more_words(out, p) < 0)
			return -1;
		fputs(cli_help, out);
		return 0;
	}
	if (!word_is(w, len, "pools"))
		return unknown_command(out, w, len);
	w = skip_blanks(p);
	len = word_len(w);
	p = w + len;
	if (!len)
		return unknown_command(out, "pools", 5);
	if (word_is(w, len, "show"))
		return pool_dump(out, p) < 0 ? -1 : 0;
	if (word_is(w, len, "trim"))
		return no_more_words(out, p) < 0 ? -1 : cmd_trim(out);
	if (word_is(w, len, "debug"))
		return cmd_debug(out, p);
	if (word_is(w, len, "topology")) {
		if (no_more_words(out, p) < 0)
			return -1;
		pool_topology_show(out);
		return 0;
	}
	return unknown_command(out, w, len);
}

/* ------------------------------------------------------------------------------------------ */
/* The socket server                                                                          */
/* ------------------------------------------------------------------------------------------ */

struct cli_client {
	int fd;
	int closing;                     /* line too long: send the error, shut our side down,
	                                    drop its input until it closes or times out */
	int status;                      /* `set status on` */
	long long last_ms;               /* last byte received or sent (CLOCK_MONOTONIC) */
	size_t in_len;
	char in[POOL_CLI_LINE_MAX + 1];
	char *out;                       /* answer being sent, malloc()ed */
	size_t out_len, out_off;
};

struct cli_server {
	int listen_fd;
	int wake_rd, wake_wr;            /* pool_cli_stop() writes a byte to wake the loop */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;                       /* identity of our socket file, to unlink only ours */
	ino_t ino;
	pthread_t thread;
	long long accept_after_ms;       /* accept() failed for lack of resources: wait till then */
	struct cli_client *clients[POOL_CLI_MAX_CLIENTS];
};

#define ACCEPT_BACKOFF_MS 100

static pthread_mutex_t cli_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cli_server *cli_running;  /* under cli_lock */
static atomic_uint cli_timeout_ms = POOL_CLI_TIMEOUT_MS_DEF;
static atomic_int cli_stopping;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

POOL_API int pool_cli_set_timeout_ms(unsigned int timeout_ms)
{
	if (timeout_ms == 0 || timeout_ms > POOL_CLI_TIMEOUT_MS_MAX) {
		errno = EINVAL;
		return -1;
	}
	atomic_store(&cli_timeout_ms, timeout_ms);
	return 0;
}

static void client_close(struct cli_server *srv, unsigned int i)
{
	struct cli_client *c = srv->clients[i];

	close(c->fd);
	free(c->out);
	free(c);
	srv->clients[i] = NULL;
}

/* Queue `text` (len bytes) followed by `tail` as the answer; 0, or -1 when out of memory. */
static int client_queue(struct cli_client *c, const char *text, size_t len, const char *tail)
{
	size_t tlen = strlen(tail);
	char *buf = malloc(len + tlen);

	if (!buf)
		return -1;
	memcpy(buf, text, len);
	memcpy(buf + len, tail, tlen);
	free(c->out);
	c->out = buf;
	c->out_len = len + tlen;
	c->out_off = 0;
	return 0;
}

/* Drop empty lines from buf[0..*len) and make it end with a newline (unless empty). */
static void answer_normalise(char *buf, size_t *len)
{
	size_t r, w = 0;

	for (r = 0; r < *len; r++) {
		if (buf[r] == '\n' && (w == 0 || buf[w - 1] == '\n'))
			continue;
		buf[w++] = buf[r];
	}
	if (w && buf[w - 1] != '\n')
		buf[w++] = '\n';
	*len = w;
}

/* Run one command line of a client and queue its answer. Returns -1 to close the client. */
static int client_run(struct cli_client *c, char *line)
{
	char *ans = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if (!strcmp(line, "quit"))
		return -1;
	if (!strcmp(line, "set status on") || !strcmp(line, "set status off")) {
		c->status = !strcmp(line, "set status on");
		return client_queue(c, "", 0, c->status ? "OK\n\n" : "\n");
	}
	f = open_memstream(&ans, &len);
	if (!f)
		return client_queue(c, "Not enough memory to run the command.\n", 38,
		                    c->status ? "ERROR\n\n" : "\n");
	ret = pool_cli_exec(line, f);
	/* ends an unterminated last line; otherwise an empty line that answer_normalise() drops */
	fputc('\n', f);
	if (fclose(f) != 0 || !ans) {
		free(ans);
		return client_queue(c, "Not enough memory to run the command.\n", 38,
		                    c->status ? "ERROR\n\n" : "\n");
	}
	answer_normalise(ans, &len);
	ret = client_queue(c, ans, len, !c->status ? "\n" : ret == 0 ? "OK\n\n" : "ERROR\n\n");
	free(ans);
	return ret;
}

/* Run the complete lines of a client while it has no answer pending. -1: close it. */
static int client_process(struct cli_client *c)
{
	char *nl;

	while (!c->closing && c->out_off == c->out_len &&
	       (nl = memchr(c->in, '\n', c->in_len))) {
		size_t used = (size_t)(nl - c->in) + 1;
		char line[POOL_CLI_LINE_MAX + 1];
		size_t llen = used - 1;

		memcpy(line, c->in, llen);
		if (llen && line[llen - 1] == '\r')
			llen--;
		line[llen] = 0;
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
		if (memchr(line, 0, llen)) {
			static const char msg[] = "Unknown command: the line holds a NUL byte. "
			                          "Try 'help'.\n";

			if (client_queue(c, msg, sizeof(msg) - 1, c->status ? "ERROR\n\n" : "\n") < 0)
				return -1;
			continue;
		}
		if (client_run(c, line) < 0)
			return -1;
	}
	if (!c->closing && c->out_off == c->out_len && c->in_len == sizeof(c->in)) {
		static const char msg[] = "Line too long (over 4096 bytes): closing.\n";

		c->closing = 1;
		c->in_len = 0;
		if (client_queue(c, msg, sizeof(msg) - 1, c->status ? "ERROR\n\n" : "\n") < 0)
			return -1;
	}
	return 0;
}

static int client_read(struct cli_client *c)
{
	ssize_t n;

	if (c->closing) {
		/* lingering close: drop what it still sends until it closes or times out */
		char scratch[4096];

		n = recv(c->fd, scratch, sizeof(scratch), 0);
		if (n == 0)
			return -1;
		if (n < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
		return 0;
	}
	n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);

	if (n == 0)
		return -1;
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
	c->in_len += (size_t)n;
	c->last_ms = now_ms();
	return client_process(c);
}

static int client_write(struct cli_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
		}
		c->out_off += (size_t)n;
		c->last_ms = now_ms();
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (c->closing) {
		/*
		 * Closing now, with client bytes unread, would make the kernel reset the
		 * connection and the client could lose our last answer: end our side instead
		 * and read until it closes (or the timeout).
		 */
		shutdown(c->fd, SHUT_WR);
		return 0;
	}
	/* lines pipelined behind the answer just sent */
	return client_process(c);
}

static void server_accept(struct cli_server *srv)
{
	unsigned int i;
	int fd;

	while ((fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct cli_client *c = NULL;

		for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
			if (!srv->clients[i])
				break;
		if (i < POOL_CLI_MAX_CLIENTS)
			c = calloc(1, sizeof(*c));
		if (!c) {
			static const char msg[] = "Too many clients: try again later.\n\n";

			if (send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				errno = 0;
			close(fd);
			continue;
		}
		c->fd = fd;
		c->last_ms = now_ms();
		srv->clients[i] = c;
	}
	/*
	 * Out of file descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): the pending
	 * connection stays queued and the listener stays readable, so polling it again at once
	 * would spin. Leave it alone for ACCEPT_BACKOFF_MS.
	 */
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
		srv->accept_after_ms = now_ms() + ACCEPT_BACKOFF_MS;
}

static void *server_loop(void *arg)
{
	struct cli_server *srv = arg;
	struct pollfd pfd[2 + POOL_CLI_MAX_CLIENTS];
	unsigned int map[2 + POOL_CLI_MAX_CLIENTS];

	while (!atomic_load(&cli_stopping)) {
		long long now = now_ms(), timeout = atomic_load(&cli_timeout_ms), wait = -1;
		unsigned int i, n = 2;

		pfd[0].fd = srv->wake_rd;
		pfd[0].events = POLLIN;
		pfd[1].fd = srv->listen_fd;
		pfd[1].events = POLLIN;
		if (now < srv->accept_after_ms) {
			pfd[1].fd = -1;   /* poll() ignores it */
			wait = srv->accept_after_ms - now;
		}
		for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++) {
			struct cli_client *c = srv->clients[i];
			long long left;

			if (!c)
				continue;
			left = c->last_ms + timeout - now;
			if (left <= 0) {
				client_close(srv, i);
				continue;
			}
			if (wait < 0 || left < wait)
				wait = left;
			pfd[n].fd = c->fd;
			pfd[n].events = 0;
			if (c->out_off < c->out_len)
				pfd[n].events |= POLLOUT;
			else if (c->closing || c->in_len < sizeof(c->in))
				pfd[n].events |= POLLIN;
			map[n++] = i;
		}
		if (poll(pfd, n, (int)wait) < 0)
			continue;   /* EINTR; nothing else can fail with valid arguments */
		if (pfd[0].revents)
			break;
		/* clients first: one that left frees its slot for a newcomer in this round */
		for (i = 2; i < n; i++) {
			struct cli_client *c = srv->clients[map[i]];
			int ret = 0;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].revents & POLLOUT)
				ret = client_write(c);
			else if (pfd[i].revents & POLLIN)
				ret = client_read(c);
			else
				ret = -1;   /* POLLHUP or POLLERR with nothing to read */
			if (ret == 0 && c->out_off < c->out_len)
				ret = client_write(c);
			if (ret < 0)
				client_close(srv, map[i]);
		}
		if (pfd[1].revents & POLLIN)
			server_accept(srv);
	}
	return NULL;
}

/* Is a process serving `path`? 1: yes, 0: nobody (stale socket), -1: error in errno. */
static int socket_alive(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (ret == 0)
		return 1;
	if (errno == ECONNREFUSED || errno == ENOENT)
		return 0;
	return -1;
}

static void server_free(struct cli_server *srv)
{
	unsigned int i;

	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
		if (srv->clients[i])
			client_close(srv, i);
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	if (srv->wake_rd >= 0)
		close(srv->wake_rd);
	if (srv->wake_wr >= 0)
		close(srv->wake_wr);
	free(srv);
}

/* Remove our socket file, unless someone replaced it since. */
static void server_unlink(const struct cli_server *srv)
{
	struct stat st;

	if (lstat(srv->path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == srv->dev &&
	    st.st_ino == srv->ino)
		unlink(srv->path);
}

/*
 * fork(): the child has no server thread. It drops the parent's server (closes its copies of
 * the descriptors, leaves the socket file to the parent) so that it may listen on its own.
 * cli_lock is held across fork() so that no server is half set up or half stopped.
 */
static void cli_fork_prepare(void)
{
	pthread_mutex_lock(&cli_lock);
}

static void cli_fork_parent(void)
{
	pthread_mutex_unlock(&cli_lock);
}

static void cli_fork_child(void)
{
	if (cli_running) {
		server_free(cli_running);
		cli_running = NULL;
	}
	pthread_mutex_unlock(&cli_lock);
}

static void cli_register_atfork(void)
{
	pthread_atfork(cli_fork_prepare, cli_fork_parent, cli_fork_child);
}

POOL_API int pool_cli_listen(const char *unix_path)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

	struct cli_server *srv;
	struct sockaddr_un sa;
	struct stat st;
	sigset_t all, old;
	int wake[2], err, alive;

	if (!unix_path || !*unix_path) {
		errno = EINVAL;
		return -1;
	}
	if (strlen(unix_path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	pthread_once(&atfork_once, cli_register_atfork);
	pthread_mutex_lock(&cli_lock);
	if (cli_running) {
		pthread_mutex_unlock(&cli_lock);
		errno = EBUSY;
		return -1;
	}
	if (lstat(unix_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			err = EEXIST;
			goto fail_unlock;
		}
		alive = socket_alive(unix_path);
		if (alive != 0) {
			err = alive > 0 ? EADDRINUSE : errno;
			goto fail_unlock;
		}
		if (unlink(unix_path) < 0 && errno != ENOENT) {
			err = errno;
			goto fail_unlock;
		}
	} else if (errno != ENOENT) {
		err = errno;
		goto fail_unlock;
	}

	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		err = ENOMEM;
		goto fail_unlock;
	}
	srv->listen_fd = srv->wake_rd = srv->wake_wr = -1;
	snprintf(srv->path, sizeof(srv->path), "%s", unix_path);
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		err = errno;
		goto fail;
	}
	srv->wake_rd = wake[0];
	srv->wake_wr = wake[1];
	srv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0) {
		err = errno;
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, unix_path, strlen(unix_path) + 1);
	/* nobody can connect before listen(): the mode is 0600 before anyone may use it */
	if (bind(srv->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno == EADDRINUSE ? EEXIST : errno;
		goto fail;
	}
	if (chmod(unix_path, 0600) < 0 || lstat(unix_path, &st) < 0 ||
	    listen(srv->listen_fd, (int)POOL_CLI_MAX_CLIENTS) < 0) {
		err = errno;
		unlink(unix_path);
		goto fail;
	}
	srv->dev = st.st_dev;
	srv->ino = st.st_ino;

	/*
	 * The server thread takes no asynchronous signal: they belong to the application's
	 * threads. Faults stay deliverable so that a crash still reaches its handler.
	 */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGABRT);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&cli_stopping, 0);
	err = pthread_create(&srv->thread, NULL, server_loop, srv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		server_unlink(srv);
		goto fail;
	}
	cli_running = srv;
	pthread_mutex_unlock(&cli_lock);
	return 0;

fail:
	server_free(srv);
fail_unlock:
	pthread_mutex_unlock(&cli_lock);
	errno = err;
	return -1;
}

POOL_API void pool_cli_stop(void)
{
	struct cli_server *srv;
	ssize_t n;

	pthread_mutex_lock(&cli_lock);
	srv = cli_running;
	if (!srv) {
		pthread_mutex_unlock(&cli_lock);
		return;
	}
	atomic_store(&cli_stopping, 1);
	do {
		n = write(srv->wake_wr, "x", 1);
	} while (n < 0 && errno == EINTR);
	pthread_join(srv->thread, NULL);
	server_unlink(srv);
	server_free(srv);
	cli_running = NULL;
	pthread_mutex_unlock(&cli_lock);
}
