/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench - libpool side by side with the allocators a user would pick instead: glibc malloc,
 * jemalloc, tcmalloc, mimalloc and DPDK's rte_mempool (`make bench`). Manual: doc/pool-bench.1;
 * method and figures: doc/benchmarks.md.
 *
 * Every measurement runs in a fresh child process (pool-bench.h): this program itself for
 * libpool (pool-bench-libpool.c), pool-bench-malloc with the allocator in LD_PRELOAD for the
 * general allocators, and pool-bench-dpdk for DPDK, each found next to this program (the build
 * tree), else in POOL_BENCH_HELPER_DIR (where `make install` puts them). This file holds main()
 * and the command line; the parent's other files are:
 *   pool-bench-rows.c          the backends and the rows of the tables
 *   pool-bench-run.c           children, calibration, samples and their statistics
 *   pool-bench-machine.c       CPU, kernel, load average, a cache line's round trip
 *   pool-bench-report.c        the tables, the JSON and the plot
 *   pool-bench-targets.c       the project's targets (--targets)
 *   pool-bench-instructions.c  instructions per pair under callgrind (--instructions)
 *   pool-bench-return-curve.c  memory against time after a burst (--return-curve)
 *
 * Exit status: 0 done; 1 a failure was found (a backend failed or crashed, an object came back
 * corrupted, libpool could not run, a file could not be written); 2 bad usage; 3 a backend named
 * with --backend, or a tool that --plot or --instructions needs, cannot run here.
 */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pool/pool.h>

#include "pool-bench-parent.h"
#include "tool.h"

#ifndef POOL_BENCH_HELPER_DIR   /* the Makefile sets it to $(LIBEXECDIR)/libpool */
#define POOL_BENCH_HELPER_DIR "/usr/local/libexec/libpool"
#endif

const char *tool_name = "pool-bench";

/* The directory of this program: its children lie next to it in the build tree. */
static char self_dir[4096];

/* Next to this program (the build tree), else where `make install` puts the helpers. */
void child_path(enum backend b, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", self_dir, backends[b].program);
	if (access(buf, X_OK) != 0)
		snprintf(buf, len, "%s/%s", POOL_BENCH_HELPER_DIR, backends[b].program);
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: pool-bench [options]\n"
	        "Measure libpool side by side with glibc, jemalloc, tcmalloc, mimalloc and DPDK.\n"
	        "  --scenario LIST     among pair,batch,bulk,pipeline,threads,server,false-sharing,\n"
	        "                      larson,xmalloc,cache-scratch,scaling, and the public shapes\n"
	        "                      mstress,larson-mb,xmalloc-test,pipeline-pinned (default: all)\n"
	        "  --size LIST         object sizes in bytes, 16..1048576 (default: 64,192,16384)\n"
	        "  --backend LIST      among libpool,glibc,jemalloc,tcmalloc,mimalloc,dpdk (default:\n"
	        "                      all; those that cannot run here are skipped)\n"
	        "  --reps N            samples per figure, 1..%u (default %u)\n"
	        "  --sample-ms MS      least timed work per sample, 1..60000 ms (default %.0f)\n"
	        "  --threads N         the oversubscribed thread count of `threads`, 1..%u\n"
	        "                      (default 48)\n"
	        "  --server-threads LIST  thread counts of the server table's rows, up to %u\n"
	        "                      (default: 2,8; e.g. 2,8,16,64 on 16 or more cores)\n"
	        "  --server-live LIST  live objects per thread of `server`, up to %u numbers in\n"
	        "                      %u..%u (default: 2048,16384,65536)\n"
	        "  --server-shapes LIST  among short-burst,short-handover,long-burst,long-handover\n"
	        "                      (default: all)\n"
	        "  --server-reps N     samples per figure of the server table, 1..%u\n"
	        "                      (default %u)\n"
	        "  --pin CPU-LIST      run worker i of every backend on CPU i of the list (modulo\n"
	        "                      its length), e.g. 0,1 (default: not pinned)\n"
	        "  --quick             development run: 3 samples of 20 ms, size 64, server,\n"
	        "                      larson and xmalloc at 2 threads, server with 2048 live\n"
	        "                      objects, threads at %u (options after it override)\n"
	        "  --pairs N           a fixed count of units per sample instead of calibration,\n"
	        "                      64..10^10; with --instructions: pairs counted (default 10^6)\n"
	        "  --json FILE         also write the results as JSON\n"
	        "  --plot FILE.png     draw throughput and server RSS with gnuplot\n"
	        "  --targets FILE      also judge the figures against the target groups FILE\n"
	        "                      names, under its headings (make bench: mk/bench-targets)\n"
	        "  --instructions      count instructions per pair of the pair scenario of each\n"
	        "                      backend under valgrind --tool=callgrind\n"
	        "  --return-curve FILE.png  instead of the tables: the memory each backend holds\n"
	        "                      against time after a burst freed under a light load\n"
	        "                      (default: libpool,jemalloc,mimalloc, --threads 4,\n"
	        "                      --size 16384), plotted with gnuplot\n"
	        "  --return-seconds S  how long the curve runs after the frees, 1..3600 (default 30)\n"
	        "  --return-burst N    objects each thread takes in the burst (default 6000)\n"
	        "  --return-keep N     every N-th object of each burst stays live through the\n"
	        "                      curve (2..1000000; default: none)\n"
	        "  --placement         print each worker thread's Cpus_allowed_list\n"
	        "  -v, --verbose       show the children's stderr\n"
	        "  -h, --help          this text\n"
	        "  -V, --version       the version\n"
	        "Child programs: next to pool-bench, else in %s.\n"
	        "Exit status: 0 done, 1 a failure was found, 2 bad usage, 3 a backend named with\n"
	        "--backend or a tool that --plot/--instructions needs cannot run here.\n",
	        MAX_REPS, MIN_REPS, MIN_SAMPLE_MS, BENCH_MAX_THREADS, MAX_SERVER, MAX_LIVE,
	        SRV_LIVE_MIN, SRV_LIVE_MAX, MAX_REPS, SERVER_REPS, 8u,
	        POOL_BENCH_HELPER_DIR);
}

