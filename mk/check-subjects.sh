#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# mk/check-subjects.sh - every commit since SINCE (below) has a subject of the form
# `area: what changed` in at most 72 characters and, where it has a body, a blank line between
# the two: the why and the figures go in the body (HAProxy's CONTRIBUTING asks the same).
# `make check-subjects` and CI run it from the top of a clone.
#
# SINCE is the last commit written before the rule: the commits after it are the ones that
# submissions added, so a clean clone of main checks exactly what was added under the rule.
# In a shallow clone that lacks SINCE, the commits present are checked. CHECK_SUBJECTS_SINCE
# in the environment replaces SINCE (tests/package/test_check_subjects.sh checks a repository of its own).
#
# Usage: sh mk/check-subjects.sh [REV]   (default HEAD)
# Exit: 0 every subject passes; 1 each failing commit printed with its reason; 2 not a git
# checkout.
SINCE=${CHECK_SUBJECTS_SINCE:-cff863885430696e97fd294f1ab2eb434b93f104}
MAX=72
# area: a word of letters, digits and . / _ + - (a file, a folder, a subsystem), or up to three
# such words joined by ", " or " "; then ": " and the change.
FORM='^[A-Za-z0-9_./+-]+(,? [A-Za-z0-9_./+-]+){0,2}: [^ ]'
rev=${1:-HEAD}

git rev-parse --git-dir >/dev/null 2>&1 || { echo "check-subjects: not a git checkout"; exit 2; }
if git cat-file -e "$SINCE^{commit}" 2>/dev/null; then
	range="$SINCE..$rev"
else
	range=$rev
	echo "check-subjects: ${SINCE%"${SINCE#????????????}"} is not in this clone (shallow?): checking the commits present"
fi

n=0 bad=0
for c in $(git rev-list --no-merges "$range"); do
	n=$((n + 1))
	subject=$(git log -1 --format=%s "$c")
	second=$(git log -1 --format=%B "$c" | sed -n 2p)
	why=
	if [ "${#subject}" -gt "$MAX" ]; then
		why="subject of ${#subject} characters (at most $MAX)"
	elif ! printf '%s\n' "$subject" | grep -Eq "$FORM"; then
		why="subject not of the form 'area: what changed'"
	elif [ -n "$second" ]; then
		why="no blank line between the subject and the body"
	fi
	if [ -n "$why" ]; then
		printf '%s %s\n    %s\n' "$(git rev-parse --short=12 "$c")" "$why" "$subject"
		bad=$((bad + 1))
	fi
done
if [ "$bad" -gt 0 ]; then
	echo "check-subjects: $bad of $n commit(s) break the rule"
	exit 1
fi
echo "check-subjects: $n commit(s) checked: each subject is 'area: what changed' in at most $MAX characters"
