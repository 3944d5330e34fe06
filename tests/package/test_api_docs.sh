#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The header, the man pages and doc/api.md agree: every public function and variable of
# include/pool/ is in the SYNOPSIS of one section 3 page and in doc/api.md, with the header's
# prototype (tests/package/check-api-docs.py).
command -v python3 >/dev/null 2>&1 || { echo "test_api_docs: python3 is missing"; exit 77; }
exec python3 "$(dirname "$0")/check-api-docs.py" "$(dirname "$0")/../.."
