#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# pool-bench smoke test: a short run of every scenario proves that the tool runs, prints the
# tables and the targets, and writes a JSON that holds every figure with its spread, the load
# average, the CPU model, the server scenario and the placement of the threads; that --pin
# places the threads of every backend alike (read back from /proc by the threads themselves);
# that the cure of false sharing (64-byte alignment) leaves no cache line shared; that the
# server's object check catches a corrupted object; the exit statuses, --help, --version and
# the man page. A program it needs that is missing (gnuplot, python3, valgrind, mandoc,
# pool-bench-dpdk when libdpdk-dev is missing) fails it: make check installs them; DPDK's EAL
# when it cannot start on this machine is left out with a note. Asserts no time.
# Env (from make check): BUILD, SAN, CC.
BUILD=${BUILD:-build/cc}
B=$BUILD/tools/pool-bench
if [ ! -x "$B" ]; then
	echo "test_bench: $B is missing (run make first)"
	exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$(dirname "$0")/testlib.sh"

# A sanitizer runtime must come first in the process: no allocator can be preloaded into it, and
# DPDK's EAL is not built for it. Sanitizer builds compare libpool with the C library's malloc.
if [ -n "$SAN" ]; then
	backends=libpool,glibc
else
	backends=libpool,glibc,jemalloc,tcmalloc,mimalloc
	# DPDK's EAL depends on the machine (memory, /var/run, CPU flags): probe it first, so that
	# an environment where it cannot start leaves it out rather than failing the smoke run
	if [ ! -x "$BUILD/tools/pool-bench-dpdk" ]; then
		fail "$BUILD/tools/pool-bench-dpdk was not built (Debian package libdpdk-dev;" \
			"make check installs it)"
	else
		probe=$("$BUILD/tools/pool-bench-dpdk" --child dpdk pair 64 64 1 2>/dev/null | tail -n 1)
		case "$probe" in
		ok*) backends=$backends,dpdk ;;
		*) echo "note: DPDK left out: its EAL cannot start here: ${probe:-it crashed}" ;;
		esac
	fi
fi
plot=""
need gnuplot gnuplot-nox && plot="--plot $tmp/bench.png"
havepy=""
need python3 python3 && havepy=1

# shellcheck disable=SC2086
if expect 0 "smoke run: every scenario, 3 samples of 2 ms" \
	"$B" --quick --sample-ms 2 --threads 4 --server-threads 2,3 --backend "$backends" \
	--placement --json "$tmp/bench.json" $plot
then
	cat "$tmp/out"
	for row in pair batch bulk pipeline threads-4 false-sharing false-sharing-a64; do
		grep -Eq "^$row +[0-9]+ +[0-9.]+ \[[0-9.]+-[0-9.]+\]" "$tmp/out" ||
			fail "no '$row' row with a median [min-max]"
	done
	for row in server-2 server-3; do
		grep -Eq "^$row +libpool +[0-9.]+ \[[0-9.]+-[0-9.]+\]" "$tmp/out" ||
			fail "no '$row' libpool row with a median [min-max]"
	done
	grep -q "^load average at start [0-9]" "$tmp/out" || fail "no load average in the header"
	grep -q "^targets (issue 12" "$tmp/out" || fail "no issue 12 targets"
	grep -Eq "^  (met|MISSED) +server 2 threads <= 1.0x fastest malloc +[0-9.]+x" "$tmp/out" ||
		fail "no server target with its ratio"
	if [ -n "$havepy" ]; then
		python3 - "$tmp/bench.json" "$backends" <<'PY' || fail "JSON results are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
