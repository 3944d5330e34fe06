/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * mc-load - a closed-loop load generator for memcached's text protocol, for `make
 * memcached-bench` (contrib/memcached/bench.sh). memcslap (libmemcached-tools) reports no
 * latency percentiles and memaslap only a power-of-two histogram, so this measures each
 * request itself: `--threads` threads each drive `--conns` connections with epoll, one request
 * in flight per connection, and time it from the first byte sent to the last byte received
 * (CLOCK_MONOTONIC). Latencies go into a log-linear histogram (64 steps per power of two, so
 * a percentile is within 1.6% of the exact one), merged over threads at the end.
 *
 *   mc-load [--server HOST:PORT] [--threads N] [--conns N] [--seconds S] [--keys N]
 *           [--get-ratio R] [--value-min BYTES] [--value-max BYTES] [--seed N]
 *           [--fill] [--command LINE]
 *
 * Keys are "key:<n>" with n uniform over --keys; a request is a get with probability
 * --get-ratio, else a set of a value whose size is log-uniform between --value-min and
 * --value-max (so each power of two gets as many sets). --fill sets every key once, in order,
 * instead of the timed mix. --command sends one line (e.g. flush_all) and prints the reply.
 * Prints one line of key=value figures: ops, ops_per_s, gets, hits, sets, set_errors
 * (SERVER_ERROR replies, e.g. out of memory), p50_us, p90_us, p99_us, p999_us, max_us,
 * seconds. Exits 1 on a connection or protocol error, 2 on bad options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SUB_BITS 6                       /* 64 histogram steps per power of two */
#define SUB      (1u << SUB_BITS)
#define HIST_LEN ((64 - SUB_BITS + 1) * SUB)
#define RBUF     (128 * 1024)

struct opts {
	const char *host, *port;
	unsigned int threads, conns;
	double seconds, get_ratio;
	unsigned long keys, vmin, vmax, seed;
	int fill;
};

struct conn {
	int fd;
	char *wbuf;                       /* the request being sent */
	size_t wlen, woff;
	char *rbuf;
	size_t rlen;
	int is_get;
	uint64_t t0;                      /* when the request's first byte went */
};

struct worker {
	pthread_t tid;
	unsigned int index;
	struct conn *conns;
	uint64_t rng;
	unsigned long next_fill, fill_end;
	uint64_t ops, gets, hits, sets, set_errors;
	uint64_t hist[HIST_LEN];
	int failed;
};

static struct opts o = {
	.host = "127.0.0.1", .port = "11211", .threads = 2, .conns = 16, .seconds = 10,
	.get_ratio = 0.9, .keys = 100000, .vmin = 32, .vmax = 32768, .seed = 1,
};
static struct addrinfo *server;
static char *value_bytes;                 /* vmax bytes of filler, shared read-only */
static volatile uint64_t deadline_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: Vigna, "An experimental exploration of Marsaglia's xorshift generators" */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static double rnd01(uint64_t *s)
{
	return (double)(rnd(s) >> 11) / (double)(1ull << 53);
}

static unsigned int hist_index(uint64_t v)
{
	unsigned int e;

	if (v < SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);
	return (e - SUB_BITS + 1) * SUB + (unsigned int)((v >> (e - SUB_BITS)) & (SUB - 1));
}

/* The middle of a bucket, in the unit recorded. */
static double hist_value(unsigned int i)
{
	unsigned int e;

	if (i < SUB)
		return i;
	e = i / SUB + SUB_BITS - 1;
	return ((double)(SUB + i % SUB) + 0.5) * (double)(1ull << (e - SUB_BITS));
}

static void die(const char *what)
{
	fprintf(stderr, "mc-load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int connect_server(void)
{
	int one = 1, fd = socket(server->ai_family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, server->ai_addr, server->ai_addrlen) != 0)
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* The next request of connection `c`, or 0 when the worker is done. */
static int next_request(struct worker *w, struct conn *c)
{
	unsigned long key;
	size_t len;
	int n;

	if (o.fill) {
		if (w->next_fill >= w->fill_end)
			return 0;
		key = w->next_fill++;
		c->is_get = 0;
	} else {
		if (now_ns() >= deadline_ns)
			return 0;
		key = (unsigned long)(rnd(&w->rng) % o.keys);
		c->is_get = rnd01(&w->rng) < o.get_ratio;
	}
	if (c->is_get) {
		n = snprintf(c->wbuf, 64, "get key:%lu\r\n", key);
		c->wlen = (size_t)n;
	} else {
		double lo = log((double)o.vmin), hi = log((double)o.vmax);

		len = (size_t)exp(lo + (hi - lo) * rnd01(&w->rng));
		if (len < o.vmin)
			len = o.vmin;
		if (len > o.vmax)
			len = o.vmax;
		n = snprintf(c->wbuf, 64, "set key:%lu 0 0 %zu\r\n", key, len);
		memcpy(c->wbuf + n, value_bytes, len);
		memcpy(c->wbuf + n + len, "\r\n", 2);
		c->wlen = (size_t)n + len + 2;
	}
	c->woff = 0;
	c->rlen = 0;
	c->t0 = now_ns();
	return 1;
}

/* Bytes of a complete reply at the start of c->rbuf, 0 if incomplete, -1 if malformed. */
static long reply_len(struct worker *w, struct conn *c)
{
	char *eol = memmem(c->rbuf, c->rlen, "\r\n", 2);
	size_t line;

	if (!eol)
		return 0;
	line = (size_t)(eol - c->rbuf) + 2;
	if (!c->is_get) {
		if (!strncmp(c->rbuf, "STORED", 6))
			return (long)line;
		if (!strncmp(c->rbuf, "SERVER_ERROR", 12)) {
			w->set_errors++;
			return (long)line;
		}
		return -1;
	}
	if (!strncmp(c->rbuf, "END\r\n", 5))
		return 5;
	if (!strncmp(c->rbuf, "VALUE ", 6)) {
		unsigned long bytes;
		char *p = eol;

		while (p > c->rbuf && p[-1] != ' ')
			p--;
		bytes = strtoul(p, NULL, 10);
		if (c->rlen < line + bytes + 2 + 5)
			return 0;
		if (memcmp(c->rbuf + line + bytes + 2, "END\r\n", 5))
			return -1;
		w->hits++;
		return (long)(line + bytes + 2 + 5);
	}
	return -1;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev, evs[64];
	unsigned int i, active = 0;
	int ep = epoll_create1(0);

	if (ep < 0)
		die("epoll_create1");
	for (i = 0; i < o.conns; i++) {
		struct conn *c = &w->conns[i];

		c->fd = connect_server();
		c->wbuf = malloc(64 + o.vmax + 2);
		c->rbuf = malloc(RBUF + o.vmax);
		if (!c->wbuf || !c->rbuf)
			die("malloc");
		if (!next_request(w, c)) {
			close(c->fd);
			c->fd = -1;
			continue;
		}
		ev.events = EPOLLOUT | EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
			die("epoll_ctl");
		active++;
	}
	while (active) {
		int n = epoll_wait(ep, evs, 64, 1000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		for (int k = 0; k < n; k++) {
			struct conn *c = evs[k].data.ptr;
			ssize_t r;
			long done;

			if (c->woff < c->wlen) {
				r = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
				if (r < 0 && errno != EAGAIN)
					die("send");
				if (r > 0)
					c->woff += (size_t)r;
				if (c->woff == c->wlen) {
					ev.events = EPOLLIN;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				}
				continue;
			}
			r = recv(c->fd, c->rbuf + c->rlen, RBUF + o.vmax - c->rlen, MSG_DONTWAIT);
			if (r == 0) {
				errno = ECONNRESET;
				die("recv");
			}
			if (r < 0) {
				if (errno == EAGAIN)
					continue;
				die("recv");
			}
			c->rlen += (size_t)r;
			done = reply_len(w, c);
			if (done < 0) {
				fprintf(stderr, "mc-load: unexpected reply: %.*s\n",
				        (int)(c->rlen < 80 ? c->rlen : 80), c->rbuf);
				w->failed = 1;
				return NULL;
			}
			if (done == 0)
				continue;
			w->hist[hist_index((now_ns() - c->t0) / 1000u)]++;
			w->ops++;
			if (c->is_get)
				w->gets++;
			else
				w->sets++;
			if (!next_request(w, c)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				c->fd = -1;
				active--;
				continue;
			}
			ev.events = EPOLLOUT | EPOLLIN;
			ev.data.ptr = c;
			epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
	close(ep);
	return NULL;
}

static double percentile(const uint64_t *hist, uint64_t total, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;

	for (unsigned int i = 0; i < HIST_LEN; i++) {
		seen += hist[i];
		if (seen >= want && hist[i])
			return hist_value(i);
	}
	return 0;
}

/* Whether `buf` holds a whole reply: one line, or STAT lines up to END. */
static int reply_complete(const char *buf, size_t len)
{
	if (len < 2 || memcmp(buf + len - 2, "\r\n", 2))
		return 0;
	if (strncmp(buf, "STAT ", 5) && strncmp(buf, "ITEM ", 5))
		return 1;
	return len >= 5 && !memcmp(buf + len - 5, "END\r\n", 5);
}

static int one_command(const char *line)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int fd = connect_server();
	ssize_t r;

	if (!buf)
		die("malloc");
	if (dprintf(fd, "%s\r\n", line) < 0)
		die("send");
	while (!reply_complete(buf, len)) {
		if (len + 4096 > cap && !(buf = realloc(buf, cap *= 2)))
			die("realloc");
		r = recv(fd, buf + len, cap - len, 0);
		if (r <= 0)
			die("recv");
		len += (size_t)r;
	}
	fwrite(buf, 1, len, stdout);
	free(buf);
	close(fd);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: mc-load [--server HOST:PORT] [--threads N] [--conns N] [--seconds S]\n"
	        "               [--keys N] [--get-ratio R] [--value-min B] [--value-max B] [--seed N]\n"
	        "               [--fill] [--command LINE]\n");
	exit(2);
}

static unsigned long num(const char *s, unsigned long min)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || v < min)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", 1, NULL, 'S' }, { "threads", 1, NULL, 't' }, { "conns", 1, NULL, 'c' },
		{ "seconds", 1, NULL, 's' }, { "keys", 1, NULL, 'k' }, { "get-ratio", 1, NULL, 'g' },
		{ "value-min", 1, NULL, 'm' }, { "value-max", 1, NULL, 'M' }, { "seed", 1, NULL, 'r' },
		{ "fill", 0, NULL, 'f' }, { "command", 1, NULL, 'C' }, { NULL, 0, NULL, 0 },
	};
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	const char *command = NULL;
	struct worker *ws;
	uint64_t t0, t1, total = 0, gets = 0, hits = 0, sets = 0, errs = 0, *hist;
	double secs;
	char *colon;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'S':
			colon = strrchr(optarg, ':');
			if (!colon)
				usage();
			*colon = 0;
			o.host = optarg;
			o.port = colon + 1;
			break;
		case 't': o.threads = (unsigned int)num(optarg, 1); break;
		case 'c': o.conns = (unsigned int)num(optarg, 1); break;
		case 's': o.seconds = atof(optarg); break;
		case 'k': o.keys = num(optarg, 1); break;
		case 'g': o.get_ratio = atof(optarg); break;
		case 'm': o.vmin = num(optarg, 1); break;
		case 'M': o.vmax = num(optarg, 1); break;
		case 'r': o.seed = num(optarg, 0); break;
		case 'f': o.fill = 1; break;
		case 'C': command = optarg; break;
		default: usage();
		}
	}
	if (optind != argc || o.vmax < o.vmin || o.get_ratio < 0 || o.get_ratio > 1 ||
	    o.seconds <= 0)
		usage();
	if (getaddrinfo(o.host, o.port, &hints, &server) != 0) {
		fprintf(stderr, "mc-load: cannot resolve %s:%s\n", o.host, o.port);
		return 1;
	}
	if (command)
		return one_command(command);
	value_bytes = malloc(o.vmax);
	ws = calloc(o.threads, sizeof(*ws));
	hist = calloc(HIST_LEN, sizeof(*hist));
	if (!value_bytes || !ws || !hist)
		die("malloc");
	memset(value_bytes, 'v', o.vmax);
	t0 = now_ns();
	deadline_ns = t0 + (uint64_t)(o.seconds * 1e9);
	for (unsigned int i = 0; i < o.threads; i++) {
		struct worker *w = &ws[i];

		w->index = i;
		w->rng = (o.seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
		w->next_fill = o.keys * i / o.threads;
		w->fill_end = o.keys * (i + 1) / o.threads;
		w->conns = calloc(o.conns, sizeof(*w->conns));
		if (!w->conns)
			die("calloc");
		if (pthread_create(&w->tid, NULL, worker_run, w) != 0)
			die("pthread_create");
	}
	for (unsigned int i = 0; i < o.threads; i++) {
		pthread_join(ws[i].tid, NULL);
		if (ws[i].failed)
			return 1;
		total += ws[i].ops;
		gets += ws[i].gets;
		hits += ws[i].hits;
		sets += ws[i].sets;
		errs += ws[i].set_errors;
		for (unsigned int j = 0; j < HIST_LEN; j++)
			hist[j] += ws[i].hist[j];
	}
	t1 = now_ns();
	secs = (double)(t1 - t0) / 1e9;
	printf("ops=%llu ops_per_s=%.0f gets=%llu hits=%llu sets=%llu set_errors=%llu "
	       "p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f seconds=%.2f\n",
	       (unsigned long long)total, (double)total / secs, (unsigned long long)gets,
	       (unsigned long long)hits, (unsigned long long)sets, (unsigned long long)errs,
	       percentile(hist, total, 0.50), percentile(hist, total, 0.90),
	       percentile(hist, total, 0.99), percentile(hist, total, 0.999),
	       percentile(hist, total, 1.0), secs);
	return 0;
}