/* A comma-separated list of names among names[0..n-1], as a bit mask; else exit 2. */
static unsigned int parse_names(const char *opt, const char *s, const char *const *names,
                                unsigned int n)
{
	char buf[256], all[256] = "", *tok, *save = NULL;
	unsigned int mask = 0, i;
	size_t used = 0;

	for (i = 0; i < n && used < sizeof(all); i++)
		used += (size_t)snprintf(all + used, sizeof(all) - used, "%s%s", i ? "," : "",
		                         names[i]);
	if (!*s || strlen(s) >= sizeof(buf))
		tool_usage_error("bad value '%s' for %s: expected a list among %s", s, opt, all);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == n)
			tool_usage_error("bad value '%s' for %s: expected a list among %s", tok, opt,
			                 all);
		mask |= 1u << i;
	}
	if (!mask)
		tool_usage_error("bad value '%s' for %s: expected a list among %s", s, opt, all);
	return mask;
}

/* A comma-separated list of numbers in [lo, hi] into v[0..max-1]; returns the count. */
static unsigned int parse_num_list(const char *opt, const char *s, unsigned long *v,
                                   unsigned int max, unsigned long lo, unsigned long hi)
{
	char buf[256], *tok, *save = NULL;
	unsigned int n = 0;

	if (!*s || strlen(s) >= sizeof(buf))
		tool_usage_error("bad value '%s' for %s: expected up to %u numbers in %lu..%lu", s,
		                 opt, max, lo, hi);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			tool_usage_error("bad value '%s' for %s: expected up to %u numbers", s, opt,
			                 max);
		v[n++] = tool_parse_ulong(opt, tok, lo, hi);
	}
	if (!n)
		tool_usage_error("bad value '%s' for %s: expected up to %u numbers in %lu..%lu", s,
		                 opt, max, lo, hi);
	return n;
}

/* --pin: every CPU must be one this process may run on; stored normalised. */
static void parse_pin(const char *s, struct bench_opts *o)
{
	static int cpus[BENCH_MAX_CPUS];
	char allowed_list[256] = "?";
	cpu_set_t allowed;
	size_t used = 0;
	int n, i;

	n = bench_parse_cpulist(s, cpus, BENCH_MAX_CPUS);
	if (n <= 0)
		tool_usage_error("bad value '%s' for --pin: expected a CPU list such as 0,1 or 0-3",
		                 s);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		CPU_ZERO(&allowed);
	else
		bench_format_cpuset(&allowed, allowed_list, sizeof(allowed_list));
	for (i = 0; i < n; i++) {
		if (!CPU_ISSET(cpus[i], &allowed))
			tool_usage_error("bad value '%s' for --pin: this process may not run on CPU %d "
			                 "(it may use %s)", s, cpus[i], allowed_list);
		used += (size_t)snprintf(o->pin + used, sizeof(o->pin) - used, "%s%d",
		                         i ? "," : "", cpus[i]);
		if (used >= sizeof(o->pin))
			tool_usage_error("bad value '%s' for --pin: list too long", s);
	}
}