backends = sys.argv[2].split(",")
assert d["cpu"] and d["cpu"] != "unknown CPU", d["cpu"]
assert len(d["load_average_start"]) == 3 and all(x >= 0 for x in d["load_average_start"])
assert len(d["load_average_end"]) == 3 and d["load_average_max"] >= 0
assert isinstance(d["load_warning"], bool)
assert d["samples_per_figure"] == 3 and d["min_sample_ms"] == 2, d["samples_per_figure"]
res = d["results"]
rows = {(r["scenario"], r["backend"]) for r in res}
want = ["pair", "batch", "bulk", "pipeline", "threads-4", "false-sharing",
        "false-sharing-a64", "server-2", "server-3"]
for b in backends:
    for s in want:
        if s.startswith("server") and b == "dpdk":
            continue
        assert (s, b) in rows, (s, b)
for r in res:
    ns = r["ns"]
    assert 0 < ns["min"] <= ns["q1"] <= ns["median"] <= ns["q3"] <= ns["max"], r
    assert len(r["samples"]) == 3 and len(r["sample_ms"]) == 3, r
    assert min(r["sample_ms"]) >= 2, r["sample_ms"]
    assert r["units_per_sample"] > 0 and r["unit"]
    n = r["threads"]
    assert r["placement"].count(":") == n, r["placement"]
    if r["kind"] == "server":
        for k in ("peak_rss_mib", "rss_growth_mib"):
            assert r[k]["min"] <= r[k]["median"] <= r[k]["max"] and r[k]["median"] > 0, r
        if r["backend"] == "libpool":
            for k in ("os_share_warmup", "os_share_steady"):
                assert 0 <= r[k]["min"] <= r[k]["median"] <= r[k]["max"] <= 1, r[k]
            assert r["os_share_warmup"]["median"] > 0, r
        else:
            assert r["os_share_steady"]["median"] is None, r
    if r["kind"] == "false-sharing":
        sh = r["shared_lines"]
        assert 0 <= sh["min"] <= sh["median"] <= sh["max"] <= 1, sh
        # the cure: objects aligned to a cache line never share one
        if r["align"] == 64:
            assert sh["max"] == 0, r
        # the effect: libpool hands a thread the objects it freed, next to the other's
        if r["align"] == 0 and r["backend"] == "libpool":
            assert sh["min"] > 0, ("the false-sharing line no longer interleaves", r)
names = [t["name"] for t in d["targets"]]
for t in ("server 2 threads <= 1.0x fastest malloc",
          "server 2 threads peak RSS <= 1.3x leanest malloc",
          "server 2 threads OS-layer share, steady <= 1%",
          "pair 64 B <= 0.45x fastest malloc"):
    assert t in names, (t, names)
for t in d["targets"]:
    assert isinstance(t["met"], bool) and t["measured"] >= 0 and len(t["range"]) == 2, t
PY
	fi
	if [ -n "$plot" ]; then
		head -c 4 "$tmp/bench.png" | od -c | grep -q "P   N   G" || fail "no PNG written"
	fi
fi

# Placement: with --pin, worker i of every backend runs on CPU i of the list, as each thread
# reads its own Cpus_allowed_list in /proc; without, every thread may use every allowed CPU.
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cpu0=$(echo "$allowed" | sed 's/[-,].*//')
last=$(echo "$allowed" | sed 's/.*[-,]//')
nbackends=$(echo "$backends" | tr ',' '\n' | wc -l)

# check_placement WHAT WHERE [--pin LIST]: every backend's pipeline threads at WHERE
# (expect() sets the globals want and desc: other names here)
check_placement() {
	what=$1; where=$2; shift 2
	if expect 0 "$what" "$B" --scenario pipeline --size 64 --reps 1 --pairs 4096 \
		--backend "$backends" --placement "$@"
	then
		n=$(grep -c "^  pipeline .* $where\$" "$tmp/out")
		[ "$n" -eq "$nbackends" ] || { fail "$what: $n of $nbackends backends at '$where'"; \
			grep "^  pipeline" "$tmp/out"; }
	fi
}
check_placement "--pin $cpu0,$last: pipeline threads placed alike" "0:$cpu0 1:$last" \
	--pin "$cpu0,$last"
