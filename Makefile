# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# libpool - fixed-size object pools for event-driven servers.
#
# Targets
#   make / make all      build the static and shared libraries and the tools into $(BUILD)
#   make check           build and run every test (tests/*/check_*.c with Check, tests/*/test_*.sh);
#                        prints one "check: N passed, N failed, N skipped" line, after the end
#                        of each failed test's output repeated, and fails if any failed
#   make stress          the main job: tools/pool-stress with 48 threads on every workload
#   make bench           tools/pool-bench: libpool side by side with the allocators users pick
#   make install         install the libraries, headers, libpool.pc, programs, man pages and
#                        documentation into $(DESTDIR) + the directories below
#   make uninstall       remove what install installed
#   make dist            $(BUILD)/libpool-$(VERSION).tar.gz from the committed tree (git archive)
#   make distcheck       make dist, unpack it in a temporary directory and run its make check
#                        (with CC, SAN, DEBUG, USE_JEMALLOC and WERROR as given: CI runs it
#                        with SAN=address)
#   make deps            check the Debian packages the build needs (with `check` among the
#                        goals, the tests' too) and print the apt-get command for the missing
#                        ones
#   make clean           remove build/
#   make help            print this text
#   (further targets, documented in their files, come from mk/*.mk)
#
# Packages: `make check` and `make stress` (the README's two commands), run as root, install
# the Debian packages they need with apt-get (build: $(DEPS_PKGS); tests also: $(CHECK_PKGS)),
# before anything is compiled: what the build learns from pkg-config is asked in the recipes,
# after that. Every other target, and these two run as another user, only check, and print the
# apt-get command for what is missing.
#
# Variables (on the command line or in the environment)
#   CC=gcc|clang         compiler (default cc)
#   CPPFLAGS CFLAGS LDFLAGS LDLIBS
#                        the user's flags (a distribution's hardening flags): appended after
#                        ours, so they win where the two conflict (-O, -g). Never overridden.
#   WERROR=1             turn warnings into errors (CI sets it; off by default so that a newer
#                        compiler's new warning does not break a user's build)
#   SAN=address|thread|undefined
#                        build everything with that sanitizer, into its own build directory.
#                        SAN=thread defaults to USE_JEMALLOC=0: ThreadSanitizer must see the
#                        allocator's synchronisation, which it does for the C library's malloc
#                        (it replaces it) and not inside jemalloc. SAN=address keeps jemalloc:
#                        the library poisons pool objects itself, and ASan's own allocator is
#                        not fork-safe while other threads allocate (a child can deadlock).
#   USE_JEMALLOC=1|0     1 (default): objects come from jemalloc's mallocx/sdallocx;
#                        0: from the C library's aligned_alloc/free
#   DEBUG=1              the assertion tier: POOL_ASSERT() checks the invariants of the design
#                        essay (src/core/pool.c) and the functions' contracts (locks held, counts
#                        within bounds) at run time (-DPOOL_ASSERTS=1), into its own build
#                        directory; the sanitizer builds have it too
#   DEBUG=2              tier 1 and the walks: whole structures (a thread's magazines, a
#                        bucket's stack, the pool list, the uaf table) checked against their
#                        counts at quiet points (-DPOOL_ASSERTS=2; src/base/pool-assert.h says where),
#                        into its own build directory (with SAN=, that sanitizer build runs
#                        tier 2 instead of tier 1).
#                        Any other DEBUG value: extra compiler flags, placed last (e.g.
#                        DEBUG="-DPOOL_ASSERTS=1 -O0")
#   OPT=-O2              our optimisation flags (a -O in CFLAGS overrides them)
#   BUILD=build/...      build directory (default: one per compiler, sanitizer and OS layer)
#   V=1                  show the full commands
#   CHECK_SKIP="t ..."   make check leaves these tests out (file names: test_bench.sh,
#                        check_pool), each named as skipped (tests/run.sh)
#
# Installation directories (GNU names; each may be set alone, e.g. LIBDIR for multiarch)
#   PREFIX=/usr/local
#   BINDIR=$(PREFIX)/bin             pools, pool-stress, pool-bench, pool-topology
#   LIBDIR=$(PREFIX)/lib             libpool.so.*, libpool.a, libpool-embed.a (e.g.
#                                    $(PREFIX)/lib/x86_64-linux-gnu)
#   PKGCONFIGDIR=$(LIBDIR)/pkgconfig libpool.pc
#   INCLUDEDIR=$(PREFIX)/include     pool/pool.h, pool/pool-inline.h, pool/pool-t.h,
#                                    pool/libpool.h (the same API prefixed, made by the build)
#   LIBEXECDIR=$(PREFIX)/libexec     $(LIBEXECDIR)/libpool/: pool-bench's child programs
#                                    (compiled into pool-bench, which looks there)
#   MANDIR=$(PREFIX)/share/man       man1 (programs), man3 (API), man7 (libpool(7))
#   DOCDIR=$(PREFIX)/share/doc/libpool
#                                    doc/*.md, README.md, CHANGELOG.md, LICENSE, and examples/:
#                                    the example server's source (pool-httpd.c) and the README's
#                                    example program (example.c). The example server itself is
#                                    not installed: it is built in $(BUILD)/tools for make demo.
#   DESTDIR=                         staging directory prepended to all of them
# Installed programs link the shared library with no rpath (as Debian wants): when LIBDIR is
# not in the dynamic linker's path, run ldconfig or set LD_LIBRARY_PATH. Programs in the build
# tree find $(BUILD)/libpool.so.2 through the rpath $ORIGIN/.. instead ($ORIGIN/../.. for the
# tests, one folder deeper); `make install` relinks them without it. pool-bench-dpdk carries
# DPDK's -march (from pkg-config libdpdk): it runs on CPUs like the build machine's only, and is
# the one installed program that does.

