# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/stress.mk - the stress harness and the benchmarks (tools/pool-stress.c, tools/pool-bench*.c).
#
# Targets
#   make stress          the main job: tools/pool-stress with 48 threads on every workload
#                        (local, pipeline, bleed, mixed, spike), 10 s each; fails on any
#                        corruption, NULL it did not ask for or wrong final accounting (see
#                        doc/stress.md). Then every run-time debugging switch flipped 100
#                        times under load (tests/check_switches.c; make check flips each 20
#                        times); then 1000 exits of a program whose detached threads still
#                        allocate from POOL_DECLARE pools (tests/check_exit.c; make check: 50).
#   make bench           tools/pool-bench: libpool side by side with glibc malloc, jemalloc,
#                        tcmalloc, mimalloc and DPDK's rte_mempool, median of 5 runs each;
#                        prints the table and the targets, writes $(BUILD)/bench.json and the
#                        plot $(BUILD)/bench.png. See doc/benchmarks.md.
#   make bench-instructions
#                        the pair scenario under valgrind --tool=callgrind: instructions per
#                        alloc+free pair, for libpool and each general allocator.
#   make bench-deps      install (as root) or name the Debian packages that `make bench` and
#                        `make bench-instructions` use: $(BENCH_PKGS)
#
# Variables
#   STRESS_ARGS="..."    options for pool-stress (default: --threads 48 --seconds 10),
#                        e.g. STRESS_ARGS="--seconds 2 -dMtag,integrity"
#   BENCH_ARGS="..."     extra options for pool-bench (e.g. BENCH_ARGS="--reps 9 --size 64")
#
# Build notes
#   pool-bench-malloc is linked without libpool and without jemalloc, so that its malloc() is
#   glibc's unless pool-bench preloads another allocator. pool-bench-dpdk is built with the
#   flags of `pkg-config libdpdk` (including its -march) when libdpdk-dev is installed; without
#   it the target only prints why, and pool-bench skips the dpdk backend. With that -march,
#   pool-bench-dpdk runs only on CPUs like the build machine's: it is not a portable binary.
#   `make install` puts both children in $(LIBEXECDIR)/libpool/; pool-bench looks for them next
#   to itself first (the build tree), then there (POOL_BENCH_HELPER_DIR).

STRESS_ARGS ?= --threads 48 --seconds 10
BENCH_ARGS  ?=
BENCH_PKGS  := libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 libdpdk-dev gnuplot-nox valgrind

.PHONY: stress bench bench-instructions bench-deps

stress: deps lib $(BUILD)/tools/pool-stress $(BUILD)/tests/check_switches \
        $(BUILD)/tests/check_exit
	$(BUILD)/tools/pool-stress $(STRESS_ARGS)
	POOL_SWITCH_FLIPS=100 $(BUILD)/tests/check_switches
	POOL_EXIT_RUNS=1000 $(BUILD)/tests/check_exit

bench: deps lib tools
	$(BUILD)/tools/pool-bench --json $(BUILD)/bench.json --plot $(BUILD)/bench.png $(BENCH_ARGS)

bench-instructions: deps lib tools
	$(BUILD)/tools/pool-bench --instructions $(BENCH_ARGS)

bench-deps:
	@missing=""; for p in $(BENCH_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || \
	    missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "bench-deps: installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "bench-deps: run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# pool-bench's children are helpers: installed in $(LIBEXECDIR)/libpool, compiled into pool-bench.
INSTALL_LIBEXEC += pool-bench-malloc
TOOL_CFLAGS_pool-bench = -DPOOL_BENCH_HELPER_DIR='"$(LIBEXECDIR)/libpool"'
$(BUILD)/obj/tools/pool-bench.o: $(DIRS_STAMP)

# The general allocators' child: no libpool, no jemalloc, only the C library.
$(BUILD)/tools/pool-bench-malloc: tools/pool-bench-malloc.c tools/pool-bench.h | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) -Itools -o $@ $< $(ALL_LDFLAGS) -lpthread -ldl

# DPDK's child, when libdpdk-dev is installed.
ifneq ($(shell pkg-config --exists libdpdk 2>/dev/null && echo yes),)
INSTALL_LIBEXEC += pool-bench-dpdk
DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null | sed -e 's/-I/-isystem /g')
$(BUILD)/tools/pool-bench-dpdk: tools/pool-bench-dpdk.c tools/pool-bench.h | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) $(DPDK_CFLAGS) -Itools -o $@ $< $(ALL_LDFLAGS) \
		-lrte_mempool -lrte_ring -lrte_eal -lpthread
else
$(BUILD)/tools/pool-bench-dpdk: tools/pool-bench-dpdk.c
	@echo "  SKIP    $@: libdpdk-dev is not installed; pool-bench will skip the dpdk backend"
endif

# pool-bench runs its children from its own directory in the build tree.
$(BUILD)/tools/pool-bench: $(BUILD)/tools/pool-bench-malloc $(BUILD)/tools/pool-bench-dpdk
