/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-machine.c - the machine a run of pool-bench measured: the CPU model, the kernel,
 * the CPUs this process may use, the date, the load average, and the round trip of a cache line
 * between the first two CPUs allowed (for the scaling rows). The load average is read at the
 * start, between two figures and at the end; a load above 0.5 per PU draws a warning, because
 * other processes then take CPU time from the threads being measured.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "pool-bench-parent.h"

struct machine mach;

/* The 1-, 5- and 15-minute load averages (-1 where unknown). */
void read_loadavg(double load[3])
{
	FILE *f = fopen("/proc/loadavg", "r");

	load[0] = load[1] = load[2] = -1;
	if (!f)
		return;
	if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
		load[0] = load[1] = load[2] = -1;
	fclose(f);
}

/*
 * The round trip of a cache line between two CPUs: two threads, one on each, hand a counter on
 * a line of its own back and forth (each waits for the other's increment), for RTT_MS. What a
 * transfer between cores costs in the period a run saw: on a virtual machine whose vCPUs move,
 * it varies from run to run, and the cross-thread rows of every allocator with it; on a 64-core
 * EPYC it differs between two cores of a complex and two complexes.
 */
#define RTT_MS 100.0

struct rtt_arg {
	_Alignas(64) atomic_ulong ball;
	_Alignas(64) int cpu[2];
	atomic_int stop;
	unsigned long trips;
};

static void *rtt_side(void *p)
{
	struct rtt_arg *a = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu[1], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (;;) {
		unsigned long v = atomic_load_explicit(&a->ball, memory_order_acquire);

		if (atomic_load_explicit(&a->stop, memory_order_relaxed))
			return NULL;
		if (v & 1)
			atomic_store_explicit(&a->ball, v + 1, memory_order_release);
	}
}

void measure_rtt(void)
{
	struct rtt_arg *a = bench_line_alloc(sizeof(*a));
	cpu_set_t set, old;
	pthread_t t;
	double start, now;
	unsigned long v = 0;

	if (!a || mach.cpu_b < 0 || sched_getaffinity(0, sizeof(old), &old) != 0) {
		free(a);
		return;
	}
	memset(a, 0, sizeof(*a));
	a->cpu[0] = mach.cpu_a;
	a->cpu[1] = mach.cpu_b;
	CPU_ZERO(&set);
	CPU_SET(a->cpu[0], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0 ||
	    pthread_create(&t, NULL, rtt_side, a) != 0) {
		sched_setaffinity(0, sizeof(old), &old);
		free(a);
		return;
	}
	start = now = bench_now_ns();
	while (now - start < RTT_MS * 1e6) {
		unsigned int i;

		for (i = 0; i < 1000; i++) {
			atomic_store_explicit(&a->ball, v + 1, memory_order_release);
			while (atomic_load_explicit(&a->ball, memory_order_acquire) != v + 2)
				;
			v += 2;
		}
		a->trips += 1000;
		now = bench_now_ns();
	}
	atomic_store(&a->stop, 1);
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	mach.rtt_ns = (now - start) / (double)a->trips;
	free(a);
}

void read_machine(const struct bench_opts *o)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	struct utsname un;
	cpu_set_t set;
	time_t now = time(NULL);
	struct tm tm;

	snprintf(mach.cpu, sizeof(mach.cpu), "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *p = strchr(line, ':');

			if (p) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = 0;
				snprintf(mach.cpu, sizeof(mach.cpu), "%s", p);
			}
			break;
		}
	}
	if (f)
		fclose(f);
	snprintf(mach.allowed, sizeof(mach.allowed), "?");
	mach.cpu_a = mach.cpu_b = -1;
	mach.rtt_ns = -1;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int c;

		bench_format_cpuset(&set, mach.allowed, sizeof(mach.allowed));
		for (c = 0; c < CPU_SETSIZE && mach.cpu_b < 0; c++) {
			if (!CPU_ISSET(c, &set))
				continue;
			if (mach.cpu_a < 0)
				mach.cpu_a = c;
			else
				mach.cpu_b = c;
		}
	}
	snprintf(mach.kernel, sizeof(mach.kernel), "?");
	if (uname(&un) == 0)
		snprintf(mach.kernel, sizeof(mach.kernel), "%s %s", un.sysname, un.release);
	gmtime_r(&now, &tm);
	strftime(mach.date, sizeof(mach.date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	read_loadavg(mach.load_start);
	mach.load_max = mach.load_start[0];
	mach.load_warning = mach.load_start[0] > 0.5 * o->pus;
}
