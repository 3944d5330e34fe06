/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-report.c - what pool-bench prints and writes once every figure is in: the header
 * (machine, load average, samples), the table of the fixed rows, the server table (time, CPU
 * time and peak RSS against the fastest and the leanest general malloc), the backends skipped,
 * the placement of the threads (--placement), the JSON (--json) and the plot (--plot, drawn by
 * gnuplot).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <pool/pool.h>

#include "pool-bench-parent.h"
#include "tool.h"

/* A figure with 3 significant digits or so. */
static void fmt_num(char *buf, size_t len, double v)
{
	if (v >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (v >= 10)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

/* "median [min-max]" */
static void fmt_spread(char *buf, size_t len, const struct spread *sp)
{
	char a[24], b[24], c[24];

	if (sp->med < 0) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_num(a, sizeof(a), sp->med);
	fmt_num(b, sizeof(b), sp->min);
	fmt_num(c, sizeof(c), sp->max);
	snprintf(buf, len, "%s [%s-%s]", a, b, c);
}

void print_header(const struct bench_opts *o)
{
	printf("pool-bench, libpool %s, on %s (%s), %u PUs, CPUs allowed %s; %s\n", pool_version(),
	       mach.cpu, mach.kernel, o->pus, mach.allowed, mach.date);
	printf("load average at start %.2f %.2f %.2f, at end %.2f %.2f %.2f, at most %.2f in "
	       "between; threads ", mach.load_start[0], mach.load_start[1], mach.load_start[2],
	       mach.load_end[0], mach.load_end[1], mach.load_end[2], mach.load_max);
	if (o->pin[0])
		printf("pinned: worker i on CPU i of %s\n", o->pin);
	else
		printf("not pinned (every thread may run on every allowed CPU)\n");
	if (o->pairs)
		printf("%u samples per figure (server table: %u), each %llu units (--pairs: no "
		       "calibration)\n", o->reps, o->server_reps, (unsigned long long)o->pairs);
	else
		printf("%u samples per figure (server table: %u), each at least %.0f ms of timed "
		       "work; median [min-max] of the samples\n", o->reps, o->server_reps,
		       o->sample_ms);
	if (mach.load_warning)
		printf("WARNING: the load average (up to %.2f) was above 0.5 per PU (%u PUs): other "
		       "processes took CPU time from the measured threads; these figures are noisy\n",
		       mach.load_max, o->pus);
	if (o->quick || o->reps < MIN_REPS || (!o->pairs && o->sample_ms < MIN_SAMPLE_MS) ||
	    o->pairs || o->server_reps < SERVER_REPS)
		printf("NOTE: fewer than %u samples or samples shorter than %.0f ms: figures for "
		       "development, not for publication\n", MIN_REPS, MIN_SAMPLE_MS);
}

void print_table(const struct bench_opts *o)
{
	unsigned int si, b;
	char label[48], txt[128];
	enum row r;
	int any = 0;

	for (r = 0; r < ROW_COUNT && !any; r++)
		any = row_wanted(r, o) && !row_is_server(r);
	if (any) {
		printf("\n%-18s %6s", "scenario", "size");
		for (b = 0; b < BK_COUNT; b++)
			if (o->backends & (1u << b))
				printf(" %22s", backends[b].name);
		printf("\n");
	}
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o) || row_is_server(r))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < row_nsizes(r, o); si++) {
			if (row_scenario(r) == SC_SCALING)
				printf("%-18s %6s", label, "-");
			else
				printf("%-18s %6zu", label, row_size(r, o, si));
			for (b = 0; b < BK_COUNT; b++) {
				if (!(o->backends & (1u << b)))
					continue;
				fmt_spread(txt, sizeof(txt), &cells[r][si][b].ns);
				printf(" %22s", cells[r][si][b].n ? txt : "-");
			}
			printf("\n");
		}
	}
	if (any)
		printf("units: ns per alloc+free pair; pipeline: ns per object passed from one thread "
		       "to the other;\nfalse-sharing: ns per write (2 threads, 16-byte objects; -a64: "
		       "created with 64-byte alignment)\n");
	if (row_wanted(ROW_FSHARE, o)) {
		printf("false-sharing, share of a thread's objects on a cache line the other thread "
		       "writes:");
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *u = &cells[ROW_FSHARE][0][b];
			const struct cell *a = &cells[ROW_FSHARE_ALIGNED][0][b];

			if (!u->n)
				continue;
			printf(" %s %.0f%%", backends[b].name, 100 * u->shared.med);
			if (a->n)
				printf("/%.0f%%", 100 * a->shared.med);
		}
		printf(" (unaligned/a64)\n");
	}
	if (row_wanted(ROW_SCRATCH_2, o) || row_wanted(ROW_SCRATCH_8, o))
		printf("cache-scratch: ns per write (Hoard's shape: each worker frees the object worker "
		       "0 made for it, then allocates, writes %u times and frees its own, again and "
		       "again)\n", SCRATCH_WRITES);
	if (row_wanted(ROW_SCALE_1, o)) {
		printf("server-%u-1cpu, -2cpus: the server row (%u threads, 2k live, short-burst) "
		       "pinned to CPU %d, then to CPUs %d,%d; a cache line's round trip between them: ",
		       SCALE_THREADS, SCALE_THREADS, mach.cpu_a, mach.cpu_a, mach.cpu_b);
		if (mach.rtt_ns > 0)
			printf("%.0f ns\n", mach.rtt_ns);
		else
			printf("not measured\n");
		printf("scaling, time on one CPU / time on two:");
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *one = &cells[ROW_SCALE_1][0][b], *two = &cells[ROW_SCALE_2][0][b];

			if (one->n && two->n && two->ns.med > 0)
				printf(" %s %.2fx", backends[b].name, one->ns.med / two->ns.med);
		}
		printf("\n");
	}
	if (row_wanted(ROW_PIPE_1CPU, o)) {
		printf("pipeline-1cpu, -2cpus: the pipeline (a producer and a consumer) pinned to CPU "
		       "%d, then to CPUs %d,%d;\nscaling, time on one CPU / time on two at 64 B:",
		       mach.cpu_a, mach.cpu_a, mach.cpu_b);
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *one = &cells[ROW_PIPE_1CPU][0][b];
			const struct cell *two = &cells[ROW_PIPE_2CPUS][0][b];

			if (one->n && two->n && two->ns.med > 0)
				printf(" %s %.2fx", backends[b].name, one->ns.med / two->ns.med);
		}
		printf("\n");
	}
}

