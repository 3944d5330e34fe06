# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# Shell helpers shared by the tests/test_*.sh scripts that count their failures (sourced, not
# run): the caller sets $tmp (a scratch directory) and reads $failures at the end.
#   fail <message>                      print "FAIL: <message>" and count it
#   expect <status> <desc> <command...> run the command; on another exit status, count a
#                                       failure and show the end of its output; else "ok: <desc>".
#                                       Its output stays in $tmp/out and $tmp/err.
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
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
