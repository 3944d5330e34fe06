#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The layer order of src/ holds: no file includes or calls up the order, no circle, tools use
# the public headers only (tests/package/check-layers.py, whose LAYERS is the order).
command -v python3 >/dev/null 2>&1 ||
	{ echo "FAIL: python3 is not installed (Debian package python3; make check installs it)"; exit 1; }
exec python3 "$(dirname "$0")/check-layers.py" "$(dirname "$0")/../.."
