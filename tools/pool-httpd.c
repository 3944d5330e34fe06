/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-httpd - an example event-driven HTTP/1.1 server that takes every per-connection object
 * from libpool. Read it top to bottom; copy what you need.
 *
 * Threads. main() parses the options, creates the pools and, for each of N worker threads, an
 * epoll instance and its own listening socket bound with SO_REUSEPORT to the same address, so
 * that the kernel spreads new connections over the threads and no connection ever moves between
 * threads. Each worker runs one event loop (level-triggered epoll, non-blocking sockets). main()
 * then waits for SIGTERM/SIGINT and writes the log line (one a minute at most).
 *
 * Objects, each from its own pool (or from malloc() with --malloc):
 *   httpd-conn  struct conn: the socket, the state, the timer links. From accept() to close().
 *   httpd-ibuf  16 KiB of input: allocated when the socket becomes readable, freed as soon as it
 *               holds no unanswered byte. So an idle keep-alive connection holds no buffer.
 *   httpd-req   struct req: what the parsed request asks for and how far its answer got. From
 *               the end of the request's header section to the last byte of the response.
 *   httpd-obuf  16 KiB of output: allocated with the request object, refilled while the
 *               response (up to 1 MiB) goes out, freed with the request object.
 *
 * Connection states:
 *   READ    waiting for (the rest of) a request header section; epoll waits for EPOLLIN.
 *   SEND    a response is going out; epoll waits for EPOLLOUT while the socket is full.
 *   LINGER  the last response went out and our side is shut: input is read and dropped until
 *           the client closes, so that closing with unread input (which makes the kernel send a
 *           reset) cannot destroy the response before the client has read it.
 *
 * Timeouts. A connection in READ or SEND is closed when it made no progress for --timeout
 * (READ: since it became idle, however slowly the client sends; SEND: since the last write),
 * one in LINGER after at most a second. Every timer of one kind has the same duration, so each
 * kind is a FIFO list in deadline order: arming appends, expiring pops from the front, O(1).
 *
 * Errors. Bad requests get 400, 404, 405, 413, 431 or 505 (see parse_head()). A connection
 * whose object cannot be allocated (-dMfail makes that happen) or whose socket fails is closed
 * and everything it held goes back to its pool. Out of file descriptors, a worker closes a
 * reserve descriptor, accepts the pending connection, closes it at once, and takes the reserve
 * back: the client is refused and the listener does not spin. On SIGTERM/SIGINT the workers
 * close their listener and their connections, flush their thread caches and exit; main prints
 * the final state of the pools, in which every pool is at used 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pool/pool.h>

#define IBUF_SIZE      16384u       /* input buffer: the largest header section we accept */
#define OBUF_SIZE      16384u       /* output buffer: a response goes out in pieces this big */
#define BYTES_MAX      (1u << 20)   /* largest body GET /bytes/<n> serves */
#define MAX_EVENTS     256          /* epoll events handled per wake-up */
#define ACCEPT_BATCH   64           /* accept() calls per listener wake-up, for fairness */
#define LINGER_MS      1000u        /* longest wait for the client to close after our last byte */
#define ACCEPT_PAUSE_MS 100u        /* listener pause when accept() fails for lack of memory */
#define LOG_PERIOD_S   60           /* at most one log line per this many seconds */

/* ------------------------------------------------------------------------------------------ */
/* Objects and where they come from                                                           */
/* ------------------------------------------------------------------------------------------ */

enum obj_kind { OBJ_CONN, OBJ_IBUF, OBJ_REQ, OBJ_OBUF, OBJ_KINDS };

struct req {
	int status;               /* HTTP status of the response */
	int head_only;            /* HEAD: send the header section only */
	int keep_alive;           /* keep the connection open after this response */
	const char *text;         /* body text, or NULL for the /bytes pattern */
	size_t body_len;          /* body bytes to send */
	size_t body_done;         /* body bytes already copied to the output buffer */
	int head_done;            /* header section copied to the output buffer */
};

enum conn_state { CS_READ, CS_SEND, CS_LINGER };

struct conn {
	int fd;
	enum conn_state state;
	uint32_t events;          /* what epoll waits for on fd */
	char *ibuf;               /* NULL or IBUF_SIZE bytes of input */
	size_t ilen;              /* bytes in ibuf */
	size_t iscan;             /* bytes of ibuf already checked by head_end() */
	char *obuf;               /* NULL or OBUF_SIZE bytes of output */
	size_t ohead, olen;       /* obuf[ohead..olen) is still to be sent */
	struct req *req;          /* the request being answered (state SEND) */
	struct timer_list *timer; /* the timer list this connection is on */
	uint64_t deadline_ms;     /* when the timer fires */
	struct conn *prev, *next; /* links in that timer list */
};

