# libpool - fixed-size object pools for event-driven servers.
#
# Targets
#   make / make all      build the static and shared libraries and the tools into $(BUILD)
#   make deps            check the Debian packages we build with; as root, install the missing
#                        ones (apt-get update && apt-get install -y ...); otherwise print the
#                        exact command and fail. Every target that compiles runs it first.
#   make check           build and run every test (tests/check_*.c with Check, tests/test_*.sh);
#                        prints one "check: N passed, N failed" line and fails if any failed
#   make stress          the main job: tools/pool-stress with 48 threads on every workload
#   make bench           tools/pool-bench: libpool side by side with the allocators users pick
#   make install         install libraries, headers, libpool.pc, tools and man pages under
#                        $(DESTDIR)$(PREFIX)
#   make uninstall       remove what install installed
#   make clean           remove build/
#   make help            print this text
#   (further targets, documented in their files, come from mk/*.mk)
#
# Variables
#   CC=gcc|clang         compiler (default cc)
#   SAN=address|thread|undefined
#                        build everything with that sanitizer, into its own build directory.
#                        SAN=thread defaults to USE_JEMALLOC=0: ThreadSanitizer must see the
#                        allocator's synchronisation, which it does for the C library's malloc
#                        (it replaces it) and not inside jemalloc. SAN=address keeps jemalloc:
#                        the library poisons pool objects itself, and ASan's own allocator is
#                        not fork-safe while other threads allocate (a child can deadlock).
#   USE_JEMALLOC=1|0     1 (default): objects come from jemalloc's mallocx/sdallocx;
#                        0: from the C library's aligned_alloc/free
#   DEBUG="-D..."        extra compiler flags (e.g. DEBUG=-DPOOL_EXTRA_ASSERTS)
#   OPT=-O2              optimisation flags
#   PREFIX=/usr/local    installation prefix; DESTDIR= staging directory for install/uninstall
#   BUILD=build/...      build directory (default: one per compiler, sanitizer and OS layer)
#   V=1                  show the full commands

VERSION     := 0.1.0
SOVERSION   := 0
PREFIX      ?= /usr/local
DESTDIR     ?=
CC          ?= cc
SAN         ?=
OPT         ?= -O2
DEBUG       ?=
ifeq ($(SAN),thread)
USE_JEMALLOC ?= 0
else
USE_JEMALLOC ?= 1
endif

CC_NAME     := $(notdir $(firstword $(CC)))
BUILD       ?= build/$(CC_NAME)$(if $(SAN),-$(SAN))$(if $(filter 0,$(USE_JEMALLOC)),-libc)

DEPS_PKGS   := libjemalloc-dev libhwloc-dev check pkg-config
DEPS_PC     := jemalloc hwloc check

ifeq ($(V),1)
Q :=
else
Q := @
endif

SAN_CFLAGS  :=
ifneq ($(SAN),)
SAN_CFLAGS  := -fsanitize=$(SAN) -fno-omit-frame-pointer
ifeq ($(SAN),undefined)
SAN_CFLAGS  += -fno-sanitize-recover=all
endif
endif

# -gdwarf-4: Debian's valgrind 3.19 cannot read the DWARF 5 that clang 14 emits by default.
WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=gnu11 $(OPT) -gdwarf-4 $(WARN) -D_GNU_SOURCE -Iinclude \
               -DPOOL_USE_JEMALLOC=$(USE_JEMALLOC) $(SAN_CFLAGS) $(DEBUG)
LIB_CFLAGS  := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -DPOOL_BUILDING_LIBRARY -Isrc
PC_CFLAGS    = $(shell pkg-config --cflags hwloc $(if $(filter 1,$(USE_JEMALLOC)),jemalloc) 2>/dev/null)
LIB_LIBS     = $(if $(filter 1,$(USE_JEMALLOC)),$(shell pkg-config --libs jemalloc 2>/dev/null)) \
               $(shell pkg-config --libs hwloc 2>/dev/null) -lpthread -ldl -lm
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)
LDFLAGS     ?=
ALL_LDFLAGS := $(SAN_CFLAGS) $(LDFLAGS)

