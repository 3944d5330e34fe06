#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# The body of `make abi-check` (mk/abi.mk): compares LIBRARY with every abi/libpool-<v>.abi
# baseline with abidiff. The baseline of VERSION itself must match exactly (any change means
# the ABI of that version moved since its baseline was written: if on purpose, and VERSION is
# not released, `make abi-baseline`); a baseline of an older version may differ by added
# functions and variables only: a removed or changed one (a changed type it uses, such as a
# structure that grew) breaks the programs built against that version. A baseline of another
# soname is skipped: programs built against it do not load this library at all (the soname
# changes exactly when the ABI breaks). Exits 0 when there is no baseline.
#   sh mk/abi-check.sh LIBRARY VERSION
[ $# -eq 2 ] || { echo "usage: sh mk/abi-check.sh LIBRARY VERSION" >&2; exit 2; }
lib=$1
version=$2
command -v abidiff >/dev/null 2>&1 ||
	{ echo "abi-check: abidiff is missing (Debian: apt-get install -y abigail-tools)"; exit 1; }
set -- abi/libpool-*.abi
[ -e "$1" ] || { echo "abi-check: no baseline in abi/: nothing to compare"; exit 0; }
# newer: 0 when version $1 is not newer than $2 (dotted numbers)
newer() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)" = "$1" ] &&
		[ "$1" != "$2" ]
}
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT INT TERM
fail=0
soname=$(objdump -p "$lib" | awk '/SONAME/ { print $2 }')
for base in "$@"; do
	v=${base#abi/libpool-}
	v=${v%.abi}
	if newer "$v" "$version"; then
		echo "abi-check: $base is newer than $version: skipped"
		continue
	fi
	base_soname=$(sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$base")
	if [ "$base_soname" != "$soname" ]; then
		echo "abi-check: $base is the ABI of $base_soname, not $soname: skipped"
		continue
	fi
	# types defined outside the installed headers (struct pool_head and the rest of src/) are
	# private: opaque to programs, so their layout is no ABI
	# abi/libpool.abignore: struct pool_stats grows at its end (its getter takes the caller's
	# size), which keeps the ABI
	abidiff --exported-interfaces-only --hd2 include/pool --drop-private-types \
		--suppressions abi/libpool.abignore "$base" "$lib" > "$out" 2>&1
	rc=$?
	if [ "$v" = "$version" ]; then
		if [ $rc -ne 0 ]; then
			cat "$out"
			echo "abi-check: FAIL: the ABI of $version differs from $base (abidiff exit $rc)."
			echo "  If the change is deliberate and $version is not released: make abi-baseline"
			fail=1
		else
			echo "abi-check: $lib matches $base"
		fi
	elif [ $((rc & 1)) -ne 0 ] || [ $((rc & 8)) -ne 0 ] ||
		grep -Eq 'changes summary: ([1-9][0-9]* Removed|[0-9]+ Removed, [1-9][0-9]* Changed)' "$out"; then
		cat "$out"
		echo "abi-check: FAIL: incompatible ABI change since $v (abidiff exit $rc): only"
		echo "  added functions and variables keep the ABI of an older release"
		fail=1
	else
		[ $rc -ne 0 ] && cat "$out"
		echo "abi-check: $lib keeps the ABI of $v$([ $rc -ne 0 ] && echo ' (compatible changes above)')"
	fi
done
exit $fail
