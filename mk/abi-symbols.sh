#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Writes on stdout the Debian symbols file (deb-symbols(5)) of a built libpool.so: every symbol
# it exports, with its version node, and the version of libpool that first had it. A symbol
# already in OLD keeps OLD's version; a new one gets VERSION.
#   sh mk/abi-symbols.sh LIBRARY VERSION [OLD]
# `make abi-symbols` rewrites abi/libpool.symbols with it; tests/package/test_abi.sh compares.
[ $# -ge 2 ] || { echo "usage: sh mk/abi-symbols.sh LIBRARY VERSION [OLD]" >&2; exit 2; }
lib=$1
version=$2
old=${3:-/dev/null}
soname=$(objdump -p "$lib" | awk '/SONAME/ { print $2 }')
[ -n "$soname" ] || { echo "mk/abi-symbols.sh: $lib has no soname" >&2; exit 1; }
echo "# SPDX-License-Identifier: MIT"
echo "# Copyright (c) 2026 libpool developers"
echo "# The symbols libpool.so exports (deb-symbols(5)), checked by tests/package/test_abi.sh."
echo "# Regenerate after a deliberate ABI change with: make abi-symbols"
echo "$soname libpool${soname#libpool.so.} #MINVER#"
echo "* Build-Depends-Package: libpool-dev"
nm -D --defined-only --with-symbol-versions "$lib" |
	awk '{ name = $NF; sub(/@@/, "@", name)
	       if ($(NF - 1) == "A" && name !~ /@/) name = name "@" name   # a version node
	       print name }' | LC_ALL=C sort |
	awk -v version="$version" -v old="$old" '
		BEGIN { while ((getline l < old) > 0) if (l ~ /^ /) { split(l, f, " "); v[f[1]] = f[2] } }
		{ print " " $1 " " ($1 in v ? v[$1] : version) }'
