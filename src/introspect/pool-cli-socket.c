/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The optional UNIX-socket CLI thread, which serves the command handler of pool-cli.c
 * (pool_cli_exec_level()) at each client's level, as HAProxy's stats socket is used:
 *     socat - UNIX-CONNECT:/run/app/pools.sock
 *
 * One thread, one poll(2) loop, every socket non-blocking: up to POOL_CLI_MAX_LISTENERS
 * listening sockets (each with its level), up to POOL_CLI_MAX_CLIENTS clients over all of them,
 * and the read end of a pipe that pool_cli_listen() and pool_cli_stop() write to. One thread,
 * not one per client: a client can cost the server a buffer (a line and one answer), never a
 * thread; the server waits on all sockets at once, so no client blocks another; commands are
 * short (a dump, a pool_gc()), and the only state clients share is the thread-safe library.
 *
 * Per client, in order:
 *   1. bytes are read into a line buffer of POOL_CLI_LINE_MAX + 1 bytes;
 *   2. while no answer is pending and the buffer holds a full line, the line is run (the
 *      connection's own commands here, the others by pool_cli_exec_level()) into a memory
 *      stream; empty lines are dropped from the answer, which is queued with one empty line
 *      after it (with `set status on`, "OK" or "ERROR" before that empty line);
 *   3. the answer is sent as the socket accepts it (MSG_NOSIGNAL); no new line is run until it
 *      is all sent, which bounds a client's memory to one answer however many it pipelines;
 *   4. a line over POOL_CLI_LINE_MAX bytes, or not finished within POOL_CLI_READ_TIMEOUT_MS
 *      after its first byte, gets one error line; once it is sent the server shuts its side
 *      down and drops what the client still sends until it closes or the idle timeout (closing
 *      with bytes unread would make the kernel reset the connection, losing the error line);
 *   5. a client silent both ways for the idle timeout (pool_cli_set_timeout_ms()) is closed.
 * When every slot is taken, a newcomer takes the slot of the client silent longest among those
 * idle, closing or stalled (no byte either way for the line timeout); only when none is does it
 * get "Too many clients". A partial line lasts at most the line timeout, so a slot always frees.
 *
 * The socket files are made and removed by pool-cli-sockfile.c. Every allocation here goes
 * through pool__cli_*() (pool-text.h), a fault-injection site for the tests: an answer that
 * cannot be allocated is replaced by a constant one before the connection ends, and a client
 * that cannot be allocated is told so; nothing is lost or leaked on the way.
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

#include "base/pool-assert.h"
#include "core/pool-int.h"
#include "introspect/pool-cli.h"
#include "introspect/pool-cli-sockfile.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"
#include "introspect/pool-text.h"

struct cli_client {
	int fd;
	enum pool_cli_level level;       /* its listener's, or lower after `level <name>` */
	int closing;                     /* line too long or too slow: send the error, shut our
	                                    side down, drop its input until it closes or times out */
	int status;                      /* `set status on` */
	long long last_ms;               /* last byte received or sent (CLOCK_MONOTONIC) */
	long long line_ms;               /* when the unfinished line in `in` began */
	size_t in_len;
	char in[POOL_CLI_LINE_MAX + 1];
	char *out;                       /* answer being sent: malloc()ed, or a constant one */
	int out_static;                  /* `out` is a constant (out of memory): not freed */
	size_t out_len, out_off;
};

/* A listening socket. Written before it is published (nlisteners), then read-only. */
struct cli_listener {
	struct pool_cli_sockfile file;
	enum pool_cli_level level;
};

struct cli_server {
	int wake_rd, wake_wr;            /* a byte: a listener was added, or stop */
	pthread_t thread;
	long long accept_after_ms;       /* accept() failed for lack of resources: wait till then */
	atomic_uint nlisteners;          /* listeners[0..nlisteners) are ready */
	struct cli_listener listeners[POOL_CLI_MAX_LISTENERS];
	struct cli_client *clients[POOL_CLI_MAX_CLIENTS];   /* the server thread's only */
};

#define ACCEPT_BACKOFF_MS 100

static struct pool_lock cli_lock = POOL_LOCK_INITIALIZER;
static struct cli_server *cli_running;  /* under cli_lock */
static atomic_uint cli_timeout_ms = POOL_CLI_TIMEOUT_MS_DEF;
static atomic_int cli_stopping;

atomic_uint pool__cli_line_timeout_ms = POOL_CLI_READ_TIMEOUT_MS;
atomic_ulong pool__cli_rounds;

static long long now_ms(void)
{
	return (long long)(pool__clock_ns(CLOCK_MONOTONIC) / 1000000u);
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
	if (!c->out_static)
		free(c->out);
	free(c);
	srv->clients[i] = NULL;
}

/* Drop the answer just sent (or never sent). */
static void client_unqueue(struct cli_client *c)
{
	if (!c->out_static)
		free(c->out);
	c->out = NULL;
	c->out_static = 0;
	c->out_len = c->out_off = 0;
}

/*
 * No memory for an answer: a constant one says so, then the connection ends as after a line
 * too long (the client cannot know which command's answer it lost, so it must not go on).
 */
static void client_oom(struct cli_client *c)
{
	static const char plain[] = "Not enough memory to answer: closing.\n\n";
	static const char status[] = "Not enough memory to answer: closing.\nERROR\n\n";

	client_unqueue(c);
	c->out = (char *)(c->status ? status : plain);
	c->out_len = c->status ? sizeof(status) - 1 : sizeof(plain) - 1;
	c->out_static = 1;
	c->closing = 1;
	c->in_len = 0;
}

/* Queue `text` (len bytes) followed by `tail` as the answer (or client_oom()). */
static void client_queue(struct cli_client *c, const char *text, size_t len, const char *tail)
{
	size_t tlen = strlen(tail);
	char *buf = pool__cli_malloc(len + tlen);

	if (!buf) {
		client_oom(c);
		return;
	}
	memcpy(buf, text, len);
	memcpy(buf + len, tail, tlen);
	client_unqueue(c);
	c->out = buf;
	c->out_len = len + tlen;
}

/* Queue one message line and the end of an answer (with its status line when asked for). */
static void client_say(struct cli_client *c, const char *msg, int ok)
{
	client_queue(c, msg, strlen(msg), !c->status ? "\n" : ok ? "OK\n\n" : "ERROR\n\n");
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

/*
 * The connection's own commands: quit, set status on|off, level [<name>]. Returns 1 when `line`
 * was one of them and its answer is queued, 0 when it is for the command handler, -1 to close
 * the client (quit).
 */
static int client_session(struct cli_client *c, const char *line)
{
	const char *p = line, *w, *a, *b;
	size_t len = 0, alen = 0, blen = 0, more;

	w = pool__next_word(&p, &len);
	a = pool__next_word(&p, &alen);
	b = pool__next_word(&p, &blen);
	if (!w || pool__next_word(&p, &more))
		return 0;
	if (pool__word_is(w, len, "quit") && !a)
		return -1;
	if (pool__word_is(w, len, "set") && a && pool__word_is(a, alen, "status") && b &&
	    (pool__word_is(b, blen, "on") || pool__word_is(b, blen, "off"))) {
		c->status = pool__word_is(b, blen, "on");
		client_say(c, "", 1);
		return 1;
	}
	if (pool__word_is(w, len, "level") && !b) {
		enum pool_cli_level lv;
		char msg[160];

		if (!a) {
			snprintf(msg, sizeof(msg), "%s\n", pool__cli_level_name(c->level));
			client_say(c, msg, 1);
			return 1;
		}
		lv = (enum pool_cli_level)pool__cli_level_find(a, alen);
		if (!lv) {
			static const char bad[] = "Unknown level (expected user, operator or admin). "
			                          "Try 'help'.\n";

			client_say(c, bad, 0);
			return 1;
		}
		if (lv > c->level) {
			snprintf(msg, sizeof(msg), "Permission denied: this session is %s and cannot "
			         "raise its level to %s.\n", pool__cli_level_name(c->level),
			         pool__cli_level_name(lv));
			client_say(c, msg, 0);
			return 1;
		}
		c->level = lv;
		snprintf(msg, sizeof(msg), "Level now %s.\n", pool__cli_level_name(lv));
		client_say(c, msg, 1);
		return 1;
	}
	return 0;
}

static const char no_memory_msg[] = "Not enough memory to run the command.\n";

/* Run one command line of a client and queue its answer. Returns -1 to close the client. */
static int client_run(struct cli_client *c, char *line)
{
	char *ans = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = client_session(c, line);
	if (ret != 0)
		return ret > 0 ? 0 : -1;
	f = pool__cli_memstream(&ans, &len);
	if (!f) {
		client_say(c, no_memory_msg, 0);
		return 0;
	}
	ret = pool_cli_exec_level(line, f, c->level);
	/* ends an unterminated last line; otherwise an empty line that answer_normalise() drops */
	fputc('\n', f);
	if (fclose(f) != 0 || !ans) {
		free(ans);
		client_say(c, no_memory_msg, 0);
		return 0;
	}
	answer_normalise(ans, &len);
	client_queue(c, ans, len, !c->status ? "\n" : ret == 0 ? "OK\n\n" : "ERROR\n\n");
	free(ans);
	return 0;
}

/* Answer `msg`, then shut the connection down once it is sent (see client_write()). */
static void client_refuse(struct cli_client *c, const char *msg)
{
	client_say(c, msg, 0);
	c->closing = 1;
	c->in_len = 0;
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
		c->line_ms = c->last_ms;   /* what is left arrived with the latest read */
		if (memchr(line, 0, llen)) {
			client_say(c, "Unknown command: the line holds a NUL byte. Try 'help'.\n", 0);
			continue;
		}
		if (client_run(c, line) < 0)
			return -1;
	}
	if (!c->closing && c->out_off == c->out_len && c->in_len == sizeof(c->in))
		client_refuse(c, "Line too long (over 4096 bytes): closing.\n");
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
	c->last_ms = now_ms();
	if (c->in_len == 0)
		c->line_ms = c->last_ms;
	c->in_len += (size_t)n;
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
	client_unqueue(c);
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

/* A client with a partial line and no answer pending: the server waits on its line. */
static int client_mid_line(const struct cli_client *c)
{
	return !c->closing && c->in_len && c->out_off == c->out_len;
}

/*
 * The client to close for a newcomer when every slot is taken: the one silent longest among
 * those closing, idle (nothing pending either way) or stalled (no byte either way for the line
 * timeout). Returns its slot, or -1 when every client is busy.
 */
static int pick_victim(const struct cli_server *srv, long long now)
{
	long long stall = atomic_load(&pool__cli_line_timeout_ms);
	unsigned int i;
	int victim = -1;

	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++) {
		const struct cli_client *c = srv->clients[i];
		int idle;

		if (!c)
			continue;
		idle = c->closing || (!c->in_len && c->out_off == c->out_len) ||
		       now - c->last_ms >= stall;
		if (idle && (victim < 0 || c->last_ms < srv->clients[victim]->last_ms))
			victim = (int)i;
	}
	return victim;
}

static void server_accept(struct cli_server *srv, const struct cli_listener *l)
{
	static const char full[] = "Too many clients: try again later.\n\n";
	static const char no_memory[] = "Not enough memory for a new client: try again later.\n\n";
	static const char evicted[] = "Closing this idle connection: the server is full and a "
	                              "new client came.\n\n";
	unsigned int i;
	int fd;

	while ((fd = accept4(l->file.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct cli_client *c = pool__cli_calloc(1, sizeof(*c));
		int victim = -1;

		for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
			if (!srv->clients[i])
				break;
		if (c && i == POOL_CLI_MAX_CLIENTS) {
			victim = pick_victim(srv, now_ms());
			if (victim >= 0) {
				/* best effort: it is idle, so its socket has room for one line */
				if (send(srv->clients[victim]->fd, evicted, sizeof(evicted) - 1,
				         MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
					errno = 0;
				client_close(srv, (unsigned int)victim);
				i = (unsigned int)victim;
			}
		}
		if (!c || i == POOL_CLI_MAX_CLIENTS) {
			const char *msg = c ? full : no_memory;

			if (send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				errno = 0;
			close(fd);
			free(c);
			continue;
		}
		c->fd = fd;
		c->level = l->level;
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

/* The next deadline of client `c` (idle timeout, or line timeout mid-line); <= now: expired. */
static long long client_deadline(const struct cli_client *c, long long timeout)
{
	long long idle = c->last_ms + timeout, line;

	if (!client_mid_line(c))
		return idle;
	line = c->line_ms + (long long)atomic_load(&pool__cli_line_timeout_ms);
	return line < idle ? line : idle;
}

static void *server_loop(void *arg)
{
	struct cli_server *srv = arg;
	struct pollfd pfd[1 + POOL_CLI_MAX_LISTENERS + POOL_CLI_MAX_CLIENTS];
	unsigned int map[1 + POOL_CLI_MAX_LISTENERS + POOL_CLI_MAX_CLIENTS];

	while (!atomic_load(&cli_stopping)) {
		long long now = now_ms(), timeout = atomic_load(&cli_timeout_ms), wait = -1;
		unsigned int i, n = 1, nl = atomic_load_explicit(&srv->nlisteners,
		                                                 memory_order_acquire);
		unsigned int first_client;

		atomic_fetch_add_explicit(&pool__cli_rounds, 1, memory_order_relaxed);
		pfd[0].fd = srv->wake_rd;
		pfd[0].events = POLLIN;
		for (i = 0; i < nl; i++, n++) {
			pfd[n].fd = now < srv->accept_after_ms ? -1 : srv->listeners[i].file.fd;
			pfd[n].events = POLLIN;
		}
		if (now < srv->accept_after_ms)
			wait = srv->accept_after_ms - now;   /* poll() ignores fd -1 until then */
		first_client = n;
		for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++) {
			struct cli_client *c = srv->clients[i];
			long long left;

			if (!c)
				continue;
			left = client_deadline(c, timeout) - now;
			if (left <= 0 && client_mid_line(c)) {
				/* a line begun and not ended in time: refuse it, then close */
				client_refuse(c, "Line not finished within the line timeout: closing.\n");
				if (client_write(c) < 0) {
					client_close(srv, i);
					continue;
				}
				left = client_deadline(c, timeout) - now;
			}
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
		if (pfd[0].revents) {
			char drain[16];

			/* stop, or a listener was added: the next round sees it */
			while (read(srv->wake_rd, drain, sizeof(drain)) > 0)
				;
			continue;
		}
		/* clients first: one that left frees its slot for a newcomer in this round */
		for (i = first_client; i < n; i++) {
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
		for (i = 0; i < nl; i++)
			if (pfd[1 + i].revents & POLLIN)
				server_accept(srv, &srv->listeners[i]);
	}
	return NULL;
}

static void server_free(struct cli_server *srv)
{
	unsigned int i, nl = atomic_load(&srv->nlisteners);

	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
		if (srv->clients[i])
			client_close(srv, i);
	for (i = 0; i < nl; i++)
		close(srv->listeners[i].file.fd);
	if (srv->wake_rd >= 0)
		close(srv->wake_rd);
	if (srv->wake_wr >= 0)
		close(srv->wake_wr);
	free(srv);
}

static void server_wake(struct cli_server *srv)
{
	ssize_t n;

	do {
		n = write(srv->wake_wr, "x", 1);
	} while (n < 0 && errno == EINTR);
}

/*
 * fork(): the child has no server thread. It drops the parent's server (closes its copies of
 * the descriptors, leaves the socket files to the parent) so that it may listen on its own.
 * cli_lock is held across fork() so that no server is half set up or half stopped.
 */
static void cli_fork_prepare(void)
{
	pool__lock(&cli_lock);
}

static void cli_fork_parent(void)
{
	pool__unlock(&cli_lock);
}

static void cli_fork_child(void)
{
	if (cli_running) {
		server_free(cli_running);
		cli_running = NULL;
	}
	pool__unlock(&cli_lock);
}

static void cli_register_atfork(void)
{
	pthread_atfork(cli_fork_prepare, cli_fork_parent, cli_fork_child);
}

/* A new server with no listener: the wake pipe only. NULL with errno set. */
static struct cli_server *server_new(void)
{
	struct cli_server *srv = pool__cli_calloc(1, sizeof(*srv));
	int wake[2];

	if (!srv) {
		errno = ENOMEM;
		return NULL;
	}
	srv->wake_rd = srv->wake_wr = -1;
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		int err = errno;

		free(srv);
		errno = err;
		return NULL;
	}
	srv->wake_rd = wake[0];
	srv->wake_wr = wake[1];
	return srv;
}

/* cli_lock held: start the server thread with every asynchronous signal blocked. 0, or errno. */
static int server_start(struct cli_server *srv)
{
	sigset_t all, old;
	int err;

	POOL_ASSERT(pool__lock_held(&cli_lock) && !cli_running);
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
	return err;
}

POOL_API int pool_cli_listen_level(const char *unix_path, enum pool_cli_level level,
                                   unsigned int mode)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	struct cli_listener l;
	struct cli_server *srv;
	struct stat st;
	unsigned int nl;
	int err;

	if (!unix_path || !*unix_path || !pool__cli_level_valid((int)level) || (mode & ~0777u)) {
		errno = EINVAL;
		return -1;
	}
	if (strlen(unix_path) >= sizeof(l.file.path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&l, 0, sizeof(l));
	memcpy(l.file.path, unix_path, strlen(unix_path) + 1);
	l.level = level;
	pthread_once(&atfork_once, cli_register_atfork);
	pool__lock(&cli_lock);
	srv = cli_running;
	nl = srv ? atomic_load(&srv->nlisteners) : 0;
	if (nl == POOL_CLI_MAX_LISTENERS) {
		err = EBUSY;
		goto fail_unlock;
	}
	/* anything but a socket is refused before anything is created */
	if (lstat(unix_path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		err = EEXIST;
		goto fail_unlock;
	}
	if (pool__cli_sockfile_open(&l.file, mode ? mode : 0600, (int)POOL_CLI_MAX_CLIENTS) < 0) {
		err = errno;
		goto fail_unlock;
	}
	if (srv) {
		srv->listeners[nl] = l;
		atomic_store_explicit(&srv->nlisteners, nl + 1, memory_order_release);
		server_wake(srv);
		pool__unlock(&cli_lock);
		return 0;
	}
	srv = server_new();
	if (!srv) {
		err = errno;
		goto fail_listener;
	}
	srv->listeners[0] = l;
	atomic_store(&srv->nlisteners, 1);
	err = server_start(srv);
	if (err) {
		server_free(srv);   /* closes l.file.fd */
		pool__cli_sockfile_unlink(&l.file);
		goto fail_unlock;
	}
	cli_running = srv;
	pool__unlock(&cli_lock);
	return 0;

fail_listener:
	close(l.file.fd);
	pool__cli_sockfile_unlink(&l.file);
fail_unlock:
	pool__unlock(&cli_lock);
	errno = err;
	return -1;
}

POOL_API int pool_cli_listen(const char *unix_path)
{
	return pool_cli_listen_level(unix_path, POOL_CLI_OPERATOR, 0600);
}

/* cli_lock held, the server's thread joined: remove our socket files and free the server. */
static void server_gone(struct cli_server *srv)
{
	unsigned int i;

	POOL_ASSERT(pool__lock_held(&cli_lock) && srv == cli_running);
	for (i = 0; i < atomic_load(&srv->nlisteners); i++)
		pool__cli_sockfile_unlink(&srv->listeners[i].file);
	server_free(srv);
	cli_running = NULL;
}

POOL_API void pool_cli_stop(void)
{
	struct cli_server *srv;

	pool__lock(&cli_lock);
	srv = cli_running;
	if (!srv) {
		pool__unlock(&cli_lock);
		return;
	}
	atomic_store(&cli_stopping, 1);
	server_wake(srv);
	pthread_join(srv->thread, NULL);
	server_gone(srv);
	pool__unlock(&cli_lock);
}

/* How long unloading waits for the CLI lock, then for the server's thread, in milliseconds. */
#define UNLOAD_LOCK_MS 1000
#define UNLOAD_JOIN_MS 10000

/*
 * Unloading (dlclose(), and the end of the process). The server's thread runs the library's
 * code, which dlclose() unmaps once the destructors are done: a running server crashed the
 * process there (SIGSEGV, 3 runs of 3) and left its socket files behind. The rule for every
 * thread the library starts (doc/debugging.md, "Rules of use"): the library's destructor stops
 * and joins it, before the core's destructor (pool.c, priority 101; a destructor of a larger
 * priority runs first), which frees what such a thread may still use.
 *
 * The join is bounded. While dlclose() runs destructors, the dynamic loader holds its lock, and
 * a command that resolves a symbol (dladdr(3): `detailed` or `pools profile` at level admin)
 * waits for that lock: the thread cannot finish until the destructor returns. Rather than hang
 * the host for good, or let dlclose() unmap the code that thread will return to, the destructor
 * then says so on stderr and aborts. At the end of the process (exit()) the loader holds no lock
 * while destructors run, and the join only waits for the command in progress. Nothing is joined,
 * only the socket files go, on the server's own thread (exit() from a signal handler there) and
 * on a thread that holds the pool list lock (exit() from a pool_for_each() callback), for which
 * a command of the server may be waiting: the thread ends with the process.
 */
__attribute__((destructor(102))) static void cli_unload(void)
{
	struct timespec pause = { 0, 1000000 };
	struct cli_server *srv;
	int i;

	for (i = 0; pool__lock_try(&cli_lock) != 0; i++) {
		if (i == UNLOAD_LOCK_MS) {
			fputs("libpool: unloading: the CLI lock stayed taken for 1 s: the CLI server, "
			      "if any, is not stopped.\n", stderr);
			return;
		}
		nanosleep(&pause, NULL);
	}
	srv = cli_running;
	if (srv && (pthread_equal(pthread_self(), srv->thread) ||
	            pool__lock_held(&pool__list_lock))) {
		for (i = 0; i < (int)atomic_load(&srv->nlisteners); i++)
			pool__cli_sockfile_unlink(&srv->listeners[i].file);
	} else if (srv) {
		atomic_store(&cli_stopping, 1);
		server_wake(srv);
		for (i = 0; pthread_tryjoin_np(srv->thread, NULL) != 0; i++) {
			if (i == UNLOAD_JOIN_MS) {
				fputs("libpool: unloading (dlclose()) while the CLI server thread still "
				      "runs a command after 10 s, probably waiting for the dynamic "
				      "loader's lock that dlclose() holds: stop it with pool_cli_stop() "
				      "before dlclose() (doc/debugging.md, \"Rules of use\").\n", stderr);
				abort();
			}
			nanosleep(&pause, NULL);
		}
		server_gone(srv);
	}
	pool__unlock(&cli_lock);
}
