#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# fetch.sh DIR - Debian's haproxy 2.6.12 source package, unpacked with Debian's patches in
# DIR/haproxy-2.6.12 (the source `make haproxy` builds; mk/haproxy.mk), by
# contrib/deb-source.sh: a private apt configuration in DIR/apt with deb-src lines for
# bookworm and bookworm-security (the Debian release whose haproxy is 2.6.12) on this
# machine's Debian mirror, whose apt sources are never changed; signatures checked against
# debian-archive-keyring.
#
# Environment: HAPROXY_APT_MIRROR=<uri> (the Debian mirror to use instead of the machine's),
# HAPROXY_APT_SECURITY=<uri> (the security archive's), HAPROXY_DEB_VERSION=<version> (a Debian
# version of the package, e.g. 2.6.12-1+deb12u3; default the newest one the suites carry and
# the mirror has). Needs apt-get and dpkg-source (package dpkg-dev). Prints what it does;
# exits non-zero with the reason on any failure. Run again, it does nothing when
# DIR/haproxy-2.6.12 is there.
set -eu

[ $# -eq 1 ] || { echo "haproxy fetch: usage: fetch.sh DIR" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
DEB_APT_MIRROR=${HAPROXY_APT_MIRROR:-} DEB_APT_SECURITY=${HAPROXY_APT_SECURITY:-} \
	DEB_VERSION=${HAPROXY_DEB_VERSION:-} \
	sh "$here/../deb-source.sh" haproxy 2.6.12 "$1" src/pool.c
[ "$(cat "$1/haproxy-2.6.12/VERSION")" = 2.6.12 ] ||
	{ echo "haproxy fetch: $1/haproxy-2.6.12 does not hold haproxy 2.6.12" >&2; exit 1; }
