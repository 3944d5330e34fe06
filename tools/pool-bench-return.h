/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-return.h - the return scenario of `pool-bench --return-curve`: the memory a burst
 * leaves, against time. `threads` threads each take `count` objects of `size` bytes at once,
 * touching every byte, and free them all; then each keeps serving a light load, one allocation
 * and free (a request's buffer) every RET_PAIR_US, for `seconds`. The main thread prints, every
 * RET_SAMPLE_MS from the end of the frees, "curve t_ms=<ms> rss_kb=<VmRSS> held_kb=<the bytes
 * the backend holds for its objects, -1 when it cannot tell>", and "peak rss_kb=.. held_kb=.."
 * before the frees. With `keep`, every keep-th object of each burst stays live (written, and
 * checked and freed once the curve is done): survivors that keep the backend's slabs, pages or
 * runs in use. Then, with `idle`, the threads stop and the child stays idle that long:
 * "idle s=<seconds> cpu_ns=<CPU time of libpool's releaser thread meanwhile> wakeups=<its
 * voluntary context switches>" (-1 without such a thread). No unit is timed.
 */
#ifndef POOL_TOOLS_POOL_BENCH_RETURN_H
#define POOL_TOOLS_POOL_BENCH_RETURN_H

#include <dirent.h>
#include <sys/mman.h>

#include "pool-bench-backend.h"

#define RET_PAIR_US    1000u
#define RET_SAMPLE_MS  100u

struct ret_thread {
	size_t size;
	uint64_t burst;
	unsigned int keep;
	void **objs;
	void **kept;                /* the survivors (keep), burst / keep + 1 slots */
	uint64_t nkept;
	pthread_barrier_t *bar;
	atomic_int *stop;
	uint64_t pairs;
};

static void *ret_thread_main(void *arg)
{
	struct ret_thread *t = arg;
	struct bk_thread bt = { NULL };
	uint64_t i;

	bk_thread_start(&bt);
	for (i = 0; i < t->burst; i++) {
		t->objs[i] = bk_alloc(&bt);
		if (!t->objs[i]) {
			bench_fail("return: allocation %llu of the burst failed", (unsigned long long)i);
			break;
		}
		memset(t->objs[i], 0x5a, t->size);
	}
	pthread_barrier_wait(t->bar);          /* the peak */
	for (i = 0; i < t->burst && t->objs[i]; i++) {
		if (t->keep && i % t->keep == 0)
			t->kept[t->nkept++] = t->objs[i];
		else
			bk_free(&bt, t->objs[i]);
	}
	/* the burst's own bookkeeping goes too (unmapped): what stays resident is the backend's */
	munmap(t->objs, t->burst * sizeof(void *));
	t->objs = NULL;
	pthread_barrier_wait(t->bar);          /* freed */
	while (!atomic_load_explicit(t->stop, memory_order_relaxed)) {
		void *p = bk_alloc(&bt);

		if (!p) {
			bench_fail("return: an allocation of the light load failed");
			break;
		}
		memset(p, 1, t->size < 256 ? t->size : 256);
		bk_free(&bt, p);
		t->pairs++;
		usleep(RET_PAIR_US);
	}
	for (i = 0; i < t->nkept; i++) {
		const unsigned char *o = t->kept[i];
		size_t j;

		for (j = 0; j < t->size && o[j] == 0x5a; j++)
			;
		if (j < t->size) {
			bench_fail("return: byte %zu of a survivor changed (0x%02x)", j, o[j]);
			break;
		}
		bk_free(&bt, t->kept[i]);
	}
	bk_thread_stop(&bt);
	return NULL;
}

/* CPU time (ns, from its schedstat) and voluntary switches of the thread named `comm`: 0, or -1. */
static int bench_thread_cpu(const char *comm, long long *cpu_ns, long long *wakeups)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = -1;

	*cpu_ns = *wakeups = -1;
	while (d && found < 0 && (e = readdir(d)) != NULL) {
		char path[300], buf[256];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		buf[0] = 0;
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
		if (strcmp(buf, comm) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lld", cpu_ns) == 1)
			found = 0;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "voluntary_ctxt_switches:", 24))
				*wakeups = strtoll(buf + 24, NULL, 10);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

static int bench_run_return_once(const struct bench_params *bp, uint64_t count,
                                 struct bench_result *res)
{
	unsigned int n = bp->threads, i;
	struct ret_thread *t = calloc(n, sizeof(*t));
	pthread_t *tid = calloc(n, sizeof(*tid));
	pthread_barrier_t bar;
	atomic_int stop = 0;
	double t0, now;
	long long held, cpu0, cpu1, w0, w1;

	if (!t || !tid)
		return -1;
	pthread_barrier_init(&bar, NULL, n + 1);
	for (i = 0; i < n; i++) {
		t[i] = (struct ret_thread){ .size = bp->size, .burst = count, .keep = bp->keep,
		                            .bar = &bar, .stop = &stop };
		/* mapped, not malloc()ed: no backend keeps its pages once they are unmapped */
		t[i].objs = mmap(NULL, count * sizeof(void *), PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (bp->keep)
			t[i].kept = mmap(NULL, (count / bp->keep + 1) * sizeof(void *),
			                 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t[i].objs == MAP_FAILED || t[i].kept == MAP_FAILED ||
		    pthread_create(&tid[i], NULL, ret_thread_main, &t[i]) != 0) {
			fprintf(stderr, "pool-bench: return: cannot start thread %u\n", i);
			_exit(BENCH_EXIT_FAILED);
		}
	}
	pthread_barrier_wait(&bar);
	held = bk_held_bytes();
	printf("peak rss_kb=%ld held_kb=%lld\n", bench_status_kb("VmRSS"), held < 0 ? -1 : held >> 10);
	pthread_barrier_wait(&bar);
	t0 = bench_now_ns();
	for (now = t0; now - t0 < bp->seconds * 1e9; now = bench_now_ns()) {
		held = bk_held_bytes();
		printf("curve t_ms=%.0f rss_kb=%ld held_kb=%lld\n", (now - t0) / 1e6,
		       bench_status_kb("VmRSS"), held < 0 ? -1 : held >> 10);
		fflush(stdout);
		usleep(RET_SAMPLE_MS * 1000u);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		res->units += t[i].pairs;
	}
	if (bp->idle > 0) {
		bench_thread_cpu("pool-releaser", &cpu0, &w0);
		usleep((useconds_t)(bp->idle * 1e6));
		bench_thread_cpu("pool-releaser", &cpu1, &w1);
		printf("idle s=%.1f cpu_ns=%lld wakeups=%lld\n", bp->idle,
		       cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1, w0 >= 0 && w1 >= 0 ? w1 - w0 : -1);
	}
	res->elapsed_ns = bench_now_ns() - t0;
	res->ns = 0;
	for (i = 0; i < n; i++)
		if (t[i].kept)
			munmap(t[i].kept, (count / bp->keep + 1) * sizeof(void *));
	pthread_barrier_destroy(&bar);
	free(t);
	free(tid);
	return 0;
}

#endif /* POOL_TOOLS_POOL_BENCH_RETURN_H */
