/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-topology - show the topology libpool sees and the defaults it derives from it.
 *
 *   pool-topology                 pool_topology_show() for this machine (or HWLOC_XMLFILE)
 *   pool-topology --table F.xml.. a markdown table, one row per hwloc XML file: what libpool
 *                                 derives on that machine (doc/tuning.md is made with it)
 *
 * Each file is loaded in a child process with HWLOC_XMLFILE set, because pool_topology() loads
 * once per process. Exit status (tools/tool.h): 0, 1 when a file could not be loaded by hwloc
 * (its row says so) or a child could not run, 2 on bad usage. See pool-topology(1).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "tool.h"

const char *tool_name = "pool-topology";

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: pool-topology               show this machine's topology and defaults\n"
	        "       pool-topology --table FILE.xml...\n"
	        "                                   markdown table of the defaults derived on each\n"
	        "                                   hwloc XML topology (loaded via HWLOC_XMLFILE)\n"
	        "Options:\n"
	        "  -T, --table      one table row per hwloc XML file given as argument\n"
	        "  -h, --help       this text\n"
	        "  -V, --version    the version\n"
	        "Environment: HWLOC_XMLFILE, POOL_BUCKETS, POOL_CACHE_SIZE (see pool-topology(1)).\n"
	        "Exit status: 0 success, 1 a file hwloc could not load (its row says so), 2 bad "
	        "usage.\n");
}

/*
 * A cache size in whole KiB ("48 KiB", "1280 KiB"), "-" when there is no such cache: a table
 * compares better in one unit. (`pool-topology` without --table prints the library's summary,
 * pool_topology_show(), with sizes in the unit that reads best.)
 */
static void kib(char *buf, size_t len, size_t v)
{
	if (v)
		snprintf(buf, len, "%zu KiB", v / 1024);
	else
		snprintf(buf, len, "-");
}

/* Append " x <count>" to a cache size, unless there is no such cache. */
static void cache_count(char *buf, size_t len, unsigned int count)
{
	size_t used = strlen(buf);

	if (count)
		snprintf(buf + used, len - used, " x %u", count);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* In a child: load `path` and print its row; exit 0, or 1 if hwloc could not load it. */
static void row_child(const char *path)
{
	const struct pool_topology *t;
	char l1[48], l2[48], l3[48], per[32], budget[32];

	if (setenv("HWLOC_XMLFILE", path, 1) < 0) {
		tool_error("cannot set HWLOC_XMLFILE: %s", strerror(errno));
		_exit(TOOL_EXIT_FAILURE);
	}
	t = pool_topology();
	if (t->source != POOL_TOPO_XML) {
		printf("| %s | (hwloc could not load it) | | | | | | | | | |\n", base_name(path));
		fflush(stdout);
		_exit(TOOL_EXIT_FAILURE);
	}
	kib(l1, sizeof(l1), t->l1d_bytes);
	kib(l2, sizeof(l2), t->l2_bytes);
	kib(l3, sizeof(l3), t->l3_bytes);
	kib(per, sizeof(per), t->l2_per_pu_bytes);
	kib(budget, sizeof(budget), t->default_cache_bytes);
	cache_count(l2, sizeof(l2), t->l2_count);
	cache_count(l3, sizeof(l3), t->l3_count);
	printf("| %s | %u x %u cores x %u threads | %u | %u | %u | %s | %s | %s | %s | **%u** | "
	       "**%s** |\n", base_name(path), t->packages, t->cores / t->packages,
	       t->pus / t->cores, t->numa_nodes, t->cores, t->pus, l1, l2, l3, per,
	       t->default_buckets, budget);
	fflush(stdout);
	_exit(TOOL_EXIT_OK);
}

static int table(int argc, char **argv)
{
	int i, status, ret = 0;
	pid_t pid;

	printf("| topology | machine | NUMA nodes | cores | PUs | L1d | L2 | L3 | L2 per PU "
	       "| buckets | cache budget |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	fflush(stdout);
	for (i = 0; i < argc; i++) {
		pid = fork();
		if (pid < 0) {
			tool_error("cannot start a process for '%s': %s", argv[i], strerror(errno));
			return TOOL_EXIT_FAILURE;
		}
		if (pid == 0)
			row_child(argv[i]);
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			ret = TOOL_EXIT_FAILURE;
	}
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "table",   no_argument, NULL, 'T' },
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c, as_table = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ThV", longopts, NULL)) != -1) {
		switch (c) {
		case 'T':
			as_table = 1;
			break;
		default:
			tool_common_option(c, longopts, argv, usage);
		}
	}
	if (as_table) {
		if (optind == argc)
			tool_usage_error("--table needs at least one XML file");
		return table(argc - optind, argv + optind);
	}
	if (optind < argc)
		tool_usage_error("unexpected argument '%s' (files go with --table)", argv[optind]);
	pool_topology_show(stdout);
	if (fflush(stdout) != 0) {
		tool_error("cannot write: %s", strerror(errno));
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}