static const struct {
	const char *name;
	size_t size;
} obj_desc[OBJ_KINDS] = {
	[OBJ_CONN] = { "httpd-conn", sizeof(struct conn) },
	[OBJ_IBUF] = { "httpd-ibuf", IBUF_SIZE },
	[OBJ_REQ]  = { "httpd-req",  sizeof(struct req) },
	[OBJ_OBUF] = { "httpd-obuf", OBUF_SIZE },
};

static struct pool_head *pools[OBJ_KINDS];
static int use_malloc;        /* --malloc: take objects from malloc()/free() instead */

/* The only two places that allocate and free: the rest of the server does not know from where. */
static void *obj_alloc(enum obj_kind kind)
{
	return use_malloc ? malloc(obj_desc[kind].size) : pool_alloc(pools[kind]);
}

static void obj_free(enum obj_kind kind, void *obj)
{
	if (use_malloc)
		free(obj);
	else
		pool_free(pools[kind], obj);
}

/* ------------------------------------------------------------------------------------------ */
/* Workers, counters, timers                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* A FIFO of connections whose timers all have the same duration, hence in deadline order. */
struct timer_list {
	struct conn *first, *last;
	uint64_t duration_ms;
};

/* Counters: written by their worker only, read by main() for the log line. */
struct counters {
	unsigned long accepted;   /* connections accepted and kept */
	unsigned long refused;    /* connections closed at once: no descriptor or no memory */
	unsigned long requests;   /* responses started */
	unsigned long alloc_fail; /* connections closed because an object could not be allocated */
	unsigned long timeouts;   /* connections closed by their timer */
	unsigned long open;       /* connections open now */
};

#define COUNT(w, field, n) \
	__atomic_store_n(&(w)->cnt.field, (w)->cnt.field + (n), __ATOMIC_RELAXED)
#define COUNTER(w, field)  __atomic_load_n(&(w)->cnt.field, __ATOMIC_RELAXED)

struct worker {
	unsigned int index;
	pthread_t thread;
	int epfd;                 /* this worker's epoll instance */
	int lfd;                  /* its listening socket (SO_REUSEPORT), -1 once closed */
	int reserve_fd;           /* a spare descriptor given up to refuse a client on EMFILE */
	int listening;            /* lfd is registered with epfd */
	uint64_t accept_resume_ms;/* when to listen again after a pause, 0: not paused */
	uint64_t now_ms;          /* monotonic time of this loop iteration */
	struct timer_list io_timers;      /* READ and SEND: --timeout */
	struct timer_list linger_timers;  /* LINGER: min(LINGER_MS, --timeout) */
	struct counters cnt;
};

/* epoll data of the two descriptors that are not connections. */
static char listen_tag, stop_tag;

static struct {
	unsigned int threads;
	const char *addr;
	unsigned int port;
	const char *cli_path;
	unsigned int timeout_ms;
	int bind_threads;
} opt = { .addr = "127.0.0.1", .timeout_ms = 10000 };

static int stop_fd = -1;      /* eventfd every worker watches; written once to stop them */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void timer_unlink(struct conn *c)
{
	struct timer_list *t = c->timer;

	if (!t)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		t->first = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		t->last = c->prev;
	c->prev = c->next = NULL;
	c->timer = NULL;
}

/* (Re)arm c's timer on list t: it fires t->duration_ms from now. */
static void timer_arm(struct worker *w, struct conn *c, struct timer_list *t)
{
	timer_unlink(c);
	c->deadline_ms = w->now_ms + t->duration_ms;
	c->timer = t;
	c->prev = t->last;
	c->next = NULL;
	if (t->last)
		t->last->next = c;
	else
		t->first = c;
	t->last = c;
}

/* ------------------------------------------------------------------------------------------ */
/* HTTP parsing                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* RFC 9110 section 5.6.2: the characters of a token (method, header name). */
static int is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/*
 * Look for the end of the header section (the empty line) in c->ibuf. Returns the length of the
 * section including that line, 0 while more input is needed, or -400 as soon as a byte shows the
 * request is broken: a control character, a CR not followed by LF, a line that ends with a bare
 * LF, or an empty first line. Resumes where the previous call stopped (c->iscan).
 */
