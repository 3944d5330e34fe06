/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-run.c - how pool-bench measures a figure (row, size, backend): in child processes,
 * calibrated, sampled, summarised.
 *
 * For each figure, one calibration child finds how many units take about a third of a sample;
 * every sample then times enough units to last at least --sample-ms (a sample that ends sooner
 * is run again with more units, so the time is never capped and never short). The samples go
 * round the backends in a different order each time (rotated, and reversed every other round),
 * so that no backend always runs first or after the same neighbour. Each figure is the median of
 * its samples, printed with their minimum and maximum; the JSON also holds the quartiles and
 * every sample.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool-bench-parent.h"

extern char **environ;

struct cell (*cells)[MAX_SIZES][BK_COUNT];
char skipped[BK_COUNT][300];
int backend_failed[BK_COUNT];

/*
 * Run `argv` with LD_PRELOAD set to `preload` (or removed), its stdout read into out and its
 * stderr shown only with -v. Returns the exit status, or -1 if it could not be started.
 */
int run_child(char *const argv[], const char *preload, int verbose, char *out,
                     size_t out_len)
{
	posix_spawn_file_actions_t fa;
	char **envp;
	size_t n = 0, i, j = 0, got = 0;
	char preload_env[512];
	int pipefd[2], status = 0, rc;
	pid_t pid;
	ssize_t r;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			envp[j++] = environ[i];
	if (preload) {
		snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", preload);
		envp[j++] = preload_env;
	}
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

/* The last result line of a child's output; *placement gets its placement line, if any. */
const char *result_line(char *out, const char **placement)
{
	char *line = NULL, *p = out;

	*placement = NULL;
	while (p && *p) {
		if (!strncmp(p, "ok ", 3) || !strncmp(p, "unavailable ", 12) ||
		    !strncmp(p, "error ", 6))
			line = p;
		else if (!strncmp(p, "placement ", 10))
			*placement = p + 10;
		p = strchr(p, '\n');
		if (p)
			*p++ = 0;
	}
	return line ? line : "error the child printed no result (it crashed?)";
}

/* The value of `key=` in a result line, or `def`. */
double field(const char *line, const char *key, double def)
{
	size_t len = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[len] == '=')
			return strtod(p + len + 1, NULL);
		p += len;
	}
	return def;
}

/*
 * One child run of row r at size index si for backend b, over `count` units (calibrate_ms > 0:
 * growing until a run lasts that long). Returns 0 with *s filled, or -1 (and fills skipped[b])
 * when the backend cannot run or failed.
 */
