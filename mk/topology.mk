# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/topology.mk - topology targets (src/config/topology.c, tools/pool-topology.c, doc/tuning.md).
#
# Targets
#   make topology       print what libpool detects on this machine (hwloc) and the defaults it
#                       derives: buckets per pool and per-thread cache budget
#   make tuning-table   regenerate the table of derived defaults in doc/tuning.md (the lines
#                       between "<!-- tuning-table begin -->" and "<!-- tuning-table end -->")
#                       by running `pool-topology --table` on every XML in $(TOPOLOGY_DIR);
#                       tests/config/test_tuning_table.sh fails when the committed table is stale
#
# Variables
#   TOPOLOGY_DIR=tests/topologies
#                       the hwloc XML exports of big machines (tests/topologies/README.md says
#                       where they come from); the tests read the same directory from
#                       POOL_TOPOLOGY_DIR (default: the same path)

TOPOLOGY_DIR ?= tests/topologies

.PHONY: topology tuning-table

topology: deps $(BUILD)/tools/pool-topology
	$(Q)$(BUILD)/tools/pool-topology

tuning-table: deps $(BUILD)/tools/pool-topology
	$(Q)test -d $(TOPOLOGY_DIR) || { echo "tuning-table: no directory $(TOPOLOGY_DIR)"; exit 1; }
	$(Q)$(BUILD)/tools/pool-topology --table $(sort $(wildcard $(TOPOLOGY_DIR)/*.xml)) \
		> $(BUILD)/tuning-table.md
	$(Q)awk -v table=$(BUILD)/tuning-table.md ' \
		/<!-- tuning-table end -->/ { skip = 0 } \
		!skip { print } \
		/<!-- tuning-table begin -->/ { while ((getline l < table) > 0) print l; skip = 1 }' \
		doc/tuning.md > $(BUILD)/tuning.md.new
	$(Q)grep -q '<!-- tuning-table end -->' $(BUILD)/tuning.md.new || \
		{ echo "tuning-table: markers missing in doc/tuning.md"; exit 1; }
	$(Q)mv $(BUILD)/tuning.md.new doc/tuning.md
	@echo "doc/tuning.md: table regenerated from $(TOPOLOGY_DIR)"

# `make install` installs pool-topology and its man page (doc/pool-topology.1) with the others.
INSTALL_BIN += pool-topology
