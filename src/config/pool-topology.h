/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Topology internals (topology.c) for the layers above it. Private header; the public part is
 * pool_topology() and pool_topology_bind_thread() in pool.h.
 */
#ifndef POOL_SRC_POOL_TOPOLOGY_H
#define POOL_SRC_POOL_TOPOLOGY_H

/*
 * The API version of the hwloc the topology was read with (hwloc_get_api_version(), 0x00020b00 =
 * 2.11); 0 when hwloc could not be loaded. Reads the topology first if it was not yet.
 */
unsigned int pool__topology_hwloc_api(void);

/*
 * The soname the topology's reading loads hwloc from (dlopen(3)): "libhwloc.so.15". libpool
 * does not link hwloc; where it cannot be loaded, the topology comes from sysconf(), said once
 * on stderr. Internal tests point it at a name that does not exist before the topology is read,
 * to check that fallback; nothing else writes it.
 */
extern const char *pool__hwloc_soname;

#endif
