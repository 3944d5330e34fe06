#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# fetch.sh DIR - Debian's memcached 1.6.18 source package, unpacked with Debian's patches in
# DIR/memcached-1.6.18 (the source `make memcached` builds; mk/memcached.mk), by
# contrib/deb-source.sh: a private apt configuration in DIR/apt with deb-src lines for
# bookworm and bookworm-security (the Debian release whose memcached is 1.6.18) on this
# machine's Debian mirror, whose apt sources are never changed; signatures checked against
# debian-archive-keyring.
#
# Environment: MEMCACHED_APT_MIRROR=<uri> (the Debian mirror to use instead of the machine's),
# MEMCACHED_APT_SECURITY=<uri> (the security archive's), MEMCACHED_DEB_VERSION=<version> (a
# Debian version of the package, e.g. 1.6.18-1; default the newest one the suites carry and
# the mirror has). Needs apt-get and dpkg-source (package dpkg-dev). Prints what it does;
# exits non-zero with the reason on any failure. Run again, it does nothing when
# DIR/memcached-1.6.18 is there.
set -eu

[ $# -eq 1 ] || { echo "memcached fetch: usage: fetch.sh DIR" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
DEB_APT_MIRROR=${MEMCACHED_APT_MIRROR:-} DEB_APT_SECURITY=${MEMCACHED_APT_SECURITY:-} \
	DEB_VERSION=${MEMCACHED_DEB_VERSION:-} \
	sh "$here/../deb-source.sh" memcached 1.6.18 "$1" slabs.h
grep -q 1.6.18 "$1/memcached-1.6.18/version.m4" ||
	{ echo "memcached fetch: $1/memcached-1.6.18 does not hold memcached 1.6.18" >&2; exit 1; }
