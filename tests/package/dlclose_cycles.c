/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A plugin host's life (issue 21, defect 5): libpool is dlopen()ed, used and dlclose()d again
 * and again, by a program that is not linked with it. Each cycle creates a pool, allocates and
 * frees in this thread and in a short-lived one, and destroys the pool. In the first cycle a
 * long-lived thread uses the pool too and then outlives the library, idle, until the end.
 *
 * Checks: each cycle's allocations start the library's releaser thread ("pool-releaser"), and
 * its dlclose() stops and joins it (no such thread is left, and none runs code that is gone);
 * the host can still create pthread keys after all the cycles (each cycle used to leak
 * the library's thread-exit key: 1024 of them exhaust a process); the resident memory grows by
 * less than 2 KiB a cycle between the 100th cycle and the last (each cycle used to leak the
 * loading thread's caches, about 9 KiB); and the long-lived thread exits without a crash (it
 * used to run the destructor of a library that was gone).
 *
 * With a socket directory (issue 29, item 3), each cycle also starts the CLI server
 * (pool_cli_listen()) on <dir>/pools.sock, has a client's `pools show` answered, connects a
 * second client that stays idle, and unloads the library with the server running: dlclose()
 * must not crash (it did: SIGSEGV, 3 runs of 3), the socket file must be gone, the idle client
 * must see the connection closed, and the server's thread must be gone (the count of the
 * process's threads back to what it was before pool_cli_listen()).
 *
 * Usage: dlclose_cycles <libpool.so> <cycles> [rss] [socket directory]
 * rss: 1 (the default) checks the growth of the resident memory, and then <cycles> must be over
 * 100; 0 only reports it (the sanitizers' runtimes keep memory of their own for every library
 * loaded).
 * Exit status: 0 on success; 1 on a failure (the message says which); 3 when dlopen() fails
 * (its message is printed on the first line, prefixed "dlopen: "). Built and run by
 * tests/package/test_dlopen.sh.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <pool/pool-t.h>

#define RSS_AFTER     100      /* the cycle whose resident memory is the reference */
#define RSS_PER_CYCLE 2048     /* bytes of growth a cycle may cost after that, at most */

static struct {
	struct pool_head *(*create)(const char *name, size_t size, unsigned int flags);
	int (*destroy)(struct pool_head *pool);
	void *(*alloc_slow)(struct pool_head *pool, unsigned int flags);
	void (*free_slow)(struct pool_head *pool, void *ptr);
	void (*thread_flush)(void);
	int (*cli_listen)(const char *unix_path);
} fn;

static struct pool_head *pool;

/* The long-lived thread: uses the pool in the first cycle, then waits for the end. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int used, done;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static void use_pool(void)
{
	void *o[64];
	int i;

	for (i = 0; i < 64; i++)
		if (!(o[i] = fn.alloc_slow(pool, 0))) {
			fprintf(stderr, "FAIL: allocation failed\n");
			exit(1);
		}
	for (i = 0; i < 64; i++)
		fn.free_slow(pool, o[i]);
}

static pid_t short_tid;         /* the short-lived thread's kernel id, for its /proc entry */

static void *short_lived(void *arg)
{
	(void)arg;
	short_tid = gettid();
	use_pool();
	return NULL;
}

/*
 * A joined thread may stay listed in /proc/self/task a moment while the kernel finishes its
 * exit: wait (at most a second) until the short-lived thread is gone, so that a count of the
 * process's threads does not include it.
 */
static void short_lived_gone(void)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%ld", (long)short_tid);
	for (n = 0; access(path, F_OK) == 0 && n < 1000; n++)
		usleep(1000);
}

