/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-cli-server - a test fixture: a small process that embeds libpool and serves its CLI
 * socket, for tests/tools/test_pools_tool.sh to drive the `pools` tool against. Not installed.
 *
 * It creates three pools with known contents:
 *   conn  192 bytes, aligned on 64, POOL_F_SHARED; 40 objects held, 10 freed to the cache (its
 *         refills took 16 at a time from the slab tier: 64 allocated, 24 cached)
 *   buf   16384 bytes; 3 objects held (a refill of 4: 1 cached)
 *   task  96 bytes; nothing allocated
 * then serves pool_cli_listen_level(<socket>, <level>, 0600) until SIGINT or SIGTERM (level
 * admin unless -l says otherwise, so that the `pools` tool can try every command), stops the
 * server (removing the socket) and exits 0. It prints "ready <socket>" on stdout once the
 * socket accepts clients. Exit status as the tools': 2 bad usage, 3 the socket cannot be
 * served, 1 a pool cannot be created.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: pool-cli-server -S <socket> [-l <level>] [-t <timeout_ms>] [-dM<options>]\n"
	        "Serves the libpool CLI on <socket> until SIGINT or SIGTERM.\n"
	        "  -S <socket>       UNIX socket path to create (mode 0600)\n"
	        "  -l <level>        access level of the socket: user, operator or admin (default)\n"
	        "  -t <timeout_ms>   close clients silent this long (default 10000)\n"
	        "  -dM<options>      libpool debugging options (-dMhelp lists them)\n");
}

static int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "pool-cli-server: %s '%s'\n", what, arg);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	enum pool_cli_level level = POOL_CLI_ADMIN;
	struct pool_head *conn, *buf, *task;
	void *held[64];
	sigset_t set;
	int i, c, sig;

	opterr = 0;
	while ((c = getopt(argc, argv, ":S:l:t:d:h")) != -1) {
		char *e, *err = NULL;
		unsigned long v;

		switch (c) {
		case 'S':
			path = optarg;
			break;
		case 'l':
			if (!strcmp(optarg, "user")) {
				level = POOL_CLI_USER;
			} else if (!strcmp(optarg, "operator")) {
				level = POOL_CLI_OPERATOR;
			} else if (!strcmp(optarg, "admin")) {
				level = POOL_CLI_ADMIN;
			} else {
				fprintf(stderr, "pool-cli-server: bad value '%s' for -l: expected user, "
				        "operator or admin\n", optarg);
				return 2;
			}
			break;
		case 't':
			v = strtoul(optarg, &e, 10);
			if (*e || e == optarg || v > 0xffffffffUL ||
			    pool_cli_set_timeout_ms((unsigned int)v) < 0) {
				fprintf(stderr, "pool-cli-server: bad value '%s' for -t: expected 1..%u ms\n",
				        optarg, POOL_CLI_TIMEOUT_MS_MAX);
				return 2;
			}
			break;
		case 'd':
			if (optarg[0] != 'M')
				return bad_usage("unknown option", argv[optind - 1]);
			switch (pool_parse_debugging(optarg + 1, &err)) {
			case 0:
				break;
			case 1:
				return 0;
			default:
				fprintf(stderr, "pool-cli-server: -d%s: %s\n", optarg,
				        err ? err : "invalid");
				free(err);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return bad_usage(c == ':' ? "option needs a value:" : "unknown option",
			                 argv[optind - 1]);
		}
	}
	if (!path || optind < argc) {
		usage(stderr);
		return 2;
	}

	conn = pool_create_aligned("conn", 192, 64, POOL_F_SHARED);
	buf = pool_create("buf", 16384, 0);
	task = pool_create("task", 96, 0);
	if (!conn || !buf || !task) {
		fprintf(stderr, "pool-cli-server: pool_create: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < 50; i++)
		held[i] = pool_alloc(conn);
	for (i = 40; i < 50; i++)
		pool_free(conn, held[i]);
	for (i = 50; i < 53; i++)
		held[i] = pool_alloc(buf);

	/* signals are taken synchronously here; the CLI thread blocks them anyway */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pool_cli_listen_level(path, level, 0600) < 0) {
		fprintf(stderr, "pool-cli-server: cannot serve '%s': %s\n", path, strerror(errno));
		return 3;
	}
	printf("ready %s\n", path);
	fflush(stdout);
	sigwait(&set, &sig);
	pool_cli_stop();

	for (i = 0; i < 40; i++)
		pool_free(conn, held[i]);
	for (i = 50; i < 53; i++)
		pool_free(buf, held[i]);
	pool_destroy(conn);
	pool_destroy(buf);
	pool_destroy(task);
	return 0;
}
