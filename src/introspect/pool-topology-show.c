/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * `pools topology`: what pool_topology() found, the defaults derived from it and the
 * configuration in effect, as text (introspection layer).
 */
#include <stdio.h>

#include <pool/pool.h>

#include "os/pool-os.h"
#include "config/pool-topology.h"

static const char *human(char *buf, size_t len, size_t v)
{
	static const char *unit[] = { "bytes", "KiB", "MiB", "GiB" };
	unsigned int u = 0;
	double d = (double)v;

	while (u < 3 && d >= 1024.0) {
		d /= 1024.0;
		u++;
	}
	if (d == (double)(size_t)d)
		snprintf(buf, len, "%zu %s", (size_t)d, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", d, unit[u]);
	return buf;
}

POOL_API void pool_topology_show(FILE *out)
{
	const struct pool_topology *t;
	struct pool_config cfg;
	char a[32], b[32], c[32];

	if (!out)
		return;
	t = pool_topology();
	switch (t->source) {
	case POOL_TOPO_SYSTEM:
		fprintf(out, "topology: this machine (hwloc API %u.%u, I/O objects filtered out)",
		        pool__topology_hwloc_api() >> 16, (pool__topology_hwloc_api() >> 8) & 0xff);
		break;
	case POOL_TOPO_XML:
		fprintf(out, "topology: XML file %s (HWLOC_XMLFILE; not this machine)", t->xml_file);
		break;
	default:
		fprintf(out, "topology: sysconf() fallback, hwloc could not load it%s%s%s",
		        t->xml_file ? " (HWLOC_XMLFILE='" : "", t->xml_file ? t->xml_file : "",
		        t->xml_file ? "')" : "");
		break;
	}
	fprintf(out, ", loaded in %lu.%03lu ms (%lu.%03lu ms of CPU)\n", t->load_us / 1000,
	        t->load_us % 1000, t->load_cpu_us / 1000, t->load_cpu_us % 1000);
	fprintf(out, "  PUs %u, cores %u, packages %u, NUMA nodes %u\n", t->pus, t->cores,
	        t->packages, t->numa_nodes);
	fprintf(out, "  cache line %u bytes, L1d %s, L2 %s x %u, L3 %s x %u\n", t->cache_line,
	        human(a, sizeof(a), t->l1d_bytes), human(b, sizeof(b), t->l2_bytes), t->l2_count,
	        human(c, sizeof(c), t->l3_bytes), t->l3_count);
	fprintf(out, "defaults derived from it:\n");
	fprintf(out, "  buckets per pool    %u  (largest power of two <= %u PUs, within %u..%u)\n",
	        t->default_buckets, t->pus, POOL_TOPO_BUCKETS_MIN, POOL_TOPO_BUCKETS_MAX);
	if (t->l2_per_pu_bytes)
		fprintf(out, "  thread cache budget %s  (L2 per PU %s, rounded down to 4 KiB, "
		        "within %u..%u KiB)\n", human(a, sizeof(a), t->default_cache_bytes),
		        human(b, sizeof(b), t->l2_per_pu_bytes), POOL_TOPO_CACHE_MIN / 1024,
		        POOL_TOPO_CACHE_MAX / 1024);
	else
		fprintf(out, "  thread cache budget %s  (no L2 size known)\n",
		        human(a, sizeof(a), t->default_cache_bytes));
	pool_get_config(&cfg);
	fprintf(out, "in effect (after POOL_BUCKETS, POOL_CACHE_SIZE, POOL_CLUSTER, POOL_DECAY_MS, "
	        "pool_configure()):\n");
	fprintf(out, "  buckets per pool     %u\n", cfg.buckets);
	fprintf(out, "  thread cache budget  %s\n", human(a, sizeof(a), cfg.cache_bytes));
	fprintf(out, "  objects per magazine %u\n", cfg.cluster);
	fprintf(out, "  demand window        %u ms\n", cfg.decay_ms);
	fprintf(out, "  OS layer             %s\n", pool__os_name());
}

