/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libFuzzer target for pool_parse_debugging(): any input either applies or is refused with a
 * message, never crashes, and a refused string leaves the flags unchanged. Built and run by
 * `make fuzz-debug` (mk/fuzz.mk).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pool/pool.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pool_head *pool;

/* At exit, give the pool's objects back so that LeakSanitizer sees nothing left behind. */
static void release_pool(void)
{
	pool_thread_flush();
	if (pool_destroy(pool) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	char *str = malloc(size + 1), *err = NULL;
	unsigned int before = pool_debugging;
	int ret;

	if (!str)
		return 0;
	/* `help` prints the table on stdout: keep the fuzzer's log (stderr) readable */
	if (!quiet) {
		quiet = 1;
		if (!freopen("/dev/null", "w", stdout))
			abort();
	}
	memcpy(str, data, size);
	str[size] = 0;
	/* layout options are refused once a pool exists: have one, half of the time */
	if (!pool && size && (data[0] & 1)) {
		pool = pool_create("fuzz", 64, 0);
		if (pool)
			atexit(release_pool);
	}
	ret = pool_parse_debugging(str, &err);
	if (ret < 0) {
		if (!err || !*err || pool_debugging != before)
			abort();
		free(err);
	} else if (err) {
		abort();
	}
	if (pool) {
		/* the pool keeps working whatever the flags became */
		void *o = pool_alloc_flags(pool, POOL_F_NO_FAIL);

		if (o)
			pool_free(pool, o);
	}
	/* keep the run fast and its memory bounded: no quarantine, no fault injection */
	pool_parse_debugging("no-uaf,no-fail", NULL);
	free(str);
	return 0;
}
