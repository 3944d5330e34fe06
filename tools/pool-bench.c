/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench - libpool side by side with the allocators a user would pick instead: glibc malloc,
 * jemalloc, tcmalloc, mimalloc and DPDK's rte_mempool (`make bench`).
 *
 * Every measurement runs in a fresh child process (see pool-bench.h): this program itself for
 * libpool, pool-bench-malloc with the allocator in LD_PRELOAD for the general allocators, and
 * pool-bench-dpdk for DPDK. For each scenario and object size, the repetitions go round the
 * backends in a different order each time (rotated, and reversed every other round), so that
 * no backend always runs first or after the same neighbour; each figure is the median of the
 * repetitions. Backends that cannot run here are skipped with the reason.
 *
 * `--instructions` runs the pair scenario of each backend under valgrind --tool=callgrind,
 * collecting only inside the measured loop (--toggle-collect=bench_pair_loop*), and prints the
 * instructions per allocation+free pair (`make bench-instructions`), also net of the same loop
 * without an allocator (the "loop" scenario of the children). libpool's child then
 * clears POOL_DBG_SANITIZER, which the library sets under any Valgrind tool for Memcheck's sake,
 * so that the count is that of the code that runs outside Valgrind.
 *
 * Exit status: 0 done, 1 a backend failed or gnuplot/valgrind could not run, 2 bad usage.
 */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pool/pool.h>

#include "pool-bench.h"

#ifndef POOL_BENCH_HELPER_DIR   /* the Makefile sets it to $(LIBEXECDIR)/libpool */
#define POOL_BENCH_HELPER_DIR "/usr/local/libexec/libpool"
#endif

extern char **environ;

/* ------------------------------------------------------------------------------------------ */
/* The libpool backend, for `pool-bench --child libpool ...`                                  */
/* ------------------------------------------------------------------------------------------ */

static struct pool_head *bk_pool;

static int bk_setup(const struct bench_params *bp, char *why, size_t why_len)
{
	if (strcmp(bp->backend, "libpool") != 0) {
		snprintf(why, why_len, "pool-bench serves libpool, not '%s'", bp->backend);
		return -1;
	}
	/*
	 * Under Valgrind the library turns on POOL_DBG_SANITIZER, which sends every call to the
	 * slow path to annotate cached objects for Memcheck. Callgrind does not need that, and
	 * `--instructions` means to count the code that runs outside Valgrind, so the parent asks
	 * us (POOL_BENCH_CALLGRIND=1) to clear that bit before the first pool exists.
	 */
	if (getenv("POOL_BENCH_CALLGRIND"))
		pool_debugging &= ~POOL_DBG_SANITIZER;
	bk_pool = pool_create("bench", bp->size, 0);
	if (!bk_pool) {
		snprintf(why, why_len, "pool_create(%zu): %s", bp->size, strerror(errno));
		return -1;
	}
	return 0;
}

static void bk_thread_start(struct bk_thread *t)
{
	(void)t;
}

static void bk_thread_stop(struct bk_thread *t)
{
	(void)t;   /* the thread's cache goes back to the shared lists when it exits */
}

static inline void *bk_alloc(struct bk_thread *t)
{
	(void)t;
	return pool_alloc(bk_pool);
}

static inline void bk_free(struct bk_thread *t, void *p)
{
	(void)t;
	pool_free(bk_pool, p);
}

static inline unsigned int bk_alloc_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	return (unsigned int)pool_alloc_bulk(bk_pool, objs, n);
}

static inline void bk_free_bulk(struct bk_thread *t, void **objs, unsigned int n)
{
	(void)t;
	pool_free_bulk(bk_pool, objs, n);
}

