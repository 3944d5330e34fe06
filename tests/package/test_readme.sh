#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# README.md, followed literally: its example program saved as example.c, then the commands of its
# first sh block under "## Using it" run one by one, with HOME pointing to a temporary
# directory and the README's own variants for another prefix: its `make install PREFIX=...`
# for the `make install` it runs as root and its `export PKG_CONFIG_PATH=... LD_LIBRARY_PATH=...`
# for `ldconfig` (which would change this machine's linker cache). The static link must take
# libpool.a (the program needs no libpool.so) and run: it failed with `cannot find -ludev`,
# which hwloc's .pc added to `pkg-config --static` (issue 29). Then the installed pool-bench
# must find its helpers in LIBEXECDIR, and the man pages must be there.
# Env (from make check): BUILD, CC, SAN. Skipped (77) in sanitizer builds.
set -u
[ -n "${SAN:-}" ] && { echo "skip: the README is followed without sanitizers (SAN=$SAN)"; exit 77; }
repo=$(pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
mkdir "$tmp/work"

awk '/^```c$/ { on = 1; next } /^```$/ { if (on) exit } on' README.md > "$tmp/work/example.c"
[ -s "$tmp/work/example.c" ] || fail "no C example in README.md"
awk '/^## Using it/ { u = 1 } u && /^```sh$/ { on = 1; next } on && /^```$/ { exit } on' README.md |
	sed -e 's/[ 	]*#.*$//' -e 's/^sudo //' -e '/^$/d' > "$tmp/commands"
[ -s "$tmp/commands" ] || fail "no sh block under '## Using it' in README.md"
alt_install=$(grep -o '`make install PREFIX=$HOME/libpool`' README.md | head -n 1 | tr -d '`')
alt_env=$(grep -o '`export PKG_CONFIG_PATH=[^`]*`' README.md | head -n 1 | tr -d '`')
[ -n "$alt_install" ] || fail "README.md lost its 'make install PREFIX=\$HOME/libpool'"
# The README sends the reader to `make help`: it must print values, not the Makefile's names
# (it printed $(CHECK_PKGS)), and name the test packages it installs.
help=$(make -s help 2>&1) || fail "make help failed"
echo "$help" | grep -n '\$(' | grep -q '_PKGS)' && fail "make help prints a package list's name:" \
	"$(echo "$help" | grep '_PKGS)')"
echo "$help" | grep -q 'tests also: python3 ' || fail "make help does not list the test packages"
[ -n "$alt_env" ] || fail "README.md lost its 'export PKG_CONFIG_PATH=... LD_LIBRARY_PATH=...'"
HOME=$tmp
export HOME
echo "README commands:"; sed 's/^/  /' "$tmp/commands"

ran_example=
while IFS= read -r cmd; do
	case "$cmd" in
	"make install") cmd=$alt_install; dir=$repo ;;
	ldconfig) cmd=$alt_env; dir=$repo ;;
	make*) dir=$repo ;;
	*) dir=$tmp/work ;;
	esac
	echo "\$ $cmd"
	cd "$dir" || exit 1
	case "$cmd" in
	export*) eval "$cmd" ;;
	./example) out=$(eval "$cmd") || fail "'$cmd' failed"; echo "$out"; ran_example=1 ;;
	./example-static) out_static=$(eval "$cmd") || fail "'$cmd' failed"; echo "$out_static" ;;
	*) eval "$cmd" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "'$cmd' failed"; } ;;
	esac
done < "$tmp/commands"
cd "$repo" || exit 1
[ -n "$ran_example" ] || fail "the README's commands never run ./example"
case "$out" in "allocated "*", used 0") ;; *) fail "./example printed '$out'" ;; esac
[ -n "${out_static:-}" ] || fail "the README's commands never run ./example-static"
case "$out_static" in "allocated "*", used 0") ;; *) fail "./example-static printed '$out_static'" ;; esac
readelf -d "$tmp/work/example-static" | grep -q 'NEEDED.*libpool' &&
	fail "./example-static needs libpool.so: the static link took the shared library"
ldd "$tmp/work/example" | grep -q "$HOME/libpool/lib/libpool.so.2" ||
	fail "./example does not use the library installed under \$HOME/libpool"

# An installed pool-bench runs its helpers from LIBEXECDIR.
"$HOME/libpool/bin/pool-bench" --scenario pair --size 64 --backend libpool,glibc --reps 1 \
	--pairs 4096 > "$tmp/bench" 2>&1 || { cat "$tmp/bench"; fail "installed pool-bench failed"; }
grep -q 'skipped glibc' "$tmp/bench" && { cat "$tmp/bench"; fail "installed pool-bench misses its helper"; }
[ -f "$HOME/libpool/share/man/man7/libpool.7" ] || fail "libpool(7) not installed"
command -v man >/dev/null 2>&1 ||
	fail "man is not installed (Debian package man-db; make check installs it)"
MANPATH=$HOME/libpool/share/man man -w pool_free > /dev/null 2>&1 || fail "man pool_free finds no page"
echo "README followed: installed in a temporary prefix, the example built with pkg-config, ran"
