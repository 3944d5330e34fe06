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
 * Memory return. Load comes in waves; memory must go back when a wave ends. The server does
 * nothing for it: the library's releaser thread gives back, within two demand windows (decay_ms,
 * 10 s by default, POOL_DECAY_MS), what stayed unused through one, in the pools' shared lists and
 * in the workers' thread caches alike, whether the workers sleep or stay busy. Under steady load
 * it releases nothing the pools will ask for again. --gc-interval adds a periodic pool_gc(),
 * which gives back at once everything not in use: for a test, not for production.
 *
 * Monitoring (--stats). GET /metrics answers `show pools prometheus` followed by the server's
 * own counters, GET /pools.json `show pools json`, GET /profile.json `pools profile json 20`
 * (the sites holding the most bytes, once a profile runs: -dMprofile or `pools profile on` on
 * the CLI), GET /profile.folded `pools profile folded` (the live bytes of every call stack),
 * and GET /pools a live page of the pools and the profile (see "Statistics" below). An HTTP
 * client is a session of level user (pool_cli_exec_level()): it reads, and sees no address.
 * --cli serves the command socket at the level --cli-level says.
 *
 * Errors. Bad requests get 400, 404, 405, 413, 431 or 505 (see parse_head()); a statistics
 * answer that cannot be generated gets 500. A connection whose object cannot be allocated
 * (-dMfail makes that happen) or whose socket fails is closed and everything it held goes back
 * to its pool. Out of file descriptors, a worker closes a reserve descriptor, accepts the
 * pending connection, closes it at once, and takes the reserve back: the client is refused and
 * the listener does not spin. On SIGTERM/SIGINT the workers close their listener and their
 * connections, flush their thread caches and exit; main prints the final state of the pools, in
 * which every pool is at used 0.
 *
 * Exit status (tools/tool.h): 0 clean stop, 1 a pool still had objects in use at the stop (a
 * leak), 2 bad usage, 3 cannot start (address in use or not local, CLI socket, pools, threads).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
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

#include "tool.h"

const char *tool_name = "pool-httpd";

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

/*
 * Objects, each from its own pool (or from malloc() with --malloc):
 *   httpd-conn  struct conn: the socket, the state, the timer links. From accept() to close().
 *   httpd-ibuf  16 KiB of input: allocated when the socket becomes readable, freed as soon as it
 *               holds no unanswered byte. So an idle keep-alive connection holds no buffer.
 *   httpd-req   struct req: what the parsed request asks for and how far its answer got. From
 *               the end of the request's header section to the last byte of the response.
 *   httpd-obuf  16 KiB of output: allocated with the request object, refilled while the
 *               response (up to 1 MiB) goes out, freed with the request object.
 */
enum obj_kind { OBJ_CONN, OBJ_IBUF, OBJ_REQ, OBJ_OBUF, OBJ_KINDS };

/* What a request asks for (parse_head()); the statistics routes exist only with --stats. */
enum route { RT_HELLO, RT_BYTES, RT_METRICS, RT_JSON, RT_PROFILE, RT_FOLDED, RT_FILE };

/* d3.js for the page's icicle: Debian's libjs-d3 (3.5), read at start (--d3 <path>). */
#define D3_PATH_DEF "/usr/share/javascript/d3/d3.min.js"
#define D3_MAX      (4u << 20)    /* the largest d3.js read */

struct req {
	int status;               /* HTTP status of the response */
	int head_only;            /* HEAD: send the header section only */
	int keep_alive;           /* keep the connection open after this response */
	enum route route;         /* what a 200 answers */
	const char *ctype;        /* Content-Type; NULL: text/plain, or octet-stream for /bytes */
	const char *cache;        /* Cache-Control value, NULL for none */
	const char *text;         /* body text, or NULL for the /bytes pattern */
	char *owned;              /* malloc()ed body generated for this request (text points to it) */
	size_t body_len;          /* body bytes to send */
	size_t body_done;         /* body bytes already copied to the output buffer */
	int head_done;            /* header section copied to the output buffer */
};

/*
 * Connection states:
 *   READ    waiting for (the rest of) a request header section; epoll waits for EPOLLIN.
 *   SEND    a response is going out; epoll waits for EPOLLOUT while the socket is full.
 *   LINGER  the last response went out and our side is shut: input is read and dropped until
 *           the client closes, so that closing with unread input (which makes the kernel send a
 *           reset) cannot destroy the response before the client has read it.
 */
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