# The version lives in one place, include/pool/pool-t.h (POOL_VERSION_MAJOR/MINOR/PATCH). The
# pattern's '.' stands for the '#' of #define, which make 4.3 passes to awk escaped or not.
VERSION     := $(shell awk '/^.define POOL_VERSION_(MAJOR|MINOR|PATCH) / { v = v s $$3; s = "." } \
                 END { print v }' include/pool/pool-t.h)
# The soname's number changes when the ABI breaks, not with every release: 1 with 0.2 (the
# inline fast path's struct pool_tcache changed), 2 with 0.3 (the debugging word the inline
# functions read is pool__debugging, no longer pool_debugging, which programs such as HAProxy
# define themselves: programs built against libpool.so.1 read a symbol this one lacks).
# abi/libpool-0.3.0.abi is the ABI of libpool.so.2; mk/abi-check.sh skips the baselines of
# libpool.so.1 (0.2.0), whose programs cannot load this library.
SOVERSION   := 2

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INCLUDEDIR  ?= $(PREFIX)/include
LIBEXECDIR  ?= $(PREFIX)/libexec
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/libpool
DESTDIR     ?=
CC          ?= cc
SAN         ?=
OPT         ?= -O2
DEBUG       ?=
WERROR      ?= 0
ifeq ($(SAN),thread)
USE_JEMALLOC ?= 0
else
USE_JEMALLOC ?= 1
endif

CC_NAME     := $(notdir $(firstword $(CC)))
BUILD       ?= build/$(CC_NAME)$(if $(SAN),-$(SAN))$(if $(filter 0,$(USE_JEMALLOC)),-libc)$(if $(filter 1,$(DEBUG)),-debug)$(if $(filter 2,$(DEBUG)),-debug2)

# Debian packages. The build's are checked through pkg-config (DEPS_PC: <.pc name>:<package>),
# so that a jemalloc or hwloc built by hand counts; the tests' are checked with dpkg-query.
# CHECK_PKGS is everything the tests run or load that a minimal Debian lacks (mmdebstrap
# --variant=minbase plus make and gcc; tests/package/fresh-machine.sh proves it); a test does not skip
# for a missing package, it fails, naming it. mk/*.mk add the packages of their subsystems.
#   python3 python3-prometheus-client
#                  check_dump (JSON and Prometheus round trips), test_httpd.sh, test_layers.sh,
#                  test_stress.sh, test_bench.sh, test_pools_tool.sh (JSON checks),
#                  test_cli_words.sh
#   mandoc groff-base man-db
#                  test_man.sh (mandoc -T lint, groff -ww), test_bench.sh, test_readme.sh (man -w),
#                  test_cli_words.sh (mandoc -T ascii)
#   socat          check_cli and test_pools_tool.sh: the CLI socket as an operator drives it
#   valgrind       test_valgrind.sh, test_bench.sh (--instructions); its memcheck.h makes the
#                  library see memcheck (OPT_HEADERS below)
#   spin           test_busy_model.sh: the model of the BUSY protocol
#   strace         test_syscalls.sh: thread churn reads no resource limit per thread
#   google-perftools graphviz
#                  test_heap_profile.sh: google-pprof reads `pools profile heap` (jeprof comes
#                  with libjemalloc-dev, a build dependency), jeprof --svg draws with dot
# mk/bench.mk adds the benchmark's peers and gnuplot (test_bench.sh), mk/demo.mk chromium, wrk
# and python3-websocket (test_pools_page.sh). binutils (nm, readelf, objdump) comes with gcc.
# libunwind and libdw: the profile's call stacks (src/debug/pool-stack.c) and their names
# (src/debug/pool-symbols.c). Of hwloc and libdw the build takes the headers only, of libunwind
# nothing (its package brings the runtime library): the library dlopen()s libhwloc.so.15 to read
# the topology (and unloads it after), libunwind.so.8 when stacks are first wanted (a profile, a
# report), libdw.so.1 when a report first needs names; it links none of them.
DEPS_PC     := jemalloc:libjemalloc-dev hwloc:libhwloc-dev check:check libunwind:libunwind-dev \
               libdw:libdw-dev
