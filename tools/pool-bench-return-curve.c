/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-return-curve.c - `pool-bench --return-curve FILE.png`: the memory each backend
 * holds, against time, after a burst freed at once while a light load goes on (the child's side:
 * pool-bench-return.h), and libpool's releaser thread's CPU time once idle. Prints a table (the
 * RSS at one and two of libpool's demand windows, at the end, and when it came back) and plots
 * the curves with gnuplot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pool/pool.h>

#include "pool-bench-parent.h"
#include "tool.h"

#define RET_MAX_POINTS 8192u

struct ret_curve {
	unsigned int n;
	double t[RET_MAX_POINTS], rss[RET_MAX_POINTS], held[RET_MAX_POINTS];   /* s, MiB, MiB */
	double base, peak, peak_held;       /* MiB; held -1 when the backend cannot tell */
	double idle_s, idle_cpu_ns, idle_wakeups;
	char why[300];                      /* empty: it ran */
};

static struct ret_curve ret_curves[BK_COUNT];

/* The first time the curve `v` fell to `level` and stayed there to the end, or -1. */
static double ret_time_below(const struct ret_curve *c, const double *v, double level)
{
	unsigned int i = c->n;

	while (i > 0 && v[i - 1] <= level)
		i--;
	return i < c->n ? c->t[i] : -1;
}

static void ret_run(const struct bench_opts *o, enum backend b, size_t size, unsigned int threads)
{
	struct ret_curve *c = &ret_curves[b];
	static char out[1 << 20];
	char prog[4200], sz[32], burst[32], th[32], secs[48], idle[48], keep[32], *line, *next;
	char *argv[12];
	int argc = 0, rc;

	child_path(b, prog, sizeof(prog));
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(burst, sizeof(burst), "%lu", o->return_burst);
	snprintf(th, sizeof(th), "%u", threads);
	snprintf(secs, sizeof(secs), "seconds=%g", o->return_seconds);
	/* libpool stays idle as long again: the releaser's cost with nothing to give back */
	snprintf(idle, sizeof(idle), "idle=%g", b == BK_LIBPOOL ? o->return_seconds : 0.0);
	argv[argc++] = prog;
	argv[argc++] = "--child";
	argv[argc++] = (char *)bk_names[b];
	argv[argc++] = "return";
	argv[argc++] = sz;
	argv[argc++] = burst;
	argv[argc++] = th;
	argv[argc++] = secs;
	argv[argc++] = idle;
	if (o->return_keep) {
		snprintf(keep, sizeof(keep), "keep=%lu", o->return_keep);
		argv[argc++] = keep;
	}
	argv[argc] = NULL;
	printf("return curve: %s, %u threads x %lu objects of %zu bytes, then %g s of pairs...\n",
	       bk_names[b], threads, o->return_burst, size, o->return_seconds);
	fflush(stdout);
	rc = run_child(argv, backends[b].preload, o->verbose, out, sizeof(out));
	memset(c, 0, sizeof(*c));
	c->peak_held = c->idle_s = -1;
	for (line = out; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "curve ", 6) && c->n < RET_MAX_POINTS) {
			c->t[c->n] = field(line, "t_ms", 0) / 1e3;
			c->rss[c->n] = field(line, "rss_kb", 0) / 1024;
			c->held[c->n] = field(line, "held_kb", -1) < 0 ? -1 : field(line, "held_kb", 0) / 1024;
			c->n++;
		} else if (!strncmp(line, "peak ", 5)) {
			c->peak = field(line, "rss_kb", 0) / 1024;
			c->peak_held = field(line, "held_kb", -1) < 0 ? -1 : field(line, "held_kb", 0) / 1024;
		} else if (!strncmp(line, "idle ", 5)) {
			c->idle_s = field(line, "s", -1);
			c->idle_cpu_ns = field(line, "cpu_ns", -1);
			c->idle_wakeups = field(line, "wakeups", -1);
		} else if (!strncmp(line, "ok ", 3)) {
			c->base = field(line, "base_kb", 0) / 1024;
		} else if (!strncmp(line, "unavailable ", 12) || !strncmp(line, "error ", 6)) {
			snprintf(c->why, sizeof(c->why), "%.250s", line);
		}
	}
	if (rc != 0 && !c->why[0])
		snprintf(c->why, sizeof(c->why), "exit status %d", rc);
	if (!c->why[0] && !c->n)
		snprintf(c->why, sizeof(c->why), "no curve");
	if (c->why[0])
		printf("  %s: %s\n", bk_names[b], c->why);
}

