# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/bench.mk - the benchmarks and the profile (tools/pool-bench*, doc/benchmarks.md).
#
# Targets
#   make bench           tools/pool-bench: libpool side by side with glibc malloc, jemalloc,
#                        tcmalloc, mimalloc and DPDK's rte_mempool; 7 samples of at least
#                        200 ms per figure (3 in the server table: the server sweep, larson,
#                        xmalloc and the public shapes at 2 and 8 threads), median [min-max],
#                        load average and CPU model in the header; prints the tables and the
#                        project's targets (the groups of mk/bench-targets, which pool-bench
#                        alone does not print), writes $(BUILD)/bench.json and the plot
#                        $(BUILD)/bench.png. 12 to 15 minutes on 2 cores, 4 of them the
#                        server table. See doc/benchmarks.md.
#   make bench-quick     the same in 15-30 s (3 short samples, 64 B, the server table at 2
#                        threads): figures for development, not for publication
#   make bench-instructions
#                        the pair scenario under valgrind --tool=callgrind: instructions per
#                        alloc+free pair, for libpool and each general allocator.
#   make bench-versus OTHER=../base-0.1.0/build/cc/tools/pool-bench
#                        libpool against another build of itself (an earlier release, built in a
#                        worktree of its own), in alternating runs pinned to two CPUs
#                        (mk/bench-versus.sh): per figure, the median ratio of the rounds;
#                        VERSUS_ROUNDS=5, VERSUS_PIN=0,1, VERSUS_SCENARIOS=pipeline,
#                        VERSUS_SIZES=64,192,16384
#   make bench-return    pool-bench --return-curve: RSS (and libpool's allocated bytes) against
#                        time after a burst of 4 threads x 6000 objects of 16 KiB freed under a
#                        light load, libpool next to jemalloc and mimalloc, and the releaser's
#                        idle CPU; prints the table, plots $(BUILD)/return.png (RETURN_PLOT=).
#                        About 2 minutes. See doc/benchmarks.md, "Memory return".
#   make profile         where a backend's time goes in one scenario (mk/profile.sh): perf
#                        record of its child (perf report --stdio into $(BUILD)/profile.txt),
#                        or callgrind where perf cannot sample (callgrind_annotate into the same
#                        file); PROFILER=cachegrind: the caches simulated (cg_annotate), and
#                        "D1 misses per allocation: X, LL misses per allocation: Y";
#                        PROFILER=perf-stat: the hardware cache events per allocation, or
#                        cachegrind where perf cannot count them (most virtual machines)
#   make bench-deps      install (as root) or name the Debian packages that `make bench`,
#                        `make bench-instructions` and `make profile` use: $(BENCH_PKGS)
#
# Variables
#   BENCH_ARGS="..."     extra options for pool-bench (e.g. BENCH_ARGS="--pin 0,1 --reps 9",
#                        BENCH_ARGS="--scenario server"); see doc/pool-bench.1
#   SCENARIO=pipeline    profile: the pool-bench scenario (pair, batch, bulk, pipeline, threads,
#                        server, false-sharing, larson, xmalloc); THREADS=8 its threads
#                        (pipeline: half producers, half consumers), SIZE=64 the object size,
#                        COUNT= the units (default: a few seconds natively, the least the
#                        scenario runs or a tenth under valgrind), PROFILER=perf|callgrind|
#                        cachegrind|perf-stat (default: perf when it can sample here),
#                        BACKEND=libpool|glibc|jemalloc|tcmalloc|mimalloc|dpdk (default
#                        libpool; the mallocs through LD_PRELOAD, as pool-bench runs them),
#                        LIVE=, LIFETIME=short|long, TEARDOWN=burst|handover: the server's
#                        live objects per thread and shape (default 2048, short, burst),
#                        CACHEGRIND_LL=33554432,16,64 cachegrind's last-level cache (bytes,
#                        ways, line: 32 MiB 16-way, the L3 one core of an AMD EPYC sees; this
#                        VM reports a 384 MiB direct-mapped L3; empty: what valgrind detects)
#   e.g. make profile PROFILER=cachegrind SCENARIO=server THREADS=8 LIVE=65536 BACKEND=mimalloc
#
# Build notes
#   pool-bench-malloc is linked without libpool and without jemalloc, so that its malloc() is
#   glibc's unless pool-bench preloads another allocator. pool-bench-dpdk is built with the
#   flags of `pkg-config libdpdk` (including its -march) when libdpdk-dev is installed; without
#   it the target only prints why, and pool-bench skips the dpdk backend. With that -march,
#   pool-bench-dpdk runs only on CPUs like the build machine's: it is not a portable binary.
#   `make install` puts both children in $(LIBEXECDIR)/libpool/; pool-bench looks for them next
#   to itself first (the build tree), then there (POOL_BENCH_HELPER_DIR).

BENCH_ARGS  ?=
BENCH_PKGS  := libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 libdpdk-dev gnuplot-nox valgrind \
               linux-perf
# tests/tools/test_bench.sh runs every backend but perf (libjemalloc2 comes with libjemalloc-dev),
# plots with gnuplot and counts instructions with valgrind: make check installs them.
CHECK_PKGS  += libtcmalloc-minimal4 libmimalloc2.0 libdpdk-dev gnuplot-nox
SCENARIO    ?= pipeline
THREADS     ?= 8
SIZE        ?= 64
COUNT       ?=
PROFILER    ?=
BACKEND     ?= libpool
LIVE        ?=
LIFETIME    ?=
TEARDOWN    ?=
CACHEGRIND_LL ?= 33554432,16,64
OTHER       ?=
VERSUS_ROUNDS ?= 5
VERSUS_PIN  ?= 0,1
VERSUS_SCENARIOS ?= pipeline
VERSUS_SIZES ?= 64,192,16384
BENCH_BIN   := $(BUILD)/tools/pool-bench
# The project's targets: pool-bench prints the groups this file lists (see the file).
BENCH_TARGETS := --targets mk/bench-targets