static int head_end(struct conn *c)
{
	const unsigned char *b = (const unsigned char *)c->ibuf;
	size_t i;

	for (i = c->iscan; i < c->ilen; i++) {
		unsigned char ch = b[i];

		if (i > 0 && b[i - 1] == '\r' && ch != '\n')
			return -400;
		if (ch == '\n') {
			if (i == 0 || b[i - 1] != '\r' || i == 1)
				return -400;
			if (i >= 3 && b[i - 2] == '\n')
				return (int)(i + 1);
		} else if ((ch < 0x20 && ch != '\r' && ch != '\t') || ch == 0x7f) {
			return -400;
		}
	}
	c->iscan = i;
	return 0;
}

/* Case-insensitive: does the comma-separated list v[0..len) hold the token tok? */
static int has_token(const char *v, size_t len, const char *tok)
{
	size_t tlen = strlen(tok), i = 0;

	while (i < len) {
		size_t start, end;

		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		start = i;
		while (i < len && v[i] != ',')
			i++;
		end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (end - start == tlen && !strncasecmp(v + start, tok, tlen))
			return 1;
	}
	return 0;
}

static const char hello_text[] = "Hello from pool-httpd\n";

/*
 * Parse the header section h[0..len) (complete, checked by head_end()) into r. Sets r->status:
 *   200 GET or HEAD of "/" (hello_text) or of "/bytes/<n>", n = 0..1048576 (the pattern);
 *   400 a malformed request line or header line, a missing or repeated Host in HTTP/1.1, a bad
 *       Content-Length;
 *   404 any other path;
 *   405 a method other than GET and HEAD (with "Allow: GET, HEAD");
 *   413 a GET or HEAD with a body (Content-Length > 0 or Transfer-Encoding): we take none;
 *   505 an HTTP version other than 1.0 and 1.1.
 * and r->keep_alive: HTTP/1.1 unless "Connection: close", HTTP/1.0 only with "Connection:
 * keep-alive"; never after 400, 413 or 505, nor after a request with a body we did not read.
 */
static void parse_head(const char *h, size_t len, struct req *r)
{
	const char *p = h, *end = h + len, *eol, *method, *target, *version;
	size_t mlen, tlen;
	int minor, hosts = 0, has_body = 0, conn_close = 0, conn_keep = 0;

	memset(r, 0, sizeof(*r));
	r->status = 400;

	/* Request line: method SP request-target SP HTTP-version CRLF (RFC 9112 section 3). */
	eol = memchr(p, '\r', (size_t)(end - p));
	method = p;
	while (p < eol && is_tchar((unsigned char)*p))
		p++;
	mlen = (size_t)(p - method);
	if (!mlen || p >= eol || *p++ != ' ')
		return;
	target = p;
	while (p < eol && *p > ' ' && *p < 0x7f)
		p++;
	tlen = (size_t)(p - target);
	if (!tlen || *target != '/' || p >= eol || *p++ != ' ')
		return;
	version = p;
	if (eol - version != 8 || memcmp(version, "HTTP/", 5) || version[5] < '0' ||
	    version[5] > '9' || version[6] != '.' || version[7] < '0' || version[7] > '9')
		return;
	if (version[5] != '1' || (version[7] != '0' && version[7] != '1')) {
		r->status = 505;
		return;
	}
	minor = version[7] - '0';

	/* Header lines: field-name ":" OWS field-value OWS CRLF, up to the empty line. */
	for (p = eol + 2; p < end && *p != '\r'; p = eol + 2) {
		const char *name = p, *v, *vend;
		size_t nlen;

		eol = memchr(p, '\r', (size_t)(end - p));
		while (p < eol && is_tchar((unsigned char)*p))
			p++;
		nlen = (size_t)(p - name);
		if (!nlen || p >= eol || *p != ':')
			return;         /* also obsolete line folding and a space before ':' */
		v = p + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		vend = eol;
		while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
			vend--;
		if (nlen == 4 && !strncasecmp(name, "host", 4)) {
			hosts++;
		} else if (nlen == 14 && !strncasecmp(name, "content-length", 14)) {
			const char *d;

			if (v == vend)
				return;
			for (d = v; d < vend; d++) {
				if (*d < '0' || *d > '9')
					return;
				if (*d != '0')
					has_body = 1;
			}
		} else if (nlen == 17 && !strncasecmp(name, "transfer-encoding", 17)) {
			has_body = 1;
		} else if (nlen == 10 && !strncasecmp(name, "connection", 10)) {
			conn_close |= has_token(v, (size_t)(vend - v), "close");
			conn_keep |= has_token(v, (size_t)(vend - v), "keep-alive");
		}
	}
	if (minor == 1 && hosts != 1)
		return;

	r->keep_alive = minor == 1 ? !conn_close : conn_keep && !conn_close;
	if (has_body)
		r->keep_alive = 0;  /* we do not read the body, so the next request cannot be found */
	r->head_only = mlen == 4 && !memcmp(method, "HEAD", 4);
	if (!r->head_only && !(mlen == 3 && !memcmp(method, "GET", 3))) {
		r->status = 405;
		return;
	}
	if (has_body) {
		r->status = 413;
		return;
	}

	/* Routing: the path is the target up to '?'. */
	if (memchr(target, '?', tlen))
		tlen = (size_t)((const char *)memchr(target, '?', tlen) - target);
	r->status = 404;
	if (tlen == 1) {
		r->status = 200;
		r->text = hello_text;
		r->body_len = sizeof(hello_text) - 1;
	} else if (tlen > 7 && tlen <= 7 + 7 && !memcmp(target, "/bytes/", 7)) {
		size_t i, n = 0;

		for (i = 7; i < tlen; i++) {
			if (target[i] < '0' || target[i] > '9')
				return;
			n = n * 10 + (size_t)(target[i] - '0');
		}
		if (n > BYTES_MAX)
			return;
		r->status = 200;
		r->text = NULL;
		r->body_len = n;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Responses                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The body of GET /bytes/<n>: byte i is pattern[i % 64], so a client can check every byte. */
static const char pattern[64] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n";

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 505: return "HTTP Version Not Supported";
	default:  return "Error";
	}
}

