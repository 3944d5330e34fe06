/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Topology internals (topology.c) for the layers above it. Private header; the public part is
 * pool_topology() and pool_topology_bind_thread() in pool.h.
 */
#ifndef POOL_SRC_POOL_TOPOLOGY_H
#define POOL_SRC_POOL_TOPOLOGY_H

/* The hwloc API version the library was built with (HWLOC_API_VERSION, 0x00020b00 = 2.11). */
unsigned int pool__topology_hwloc_api(void);

#endif