DEPS_PKGS   := pkg-config $(foreach d,$(DEPS_PC),$(word 2,$(subst :, ,$(d))))
CHECK_PKGS  := python3 python3-prometheus-client mandoc groff-base man-db socat valgrind spin \
               strace google-perftools graphviz

ifeq ($(V),1)
Q :=
else
Q := @
endif

SAN_CFLAGS  :=
ifneq ($(SAN),)
SAN_CFLAGS  := -fsanitize=$(SAN) -fno-omit-frame-pointer $(if $(filter 2,$(DEBUG)),,-DPOOL_ASSERTS=1)
ifeq ($(SAN),undefined)
# (the compilers define no macro for -fsanitize=undefined: tests that must know say so)
SAN_CFLAGS  += -fno-sanitize-recover=all -DPOOL_SAN_UNDEFINED=1
endif
endif

# Our flags come first, the user's CPPFLAGS/CFLAGS/LDFLAGS after them (so theirs win), DEBUG
# last. -gdwarf-4: Debian's valgrind 3.19 cannot read the DWARF 5 that clang 14 emits by default.
WARN        := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
               $(if $(filter 1,$(WERROR)),-Werror)
POOL_CPPFLAGS := -D_GNU_SOURCE -Iinclude -DPOOL_USE_JEMALLOC=$(USE_JEMALLOC)
DEBUG_FLAGS := $(if $(filter 1 2,$(DEBUG)),-DPOOL_ASSERTS=$(DEBUG),$(DEBUG))
POOL_CFLAGS := -std=gnu11 $(OPT) -gdwarf-4 $(WARN) $(SAN_CFLAGS)
DEPFLAGS     = -MMD -MP
COMPILE      = $(CC) $(DEPFLAGS) $(POOL_CPPFLAGS) $(1) $(CPPFLAGS) $(POOL_CFLAGS) $(CFLAGS) $(DEBUG_FLAGS)
# Kept for mk/*.mk: every flag of a compile, ours and the user's.
BASE_CFLAGS  = $(POOL_CPPFLAGS) $(CPPFLAGS) $(POOL_CFLAGS) $(CFLAGS) $(DEBUG_FLAGS)
# What pkg-config says is asked when a recipe uses it (recursive `=`, never `:=`): every
# compile waits for `deps`, which may have just installed the packages. Asked while this file
# is read, it would say nothing on a fresh machine, and the first link would lack -ljemalloc
# -lhwloc -lcheck.
PC_CFLAGS    = $(shell pkg-config --cflags hwloc libdw \
                 $(if $(filter 1,$(USE_JEMALLOC)),jemalloc) 2>/dev/null)
LIB_LIBS     = $(if $(filter 1,$(USE_JEMALLOC)),$(shell pkg-config --libs jemalloc 2>/dev/null)) \
               -lpthread -ldl -lm
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)
# clang links its sanitizer runtimes into programs, never into a shared library (libpool.so's
# -z defs then fails on the runtime's symbols): with clang, every program and the library link
# the runtime's shared object instead (-shared-libsan), found by an rpath to clang's directory.
SAN_RT_RPATH = -Wl,-rpath,$(shell $(CC) -print-runtime-dir 2>/dev/null)
SAN_LDFLAGS  = $(if $(SAN),$(if $(findstring clang,$(CC)),-shared-libsan $(SAN_RT_RPATH)))
ALL_LDFLAGS  = $(SAN_CFLAGS) $(SAN_LDFLAGS) $(LDFLAGS)
# Programs of the build tree find the build tree's shared library; installed ones are relinked
# without an rpath.
BUILD_RPATH := -Wl,-rpath,'$$ORIGIN/..'
TEST_RPATH  := -Wl,-rpath,'$$ORIGIN/../..'
LINK_POOL   := -L$(BUILD) -lpool -lpthread