/* Make r an error response: the reason phrase as body, and the connection closes after it. */
static void req_error(struct req *r, int status)
{
	int head_only = r->head_only, keep_alive = r->keep_alive;

	memset(r, 0, sizeof(*r));
	r->status = status;
	r->head_only = head_only;
	r->keep_alive = (status == 404 || status == 405) && keep_alive;
	r->text = reason(status);
	r->body_len = strlen(r->text);
}

/* Copy as much of the response as fits into the empty output buffer; sets c->olen. */
static void resp_fill(struct conn *c)
{
	struct req *r = c->req;
	size_t len = 0;

	if (!r->head_done) {
		int n = snprintf(c->obuf, OBUF_SIZE,
		                 "HTTP/1.1 %d %s\r\n"
		                 "Server: pool-httpd\r\n"
		                 "Content-Type: %s\r\n"
		                 "Content-Length: %zu\r\n"
		                 "%s%s\r\n",
		                 r->status, reason(r->status),
		                 r->text ? "text/plain" : "application/octet-stream",
		                 r->body_len,
		                 r->status == 405 ? "Allow: GET, HEAD\r\n" : "",
		                 !r->keep_alive ? "Connection: close\r\n" :
		                 "Connection: keep-alive\r\n");
		len = (size_t)n;      /* well under OBUF_SIZE */
		r->head_done = 1;
		if (r->head_only)
			r->body_done = r->body_len;
	}
	while (r->body_done < r->body_len && len < OBUF_SIZE) {
		size_t n = r->body_len - r->body_done, off = r->body_done % sizeof(pattern);

		if (r->text) {
			n = n < OBUF_SIZE - len ? n : OBUF_SIZE - len;
			memcpy(c->obuf + len, r->text + r->body_done, n);
		} else {
			n = n < sizeof(pattern) - off ? n : sizeof(pattern) - off;
			n = n < OBUF_SIZE - len ? n : OBUF_SIZE - len;
			memcpy(c->obuf + len, pattern + off, n);
		}
		len += n;
		r->body_done += n;
	}
	c->ohead = 0;
	c->olen = len;
}

/* ------------------------------------------------------------------------------------------ */
/* Connections                                                                                */
/* ------------------------------------------------------------------------------------------ */

