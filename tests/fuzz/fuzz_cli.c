/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libFuzzer target: pool_cli_exec_level() on any byte string (`make fuzz-cli`, see mk/fuzz.mk):
 * the first byte picks the access level (user, operator, admin), the rest is the line.
 *
 * Besides crashes and sanitizer reports, it checks the promises made to socket clients: a
 * refused command answers exactly one printable line, whatever the input, and below admin no
 * answer holds an address. The debugging options and limits an input changed are put back after
 * every input, so that inputs stay independent.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

static char *initial_options;   /* pool_debugging_show() at start, without its newline */
static struct pool_head *pools[4];
static void *held[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t len = 0;
	FILE *f = open_memstream(&initial_options, &len);
	unsigned int i;

	(void)argc;
	(void)argv;
	if (!f)
		abort();
	pool_debugging_show(f);
	fclose(f);
	initial_options[strcspn(initial_options, "\n")] = 0;
	/* pools with contents, one of them merged, one with a limit reached */
	pools[0] = pool_create_aligned("conn", 192, 64, POOL_F_SHARED);
	pools[1] = pool_create_aligned("conn-alt", 190, 64, POOL_F_SHARED);
	pools[2] = pool_create("buf", 16384, 0);
	pools[3] = pool_create("tiny", 24, POOL_F_EXACT);
	for (i = 0; i < 4; i++)
		if (!pools[i])
			abort();
	pool_set_limit(pools[2], 4);
	for (i = 0; i < 40; i++)
		held[i] = pool_alloc(pools[0]);
	for (i = 40; i < 46; i++)
		held[i] = pool_alloc(pools[2]);   /* two of them fail: the limit */
	for (i = 46; i < 64; i++)
		held[i] = pool_alloc(pools[3]);
	for (i = 30; i < 40; i++)
		pool_free(pools[0], held[i]);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum pool_cli_level level;
	char *line, *out = NULL, addr[32];
	size_t len = 0, i;
	FILE *f;
	int ret;

	if (size == 0)
		return 0;
	level = (enum pool_cli_level)(POOL_CLI_USER + data[0] % 3);
	line = malloc(size);
	if (!line)
		return 0;
	memcpy(line, data + 1, size - 1);
	line[size - 1] = 0;
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	ret = pool_cli_exec_level(line, f, level);
	if (fclose(f) != 0)
		abort();
	if (ret == 0 && level < POOL_CLI_ADMIN) {
		/*
		 * No pool head address in what a user or an operator is answered (an error may echo
		 * what the client typed, which can spell anything: those are left out).
		 */
		for (i = 0; i < 4; i++) {
			snprintf(addr, sizeof(addr), "%p", (void *)pools[i]);
			if (strstr(out, addr))
				abort();
		}
	}
	if (ret != 0) {
		/* one line, printable, ending with its newline */
		if (len == 0 || out[len - 1] != '\n')
			abort();
		for (i = 0; i + 1 < len; i++)
			if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
				abort();
	}
	free(out);
	free(line);
	if (pool_parse_debugging(initial_options, NULL) != 0)
		abort();
	for (i = 0; i < 4; i++)
		pool_set_limit(pools[i], i == 2 ? 4 : 0);
	return 0;
}
