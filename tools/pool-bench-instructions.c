/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-instructions.c - instructions per allocation+free pair, counted by callgrind.
 *
 * `--instructions` runs the pair scenario of each backend under valgrind --tool=callgrind,
 * collecting only inside the measured loop (--toggle-collect=bench_pair_loop*), and prints the
 * instructions per allocation+free pair, also net of the same loop without an allocator (the
 * "loop" scenario of the children). libpool keeps its inline fast path under callgrind (only
 * memcheck sends every call to the slow path), so the count is that of the code that runs
 * outside Valgrind. A normal run counts libpool's pair this way too (when valgrind is
 * installed), for the instruction target.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool-bench-parent.h"
#include "tool.h"

double insn_pair = -1, insn_loop = -1, insn_net = -1;
char insn_why[300];

/*
 * One callgrind run of `prog --child backend scenario size pairs 1`, counting only inside the
 * functions named `toggle`. Returns 0 with *total instructions over *done pairs; -1 with the
 * reason in why when the run failed; -2 when valgrind itself cannot run.
 */
static int callgrind_count(const struct bench_opts *o, enum backend b, const char *scenario,
                           const char *toggle, size_t size, unsigned long long *total,
                           unsigned long long *done, char *why, size_t why_len)
{
	char prog[4200], sz[32], pairs[32], outfile[64], of[96], tg[96], out[4096], line[512];
	char *argv[13];
	const char *res, *pl;
	FILE *f;
	int rc;

	child_path(b, prog, sizeof(prog));
	if (access(prog, X_OK) != 0) {
		snprintf(why, why_len, "%s was not built", backends[b].program);
		return -1;
	}
	snprintf(outfile, sizeof(outfile), "/tmp/pool-bench-callgrind.%d", (int)getpid());
	snprintf(of, sizeof(of), "--callgrind-out-file=%s", outfile);
	snprintf(tg, sizeof(tg), "--toggle-collect=%s", toggle);
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(pairs, sizeof(pairs), "%llu", (unsigned long long)o->pairs);
	argv[0] = "valgrind";
	argv[1] = "--tool=callgrind";
	argv[2] = tg;
	argv[3] = of;
	argv[4] = "--quiet";
	argv[5] = prog;
	argv[6] = "--child";
	argv[7] = (char *)backends[b].name;
	argv[8] = (char *)scenario;
	argv[9] = sz;
	argv[10] = pairs;
	argv[11] = "1";
	argv[12] = NULL;
	rc = run_child(argv, backends[b].preload, o->verbose, out, sizeof(out));
	res = result_line(out, &pl);
	if (rc != 0 || strncmp(res, "ok ", 3) != 0) {
		unlink(outfile);
		if (rc == 127 || rc < 0) {
			snprintf(why, why_len, "valgrind could not run (install the Debian package "
			         "'valgrind')");
			return -2;
		}
		snprintf(why, why_len, "%s", strncmp(res, "error the child printed", 23) ? res :
		         "valgrind failed (run with -v to see why)");
		return -1;
	}
	*total = 0;
	f = fopen(outfile, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
			*total = strtoull(strchr(line, ':') + 1, NULL, 10);
	if (f)
		fclose(f);
	unlink(outfile);
	*done = (unsigned long long)field(res, "units", 0);
	if (!*done)
		*done = o->pairs;
	return 0;
}

/* Under a sanitizer the children cannot run under Valgrind. */
static int sanitizer_build(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(undefined_behavior_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

/* libpool's pair under callgrind, for the instruction target; 0, or -2 if valgrind is missing. */
/*
 * Instructions per pair net of the loop's own, to the hundredth as printed: the loops are
 * called once per 4096 pairs, and those calls leave a few thousandths per pair that say
 * nothing about the allocator.
 */
static double net_per_pair(unsigned long long total, unsigned long long done,
                           unsigned long long base_total, unsigned long long base_done)
{
	double net = (double)total / (double)done;

	if (base_done)
		net -= (double)base_total / (double)base_done;
	return round(net * 100) / 100;
}

int count_libpool_pair(const struct bench_opts *o)
{
	unsigned long long total, done, base_total, base_done;
	struct bench_opts co = *o;
	int rc;

	co.pairs = 1000000;
	if (sanitizer_build()) {
		snprintf(insn_why, sizeof(insn_why), "a sanitizer build cannot run under valgrind");
		return 0;
	}
	rc = callgrind_count(&co, BK_LIBPOOL, "loop", "bench_loop_loop*", 64, &base_total,
	                     &base_done, insn_why, sizeof(insn_why));
	if (rc < 0)
		return rc == -2 ? -2 : 0;
	rc = callgrind_count(&co, BK_LIBPOOL, "pair", "bench_pair_loop*", 64, &total, &done,
	                     insn_why, sizeof(insn_why));
	if (rc < 0)
		return rc == -2 ? -2 : 0;
	insn_loop = (double)base_total / (double)base_done;
	insn_pair = (double)total / (double)done;
	insn_net = net_per_pair(total, done, base_total, base_done);
	return 0;
}

/*
 * `--instructions`: the pair loop of each backend under callgrind, instructions per pair, and
 * the same net of the loop's own cost (the "loop" scenario: no allocator, same loop).
 */
int run_instructions(const struct bench_opts *o)
{
	unsigned long long total, done, base_total = 0, base_done = 0;
	double base = 0;
	char why[512];
	unsigned int b, si;
	int bad = 0, rc;

	rc = callgrind_count(o, BK_LIBPOOL, "loop", "bench_loop_loop*", 64, &base_total,
	                     &base_done, why, sizeof(why));
	if (rc == -2) {
		tool_error("%s", why);
		return TOOL_EXIT_UNAVAILABLE;
	}
	if (rc == 0)
		base = (double)base_total / (double)base_done;
	else
		printf("loop baseline skipped: %s\n", why);
	printf("pool-bench: instructions per alloc+free pair in the pair loop (callgrind); the "
	       "loop alone (increment,\ncompare, branch, one store to the object) costs %.2f; "
	       "\"net\" is per pair minus that\n", base);
	printf("%-10s %6s %10s %14s %10s %8s\n", "backend", "size", "pairs", "instructions",
	       "per pair", "net");
	for (si = 0; si < o->nsizes; si++)
		for (b = 0; b < BK_COUNT; b++) {
			double per, net;

			if (!(o->backends & (1u << b)))
				continue;
			if (callgrind_count(o, (enum backend)b, "pair", "bench_pair_loop*",
			                    o->sizes[si], &total, &done, why, sizeof(why)) < 0) {
				printf("%-10s %6zu skipped: %s\n", backends[b].name, o->sizes[si], why);
				if (b == BK_LIBPOOL)
					bad = 1;
				continue;
			}
			per = (double)total / (double)done;
			net = net_per_pair(total, done, base_total, base_done);
			printf("%-10s %6zu %10llu %14llu %10.2f %8.2f%s\n", backends[b].name,
			       o->sizes[si], done, total, per, net,
			       b != BK_LIBPOOL || !targets_asked() ? "" : net <= 20 ?
			       "  (target net <= 20: met)" : "  (target net <= 20: MISSED)");
		}
	return bad ? TOOL_EXIT_FAILURE : 0;
}
