/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-bench-parent.h - what the files of pool-bench's parent share: the backends, the rows of
 * the tables (pool-bench-rows.c), the options, the cells that hold each figure's samples, the
 * machine, and the functions each file offers the others. The child side is pool-bench-child.h.
 */
#ifndef POOL_TOOLS_POOL_BENCH_PARENT_H
#define POOL_TOOLS_POOL_BENCH_PARENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pool-bench.h"

enum backend { BK_LIBPOOL, BK_GLIBC, BK_JEMALLOC, BK_TCMALLOC, BK_MIMALLOC, BK_DPDK, BK_COUNT };

struct backend_desc {
	const char *name;
	const char *program;        /* child program next to pool-bench */
	const char *preload;        /* LD_PRELOAD for it, or NULL */
	const char *package;        /* Debian package that provides it */
	int general;                /* a general-purpose malloc */
};

/* The backends (pool-bench-rows.c): their child programs, preloads and packages; their names. */
extern const struct backend_desc backends[BK_COUNT];
extern const char *const bk_names[BK_COUNT];

#define MAX_SERVER   4u          /* thread counts of the server table */
#define MAX_LIVE     3u          /* live-set sizes of the server */

enum srv_shape { SHAPE_SHORT_BURST, SHAPE_SHORT_HANDOVER, SHAPE_LONG_BURST, SHAPE_LONG_HANDOVER,
                 SHAPE_COUNT };

extern const char *const shape_names[SHAPE_COUNT];

#define KIND_LARSON  (MAX_LIVE * SHAPE_COUNT)
#define KIND_XMALLOC (KIND_LARSON + 1)
#define SRV_KINDS    (KIND_XMALLOC + 1)

/* The public shapes (pool-bench-public.h) at each thread count of the server table */
#define KIND_MSTRESS   0u
#define KIND_LARSON_MB 1u
#define KIND_XMTEST    2u
#define PUB_KINDS      3u
#define PUB_PIPE_SIZES 3u        /* pipeline-1cpu and -2cpus: 64, 192 and 1024 B */

/* The rows of the tables: pool-bench-rows.c says which is which. */
enum row { ROW_PAIR, ROW_BATCH, ROW_BULK, ROW_PIPELINE, ROW_THREADS_PU, ROW_THREADS_OVER,
           ROW_FSHARE, ROW_FSHARE_ALIGNED, ROW_SCRATCH_2, ROW_SCRATCH_8, ROW_SCALE_1,
           ROW_SCALE_2, ROW_PIPE_1CPU, ROW_PIPE_2CPUS, ROW_SRV_FIRST,
           ROW_PUB_FIRST = ROW_SRV_FIRST + MAX_SERVER * SRV_KINDS,
           ROW_MSTRESS_1CPU = ROW_PUB_FIRST, ROW_PUB_THREADS,
           ROW_COUNT = ROW_PUB_THREADS + MAX_SERVER * PUB_KINDS };

#define SCALE_THREADS 8u         /* the server row of `scaling`: threads, on one CPU and two */
#define MS_1CPU_THREADS 8u       /* mstress-8-1cpu: its threads, all on one CPU */

#define MAX_SIZES    8u
#define MAX_REPS     101u
#define FS_SIZE      16u         /* false-sharing object size */
#define MIN_REPS     7u          /* fewer samples than this: development figures */
#define MIN_SAMPLE_MS 200.0      /* shorter samples than this: development figures */
#define SERVER_REPS  3u          /* default samples per figure of the server table */

struct bench_opts {
	unsigned int scenarios;     /* bits of enum bench_scenario */
	unsigned int backends;      /* bits of enum backend */
	unsigned int backends_given;
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int reps;
	double sample_ms;
	uint64_t pairs;             /* --pairs: fixed count (no calibration); --instructions */
	unsigned int threads;       /* oversubscribed thread count of `threads` */
	unsigned int server_threads[MAX_SERVER];
	unsigned int nserver;
	unsigned int server_live[MAX_LIVE];   /* live objects per thread of `server` */
	unsigned int nlive;
	unsigned int shapes;        /* bits of enum srv_shape */
	unsigned int server_reps;   /* samples per figure of the server table */
	unsigned int pus;
	char pin[256];              /* normalised pin list, "" = not pinned */
	const char *json;
	const char *plot;
	const char *targets;        /* --targets FILE: the project's target groups to print */
	int instructions;
	int placement;
	int verbose;
	int quick;
	int sizes_given;
	int threads_given;
	const char *return_curve;   /* --return-curve FILE.png */
	double return_seconds;
	unsigned long return_burst;
	unsigned long return_keep;  /* --return-keep: every n-th object of a burst stays, 0: none */
};

