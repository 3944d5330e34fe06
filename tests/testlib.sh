# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# Shell helpers shared by the tests/*/test_*.sh scripts that count their failures (sourced, not
# run): the caller sets $tmp (a scratch directory) and reads $failures at the end.
#   fail <message>                      print "FAIL: <message>" and count it
#   expect <status> <desc> <command...> run the command; on another exit status, count a
#                                       failure and show the end of its output; else "ok: <desc>".
#                                       Its output stays in $tmp/out and $tmp/err.
#   need <command> <package>            0 when the command is installed; else count a failure
#                                       naming the Debian package (make check installs it: a
#                                       test does not skip for a missing package) and return 1
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	fail "$1 is not installed (Debian package $2; make check installs it)"
	return 1
}

expect() {
	want=$1; desc=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$desc: exit $rc, expected $want"
		tail -n 40 "$tmp/out" "$tmp/err"
		return 1
	fi
	echo "ok: $desc"
	return 0
}
