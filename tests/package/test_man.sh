#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# Every man page in the tree (man/*.[1-8], doc/*.[1-8]): no warning or error from
# `mandoc -T lint` (its style notes are shown, not counted) nor from groff -ww (what
# `man --warnings` runs); the .TH line names the page as its file
# (upper case), its section and "libpool $VERSION"; the page's own name is among its NAME
# section's names (mk/man-names.sh: every other name becomes a link at install); every
# libpool page a page refers to exists; every public function of include/pool/ is named
# by a section 3 page; and pools(1)'s SYNOPSIS has a line for every command family of the CLI
# (the `pools ...` words of src/introspect/pool-cli.c's table: it lacked `profile`).
# Env (from make check): VERSION. Needs mandoc and groff (Debian packages mandoc and
# groff-base, which make check installs).
set -u
fail=0
bad() { echo "FAIL: $*"; fail=1; }
for c in mandoc:mandoc groff:groff-base; do
	command -v "${c%:*}" >/dev/null 2>&1 || { echo "FAIL: ${c%:*} is not installed" \
		"(Debian package ${c#*:}; make check installs it)"; exit 1; }
done
version=${VERSION:?VERSION must be set}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

pages=$(ls man/*.[1-8] doc/*.[1-8] 2>/dev/null | sort)
[ -n "$pages" ] || { echo "FAIL: no man pages"; exit 1; }
: > "$tmp/names"
for p in $pages; do
	base=$(basename "$p")
	name=${base%.*}
	sec=${base##*.}
	mandoc -T lint -W style "$p" > "$tmp/lint" 2>&1
	if grep -v ': STYLE: ' "$tmp/lint" | grep -q .; then
		bad "$p: mandoc -T lint:"; grep -v ': STYLE: ' "$tmp/lint"
	fi
	n=$(grep -c ': STYLE: ' "$tmp/lint")
	[ "$n" -gt 0 ] && echo "note: $p: $n mandoc style notes (e.g. $(head -n 1 "$tmp/lint" | sed 's/^[^ ]* //'))"
	groff -t -man -ww -z -Tutf8 "$p" > "$tmp/groff" 2>&1
	[ -s "$tmp/groff" ] && { bad "$p: groff -ww:"; cat "$tmp/groff"; }
	th=$(grep -m 1 '^\.TH ' "$p")
	want_title=$(echo "$name" | tr 'a-z' 'A-Z')
	echo "$th" | awk -v t="$want_title" -v s="$sec" -v v="libpool $version" '
		{ line = $0; n = 0
		  while (match(line, /"[^"]*"|[^ ]+/)) {
			f[++n] = substr(line, RSTART, RLENGTH); gsub(/"/, "", f[n])
			line = substr(line, RSTART + RLENGTH) }
		  exit !(f[2] == t && f[3] == s && f[5] == v) }' ||
		bad "$p: .TH should be '.TH $want_title $sec <date> \"libpool $version\" ...': $th"
	names=$(sh mk/man-names.sh "$p")
	echo "$names" | grep -qx "$name" || bad "$p: its NAME section does not name '$name': $names"
	for n in $names; do echo "$n $sec $base"; done >> "$tmp/names"
done
dups=$(awk '{ print $1 "." $2 }' "$tmp/names" | sort | uniq -d)
[ -z "$dups" ] || bad "names documented by two pages: $dups"

# References to libpool's own pages (pool*, libpool) must resolve to a page or a link.
for p in $pages; do
	grep -o '^\.BR [a-z_\\-]* ([0-9])' "$p" | sed -e 's/^\.BR //' -e 's/\\-/-/g' -e 's/ (/ /' \
		-e 's/)$//' | while read -r ref sec; do
		case "$ref" in pool*|libpool) ;; *) continue ;; esac
		grep -q "^$ref $sec " "$tmp/names" || echo "$p refers to $ref($sec), which no page documents"
	done
done > "$tmp/refs"
[ -s "$tmp/refs" ] && { bad "dangling references:"; cat "$tmp/refs"; }

# Every public function (POOL_API or inline, not the pool__ internals) has a section 3 page.
sed -n 's/^\(POOL_API\|POOL_INLINE\) [^(]*[ *]\(pool_[a-z0-9_]*\)(.*/\2/p' include/pool/*.h |
	grep -v "^pool__" | sort -u > "$tmp/api"
[ -s "$tmp/api" ] || bad "no public function found in include/pool/"
for f in $(cat "$tmp/api"); do
	grep -q "^$f 3 " "$tmp/names" || bad "public function $f has no man(3) page naming it"
done
# The CLI's command families ("pools", "<word>" rows of the command table) in pools(1)'s SYNOPSIS.
sed -n 's/^[[:space:]]*{ "pools", "\([a-z]*\)", POOL_CLI_.*/\1/p' src/introspect/pool-cli.c |
	sort -u > "$tmp/cmds"
[ -s "$tmp/cmds" ] || bad "no 'pools' command found in src/introspect/pool-cli.c"
sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' doc/pools.1 > "$tmp/synopsis"
for c in $(cat "$tmp/cmds"); do
	grep -q "^\.B pools $c\b" "$tmp/synopsis" || bad "pools(1)'s SYNOPSIS lacks 'pools $c'"
done
[ $fail -eq 0 ] || exit 1
echo "man pages: $(echo "$pages" | wc -l) pages lint clean, $(wc -l < "$tmp/api") public functions documented"