static void fmt_share(char *buf, size_t len, const struct spread *sp)
{
	if (sp->med < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f%% [%.2f-%.2f]", 100 * sp->med, 100 * sp->min,
		         100 * sp->max);
}

/* Is any row of the server table wanted? */
static int server_table_wanted(const struct bench_opts *o)
{
	return scenario_wanted(SC_SERVER, o) || scenario_wanted(SC_LARSON, o) ||
	       scenario_wanted(SC_XMALLOC, o) || scenario_wanted(SC_MSTRESS, o) ||
	       scenario_wanted(SC_LARSON_MB, o) || scenario_wanted(SC_XMTEST, o);
}

void print_server(const struct bench_opts *o)
{
	enum row r;
	unsigned int b;

	if (!server_table_wanted(o))
		return;
	printf("\nserver table: ns per allocation (each allocation is freed later, by its thread or "
	       "another), wall time and CPU time\n");
	if (scenario_wanted(SC_SERVER, o))
		printf("server-T-L-SHAPE: mimalloc test-stress's shape on %u pools of 8 B..16 KiB "
		       "(pool_zalloc/calloc), T threads, L live\nobjects per thread with random "
		       "lifetimes, 1/4 of them freed by another thread; short: threads created and\n"
		       "joined in rounds of max(%u, 2L) allocations per thread; long: one round of "
		       "threads; burst: each thread frees\nits live set before it exits; handover: it "
		       "leaves it to the next thread of its lineage\n", SRV_CLASSES, SRV_STEPS);
	if (scenario_wanted(SC_LARSON, o))
		printf("larson-T: Larson & Krishnan's server simulation: T lineages of %u objects of "
		       "%u-%u B (6 pools); each thread\nreplaces %u random objects, then hands the "
		       "array to the successor it starts, and exits\n", LAR_OBJECTS, LAR_MIN_SIZE,
		       LAR_MAX_SIZE, LAR_STEPS);
	if (scenario_wanted(SC_XMALLOC, o))
		printf("xmalloc-T: xmalloc-test's shape: (T+1)/2 producer threads allocate %u-%u B "
		       "objects in batches of %u, T/2 consumers\nfree them\n", LAR_MIN_SIZE,
		       LAR_MAX_SIZE, XM_BATCH);
	if (scenario_wanted(SC_MSTRESS, o))
		printf("mstress-T: mimalloc's test-stress with its default scale (%u): T threads in "
		       "rounds, 8-512 B zero-filled,\nevery word written and checked, 1/4 swapped "
		       "through a shared array; -1cpu: %u threads pinned to one CPU\n", MS_SCALE,
		       MS_1CPU_THREADS);
	if (scenario_wanted(SC_LARSON_MB, o))
		printf("larson-mb-T: larson as mimalloc-bench runs it (`larson 5 %u %u %u %u %u T`): "
		       "%u-%u B on the power-of-two pools\n", LMB_MIN, LMB_MAX, LMB_CHUNKS,
		       LMB_ROUNDS, LMB_SEED, LMB_MIN, LMB_MAX - 1);
	if (scenario_wanted(SC_XMTEST, o))
		printf("xmalloc-test-T: xmalloc-test as mimalloc-bench runs it (`-w T -s %u`): T "
		       "producers allocate batches of %u, T consumers free\nthem (ns per object "
		       "freed)\n", XMT_SIZE, XMT_BATCH);
	printf("%-32s %-9s %21s %6s %8s %21s %6s %8s %20s %20s\n", "row", "backend",
	       "ns per allocation", "x best", "CPU ns", "peak RSS MiB", "x lean", "growth",
	       "OS share, warm-up", "OS share, steady");
	for (r = ROW_SRV_FIRST; r < ROW_COUNT; r++) {
		enum backend fw = BK_GLIBC, lw = BK_GLIBC;
		const struct cell *f, *l;
		char label[48];

		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		f = fastest_malloc(r, 0, &fw);
		l = leanest_malloc(r, &lw);
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *c = &cells[r][0][b];
			char t[128], rss[128], cpu[24], gr[24], ow[64], os[64], xf[16] = "-",
			     xl[16] = "-";

			if (!(o->backends & (1u << b)) || !row_runs(r, (enum backend)b))
				continue;
			if (!c->n) {
				printf("%-32s %-9s %21s\n", label, backends[b].name, "-");
				continue;
			}
			fmt_spread(t, sizeof(t), &c->ns);
			fmt_spread(rss, sizeof(rss), &c->rss);
			fmt_num(cpu, sizeof(cpu), c->cpu.med);
			fmt_num(gr, sizeof(gr), c->rss_growth.med);
			fmt_share(ow, sizeof(ow), &c->os_warm);
			fmt_share(os, sizeof(os), &c->os_steady);
			if (f)
				snprintf(xf, sizeof(xf), "%.2fx", c->ns.med / f->ns.med);
			if (l)
				snprintf(xl, sizeof(xl), "%.2fx", c->rss.med / l->rss.med);
			printf("%-32s %-9s %21s %6s %8s %21s %6s %8s %20s %20s\n", label,
			       backends[b].name, t, xf, cpu, rss, xl, gr, ow, os);
		}
	}
	printf("x best: to the fastest general malloc; CPU ns: user+system time of the child per "
	       "allocation (median; above the\nwall time when threads ran in parallel); x lean: "
	       "to the smallest peak RSS of a general malloc; growth: peak\nminus the RSS before "
	       "the workload, MiB (median); OS share: libpool's allocations that reached its OS\n"
	       "layer (pool_stats.os_allocs), in the first round and in the others (server)\n");
}