struct sample {
	double ns;                  /* ns per unit */
	double ms;                  /* length of the timed part */
	double units;               /* units it timed (a scenario may round the count up) */
	double cpu_ns;              /* server table: CPU time (user + system) per unit, or -1 */
	double rss_mib;             /* peak RSS of the child (shown for the server table) */
	double rss_base_mib;        /* RSS before the workload */
	double rss_growth_mib;      /* peak minus before */
	double os_warm, os_steady;  /* server, libpool: OS-layer share of allocations, or -1 */
	double shared;              /* false-sharing: share of lines shared, or -1 */
};

/* Median, extremes and quartiles of a set of values. */
struct spread {
	double med, min, max, q1, q3;
};

struct cell {
	struct sample s[MAX_REPS];
	unsigned int n;
	uint64_t count;             /* units per sample (calibrated) */
	unsigned int retries;       /* samples run again because they were too short */
	struct spread ns, cpu, rss, rss_base, rss_growth, os_warm, os_steady, shared;
	char placement[512];        /* first sample's "0:cpus 1:cpus ..." */
};

/* cells[row][size index][backend], allocated by the parent (26 MiB, mostly never touched) */
extern struct cell (*cells)[MAX_SIZES][BK_COUNT];
extern char skipped[BK_COUNT][300];     /* why a backend did not run, "" while it runs */
extern int backend_failed[BK_COUNT];   /* failed rather than unavailable */

/* Instruction counts of libpool's pair (callgrind), for the target; < 0: not measured. */
extern double insn_pair, insn_loop, insn_net;
extern char insn_why[300];                      /* why they were not measured */

/* The machine, read at the start. */
struct machine {
	char cpu[256];
	char allowed[256];
	char kernel[160];
	char date[64];
	double load_start[3], load_end[3];
	double load_max;            /* highest 1-minute load average seen between two figures */
	int load_warning;
	int cpu_a, cpu_b;           /* the first two CPUs allowed (cpu_b < 0: one only) */
	double rtt_ns;              /* a cache line's round trip between them, or -1 */
};
extern struct machine mach;

/* pool-bench-rows.c: what each row runs, and the mallocs it is compared with */
int row_is_server(enum row r);
int row_is_public(enum row r);
enum bench_scenario row_scenario(enum row r);
unsigned int row_live(enum row r, const struct bench_opts *o);
enum srv_shape row_shape(enum row r);
int row_sized(enum row r);
unsigned int row_nsizes(enum row r, const struct bench_opts *o);
size_t row_size(enum row r, const struct bench_opts *o, unsigned int si);
size_t row_align(enum row r);
unsigned int row_threads(enum row r, const struct bench_opts *o);
const char *row_pin(enum row r, char *buf, size_t len);
int row_wanted(enum row r, const struct bench_opts *o);
int scenario_wanted(enum bench_scenario sc, const struct bench_opts *o);
int row_runs(enum row r, enum backend b);
unsigned int row_reps(enum row r, const struct bench_opts *o);
void row_label(enum row r, const struct bench_opts *o, char *buf, size_t len);
const char *row_unit(enum row r);
uint64_t row_start_count(enum row r, const struct bench_opts *o);
const struct cell *fastest_malloc(enum row r, unsigned int si, enum backend *which);
const struct cell *leanest_malloc(enum row r, enum backend *which);

/* pool-bench-run.c: the children and the figures */
int run_child(char *const argv[], const char *preload, int verbose, char *out, size_t out_len);
const char *result_line(char *out, const char **placement);
double field(const char *line, const char *key, double def);
void run_all(const struct bench_opts *o);

/* pool-bench-machine.c: the machine */
void read_loadavg(double load[3]);
void measure_rtt(void);
void read_machine(const struct bench_opts *o);

/* pool-bench-report.c: the output */
void print_header(const struct bench_opts *o);
void print_table(const struct bench_opts *o);
void print_server(const struct bench_opts *o);
void print_skipped(const struct bench_opts *o);
void print_placement(const struct bench_opts *o);
int write_json(const struct bench_opts *o);
int write_plot(const struct bench_opts *o);

/* pool-bench-targets.c: the project's targets */
void eval_targets(const struct bench_opts *o);
void read_target_groups(const char *file);
int targets_asked(void);
void print_targets(void);
void targets_write_json(FILE *f);

/* pool-bench-instructions.c: callgrind */
int count_libpool_pair(const struct bench_opts *o);
int run_instructions(const struct bench_opts *o);

/* pool-bench-return-curve.c: --return-curve */
int run_return_curve(struct bench_opts *o);

/* pool-bench.c: where the child programs are */
void child_path(enum backend b, char *buf, size_t len);

/* pool-bench-libpool.c: `pool-bench --child libpool ...` */
int libpool_child_main(int argc, char **argv);

#endif /* POOL_TOOLS_POOL_BENCH_PARENT_H */
