/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A test fixture for tests/debug/test_heap_profile.sh: a "server" whose static request handlers all
 * allocate through one static wrapper, as doc/example-server.md advises (obj_alloc()), and
 * which the script builds as a user would, with plain -O2 (no -rdynamic, no frame pointers;
 * with and without -g). One handler leaks a request object in LEAK_EVERY, one frees every one
 * at once, and with <handlers> 3 a third keeps a small working set of them. The handlers are
 * called in turn through a table, so that the compiler cannot merge them into the loop.
 *
 *     heap-profile-server <requests> <handlers> <command> <heap file> <folded file> [<text>]
 *
 * runs `<command>` on the CLI (pools profile on ...), serves <requests> requests, then writes
 * `pools profile heap` (through the CLI), pool_profile_dump(out, "folded") and, when asked,
 * pool_profile_dump(out, "bybytes") to the files, and prints "leaked <n> kept <n>". Exits 0, or
 * 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pool/pool.h>

#define LEAK_EVERY 4                    /* handle_leaky keeps one request in LEAK_EVERY */
#define WORKING_SET 64                  /* handle_busy keeps the last WORKING_SET requests */

struct request {
	unsigned long id;
	char line[200];
};

static struct pool_head *requests;
static unsigned long served, leaked;
static struct request *working[WORKING_SET];

/* The one allocator of the handlers: a request object, initialised. */
static struct request *obj_alloc(unsigned long id)
{
	struct request *r = pool_alloc(requests);

	if (!r) {
		fputs("heap-profile-server: out of request objects\n", stderr);
		exit(1);
	}
	r->id = id;
	r->line[0] = 0;
	served++;
	return r;
}

/* Forgets one request in LEAK_EVERY: the leak. */
static void handle_leaky(unsigned long id)
{
	struct request *r = obj_alloc(id);

	snprintf(r->line, sizeof(r->line), "GET /leaky/%lu", id);
	if (id % LEAK_EVERY == 0) {
		leaked++;
		return;
	}
	pool_free(requests, r);
}

/* Keeps the last WORKING_SET requests (a cache), frees the one it replaces. */
static void handle_busy(unsigned long id)
{
	struct request *r = obj_alloc(id);
	struct request **slot = &working[id % WORKING_SET];

	snprintf(r->line, sizeof(r->line), "GET /busy/%lu", id);
	if (*slot)
		pool_free(requests, *slot);
	*slot = r;
}

/* Frees every request when it is answered. */
static void handle_tidy(unsigned long id)
{
	struct request *r = obj_alloc(id);

	snprintf(r->line, sizeof(r->line), "GET /tidy/%lu", id);
	pool_free(requests, r);
}

static void (*const handlers[])(unsigned long) = { handle_leaky, handle_tidy, handle_busy };

static int write_file(const char *path, const char *what, int cli)
{
	FILE *f = fopen(path, "w");
	int r;

	if (!f) {
		perror(path);
		return -1;
	}
	r = cli ? pool_cli_exec(what, f) : pool_profile_dump(f, what);
	if (fclose(f) != 0 || r != 0) {
		fprintf(stderr, "heap-profile-server: '%s' into %s failed\n", what, path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	void (*volatile const *table)(unsigned long) = handlers;
	unsigned long n, i, k;

	if (argc < 6 || argc > 7 || (strcmp(argv[2], "2") && strcmp(argv[2], "3"))) {
		fputs("usage: heap-profile-server <requests> 2|3 <command> <heap file> <folded file> "
		      "[<text file>]\n", stderr);
		return 1;
	}
	n = strtoul(argv[1], NULL, 10);
	k = strtoul(argv[2], NULL, 10);
	requests = pool_create("request", sizeof(struct request), 0);
	if (!requests || pool_cli_exec(argv[3], stderr) != 0)
		return 1;
	for (i = 0; i < n; i++)
		table[i % k](i);
	if (write_file(argv[4], "pools profile heap", 1) < 0 ||
	    write_file(argv[5], "folded", 0) < 0 ||
	    (argc == 7 && write_file(argv[6], "bybytes", 0) < 0))
		return 1;
	printf("served %lu leaked %lu kept %d\n", served, leaked, k == 3 ? WORKING_SET : 0);
	return 0;
}