/*
 * Timeouts. A connection in READ or SEND is closed when it made no progress for --timeout
 * (READ: since it became idle, however slowly the client sends; SEND: since the last write),
 * one in LINGER after at most a second. Every timer of one kind has the same duration, so each
 * kind is a FIFO list in deadline order: arming appends, expiring pops from the front, O(1).
 */
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
	enum pool_cli_level cli_level; /* of the --cli socket */
	unsigned int timeout_ms;
	unsigned int gc_interval_ms;   /* 0 (the default): no periodic pool_gc() */
	int bind_threads;
	int stats;                     /* serve /metrics, /pools.json and /pools */
	const char *d3_path;           /* d3.js for the page's icicle */
} opt = { .addr = "127.0.0.1", .cli_level = POOL_CLI_OPERATOR, .timeout_ms = 10000,
          .d3_path = D3_PATH_DEF };

static char *d3_js;           /* its text, NULL when it could not be read (/pools/d3.min.js 404) */
static size_t d3_len;

static int stop_fd = -1;      /* eventfd every worker watches; written once to stop them */
static struct worker *workers;  /* opt.threads of them, for /metrics and the log line */

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

/* ------------------------------------------------------------------------------------------ */
/* Statistics: /metrics, /pools.json, /pools (--stats)                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * GET /pools: a page that draws the pools from /pools.json every second, lists the top sites
 * from /profile.json and draws /profile.folded as an icicle, a flame graph upside down
 * (tools/httpd-page/, embedded in the binary at build time, with uPlot for the charts; the
 * icicle is drawn with d3.js, which the server reads at start from Debian's libjs-d3,
 * /usr/share/javascript/d3/d3.min.js, or --d3 <path>, and serves as /pools/d3.min.js: nothing
 * is fetched from elsewhere).
 */
struct page_file {
	const char *path;
	const char *ctype;
	const char *start, *end;
};

/*
 * The files of the pools page, embedded at build time by the assembler's .incbin when
 * HTTPD_PAGE_DIR names their directory: the binary needs nothing at run time, and the page is
 * edited as the HTML file it is. The assembler opens the path as given, relative to the
 * directory the compiler runs in. mk/demo.mk passes -DHTTPD_PAGE_DIR='"tools/httpd-page"' (make
 * runs at the top of the source tree) and makes pool-httpd depend on the files. Built without
 * it (as the installed example, from its directory alone), the server has no page: /metrics and
 * /pools.json work, /pools answers 404. To build the installed example with its page, from the
 * examples directory:
 *   cc -D_GNU_SOURCE -DHTTPD_PAGE_DIR='"httpd-page"' -o pool-httpd pool-httpd.c \
 *      $(pkg-config --cflags --libs libpool) -lpthread
 */
#ifdef HTTPD_PAGE_DIR
#define EMBED(sym, file)                                                                   \
	__asm__(".pushsection .rodata, \"a\"\n"                                               \
	        ".balign 16\n"                                                                 \
	        ".globl " #sym "\n.hidden " #sym "\n" #sym ":\n"                                \
	        ".incbin \"" HTTPD_PAGE_DIR "/" file "\"\n"                                    \
	        ".globl " #sym "_end\n.hidden " #sym "_end\n" #sym "_end:\n"                    \
	        ".popsection\n");                                                              \
	extern const char sym[] __attribute__((visibility("hidden")));                        \
	extern const char sym##_end[] __attribute__((visibility("hidden")))

EMBED(page_html, "pools.html");
EMBED(uplot_js, "uplot/uPlot.iife.min.js");
EMBED(uplot_css, "uplot/uPlot.min.css");

static const struct page_file page_files[] = {
	{ "/pools", "text/html; charset=utf-8", page_html, page_html_end },
	{ "/pools/uPlot.iife.min.js", "text/javascript; charset=utf-8", uplot_js, uplot_js_end },
	{ "/pools/uPlot.min.css", "text/css; charset=utf-8", uplot_css, uplot_css_end },
};
static const size_t page_nfiles = sizeof(page_files) / sizeof(page_files[0]);
#else
static const struct page_file *const page_files = NULL;
static const size_t page_nfiles = 0;
#endif

