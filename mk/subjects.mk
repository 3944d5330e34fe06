# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/subjects.mk - the commit subjects (mk/check-subjects.sh).
#
# Targets
#   make check-subjects  every commit since the rule began (mk/check-subjects.sh names the
#                        commit) has a subject `area: what changed` of at most 72 characters
#                        and a blank line before its body; each one that does not is printed
#                        with its reason, and the target fails. CI runs it on the clone it
#                        tests; tests/package/test_check_subjects.sh tests the check itself in make
#                        check (git is among the tests' packages for it).

CHECK_PKGS += git

.PHONY: check-subjects

check-subjects:
	$(Q)sh mk/check-subjects.sh
