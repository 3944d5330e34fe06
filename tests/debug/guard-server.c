/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A test fixture for tests/debug/test_guard_server.sh: a "server" with a bug, run with
 * POOL_DEBUG=guard at the profile's default rate, to count how many allocations pass before
 * guard pages catch it. Three request handlers take turns on one pool of 208-byte objects: one
 * frees each request at once, one keeps a working set of the last 64, and the buggy one, on
 * every request it serves, either writes one byte past the end of its object (overflow) or
 * reads its object after freeing it (uaf). Unsampled objects lie in slabs, where the bug goes
 * unnoticed (it lands in a neighbour, or in a cached object); a guarded sample faults.
 *
 *     guard-server overflow|uaf <requests>
 *
 * The report's abort() ends in a SIGABRT handler that writes "caught after <n> allocations,
 * <k> by the buggy handler" and exits 3. Exits 1 when <requests> pass without a catch.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pool/pool.h>

#define WORKING_SET 64

struct request {
	unsigned long id;
	char line[200];
};

static struct pool_head *requests;
static volatile unsigned long allocations, buggy;
static struct request *working[WORKING_SET];
static int mode_uaf;

static struct request *obj_alloc(unsigned long id)
{
	struct request *r = pool_alloc(requests);

	if (!r) {
		fputs("guard-server: out of request objects\n", stderr);
		exit(1);
	}
	allocations++;
	r->id = id;
	return r;
}

static void handle_tidy(unsigned long id)
{
	struct request *r = obj_alloc(id);

	snprintf(r->line, sizeof(r->line), "GET /tidy/%lu", id);
	pool_free(requests, r);
}

static void handle_busy(unsigned long id)
{
	struct request *r = obj_alloc(id);
	struct request **slot = &working[id % WORKING_SET];

	snprintf(r->line, sizeof(r->line), "GET /busy/%lu", id);
	if (*slot)
		pool_free(requests, *slot);
	*slot = r;
}

/* The bug: a terminator written one byte past the object, or a read after the free. */
static void handle_buggy(unsigned long id)
{
	struct request *r = obj_alloc(id);
	volatile char *bytes = (volatile char *)r;

	buggy++;
	snprintf(r->line, sizeof(r->line), "GET /buggy/%lu", id);
	if (mode_uaf) {
		pool_free(requests, r);
		if (bytes[8] == 'X')
			fputs("guard-server: unexpected\n", stderr);
		return;
	}
	bytes[sizeof(*r)] = 0;
	pool_free(requests, r);
}

static void (*const handlers[])(unsigned long) = { handle_tidy, handle_busy, handle_buggy };

static void on_abort(int sig)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "caught after %lu allocations, %lu by the buggy "
	                 "handler\n", allocations, buggy);

	(void)sig;
	if (n > 0 && write(2, buf, (size_t)n) < 0)
		_exit(4);
	_exit(3);
}

int main(int argc, char **argv)
{
	void (*volatile const *table)(unsigned long) = handlers;
	unsigned long n, i;

	if (argc != 3 || (strcmp(argv[1], "overflow") && strcmp(argv[1], "uaf"))) {
		fputs("usage: guard-server overflow|uaf <requests>\n", stderr);
		return 1;
	}
	mode_uaf = !strcmp(argv[1], "uaf");
	n = strtoul(argv[2], NULL, 10);
	signal(SIGABRT, on_abort);
	requests = pool_create("request", sizeof(struct request), 0);
	if (!requests)
		return 1;
	for (i = 0; i < n; i++)
		table[i % 3](i);
	fprintf(stderr, "guard-server: not caught in %lu requests\n", n);
	return 1;
}
