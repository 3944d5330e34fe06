/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Process-wide configuration. Each setting has one row in `settings` below: its bounds, its
 * environment variable, and how the environment spells it. The defaults of the bucket count and
 * the cache budget come from the topology (pool_topology() in topology.c documents the formulas);
 * the environment overrides them once, at the first use (a bad value is said at start-up,
 * without the topology); pool_configure() overrides both until the first pool exists.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

#include "config/pool-config.h"
#include "base/pool-head-t.h"
#include "base/pool-util.h"

enum setting_kind {
	SETTING_POW2,      /* a power of two */
	SETTING_COUNT,     /* a plain number */
	SETTING_BYTES,     /* bytes, with an optional k, m or g suffix in the environment */
	SETTING_CHOICE,    /* 1..max, spelt in the environment as the words of `words` */
};

struct setting {
	const char *name;           /* the struct pool_config field */
	const char *env;            /* its environment variable, or NULL */
	size_t offset;              /* offsetof(struct pool_config, field) */
	int is_size;                /* 1: a size_t field, 0: an unsigned int field */
	enum setting_kind kind;
	unsigned long min, max;     /* bounds, inclusive */
	const char *expect;         /* what the environment message says is expected */
	const char *const *words;   /* SETTING_CHOICE: the environment's word for 1, 2, ... */
};

#define UINT_FIELD(f) offsetof(struct pool_config, f), 0
#define SIZE_FIELD(f) offsetof(struct pool_config, f), 1

static const struct setting settings[] = {
	{ "buckets", "POOL_BUCKETS", UINT_FIELD(buckets), SETTING_POW2, 1, POOL_BUCKETS_MAX,
	  "a power of two from 1 to 64", NULL },
	{ "cache_bytes", "POOL_CACHE_SIZE", SIZE_FIELD(cache_bytes), SETTING_BYTES,
	  POOL_CACHE_BYTES_MIN,
	  POOL_SIZE_MAX, "bytes from 4096 to 1g with an optional k, m or g suffix", NULL },
	{ "cluster", "POOL_CLUSTER", UINT_FIELD(cluster), SETTING_COUNT, 1, POOL_CLUSTER_MAX,
	  "objects per magazine from 1 to 64", NULL },
	{ "decay_ms", "POOL_DECAY_MS", UINT_FIELD(decay_ms), SETTING_COUNT, 1, POOL_DECAY_MS_MAX,
	  "milliseconds from 1 to 3600000", NULL },
	{ "release", "POOL_RELEASE", UINT_FIELD(release), SETTING_CHOICE, POOL_RELEASE_THREAD,
	  POOL_RELEASE_CALLER, "'thread' or 'caller'",
	  (const char *const[]){ "thread", "caller", NULL } },
};
#define NB_SETTINGS (sizeof(settings) / sizeof(settings[0]))

static struct pool_config config;
static unsigned int env_said;            /* settings whose bad value start-up reported (bits) */
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static int config_frozen;

static unsigned long get_field(const struct pool_config *c, const struct setting *s)
{
	const char *p = (const char *)c + s->offset;

	return s->is_size ? (unsigned long)*(const size_t *)p : *(const unsigned int *)p;
}

static void set_field(struct pool_config *c, const struct setting *s, unsigned long v)
{
	char *p = (char *)c + s->offset;

	if (s->is_size)
		*(size_t *)p = (size_t)v;
	else
		*(unsigned int *)p = (unsigned int)v;
}

static int in_bounds(const struct setting *s, unsigned long v)
{
	if (v < s->min || v > s->max)
		return 0;
	return s->kind != SETTING_POW2 || !(v & (v - 1));
}

/*
 * An environment value: digits only, and for SETTING_BYTES an optional k/m/g suffix (powers of
 * 1024). 0 and *out, or -1 for anything else (empty, sign, trailing garbage, overflow).
 */
