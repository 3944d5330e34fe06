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
 * Two shapes run on two threads, on a pool of 256-byte messages through msg_alloc():
 *   pair    handle_keep keeps one message in LEAK_EVERY (20,000 of them, 5 MB) on one thread,
 *           handle_temps allocates 16 at once and frees them all on the other;
 *   random  handle_keep keeps 100,000 the same way; the other thread's handle_random keeps a
 *           working set of RANDOM_SET messages, each replaced at random (random lifetimes),
 *           between rounds of handle_temps.
 *
 *     heap-profile-server <requests> 2|3|pair|random <command> <heap file> <folded file> [<text>]
 *
 * runs `<command>` on the CLI (pools profile on ...), serves <requests> requests (2 and 3; the
 * shapes have their own counts), then writes `pools profile heap` (through the CLI),
 * pool_profile_dump(out, "folded") and, when asked, pool_profile_dump(out, "bybytes") to the
 * files, and prints "served <n> leaked <n> kept <n>" (2 and 3) or "leaked <n> bytes <n> set
 * <n>" (the shapes: the leak's objects and bytes, the working set's objects). Exits 0, or 1
 * with a message.
 */
#include <pthread.h>
#include <stdint.h>
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

/* ------------------------------------------------------------------------------------------ */
/* The two-thread shapes                                                                      */
/* ------------------------------------------------------------------------------------------ */

#define TEMPS       16                  /* handle_temps' messages at once */
#define RANDOM_SET  2000                /* handle_random's working set */

struct message {
	char data[256];
};

static struct pool_head *messages;
static struct message **kept;
static unsigned long nkept, keep_rounds, temps_rounds;
static struct message *set[RANDOM_SET];
static int random_shape;

/* The one allocator of the two threads' handlers. */
static struct message *msg_alloc(void)
{
	struct message *m = pool_alloc(messages);

	if (!m) {
		fputs("heap-profile-server: out of messages\n", stderr);
		exit(1);
	}
	m->data[0] = 1;
	return m;
}

/* Keeps one message in LEAK_EVERY: the leak. */
static __attribute__((noinline)) void handle_keep(unsigned long i)
{
	struct message *m = msg_alloc();

	if (i % LEAK_EVERY == 0) {
		kept[nkept++] = m;
		return;
	}
	pool_free(messages, m);
}

/* TEMPS temporaries at once, all freed. */
static __attribute__((noinline)) void handle_temps(void)
{
	struct message *t[TEMPS];
	int k;

	for (k = 0; k < TEMPS; k++)
		t[k] = msg_alloc();
	for (k = 0; k < TEMPS; k++)
		pool_free(messages, t[k]);
}

/* Replaces a message of the working set picked at random: lifetimes are random. */
static __attribute__((noinline)) void handle_random(uint64_t *rng)
{
	unsigned int k;

	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	k = (unsigned int)(*rng % RANDOM_SET);
	if (set[k])
		pool_free(messages, set[k]);
	set[k] = msg_alloc();
}

static void *keeper(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < keep_rounds; i++)
		handle_keep(i);
	return NULL;
}

static void *other(void *arg)
{
	uint64_t rng = 88172645463325252ull;
	unsigned long i;
	int k;

	(void)arg;
	for (i = 0; i < temps_rounds; i++) {
		handle_temps();
		for (k = 0; random_shape && k < TEMPS; k++)
			handle_random(&rng);
	}
	return NULL;
}

/* The shape `random` or not (pair), on two threads; 0, or 1. */
static int run_shape(int random)
{
	pthread_t a, b;

	random_shape = random;
	keep_rounds = LEAK_EVERY * (random ? 100000ul : 20000ul);
	temps_rounds = random ? 25000 : 20000;
	kept = calloc(keep_rounds / LEAK_EVERY + 1, sizeof(*kept));
	messages = pool_create("message", sizeof(struct message), 0);
	if (!kept || !messages || pthread_create(&a, NULL, keeper, NULL) != 0 ||
	    pthread_create(&b, NULL, other, NULL) != 0) {
		fputs("heap-profile-server: cannot start the shape\n", stderr);
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}

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
	unsigned long n, i, k = 0;
	int shape = argc >= 3 && (!strcmp(argv[2], "pair") || !strcmp(argv[2], "random"));

	if (argc < 6 || argc > 7 || (strcmp(argv[2], "2") && strcmp(argv[2], "3") && !shape)) {
		fputs("usage: heap-profile-server <requests> 2|3|pair|random <command> <heap file> "
		      "<folded file> [<text file>]\n", stderr);
		return 1;
	}
	n = strtoul(argv[1], NULL, 10);
	requests = pool_create("request", sizeof(struct request), 0);
	if (!requests || pool_cli_exec(argv[3], stderr) != 0)
		return 1;
	if (shape) {
		if (run_shape(!strcmp(argv[2], "random")))
			return 1;
	} else {
		k = strtoul(argv[2], NULL, 10);
		for (i = 0; i < n; i++)
			table[i % k](i);
	}
	if (write_file(argv[4], "pools profile heap", 1) < 0 ||
	    write_file(argv[5], "folded", 0) < 0 ||
	    (argc == 7 && write_file(argv[6], "bybytes", 0) < 0))
		return 1;
	if (shape)
		printf("leaked %lu bytes %lu set %d\n", nkept, nkept * sizeof(struct message),
		       random_shape ? RANDOM_SET : 0);
	else
		printf("served %lu leaked %lu kept %d\n", served, leaked, k == 3 ? WORKING_SET : 0);
	return 0;
}