static int measure(const struct bench_opts *o, enum backend b, enum row r, unsigned int si,
                   uint64_t count, double calibrate_ms, struct sample *s, char *placement,
                   size_t placement_len)
{
	char prog[4200], sz[32], cnt[32], threads[16], pin[300], align[32], calib[48], live[32];
	char rowpin[32];
	char lifetime[32], teardown[32];
	char out[8192];
	char *argv[16];
	const char *line, *pl;
	int rc, argc = 0;

	child_path(b, prog, sizeof(prog));
	if (access(prog, X_OK) != 0) {
		snprintf(skipped[b], sizeof(skipped[b]), "%s was not built (%s)", backends[b].program,
		         b == BK_DPDK ? "libdpdk-dev is not installed" : strerror(errno));
		return -1;
	}
	snprintf(sz, sizeof(sz), "%zu", row_size(r, o, si));
	snprintf(cnt, sizeof(cnt), "%llu", (unsigned long long)count);
	snprintf(threads, sizeof(threads), "%u", row_threads(r, o));
	argv[argc++] = prog;
	argv[argc++] = "--child";
	argv[argc++] = (char *)backends[b].name;
	/* scaling is the server, pinned; pipeline-pinned the pipeline */
	argv[argc++] = (char *)bench_scenario_names[row_scenario(r) == SC_SCALING ? SC_SERVER :
	                                            row_scenario(r) == SC_PIPE_PINNED ? SC_PIPELINE :
	                                            row_scenario(r)];
	argv[argc++] = sz;
	argv[argc++] = cnt;
	argv[argc++] = threads;
	if (row_pin(r, rowpin, sizeof(rowpin))) {
		snprintf(pin, sizeof(pin), "pin=%s", rowpin);
		argv[argc++] = pin;
	} else if (o->pin[0]) {
		snprintf(pin, sizeof(pin), "pin=%s", o->pin);
		argv[argc++] = pin;
	}
	if (row_align(r)) {
		snprintf(align, sizeof(align), "align=%zu", row_align(r));
		argv[argc++] = align;
	}
	if (row_scenario(r) == SC_SERVER) {
		enum srv_shape sh = row_shape(r);

		snprintf(live, sizeof(live), "live=%u", row_live(r, o));
		snprintf(lifetime, sizeof(lifetime), "lifetime=%s",
		         sh == SHAPE_LONG_BURST || sh == SHAPE_LONG_HANDOVER ? "long" : "short");
		snprintf(teardown, sizeof(teardown), "teardown=%s",
		         sh == SHAPE_SHORT_BURST || sh == SHAPE_LONG_BURST ? "burst" : "handover");
		argv[argc++] = live;
		argv[argc++] = lifetime;
		argv[argc++] = teardown;
	}
	if (calibrate_ms > 0) {
		snprintf(calib, sizeof(calib), "calibrate=%.1f", calibrate_ms);
		argv[argc++] = calib;
	}
	argv[argc] = NULL;
	rc = run_child(argv, backends[b].preload, o->verbose, out, sizeof(out));
	line = result_line(out, &pl);
	if (rc == 0 && !strncmp(line, "ok ", 3)) {
		double units = field(line, "units", 0), os_w = field(line, "os_warm", -1);

		memset(s, 0, sizeof(*s));
		s->ns = field(line, "ns", 0);
		s->ms = field(line, "elapsed_ms", 0);
		s->units = units;
		s->cpu_ns = units > 0 && field(line, "cpu_ms", -1) >= 0 ?
		            field(line, "cpu_ms", 0) * 1e6 / units : -1;
		s->rss_mib = field(line, "rss_kb", 0) / 1024;
		s->rss_base_mib = field(line, "base_kb", 0) / 1024;
		s->rss_growth_mib = s->rss_mib - s->rss_base_mib;
		if (s->rss_growth_mib < 0)
			s->rss_growth_mib = 0;
		s->shared = field(line, "shared", -1);
		s->os_warm = s->os_steady = -1;
		if (os_w >= 0) {
			double aw = field(line, "allocs_warm", 0), aa = field(line, "allocs_all", 0);
			double oa = field(line, "os_all", 0);

			s->os_warm = aw > 0 ? os_w / aw : -1;
			s->os_steady = aa > aw ? (oa - os_w) / (aa - aw) : -1;
		}
		if (pl && placement)
			snprintf(placement, placement_len, "%s", pl);
		if (!units || s->ns <= 0) {
			backend_failed[b] = 1;
			snprintf(skipped[b], sizeof(skipped[b]), "its child reported no work: %.200s",
			         line);
			return -1;
		}
		return 0;
	}
	if (!strncmp(line, "unavailable ", 12)) {
		snprintf(skipped[b], sizeof(skipped[b]), "%.200s (Debian package: %s)", line + 12,
		         backends[b].package);
	} else {
		backend_failed[b] = 1;
		snprintf(skipped[b], sizeof(skipped[b]), "failed (exit %d): %.250s", rc,
		         !strncmp(line, "error ", 6) ? line + 6 : line);
	}
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Quantile q of sorted v[0..n-1], linear between closest ranks (Hyndman & Fan type 7). */
static double quantile(const double *v, unsigned int n, double q)
{
	double pos = q * (n - 1);
	unsigned int lo = (unsigned int)pos;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

/* The spread of the values at byte offset `off` of each sample (values < 0 are left out). */
static struct spread spread_of(const struct cell *c, size_t off)
{
	double v[MAX_REPS];
	struct spread sp = { -1, -1, -1, -1, -1 };
	unsigned int i, n = 0;

	for (i = 0; i < c->n; i++) {
		double x = *(const double *)((const char *)&c->s[i] + off);

		if (x >= 0)
			v[n++] = x;
	}
	if (!n)
		return sp;
	qsort(v, n, sizeof(v[0]), cmp_double);
	sp.med = quantile(v, n, 0.5);
	sp.q1 = quantile(v, n, 0.25);
	sp.q3 = quantile(v, n, 0.75);
	sp.min = v[0];
	sp.max = v[n - 1];
	return sp;
}

static void cell_summarise(struct cell *c)
{
	c->ns = spread_of(c, offsetof(struct sample, ns));
	c->cpu = spread_of(c, offsetof(struct sample, cpu_ns));
	c->rss = spread_of(c, offsetof(struct sample, rss_mib));
	c->rss_base = spread_of(c, offsetof(struct sample, rss_base_mib));
	c->rss_growth = spread_of(c, offsetof(struct sample, rss_growth_mib));
	c->os_warm = spread_of(c, offsetof(struct sample, os_warm));
	c->os_steady = spread_of(c, offsetof(struct sample, os_steady));
	c->shared = spread_of(c, offsetof(struct sample, shared));
}

static void progress(const struct bench_opts *o, enum row r, unsigned int si, const char *what,
                     enum backend b)
{
	char label[48];

	if (!isatty(STDERR_FILENO))
		return;
	row_label(r, o, label, sizeof(label));
	fprintf(stderr, "\r  %-32s %6zu  %-12s %-9s", label, row_size(r, o, si), what,
	        backends[b].name);
}

/* Calibrate a cell: the units that make one sample last about 1.3 x --sample-ms. */
static int calibrate(const struct bench_opts *o, enum backend b, enum row r, unsigned int si)
{
	struct cell *c = &cells[r][si][b];
	struct sample s;

	if (o->pairs) {
		c->count = o->pairs;
		return 0;
	}
	if (measure(o, b, r, si, row_start_count(r, o), o->sample_ms / 3, &s, NULL, 0) < 0)
		return -1;
	c->count = (uint64_t)(o->sample_ms * 1.3e6 / s.ns);   /* s.ns is per unit really timed */
	if (c->count < 1)
		c->count = 1;
	return 0;
}

/*
 * One sample of a cell; a sample shorter than --sample-ms is run again with more units, up to
 * SAMPLE_TRIES times (1.5^20 = 3300 times the count: only a broken child stays short).
 */
#define SAMPLE_TRIES 20u

static int sample(const struct bench_opts *o, enum backend b, enum row r, unsigned int si)
{
	struct cell *c = &cells[r][si][b];
	struct sample s;
	unsigned int tries;
	double grow;

	for (tries = 0;; tries++) {
		if (measure(o, b, r, si, c->count, 0, &s, c->n ? NULL : c->placement,
		            sizeof(c->placement)) < 0)
			return -1;
		if (o->pairs || s.ms >= o->sample_ms || tries == SAMPLE_TRIES)
			break;
		/*
		 * From what the child really timed (server runs whole rounds, at least two), and at
		 * least 1.5x more each time: a run's time is not always proportional to its count
		 * (a pipeline's threads may wait on each other), so the count must still grow.
		 */
		grow = 1.3 * o->sample_ms / (s.ms > 0.01 ? s.ms : 0.01);
		c->count = (uint64_t)((s.units > (double)c->count ? s.units : (double)c->count) *
		                      (grow > 1.5 ? grow : 1.5)) + 1;
		c->retries++;
	}
	c->s[c->n++] = s;
	return 0;
}

/* Between two figures: keep the highest load average, warn once it passes 0.5 per PU. */
static void note_load(const struct bench_opts *o)
{
	double load[3];

	read_loadavg(load);
	if (load[0] > mach.load_max)
		mach.load_max = load[0];
	if (load[0] > 0.5 * o->pus)
		mach.load_warning = 1;
}

void run_all(const struct bench_opts *o)
{
	enum backend order[BK_COUNT];
	unsigned int nb = 0, rep, i, k, si;
	enum row r;

	for (i = 0; i < BK_COUNT; i++)
		if (o->backends & (1u << i))
			order[nb++] = (enum backend)i;
	for (r = 0; r < ROW_COUNT; r++) {
		if (!row_wanted(r, o))
			continue;
		for (si = 0; si < row_nsizes(r, o); si++) {
			for (k = 0; k < nb; k++) {
				enum backend b = order[k];

				if (skipped[b][0] || !row_runs(r, b))
					continue;
				progress(o, r, si, "calibrate", b);
				calibrate(o, b, r, si);
			}
			for (rep = 0; rep < row_reps(r, o); rep++) {
				for (k = 0; k < nb; k++) {
					/* rotate by rep, reversed every other round */
					unsigned int idx = (k + rep) % nb;
					enum backend b = order[rep % 2 ? nb - 1 - idx : idx];
					char what[32];

					if (skipped[b][0] || !row_runs(r, b))
						continue;
					snprintf(what, sizeof(what), "sample %u/%u", rep + 1,
					         row_reps(r, o));
					progress(o, r, si, what, b);
					sample(o, b, r, si);
				}
			}
			for (k = 0; k < nb; k++)
				cell_summarise(&cells[r][si][order[k]]);
			note_load(o);
		}
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r%78s\r", "");
}