RETURN_PLOT ?= $(BUILD)/return.png

.PHONY: bench bench-quick bench-instructions bench-return bench-deps bench-versus profile

bench: deps lib tools
	$(BENCH_BIN) $(BENCH_TARGETS) --json $(BUILD)/bench.json --plot $(BUILD)/bench.png $(BENCH_ARGS)

bench-quick: deps lib tools
	$(BENCH_BIN) $(BENCH_TARGETS) --quick --json $(BUILD)/bench.json $(BENCH_ARGS)

bench-instructions: deps lib tools
	$(BENCH_BIN) $(BENCH_TARGETS) --instructions $(BENCH_ARGS)

bench-versus: deps lib tools
	@[ -n "$(OTHER)" ] || { echo "bench-versus: OTHER=<another build's tools/pool-bench>"; exit 2; }
	$(Q)sh mk/bench-versus.sh "$(BENCH_BIN)" "$(OTHER)" "$(VERSUS_ROUNDS)" "$(VERSUS_PIN)" \
		"$(VERSUS_SCENARIOS)" "$(VERSUS_SIZES)"

bench-return: deps lib tools
	$(BENCH_BIN) --return-curve $(RETURN_PLOT) $(BENCH_ARGS)

# One child under a profiler (mk/profile.sh): perf record, callgrind, cachegrind (cache misses
# per allocation) or perf stat of the cache events (cachegrind where perf cannot count them).
profile: deps lib tools
	$(Q)sh mk/profile.sh "$(BUILD)" "$(PROFILER)" "$(BACKEND)" "$(SCENARIO)" "$(THREADS)" \
		"$(SIZE)" "$(COUNT)" "$(LIVE)" "$(LIFETIME)" "$(TEARDOWN)" "$(CACHEGRIND_LL)"

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
	    echo "bench-deps: run as root: apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# pool-bench's children are helpers: installed in $(LIBEXECDIR)/libpool, compiled into pool-bench.
INSTALL_LIBEXEC += pool-bench-malloc
TOOL_CFLAGS_pool-bench = -DPOOL_BENCH_HELPER_DIR='"$(LIBEXECDIR)/libpool"'
TOOL_LIBS_pool-bench = -lm
$(BUILD)/obj/tools/pool-bench.o: $(DIRS_STAMP)

# pool-bench is tools/pool-bench.c and its parts, tools/pool-bench-*.c without a main() (the
# parent's files and the libpool child, pool-bench-libpool.c).
TOOL_PARTS_pool-bench := $(filter tools/pool-bench-%,$(TOOL_PART_SRCS))
$(BUILD)/tools/pool-bench $(BUILD)/inst/pool-bench: $(call tool_objs,$(TOOL_PARTS_pool-bench))

# The child programs' scenarios: headers compiled into each child (tools/pool-bench-child.h).
BENCH_CHILD_HEADERS := $(filter-out tools/pool-bench-parent.h,$(wildcard tools/pool-bench*.h))

# The general allocators' child: no libpool, no jemalloc, only the C library.
$(BUILD)/tools/pool-bench-malloc: tools/pool-bench-malloc.c $(BENCH_CHILD_HEADERS) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) -Itools -o $@ $< $(ALL_LDFLAGS) -lpthread -ldl

# DPDK's child, when libdpdk-dev is installed. Asked in the recipes, after `deps` (make check
# installs libdpdk-dev for tests/tools/test_bench.sh), never while make reads this file.
$(BUILD)/tools/pool-bench-dpdk: tools/pool-bench-dpdk.c $(BENCH_CHILD_HEADERS) | deps
	@mkdir -p $(dir $@)
	$(Q)if pkg-config --exists libdpdk 2>/dev/null; then \
		$(if $(Q),echo "  CC      $<";) \
		$(CC) $(BASE_CFLAGS) $$(pkg-config --cflags libdpdk | sed -e 's/-I/-isystem /g') \
			-Itools -o $@ $< $(ALL_LDFLAGS) -lrte_mempool -lrte_ring -lrte_eal -lpthread; \
	else \
		echo "  SKIP    $@: libdpdk-dev is not installed; pool-bench will skip the dpdk backend"; \
	fi

# `make install` installs DPDK's child with the other helpers when it was built.
.PHONY: install-bench-dpdk uninstall-bench-dpdk
install: install-bench-dpdk
uninstall: uninstall-bench-dpdk
install-bench-dpdk: $(BUILD)/tools/pool-bench-dpdk
	$(Q)if [ -x $< ]; then \
		echo "install -m 755 $< $(DESTDIR)$(LIBEXECDIR)/libpool/"; \
		install -d $(DESTDIR)$(LIBEXECDIR)/libpool && \
		install -m 755 $< $(DESTDIR)$(LIBEXECDIR)/libpool/; \
	fi
uninstall-bench-dpdk:
	rm -f $(DESTDIR)$(LIBEXECDIR)/libpool/pool-bench-dpdk

# pool-bench runs its children from its own directory in the build tree.
$(BUILD)/tools/pool-bench: $(BUILD)/tools/pool-bench-malloc $(BUILD)/tools/pool-bench-dpdk