enum {
	OPT_RETURN_CURVE = 240, OPT_RETURN_SECONDS, OPT_RETURN_BURST, OPT_RETURN_KEEP,
	OPT_SCENARIO = 256, OPT_SIZE, OPT_BACKEND, OPT_REPS, OPT_SAMPLE_MS, OPT_THREADS,
	OPT_SERVER_THREADS, OPT_PIN, OPT_QUICK, OPT_PAIRS, OPT_JSON, OPT_PLOT, OPT_INSTRUCTIONS,
	OPT_PLACEMENT, OPT_SERVER_LIVE, OPT_SERVER_SHAPES, OPT_SERVER_REPS, OPT_TARGETS
};

static void parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "reps", required_argument, NULL, OPT_REPS },
		{ "sample-ms", required_argument, NULL, OPT_SAMPLE_MS },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "server-threads", required_argument, NULL, OPT_SERVER_THREADS },
		{ "server-live", required_argument, NULL, OPT_SERVER_LIVE },
		{ "server-shapes", required_argument, NULL, OPT_SERVER_SHAPES },
		{ "server-reps", required_argument, NULL, OPT_SERVER_REPS },
		{ "pin", required_argument, NULL, OPT_PIN },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "pairs", required_argument, NULL, OPT_PAIRS },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "targets", required_argument, NULL, OPT_TARGETS },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "instructions", no_argument, NULL, OPT_INSTRUCTIONS },
		{ "placement", no_argument, NULL, OPT_PLACEMENT },
		{ "return-curve", required_argument, NULL, OPT_RETURN_CURVE },
		{ "return-seconds", required_argument, NULL, OPT_RETURN_SECONDS },
		{ "return-burst", required_argument, NULL, OPT_RETURN_BURST },
		{ "return-keep", required_argument, NULL, OPT_RETURN_KEEP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long v[MAX_SIZES];
	unsigned int n, i;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SCENARIO:
			o->scenarios = parse_names("--scenario", optarg, bench_scenario_names,
			                           SC_LOOP);
			break;
		case OPT_SIZE:
			o->nsizes = parse_num_list("--size", optarg, v, MAX_SIZES, 16, 1u << 20);
			for (i = 0; i < o->nsizes; i++)
				o->sizes[i] = (size_t)v[i];
			o->sizes_given = 1;
			break;
		case OPT_BACKEND:
			o->backends = o->backends_given = parse_names("--backend", optarg, bk_names,
			                                              BK_COUNT);
			break;
		case OPT_REPS:
			o->reps = (unsigned int)tool_parse_ulong("--reps", optarg, 1, MAX_REPS);
			break;
		case OPT_SAMPLE_MS:
			o->sample_ms = (double)tool_parse_ulong("--sample-ms", optarg, 1, 60000);
			break;
		case OPT_THREADS:
			o->threads = (unsigned int)tool_parse_ulong("--threads", optarg, 1,
			                                            BENCH_MAX_THREADS);
			o->threads_given = 1;
			break;
		case OPT_RETURN_CURVE:
			o->return_curve = optarg;
			break;
		case OPT_RETURN_SECONDS:
			o->return_seconds = (double)tool_parse_ulong("--return-seconds", optarg, 1, 3600);
			break;
		case OPT_RETURN_BURST:
			o->return_burst = tool_parse_ulong("--return-burst", optarg, 1, 100000000);
			break;
		case OPT_RETURN_KEEP:
			o->return_keep = tool_parse_ulong("--return-keep", optarg, 2, 1000000);
			break;
		case OPT_SERVER_THREADS:
			n = parse_num_list("--server-threads", optarg, v, MAX_SERVER, 1,
			                   BENCH_MAX_THREADS);
			for (i = 0; i < n; i++)
				o->server_threads[i] = (unsigned int)v[i];
			o->nserver = n;
			break;
		case OPT_SERVER_LIVE:
			n = parse_num_list("--server-live", optarg, v, MAX_LIVE, SRV_LIVE_MIN,
			                   SRV_LIVE_MAX);
			for (i = 0; i < n; i++)
				o->server_live[i] = (unsigned int)v[i];
			o->nlive = n;
			break;
		case OPT_SERVER_SHAPES:
			o->shapes = parse_names("--server-shapes", optarg, shape_names, SHAPE_COUNT);
			break;
		case OPT_SERVER_REPS:
			o->server_reps = (unsigned int)tool_parse_ulong("--server-reps", optarg, 1,
			                                                MAX_REPS);
			break;
		case OPT_PIN:
			parse_pin(optarg, o);
			break;
		case OPT_QUICK:
			o->quick = 1;
			o->reps = 3;
			o->sample_ms = 20;
			o->nsizes = 1;
			o->sizes[0] = 64;
			o->threads = 8;
			o->server_threads[0] = 2;
			o->nserver = 1;
			o->server_live[0] = SRV_LIVE;
			o->nlive = 1;
			o->server_reps = 3;
			break;
		case OPT_PAIRS:
			o->pairs = tool_parse_ulong("--pairs", optarg, 64, 10000000000ul);
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_TARGETS:
			o->targets = optarg;
			read_target_groups(optarg);
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_INSTRUCTIONS:
			o->instructions = 1;
			break;
		case OPT_PLACEMENT:
			o->placement = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		default:   /* -h, -V, and getopt_long()'s errors */
			tool_common_option(c, longopts, argv, usage);
		}
	}
	tool_no_operands(argc, argv);
}