/* parse_head() for the statistics paths: sets r->status to 200 and the route, or leaves it. */
static void route_stats(const char *path, size_t len, struct req *r)
{
	size_t i;

	if (len == 8 && !memcmp(path, "/metrics", 8)) {
		r->route = RT_METRICS;
		/* the Prometheus text exposition format, version 0.0.4 */
		r->ctype = "text/plain; version=0.0.4; charset=utf-8";
	} else if (len == 11 && !memcmp(path, "/pools.json", 11)) {
		r->route = RT_JSON;
		r->ctype = "application/json";
	} else if (len == 13 && !memcmp(path, "/profile.json", 13)) {
		r->route = RT_PROFILE;
		r->ctype = "application/json";
	} else if (len == 15 && !memcmp(path, "/profile.folded", 15)) {
		r->route = RT_FOLDED;
		r->ctype = "text/plain; charset=utf-8";
	} else if (len == 16 && !memcmp(path, "/pools/d3.min.js", 16)) {
		if (!d3_js)
			return;
		r->route = RT_FILE;
		r->ctype = "text/javascript; charset=utf-8";
		r->text = d3_js;
		r->body_len = d3_len;
	} else {
		for (i = 0; i < page_nfiles; i++)
			if (strlen(page_files[i].path) == len && !memcmp(path, page_files[i].path, len))
				break;
		if (i == page_nfiles)
			return;
		r->route = RT_FILE;
		r->ctype = page_files[i].ctype;
		r->text = page_files[i].start;
		r->body_len = (size_t)(page_files[i].end - page_files[i].start);
	}
	r->cache = "no-cache";
	r->status = 200;
}

static void counters_sum(const struct worker *ws, unsigned int n, struct counters *sum);

/* The server's own counters after libpool's metrics, in the same exposition format. */
static void metrics_server(FILE *out)
{
	static const struct {
		const char *name, *type, *help;
		size_t offset;
	} m[] = {
		{ "pool_httpd_requests_total", "counter", "Responses started.",
		  offsetof(struct counters, requests) },
		{ "pool_httpd_connections_accepted_total", "counter", "Connections accepted and kept.",
		  offsetof(struct counters, accepted) },
		{ "pool_httpd_connections_refused_total", "counter",
		  "Connections closed at once for lack of descriptors or memory.",
		  offsetof(struct counters, refused) },
		{ "pool_httpd_alloc_failures_total", "counter",
		  "Connections closed because an object could not be allocated.",
		  offsetof(struct counters, alloc_fail) },
		{ "pool_httpd_timeouts_total", "counter", "Connections closed by their timer.",
		  offsetof(struct counters, timeouts) },
		{ "pool_httpd_connections_open", "gauge", "Connections open now.",
		  offsetof(struct counters, open) },
	};
	struct counters sum;
	size_t i;

	counters_sum(workers, opt.threads, &sum);
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s %lu\n", m[i].name, m[i].help, m[i].name,
		        m[i].type, m[i].name, *(const unsigned long *)((const char *)&sum + m[i].offset));
}

/*
 * Generate the body of /metrics, /pools.json or /profile.json into r->owned (malloc()ed by
 * open_memstream()), as a CLI session of level user would see it: without addresses.
 * Returns 0, or -1 when it cannot be generated (no memory; the command failed).
 */
static int stats_generate(struct req *r)
{
	size_t len = 0;
	FILE *out = open_memstream(&r->owned, &len);
	int ret;

	if (!out)
		return -1;
	ret = pool_cli_exec_level(r->route == RT_METRICS ? "show pools prometheus" :
	                          r->route == RT_PROFILE ? "pools profile json 20" :
	                          r->route == RT_FOLDED ? "pools profile folded" :
	                          "show pools json", out, POOL_CLI_USER);
	if (ret == 0 && r->route == RT_METRICS)
		metrics_server(out);
	if (fclose(out) != 0 || ret < 0) {
		free(r->owned);
		r->owned = NULL;
		return -1;
	}
	r->text = r->owned;
	r->body_len = len;
	return 0;
}

