#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# check.sh OUT VARIANT MODE [TEST...] - HAProxy's own regression tests (reg-tests/*.vtc, run by
# its scripts/run-regtests.sh with Debian's varnishtest, package varnish) in the tree
# OUT/VARIANT that build.sh made (pool: the libpool build; stock: HAProxy's own pools), `--j
# HAPROXY_CHECK_JOBS` at once (2 by default). MODE names the run in the output and sets how:
#   default   HAProxy's reg-tests as they come (each haproxy gets -dM: poisoning)
#   no-cache  each haproxy gets -dMno-cache: no thread cache, every object through the shared
#             lists of libpool (HAProxy's own pools: straight from malloc())
#   tag       POOL_DEBUG=tag,integrity,caller: each object tagged with its pool and its last
#             caller, cached objects filled with a pattern checked when they leave the cache
#   uaf       POOL_DEBUG=uaf: an object per mapping, a guard page, freed objects PROT_NONE
# (POOL_DEBUG reaches libpool only: the stock build ignores it.) A test that fails is run
# again alone, once: if it passes then, it flaked (under the parallel load) and counts as
# passed, named as such; it is run alone up to HAPROXY_CHECK_RETRIES times (3 by default) before
# it counts as failed. The tests run on HAPROXY_CHECK_CPUS CPUs (2 by default: the first two this
# process may run on, by taskset; 0: all), and HAProxy starts a thread per CPU it may run on:
# the reg-tests have timing flakes whose rate grows with the thread count, on HAProxy's own
# pools as on libpool's (ssl_generate_certificate at nbthread 8: 2 of 10 runs of the stock
# build fail, 4 of 10 with -dMno-cache, an OpenSSL error of the certificate made on the fly left
# in the thread's error queue). Ends with one line,
#   haproxy check: <variant> <mode>: <n> passed (<k> after a flake: <tests>), <f> failed: <tests>
# and exits 1 when a test failed. TEST...: reg-tests/<dir>/<name>.vtc to run instead of all.
# The logs of failed tests are kept in OUT/check/<variant>-<mode>/ (run-regtests.sh's
# failedtests.log and test directories); the whole output in OUT/check/<variant>-<mode>.log.
set -u

die() { echo "haproxy check: $*" >&2; exit 2; }

[ $# -ge 3 ] || die "usage: check.sh OUT VARIANT MODE [TEST...]"
out=$(cd "$1" && pwd) || die "no $1"
variant=$2
mode=$3
shift 3
tree="$out/$variant"
[ -x "$tree/haproxy" ] || die "no $tree/haproxy: make haproxy first"
vtest=$(command -v varnishtest) || die "no varnishtest: install the package varnish"
jobs=${HAPROXY_CHECK_JOBS:-2}
retries=${HAPROXY_CHECK_RETRIES:-3}
ncpus=${HAPROXY_CHECK_CPUS:-2}
case $retries$ncpus in
*[!0-9]*) die "HAPROXY_CHECK_RETRIES and HAPROXY_CHECK_CPUS take a number" ;;
esac
# The first $ncpus CPUs of this process's affinity list ("0-3,8" gives 0,1 for 2), by taskset
# (util-linux); none when $ncpus is 0 or at least what the list holds.
pin=
if [ "$ncpus" -gt 0 ]; then
	allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	cpus=$(echo "$allowed" | awk -v n="$ncpus" -F, '{
		k = 0; out = "";
		for (i = 1; i <= NF && k < n; i++) {
			lo = $i; hi = $i;
			if (split($i, r, "-") == 2) { lo = r[1]; hi = r[2]; }
			for (c = lo + 0; c <= hi + 0 && k < n; c++) { out = out (k ? "," : "") c; k++; }
		}
		if (k == n) print out;
	}')
	if [ -n "$cpus" ] && [ "$cpus" != "$allowed" ]; then
		command -v taskset >/dev/null 2>&1 || die "no taskset: install the package util-linux"
		pin="taskset -c $cpus"
	fi