static void conn_want(struct worker *w, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	if (c->events != events && epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = events;
}

static void conn_release_ibuf(struct conn *c)
{
	obj_free(OBJ_IBUF, c->ibuf);
	c->ibuf = NULL;
	c->ilen = c->iscan = 0;
}

/* Close the socket and give every object the connection holds back. */
static void conn_close(struct worker *w, struct conn *c)
{
	timer_unlink(c);
	close(c->fd);             /* also removes it from the epoll set */
	if (c->ibuf)
		conn_release_ibuf(c);
	obj_free(OBJ_OBUF, c->obuf);
	obj_free(OBJ_REQ, c->req);
	obj_free(OBJ_CONN, c);
	COUNT(w, open, -1);
}

static void conn_alloc_failed(struct worker *w, struct conn *c)
{
	COUNT(w, alloc_fail, 1);
	conn_close(w, c);
}

static void conn_new(struct worker *w, int fd)
{
	struct conn *c = obj_alloc(OBJ_CONN);
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1;

	if (!c) {
		close(fd);
		COUNT(w, alloc_fail, 1);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->state = CS_READ;
	c->events = EPOLLIN;
	ev.data.ptr = c;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		obj_free(OBJ_CONN, c);
		COUNT(w, refused, 1);
		return;
	}
	COUNT(w, accepted, 1);
	COUNT(w, open, 1);
	timer_arm(w, c, &w->io_timers);
}

/*
 * The response is out: free what it held, then either wait for the next request (keep-alive)
 * or shut our side and linger until the client closes.
 */
static void conn_response_done(struct worker *w, struct conn *c)
{
	int keep_alive = c->req->keep_alive;

	obj_free(OBJ_REQ, c->req);
	c->req = NULL;
	obj_free(OBJ_OBUF, c->obuf);
	c->obuf = NULL;
	if (keep_alive) {
		c->state = CS_READ;
		timer_arm(w, c, &w->io_timers);
		conn_want(w, c, EPOLLIN);
		return;
	}
	if (c->ibuf)
		conn_release_ibuf(c);
	shutdown(c->fd, SHUT_WR);
	c->state = CS_LINGER;
	timer_arm(w, c, &w->linger_timers);
	conn_want(w, c, EPOLLIN);
}

/*
 * Send what the response still has to send. Returns 0 when it is all out (the connection is
 * then in READ or LINGER), 1 when the socket is full (we wait for EPOLLOUT), -1 when the
 * connection was closed (client gone or reset).
 */
static int conn_send(struct worker *w, struct conn *c)
{
	int progress = 0;

	for (;;) {
		ssize_t n;

		if (c->ohead == c->olen) {
			if (c->req->head_done && c->req->body_done == c->req->body_len) {
				conn_response_done(w, c);
				return 0;
			}
			resp_fill(c);
		}
		n = send(c->fd, c->obuf + c->ohead, c->olen - c->ohead, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (progress)
				timer_arm(w, c, &w->io_timers);
			conn_want(w, c, EPOLLOUT);
			return 1;
		}
		if (n <= 0) {
			conn_close(w, c);
			return -1;
		}
		c->ohead += (size_t)n;
		progress = 1;
	}
}

/*
 * Start answering: get a request object and an output buffer, fill the request from the header
 * section ibuf[0..head_len) or, when status is not 0, make it that error; drop the section from
 * the input buffer and send. Returns as conn_send().
 */
static int conn_answer(struct worker *w, struct conn *c, size_t head_len, int status)
{
	c->req = obj_alloc(OBJ_REQ);
	c->obuf = obj_alloc(OBJ_OBUF);
	if (!c->req || !c->obuf) {
		conn_alloc_failed(w, c);
		return -1;
	}
	if (status) {
		memset(c->req, 0, sizeof(*c->req));
		req_error(c->req, status);
	} else {
		parse_head(c->ibuf, head_len, c->req);
		if (c->req->status != 200)
			req_error(c->req, c->req->status);
	}
	c->ilen -= head_len;
	memmove(c->ibuf, c->ibuf + head_len, c->ilen);
	c->iscan = 0;
	if (!c->ilen)
		conn_release_ibuf(c);
	c->state = CS_SEND;
	c->ohead = c->olen = 0;
	timer_arm(w, c, &w->io_timers);
	COUNT(w, requests, 1);
	return conn_send(w, c);
}

/* Answer every complete request in the input buffer, one after the other (pipelining). */
static void conn_process(struct worker *w, struct conn *c)
{
	while (c->state == CS_READ && c->ilen) {
		int len = head_end(c);

		if (len < 0) {
			if (conn_answer(w, c, c->ilen, -len) < 0)
				return;
		} else if (len == 0) {
			if (c->ilen < IBUF_SIZE)
				return;   /* wait for more */
			if (conn_answer(w, c, c->ilen, 431) < 0)
				return;
		} else if (conn_answer(w, c, (size_t)len, 0) < 0) {
			return;
		}
	}
	if (c->state == CS_READ && c->ibuf && !c->ilen)
		conn_release_ibuf(c);
}

/* READ: the socket is readable (data, end of stream or error). */
static void conn_recv(struct worker *w, struct conn *c)
{
	ssize_t n;

	if (!c->ibuf) {
		c->ibuf = obj_alloc(OBJ_IBUF);
		if (!c->ibuf) {
			conn_alloc_failed(w, c);
			return;
		}
	}
	n = recv(c->fd, c->ibuf + c->ilen, IBUF_SIZE - c->ilen, 0);
	if (n > 0) {
		c->ilen += (size_t)n;
		conn_process(w, c);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		if (!c->ilen)
			conn_release_ibuf(c);
		return;
	}
	if (n == 0 && c->ilen) {
		/* The client ended its side in the middle of a request: tell it so. */
		conn_answer(w, c, c->ilen, 400);
		return;
	}
	conn_close(w, c);
}

/* LINGER: read and drop whatever comes until the client closes. */
static void conn_drain(struct worker *w, struct conn *c)
{
	char scratch[4096];
	ssize_t n = recv(c->fd, scratch, sizeof(scratch), 0);

	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)))
		return;
	conn_close(w, c);
}

