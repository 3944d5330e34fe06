/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool-cli-server - a small process that embeds libpool and serves its CLI socket, to try the
 * `pools` tool against and to test it (tests/test_pools_tool.sh). Not installed.
 *
 * It creates three pools with known contents:
 *   conn  192 bytes, aligned on 64, POOL_F_SHARED; 40 objects held, 10 freed to the cache
 *   buf   16384 bytes; 3 objects held
 *   task  96 bytes; nothing allocated
 * then serves pool_cli_listen_level(<socket>, <level>, 0600) until SIGINT or SIGTERM (level
 * admin unless -l says otherwise, so that the `pools` tool can try every command), stops the
 * server (removing the socket) and exits 0. It prints "ready <socket>" on stdout once the
 * socket accepts clients.
 */
#include <errno.h>
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

int main(int argc, char **argv)
{
	const char *path = NULL;
	enum pool_cli_level level = POOL_CLI_ADMIN;
	struct pool_head *conn, *buf, *task;
	void *held[64];
	sigset_t set;
	int i, sig;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "-S") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(a, "-l") && i + 1 < argc) {
			const char *l = argv[++i];

			if (!strcmp(l, "user")) {
				level = POOL_CLI_USER;
			} else if (!strcmp(l, "operator")) {
				level = POOL_CLI_OPERATOR;
			} else if (!strcmp(l, "admin")) {
				level = POOL_CLI_ADMIN;
			} else {
				fprintf(stderr, "pool-cli-server: bad level '%s' for -l (user, operator "
				        "or admin)\n", l);
				usage(stderr);
				return 2;
			}
		} else if (!strcmp(a, "-t") && i + 1 < argc) {
			char *e;
			unsigned long v = strtoul(argv[++i], &e, 10);

			if (*e || v > 0xffffffffUL || pool_cli_set_timeout_ms((unsigned int)v) < 0) {
				fprintf(stderr, "pool-cli-server: bad timeout '%s' (1..%u ms)\n", argv[i],
				        POOL_CLI_TIMEOUT_MS_MAX);
				usage(stderr);
				return 2;
			}
		} else if (!strncmp(a, "-dM", 3)) {
			char *err = NULL;
			int r = pool_parse_debugging(a + 3, &err);

			if (r < 0) {
				fprintf(stderr, "pool-cli-server: -dM: %s\n", err ? err : "invalid");
				free(err);
				usage(stderr);
				return 2;
			}
			if (r == 1)
				return 0;
		} else {
			fprintf(stderr, "pool-cli-server: bad argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!path) {
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
		return 1;
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
