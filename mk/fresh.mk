# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/fresh.mk - the README's promise on a fresh machine (tests/package/fresh-machine.sh).
#
# Targets
#   make fresh-check     in a minimal Debian root made with mmdebstrap --variant=minbase (the
#                        Debian mirror and suite of this machine's apt sources, plus make and
#                        gcc only, no package list kept), a clone of the commit at HEAD
#                        (uncommitted changes are not tested), run the commands of the README's
#                        first sh block literally, as root, through chroot: `make stress` must
#                        pass the first time and `make check` end with 0 failed and no skip but
#                        the platform limits the README's Tests section lists. Prints each
#                        step's time and, on failure, the command and its first error line.
#                        Unmounts and removes the root on every exit path (never through a
#                        mount). Needs root, mmdebstrap, git and the Debian mirror; about 10
#                        minutes on 2 cores. CI runs it before it installs anything.
#
# Variables
#   FRESH_LOGS=$(BUILD)/fresh  where each command's whole output is kept (<command>.log)
#   FRESH_KEEP=1               keep the root (in $TMPDIR, default /tmp) to look into it
#   TMPDIR                     where the root is made (about 2 GB)

FRESH_LOGS ?= $(BUILD)/fresh

.PHONY: fresh-check

fresh-check:
	$(Q)sh tests/package/fresh-machine.sh $(FRESH_LOGS)