/*
 * Parse the header section h[0..len) (complete, checked by head_end()) into r. Sets r->status:
 *   200 GET or HEAD of "/" (hello_text) or of "/bytes/<n>", n = 0..1048576 (the pattern), or
 *       with --stats of a statistics path (route_stats());
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
		r->route = RT_HELLO;
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
		r->route = RT_BYTES;
		r->text = NULL;
		r->body_len = n;
	} else if (opt.stats) {
		route_stats(target, tlen, r);
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
	case 500: return "Internal Server Error";
	case 505: return "HTTP Version Not Supported";
	default:  return "Error";
	}
}

/* Make r an error response: the reason phrase as body, and the connection closes after it. */
static void req_error(struct req *r, int status)
{
	int head_only = r->head_only, keep_alive = r->keep_alive;

	free(r->owned);
	memset(r, 0, sizeof(*r));
	r->status = status;
	r->head_only = head_only;
	r->keep_alive = (status == 404 || status == 405 || status == 500) && keep_alive;
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
		                 "%s%s%s%s%s\r\n",
		                 r->status, reason(r->status),
		                 r->ctype ? r->ctype :
		                 r->text ? "text/plain" : "application/octet-stream",
		                 r->body_len,
		                 r->cache ? "Cache-Control: " : "", r->cache ? r->cache : "",
		                 r->cache ? "\r\n" : "",
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

/* The request object and the output buffer go back (with a generated body, if any). */
static void conn_release_req(struct conn *c)
{
	if (c->req)
		free(c->req->owned);
	obj_free(OBJ_REQ, c->req);
	c->req = NULL;
	obj_free(OBJ_OBUF, c->obuf);
	c->obuf = NULL;
}

/* Close the socket and give every object the connection holds back. */
static void conn_close(struct worker *w, struct conn *c)
{
	timer_unlink(c);
	close(c->fd);             /* also removes it from the epoll set */
	if (c->ibuf)
		conn_release_ibuf(c);
	conn_release_req(c);
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

	conn_release_req(c);
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
	if (c->req)
		memset(c->req, 0, sizeof(*c->req));
	c->obuf = obj_alloc(OBJ_OBUF);
	if (!c->req || !c->obuf) {
		conn_alloc_failed(w, c);
		return -1;
	}
	if (status) {
		req_error(c->req, status);
	} else {
		parse_head(c->ibuf, head_len, c->req);
		if (c->req->status == 200 &&
		    (c->req->route == RT_METRICS || c->req->route == RT_JSON ||
		     c->req->route == RT_PROFILE || c->req->route == RT_FOLDED) &&
		    stats_generate(c->req) < 0)
			c->req->status = 500;
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

/* Close the connections whose timer on t fired; returns how many. */
static unsigned int expire_timers(struct worker *w, struct timer_list *t)
{
	unsigned int n = 0;

	while (t->first && t->first->deadline_ms <= w->now_ms) {
		COUNT(w, timeouts, 1);
		conn_close(w, t->first);
		n++;
	}
	return n;
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
	        "  with --stats:    GET /metrics (Prometheus), /pools.json, /profile.json,\n"
	        "                   /profile.folded, /pools (live page)\n"
	        "Options:\n"
	        "  --addr <ipv4>        address to listen on (default 127.0.0.1)\n"
	        "  --port <port>        TCP port, 0..65535, 0 for an ephemeral one (default 0); the\n"
	        "                       port is printed on stdout as 'port=<n>'\n"
	        "  --threads <n>        worker threads, 1..1024 (default: one per processing unit)\n"
	        "  --bind               bind worker i to a processing unit (topology order)\n"
	        "  --timeout <seconds>  close connections idle or stuck that long, 0.001..86400\n"
	        "                       (default 10)\n"
	        "  --gc-interval <seconds>\n"
	        "                       call pool_gc() this often, 0 (never) or 0.01..3600\n"
	        "                       (default 0: memory comes back by itself)\n"
	        "  --stats              serve /metrics, /pools.json and /pools on the same address:\n"
	        "                       anyone who can connect can read them (keep 127.0.0.1)\n"
	        "  --d3 <path>          d3.js for the page's icicle of the profile's stacks\n"
	        "                       (default " D3_PATH_DEF ",\n"
	        "                       Debian package libjs-d3)\n"
	        "  --cli <path>         serve the libpool CLI (pools show ...) on this UNIX socket\n"
	        "  --cli-level <level>  what the CLI socket allows: user (read), operator (and give\n"
	        "                       memory back, the default) or admin (and change debugging\n"
	        "                       options and limits)\n"
	        "  --malloc             take objects from malloc()/free() instead of pools\n"
	        "  -dM<options>, --debug <options>\n"
	        "                       libpool debugging options (-dMhelp lists them)\n"
	        "  -h, --help           this text\n"
	        "  -V, --version        the version\n"
	        "Exit status: 0 clean stop, 1 objects still in use at the stop, 2 bad usage,\n"
	        "3 cannot start (address, CLI socket, pools or threads).\n", BYTES_MAX);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_ADDR = 256, OPT_PORT, OPT_THREADS, OPT_TIMEOUT, OPT_BIND, OPT_CLI, OPT_CLI_LEVEL,
	       OPT_MALLOC, OPT_GC, OPT_STATS, OPT_D3 };
	static const char *const levels[] = { [POOL_CLI_USER] = "user",
	                                      [POOL_CLI_OPERATOR] = "operator",
	                                      [POOL_CLI_ADMIN] = "admin" };
	static const struct option longopts[] = {
		{ "addr",        required_argument, NULL, OPT_ADDR },
		{ "port",        required_argument, NULL, OPT_PORT },
		{ "threads",     required_argument, NULL, OPT_THREADS },
		{ "timeout",     required_argument, NULL, OPT_TIMEOUT },
		{ "gc-interval", required_argument, NULL, OPT_GC },
		{ "bind",        no_argument,       NULL, OPT_BIND },
		{ "stats",       no_argument,       NULL, OPT_STATS },
		{ "d3",          required_argument, NULL, OPT_D3 },
		{ "cli",         required_argument, NULL, OPT_CLI },
		{ "cli-level",   required_argument, NULL, OPT_CLI_LEVEL },
		{ "malloc",      no_argument,       NULL, OPT_MALLOC },
		{ "debug",       required_argument, NULL, 'D' },
		{ "help",        no_argument,       NULL, 'h' },
		{ "version",     no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct in_addr ia;
	double secs;
	int c, l;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ADDR:
			if (inet_pton(AF_INET, optarg, &ia) != 1)
				tool_usage_error("bad value '%s' for --addr: expected an IPv4 address",
				                 optarg);
			opt.addr = optarg;
			break;
		case OPT_PORT:
			opt.port = (unsigned int)tool_parse_ulong("--port", optarg, 0, 65535);
			break;
		case OPT_THREADS:
			opt.threads = (unsigned int)tool_parse_ulong("--threads", optarg, 1, 1024);
			break;
		case OPT_TIMEOUT:
			secs = tool_parse_double("--timeout", optarg, 0.001, 86400, "seconds");
			opt.timeout_ms = (unsigned int)(secs * 1000);
			break;
		case OPT_GC:
			secs = tool_parse_double("--gc-interval", optarg, 0, 3600, "seconds");
			if (secs != 0 && secs < 0.01)
				tool_usage_error("bad value '%s' for --gc-interval: expected 0 or "
				                 "0.01..3600 seconds", optarg);
			opt.gc_interval_ms = (unsigned int)(secs * 1000);
			break;
		case OPT_BIND:
			opt.bind_threads = 1;
			break;
		case OPT_STATS:
			opt.stats = 1;
			break;
		case OPT_D3:
			if (!*optarg)
				tool_usage_error("bad value '' for --d3: expected a file");
			opt.d3_path = optarg;
			break;
		case OPT_CLI:
			if (!*optarg)
				tool_usage_error("bad value '' for --cli: expected a socket path");
			opt.cli_path = optarg;
			break;
		case OPT_CLI_LEVEL:
			for (l = POOL_CLI_USER; l <= POOL_CLI_ADMIN && strcmp(optarg, levels[l]); l++)
				;
			if (l > POOL_CLI_ADMIN)
				tool_usage_error("bad value '%s' for --cli-level: expected user, operator "
				                 "or admin", optarg);
			opt.cli_level = (enum pool_cli_level)l;
			break;
		case OPT_MALLOC:
			use_malloc = 1;
			break;
		default:
			tool_common_option(c, longopts, argv, usage);
		}
	}
	tool_no_operands(argc, argv);
}

/*
 * d3.js for the page, read once at start: the server sends it from memory, as the page's own
 * files. Without it the page works and says how to get the icicle.
 */
static void load_d3(void)
{
	FILE *f = fopen(opt.d3_path, "re");
	size_t cap = 0, got;
	char *buf = NULL;

	if (!f) {
		tool_error("the icicle of /pools needs d3.js: cannot read %s: %s (Debian package "
		           "libjs-d3, or --d3 <path>)", opt.d3_path, strerror(errno));
		return;
	}
	for (d3_len = 0; d3_len < D3_MAX; d3_len += got) {
		if (d3_len == cap) {
			size_t ncap = cap ? 2 * cap : 256u << 10;
			char *nb = realloc(buf, ncap);

			if (!nb)
				break;
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + d3_len, 1, cap - d3_len, f);
		if (!got)
			break;
	}
	if (ferror(f) || !feof(f)) {
		tool_error("the icicle of /pools needs d3.js: cannot read %s whole", opt.d3_path);
		free(buf);
		buf = NULL;
	}
	fclose(f);
	d3_js = buf;
}

/*
 * main() after start-up: wait for SIGTERM/SIGINT; meanwhile call pool_gc() every
 * opt.gc_interval_ms and log the counters once a minute when something happened. Returns the
 * signal.
 */
static int main_loop(const sigset_t *sigs)
{
	uint64_t now = now_ms(), next_log = now + LOG_PERIOD_S * 1000u;
	uint64_t next_gc = opt.gc_interval_ms ? now + opt.gc_interval_ms : UINT64_MAX;
	struct counters total, last, d;
	int sig;

	memset(&last, 0, sizeof(last));
	for (;;) {
		uint64_t next = next_gc < next_log ? next_gc : next_log, wait_ms;
		struct timespec period;

		wait_ms = next > now ? next - now : 0;
		period.tv_sec = (time_t)(wait_ms / 1000);
		period.tv_nsec = (long)(wait_ms % 1000) * 1000000L;
		sig = sigtimedwait(sigs, NULL, &period);
		if (sig > 0)
			return sig;
		now = now_ms();
		if (now >= next_gc) {
			if (!use_malloc)
				pool_gc(NULL);
			next_gc = now + opt.gc_interval_ms;
		}
		if (now < next_log)
			continue;
		next_log = now + LOG_PERIOD_S * 1000u;
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
}

int main(int argc, char **argv)
{
	struct counters total;
	sigset_t sigs;
	unsigned int i, port;
	int sig, k, status = TOOL_EXIT_OK;

	parse_options(argc, argv);
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
			tool_error("cannot create pool %s: %s", obj_desc[k].name, strerror(errno));
			return TOOL_EXIT_UNAVAILABLE;
		}
	}

	if (opt.stats)
		load_d3();
	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	workers = calloc(opt.threads, sizeof(*workers));
	if (stop_fd < 0 || !workers) {
		tool_error("cannot start: %s", strerror(errno));
		return TOOL_EXIT_UNAVAILABLE;
	}
	port = opt.port;
	for (i = 0; i < opt.threads; i++)
		if (worker_init(&workers[i], i, &port) < 0)
			return TOOL_EXIT_UNAVAILABLE;
	if (opt.cli_path && pool_cli_listen_level(opt.cli_path, opt.cli_level, 0600) < 0) {
		tool_error("cannot serve the CLI on %s: %s", opt.cli_path, strerror(errno));
		return TOOL_EXIT_UNAVAILABLE;
	}
	printf("pool-httpd: listening addr=%s port=%u threads=%u objects=%s timeout_ms=%u "
	       "gc_interval_ms=%u stats=%s\n", opt.addr, port, opt.threads,
	       use_malloc ? "malloc" : "pools", opt.timeout_ms, opt.gc_interval_ms,
	       !opt.stats ? "off" : page_nfiles ? "on" : "on-without-page");
	if (opt.stats && !page_nfiles)
		tool_error("built without the pools page (HTTPD_PAGE_DIR): /pools answers 404");
	fflush(stdout);

	for (i = 0; i < opt.threads; i++) {
		errno = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
		if (errno) {
			tool_error("cannot start worker %u: %s", i, strerror(errno));
			return TOOL_EXIT_UNAVAILABLE;
		}
	}

	sig = main_loop(&sigs);

	/* Stop: every worker sees stop_fd readable, closes everything, flushes and exits. */
	if (write(stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		tool_error("cannot wake the workers: %s", strerror(errno));
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
				tool_error("pool %s still has objects in use", obj_desc[k].name);
				status = TOOL_EXIT_FAILURE;
			}
		}
	}
	free(workers);
	free(d3_js);
	close(stop_fd);
	return status;
}
