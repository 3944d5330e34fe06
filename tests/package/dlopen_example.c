/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The README's example, run in a program that is not linked with libpool: it dlopen()s the
 * library given as argv[1] and reaches every function through dlsym(). Allocation goes through
 * the exported functions the inline pool_alloc()/pool_free() call (pool__alloc_slow(),
 * pool__free_slow()) and through the bulk calls, from two threads, as the README's example does
 * through the inline ones. Then the library is closed and loaded again, and works again.
 * Built and run by tests/package/test_dlopen.sh.
 *
 * Exit status: 0 on success; 1 on a failure (the message says which); 3 when dlopen() itself
 * fails (its message is printed on the first line, prefixed "dlopen: ").
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pool/pool-t.h>

#define PAIRS 200000

struct conn { int fd; char peer[64]; };

/* The functions the example needs, by name. */
static struct {
	const char *(*version)(void);
	struct pool_head *(*create)(const char *name, size_t size, unsigned int flags);
	int (*destroy)(struct pool_head *pool);
	int (*get_stats)(const struct pool_head *pool, struct pool_stats *st, size_t size);
	void *(*alloc_slow)(struct pool_head *pool, unsigned int flags);
	void (*free_slow)(struct pool_head *pool, void *ptr);
	size_t (*alloc_bulk)(struct pool_head *pool, void **objs, size_t n);
	void (*free_bulk)(struct pool_head *pool, void **objs, size_t n);
	void (*thread_flush)(void);
} fn;

static struct pool_head *conn_pool;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static void *worker(void *arg)
{
	void *objs[16];
	size_t n, j;

	for (int i = 0; i < PAIRS; i++) {
		struct conn *c = fn.alloc_slow(conn_pool, 0);

		if (!c)
			return "allocation failed";
		c->fd = i;
		fn.free_slow(conn_pool, c);
	}
	for (int i = 0; i < 1000; i++) {
		n = fn.alloc_bulk(conn_pool, objs, 16);
		if (n != 16)
			return "bulk allocation failed";
		for (j = 0; j < n; j++)
			((struct conn *)objs[j])->fd = (int)j;
		fn.free_bulk(conn_pool, objs, n);
	}
	fn.thread_flush();
	return arg;
}

static int run(const char *path, int round)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct pool_stats st;
	pthread_t t[2];
	void *res;

	if (!lib) {
		printf("dlopen: %s\n", dlerror());
		return 3;
	}
	*(void **)&fn.version = sym(lib, "pool_version");
	*(void **)&fn.create = sym(lib, "pool_create");
	*(void **)&fn.destroy = sym(lib, "pool_destroy");
	*(void **)&fn.get_stats = sym(lib, "pool_get_stats");
	*(void **)&fn.alloc_slow = sym(lib, "pool__alloc_slow");
	*(void **)&fn.free_slow = sym(lib, "pool__free_slow");
	*(void **)&fn.alloc_bulk = sym(lib, "pool_alloc_bulk");
	*(void **)&fn.free_bulk = sym(lib, "pool_free_bulk");
	*(void **)&fn.thread_flush = sym(lib, "pool_thread_flush");

	if (strcmp(fn.version(), POOL_VERSION_STRING) != 0) {
		printf("pool_version() is %s, the headers say %s\n", fn.version(), POOL_VERSION_STRING);
		return 1;
	}
	conn_pool = fn.create("conn", sizeof(struct conn), POOL_F_SHARED);
	if (!conn_pool) {
		perror("pool_create");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &res);
		if (res) {
			printf("thread %d: %s\n", i, (const char *)res);
			return 1;
		}
	}
	if (fn.get_stats(conn_pool, &st, sizeof(st)) != 0) {
		perror("pool_get_stats");
		return 1;
	}
	printf("round %d: libpool %s loaded with dlopen(): allocated %zu, used %zu\n", round,
	       fn.version(), st.allocated, st.used);
	if (st.used != 0 || st.allocated == 0) {
		printf("expected used 0 and some objects allocated\n");
		return 1;
	}
	if (fn.destroy(conn_pool) != 0) {
		perror("pool_destroy");
		return 1;
	}
	if (dlclose(lib) != 0) {
		printf("dlclose: %s\n", dlerror());
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s /path/to/libpool.so.2\n", argv[0]);
		return 2;
	}
	rc = run(argv[1], 1);
	if (rc == 0)
		rc = run(argv[1], 2);
	return rc;
}
