# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/stress.mk - the stress harness (tools/pool-stress*). The benchmarks are in mk/bench.mk.
#
# Targets
#   make stress          the main job: tools/pool-stress with 48 threads on every workload
#                        (local, pipeline, bleed, mixed, spike), 10 s each; fails on any
#                        corruption, NULL it did not ask for or wrong final accounting (see
#                        doc/stress.md). Then every run-time debugging switch flipped 100
#                        times under load (tests/debug/check_switches.c; make check flips each 20
#                        times); then 1000 exits of a program whose detached threads still
#                        allocate from POOL_DECLARE pools (tests/core/check_exit.c; make check: 50).
#   make soak            the soak: pool-stress's soak workload for SOAK_SECONDS (5 minutes) at
#                        48 threads: workers that live 0.2-3 s and are replaced, objects handed
#                        between threads, and a chaos thread that flips the run-time debugging
#                        switches (pool_parse_debugging) and calls pool_gc(), pool_trim(),
#                        pool_flush(), pool_set_limit() and pools show at random every 1-4 ms.
#                        Fails on any corruption, a starved thread, wrong books at the end
#                        (used == 0, allocated == shared_free + cached once flushed) or an RSS
#                        more than 24 MiB above its start once every pool is flushed (the
#                        bound and why: doc/stress.md). CI runs it for 25 s.
#
# Variables
#   STRESS_ARGS="..."    options for pool-stress (default: --threads 48 --seconds 10),
#                        e.g. STRESS_ARGS="--seconds 2 -dMtag,integrity"
#   SOAK_SECONDS=300     how long make soak runs, in seconds (decimals allowed)
#   SOAK_ARGS="..."      more options for the soak, e.g. SOAK_ARGS="-dMtag,caller"

STRESS_ARGS ?= --threads 48 --seconds 10
SOAK_SECONDS ?= 300
SOAK_ARGS ?=

.PHONY: stress soak

# pool-stress is tools/pool-stress.c (the driver) and tools/pool-stress-workloads.c (the threads).
TOOL_PARTS_pool-stress := tools/pool-stress-workloads.c
$(BUILD)/tools/pool-stress $(BUILD)/inst/pool-stress: $(call tool_objs,$(TOOL_PARTS_pool-stress))

stress: deps lib $(BUILD)/tools/pool-stress $(BUILD)/tests/debug/check_switches \
        $(BUILD)/tests/core/check_exit
	$(BUILD)/tools/pool-stress $(STRESS_ARGS)
	POOL_SWITCH_FLIPS=100 $(BUILD)/tests/debug/check_switches
	POOL_EXIT_RUNS=1000 $(BUILD)/tests/core/check_exit

soak: deps lib $(BUILD)/tools/pool-stress
	$(BUILD)/tools/pool-stress --threads 48 --seconds $(SOAK_SECONDS) --workload soak $(SOAK_ARGS)