/* Every object is back and every thread gone: the pool goes (LeakSanitizer checks it). */
static void bk_teardown(void)
{
	pool_thread_flush();
	pool_destroy(bk_pool);
	bk_pool = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The parent                                                                                 */
/* ------------------------------------------------------------------------------------------ */

enum backend { BK_LIBPOOL, BK_GLIBC, BK_JEMALLOC, BK_TCMALLOC, BK_MIMALLOC, BK_DPDK, BK_COUNT };

static const struct backend_desc {
	const char *name;
	const char *program;        /* child program next to pool-bench */
	const char *preload;        /* LD_PRELOAD for it, or NULL */
	const char *package;        /* Debian package that provides it */
	int general;                /* a general-purpose malloc */
} backends[BK_COUNT] = {
	{ "libpool", "pool-bench", NULL, "(this project)", 0 },
	{ "glibc", "pool-bench-malloc", NULL, "libc6", 1 },
	{ "jemalloc", "pool-bench-malloc", "libjemalloc.so.2", "libjemalloc2", 1 },
	{ "tcmalloc", "pool-bench-malloc", "libtcmalloc_minimal.so.4",
	  "libtcmalloc-minimal4", 1 },
	{ "mimalloc", "pool-bench-malloc", "libmimalloc.so.2", "libmimalloc2.0", 1 },
	{ "dpdk", "pool-bench-dpdk", NULL, "libdpdk-dev (at build time)", 0 },
};

/* Rows of the table: a scenario at one thread count. */
enum row { ROW_PAIR, ROW_BATCH, ROW_BULK, ROW_PIPELINE, ROW_THREADS_PU, ROW_THREADS_OVER,
           ROW_COUNT };

#define MAX_SIZES 8u
#define MAX_REPS  101u

struct bench_opts {
	unsigned int scenarios;     /* bits of enum bench_scenario */
	unsigned int backends;      /* bits of enum backend */
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int reps;
	uint64_t pairs;
	unsigned int threads;       /* oversubscribed thread count */
	unsigned int pus;
	const char *json;
	const char *plot;
	int instructions;
	int verbose;
	int sizes_given;
};

struct cell {
	double samples[MAX_REPS];
	unsigned int n;
	double median;              /* ns per pair, 0: not measured */
};

static struct cell cells[ROW_COUNT][MAX_SIZES][BK_COUNT];
static char skipped[BK_COUNT][300];
static int backend_failed[BK_COUNT];   /* failed rather than unavailable */
static char self_dir[4096];

static void row_label(enum row r, const struct bench_opts *o, char *buf, size_t len)
{
	switch (r) {
	case ROW_PAIR: snprintf(buf, len, "pair"); break;
	case ROW_BATCH: snprintf(buf, len, "batch"); break;
	case ROW_BULK: snprintf(buf, len, "bulk"); break;
	case ROW_PIPELINE: snprintf(buf, len, "pipeline"); break;
	case ROW_THREADS_PU: snprintf(buf, len, "threads-%u", o->pus); break;
	default: snprintf(buf, len, "threads-%u", o->threads); break;
	}
}

static enum bench_scenario row_scenario(enum row r)
{
	static const enum bench_scenario map[ROW_COUNT] = {
		SC_PAIR, SC_BATCH, SC_BULK, SC_PIPELINE, SC_THREADS, SC_THREADS
	};

	return map[r];
}

/* Pairs per measurement: about the same wall time per scenario. */
static uint64_t row_pairs(enum row r, const struct bench_opts *o)
{
	switch (r) {
	case ROW_PIPELINE: return o->pairs / 8 ? o->pairs / 8 : 1;
	case ROW_THREADS_PU: return o->pairs * o->pus;
	case ROW_THREADS_OVER: return o->pairs * o->pus;
	default: return o->pairs;
	}
}

static unsigned int row_threads(enum row r, const struct bench_opts *o)
{
	return r == ROW_THREADS_PU ? o->pus : r == ROW_THREADS_OVER ? o->threads : 1;
}

/*
 * Run `argv` with LD_PRELOAD set to `preload` (or removed), its stdout read into out and its
 * stderr shown only with -v. Returns the exit status, or -1 if it could not be started.
 */
static int run_child(char *const argv[], const char *preload, const char *extra_env,
                     int verbose, char *out, size_t out_len)
{
	posix_spawn_file_actions_t fa;
	char **envp;
	size_t n = 0, i, j = 0, got = 0;
	char preload_env[512];
	int pipefd[2], status, rc;
	pid_t pid;
	ssize_t r;

	while (environ[n])
		n++;
	envp = calloc(n + 3, sizeof(*envp));
	if (!envp)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			envp[j++] = environ[i];
	if (preload) {
		snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", preload);
		envp[j++] = preload_env;
	}
	if (extra_env)
		envp[j++] = (char *)extra_env;
	envp[j] = NULL;
	if (pipe(pipefd) < 0) {
		free(envp);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	if (!verbose)
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		snprintf(out, out_len, "error cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	/* keep the tail: the result is the child's last line */
	while ((r = read(pipefd[0], out + got, out_len - 1 - got)) > 0) {
		got += (size_t)r;
		if (got == out_len - 1) {
			memmove(out, out + got / 2, got - got / 2);
			got -= got / 2;
		}
	}
	out[got] = 0;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The last line of a child's output that starts with ok/unavailable/error. */
static const char *result_line(char *out)
{
	char *line = NULL, *p = out;

	while (p && *p) {
		if (!strncmp(p, "ok ", 3) || !strncmp(p, "unavailable ", 12) ||
		    !strncmp(p, "error ", 6))
			line = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = 0;
	}
	return line ? line : "error the child printed no result";
}

/* Next to this program (the build tree), else where `make install` puts the helpers. */
static void child_path(enum backend b, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", self_dir, backends[b].program);
	if (access(buf, X_OK) != 0)
		snprintf(buf, len, "%s/%s", POOL_BENCH_HELPER_DIR, backends[b].program);
}

/* One measurement; returns ns per pair, or -1 (and fills skipped[b]) when the backend fails. */
static double measure(const struct bench_opts *o, enum backend b, enum row r, size_t size)
{
	char prog[4200], sz[32], pairs[32], threads[16], out[4096];
	char *argv[8];
	const char *line;
	int rc;

	child_path(b, prog, sizeof(prog));
	if (access(prog, X_OK) != 0) {
		snprintf(skipped[b], sizeof(skipped[b]), "%s was not built (%s)", backends[b].program,
		         b == BK_DPDK ? "libdpdk-dev is not installed" : strerror(errno));
		return -1;
	}
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(pairs, sizeof(pairs), "%llu", (unsigned long long)row_pairs(r, o));
	snprintf(threads, sizeof(threads), "%u", row_threads(r, o));
	argv[0] = prog;
	argv[1] = "--child";
	argv[2] = (char *)backends[b].name;
	argv[3] = (char *)bench_scenario_names[row_scenario(r)];
	argv[4] = sz;
	argv[5] = pairs;
	argv[6] = threads;
	argv[7] = NULL;
	rc = run_child(argv, backends[b].preload, NULL, o->verbose, out, sizeof(out));
	line = result_line(out);
	if (rc == 0 && !strncmp(line, "ok ", 3))
		return strtod(line + 3, NULL);
	if (!strncmp(line, "unavailable ", 12))
		snprintf(skipped[b], sizeof(skipped[b]), "%.200s (Debian package: %s)", line + 12,
		         backends[b].package);
	else {
		backend_failed[b] = 1;
		snprintf(skipped[b], sizeof(skipped[b]), "failed (exit %d): %s", rc,
		         !strncmp(line, "error ", 6) ? line + 6 : line);
	}
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned int n)
{
	double s[MAX_REPS];

	if (!n)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int row_wanted(enum row r, const struct bench_opts *o)
{
	return !!(o->scenarios & (1u << row_scenario(r)));
}

static void run_all(const struct bench_opts *o)
{
	enum backend order[BK_COUNT];
	unsigned int nb = 0, rep, i, k, si;
	int tty = isatty(STDERR_FILENO);
	enum row r;

	for (i = 0; i < BK_COUNT; i++)
		if (o->backends & (1u << i))
			order[nb++] = (enum backend)i;
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		for (si = 0; si < o->nsizes; si++) {
			for (rep = 0; rep < o->reps; rep++) {
				for (k = 0; k < nb; k++) {
					/* rotate by rep, reversed every other round */
					unsigned int idx = (k + rep) % nb;
					enum backend b = order[rep % 2 ? nb - 1 - idx : idx];
					struct cell *c = &cells[r][si][b];
					double ns;
					char label[32];

					if (skipped[b][0])
						continue;
					if (tty) {
						row_label(r, o, label, sizeof(label));
						fprintf(stderr, "\r  %-12s %6zu  rep %u/%u  %-9s", label,
						        o->sizes[si], rep + 1, o->reps, backends[b].name);
					}
					ns = measure(o, b, r, o->sizes[si]);
					if (ns >= 0)
						c->samples[c->n++] = ns;
				}
			}
			for (k = 0; k < nb; k++) {
				struct cell *c = &cells[r][si][order[k]];

				c->median = median(c->samples, c->n);
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *p = strchr(line, ':');

			if (p) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = 0;
				snprintf(buf, len, "%s", p);
			}
			break;
		}
	}
	fclose(f);
}

static void print_table(const struct bench_opts *o)
{
	unsigned int si, b;
	char label[32], cpu[256];
	enum row r;

	cpu_model(cpu, sizeof(cpu));
	printf("pool-bench: %s, %u PUs; median of %u runs, ns per alloc+free pair "
	       "(lower is better), (x) = ratio to libpool\n", cpu, o->pus, o->reps);
	printf("%-12s %6s", "scenario", "size");
	for (b = 0; b < BK_COUNT; b++)
		if (o->backends & (1u << b))
			printf(" %17s", backends[b].name);
	printf("\n");
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < o->nsizes; si++) {
			double base = cells[r][si][BK_LIBPOOL].median;

			printf("%-12s %6zu", label, o->sizes[si]);
			for (b = 0; b < BK_COUNT; b++) {
				double v = cells[r][si][b].median;
				char txt[32];

				if (!(o->backends & (1u << b)))
					continue;
				if (!v)
					snprintf(txt, sizeof(txt), "-");
				else if (base && b != BK_LIBPOOL)
					snprintf(txt, sizeof(txt), "%.2f (%.2fx)", v, v / base);
				else
					snprintf(txt, sizeof(txt), "%.2f", v);
				printf(" %17s", txt);
			}
			printf("\n");
		}
	}
	for (b = 0; b < BK_COUNT; b++)
		if ((o->backends & (1u << b)) && skipped[b][0])
			printf("skipped %s: %s\n", backends[b].name, skipped[b]);
}

/* The fastest general malloc in a cell row, or 0. */
static double fastest_malloc(enum row r, unsigned int si, enum backend *which)
{
	double best = 0;
	unsigned int b;

	for (b = 0; b < BK_COUNT; b++) {
		double v = cells[r][si][b].median;

		if (backends[b].general && v && (!best || v < best)) {
			best = v;
			*which = (enum backend)b;
		}
	}
	return best;
}

struct target {
	char text[200];
	int known, met;
};

static unsigned int eval_targets(const struct bench_opts *o, struct target *t, unsigned int max)
{
	unsigned int n = 0, si;

	for (si = 0; si < o->nsizes && n + 5 <= max; si++) {
		double lp = cells[ROW_PAIR][si][BK_LIBPOOL].median;
		double lb = cells[ROW_BATCH][si][BK_LIBPOOL].median;
		enum backend w = BK_GLIBC;
		double f;
		size_t sz = o->sizes[si];

		f = fastest_malloc(ROW_PAIR, si, &w);
		if (lp && f) {
			t[n].known = 1;
			t[n].met = lp <= 0.5 * f;
			snprintf(t[n++].text, sizeof(t[0].text), "pair %zu B: libpool %.2f ns = %.2fx "
			         "the fastest malloc (%s %.2f ns); target <= 0.5x", sz, lp, lp / f,
			         backends[w].name, f);
		}
		f = cells[ROW_PAIR][si][BK_DPDK].median;
		if (lp && f) {
			t[n].known = 1;
			t[n].met = lp <= f;
			snprintf(t[n++].text, sizeof(t[0].text), "pair %zu B: libpool %.2f ns = %.2fx "
			         "DPDK's cached get+put (%.2f ns); target <= 1.0x", sz, lp, lp / f, f);
		}
		f = fastest_malloc(ROW_BATCH, si, &w);
		if (lb && f) {
			t[n].known = 1;
			t[n].met = lb <= 0.5 * f;
			snprintf(t[n++].text, sizeof(t[0].text), "batch %zu B: libpool %.2f ns = "
			         "%.2fx the fastest malloc (%s %.2f ns); target <= 0.5x", sz, lb, lb / f,
			         backends[w].name, f);
		}
		f = cells[ROW_PIPELINE][si][BK_JEMALLOC].median;
		lp = cells[ROW_PIPELINE][si][BK_LIBPOOL].median;
		if (lp && f) {
			t[n].known = 1;
			t[n].met = lp <= f;
			snprintf(t[n++].text, sizeof(t[0].text), "pipeline %zu B: libpool %.2f Mops/s "
			         "= %.2fx jemalloc's %.2f Mops/s; target >= 1.0x", sz, 1e3 / lp, f / lp,
			         1e3 / f);
		}
		f = cells[ROW_THREADS_PU][si][BK_LIBPOOL].median;
		if (lb && f) {
			t[n].known = 1;
			t[n].met = lb / f >= 1.8;
			snprintf(t[n++].text, sizeof(t[0].text), "threads %zu B: %u PUs give %.2fx the "
			         "single-thread batch throughput (%.2f vs %.2f ns/pair); target >= 1.8x",
			         sz, o->pus, lb / f, f, lb);
		}
	}
	return n;
}

static void print_targets(const struct bench_opts *o)
{
	struct target t[MAX_SIZES * 5];
	unsigned int n = eval_targets(o, t, MAX_SIZES * 5), i;

	if (!n)
		return;
	printf("\ntargets (doc/benchmarks.md):\n");
	for (i = 0; i < n; i++)
		printf("  %-6s %s\n", t[i].met ? "met" : "MISSED", t[i].text);
}

static int write_json(const struct bench_opts *o)
{
	FILE *f = fopen(o->json, "w");
	struct target t[MAX_SIZES * 5];
	unsigned int n, i, si, b, k;
	char cpu[256], label[32];
	int first = 1;
	enum row r;

	if (!f) {
		fprintf(stderr, "pool-bench: cannot write '%s': %s\n", o->json, strerror(errno));
		return -1;
	}
	cpu_model(cpu, sizeof(cpu));
	fprintf(f, "{\n  \"cpu\": \"%s\",\n  \"pus\": %u,\n  \"repetitions\": %u,\n"
	        "  \"pairs\": %llu,\n  \"unit\": \"ns per alloc+free pair (median)\",\n"
	        "  \"results\": [\n", cpu, o->pus, o->reps, (unsigned long long)o->pairs);
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < o->nsizes; si++)
			for (b = 0; b < BK_COUNT; b++) {
				struct cell *c = &cells[r][si][b];
				double base = cells[r][si][BK_LIBPOOL].median;

				if (!c->median)
					continue;
				fprintf(f, "%s    {\"scenario\": \"%s\", \"threads\": %u, \"size\": %zu, "
				        "\"backend\": \"%s\", \"ns_per_pair\": %.4f, \"mops_per_s\": %.3f, "
				        "\"ratio_to_libpool\": %.4f, \"samples\": [", first ? "" : ",\n",
				        label, row_threads(r, o), o->sizes[si], backends[b].name,
				        c->median, 1e3 / c->median, base ? c->median / base : 0);
				for (k = 0; k < c->n; k++)
					fprintf(f, "%s%.4f", k ? ", " : "", c->samples[k]);
				fprintf(f, "]}");
				first = 0;
			}
	}
	fprintf(f, "\n  ],\n  \"skipped\": {");
	for (b = 0, first = 1; b < BK_COUNT; b++)
		if (skipped[b][0]) {
			const char *p;

			fprintf(f, "%s\"%s\": \"", first ? "" : ", ", backends[b].name);
			for (p = skipped[b]; *p; p++)
				if (*p == '"' || *p == '\\')
					fprintf(f, "\\%c", *p);
				else if ((unsigned char)*p >= 0x20)
					fputc(*p, f);
			fputc('"', f);
			first = 0;
		}
	fprintf(f, "},\n  \"targets\": [");
	n = eval_targets(o, t, MAX_SIZES * 5);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n    {\"met\": %s, \"text\": \"%s\"}", i ? "," : "",
		        t[i].met ? "true" : "false", t[i].text);
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "pool-bench: cannot write '%s': %s\n", o->json, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Throughput (million pairs per second) by scenario/size and backend, drawn by gnuplot from a
 * script on its standard input, the data inline (a gnuplot 5 data block): no temporary file.
 */
static int write_plot(const struct bench_opts *o)
{
	unsigned int si, b, col = 2;
	char label[32];
	FILE *gp;
	enum row r;
	int rc;

	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		fprintf(stderr, "pool-bench: cannot run gnuplot: %s\n", strerror(errno));
		return -1;
	}
	fprintf(gp, "$data << EOD\n# row");
	for (b = 0; b < BK_COUNT; b++)
		if (o->backends & (1u << b))
			fprintf(gp, " %s", backends[b].name);
	fprintf(gp, "\n");
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		row_label(r, o, label, sizeof(label));
		for (si = 0; si < o->nsizes; si++) {
			fprintf(gp, "%s/%zu", label, o->sizes[si]);
			for (b = 0; b < BK_COUNT; b++)
				if (o->backends & (1u << b)) {
					double v = cells[r][si][b].median;

					if (v)
						fprintf(gp, " %.3f", 1e3 / v);
					else
						fprintf(gp, " ?");
				}
			fprintf(gp, "\n");
		}
	}
	fprintf(gp, "EOD\n");
	fprintf(gp, "set terminal pngcairo size 1400,600 font ',10'\nset output '%s'\n"
	        "set title 'pool-bench: throughput by scenario/size (higher is better)'\n"
	        "set ylabel 'million alloc+free pairs per second (log)'\nset logscale y\n"
	        "set datafile missing '?'\nset style data histograms\n"
	        "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
	        "set key outside right top\nset xtics rotate by -40 scale 0\nset grid ytics\n"
	        "plot", o->plot);
	for (b = 0; b < BK_COUNT; b++)
		if (o->backends & (1u << b)) {
			fprintf(gp, "%s $data using %u%s title '%s'", col > 2 ? "," : "", col,
			        col == 2 ? ":xtic(1)" : "", backends[b].name);
			col++;
		}
	fprintf(gp, "\n");
	rc = pclose(gp);
	if (rc != 0) {
		fprintf(stderr, "pool-bench: gnuplot failed (status %d); is the Debian package "
		        "'gnuplot' installed?\n", rc);
		return -1;
	}
	printf("plot written to %s\n", o->plot);
	return 0;
}

