# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/haproxy.mk - HAProxy 2.6.12 on libpool (contrib/haproxy/README.md).
#
# Targets
#   make haproxy         fetch Debian's haproxy 2.6.12 source package (apt-get source, with a
#                        private apt configuration holding deb-src lines for this machine's
#                        Debian mirror: the machine's own apt sources are not changed), apply
#                        contrib/haproxy/haproxy-libpool.patch, and build it twice with the
#                        options of Debian's package: $(HAPROXY_DIR)/haproxy, USE_LIBPOOL=1,
#                        its pools on this tree's libpool through <pool/libpool.h>
#                        ($(BUILD)/libpool-embed.a, statically; SAN= is refused), and
#                        $(HAPROXY_DIR)/haproxy-stock, HAProxy's own pools. About 3 minutes of
#                        CPU on 2 cores the first time (HAProxy builds in 1.5).
#   make haproxy-check   HAProxy's own reg-tests (scripts/run-regtests.sh with Debian's
#                        varnishtest) once on the stock build, for comparison, then on the
#                        libpool build in each of $(HAPROXY_CHECK_MODES) (default: -dM;
#                        no-cache: -dMno-cache; tag: POOL_DEBUG=tag,integrity,caller; uaf:
#                        POOL_DEBUG=uaf), a test that fails re-run alone (up to
#                        $(HAPROXY_CHECK_RETRIES) times) before it counts, HAProxy on
#                        $(HAPROXY_CHECK_CPUS) CPUs (contrib/haproxy/check.sh); then a planted use after free in a test
#                        build of the port (contrib/haproxy/planted-uaf.sh), which must be
#                        reported naming the pool and the caller, and the memory return from
#                        HAProxy's own threads (contrib/haproxy/release-task.sh: nbthread
#                        threads, no libpool thread; a burst's buffers back with no call).
#                        Ends with one line per run (passed, flaked, failed) and fails if a
#                        libpool run, the planted use after free or the memory return failed.
#                        About 1 minute per run on 2 cores, at --j 2.
#   make haproxy-bench   the libpool build against the stock build on loopback
#                        (contrib/haproxy/bench.sh): the stock build as it runs (its thread
#                        cache, then glibc's malloc()), with -dMno-cache, and with jemalloc,
#                        mimalloc and tcmalloc preloaded, at nbthread 2 and 8, in three shapes
#                        (the frontend answering itself over HTTP/1.1 with wrk and over HTTP/2
#                        with h2load, a reverse proxy to a backend HAProxy) and a burst of 2000
#                        connections that ends (RSS over the idle time after it, with no call).
#                        Runs alternate between the builds, 3 rounds; prints each run with the
#                        load average (a warning when other work competes), then the markdown
#                        tables (medians [min-max]), the compact ones of doc/benchmarks.md and
#                        the targets; writes $(HAPROXY_DIR)/bench/ (summary.txt,
#                        haproxy-bench.png, show pools of the libpool runs, the logs). About 35
#                        minutes with the defaults; HAPROXY_BENCH_SECONDS=2: one round, about 8
#                        minutes; doc/benchmarks.md, "HAProxy on libpool"
#   make haproxy-deps    install (as root) or name the Debian packages the targets above use:
#                        dpkg-dev debian-archive-keyring patch libpcre2-dev libssl-dev
#                        liblua5.3-dev varnish socat openssl (and for the benchmark wrk
#                        nghttp2-client libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4
#                        gnuplot-nox iproute2); the haproxy targets run it themselves, and as
#                        root libpool's own build packages are installed too (as make check
#                        does)
#
# Variables
#   HAPROXY_DIR=build/haproxy        where the source, the trees, the binaries and the logs go
#   HAPROXY_CHECK_MODES=default no-cache tag uaf
#                                    the libpool build's runs of make haproxy-check
#   HAPROXY_CHECK_STOCK=1            0: no run (and no build) of the stock build
#   HAPROXY_CHECK_JOBS=2             reg-tests at once (run-regtests.sh --j)
#   HAPROXY_CHECK_CPUS=2             CPUs the reg-tests run on (taskset), hence HAProxy's
#                                    threads; 0: all this process may use
#   HAPROXY_CHECK_RETRIES=3          runs alone of a failed test before it counts as failed
#   HAPROXY_TESTS=                   reg-tests/<dir>/<name>.vtc to run instead of all
#   HAPROXY_BENCH_SECONDS=5          seconds of load a run of make haproxy-bench (under 5: one
#                                    round, the quick mode)
#   HAPROXY_BENCH_ARGS=              more options for contrib/haproxy/bench.sh, e.g. --rounds 5
#                                    --threads "2 4" --builds "libpool stock" (its header)

HAPROXY_DIR         ?= build/haproxy
HAPROXY_CHECK_MODES ?= default no-cache tag uaf
HAPROXY_CHECK_STOCK ?= 1
HAPROXY_CHECK_JOBS  ?= 2
HAPROXY_CHECK_CPUS  ?= 2
HAPROXY_CHECK_RETRIES ?= 3
HAPROXY_TESTS       ?=

