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
#                        ($(BUILD)/libpool.so, by rpath; SAN= is refused), and
#                        $(HAPROXY_DIR)/haproxy-stock, HAProxy's own pools. About 3 minutes of
#                        CPU on 2 cores the first time (HAProxy builds in 1.5).
#   make haproxy-deps    install (as root) or name the Debian packages the targets above use:
#                        dpkg-dev debian-archive-keyring patch libpcre2-dev libssl-dev
#                        liblua5.3-dev; the haproxy targets run it themselves, and as root
#                        libpool's own build packages are installed too (as make check does)
#
# Variables
#   HAPROXY_DIR=build/haproxy        where the source, the trees, the binaries and the logs go
HAPROXY_DIR         ?= build/haproxy

# Fetch (dpkg-dev's dpkg-source, the archive's keyring), build (HAProxy's USE_PCRE2, USE_OPENSSL,
# USE_LUA).
HAPROXY_PKGS := dpkg-dev debian-archive-keyring patch libpcre2-dev libssl-dev liblua5.3-dev

# As root these targets install what they need, libpool's build packages included, as make
# check does (the Makefile's deps target reads DEPS_INSTALL when it runs).
HAPROXY_GOALS := haproxy haproxy-deps
DEPS_INSTALL := $(if $(filter $(HAPROXY_GOALS),$(MAKECMDGOALS)),1,$(DEPS_INSTALL))

.PHONY: haproxy haproxy-deps

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
