/*
 * Topology and process-wide defaults: the number of shared-list buckets per pool and the
 * per-thread cache budget, with their environment overrides POOL_BUCKETS and POOL_CACHE_SIZE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-int.h"

/*
 * Parse a byte count with an optional k/m/g suffix (powers of 1024). Returns 0 and stores it,
 * or -1 for anything else (empty, trailing garbage, overflow).
 */
static int parse_bytes(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end || v > POOL_SIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

void pool__config_defaults(struct pool_config *cfg)
{
	const char *env;
	size_t v;

	env = getenv("POOL_BUCKETS");
	if (env) {
		if (parse_bytes(env, &v) == 0 && v >= 1 && v <= POOL_BUCKETS_MAX && !(v & (v - 1)))
			cfg->buckets = (unsigned int)v;
		else
			fprintf(stderr, "libpool: ignoring POOL_BUCKETS='%s': expected a power of two "
			        "from 1 to %u; keeping %u\n", env, POOL_BUCKETS_MAX, cfg->buckets);
	}
	env = getenv("POOL_CACHE_SIZE");
	if (env) {
		if (parse_bytes(env, &v) == 0 && v >= 4096)
			cfg->cache_bytes = v;
		else
			fprintf(stderr, "libpool: ignoring POOL_CACHE_SIZE='%s': expected bytes from "
			        "4096 to 1g with an optional k, m or g suffix; keeping %zu\n", env,
			        cfg->cache_bytes);
	}
}
