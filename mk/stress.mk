# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/stress.mk - the stress harness (tools/pool-stress.c). The benchmarks are in mk/bench.mk.
#
# Targets
#   make stress          the main job: tools/pool-stress with 48 threads on every workload
#                        (local, pipeline, bleed, mixed, spike), 10 s each; fails on any
#                        corruption, NULL it did not ask for or wrong final accounting (see
#                        doc/stress.md). Then every run-time debugging switch flipped 100
#                        times under load (tests/check_switches.c; make check flips each 20
#                        times); then 1000 exits of a program whose detached threads still
#                        allocate from POOL_DECLARE pools (tests/check_exit.c; make check: 50).
#
# Variables
#   STRESS_ARGS="..."    options for pool-stress (default: --threads 48 --seconds 10),
#                        e.g. STRESS_ARGS="--seconds 2 -dMtag,integrity"

STRESS_ARGS ?= --threads 48 --seconds 10

.PHONY: stress

stress: deps lib $(BUILD)/tools/pool-stress $(BUILD)/tests/check_switches \
        $(BUILD)/tests/check_exit
	$(BUILD)/tools/pool-stress $(STRESS_ARGS)
	POOL_SWITCH_FLIPS=100 $(BUILD)/tests/check_switches
	POOL_EXIT_RUNS=1000 $(BUILD)/tests/check_exit