static void *long_lived(void *arg)
{
	(void)arg;
	use_pool();
	/* its objects go back, and it keeps its (now empty) caches past the library's end */
	fn.thread_flush();
	pthread_mutex_lock(&lock);
	used = 1;
	pthread_cond_broadcast(&cond);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Threads of this process named `comm`, from /proc/self/task. */
static int threads_named(const char *comm)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL) {
		char path[300], buf[32];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			n += !strcmp(buf, comm);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* The threads of this process (entries of /proc/self/task), or -1. */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A client of the socket at `path`; exits on a failure. */
static int client(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "FAIL: connect %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* Wait up to 10 s for `fd` to be readable; what one read() then returns (0: end of file). */
static ssize_t read_within(int fd, char *buf, size_t size)
{
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, 10000) != 1)
		return -2;
	return read(fd, buf, size);
}

/* Send `cmd` on `fd` and return its answer (up to the empty line that ends it) in buf. */
static void ask(int fd, const char *cmd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		exit(1);
	while (len < size - 1 && !memmem(buf, len, "\n\n", 2) &&
	       (n = read_within(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
}

/*
 * The server of this cycle: a command answered, and a client served once then left connected
 * and idle (its fd is returned).
 */
static int serve(const char *path, long cycle)
{
	char buf[4096];
	int fd, idle;

	if (fn.cli_listen(path) != 0) {
		fprintf(stderr, "FAIL: cycle %ld: pool_cli_listen(%s): %s\n", cycle, path,
		        strerror(errno));
		exit(1);
	}
	fd = client(path);
	ask(fd, "pools show match cycle\n", buf, sizeof(buf));
	if (!strstr(buf, "  - Pool cycle (64 bytes/16) : ")) {
		fprintf(stderr, "FAIL: cycle %ld: `pools show` answered '%s'\n", cycle, buf);
		exit(1);
	}
	close(fd);
	idle = client(path);
	ask(idle, "help\n", buf, sizeof(buf));
	if (strncmp(buf, "Commands at level operator", 26) != 0) {
		fprintf(stderr, "FAIL: cycle %ld: `help` answered '%s'\n", cycle, buf);
		exit(1);
	}
	return idle;
}

/* After dlclose(): no socket file, the idle client closed, no thread of the server left. */
static void served(const char *path, int idle, int threads, long cycle)
{
	struct stat st;
	char c;
	ssize_t n;
	int now;

	if (lstat(path, &st) == 0 || errno != ENOENT) {
		fprintf(stderr, "FAIL: cycle %ld: the socket file %s is left after dlclose()\n",
		        cycle, path);
		exit(1);
	}
	n = read_within(idle, &c, 1);
	if (n != 0) {
		fprintf(stderr, "FAIL: cycle %ld: the idle client's connection was not closed "
		        "(read: %zd)\n", cycle, n);
		exit(1);
	}
	close(idle);
	/* a joined thread may stay listed a moment while the kernel finishes its exit */
	for (n = 0; (now = thread_count()) != threads && n < 1000; n++)
		usleep(1000);
	if (now != threads) {
		fprintf(stderr, "FAIL: cycle %ld: %d threads after dlclose(), %d before the server\n",
		        cycle, now, threads);
		exit(1);
	}
}

/* VmRSS of this process, in KiB (0 if unknown). */
static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	pthread_t keeper, t;
	pthread_key_t key;
	long cycles, i, rss_ref = 0, rss_end;
	int check_rss, idle = -1, threads = 0;
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)] = "";

	if (argc < 3 || argc > 5 || (cycles = strtol(argv[2], NULL, 10)) < 1) {
		fprintf(stderr, "usage: %s <libpool.so> <cycles> [rss 0|1] [socket directory]\n",
		        argv[0]);
		return 1;
	}
	check_rss = argc < 4 || strcmp(argv[3], "0") != 0;
	if (check_rss && cycles <= RSS_AFTER) {
		fprintf(stderr, "%s: checking the resident memory takes over %d cycles\n", argv[0],
		        RSS_AFTER);
		return 1;
	}
	if (argc == 5 && snprintf(sock, sizeof(sock), "%s/pools.sock", argv[4]) >= (int)sizeof(sock))
		return 1;
	for (i = 0; i < cycles; i++) {
		void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

		if (!lib) {
			printf("dlopen: %s\n", dlerror());
			return 3;
		}
		fn.create = sym(lib, "pool_create");
		fn.destroy = sym(lib, "pool_destroy");
		fn.alloc_slow = sym(lib, "pool__alloc_slow");
		fn.free_slow = sym(lib, "pool__free_slow");
		fn.thread_flush = sym(lib, "pool_thread_flush");
		fn.cli_listen = sym(lib, "pool_cli_listen");
		pool = fn.create("cycle", 64, 0);
		if (!pool) {
			fprintf(stderr, "FAIL: cycle %ld: pool_create() failed\n", i);
			return 1;
		}
		use_pool();
		if (pthread_create(&t, NULL, short_lived, NULL) != 0 || pthread_join(t, NULL) != 0) {
			fprintf(stderr, "FAIL: cycle %ld: no thread\n", i);
			return 1;
		}
		short_lived_gone();
		if (i == 0) {
			if (pthread_create(&keeper, NULL, long_lived, NULL) != 0)
				return 1;
			pthread_mutex_lock(&lock);
			while (!used)
				pthread_cond_wait(&cond, &lock);
			pthread_mutex_unlock(&lock);
		}
		/* the library's releaser started with the first allocation (checked now and then) */
		if (i % 100 == 0 && threads_named("pool-releaser") != 1 &&
		    !getenv("POOL_RELEASE")) {
			fprintf(stderr, "FAIL: cycle %ld: %d releaser threads while loaded\n", i,
			        threads_named("pool-releaser"));
			return 1;
		}
		if (*sock) {
			/*
			 * the threads before the server's (a sanitizer may have one of its own), but
			 * the releaser, which dlclose() joins too
			 */
			threads = thread_count() - threads_named("pool-releaser");
			idle = serve(sock, i);
		}
		fn.thread_flush();
		if (fn.destroy(pool) != 0) {
			fprintf(stderr, "FAIL: cycle %ld: pool_destroy() failed\n", i);
			return 1;
		}
		/* with the server running: the library's destructor must stop it */
		if (dlclose(lib) != 0) {
			fprintf(stderr, "FAIL: cycle %ld: dlclose(): %s\n", i, dlerror());
			return 1;
		}
		if (i % 100 == 0 && threads_named("pool-releaser") != 0) {
			fprintf(stderr, "FAIL: cycle %ld: the releaser thread outlived dlclose()\n", i);
			return 1;
		}
		if (*sock)
			served(sock, idle, threads, i);
		if (i == RSS_AFTER)
			rss_ref = rss_kb();
	}
	rss_end = rss_kb();
	if (pthread_key_create(&key, NULL) != 0) {
		fprintf(stderr, "FAIL: no pthread key left after %ld cycles\n", cycles);
		return 1;
	}
	pthread_key_delete(key);
	printf("dlclose_cycles: %ld cycles%s; resident memory ", cycles, *sock ? ", each "
	       "unloading the library with its CLI server running (no socket, no thread left)" : "");
	if (cycles > RSS_AFTER)
		printf("%ld KiB after cycle %d, ", rss_ref, RSS_AFTER);
	printf("%ld KiB after the last\n", rss_end);
	if (check_rss && rss_ref && (rss_end - rss_ref) * 1024 > (cycles - RSS_AFTER) * RSS_PER_CYCLE) {
		fprintf(stderr, "FAIL: %ld KiB more resident memory over %ld cycles\n",
		        rss_end - rss_ref, cycles - RSS_AFTER - 1);
		return 1;
	}
	/* the long-lived thread outlived the library: it exits now, and must not crash */
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	if (pthread_join(keeper, NULL) != 0)
		return 1;
	printf("dlclose_cycles: the thread that outlived the library exited\n");
	return 0;
}