static int parse_env(const struct setting *s, const char *str, unsigned long *out)
{
	unsigned long long v;
	unsigned long i;

	if (s->kind == SETTING_CHOICE) {
		for (i = 0; str && s->words[i]; i++) {
			if (!strcmp(str, s->words[i])) {
				*out = i + 1;
				return 0;
			}
		}
		return -1;
	}
	if (!str || pool__parse_decimal(str, strlen(str), s->kind == SETTING_BYTES, s->max,
	                                &v) < 0)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

static void config_load(void)
{
	const struct pool_topology *t = pool_topology();
	unsigned int i;

	config.buckets = t->default_buckets;
	config.cache_bytes = t->default_cache_bytes;
	config.cluster = POOL_CLUSTER_DEFAULT;
	config.decay_ms = POOL_DECAY_MS_DEF;
	config.release = POOL_RELEASE_THREAD;
	for (i = 0; i < NB_SETTINGS; i++) {
		const struct setting *s = &settings[i];
		const char *env = s->env ? getenv(s->env) : NULL;
		unsigned long v;

		if (!env)
			continue;
		if (parse_env(s, env, &v) == 0 && in_bounds(s, v))
			set_field(&config, s, v);
		else if (env_said & (1u << i))
			;       /* said at start-up: once is enough */
		else if (s->kind == SETTING_CHOICE)
			fprintf(stderr, "libpool: ignoring %s='%s': expected %s; keeping '%s'\n",
			        s->env, env, s->expect, s->words[get_field(&config, s) - 1]);
		else
			fprintf(stderr, "libpool: ignoring %s='%s': expected %s; keeping %lu\n",
			        s->env, env, s->expect, get_field(&config, s));
	}
}

void pool__config_check_env(void)
{
	unsigned int i;

	for (i = 0; i < NB_SETTINGS; i++) {
		const struct setting *s = &settings[i];
		const char *env = s->env ? getenv(s->env) : NULL;
		unsigned long v;

		if (!env || (parse_env(s, env, &v) == 0 && in_bounds(s, v)))
			continue;
		env_said |= 1u << i;
		fprintf(stderr, "libpool: ignoring %s='%s': expected %s; the default applies\n",
		        s->env, env, s->expect);
	}
}

const struct pool_config *pool__config_get(void)
{
	pthread_once(&config_once, config_load);
	return &config;
}

void pool__config_freeze(void)
{
	pool__config_get();
	pthread_mutex_lock(&config_lock);
	config_frozen = 1;
	pthread_mutex_unlock(&config_lock);
}

/*
 * struct pool_config ends with `release` from 0.3 on. A program built against the headers of
 * 0.1 or 0.2 passes the 24 bytes it knows, so pool_configure() and pool_get_config() have two
 * versions: LIBPOOL_0.1 (abi/libpool.map), which read and write that much only, and
 * LIBPOOL_0.3, which programs built against these headers bind to. Two .symver directives name
 * them (the version script's rule for a changed interface).
 */
struct pool_config_0_1 {
	unsigned int buckets;
	size_t cache_bytes;
	unsigned int cluster;
	unsigned int decay_ms;
};

POOL_API int pool__configure_0_3(const struct pool_config *cfg);
POOL_API void pool__get_config_0_3(struct pool_config *cfg);
POOL_API int pool__configure_0_1(const struct pool_config_0_1 *cfg);
POOL_API void pool__get_config_0_1(struct pool_config_0_1 *cfg);
__asm__(".symver pool__configure_0_3, pool_configure@@LIBPOOL_0.3");
__asm__(".symver pool__get_config_0_3, pool_get_config@@LIBPOOL_0.3");
__asm__(".symver pool__configure_0_1, pool_configure@LIBPOOL_0.1");
__asm__(".symver pool__get_config_0_1, pool_get_config@LIBPOOL_0.1");

int pool__configure_0_3(const struct pool_config *cfg)
{
	unsigned int i;
	int ret = 0;

	if (!cfg) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < NB_SETTINGS; i++) {
		unsigned long v = get_field(cfg, &settings[i]);

		if (v && !in_bounds(&settings[i], v)) {
			errno = EINVAL;
			return -1;
		}
	}
	pool__config_get();
	pthread_mutex_lock(&config_lock);
	if (config_frozen) {
		errno = EBUSY;
		ret = -1;
	} else {
		for (i = 0; i < NB_SETTINGS; i++) {
			unsigned long v = get_field(cfg, &settings[i]);

			if (v)
				set_field(&config, &settings[i], v);
		}
	}
	pthread_mutex_unlock(&config_lock);
	return ret;
}

void pool__get_config_0_3(struct pool_config *cfg)
{
	const struct pool_config *c = pool__config_get();

	if (!cfg)
		return;
	pthread_mutex_lock(&config_lock);
	*cfg = *c;
	pthread_mutex_unlock(&config_lock);
}

int pool__configure_0_1(const struct pool_config_0_1 *cfg)
{
	struct pool_config c = { 0 };

	if (!cfg)
		return pool__configure_0_3(NULL);
	c.buckets = cfg->buckets;
	c.cache_bytes = cfg->cache_bytes;
	c.cluster = cfg->cluster;
	c.decay_ms = cfg->decay_ms;
	return pool__configure_0_3(&c);
}

void pool__get_config_0_1(struct pool_config_0_1 *cfg)
{
	struct pool_config c;

	if (!cfg)
		return;
	pool__get_config_0_3(&c);
	cfg->buckets = c.buckets;
	cfg->cache_bytes = c.cache_bytes;
	cfg->cluster = c.cluster;
	cfg->decay_ms = c.decay_ms;
}
