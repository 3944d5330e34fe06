# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Fuzzing with libFuzzer (clang, Debian packages clang and libclang-rt-14-dev).
#
# Every tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput() (and optionally
# LLVMFuzzerInitialize()) and gets, with no change to this file:
#   make fuzz-<name>     build $(FUZZ_BUILD)/fuzz_<name> from tests/fuzz/fuzz_<name>.c and every
#                        src/*/*.c, instrumented with -fsanitize=fuzzer,address,undefined, and run it
#                        for FUZZ_SECONDS; fails on the first crash, leak, sanitizer report or
#                        input slower than FUZZ_TIMEOUT (the reproducer is left in $(FUZZ_BUILD))
#   make fuzz            every fuzz-<name> in turn, FUZZ_SECONDS each
#   make fuzz-build      build every fuzzer without running it
# A dictionary tests/fuzz/fuzz_<name>.dict, if present, is passed with -dict=. The corpus grows in
# $(FUZZ_BUILD)/corpus-<name>/ (kept between runs; `make clean` removes it).
#
# Variables
#   FUZZ_CC=clang        compiler with libFuzzer
#   FUZZ_SECONDS=60      seconds each fuzzer runs (-max_total_time)
#   FUZZ_TIMEOUT=10      seconds one input may take before it counts as a hang (-timeout)
#   FUZZ_BUILD=build/fuzz  where fuzzers, corpora and crash reproducers go
#   FUZZ_OPTS=           extra libFuzzer options, e.g. FUZZ_OPTS=-jobs=2
# The library is built with USE_JEMALLOC=0 here: AddressSanitizer only sees the C library's
# malloc, which it replaces.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_BUILD   ?= build/fuzz
FUZZ_OPTS    ?=
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS  := -std=gnu11 -O1 -g $(WARN) -D_GNU_SOURCE -Iinclude -Isrc -DPOOL_USE_JEMALLOC=0 \
                -DPOOL_BUILDING_LIBRARY -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: fuzz fuzz-build

fuzz-build: $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_NAMES))

fuzz: fuzz-build
	$(Q)for n in $(FUZZ_NAMES); do $(MAKE) --no-print-directory fuzz-$$n || exit 1; done

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRCS) $(wildcard src/*/*.h) $(PUB_HEADERS) $(OPT_STAMP) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(shell pkg-config --cflags hwloc libdw 2>/dev/null) -o $@ $< \
		$(LIB_SRCS) -lpthread -ldl -lm

# Not .PHONY: make skips pattern rules for phony targets.
fuzz-%: $(FUZZ_BUILD)/fuzz_%
	@mkdir -p $(FUZZ_BUILD)/corpus-$*
	cd $(FUZZ_BUILD) && ./fuzz_$* -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
		-print_final_stats=1 $(if $(wildcard tests/fuzz/fuzz_$*.dict),-dict=$(CURDIR)/tests/fuzz/fuzz_$*.dict) \
		$(FUZZ_OPTS) corpus-$*