static int ret_plot(const struct bench_opts *o, size_t size, unsigned int threads, double win_s)
{
	unsigned int b, i, first = 1;
	FILE *gp;

	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		tool_error("cannot run gnuplot: %s", strerror(errno));
		return -1;
	}
	for (b = 0; b < BK_COUNT; b++) {
		const struct ret_curve *c = &ret_curves[b];

		if (!(o->backends & (1u << b)) || c->why[0])
			continue;
		fprintf(gp, "$%s << EOD\n", bk_names[b]);
		for (i = 0; i < c->n; i++)
			fprintf(gp, "%.2f %.2f %.2f\n", c->t[i], c->rss[i], c->held[i]);
		fputs("EOD\n", gp);
	}
	fprintf(gp, "set terminal pngcairo size 1000,600 font ',10'\nset output '%s'\n"
	        "set title \"Memory after a burst of %u x %lu objects of %zu B, then one alloc+free "
	        "per ms per thread\\n(%s; load average %.2f at the start, %.2f at the end, %ld "
	        "PUs)\"\n"
	        "set xlabel 'seconds after the frees'\nset ylabel 'MiB'\nset key below\n"
	        "set grid\nset yrange [0:*]\nset arrow from %g, graph 0 to %g, graph 1 nohead dt 3\n"
	        "set arrow from %g, graph 0 to %g, graph 1 nohead dt 3\n"
	        "set label 'one demand window' at %g, graph 0.95\nset label 'two' at %g, graph 0.95\n",
	        o->return_curve, threads, o->return_burst, size, mach.cpu, mach.load_start[0],
	        mach.load_end[0], sysconf(_SC_NPROCESSORS_ONLN), win_s, win_s, 2 * win_s, 2 * win_s,
	        win_s + 0.3, 2 * win_s + 0.3);
	fputs("plot ", gp);
	for (b = 0; b < BK_COUNT; b++) {
		if (!(o->backends & (1u << b)) || ret_curves[b].why[0])
			continue;
		fprintf(gp, "%s$%s using 1:2 with lines lw 2 title '%s RSS'", first ? "" : ", ",
		        bk_names[b], bk_names[b]);
		if (ret_curves[b].peak_held >= 0)
			fprintf(gp, ", $%s using 1:3 with lines lw 2 dt 2 title '%s allocated "
			        "(objects x stride)'", bk_names[b], bk_names[b]);
		first = 0;
	}
	fputc('\n', gp);
	if (pclose(gp) != 0) {
		tool_error("gnuplot failed to draw %s", o->return_curve);
		return -1;
	}
	printf("plot: %s\n", o->return_curve);
	return 0;
}