/*
 * One callgrind run of `prog --child backend scenario size pairs 1`, counting only inside the
 * functions named `toggle`. Returns 0 with *total instructions over *done pairs, or -1 with
 * the reason in why.
 */
static int callgrind_count(const struct bench_opts *o, enum backend b, const char *scenario,
                           const char *toggle, size_t size, unsigned long long *total,
                           unsigned long long *done, char *why, size_t why_len)
{
	char prog[4200], sz[32], pairs[32], outfile[64], of[96], tg[96], out[4096], line[512];
	char *argv[13], *endp;
	const char *res;
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
	rc = run_child(argv, backends[b].preload, "POOL_BENCH_CALLGRIND=1", o->verbose, out,
	               sizeof(out));
	res = result_line(out);
	if (rc != 0 || strncmp(res, "ok ", 3) != 0) {
		snprintf(why, why_len, "%s", rc == 127 || rc < 0 ?
		         "valgrind could not run (install the Debian package 'valgrind')" :
		         strncmp(res, "error the child printed", 23) ? res :
		         "valgrind failed (run with -v to see why)");
		unlink(outfile);
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
	strtod(res + 3, &endp);
	*done = strtoull(endp, NULL, 10);
	if (!*done)
		*done = o->pairs;
	return 0;
}

/*
 * `--instructions`: the pair loop of each backend under callgrind, instructions per pair, and
 * the same net of the loop's own cost (the "loop" scenario: no allocator, same loop).
 */
static int run_instructions(const struct bench_opts *o)
{
	unsigned long long total, done;
	double base = 0;
	char why[512];
	unsigned int b, si;
	int bad = 0;

	if (callgrind_count(o, BK_LIBPOOL, "loop", "bench_loop_loop*", 64, &total, &done, why,
	                    sizeof(why)) == 0)
		base = (double)total / (double)done;
	else
		printf("loop baseline skipped: %s\n", why);
	printf("pool-bench: instructions per alloc+free pair in the pair loop (callgrind); the "
	       "loop alone (increment,\ncompare, branch, one store to the object) costs %.2f; "
	       "\"net\" is per pair minus that\n", base);
	printf("%-10s %6s %10s %14s %10s %8s\n", "backend", "size", "pairs", "instructions",
	       "per pair", "net");
	for (si = 0; si < o->nsizes; si++)
		for (b = 0; b < BK_COUNT; b++) {
			double per;

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
			printf("%-10s %6zu %10llu %14llu %10.2f %8.2f%s\n", backends[b].name,
			       o->sizes[si], done, total, per, per - base,
			       b == BK_LIBPOOL ? (per - base <= 20 ? "  (target net <= 20: met)" :
			                          "  (target net <= 20: MISSED)") : "");
		}
	return bad ? 1 : 0;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: pool-bench [--scenario LIST] [--size LIST] [--backend LIST] [--reps N]\n"
	        "                  [--pairs N] [--threads N] [--json FILE] [--plot FILE.png]\n"
	        "                  [--instructions] [-v]\n"
	        "  --scenario LIST  among pair,batch,bulk,pipeline,threads (default: all)\n"
	        "  --size LIST      object sizes in bytes, 16..1048576 (default: 64,192,16384)\n"
	        "  --backend LIST   among libpool,glibc,jemalloc,tcmalloc,mimalloc,dpdk\n"
	        "                   (default: all)\n"
	        "  --reps N         runs per figure, 1..%u; each figure is their median (default 5)\n"
	        "  --pairs N        alloc+free pairs per run, 64..10^10 (default 2000000; pipeline\n"
	        "                   runs N/8, threads N per PU)\n"
	        "  --threads N      the oversubscribed thread count of `threads`, 1..%u (default 48)\n"
	        "  --json FILE      also write the results as JSON\n"
	        "  --plot FILE.png  draw throughput by backend and scenario with gnuplot\n"
	        "  --instructions   count instructions per pair of the pair scenario under\n"
	        "                   valgrind --tool=callgrind (default --pairs 1000000, size 64)\n"
	        "  -v               show the children's stderr\n"
	        "Exit status: 0 done, 1 a backend or tool failed, 2 bad usage.\n",
	        MAX_REPS, BENCH_MAX_THREADS);
}

