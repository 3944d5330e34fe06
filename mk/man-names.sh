#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Prints the names a man page documents, one per line: the comma-separated words of its NAME
# section before "\-" (for "pool_alloc, pool_free \- ..." it prints pool_alloc and pool_free).
# `make install` links every name but the page's own to the page; tests/package/test_man.sh checks that
# each page's file name is among its names.
#   sh mk/man-names.sh PAGE
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: sh mk/man-names.sh PAGE" >&2; exit 2; }
awk '
	/^\.SH/ { if (on) exit; on = ($2 == "NAME"); next }
	on { line = line " " $0; if (index(line, "\\-")) exit }
	END {
		sub(/\\-.*/, "", line)
		gsub(/\\f[BIRP]/, "", line)
		n = split(line, w, /[ ,]+/)
		for (i = 1; i <= n; i++) if (w[i] != "") print w[i]
	}' "$1"