LIB_SRCS    := $(wildcard src/*.c)
LIB_OBJS    := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
STATIC_LIB  := $(BUILD)/libpool.a
SHARED_REAL := $(BUILD)/libpool.so.$(VERSION)
SHARED_SO   := $(BUILD)/libpool.so.$(SOVERSION)
SHARED_LINK := $(BUILD)/libpool.so

TEST_SRCS   := $(wildcard tests/check_*.c)
TEST_BINS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_SCRIPTS := $(sort $(wildcard tests/test_*.sh))
TOOL_SRCS   := $(wildcard tools/*.c)
TOOL_BINS   := $(patsubst tools/%.c,$(BUILD)/tools/%,$(TOOL_SRCS))
PUB_HEADERS := include/pool/pool.h include/pool/pool-t.h

.PHONY: all deps lib tools tests check install uninstall clean help
.DEFAULT_GOAL := all

all: deps lib tools

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'
	@for f in $(sort $(wildcard mk/*.mk)); do echo "--- $$f"; \
		sed -n '1,/^[^#]/p' $$f | grep '^#' | sed 's/^# \{0,1\}//'; done

# Dependencies: checked with pkg-config, installed with apt-get when we are root.
deps:
	@missing=""; for pc in $(DEPS_PC); do pkg-config --exists $$pc 2>/dev/null || missing=1; done; \
	command -v pkg-config >/dev/null 2>&1 || missing=1; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing $(DEPS_PKGS)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEPS_PKGS) >/dev/null || exit 1; \
	  else \
	    echo "deps: missing packages; run: sudo apt-get update && sudo apt-get install -y $(DEPS_PKGS)"; \
	    exit 1; \
	  fi; \
	fi

lib: $(STATIC_LIB) $(SHARED_LINK)

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h) $(PUB_HEADERS) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CFLAGS) $(PC_CFLAGS) -c -o $@ $<

$(STATIC_LIB): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED_REAL): $(LIB_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libpool.so.$(SOVERSION) -Wl,-z,defs $(ALL_LDFLAGS) \
		-o $@ $^ $(LIB_LIBS)

$(SHARED_SO): $(SHARED_REAL)
	$(Q)ln -sf $(notdir $<) $@

$(SHARED_LINK): $(SHARED_SO)
	$(Q)ln -sf $(notdir $<) $@

# Tests link the static library so that they may include private headers (src/).
$(BUILD)/tests/%: tests/%.c $(STATIC_LIB) $(wildcard tests/*.h) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) -Isrc -Itests $(PC_CFLAGS) -rdynamic -o $@ $< $(STATIC_LIB) \
		$(ALL_LDFLAGS) $(CHECK_LIBS) $(LIB_LIBS)

# tests/pool-cli-server.c: a test fixture (a process serving the CLI socket), not a Check test.
tests: $(TEST_BINS) $(BUILD)/tests/pool-cli-server

tools: $(TOOL_BINS)

$(BUILD)/tools/%: tools/%.c $(STATIC_LIB) $(wildcard tools/*.h) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) -Itools $(PC_CFLAGS) -rdynamic -o $@ $< $(STATIC_LIB) \
		$(ALL_LDFLAGS) $(LIB_LIBS) $(TOOL_LIBS_$*)

check: deps lib tests tools
	$(Q)BUILD=$(BUILD) SAN=$(SAN) USE_JEMALLOC=$(USE_JEMALLOC) CC="$(CC)" \
		sh tests/run.sh $(TEST_BINS) $(TEST_SCRIPTS)

libpool.pc: libpool.pc.in Makefile
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@LIBS_PRIVATE@|$(if $(filter 1,$(USE_JEMALLOC)),-ljemalloc) -lhwloc -lpthread -ldl -lm|' \
		-e 's|@REQUIRES_PRIVATE@|$(if $(filter 1,$(USE_JEMALLOC)),jemalloc) hwloc|' $< > $@

install: all libpool.pc
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/pool \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_REAL) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libpool.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libpool.so.$(SOVERSION)
	ln -sf libpool.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libpool.so
	install -m 644 $(PUB_HEADERS) $(DESTDIR)$(PREFIX)/include/pool/
	install -m 644 libpool.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	for t in $(INSTALL_TOOLS); do install -m 755 $(BUILD)/tools/$$t $(DESTDIR)$(PREFIX)/bin/$${t#pool-tool-}; done
	for m in $(wildcard doc/*.1); do install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man1/; done
	for m in $(wildcard doc/*.3); do install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man3/; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libpool.a $(DESTDIR)$(PREFIX)/lib/libpool.so \
		$(DESTDIR)$(PREFIX)/lib/libpool.so.$(SOVERSION) \
		$(DESTDIR)$(PREFIX)/lib/libpool.so.$(VERSION) \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/libpool.pc
	rm -rf $(DESTDIR)$(PREFIX)/include/pool
	for t in $(INSTALL_TOOLS); do rm -f $(DESTDIR)$(PREFIX)/bin/$${t#pool-tool-}; done
	for m in $(notdir $(wildcard doc/*.1)); do rm -f $(DESTDIR)$(PREFIX)/share/man/man1/$$m; done
	for m in $(notdir $(wildcard doc/*.3)); do rm -f $(DESTDIR)$(PREFIX)/share/man/man3/$$m; done

clean:
	rm -rf build libpool.pc

# Tools installed by `make install` (names under tools/ without .c); mk/*.mk may add to it.
INSTALL_TOOLS := $(notdir $(basename $(wildcard tools/pools.c tools/pool-stress.c tools/pool-bench.c tools/pool-httpd.c)))

# Further targets (stress, bench, demo, fuzz...), one file per subsystem.
-include $(sort $(wildcard mk/*.mk))
