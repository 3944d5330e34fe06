#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# deb-source.sh PACKAGE UPSTREAM DIR FILE - Debian bookworm's source package PACKAGE at upstream
# version UPSTREAM, unpacked with Debian's patches in DIR/PACKAGE-UPSTREAM, which must then hold
# FILE (a path in the tree, to tell the right source). The servers of contrib/ (memcached,
# haproxy) are fetched with it, through their fetch.sh.
#
# It uses a private apt configuration in DIR/apt: a sources list of its own with deb-src lines
# (the machine's apt sources are never read for packages nor changed), its own package lists
# and cache, so that it works as any user and leaves the machine's apt state alone. The
# mirror is the one this machine's apt sources name for Debian (the deb lines of
# /etc/apt/sources.list and /etc/apt/sources.list.d/*.list, the Types: deb stanzas of
# /etc/apt/sources.list.d/*.sources), or deb.debian.org when they name none; the suites are
# bookworm and bookworm-security, whatever the release of the machine. The archive's
# signatures are checked against /usr/share/keyrings/debian-archive-keyring.gpg (package
# debian-archive-keyring). It takes the newest Debian version of UPSTREAM the suites carry, or
# when the mirror lacks that one's files (a mirror that has the index of the security archive
# but not yet its pool answers 404), the newest one it has.
#
# Environment: DEB_APT_MIRROR=<uri> (the Debian mirror to use instead of the machine's),
# DEB_APT_SECURITY=<uri> (the security archive's), DEB_VERSION=<version> (the one Debian
# version to take, e.g. 1.6.18-1). Needs apt-get and dpkg-source (package dpkg-dev). Prints
# what it does; exits non-zero with the reason on any failure. Run again, it does nothing when
# DIR/PACKAGE-UPSTREAM is there.
set -eu

SUITE=bookworm
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

[ $# -eq 4 ] || { echo "usage: deb-source.sh PACKAGE UPSTREAM DIR FILE" >&2; exit 1; }
pkg=$1
upstream=$2
file=$4
die() { echo "$pkg fetch: $*" >&2; exit 1; }
mkdir -p "$3" || die "cannot create $3"
dir=$(cd "$3" && pwd)
tree="$dir/$pkg-$upstream"
if [ -f "$tree/.fetched" ]; then
	echo "$pkg fetch: $tree is there ($(cat "$tree/.fetched"))"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "no apt-get: this needs a Debian machine"
command -v dpkg-source >/dev/null 2>&1 || die "no dpkg-source: install the package dpkg-dev"
[ -r "$KEYRING" ] || die "no $KEYRING: install the package debian-archive-keyring"

# The Debian archives of this machine's apt sources, one URI a line: deb lines and deb822
# stanzas whose URI ends in /debian or /debian-security (a vendor's repository is left out).
machine_uris() {
	{
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -e 's/#.*//' -e 's/\[[^]]*\]//' | awk '$1 == "deb" { print $2 }'
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			awk '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled != "no")
					for (i = 1; i <= nu; i++) print u[i]
				types = ""; enabled = ""; nu = 0
			}
			/^[[:space:]]*#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			{ key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "") }
			key == "types" { types = $0 }
			key == "enabled" { enabled = tolower($0) }
			key == "uris" { nu = split($0, u, " ") }
			END { flush() }' "$f"
		done
	} | sed 's|/*$||' | awk '!seen[$0]++'
}

uris=$(machine_uris)
mirror=${DEB_APT_MIRROR:-$(echo "$uris" | grep -E '/debian$' | head -n 1)}
security=${DEB_APT_SECURITY:-$(echo "$uris" | grep -E '/debian-security$' | head -n 1)}
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
[ -n "$security" ] || security=http://deb.debian.org/debian-security

apt="$dir/apt"
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" \
	"$apt/preferences.d" || die "cannot create $apt"
cat > "$apt/sources.list" <<EOF
deb-src [signed-by=$KEYRING] $mirror $SUITE main
deb-src [signed-by=$KEYRING] $security $SUITE-security main
EOF
: > "$apt/status"
# Everything apt reads or writes is under $apt; the keyring is named by the sources' signed-by.
cat > "$apt/apt.conf" <<EOF
Dir::Etc::SourceList "$apt/sources.list";
Dir::Etc::SourceParts "$apt/sources.list.d";
Dir::Etc::Preferences "$apt/preferences";
Dir::Etc::PreferencesParts "$apt/preferences.d";
Dir::State "$apt";
Dir::State::Lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt/cache";
Debug::NoLocking "true";
APT::Sandbox::User "$(id -un)";
Acquire::Languages "none";
EOF
export APT_CONFIG="$apt/apt.conf"

echo "$pkg fetch: apt-get source $pkg from:"
sed 's/^/  /' "$apt/sources.list"
t0=$(date +%s)
apt-get -q update > "$apt/update.log" 2>&1 ||
	{ cat "$apt/update.log" >&2; die "apt-get update failed (the mirror above)"; }
# the arguments, Debian versions, newest first (dpkg's order)
newest_first() {
	sorted=
	for v in "$@"; do
		next=
		placed=
		for w in $sorted; do
			if [ -z "$placed" ] && dpkg --compare-versions "$v" gt "$w"; then
				next="$next $v"
				placed=1
			fi
			next="$next $w"
		done
		[ -n "$placed" ] || next="$next $v"
		sorted=$next
	done
	echo $sorted
}
if [ -n "${DEB_VERSION:-}" ]; then
	versions=$DEB_VERSION
else
	# shellcheck disable=SC2046
	versions=$(newest_first $(apt-cache showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' |
		grep -E "^([0-9]+:)?$upstream-" | sort -u))
	[ -n "$versions" ] || die "the suites carry no $pkg $upstream"
fi
rm -f "$dir/${pkg}_"*    # what an earlier fetch left: only this one's files remain
dsc=
for v in $versions; do
	if (cd "$dir" && apt-get -q source --download-only "$pkg=$v") > "$apt/source.log" 2>&1; then
		dsc="$dir/${pkg}_${v#*:}.dsc"
		break
	fi
	echo "$pkg fetch: $pkg $v is not on the mirror, trying an older one" >&2
	rm -f "$dir/${pkg}_"*
done
[ -n "$dsc" ] && [ -f "$dsc" ] ||
	{ cat "$apt/source.log" >&2; die "apt-get source failed for every version: $versions"; }
version=$(sed -n 's/^Version: //p' "$dsc")
rm -rf "$tree"
# the archive's signature and checksums were checked by apt: no need of the maintainer's key
(cd "$dir" && dpkg-source --no-check -x "$(basename "$dsc")" "$tree") > "$apt/extract.log" 2>&1 ||
	{ cat "$apt/extract.log" >&2; die "dpkg-source -x $(basename "$dsc") failed"; }
[ -e "$tree/$file" ] || die "$tree does not hold $pkg $upstream (no $file)"
echo "$pkg $version (Debian) from $mirror" > "$tree/.fetched"
echo "$pkg fetch: $tree: $pkg $version with Debian's patches ($(($(date +%s) - t0)) s)"
