/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Process-wide configuration: defaults from the topology, environment overrides, and
 * pool_configure(), with every bound in one table (pool-config.c). Private header.
 */
#ifndef POOL_SRC_POOL_CONFIG_H
#define POOL_SRC_POOL_CONFIG_H

#include <pool/pool-t.h>

/*
 * The configuration in effect. The first call loads the defaults (pool_topology(), then
 * POOL_BUCKETS, POOL_CACHE_SIZE, POOL_CLUSTER, POOL_DECAY_MS; a bad value is reported once on
 * stderr and ignored). The fields change only through pool_configure(), which refuses once
 * pool__config_freeze() was called: a pool's buckets and cluster size are fixed at its creation,
 * a thread's budget at its first use. Thread-safe; never NULL.
 */
const struct pool_config *pool__config_get(void);

/*
 * Start-up (a library constructor): a bad value of POOL_BUCKETS, POOL_CACHE_SIZE, POOL_CLUSTER,
 * POOL_DECAY_MS or POOL_RELEASE is reported on stderr now, naming the variable, rather than at
 * the first use of the configuration (which then says nothing more of it). Reads no topology.
 */
void pool__config_check_env(void);

/* The first pool is being created: pool_configure() answers EBUSY from now on. Thread-safe. */
void pool__config_freeze(void);

#endif
