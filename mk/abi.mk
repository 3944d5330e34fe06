# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/abi.mk - the ABI of libpool.so (abi/): the linker version script abi/libpool.map (nodes
# LIBPOOL_0.1, LIBPOOL_0.2 and LIBPOOL_0.3), the Debian symbols list abi/libpool.symbols,
# abidiff baselines and the suppressions of changes that keep the ABI (abi/libpool.abignore).
#
# Targets
#   make abi-symbols     rewrite abi/libpool.symbols from the built library, after a deliberate
#                        change of the exported symbols (known symbols keep their version, new
#                        ones get $(VERSION)); tests/package/test_abi.sh compares the two in make check
#   make abi-baseline    write abi/libpool-$(VERSION).abi from the built library with abidw
#                        (Debian package abigail-tools): at a release, and again whenever the
#                        ABI of the version not yet released changes on purpose
#   make abi-check       compare the built library with every abi/libpool-*.abi baseline with
#                        abidiff: the baseline of $(VERSION) must match exactly, those of older
#                        versions must show no incompatible change; nothing to compare without
#                        a baseline. CI runs it on the default (gcc, jemalloc) build.
# The baselines describe a build with gcc and debug information (the default CFLAGS).

# --headers-dir with --drop-private-types: only the types the installed headers define are the
# ABI; struct pool_head is opaque (defined in src/), so its layout may change within a version.
ABIDW_OPTS  := --exported-interfaces-only --no-corpus-path --no-comp-dir-path \
               --headers-dir include/pool --drop-private-types

.PHONY: abi-symbols abi-baseline abi-check

abi-symbols: $(SHARED_REAL)
	$(Q)sh mk/abi-symbols.sh $(SHARED_REAL) $(VERSION) abi/libpool.symbols > abi/libpool.symbols.new
	$(Q)mv abi/libpool.symbols.new abi/libpool.symbols
	@echo "abi/libpool.symbols: rewritten from $(SHARED_REAL)"

abi-baseline: $(SHARED_REAL)
	$(Q)command -v abidw >/dev/null 2>&1 || \
		{ echo "abi-baseline: abidw is missing (Debian: apt-get install -y abigail-tools)"; exit 1; }
	$(Q)abidw $(ABIDW_OPTS) --out-file abi/libpool-$(VERSION).abi $(SHARED_REAL)
	@echo "abi/libpool-$(VERSION).abi: written from $(SHARED_REAL)"

abi-check: $(SHARED_REAL)
	$(Q)sh mk/abi-check.sh $(SHARED_REAL) $(VERSION)