static void __attribute__((noreturn)) bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "pool-bench: %s '%s'\n", what, arg);
	usage(stderr);
	exit(2);
}

static unsigned int parse_names(const char *s, const char *const *names, unsigned int n,
                                const char *what)
{
	char buf[256], *tok, *save = NULL;
	unsigned int mask = 0, i;

	if (!*s || strlen(s) >= sizeof(buf))
		bad_usage(what, s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == n)
			bad_usage(what, tok);
		mask |= 1u << i;
	}
	if (!mask)
		bad_usage(what, s);
	return mask;
}

static unsigned long long parse_num(const char *s, unsigned long long lo, unsigned long long hi,
                                    const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		bad_usage(what, s);
	return v;
}

static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);

	if (!strncmp(argv[*i], name, len) && argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (!strcmp(argv[*i], name)) {
		if (*i + 1 >= argc)
			bad_usage("missing value for", name);
		return argv[++*i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const bk_names[BK_COUNT] = { "libpool", "glibc", "jemalloc", "tcmalloc",
	                                                "mimalloc", "dpdk" };
	struct bench_opts o = { .scenarios = (1u << SC_LOOP) - 1,
	                        .backends = (1u << BK_COUNT) - 1, .sizes = { 64, 192, 16384 },
	                        .nsizes = 3, .reps = 5, .pairs = 0, .threads = 48 };
	ssize_t len;
	const char *v;
	char *slash;
	int i, rc = 0;
	unsigned int b;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return bench_child_main(argc, argv);

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-v")) {
			o.verbose = 1;
		} else if (!strcmp(argv[i], "--instructions")) {
			o.instructions = 1;
		} else if ((v = opt_value(argc, argv, &i, "--scenario"))) {
			o.scenarios = parse_names(v, bench_scenario_names, SC_LOOP, "unknown scenario");
		} else if ((v = opt_value(argc, argv, &i, "--backend"))) {
			o.backends = parse_names(v, bk_names, BK_COUNT, "unknown backend");
		} else if ((v = opt_value(argc, argv, &i, "--size"))) {
			char buf[256], *tok, *save = NULL;

			if (strlen(v) >= sizeof(buf))
				bad_usage("bad --size list", v);
			strcpy(buf, v);
			o.nsizes = 0;
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o.nsizes == MAX_SIZES)
					bad_usage("too many sizes in", v);
				o.sizes[o.nsizes++] = (size_t)parse_num(tok, 16, 1u << 20, "bad size");
			}
			if (!o.nsizes)
				bad_usage("bad --size list", v);
			o.sizes_given = 1;
		} else if ((v = opt_value(argc, argv, &i, "--reps"))) {
			o.reps = (unsigned int)parse_num(v, 1, MAX_REPS, "bad --reps");
		} else if ((v = opt_value(argc, argv, &i, "--pairs"))) {
			o.pairs = parse_num(v, 64, 10000000000ull, "bad --pairs");
		} else if ((v = opt_value(argc, argv, &i, "--threads"))) {
			o.threads = (unsigned int)parse_num(v, 1, BENCH_MAX_THREADS, "bad --threads");
		} else if ((v = opt_value(argc, argv, &i, "--json"))) {
			o.json = v;
		} else if ((v = opt_value(argc, argv, &i, "--plot"))) {
			o.plot = v;
		} else {
			bad_usage("unknown option", argv[i]);
		}
	}

	len = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
	if (len <= 0) {
		fprintf(stderr, "pool-bench: cannot find my own path: %s\n", strerror(errno));
		return 1;
	}
	self_dir[len] = 0;
	slash = strrchr(self_dir, '/');
	if (slash)
		*slash = 0;
	o.pus = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	if (!o.pus)
		o.pus = 1;

	if (o.instructions) {
		if (!o.pairs)
			o.pairs = 1000000;
		if (!o.sizes_given)
			o.nsizes = 1;   /* 64 bytes */
		return run_instructions(&o);
	}
	if (!o.pairs)
		o.pairs = 2000000;
	run_all(&o);
	print_table(&o);
	print_targets(&o);
	if (o.json && write_json(&o) < 0)
		rc = 1;
	if (o.plot && write_plot(&o) < 0)
		rc = 1;
	for (b = 0; b < BK_COUNT; b++)
		if ((o.backends & (1u << b)) && (backend_failed[b] || (skipped[b][0] &&
		                                                       b == BK_LIBPOOL)))
			rc = 1;
	return rc;
}