static void conn_event(struct worker *w, struct conn *c)
{
	switch (c->state) {
	case CS_READ:
		conn_recv(w, c);
		break;
	case CS_SEND:
		if (conn_send(w, c) == 0)
			conn_process(w, c);
		break;
	case CS_LINGER:
		conn_drain(w, c);
		break;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Accepting                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void listener_pause(struct worker *w)
{
	if (w->listening && epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->lfd, NULL) == 0)
		w->listening = 0;
	w->accept_resume_ms = w->now_ms + ACCEPT_PAUSE_MS;
}

static void listener_resume(struct worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_tag };

	w->accept_resume_ms = 0;
	if (!w->listening && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->lfd, &ev) == 0)
		w->listening = 1;
}

/*
 * Out of descriptors (EMFILE/ENFILE): give up the reserve descriptor, accept the waiting
 * connection with it and close it at once, then take the reserve back. Without this the
 * connection would stay in the backlog, epoll would report the listener readable again at
 * once, and the worker would spin. With no reserve (another thread took the slot), pause.
 */
static void refuse_one(struct worker *w)
{
	int fd;

	if (w->reserve_fd < 0) {
		listener_pause(w);
		return;
	}
	close(w->reserve_fd);
	fd = accept(w->lfd, NULL, NULL);
	if (fd >= 0) {
		close(fd);
		COUNT(w, refused, 1);
	}
	w->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void listener_ready(struct worker *w)
{
	int i;

	for (i = 0; i < ACCEPT_BATCH && w->listening; i++) {
		int fd = accept4(w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			conn_new(w, fd);
			continue;
		}
		switch (errno) {
		case EAGAIN:
#if EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			return;
		case EINTR:
		case ECONNABORTED:
		case EPROTO:
			continue;
		case EMFILE:
		case ENFILE:
			refuse_one(w);
			continue;
		default:          /* ENOBUFS, ENOMEM: let the system breathe */
			COUNT(w, refused, 1);
			listener_pause(w);
			return;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* The event loop                                                                             */
/* ------------------------------------------------------------------------------------------ */

static void expire_timers(struct worker *w, struct timer_list *t)
{
	while (t->first && t->first->deadline_ms <= w->now_ms) {
		COUNT(w, timeouts, 1);
		conn_close(w, t->first);
	}
}

/* Milliseconds until the next timer, or -1 for none. */
static int next_wakeup(const struct worker *w)
{
	uint64_t next = UINT64_MAX;

	if (w->io_timers.first)
		next = w->io_timers.first->deadline_ms;
	if (w->linger_timers.first && w->linger_timers.first->deadline_ms < next)
		next = w->linger_timers.first->deadline_ms;
	if (w->accept_resume_ms && w->accept_resume_ms < next)
		next = w->accept_resume_ms;
	if (next == UINT64_MAX)
		return -1;
	return next <= w->now_ms ? 0 : (int)(next - w->now_ms);
}

static void *worker_main(void *arg)
{
	static int bind_warned;
	struct worker *w = arg;
	struct epoll_event ev[MAX_EVENTS];
	int stopping = 0;

	if (opt.bind_threads && pool_topology_bind_thread(w->index) < 0 &&
	    !__atomic_exchange_n(&bind_warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "pool-httpd: --bind: worker %u left unbound: %s\n", w->index,
		        strerror(errno));

	while (!stopping) {
		int i, n = epoll_wait(w->epfd, ev, MAX_EVENTS, next_wakeup(w));

		w->now_ms = now_ms();
		for (i = 0; i < n; i++) {
			if (ev[i].data.ptr == &stop_tag)
				stopping = 1;
			else if (ev[i].data.ptr == &listen_tag)
				listener_ready(w);
			else
				conn_event(w, ev[i].data.ptr);
		}
		expire_timers(w, &w->io_timers);
		expire_timers(w, &w->linger_timers);
		if (w->accept_resume_ms && w->accept_resume_ms <= w->now_ms)
			listener_resume(w);
	}

	/* Stop accepting, close every connection, give this thread's cached objects back. */
	close(w->lfd);
	w->lfd = -1;
	while (w->io_timers.first)
		conn_close(w, w->io_timers.first);
	while (w->linger_timers.first)
		conn_close(w, w->linger_timers.first);
	if (!use_malloc)
		pool_thread_flush();
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Set-up, log, shutdown                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* A listening socket on opt.addr:port with SO_REUSEPORT; returns it, or -1 with a message. */
static int listen_on(const char *addr, unsigned int port, unsigned int *bound_port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t slen = sizeof(sin);
	int fd, one = 1;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "pool-httpd: '%s' is not an IPv4 address\n", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) < 0) {
		fprintf(stderr, "pool-httpd: cannot listen on %s:%u: %s\n", addr, port,
		        strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*bound_port = ntohs(sin.sin_port);
	return fd;
}

/* Epoll instance, listener and reserve descriptor of worker w; 0, or -1 with a message. */
static int worker_init(struct worker *w, unsigned int index, unsigned int *port)
{
	struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &stop_tag };

	memset(w, 0, sizeof(*w));
	w->index = index;
	w->io_timers.duration_ms = opt.timeout_ms;
	w->linger_timers.duration_ms = opt.timeout_ms < LINGER_MS ? opt.timeout_ms : LINGER_MS;
	w->lfd = listen_on(opt.addr, *port, port);
	if (w->lfd < 0)
		return -1;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (w->epfd < 0 || w->reserve_fd < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, stop_fd, &sev) < 0) {
		fprintf(stderr, "pool-httpd: cannot set up worker %u: %s\n", index,
		        strerror(errno));
		return -1;
	}
	w->now_ms = now_ms();
	listener_resume(w);
	return w->listening ? 0 : -1;
}

static void counters_sum(const struct worker *ws, unsigned int n, struct counters *sum)
{
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		sum->accepted += COUNTER(&ws[i], accepted);
		sum->refused += COUNTER(&ws[i], refused);
		sum->requests += COUNTER(&ws[i], requests);
		sum->alloc_fail += COUNTER(&ws[i], alloc_fail);
		sum->timeouts += COUNTER(&ws[i], timeouts);
		sum->open += COUNTER(&ws[i], open);
	}
}

static void log_counters(const char *when, const struct counters *d, unsigned long open)
{
	fprintf(stderr, "pool-httpd: %s: %lu requests, %lu connections accepted, %lu refused, "
	        "%lu closed on allocation failure, %lu timed out, %lu open\n", when, d->requests,
	        d->accepted, d->refused, d->alloc_fail, d->timeouts, open);
}

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: pool-httpd [options]\n"
	        "An example HTTP/1.1 server whose per-connection objects come from libpool.\n"
	        "  GET /            a short text\n"
	        "  GET /bytes/<n>   n bytes (0..%u) of a 64-byte pattern\n"
	        "Options:\n"
	        "  --addr <ipv4>        address to listen on (default 127.0.0.1)\n"
	        "  --port <port>        TCP port, 0 for an ephemeral one (default 0); the port is\n"
	        "                       printed on stdout as 'port=<n>'\n"
	        "  --threads <n>        worker threads, each with its own listener (default: one\n"
	        "                       per processing unit)\n"
	        "  --bind               bind worker i to a processing unit (topology order)\n"
	        "  --timeout <seconds>  close connections idle or stuck that long (default 10)\n"
	        "  --cli <path>         serve the libpool CLI (pools show ...) on this UNIX socket\n"
	        "  --malloc             take objects from malloc()/free() instead of pools\n"
	        "  -dM<options>         libpool debugging options (-dMhelp lists them)\n"
	        "  -h, --help           this text\n", BYTES_MAX);
}

/* Parse a decimal count in [lo, hi]; -1 for anything else. */
static long parse_count(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	return v;
}

static int parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "addr",    required_argument, NULL, 'a' },
		{ "port",    required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "bind",    no_argument,       NULL, 'b' },
		{ "cli",     required_argument, NULL, 'c' },
		{ "malloc",  no_argument,       NULL, 'm' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1) {
		long v;
		double secs;
		char *end, *err;

		switch (c) {
		case 'a':
			opt.addr = optarg;
			break;
		case 'p':
			if ((v = parse_count(optarg, 0, 65535)) < 0)
				goto bad;
			opt.port = (unsigned int)v;
			break;
		case 't':
			if ((v = parse_count(optarg, 1, 1024)) < 0)
				goto bad;
			opt.threads = (unsigned int)v;
			break;
		case 'T':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs >= 0.001 && secs <= 86400))
				goto bad;
			opt.timeout_ms = (unsigned int)(secs * 1000);
			break;
		case 'b':
			opt.bind_threads = 1;
			break;
		case 'c':
			opt.cli_path = optarg;
			break;
		case 'm':
			use_malloc = 1;
			break;
		case 'd':
			if (optarg[0] != 'M')
				goto bad;
			switch (pool_parse_debugging(optarg + 1, &err)) {
			case 0:
				break;
			case 1:
				exit(0);
			default:
				fprintf(stderr, "pool-httpd: -d%s: %s\n", optarg,
				        err ? err : strerror(errno));
				free(err);
				usage(stderr);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "pool-httpd: bad value '%s' for %s\n", optarg, argv[optind - 1]);
		usage(stderr);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "pool-httpd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct worker *workers;
	struct counters total, last;
	sigset_t sigs;
	unsigned int i, port;
	int sig, k, status = 0;

	if (parse_options(argc, argv) < 0)
		return 2;
	if (!opt.threads)
		opt.threads = pool_topology()->pus;

	/* Every thread started from here on inherits this mask: only main() takes the signals. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (k = 0; k < OBJ_KINDS && !use_malloc; k++) {
		pools[k] = pool_create(obj_desc[k].name, obj_desc[k].size, 0);
		if (!pools[k]) {
			fprintf(stderr, "pool-httpd: cannot create pool %s: %s\n", obj_desc[k].name,
			        strerror(errno));
			return 1;
		}
	}

	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	workers = calloc(opt.threads, sizeof(*workers));
	if (stop_fd < 0 || !workers) {
		fprintf(stderr, "pool-httpd: %s\n", strerror(errno));
		return 1;
	}
	port = opt.port;
	for (i = 0; i < opt.threads; i++)
		if (worker_init(&workers[i], i, &port) < 0)
			return 1;
	if (opt.cli_path && pool_cli_listen(opt.cli_path) < 0) {
		fprintf(stderr, "pool-httpd: cannot serve the CLI on %s: %s\n", opt.cli_path,
		        strerror(errno));
		return 1;
	}
	printf("pool-httpd: listening addr=%s port=%u threads=%u objects=%s timeout_ms=%u\n",
	       opt.addr, port, opt.threads, use_malloc ? "malloc" : "pools", opt.timeout_ms);
	fflush(stdout);

	for (i = 0; i < opt.threads; i++) {
		errno = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
		if (errno) {
			fprintf(stderr, "pool-httpd: cannot start worker %u: %s\n", i,
			        strerror(errno));
			return 1;
		}
	}

	/* Wait for a signal; once a minute, log what happened if anything did. */
	memset(&last, 0, sizeof(last));
	for (;;) {
		struct timespec period = { .tv_sec = LOG_PERIOD_S };
		struct counters d;

		sig = sigtimedwait(&sigs, NULL, &period);
		if (sig > 0)
			break;
		counters_sum(workers, opt.threads, &total);
		d.requests = total.requests - last.requests;
		d.accepted = total.accepted - last.accepted;
		d.refused = total.refused - last.refused;
		d.alloc_fail = total.alloc_fail - last.alloc_fail;
		d.timeouts = total.timeouts - last.timeouts;
		if (d.requests || d.accepted || d.refused || d.alloc_fail || d.timeouts)
			log_counters("last minute", &d, total.open);
		last = total;
	}

	/* Stop: every worker sees stop_fd readable, closes everything, flushes and exits. */
	if (write(stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		fprintf(stderr, "pool-httpd: cannot wake the workers: %s\n", strerror(errno));
	for (i = 0; i < opt.threads; i++) {
		pthread_join(workers[i].thread, NULL);
		close(workers[i].epfd);
		close(workers[i].reserve_fd);
	}
	pool_cli_stop();
	counters_sum(workers, opt.threads, &total);
	fprintf(stderr, "pool-httpd: stopping on %s\n", strsignal(sig));
	log_counters("total", &total, total.open);
	if (!use_malloc) {
		printf("pool-httpd: final pools show\n");
		pool_dump(stdout, "byname");
		fflush(stdout);
		for (k = 0; k < OBJ_KINDS; k++) {
			if (pool_destroy(pools[k]) < 0) {
				fprintf(stderr, "pool-httpd: pool %s still has objects in use\n",
				        obj_desc[k].name);
				status = 1;
			}
		}
	}
	free(workers);
	close(stop_fd);
	return status;
}
