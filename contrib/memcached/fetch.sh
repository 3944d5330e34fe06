#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# fetch.sh DIR - Debian's memcached 1.6.18 source package, unpacked with Debian's patches in
# DIR/memcached-1.6.18 (the source `make memcached` builds; mk/memcached.mk).
#
# It uses a private apt configuration in DIR/apt: a sources list of its own with deb-src lines
# (the machine's apt sources are never read for packages nor changed), its own package lists
# and cache, so that it works as any user and leaves the machine's apt state alone. The
# mirror is the one this machine's apt sources name for Debian (the deb lines of
# /etc/apt/sources.list and /etc/apt/sources.list.d/*.list, the Types: deb stanzas of
# /etc/apt/sources.list.d/*.sources), or deb.debian.org when they name none; the suites are
# bookworm and bookworm-security, the Debian release whose memcached is 1.6.18, whatever the
# release of the machine. The archive's signatures are checked against
# /usr/share/keyrings/debian-archive-keyring.gpg (package debian-archive-keyring).
#
# Environment: MEMCACHED_APT_MIRROR=<uri> (the Debian mirror to use instead of the machine's),
# MEMCACHED_APT_SECURITY=<uri> (the security archive's), MEMCACHED_DEB_VERSION=<version> (a
# Debian version of the package, e.g. 1.6.18-1; default the newest one the suites carry).
# Needs apt-get and dpkg-source (package dpkg-dev). Prints what it does; exits non-zero with
# the reason on any failure. Run again, it does nothing when DIR/memcached-1.6.18 is there.
set -eu

UPSTREAM=1.6.18
SUITE=bookworm
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "memcached fetch: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: fetch.sh DIR"
mkdir -p "$1" || die "cannot create $1"
dir=$(cd "$1" && pwd)
tree="$dir/memcached-$UPSTREAM"
if [ -f "$tree/.fetched" ]; then
	echo "memcached fetch: $tree is there ($(cat "$tree/.fetched"))"
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
mirror=${MEMCACHED_APT_MIRROR:-$(echo "$uris" | grep -E '/debian$' | head -n 1)}
security=${MEMCACHED_APT_SECURITY:-$(echo "$uris" | grep -E '/debian-security$' | head -n 1)}
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

echo "memcached fetch: apt-get source memcached from:"
sed 's/^/  /' "$apt/sources.list"
t0=$(date +%s)
apt-get -q update > "$apt/update.log" 2>&1 ||
	{ cat "$apt/update.log" >&2; die "apt-get update failed (the mirror above)"; }
pkg=memcached
[ -z "${MEMCACHED_DEB_VERSION:-}" ] || pkg="memcached=$MEMCACHED_DEB_VERSION"
rm -f "$dir"/memcached_*    # what an earlier fetch left: only this one's files remain
(cd "$dir" && apt-get -q source --download-only "$pkg") > "$apt/source.log" 2>&1 ||
	{ cat "$apt/source.log" >&2; die "apt-get source $pkg failed"; }
dsc=
for f in "$dir"/memcached_"$UPSTREAM"-*.dsc; do [ -f "$f" ] && dsc=$f; done
[ -n "$dsc" ] || { cat "$apt/source.log" >&2; die "no memcached_$UPSTREAM-*.dsc was fetched"; }
version=$(sed -n 's/^Version: //p' "$dsc")
rm -rf "$tree"
# the archive's signature and checksums were checked by apt: no need of the maintainer's key
(cd "$dir" && dpkg-source --no-check -x "$(basename "$dsc")" "$tree") > "$apt/extract.log" 2>&1 ||
	{ cat "$apt/extract.log" >&2; die "dpkg-source -x $(basename "$dsc") failed"; }
if [ ! -f "$tree/slabs.h" ] || ! grep -q "$UPSTREAM" "$tree/version.m4"; then
	die "$tree does not hold memcached $UPSTREAM"
fi
echo "memcached $version (Debian) from $mirror" > "$tree/.fetched"
echo "memcached fetch: $tree: memcached $version with Debian's patches ($(($(date +%s) - t0)) s)"
