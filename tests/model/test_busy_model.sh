#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# Model-checks the BUSY protocol of the shared free lists (tests/model/busy.pml, described in
# doc/internals.md, "The BUSY protocol model") with spin: an exhaustive search of every
# interleaving of 3 threads on 2 buckets (stacks of magazines, and each bucket's empties) must
# find no assertion violation and no execution that fails to finish, and must reach every
# statement of the model. Then each broken variant (a lock-free pop that reads `down` before
# owning the head; a push that CASes without owning the head; a pop that leaves its empty
# magazine in the empties after giving the head back; a fork that waits without bound) must be
# caught. Fails when spin is absent
# (Debian package `spin`, which make check installs).
#
# BUSY_MODEL_FLAGS adds spin -D options for a larger run, e.g. BUSY_MODEL_FLAGS=-DOPS1=2 (all
# three threads do two operations): 18.5 million states and 1.6 GB, where the default run takes
# 3.0 million and 194 MB. The model does not depend on the library build: pan is compiled with
# $CC (default cc) without the sanitizer flags, so a sanitizer build (SAN set) skips it, the
# 40-60 s it takes there being the same check again (the plain make check and every CC's run
# it).
if [ -n "${SAN:-}" ]; then
	echo "skipped: the model does not depend on the build; make check without SAN runs it"
	exit 77
fi
command -v spin >/dev/null 2>&1 || {
	echo "FAIL: spin is not installed (Debian package spin; make check installs it)"; exit 1; }
model=$(cd "$(dirname "$0")" && pwd)/busy.pml
[ -r "$model" ] || { echo "FAIL: $model missing"; exit 1; }
cc=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1
fail=0

# check NAME SPIN_FLAGS PAN_FLAGS: build pan for the model with SPIN_FLAGS, run it, leave its
# output in NAME.out
check() {
	spin -a $2 $BUSY_MODEL_FLAGS "$model" > "$1.spin" 2>&1 || {
		echo "FAIL: $1: spin -a failed"; cat "$1.spin"; return 1; }
	# COLLAPSE compresses the stored states losslessly: the search stays exhaustive.
	# MEMLIM bounds the memory (MB); a search that reaches it says so and fails below.
	$cc -O2 -w -DCOLLAPSE -DMEMLIM=2048 -o pan pan.c > "$1.cc" 2>&1 || {
		echo "FAIL: $1: cannot compile pan.c with $cc"; cat "$1.cc"; return 1; }
	./pan -a $3 -m100000 -w20 > "$1.out" 2>&1
	return 0
}

summary() {
	grep -E 'errors:|states, stored|transitions \(|total actual memory|elapsed time' "$1.out" |
		sed 's/^ */    /'
}

# The protocol: no violation, a complete search, every statement reached.
if check busy "" ""; then
	if ! grep -q 'errors: 0$' busy.out; then
		echo "FAIL: the BUSY protocol model has a violation:"
		grep -E 'violated|cycle|invalid end state' busy.out
		fail=1
	elif grep -qE 'max search depth too small|reached -DMEMLIM bound|out of memory' busy.out; then
		echo "FAIL: the search did not complete:"
		grep -E 'max search depth|MEMLIM|out of memory' busy.out
		fail=1
	elif ! grep -A1 'unreached in proctype thread' busy.out | grep -q '(0 of' ||
	     ! grep -A1 'unreached in init' busy.out | grep -q '(0 of'; then
		echo "FAIL: parts of the model are never reached:"
		sed -n '/^unreached in proctype/,/^pan: elapsed/p' busy.out
		fail=1
	else
		echo "ok: BUSY protocol, 3 threads, 2 buckets: no violation, every thread finishes"
		summary busy
	fi
else
	fail=1
fi

# The broken variants: each must be caught.
negative() {	# NAME PAN_FLAGS EXPECTED_PATTERN WHAT
	check "$1" "-D$1" "$2" || { fail=1; return; }
	if grep -q 'errors: 0$' "$1.out" || ! grep -qE "$3" "$1.out"; then
		echo "FAIL: $1 ($4) was not caught"
		summary "$1"
		fail=1
	else
		echo "ok: $1 caught: $(grep -E "$3" "$1.out" | head -n 1)"
	fi
}
negative NEG_LOCKFREE_POP "" 'assertion violated' \
	"pop reads down through a head it does not own, then CASes"
negative NEG_CAS_PUSH "" 'assertion violated' \
	"push CASes and counts without owning the head"
negative NEG_LATE_DEPOSIT "" 'assertion violated' \
	"pop leaves its empty magazine in the empties after giving the head back"
# under weak fairness (-f) a live owner always gets to store its head: only a thread that
# died inside its BUSY window can keep fork_prepare waiting
negative NEG_UNBOUNDED_FORK "-f" 'acceptance cycle' \
	"fork_prepare waits without bound for a BUSY head"
exit $fail