void print_skipped(const struct bench_opts *o)
{
	unsigned int b;

	for (b = 0; b < BK_COUNT; b++)
		if ((o->backends & (1u << b)) && skipped[b][0])
			printf("%s %s: %s\n", backend_failed[b] ? "FAILED" : "skipped", backends[b].name,
			       skipped[b]);
}

void print_placement(const struct bench_opts *o)
{
	unsigned int b;
	char label[48];
	enum row r;

	printf("\nplacement: Cpus_allowed_list of each worker thread, read by the thread from "
	       "/proc/thread-self/status\n");
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (b = 0; b < BK_COUNT; b++)
			if (cells[r][0][b].n)
				printf("  %-18s %-9s %s\n", label, backends[b].name,
				       cells[r][0][b].placement);
	}
}

/* A JSON string: the library's one escaper (RFC 8259; ill-formed UTF-8 becomes \ufffd). */
static void json_string(FILE *f, const char *s)
{
	pool_json_write_string(f, s);
}

/* A number, or null when it was not measured (< 0). */
static void json_num(FILE *f, double v)
{
	if (v < 0 || !isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void json_spread(FILE *f, const char *key, const struct spread *sp)
{
	fprintf(f, ", \"%s\": {\"median\": ", key);
	json_num(f, sp->med);
	fputs(", \"min\": ", f);
	json_num(f, sp->min);
	fputs(", \"max\": ", f);
	json_num(f, sp->max);
	fputs(", \"q1\": ", f);
	json_num(f, sp->q1);
	fputs(", \"q3\": ", f);
	json_num(f, sp->q3);
	fputc('}', f);
}

static void json_cell(FILE *f, const struct bench_opts *o, enum row r, unsigned int si,
                      enum backend b)
{
	const struct cell *c = &cells[r][si][b];
	char label[48], pin[32];
	unsigned int k;

	row_label(r, o, label, sizeof(label));
	fputs("{\"scenario\": ", f);
	json_string(f, label);
	fprintf(f, ", \"kind\": \"%s\", \"threads\": %u, ", bench_scenario_names[row_scenario(r)],
	        row_threads(r, o));
	if (row_is_server(r))
		fputs("\"size\": null", f);
	else
		fprintf(f, "\"size\": %zu", row_size(r, o, si));
	fprintf(f, ", \"align\": %zu, \"backend\": ", row_align(r));
	json_string(f, backends[b].name);
	fputs(", \"unit\": ", f);
	json_string(f, row_unit(r));
	fprintf(f, ", \"units_per_sample\": %llu, \"short_samples_rerun\": %u",
	        (unsigned long long)c->count, c->retries);
	if (row_scenario(r) == SC_SERVER) {
		enum srv_shape sh = row_shape(r);

		fprintf(f, ", \"live\": %u, \"lifetime\": \"%s\", \"teardown\": \"%s\"",
		        row_live(r, o),
		        sh == SHAPE_LONG_BURST || sh == SHAPE_LONG_HANDOVER ? "long" : "short",
		        sh == SHAPE_SHORT_BURST || sh == SHAPE_LONG_BURST ? "burst" : "handover");
	}
	json_spread(f, "ns", &c->ns);
	if (row_is_server(r))
		json_spread(f, "cpu_ns", &c->cpu);
	fputs(", \"samples\": [", f);
	for (k = 0; k < c->n; k++)
		fprintf(f, "%s%.6g", k ? ", " : "", c->s[k].ns);
	fputs("], \"sample_ms\": [", f);
	for (k = 0; k < c->n; k++)
		fprintf(f, "%s%.2f", k ? ", " : "", c->s[k].ms);
	fputc(']', f);
	if (row_is_server(r)) {
		json_spread(f, "peak_rss_mib", &c->rss);
		json_spread(f, "rss_before_mib", &c->rss_base);
		json_spread(f, "rss_growth_mib", &c->rss_growth);
	}
	if (row_scenario(r) == SC_SERVER) {
		json_spread(f, "os_share_warmup", &c->os_warm);
		json_spread(f, "os_share_steady", &c->os_steady);
	}
	if (row_scenario(r) == SC_FSHARE)
		json_spread(f, "shared_lines", &c->shared);
	if (row_scenario(r) == SC_SCALING) {
		fputs(", \"pinned_to\": ", f);
		json_string(f, row_pin(r, pin, sizeof(pin)));
		json_spread(f, "cpu_ns", &c->cpu);
		json_spread(f, "peak_rss_mib", &c->rss);
	}
	if (row_pin(r, pin, sizeof(pin)) && row_scenario(r) != SC_SCALING) {
		fputs(", \"pinned_to\": ", f);
		json_string(f, pin);
	}
	fputs(", \"placement\": ", f);
	json_string(f, c->placement);
	fputc('}', f);
}

int write_json(const struct bench_opts *o)
{
	FILE *f = fopen(o->json, "w");
	unsigned int si, b, first = 1;
	enum row r;

	if (!f) {
		tool_error("cannot write '%s': %s", o->json, strerror(errno));
		return -1;
	}
	fputs("{\n  \"tool\": \"pool-bench\",\n  \"version\": ", f);
	json_string(f, pool_version());
	fputs(",\n  \"date\": ", f);
	json_string(f, mach.date);
	fputs(",\n  \"cpu\": ", f);
	json_string(f, mach.cpu);
	fputs(",\n  \"kernel\": ", f);
	json_string(f, mach.kernel);
	fprintf(f, ",\n  \"line_round_trip_ns\": ");
	json_num(f, mach.rtt_ns > 0 ? mach.rtt_ns : -1);
	fprintf(f, ",\n  \"pus\": %u,\n  \"cpus_allowed\": ", o->pus);
	json_string(f, mach.allowed);
	fputs(",\n  \"pin\": ", f);
	if (o->pin[0])
		json_string(f, o->pin);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"load_average_start\": [%.2f, %.2f, %.2f],\n"
	        "  \"load_average_end\": [%.2f, %.2f, %.2f],\n  \"load_average_max\": %.2f,\n"
	        "  \"load_warning\": %s,\n"
	        "  \"samples_per_figure\": %u,\n  \"samples_per_server_figure\": %u,\n"
	        "  \"min_sample_ms\": %.1f,\n"
	        "  \"fixed_units\": %llu,\n  \"quick\": %s,\n  \"results\": [",
	        mach.load_start[0], mach.load_start[1], mach.load_start[2], mach.load_end[0],
	        mach.load_end[1], mach.load_end[2], mach.load_max,
	        mach.load_warning ? "true" : "false",
	        o->reps, o->server_reps, o->pairs ? 0.0 : o->sample_ms, (unsigned long long)o->pairs,
	        o->quick ? "true" : "false");
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		for (si = 0; si < row_nsizes(r, o); si++)
			for (b = 0; b < BK_COUNT; b++) {
				if (!cells[r][si][b].n)
					continue;
				fputs(first ? "\n    " : ",\n    ", f);
				json_cell(f, o, r, si, (enum backend)b);
				first = 0;
			}
	}
	fputs("\n  ],\n  \"instructions\": ", f);
	if (insn_pair >= 0)
		fprintf(f, "{\"backend\": \"libpool\", \"size\": 64, \"per_pair\": %.3f, "
		        "\"loop\": %.3f, \"net\": %.3f}", insn_pair, insn_loop, insn_net);
	else {
		fputs("{\"skipped\": ", f);
		json_string(f, insn_why[0] ? insn_why : "not asked");
		fputc('}', f);
	}
	fputs(",\n  \"skipped\": {", f);
	for (b = 0, first = 1; b < BK_COUNT; b++)
		if (skipped[b][0]) {
			fputs(first ? "" : ", ", f);
			json_string(f, backends[b].name);
			fputs(": ", f);
			json_string(f, skipped[b]);
			first = 0;
		}
	fputs("},\n  \"targets\": [", f);
	targets_write_json(f);
	fputs("\n  ]\n}\n", f);
	if (fclose(f) != 0) {
		tool_error("cannot write '%s': %s", o->json, strerror(errno));
		return -1;
	}
	return 0;
}

