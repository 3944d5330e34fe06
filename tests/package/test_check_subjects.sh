#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# mk/check-subjects.sh, which CI runs on the commits a submission adds, passes good subjects and
# names each bad one: too long, not `area: what changed`, a body with no blank line before it.
command -v git >/dev/null 2>&1 ||
	{ echo "FAIL: git is not installed (Debian package git; make check installs it)"; exit 1; }
script=$(cd "$(dirname "$0")/../.." && pwd)/mk/check-subjects.sh
dir=$(mktemp -d /tmp/test_check_subjects.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail=0
g() { git -c user.name=t -c user.email=t@example.org "$@"; }
g init -q . && g commit -q --allow-empty -m "base: the commit before the rule" || exit 1
export CHECK_SUBJECTS_SINCE=$(git rev-parse HEAD)

g commit -q --allow-empty -m "slab: a subject of the right form" -m "A body after a blank line."
g commit -q --allow-empty -m "doc, changelog: two areas" || exit 1
out=$(sh "$script" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "2 commit(s) checked"; then
	echo "good subjects pass: $out"
else
	echo "FAIL: good subjects: exit $rc: $out"; fail=1
fi

long="slab: $(printf '%070d' 0)"
g commit -q --allow-empty -m "$long"
g commit -q --allow-empty -m "a subject with no area"
g commit -q --allow-empty -m "$(printf 'core: a subject\nthat runs on')"
out=$(sh "$script" 2>&1); rc=$?
for want in "subject of 76 characters (at most 72)" "not of the form 'area: what changed'" \
	"no blank line between the subject and the body" "3 of 5 commit(s) break the rule"; do
	if [ $rc -eq 1 ] && echo "$out" | grep -qF "$want"; then
		echo "named: $want"
	else
		echo "FAIL: exit $rc, expected 1 and '$want' in: $out"; fail=1
	fi
done
exit $fail