LIB_SRCS    := $(wildcard src/*/*.c)
LIB_OBJS    := $(patsubst src/%.c,$(BUILD)/obj/lib/%.o,$(LIB_SRCS))
STATIC_LIB  := $(BUILD)/libpool.a
SHARED_REAL := $(BUILD)/libpool.so.$(VERSION)
SHARED_SO   := $(BUILD)/libpool.so.$(SOVERSION)
SHARED_LINK := $(BUILD)/libpool.so
PC_FILE     := $(BUILD)/libpool.pc
EMBED_LIB   := $(BUILD)/libpool-embed.a

# Tests: a tests/*/check_*.c that includes a private header ("<layer>/*.h" from src/) is internal:
# built with -Isrc against the static library. All others test what users get: built against
# include/ only, linked with the shared library.
TEST_SRCS   := $(wildcard tests/*/check_*.c)
INT_TEST_SRCS := $(shell grep -lE '^\#include "[a-z]+/[a-z-]+\.h"' $(TEST_SRCS) /dev/null)
PUB_TEST_SRCS := $(filter-out $(INT_TEST_SRCS),$(TEST_SRCS))
INT_TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(INT_TEST_SRCS))
PUB_TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(PUB_TEST_SRCS))
TEST_BINS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_SCRIPTS := $(sort $(wildcard tests/*/test_*.sh))
# Tools: a tools/<name>.c that defines main() is the program <name>. The other tools/*.c are
# parts of a program of several files: mk/*.mk names them in TOOL_PARTS_<name>.
TOOL_SRCS   := $(shell grep -l '^int main\>' $(wildcard tools/*.c) /dev/null)
TOOL_PART_SRCS := $(filter-out $(TOOL_SRCS),$(wildcard tools/*.c))
TOOL_BINS   := $(patsubst tools/%.c,$(BUILD)/tools/%,$(TOOL_SRCS))
PUB_HEADERS := include/pool/pool.h include/pool/pool-inline.h include/pool/pool-t.h \
               $(BUILD)/include/pool/libpool.h

# Programs `make install` installs (names under tools/ without .c); mk/*.mk add to them.
# INSTALL_BIN: public programs, linked with libpool, relinked without rpath into $(BUILD)/inst.
# INSTALL_LIBEXEC: helper programs for $(LIBEXECDIR)/libpool, installed as built (they must
# not link libpool).
INSTALL_BIN     := pools pool-stress pool-bench
INSTALL_LIBEXEC :=
# Installed documentation; the example sources go to $(DOCDIR)/examples.
INSTALL_DOCS    := README.md CHANGELOG.md LICENSE $(wildcard doc/*.md doc/*.png)
INSTALL_EXAMPLES := tools/pool-httpd.c

.PHONY: all deps lib tools tests check install uninstall clean help dist distcheck FORCE
.DEFAULT_GOAL := all

all: lib tools

# The comments name the package lists by their variables: help prints their values instead.
HELP_PKGS = -e 's|$$(DEPS_PKGS)|$(DEPS_PKGS)|' -e 's|$$(CHECK_PKGS)|$(strip $(CHECK_PKGS))|' \
            -e 's|$$(BENCH_PKGS)|$(strip $(BENCH_PKGS))|'
help:
	@sed -n '3,/^$$/p' Makefile | sed -e 's/^# \{0,1\}//' $(HELP_PKGS)
	@for f in $(sort $(wildcard mk/*.mk)); do echo "--- $$f"; \
		sed -n '1,/^[^#]/p' $$f | grep '^#' | grep -v 'SPDX-\|Copyright (c)' | \
		sed -e 's/^# \{0,1\}//' $(HELP_PKGS); done

# Dependencies: the build's through pkg-config, the tests' (make check only) with dpkg-query.
# Only the README's two commands, make check and make stress, install what is missing, and only
# as root (without the packages' recommendations: exactly what is used); otherwise the exact
# apt-get command is printed and make stops, before anything is compiled or linked. deps is a
# prerequisite of check, stress and every compile, so it has run before any recipe asks
# pkg-config (PC_CFLAGS, LIB_LIBS, CHECK_LIBS above).
DEPS_INSTALL := $(if $(filter check stress,$(MAKECMDGOALS)),1)
DEPS_CHECK   := $(if $(filter check,$(MAKECMDGOALS)),1)
deps:
	@missing=""; \
	command -v pkg-config >/dev/null 2>&1 || missing=" pkg-config"; \
	for d in $(DEPS_PC); do \
	  pkg-config --exists $${d%%:*} 2>/dev/null || missing="$$missing $${d#*:}"; done; \
	if [ -n "$(DEPS_CHECK)" ]; then \
	  if command -v dpkg-query >/dev/null 2>&1; then \
	    for p in $(CHECK_PKGS); do \
	      dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || \
	        missing="$$missing $$p"; \
	    done; \
	  else \
	    echo "deps: no dpkg-query (not Debian): the tests' packages are not checked:" \
	      "$(CHECK_PKGS)"; \
	  fi; \
	fi; \
	if [ -n "$$missing" ]; then \
	  if [ -n "$(DEPS_INSTALL)" ] && [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing$$missing"; t0=$$(date +%s); \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $$missing >/dev/null || { echo "deps: apt-get install$$missing failed"; exit 1; }; \
	    for d in $(DEPS_PC); do pkg-config --exists $${d%%:*} || { \
	      echo "deps: $${d#*:} is installed but pkg-config finds no $${d%%:*}.pc"; exit 1; }; \
	    done; \
	    echo "deps: installed in $$(($$(date +%s) - t0)) s"; \
	  else \
	    echo "deps: missing packages; run as root: apt-get update &&" \
	      "apt-get install -y --no-install-recommends$$missing"; \
	    echo "deps: (make check and make stress run it themselves when run as root)"; \
	    exit 1; \
	  fi; \
	fi

# Installation directories and version: the .pc file and pool-bench depend on this stamp, which
# is rewritten only when one of the values changes.
DIRS_STAMP  := $(BUILD)/dirs.stamp
DIRS_VALUES := PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) LIBEXECDIR=$(LIBEXECDIR) \
               VERSION=$(VERSION) USE_JEMALLOC=$(USE_JEMALLOC)
$(DIRS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(DIRS_VALUES)' > $@.tmp; cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

# The optional headers the library uses when they are there (src/os/pool-san.h: Valgrind's
# memcheck.h, from the Debian package valgrind): whether each is found is written in this stamp,
# rewritten only when that changes, so that installing or removing one rebuilds what includes
# src/ (make check installs valgrind after make stress may have built the library without it).
OPT_HEADERS  := valgrind/memcheck.h
OPT_STAMP    := $(BUILD)/optional-headers.stamp
$(OPT_STAMP): FORCE | deps
	@mkdir -p $(dir $@)
	@for h in $(OPT_HEADERS); do \
	  printf '#include <%s>\n' $$h | $(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && f=yes || f=no; \
	  echo "$$h $$f"; \
	done > $@.tmp; cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

lib: $(STATIC_LIB) $(SHARED_LINK) $(PC_FILE) $(BUILD)/include/pool/libpool.h $(EMBED_LIB)

# The library's calls between its own exported functions bind inside it, whatever the program
# defines: servers have their own pool_gc(), pool_flush(), pool_destroy() (HAProxy does), and
# without this the dynamic linker binds the library's calls to them (libpool(7), "Programs with
# their own pool_ names"). -fno-semantic-interposition lets the compiler call and inline them
# directly within a file, -Bsymbolic-functions makes the linker bind the rest to the library's
# definitions. Data is left to the dynamic linker on purpose: a program's copy relocation of a
# variable the inline functions read is where that variable lives, so the library reads it
# through its GOT, and such a variable has a name no program has (pool__debugging).
LIB_SYMBOLIC_CFLAGS  := -fno-semantic-interposition
LIB_SYMBOLIC_LDFLAGS := -Wl,-Bsymbolic-functions

$(BUILD)/obj/lib/%.o: src/%.c $(OPT_STAMP) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(call COMPILE,-Isrc -DPOOL_BUILDING_LIBRARY) -fPIC -fvisibility=hidden \
		$(LIB_SYMBOLIC_CFLAGS) $(PC_CFLAGS) -c -o $@ $<

$(STATIC_LIB): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# libpool-embed.a: libpool for programs that link it statically and may own pool_ names, one
# object whose global names are the libpool_ API and the internal ones its inline functions use,
# with a private jemalloc inside in the jemalloc build (mk/embed.sh says how and why). Linked
# with -lpthread -ldl -lm and nothing else.
JEMALLOC_PIC = $(if $(filter 1,$(USE_JEMALLOC)),$(shell pkg-config --variable=libdir jemalloc \
                 2>/dev/null)/libjemalloc_pic.a)
$(EMBED_LIB): $(LIB_OBJS) $(VERSION_SCRIPT) mk/embed.sh
	@$(if $(Q),echo "  EMBED   $@")
	$(Q)sh mk/embed.sh $@ $(VERSION_SCRIPT) "$(JEMALLOC_PIC)" $(LIB_OBJS)

# abi/libpool.map: the exported symbols and their version nodes (LIBPOOL_0.1 to LIBPOOL_0.3).
# Its libpool_ names are the API under the prefix of <pool/libpool.h>: the linker defines each
# one at the address of its pool_ name (--defsym), so that both names are one function.
VERSION_SCRIPT := abi/libpool.map
PREFIXED_NAMES  = $(shell sed -n 's/^[[:space:]]*\(libpool_[a-z0-9_]*\);.*/\1/p' $(VERSION_SCRIPT))
LIB_ALIAS_LDFLAGS = $(foreach n,$(PREFIXED_NAMES),-Wl,--defsym=$(n)=$(n:lib%=%))
$(SHARED_REAL): $(LIB_OBJS) $(VERSION_SCRIPT)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libpool.so.$(SOVERSION) -Wl,-z,defs \
		-Wl,--version-script=$(VERSION_SCRIPT) $(LIB_SYMBOLIC_LDFLAGS) $(LIB_ALIAS_LDFLAGS) \
		$(ALL_LDFLAGS) -o $@ $(LIB_OBJS) $(LIB_LIBS) $(LDLIBS)

# <pool/libpool.h>: the public headers with every pool_ and POOL_ name prefixed with lib and
# LIB, for programs that define pool_ names themselves (mk/prefixed-header.sh says how). Made in
# $(BUILD)/include, installed beside pool.h; programs of the build tree find it with
# -I$(BUILD)/include.
PREFIXED_H  := $(BUILD)/include/pool/libpool.h
$(PREFIXED_H): $(filter-out $(PREFIXED_H),$(PUB_HEADERS)) mk/prefixed-header.sh | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)sh mk/prefixed-header.sh "$(CC)" include > $@.tmp && mv -f $@.tmp $@

$(SHARED_SO): $(SHARED_REAL)
	$(Q)ln -sf $(notdir $<) $@

$(SHARED_LINK): $(SHARED_SO)
	$(Q)ln -sf $(notdir $<) $@

# libpool.pc: Libs.private names what libpool.a needs in a program that links jemalloc as the
# shared library a distribution ships: its -L/-l flags as pkg-config gave them to this build,
# and the C library's (hwloc, libunwind and libdw are loaded with dlopen(3), not linked:
# src/config/topology.c, src/debug/pool-stack.c, src/debug/pool-symbols.c). Not
# Requires.private: `pkg-config --static` then also lists the private dependencies of a static
# hwloc (-ludev on Debian), which a program that links hwloc dynamically does not need, and
# which Debian cannot satisfy (libhwloc-dev brings no libudev.so, and no libudev.a exists): the
# README's static link failed with `cannot find -ludev`. A libdir or includedir under the
# prefix is written relative to ${prefix}, so pkg-config --define-prefix works.
PC_REL       = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
$(PC_FILE): libpool.pc.in $(DIRS_STAMP) Makefile
	@$(if $(Q),echo "  GEN     $@")
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@LIBDIR@|$(call PC_REL,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call PC_REL,$(INCLUDEDIR))|' \
		-e 's|@LIBS_PRIVATE@|$(strip $(LIB_LIBS))|' $< > $@

# Tests. Internal ones see src/ and link the static library; public ones see include/ only.
$(INT_TEST_BINS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(STATIC_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -rdynamic -o $@ $< $(STATIC_LIB) $(ALL_LDFLAGS) $(CHECK_LIBS) $(LIB_LIBS) $(LDLIBS)

# tests/tools/pool-cli-server.c: a test fixture (a process serving the CLI socket), not a Check test;
# built as the public tests are.
FIXTURE_SRCS := tests/tools/pool-cli-server.c
FIXTURE_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(FIXTURE_SRCS))

$(PUB_TEST_BINS) $(FIXTURE_BINS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(SHARED_LINK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -rdynamic $(TEST_RPATH) -o $@ $< $(ALL_LDFLAGS) $(LINK_POOL) $(CHECK_LIBS) $(LDLIBS)

$(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(INT_TEST_SRCS)): $(BUILD)/obj/tests/%.o: tests/%.c \
		$(OPT_STAMP) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(call COMPILE,-Isrc -Itests) $(PC_CFLAGS) -c -o $@ $<

$(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(PUB_TEST_SRCS) $(FIXTURE_SRCS)): $(BUILD)/obj/tests/%.o: tests/%.c | deps $(PREFIXED_H)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(call COMPILE,-Itests -I$(BUILD)/include) -c -o $@ $<

# tests/package/check_host.c again, linked with libpool-embed.a alone (run by test_embed.sh)
EMBED_TEST_BIN := $(BUILD)/tests/package/check_host_embed
$(EMBED_TEST_BIN): $(BUILD)/obj/tests/package/check_host.o $(EMBED_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $< $(EMBED_LIB) $(ALL_LDFLAGS) $(CHECK_LIBS) -lpthread -ldl -lm $(LDLIBS)

tests: $(TEST_BINS) $(FIXTURE_BINS) $(EMBED_TEST_BIN)

# Tools: public API only, linked with the shared library. mk/*.mk may give one tool extra
# compile flags in TOOL_CFLAGS_<name> and extra libraries in TOOL_LIBS_<name>, or a rule of
# its own (programs that do not link libpool). A program of several files lists its other files
# in TOOL_PARTS_<name> and makes both its builds ($(BUILD)/tools/<name>, $(BUILD)/inst/<name>)
# depend on their objects, $(call tool_objs,$(TOOL_PARTS_<name>)).
tool_objs = $(patsubst tools/%.c,$(BUILD)/obj/tools/%.o,$(1))

tools: $(TOOL_BINS)

# The objects stay: the installed variant of each tool is linked from them too.
.SECONDARY: $(call tool_objs,$(TOOL_SRCS) $(TOOL_PART_SRCS))

$(BUILD)/obj/tools/%.o: tools/%.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(call COMPILE,-Itools) $(TOOL_CFLAGS_$*) -c -o $@ $<

$(BUILD)/tools/%: $(BUILD)/obj/tools/%.o $(SHARED_LINK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -rdynamic $(BUILD_RPATH) -o $@ $< $(call tool_objs,$(TOOL_PARTS_$*)) $(ALL_LDFLAGS) \
		$(LINK_POOL) $(TOOL_LIBS_$*) $(LDLIBS)

# The installed variant: the same objects, no rpath.
$(BUILD)/inst/%: $(BUILD)/obj/tools/%.o $(SHARED_LINK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@ (to install)")
	$(Q)$(CC) -rdynamic -o $@ $< $(call tool_objs,$(TOOL_PARTS_$*)) $(ALL_LDFLAGS) $(LINK_POOL) \
		$(TOOL_LIBS_$*) $(LDLIBS)

check: deps lib tests tools
	$(Q)BUILD=$(BUILD) SAN=$(SAN) USE_JEMALLOC=$(USE_JEMALLOC) CC="$(CC)" VERSION=$(VERSION) \
		sh tests/run.sh $(TEST_BINS) $(TEST_SCRIPTS)

# Man pages: man/ holds the pages of the API (section 3) and libpool(7), and is where new pages
# go; doc/*.1 are the tools' pages. Each name of a page's NAME section other than the page's own
# is installed as a symbolic link to it (pool_free.3 -> pool_alloc.3). tests/package/test_man.sh lints
# them all with mandoc (and groff), and checks that every public function has a page. The pages
# name the documentation's directory as the default install puts it, MAN_DOCDIR: make install
# writes DOCDIR there instead (tests/package/test_install.sh installs under another prefix).
MAN_PAGES   := $(sort $(wildcard man/*.[1-8] doc/*.[1-8]))
MAN_DOCDIR  := /usr/local/share/doc/libpool

# (its programs are prerequisites too: see the end of this file, after mk/*.mk add to them)
install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/pool $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR)/examples
	install -m 644 $(STATIC_LIB) $(EMBED_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf libpool.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libpool.so.$(SOVERSION)
	ln -sf libpool.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libpool.so
	install -m 644 $(PUB_HEADERS) $(DESTDIR)$(INCLUDEDIR)/pool/
	install -m 644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/
	$(if $(INSTALL_BIN),install -m 755 $(patsubst %,$(BUILD)/inst/%,$(INSTALL_BIN)) $(DESTDIR)$(BINDIR)/)
	$(if $(INSTALL_LIBEXEC),install -d $(DESTDIR)$(LIBEXECDIR)/libpool)
	$(if $(INSTALL_LIBEXEC),install -m 755 $(patsubst %,$(BUILD)/tools/%,$(INSTALL_LIBEXEC)) \
		$(DESTDIR)$(LIBEXECDIR)/libpool/)
	install -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 644 $(INSTALL_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	awk '/^```c$$/ { on = 1; next } /^```$$/ { if (on) exit } on' README.md \
		> $(DESTDIR)$(DOCDIR)/examples/example.c
	$(Q)set -e; for m in $(MAN_PAGES); do \
		s=$$(echo $$m | sed 's/.*\.//'); d=$(DESTDIR)$(MANDIR)/man$$s; b=$$(basename $$m); \
		echo "install -m 644 $$m $$d/ (naming DOCDIR $(DOCDIR))"; install -d $$d; \
		sed 's|$(MAN_DOCDIR)|$(DOCDIR)|g' $$m > $$d/$$b; chmod 644 $$d/$$b; \
		for n in $$(sh mk/man-names.sh $$m); do \
			[ "$$n.$$s" = "$$(basename $$m)" ] || ln -sf $$(basename $$m) $$d/$$n.$$s; \
		done; \
	done

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libpool.a $(DESTDIR)$(LIBDIR)/libpool-embed.a \
		$(DESTDIR)$(LIBDIR)/libpool.so \
		$(DESTDIR)$(LIBDIR)/libpool.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libpool.so.$(VERSION) \
		$(DESTDIR)$(PKGCONFIGDIR)/libpool.pc
	rm -f $(patsubst %,$(DESTDIR)$(INCLUDEDIR)/pool/%,$(notdir $(PUB_HEADERS)))
	rm -f $(patsubst %,$(DESTDIR)$(BINDIR)/%,$(INSTALL_BIN))
	rm -f $(patsubst %,$(DESTDIR)$(LIBEXECDIR)/libpool/%,$(INSTALL_LIBEXEC))
	rm -f $(patsubst %,$(DESTDIR)$(DOCDIR)/%,$(notdir $(INSTALL_DOCS)))
	rm -f $(patsubst %,$(DESTDIR)$(DOCDIR)/examples/%,$(notdir $(INSTALL_EXAMPLES)) example.c)
	$(Q)for m in $(MAN_PAGES); do \
		s=$$(echo $$m | sed 's/.*\.//'); d=$(DESTDIR)$(MANDIR)/man$$s; \
		for n in $$(sh mk/man-names.sh $$m); do rm -f $$d/$$n.$$s; done; \
		echo "rm -f $$d/$$(basename $$m)"; rm -f $$d/$$(basename $$m); \
	done
	-rmdir $(DESTDIR)$(INCLUDEDIR)/pool $(DESTDIR)$(LIBEXECDIR)/libpool \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null

# A release tarball of HEAD (uncommitted changes are not in it: the target says so).
DIST_NAME   := libpool-$(VERSION)
DIST_TAR    := $(BUILD)/$(DIST_NAME).tar.gz
dist:
	@git rev-parse --git-dir >/dev/null 2>&1 || { echo "dist: needs a git checkout"; exit 1; }
	@[ -z "$$(git status --porcelain --untracked-files=no)" ] || \
		echo "dist: warning: uncommitted changes are not in the tarball (it is made from HEAD)"
	@mkdir -p $(BUILD)
	git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o $(DIST_TAR) HEAD
	@echo "dist: $(DIST_TAR)"

# The tarball must build and pass its own make check alone: unpacked where nothing of this
# tree (no .git, nothing beside the checkout) is within reach. CC, SAN, DEBUG, USE_JEMALLOC,
# WERROR and CHECK_SKIP go with it (CI runs it under ASan: one run of the suite for both).
distcheck: dist
	@tmp=$$(mktemp -d /tmp/libpool-distcheck.XXXXXX) && \
	tar -xzf $(DIST_TAR) -C $$tmp && \
	echo "distcheck: make check$(if $(SAN), SAN=$(SAN)) in $$tmp/$(DIST_NAME)" && \
	$(MAKE) -C $$tmp/$(DIST_NAME) check CC="$(CC)" SAN="$(SAN)" DEBUG="$(DEBUG)" \
		USE_JEMALLOC=$(USE_JEMALLOC) WERROR=$(WERROR) CHECK_SKIP="$(CHECK_SKIP)" \
		BUILD=build/distcheck; rc=$$?; \
	rm -rf $$tmp; [ $$rc -eq 0 ] && echo "distcheck: $(DIST_NAME).tar.gz passes make check"; \
	exit $$rc

clean:
	rm -rf build

FORCE:

# Further targets (stress, bench, demo, fuzz...), one file per subsystem.
-include $(sort $(wildcard mk/*.mk))

# What install installs, now that mk/*.mk have added their programs.
install: $(patsubst %,$(BUILD)/inst/%,$(INSTALL_BIN)) $(patsubst %,$(BUILD)/tools/%,$(INSTALL_LIBEXEC))

# Header dependencies recorded by -MMD (the library's objects lie one folder deeper, in
# obj/lib/<layer>/: without the second pattern a changed header rebuilt none of them).
-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d)