/* Is the backend's child built and, for preloads, its library installed? */
static int backend_present(enum backend b)
{
	char prog[4200];

	child_path(b, prog, sizeof(prog));
	return access(prog, X_OK) == 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .scenarios = (1u << SC_LOOP) - 1,
	                        .backends = (1u << BK_COUNT) - 1, .sizes = { 64, 192, 16384 },
	                        .nsizes = 3, .reps = MIN_REPS, .sample_ms = MIN_SAMPLE_MS,
	                        .threads = 48, .server_threads = { 2, 8 }, .nserver = 2,
	                        .server_live = { SRV_LIVE, 16384, 65536 }, .nlive = 3,
	                        .shapes = (1u << SHAPE_COUNT) - 1, .server_reps = SERVER_REPS,
	                        .return_seconds = 30, .return_burst = 6000 };
	ssize_t len;
	char *slash;
	unsigned int b;
	int rc = 0;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return libpool_child_main(argc, argv);
	len = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
	if (len <= 0) {
		tool_error("cannot find my own path: %s", strerror(errno));
		return TOOL_EXIT_FAILURE;
	}
	self_dir[len] = 0;
	slash = strrchr(self_dir, '/');
	if (slash)
		*slash = 0;
	o.pus = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	if (!o.pus)
		o.pus = 1;
	parse_args(argc, argv, &o);

	if (o.return_curve)
		return run_return_curve(&o);
	if (o.instructions) {
		if (!o.pairs)
			o.pairs = 1000000;
		if (!o.sizes_given)
			o.nsizes = 1;   /* 64 bytes unless sizes were given */
		return run_instructions(&o);
	}
	for (b = 0; b < BK_COUNT; b++)
		if ((o.backends_given & (1u << b)) && !backend_present((enum backend)b)) {
			tool_error("backend %s cannot run: %s was not built%s", backends[b].name,
			           backends[b].program,
			           b == BK_DPDK ? " (libdpdk-dev is not installed)" : "");
			return TOOL_EXIT_UNAVAILABLE;
		}
	if (o.plot && system("command -v gnuplot >/dev/null 2>&1") != 0) {
		tool_error("--plot needs gnuplot (Debian package gnuplot-nox)");
		return TOOL_EXIT_UNAVAILABLE;
	}
	cells = calloc(ROW_COUNT, sizeof(*cells));
	if (!cells) {
		tool_error("out of memory for the results");
		return TOOL_EXIT_FAILURE;
	}
	read_machine(&o);
	if (row_wanted(ROW_SCALE_1, &o))
		measure_rtt();
	if (mach.load_warning)
		tool_error("warning: load average %.2f on %u PUs is above 0.5 per PU; figures "
		           "will be noisy", mach.load_start[0], o.pus);
	if ((o.scenarios & (1u << SC_PAIR)) && (o.backends & (1u << BK_LIBPOOL)) &&
	    count_libpool_pair(&o) == -2)
		snprintf(insn_why, sizeof(insn_why), "valgrind is not installed");
	run_all(&o);
	read_loadavg(mach.load_end);
	if (mach.load_end[0] > mach.load_max)
		mach.load_max = mach.load_end[0];
	if (mach.load_end[0] > 0.5 * o.pus)
		mach.load_warning = 1;
	eval_targets(&o);
	print_header(&o);
	print_table(&o);
	print_server(&o);
	if (insn_pair >= 0)
		printf("\ninstructions (callgrind), libpool pair, 64 B: %.2f per pair, %.2f net of the "
		       "loop's own %.2f\n", insn_pair, insn_net, insn_loop);
	else if (insn_why[0])
		printf("\ninstructions: not counted: %s\n", insn_why);
	print_skipped(&o);
	if (o.placement)
		print_placement(&o);
	print_targets();
	if (o.json && write_json(&o) < 0)
		rc = TOOL_EXIT_FAILURE;
	if (o.plot && write_plot(&o) < 0)
		rc = TOOL_EXIT_FAILURE;
	for (b = 0; b < BK_COUNT; b++) {
		if (!(o.backends & (1u << b)))
			continue;
		if (backend_failed[b] || (skipped[b][0] && b == BK_LIBPOOL))
			rc = TOOL_EXIT_FAILURE;
		else if (skipped[b][0] && (o.backends_given & (1u << b)) && !rc)
			rc = TOOL_EXIT_UNAVAILABLE;
	}
	return rc;
}
