# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/memcached.mk - memcached 1.6.18 on libpool (contrib/memcached/README.md).
#
# Targets
#   make memcached       fetch Debian's memcached 1.6.18 source package (apt-get source, with
#                        a private apt configuration holding deb-src lines for this machine's
#                        Debian mirror: the machine's own apt sources are not changed), apply
#                        contrib/memcached/memcached-libpool.patch, and build it twice, as
#                        Debian configures it: $(MEMCACHED_DIR)/memcached, its slab allocator
#                        replaced by contrib/memcached/slabs-pool.c on this tree's libpool
#                        ($(BUILD)/libpool.so, by rpath; SAN= is refused), and
#                        $(MEMCACHED_DIR)/memcached-slabs, memcached's own allocator. About 2
#                        minutes on 2 cores the first time.
#   make memcached-check memcached's own test suite (its C tests, then prove over t/*.t) on
#                        the libpool build, without the tests of the features that build turns
#                        off (contrib/memcached/skip.list); ends with prove's Result: line.
#                        About 7 minutes on 2 cores, mostly waiting (MEMCACHED_CHECK_JOBS=4:
#                        about 4).
#   make memcached-check-debug
#                        libpool's debugging in a real server: the suite again with
#                        POOL_DEBUG=integrity,tag, and with POOL_DEBUG=uaf (without
#                        t/lru-crawler.t, which outgrows uaf's mappings: skip.list); then a
#                        planted use after free in a test build of the contribution
#                        (contrib/memcached/planted-uaf.sh), which must be reported naming the
#                        pool and the caller
#   make memcached-bench both builds side by side under the same load (contrib/memcached/
#                        bench.sh): throughput, p50/p99/p99.9 latency, CPU time, RSS over time
#                        (plotted with gnuplot), pools show and pools profile of the libpool
#                        run, and the memory given back after flush_all and a quiet minute.
#                        Writes $(MEMCACHED_DIR)/bench/ (summary.txt, rss.png, the logs).
#                        About 5 minutes with the defaults (per build: a 10-15 s fill, 30 s
#                        mixed, 10 s burst, 60 s quiet); doc/benchmarks.md, "memcached"
#   make memcached-deps  install (as root) or name the Debian packages the targets above use:
#                        dpkg-dev debian-archive-keyring patch libevent-dev libssl-dev
#                        libsasl2-dev perl (and gnuplot-nox for the benchmark); the memcached
#                        targets run it themselves, and as root libpool's own build packages
#                        are installed too (as make check does)
#
# Variables
#   MEMCACHED_DIR=build/memcached   where the source, the two trees and the results go
#   MEMCACHED_CHECK_JOBS=1          test files prove runs at once (memcached's make test: 1)
#   MEMCACHED_CHECK_BUILD=pool      pool: the libpool build; slabs: memcached's own allocator
#                                   (every test runs there, skip.list's too)
#   MEMCACHED_TESTS=                test files to run instead of the whole suite (t/<name>.t ...;
#                                   memcached-check-debug runs them under both modes)
#   MEMCACHED_CHECK_DEBUG=          POOL_DEBUG for make memcached-check (e.g. integrity,tag;
#                                   default: POOL_DEBUG from the environment)
#   MEMCACHED_BENCH_ARGS=           options for contrib/memcached/bench.sh, e.g.
#                                   "--seconds 30 --quiet 60 --mem 64 --threads 4" (its header)

MEMCACHED_DIR         ?= build/memcached
MEMCACHED_CHECK_JOBS  ?= 1
MEMCACHED_CHECK_BUILD ?= pool
MEMCACHED_TESTS       ?=
MEMCACHED_CHECK_DEBUG ?= $(POOL_DEBUG)
MEMCACHED_BENCH_ARGS  ?=

# Fetch (dpkg-dev's dpkg-source, the archive's keyring), build (as Debian configures it:
# --enable-sasl --enable-tls), test (perl's prove and Test::More; every other module the suite
# loads is in perl's own). mc-load, the benchmark's load generator, needs only gcc.
MEMCACHED_PKGS := dpkg-dev debian-archive-keyring patch libevent-dev libssl-dev libsasl2-dev perl
MEMCACHED_BENCH_PKGS := gnuplot-nox

# As root these targets install what they need, libpool's build packages included, as make
# check does (the Makefile's deps target reads DEPS_INSTALL when it runs).
MEMCACHED_GOALS := memcached memcached-check memcached-check-debug memcached-bench memcached-deps
DEPS_INSTALL := $(if $(filter $(MEMCACHED_GOALS),$(MAKECMDGOALS)),1,$(DEPS_INSTALL))

MC_LOAD := $(MEMCACHED_DIR)/mc-load

.PHONY: memcached memcached-check memcached-check-debug memcached-bench memcached-deps

# after deps: never two apt-get at once
memcached-deps: deps
	@pkgs="$(MEMCACHED_PKGS) \
	  $(if $(filter memcached-bench,$(MAKECMDGOALS)),$(MEMCACHED_BENCH_PKGS))"; \
	missing=""; for p in $$pkgs; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || \
	    missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "memcached-deps: installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $$missing >/dev/null || \
	      { echo "memcached-deps: apt-get install$$missing failed"; exit 1; }; \
	  else \
	    echo "memcached-deps: missing packages; run: sudo apt-get update &&" \
	      "sudo apt-get install -y --no-install-recommends$$missing"; exit 1; \
	  fi; \
	fi

# A sanitizer build of libpool cannot be linked into a memcached built without the sanitizer.
ifneq ($(SAN),)
ifneq ($(filter $(MEMCACHED_GOALS),$(MAKECMDGOALS)),)
$(error memcached targets: SAN=$(SAN) is not supported (memcached is not built with the \
	sanitizer); run them without SAN=)
endif
endif

# The trees rebuild what changed (build.sh); the recipe always runs, make there decides.
memcached: memcached-deps lib
	+$(Q)CC="$(CC)" MAKE="$(MAKE)" sh contrib/memcached/build.sh $(BUILD) $(MEMCACHED_DIR) pool slabs

memcached-check: memcached
	$(Q)POOL_DEBUG="$(MEMCACHED_CHECK_DEBUG)" MEMCACHED_CHECK_JOBS=$(MEMCACHED_CHECK_JOBS) \
		sh contrib/memcached/check.sh $(MEMCACHED_DIR) $(MEMCACHED_CHECK_BUILD) $(MEMCACHED_TESTS)

memcached-check-debug: memcached
	+$(Q)CC="$(CC)" MAKE="$(MAKE)" sh contrib/memcached/build.sh $(BUILD) $(MEMCACHED_DIR) planted
	$(Q)POOL_DEBUG=integrity,tag MEMCACHED_CHECK_JOBS=$(MEMCACHED_CHECK_JOBS) \
		sh contrib/memcached/check.sh $(MEMCACHED_DIR) pool $(MEMCACHED_TESTS)
	$(Q)POOL_DEBUG=uaf MEMCACHED_CHECK_JOBS=$(MEMCACHED_CHECK_JOBS) \
		sh contrib/memcached/check.sh $(MEMCACHED_DIR) pool $(MEMCACHED_TESTS)
	$(Q)sh contrib/memcached/planted-uaf.sh $(MEMCACHED_DIR)

$(MC_LOAD): contrib/memcached/mc-load.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -O2 -g $(WARN) $(CFLAGS) -o $@ $< $(LDFLAGS) -lpthread -lm

memcached-bench: memcached $(MC_LOAD) tools
	$(Q)sh contrib/memcached/bench.sh $(BUILD) $(MEMCACHED_DIR) $(MEMCACHED_BENCH_ARGS)