fi
case $mode in
default)  args=-dM;         debug= ;;
no-cache) args=-dMno-cache; debug= ;;
tag)      args=-dM;         debug=tag,integrity,caller ;;
uaf)      args=-dM;         debug=uaf ;;
*) die "unknown mode $mode (default, no-cache, tag, uaf)" ;;
esac
logs="$out/check/$variant-$mode"
rm -rf "$logs"
mkdir -p "$logs" || die "cannot create $logs"
log="$out/check/$variant-$mode.log"

# The command given, run with SIGINT and SIGQUIT at their default action. vtest stops HAProxy
# with SIGINT (SIGTERM 2 s later, and a test that checks the exit status fails); a background
# job of a non-interactive shell (`make haproxy-check &` in a script, nohup) inherits them
# ignored, and HAProxy keeps them so: 5 of the 181 tests failed every time. perl (perl-base,
# which every Debian system has) puts the default back, which exec() keeps.
sigdfl() {
	perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT";
		exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n"' "$@"
}

# run-regtests.sh with the tests given (none: all); its output goes to $2, and the tests that
# failed (their .vtc) are printed. Its temporary files stay in /tmp, the shortest place (the
# tests' UNIX sockets have paths of at most 97 bytes); what failed tests left is moved to $1.
regtests() {
	keep=$1
	dest=$2
	shift 2
	(cd "$tree" && export VTEST_PROGRAM="$vtest" HAPROXY_PROGRAM="$tree/haproxy" \
		HAPROXY_ARGS="$args" POOL_DEBUG="$debug" TMPDIR=/tmp &&
		sigdfl $pin sh scripts/run-regtests.sh "$@") > "$dest" 2>&1
	left=$(sed -n 's|^## test results in: "\(/tmp/haregtests-[^/]*\)/.*|\1|p' "$dest" | head -n 1)
	if [ -n "$left" ] && [ -d "$left" ]; then
		rm -rf "$keep"
		mv "$left" "$keep"
	fi
	sed -n 's/^###### Test case: \(.*\.vtc\) ######$/\1/p' "$dest" | sort -u
}

echo "haproxy check: $variant build, $mode (HAPROXY_ARGS=$args POOL_DEBUG=$debug), --j $jobs${pin:+, on CPUs $cpus}"
t0=$(date +%s)
failed=$(regtests "$logs/all" "$log" --j "$jobs" "$@")
summary=$(grep -E '^[0-9]+ tests failed, [0-9]+ tests skipped, [0-9]+ tests passed$' "$log" |
	tail -n 1)
[ -n "$summary" ] || { tail -n 30 "$log"; die "$mode: run-regtests.sh gave no result ($log)"; }
echo "haproxy check: $summary ($(($(date +%s) - t0)) s)"
set -- $summary
ran=$(($1 + $7))
flaked=
broken=
for t in $failed; do
	name=$(basename "$t" .vtc)
	try=1
	passed=0
	while [ "$try" -le "$retries" ]; do
		if [ -z "$(regtests "$logs/$name" "$logs/$name.log" "$t")" ] &&
		   grep -q '^0 tests failed, 0 tests skipped, 1 tests passed$' "$logs/$name.log"; then
			passed=1
			break
		fi
		try=$((try + 1))
	done
	if [ "$passed" = 1 ]; then
		echo "haproxy check: $t failed among the others, passed alone (try $try)"
		flaked="$flaked $t"
		rm -rf "$logs/$name"
	else
		echo "haproxy check: $t failed, and failed alone $retries times ($logs/$name.log):"
		sed -n '/^###### Test case/,$p' "$logs/$name.log" | head -n 20
		broken="$broken $t"
	fi
done
nflaked=$(echo $flaked | wc -w)
nbroken=$(echo $broken | wc -w)
echo "haproxy check: $variant $mode: $((ran - nbroken)) of $ran passed" \
	"($nflaked after a flake${flaked:+:$flaked}), $nbroken failed${broken:+:$broken}"
[ "$nbroken" -eq 0 ]