/* Does backend b have figures in the server rows (server != 0) or in any row? */
static int plot_has(const struct bench_opts *o, enum backend b, int server)
{
	unsigned int si;
	enum row r;

	if (!(o->backends & (1u << b)))
		return 0;
	for (r = 0; r < ROW_COUNT; r++)
		if (row_wanted(r, o) && (!server || row_is_server(r)))
			for (si = 0; si < row_nsizes(r, o); si++)
				if (cells[r][si][b].n)
					return 1;
	return 0;
}

/* The plot command of one panel: a histogram with error bars, a column triple per backend. */
static void plot_panel(FILE *gp, const struct bench_opts *o, const char *block, int server)
{
	unsigned int b, col = 2;

	fputs("plot", gp);
	for (b = 0; b < BK_COUNT; b++)
		if (plot_has(o, (enum backend)b, server)) {
			fprintf(gp, "%s %s using %u:%u:%u%s title '%s'", col > 2 ? "," : "", block, col,
			        col + 1, col + 2, col == 2 ? ":xtic(1)" : "", backends[b].name);
			col += 3;
		}
	fputc('\n', gp);
}

/*
 * Two panels drawn by gnuplot from a script on its standard input, the data inline (gnuplot 5
 * data blocks, no temporary file): throughput of every row by backend, with the samples'
 * extremes as error bars; and the server's peak RSS by thread count and backend.
 */