# Fetch (dpkg-dev's dpkg-source, the archive's keyring), build (HAProxy's USE_PCRE2, USE_OPENSSL,
# USE_LUA), test (varnishtest; socat and openssl, which some reg-tests run).
HAPROXY_PKGS := dpkg-dev debian-archive-keyring patch libpcre2-dev libssl-dev liblua5.3-dev \
                varnish socat openssl

# As root these targets install what they need, libpool's build packages included, as make
# check does (the Makefile's deps target reads DEPS_INSTALL when it runs).
HAPROXY_GOALS := haproxy haproxy-check haproxy-bench haproxy-deps
DEPS_INSTALL := $(if $(filter $(HAPROXY_GOALS),$(MAKECMDGOALS)),1,$(DEPS_INSTALL))

.PHONY: haproxy haproxy-check haproxy-deps

# after deps: never two apt-get at once
haproxy-deps: deps
	@missing=""; for p in $(HAPROXY_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || \
	    missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "haproxy-deps: installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $$missing >/dev/null || \
	      { echo "haproxy-deps: apt-get install$$missing failed"; exit 1; }; \
	  else \
	    echo "haproxy-deps: missing packages; run: sudo apt-get update &&" \
	      "sudo apt-get install -y --no-install-recommends$$missing"; exit 1; \
	  fi; \
	fi

# A sanitizer build of libpool cannot be linked into an HAProxy built without the sanitizer.
ifneq ($(SAN),)
ifneq ($(filter $(HAPROXY_GOALS),$(MAKECMDGOALS)),)
$(error haproxy targets: SAN=$(SAN) is not supported (HAProxy is not built with the \
	sanitizer); run them without SAN=)
endif
endif

# The trees rebuild what changed (build.sh); the recipe always runs, make there decides.
haproxy: haproxy-deps lib
	+$(Q)CC="$(CC)" MAKE="$(MAKE)" sh contrib/haproxy/build.sh $(BUILD) $(HAPROXY_DIR) pool stock

# Every run goes on whatever the others gave; the summary repeats each run's last line. A run's
# exit status passes through a file (its output goes through tee, and sh has no pipefail).
HAPROXY_RUN = { $(1); echo $$? > $(HAPROXY_DIR)/check.rc; } 2>&1 | tee $(HAPROXY_DIR)/check.out; \
	tail -n 1 $(HAPROXY_DIR)/check.out >> $(HAPROXY_DIR)/check.summary
haproxy-check: haproxy-deps lib
	+$(Q)CC="$(CC)" MAKE="$(MAKE)" sh contrib/haproxy/build.sh $(BUILD) $(HAPROXY_DIR) pool \
	  $(if $(filter 1,$(HAPROXY_CHECK_STOCK)),stock) planted
	$(Q)rc=0; : > $(HAPROXY_DIR)/check.summary; \
	export HAPROXY_CHECK_JOBS=$(HAPROXY_CHECK_JOBS) HAPROXY_CHECK_CPUS=$(HAPROXY_CHECK_CPUS) \
	  HAPROXY_CHECK_RETRIES=$(HAPROXY_CHECK_RETRIES); \
	if [ "$(HAPROXY_CHECK_STOCK)" = 1 ]; then \
	  $(call HAPROXY_RUN,sh contrib/haproxy/check.sh $(HAPROXY_DIR) stock default $(HAPROXY_TESTS)); \
	fi; \
	for m in $(HAPROXY_CHECK_MODES); do \
	  $(call HAPROXY_RUN,sh contrib/haproxy/check.sh $(HAPROXY_DIR) pool $$m $(HAPROXY_TESTS)); \
	  [ "$$(cat $(HAPROXY_DIR)/check.rc)" = 0 ] || rc=1; \
	done; \
	$(call HAPROXY_RUN,sh contrib/haproxy/planted-uaf.sh $(HAPROXY_DIR)); \
	[ "$$(cat $(HAPROXY_DIR)/check.rc)" = 0 ] || rc=1; \
	$(call HAPROXY_RUN,sh contrib/haproxy/release-task.sh $(HAPROXY_DIR)); \
	[ "$$(cat $(HAPROXY_DIR)/check.rc)" = 0 ] || rc=1; \
	echo "haproxy-check:"; sed 's/^/  /' $(HAPROXY_DIR)/check.summary; exit $$rc

# The benchmark: load generators, the preloaded allocators, the plot, ss for the ports.
HAPROXY_BENCH_SECONDS ?= 5
HAPROXY_BENCH_ARGS    ?=
HAPROXY_BENCH_PKGS := wrk nghttp2-client libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4 \
                      gnuplot-nox iproute2
HAPROXY_PKGS += $(if $(filter haproxy-bench,$(MAKECMDGOALS)),$(HAPROXY_BENCH_PKGS))

.PHONY: haproxy-bench
haproxy-bench: haproxy
	$(Q)sh contrib/haproxy/bench.sh $(HAPROXY_DIR) --seconds $(HAPROXY_BENCH_SECONDS) \
		$(HAPROXY_BENCH_ARGS)