check_placement "not pinned: pipeline threads on every allowed CPU" "0:$allowed 1:$allowed"

# The server's object check: a bit flipped in a live object fails the run (exit 1).
if expect 1 "server: a corrupted object is caught (libpool)" \
	"$B" --child libpool server 8 40000 2 corrupt=100; then
	grep -q "^error libpool, server scenario: an object of .* was corrupted" "$tmp/out" ||
		fail "no corruption report: $(cat "$tmp/out")"
fi
expect 1 "server: a corrupted object is caught (glibc)" \
	"$BUILD/tools/pool-bench-malloc" --child glibc server 8 40000 2 corrupt=100

# A failure inside a backend makes pool-bench exit 1: every libpool allocation fails here.
if expect 1 "libpool allocations failing: exit 1" env POOL_DEBUG=fail=100 \
	"$B" --scenario pair --size 64 --reps 1 --pairs 4096 --backend libpool; then
	grep -q "^FAILED libpool" "$tmp/out" || fail "no FAILED line for libpool"
fi

# A backend named with --backend that cannot run here: exit 3 (its child is missing). The copy
# finds libpool.so.0 through its run path ($ORIGIN/..), and its children neither next to it
# nor, unless libpool is installed on this machine, in the helper directory.
helpers=$("$B" --help | sed -n 's/^Child programs: next to pool-bench, else in \(.*\)\.$/\1/p')
if [ -x "$helpers/pool-bench-malloc" ]; then
	echo "note: $helpers/pool-bench-malloc is installed: exit 3 not tested"
else
	mkdir "$tmp/alone" && cp "$B" "$tmp/alone/" && cp -P "$BUILD"/libpool.so* "$tmp/"
	expect 3 "--backend glibc without its child: exit 3" \
		"$tmp/alone/pool-bench" --scenario pair --reps 1 --pairs 4096 --backend glibc
fi

# Instructions per pair under callgrind: libpool's pair loop. The sanitizers do not run under
# Valgrind.
if ! need valgrind valgrind; then
	:
elif [ -n "$SAN" ]; then
	echo "note: --instructions not tested with SAN=$SAN (valgrind cannot run it)"
elif expect 0 "--instructions (callgrind)" "$B" --instructions --pairs 2000 --backend libpool
then
	cat "$tmp/out"
	grep -Eq "^libpool +64 +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+" "$tmp/out" ||
		fail "no instruction count for libpool"
fi

for args in "--reps 0" "--reps 1000" "--backend nope" "--scenario pair,nope" "--size 8" \
	"--pairs 10" "--threads 0" "--bogus" "--size" "--pin 99999" "--pin 0-" "--pin x" \
	"--server-threads 1,2,3,4" "--sample-ms 0" "extra"; do
	# shellcheck disable=SC2086
	if expect 2 "usage error: $args" "$B" $args; then
		grep -q "^pool-bench: " "$tmp/err" || fail "$args: no error message"
		grep -q "^Try 'pool-bench --help'" "$tmp/err" || fail "$args: no hint to --help"
	fi
done
if expect 0 "--help" "$B" --help; then
	grep -q "^usage: pool-bench" "$tmp/out" || fail "--help: no usage on stdout"
	grep -q "Exit status" "$tmp/out" || fail "--help: no exit statuses"
fi
if expect 0 "--version" "$B" --version; then
	grep -Eq "^pool-bench \(libpool\) [0-9]+\.[0-9]+" "$tmp/out" || fail "--version: $(cat "$tmp/out")"
fi

if need mandoc mandoc; then
	if mandoc -T lint doc/pool-bench.1 >"$tmp/lint" 2>&1; then
		echo "ok: mandoc -T lint doc/pool-bench.1"
	else
		fail "mandoc -T lint doc/pool-bench.1: $(cat "$tmp/lint")"
	fi
fi

echo "test_bench: $failures failure(s)"
[ "$failures" -eq 0 ]