int write_plot(const struct bench_opts *o)
{
	int server = server_table_wanted(o);
	unsigned int si, b, nrows = 0;
	char label[48];
	FILE *gp;
	enum row r;
	int rc;

	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		tool_error("cannot run gnuplot: %s", strerror(errno));
		return -1;
	}
	fputs("$tp << EOD\n", gp);
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < row_nsizes(r, o); si++) {
			if (row_sized(r) || row_scenario(r) == SC_PIPE_PINNED)
				fprintf(gp, "%s/%zu", label, row_size(r, o, si));
			else
				fprintf(gp, "%s", label);
			for (b = 0; b < BK_COUNT; b++) {
				const struct cell *c = &cells[r][si][b];

				if (!plot_has(o, (enum backend)b, 0))
					continue;
				if (c->n)
					fprintf(gp, " %.4f %.4f %.4f", 1e3 / c->ns.med, 1e3 / c->ns.max,
					        1e3 / c->ns.min);
				else
					fputs(" ? ? ?", gp);
			}
			fputc('\n', gp);
		}
	}
	fputs("EOD\n$rss << EOD\n", gp);
	for (r = ROW_SRV_FIRST; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		fputs(label, gp);
		for (b = 0; b < BK_COUNT; b++) {
			const struct cell *c = &cells[r][0][b];

			if (!plot_has(o, (enum backend)b, 1))
				continue;
			if (c->n)
				fprintf(gp, " %.3f %.3f %.3f", c->rss.med, c->rss.min, c->rss.max);
			else
				fputs(" ? ? ?", gp);
		}
		fputc('\n', gp);
	}
	for (r = 0; r < ROW_COUNT; r++)
		if (row_wanted(r, o))
			nrows += row_nsizes(r, o);
	/* about 30 pixels per group of bars, so that the rotated labels stay apart */
	fprintf(gp, "EOD\nset terminal pngcairo size %u,%d font ',10'\nset output '%s'\n"
	        "set datafile missing '?'\nset style data histograms\n"
	        "set style histogram errorbars gap 1 lw 1\nset style fill solid 0.8 border -1\n"
	        "set key outside right top\nset xtics rotate by -40 scale 0\nset grid ytics\n",
	        nrows * 30 > 1500 ? nrows * 30 : 1500, server ? 1100 : 650, o->plot);
	if (server)
		fputs("set multiplot layout 2,1\n", gp);
	fprintf(gp, "set title \"pool-bench: throughput, median of %u samples, bars from the slowest "
	        "to the fastest sample (higher is better)\\nload average %.2f at start, at most "
	        "%.2f, on %u PUs; %s\"\nset ylabel 'million operations per second (log)'\n"
	        "set logscale y\n", o->reps, mach.load_start[0], mach.load_max, o->pus, mach.cpu);
	plot_panel(gp, o, "$tp", 0);
	if (server) {
		fputs("set title 'server table: peak RSS of the child process (lower is better)'\n"
		      "unset logscale y\nset ylabel 'MiB'\nset yrange [0:*]\n", gp);
		plot_panel(gp, o, "$rss", 1);
		fputs("unset multiplot\n", gp);
	}
	rc = pclose(gp);
	if (rc != 0) {
		tool_error("gnuplot failed (status %d); is the Debian package 'gnuplot-nox' "
		           "installed?", rc);
		return -1;
	}
	printf("plot written to %s\n", o->plot);
	return 0;
}