/* The curves, one child per backend, one after the other; then the table and the plot. */
int run_return_curve(struct bench_opts *o)
{
	struct pool_config cfg;
	size_t size = o->sizes_given ? o->sizes[0] : 16384;
	unsigned int threads = o->threads_given ? o->threads : 4, b;
	double win_s, surv;
	int rc = 0;

	pool_get_config(&cfg);
	win_s = cfg.decay_ms / 1e3;
	if (!o->backends_given)
		o->backends = (1u << BK_LIBPOOL) | (1u << BK_JEMALLOC) | (1u << BK_MIMALLOC);
	o->backends &= ~(1u << BK_DPDK);
	read_machine(o);
	for (b = 0; b < BK_COUNT; b++)
		if (o->backends & (1u << b))
			ret_run(o, (enum backend)b, size, threads);
	read_loadavg(mach.load_end);
	printf("\nmemory after the burst (%s, %ld PUs; load average %.2f %.2f %.2f at the start, "
	       "%.2f %.2f %.2f at the end); libpool's demand window %.1f s\n", mach.cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), mach.load_start[0], mach.load_start[1],
	       mach.load_start[2], mach.load_end[0], mach.load_end[1], mach.load_end[2], win_s);
	/* the survivors' MiB: objects 0, keep, 2 keep... of each burst */
	surv = 0;
	if (o->return_keep)
		surv = (double)threads * (double)((o->return_burst - 1) / o->return_keep + 1) *
		       (double)size / (1024.0 * 1024.0);
	printf("%-10s %9s %9s %9s %9s %9s %12s %14s\n", "backend", "base MiB", "peak MiB",
	       "at 1 win", "at 2 win", "at end", "RSS back (s)", "alloc back (s)");
	for (b = 0; b < BK_COUNT; b++) {
		const struct ret_curve *c = &ret_curves[b];
		double at1 = -1, at2 = -1, rss_back, held_back = -1;
		unsigned int i;

		if (!(o->backends & (1u << b)) || c->why[0]) {
			if (o->backends & (1u << b)) {
				printf("%-10s %s\n", bk_names[b], c->why);
				if (b == BK_LIBPOOL || (o->backends_given & (1u << b)))
					rc = TOOL_EXIT_FAILURE;
			}
			continue;
		}
		for (i = 0; i < c->n; i++) {
			if (at1 < 0 && c->t[i] >= win_s)
				at1 = c->rss[i];
			if (at2 < 0 && c->t[i] >= 2 * win_s)
				at2 = c->rss[i];
		}
		/*
		 * "back": within 10% of the freed part of the burst above where it started and the
		 * survivors (--return-keep), to the end of the run
		 */
		rss_back = ret_time_below(c, c->rss, c->base + surv + (c->peak - c->base - surv) / 10);
		if (c->peak_held >= 0)
			held_back = ret_time_below(c, c->held, surv + (c->peak_held - surv) / 10);
		printf("%-10s %9.1f %9.1f %9.1f %9.1f %9.1f %12.1f %14.1f\n", bk_names[b], c->base,
		       c->peak, at1, at2, c->rss[c->n - 1], rss_back, held_back);
	}
	printf("(-1: not within the run; RSS back: within 10%% of the burst above the base, for "
	       "good; alloc back: libpool's allocated objects within 10%% of the burst)\n");
	if (o->return_keep)
		printf("survivors: one object in %lu of each burst stayed live through the curve, "
		       "%.1f MiB in all; \"back\" counts them as the base does\n", o->return_keep,
		       surv);
	if (ret_curves[BK_LIBPOOL].idle_s > 0 && ret_curves[BK_LIBPOOL].idle_cpu_ns >= 0)
		printf("libpool's releaser thread, idle for %.0f s with nothing to give back: %.3f ms "
		       "of CPU (%.5f%% of a core), %.0f wake-ups\n", ret_curves[BK_LIBPOOL].idle_s,
		       ret_curves[BK_LIBPOOL].idle_cpu_ns / 1e6,
		       100.0 * ret_curves[BK_LIBPOOL].idle_cpu_ns / (ret_curves[BK_LIBPOOL].idle_s * 1e9),
		       ret_curves[BK_LIBPOOL].idle_wakeups);
	else if (o->backends & (1u << BK_LIBPOOL))
		printf("libpool's releaser thread: not found (POOL_RELEASE=caller?)\n");
	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		tool_error("--return-curve needs gnuplot (Debian package gnuplot-nox)");
		return TOOL_EXIT_UNAVAILABLE;
	}
	if (ret_plot(o, size, threads, win_s) < 0)
		rc = TOOL_EXIT_FAILURE;
	return rc;
}
