#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# bench.sh OUT [options] - HAProxy 2.6.12 on libpool against HAProxy's own pools, on loopback.
# Builds (the binaries build.sh made):
#   libpool   OUT/haproxy: its pools on libpool, libpool's defaults
#   stock     OUT/haproxy-stock: HAProxy's pools as they run on glibc (a thread cache, then
#             malloc(); the shared lists off)
#   no-cache  OUT/haproxy-stock -dMno-cache: every object from glibc's malloc()
#   jemalloc, mimalloc, tcmalloc   OUT/haproxy-stock with that malloc preloaded (LD_PRELOAD)
# Shapes, each at every nbthread of --threads:
#   self   the frontend answers itself (http-request return, 18 bytes), wrk over HTTP/1.1
#   h2     the same over HTTP/2 (cleartext, prior knowledge), h2load
#   proxy  a reverse proxy to a backend (a second HAProxy: the stock build, nbthread 1,
#          answering itself), connections, buffers and streams on both sides; wrk
#   burst  the proxy with --burst-conns connections for --seconds, its backend
#          answering after 50 ms so that as many streams are in flight, then --idle seconds
#          with no request and no call; RSS every 0.5 s
# Each run starts a fresh haproxy, loads it for 1 s, then measures: requests/s, p50 and p99
# latency (wrk --latency; for h2, h2load's per-request log in a second run of at most 2 s, since
# writing it bounds h2load's rate: those two come at that rate), CPU per request (the haproxy
# process's utime+stime over the run / requests), peak RSS (VmHWM) and the RSS at the end (VmRSS).
# Runs alternate between the builds, in an order that turns each round, --rounds times.
# haproxy runs on --server-cpus, the load generator and the backend on --load-cpus (taskset;
# empty: anywhere). Prints each run with the load average (a warning above the CPUs plus
# nbthread: other work then competes, and the figures are noisy), then markdown tables of the
# medians [min-max] over the rounds, compact ones (a row per build, requests/s as a ratio to
# stock's: doc/benchmarks.md), and the targets. A ratio to stock is the median of the ratios
# within each round (the builds of a round run back to back, so what drifts between rounds, the
# load and the loopback's pace, cancels; the medians of the two builds' own figures do not
# cancel it: 9 rounds of 28,000-49,000 requests/s each gave 0.96x that way, 1.00x paired).
# Writes OUT/bench/: summary.txt (what it prints), results.txt and burst.txt (a line a run),
# haproxy-bench.png (gnuplot), the configurations, the load generators' output, `show pools`
# (HAProxy's CLI) at each burst's peak and end. --tables prints the tables of OUT/bench/ again,
# from its results.
#
# Options: --seconds S (10) --rounds N (3; 1 when --seconds is under 5) --threads "2 8"
# --builds "libpool stock no-cache jemalloc mimalloc tcmalloc" --shapes "self h2 proxy burst"
# --conns N (64, wrk) --h2-conns N (16) --h2-streams N (16 a connection) --burst-conns N
# (2000) --idle S (3 x --seconds, at least 25: libpool gives back what stayed unused through
# a 10 s window, 10 to 20 s after its last use) --server-cpus LIST (1) --load-cpus LIST (0)
# --port P (18460: the first of the two ports a run takes, the next free ones)
set -eu

die() { echo "haproxy bench: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: bench.sh OUT [options]"
out=$(cd "$1" && pwd) || die "no $1: make haproxy first"
shift
seconds=10 rounds='' threads="2 8" builds="libpool stock no-cache jemalloc mimalloc tcmalloc"
shapes="self h2 proxy burst" conns=64 h2_conns=16 h2_streams=16 burst_conns=2000 idle=''
server_cpus=1 load_cpus=0 port=18460
tables_only=
while [ $# -gt 0 ]; do
	[ "$1" != --tables ] || { tables_only=1; shift; continue; }
	[ $# -ge 2 ] || die "option $1 needs a value"
	case $1 in
	--seconds) seconds=$2 ;; --rounds) rounds=$2 ;; --threads) threads=$2 ;;
	--builds) builds=$2 ;; --shapes) shapes=$2 ;; --conns) conns=$2 ;;
	--h2-conns) h2_conns=$2 ;; --h2-streams) h2_streams=$2 ;; --burst-conns) burst_conns=$2 ;;
	--idle) idle=$2 ;; --server-cpus) server_cpus=$2 ;; --load-cpus) load_cpus=$2 ;;
	--port) port=$2 ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
[ -n "$rounds" ] || { rounds=3; [ "$seconds" -ge 5 ] || rounds=1; }
[ -n "$idle" ] || idle=$(( seconds * 3 > 25 ? seconds * 3 : 25 ))
burst_s=$seconds
h2_lat_s=$(( seconds > 2 ? 2 : seconds ))
for t in wrk h2load socat gnuplot ss; do
	command -v $t >/dev/null 2>&1 || die "no $t (make haproxy-bench installs it as root)"
done
for f in "$out/haproxy" "$out/haproxy-stock"; do
	[ -x "$f" ] || die "no $f: make haproxy first"
done
res="$out/bench"
summary="$res/summary.txt"
if [ -n "$tables_only" ]; then
	# the options of the run that wrote results.txt, then summary.txt again up to its tables
	[ -f "$res/options" ] || die "no $res/options: run the bench first"
	. "$res/options"
	sed -i '/^$/,$d' "$summary"
else
	rm -rf "$res"
	mkdir -p "$res/cfg" "$res/runs"
	cat > "$res/options" <<-EOF
	seconds=$seconds rounds=$rounds threads="$threads" builds="$builds" shapes="$shapes"
	conns=$conns h2_conns=$h2_conns h2_streams=$h2_streams burst_conns=$burst_conns idle=$idle
	burst_s=$burst_s
	EOF
fi
exec 3>&1
say() { echo "$*" | tee -a "$summary" >&3; }
hz=$(getconf CLK_TCK)
ncpu=$(nproc)
pin_server='' pin_load=''
[ -z "$server_cpus" ] || pin_server="taskset -c $server_cpus"
[ -z "$load_cpus" ] || pin_load="taskset -c $load_cpus"
pid='' be_pid='' sampler_pid=''
cleanup() {
	for p in $sampler_pid $pid $be_pid; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

lib_path() { ldconfig -p | awk -v n="$1" '$1 == n { print $NF; exit }'; }
# the build's binary, arguments, preloaded library and label
build_setup() {
	bin="$out/haproxy-stock" args='' preload='' label="stock + $1"
	case $1 in
	libpool)  bin="$out/haproxy" label=libpool ;;
	stock)    label=stock ;;
	no-cache) args=-dMno-cache label="stock -dMno-cache" ;;
	jemalloc) preload=$(lib_path libjemalloc.so.2) ;;
	mimalloc) preload=$(lib_path libmimalloc.so.2) ;;
	tcmalloc) preload=$(lib_path libtcmalloc_minimal.so.4) ;;
	*) die "unknown build $1 (libpool stock no-cache jemalloc mimalloc tcmalloc)" ;;
	esac
	case $1 in jemalloc|mimalloc|tcmalloc)
		[ -n "$preload" ] || die "no lib$1 (packages libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4)"
	esac
}
for b in $builds; do build_setup "$b"; done

load1() { cut -d' ' -f1 /proc/loadavg; }
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
mem_mib() { awk -v k="$2:" '$1 == k { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
calc() { awk "BEGIN { $1 }"; }
listening() { ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
free_port() {    # got: the next port from $port on that nothing listens on
	while listening "$port"; do port=$((port + 1)); done
	got=$port
	port=$((port + 1))
}

# write_cfg <file> <nbthread> <port> <body|backend port> <cli socket> [delay]
write_cfg() {
	{
		echo "global"
		echo "    nbthread $2"
		echo "    maxconn $((burst_conns + 2000))"
		[ -z "$5" ] || echo "    stats socket $5 level admin"
		echo "defaults"
		echo "    mode http"
		echo "    timeout client 30s"
		echo "    timeout server 30s"
		echo "    timeout connect 5s"
		echo "frontend fe"
		echo "    bind 127.0.0.1:$3"
		if [ -n "${6:-}" ]; then
			echo "    tcp-request inspect-delay $6"
			echo "    tcp-request content accept if WAIT_END"
		fi
		case $4 in
		body) printf '%s\n' '    http-request return status 200 content-type text/plain string "hello from haproxy"' ;;
		*)    echo "    default_backend be"
		      echo "backend be"
		      echo "    server s1 127.0.0.1:$4" ;;
		esac
	} > "$1"
}

# start <pid variable> <log> <pin> <preload> <binary> <args...>: a haproxy in the background,
# waited for until its port (the global $wait_port) listens
start() {
	var=$1 log=$2 pin=$3 pre=$4
	shift 4
	if [ -n "$pre" ]; then
		LD_PRELOAD="$pre" $pin "$@" 2> "$log" &
	else
		$pin "$@" 2> "$log" &
	fi
	eval "$var=$!"
	i=0
	while ! listening "$wait_port"; do
		kill -0 "$!" 2>/dev/null || die "$* did not start ($log)"
		[ $i -lt 100 ] || die "$* does not listen on $wait_port after 10 s ($log)"
		sleep 0.1
		i=$((i + 1))
	done
	if [ -n "$pre" ] && ! grep -q "$(basename "$pre")" "/proc/$!/maps"; then
		die "$pre is not loaded in $* ($log)"
	fi
}
stop() {
	for p in "$@"; do
		[ -z "$p" ] || { kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; }
	done
}
show_pools() {
	echo "show pools" | socat -t 5 - "UNIX-CONNECT:$1" > "$2" 2>&1 || true
}

# wrk_figures <output>: "requests rps p50_us p99_us errors"
wrk_figures() {
	awk 'function us(v) {
		if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000
		if (v ~ /s$/) return v * 1000000; if (v ~ /m$/) return v * 60000000; return v
	}
	$2 == "requests" && $3 == "in" { n = $1 }
	$1 == "Requests/sec:" { r = $2 }
	$1 == "50%" { p50 = us($2) } $1 == "99%" { p99 = us($2) }
	$1 == "Socket" { split($0, a, /[ ,]+/); for (i = 1; i in a; i++) if (a[i] ~ /^[0-9]+$/) e += a[i] }
	$1 == "Non-2xx" { e += $NF }
	END { printf "%d %.0f %.0f %.0f %d\n", n, r, p50, p99, e }' "$1"
}
# h2_figures <output> <log>: the same from h2load's output and its per-request log
h2_figures() {
	p=$(cut -f3 "$2" | sort -n | awk '{ v[NR] = $1 }
		END { if (NR) printf "%.0f %.0f", v[int((NR + 1) * 0.5)], v[int((NR - 1) * 0.99) + 1];
		      else printf "0 0" }')
	awk -v p="$p" '$1 == "finished" { r = $4 }
	$1 == "requests:" { n = $8; e = $10 + $12 + $14 }
	END { printf "%d %.0f %s %d\n", n, r, p, e }' "$1"
}

nb=$(echo $builds | wc -w)
if [ -z "$tables_only" ]; then
say "haproxy bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $ncpu CPUs ($(sed -n \
	's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), HAProxy 2.6.12" \
	"($(cat "$out/src/haproxy-2.6.12/.fetched" 2>/dev/null || echo '?')), $("$out/haproxy" -vv |
	sed -n 's/^Running on libpool version : //p' | cut -d' ' -f1 | sed 's/^/libpool /')"
say "builds: $builds; nbthread: $threads; shapes: $shapes; $rounds round(s) of ${seconds} s" \
	"(burst ${burst_s} s, then ${idle} s idle); haproxy on CPUs ${server_cpus:-any}," \
	"load and backend on CPUs ${load_cpus:-any}; wrk $conns connections, h2load" \
	"$h2_conns x $h2_streams streams, burst $burst_conns connections; load average" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"

# run_one <shape> <build> <threads> <round>
run_one() {
	shape=$1 b=$2 t=$3 r=$4 tag="$1-$2-$3-$4"
	build_setup "$b"
	cli="$res/runs/$tag.sock"
	free_port
	wait_port=$got fe_port=$got
	be_pid=
	case $shape in
	proxy|burst)
		free_port
		wait_port=$got
		delay=''
		[ "$shape" = burst ] && delay=50ms
		write_cfg "$res/cfg/backend-$tag.cfg" 1 "$wait_port" body "" $delay
		start be_pid "$res/runs/backend-$tag.log" "$pin_load" "" "$out/haproxy-stock" -db \
			-f "$res/cfg/backend-$tag.cfg"
		write_cfg "$res/cfg/$tag.cfg" "$t" "$fe_port" "$wait_port" "$cli"
		wait_port=$fe_port ;;
	*)
		write_cfg "$res/cfg/$tag.cfg" "$t" "$fe_port" body "$cli" ;;
	esac
	# shellcheck disable=SC2086
	start pid "$res/runs/$tag.log" "$pin_server" "$preload" "$bin" -db $args -f "$res/cfg/$tag.cfg"
	url="http://127.0.0.1:$fe_port/"
	gen="$res/runs/$tag.out"
	if [ "$shape" = h2 ]; then
		$pin_load h2load -t 1 -c "$h2_conns" -m "$h2_streams" -D 1 "$url" > /dev/null 2>&1
	else
		$pin_load wrk -t 1 -c "$conns" -d 1s "$url" > /dev/null 2>&1
	fi
	ld=$(load1)
	c0=$(cpu_ticks "$pid")
	case $shape in
	self|proxy)
		$pin_load wrk -t 1 -c "$conns" -d "${seconds}s" --latency "$url" > "$gen" 2>&1
		f=$(wrk_figures "$gen") ;;
	h2)
		# requests/s and CPU from a run without h2load's per-request log, the latencies
		# from a second run with it: writing the log makes h2load the bottleneck (about
		# 210,000 requests/s on this 2-core guest, HAProxy then half idle); without it
		# HAProxy's CPU is the bound (390,000-540,000)
		$pin_load h2load -t 1 -c "$h2_conns" -m "$h2_streams" -D "$seconds" "$url" \
			> "$gen" 2>&1
		c1=$(cpu_ticks "$pid")
		$pin_load h2load -t 1 -c "$h2_conns" -m "$h2_streams" -D "$h2_lat_s" \
			--log-file="$res/runs/$tag.h2log" "$url" > "$gen.lat" 2>&1
		f=$(h2_figures "$gen" "$res/runs/$tag.h2log")
		rm -f "$res/runs/$tag.h2log" ;;
	burst)
		before=$(mem_mib "$pid" VmRSS)
		dat="$res/runs/rss-$b-$t-$r.dat"
		t0=$(date +%s.%N)
		(
			while kill -0 "$pid" 2>/dev/null; do
				echo "$(calc "printf \"%.1f\", $(date +%s.%N) - $t0") $(mem_mib "$pid" VmRSS)"
				sleep 0.5
			done
		) > "$dat" 2>/dev/null &
		sampler_pid=$!
		$pin_load wrk -t 1 -c "$burst_conns" -d "${burst_s}s" --latency "$url" > "$gen" 2>&1
		f=$(wrk_figures "$gen")
		at_end=$(mem_mib "$pid" VmRSS)
		show_pools "$cli" "$res/runs/pools-$tag-peak.txt"
		c1=$(cpu_ticks "$pid")
		sleep "$(calc "printf \"%.1f\", $idle / 2")"
		half=$(mem_mib "$pid" VmRSS)
		sleep "$(calc "printf \"%.1f\", $idle - $idle / 2")"
		final=$(mem_mib "$pid" VmRSS)
		show_pools "$cli" "$res/runs/pools-$tag-end.txt"
		peak=$(mem_mib "$pid" VmHWM)
		stop "$sampler_pid"
		sampler_pid= ;;
	esac
	[ "$shape" = burst ] || [ "$shape" = h2 ] || c1=$(cpu_ticks "$pid")
	[ "$shape" = burst ] || peak=$(mem_mib "$pid" VmHWM)
	[ "$shape" = burst ] || final=$(mem_mib "$pid" VmRSS)
	stop "$pid" "$be_pid"
	pid='' be_pid=''
	set -- $f
	n=$1 rps=$2 p50=$3 p99=$4 errs=$5
	cpu=0 warn=''
	[ "$n" -eq 0 ] || cpu=$(calc "printf \"%.1f\", ($c1 - $c0) / $hz * 1000000 / $n")
	[ "$(calc "print ($ld > $ncpu + $t)")" = 0 ] || warn=" (WARNING: load average $ld)"
	[ "$n" -gt 0 ] || warn="$warn (WARNING: no request answered: $gen)"
	[ "$errs" = 0 ] || warn="$warn ($errs socket errors or non-2xx answers)"
	if [ "$shape" = burst ]; then
		say "$shape $label nbthread $t round $r: $rps req/s, RSS $before MiB before," \
			"$peak at the peak, $at_end at the end, ${half}/${final} MiB $((idle / 2))/$idle s" \
			"after; load $ld$warn"
		echo "$b $t $r $rps $before $peak $at_end $half $final $ld $errs" >> "$res/burst.txt"
	else
		say "$shape $label nbthread $t round $r: $rps req/s, p50 $p50 us, p99 $p99 us," \
			"$cpu us CPU/req, RSS peak $peak MiB, end $final MiB; load $ld$warn"
		echo "$shape $b $t $r $rps $p50 $p99 $cpu $peak $final $ld $errs" >> "$res/results.txt"
	fi
}

r=1
while [ "$r" -le "$rounds" ]; do
	for s in $shapes; do
		case $s in self|h2|proxy|burst) ;; *) die "unknown shape $s (self h2 proxy burst)" ;; esac
		for t in $threads; do
			# this round's order: the builds turned by r - 1
			k=$(( (r - 1) % nb ))
			order=$builds
			[ "$k" -eq 0 ] || order="$(echo $builds | cut -d' ' -f$((k + 1))-)
				$(echo $builds | cut -d' ' -f1-$k)"
			for b in $order; do run_one "$s" "$b" "$t" "$r"; done
		done
	done
	r=$((r + 1))
done
fi

# The tables: medians [min-max] over the rounds (mawk has no asort: an insertion sort)
AWK_MED='function med(s,   a, n, i, j, x, lo, hi, m) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > x; j--)
		a[j + 1] = a[j]; a[j + 1] = x }
	m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	MED = m; LO = a[1]; HI = a[n]; return n }
function fmt(s, f) { if (med(s) == 1) return sprintf(f, MED)
	return sprintf(f " [" f "-" f "]", MED, LO, HI) }
# A ratio to another build, round by round: pair_add() keeps figure f of build b at nbthread t
# in round r; paired() gives the ratios of b to base, one a round (a round runs every build
# once, back to back: the ratio within a round cancels what drifts between rounds).
function pair_add(b, t, r, f, x) { PV[b, t, r, f] = x; if (r + 0 > NR_ROUNDS) NR_ROUNDS = r + 0 }
function paired(b, base, t, f,   r, out) { out = ""
	for (r = 1; r <= NR_ROUNDS; r++) if (PV[b, t, r, f] != "" && PV[base, t, r, f] + 0 > 0)
		out = out " " PV[b, t, r, f] / PV[base, t, r, f]
	return out }'
labels=
for b in $builds; do build_setup "$b"; labels="$labels$b=$label;"; done
say ""
say "Full tables (medians [min-max] over the rounds):"
say ""
for s in $shapes; do
	[ "$s" != burst ] || continue
	case $s in
	self)  say "Shape self (the frontend answers itself, HTTP/1.1, wrk $conns connections):" ;;
	h2)    say "Shape h2 (the frontend answers itself, HTTP/2, h2load $h2_conns x $h2_streams streams):" ;;
	proxy) say "Shape proxy (to a backend HAProxy, HTTP/1.1, wrk $conns connections):" ;;
	esac
	say ""
	say "| build | nbthread | requests/s | p50 ms | p99 ms | CPU us/request | peak RSS MiB |"
	say "|---|---|---|---|---|---|---|"
	for t in $threads; do
		for b in $builds; do
			awk -v s="$s" -v b="$b" -v t="$t" -v labels="$labels" "$AWK_MED"'
			$1 == s && $2 == b && $3 == t { rps = rps " " $5; p50 = p50 " " $6 / 1000
				p99 = p99 " " $7 / 1000; cpu = cpu " " $8; peak = peak " " $9 }
			END { n = split(labels, l, ";"); for (i = 1; i <= n; i++)
				if (index(l[i], b "=") == 1) name = substr(l[i], length(b) + 2)
				if (rps == "") exit
				printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, t, fmt(rps, "%.0f"),
					fmt(p50, "%.2f"), fmt(p99, "%.2f"), fmt(cpu, "%.1f"), fmt(peak, "%.1f") }' \
				"$res/results.txt" | tee -a "$summary" >&3
		done
	done
	say ""
done
if echo " $shapes " | grep -q " burst "; then
	say "Shape burst ($burst_conns connections for $burst_s s through the proxy, its backend" \
		"answering in 50 ms, then $idle s with no request and no call):"
	say ""
	say "| build | nbthread | requests/s | RSS before MiB | peak | at the burst's end |" \
		"$((idle / 2)) s after | $idle s after | given back |"
	say "|---|---|---|---|---|---|---|---|---|"
	for t in $threads; do
		for b in $builds; do
			awk -v b="$b" -v t="$t" -v labels="$labels" "$AWK_MED"'
			$1 == b && $2 == t { rps = rps " " $4; bf = bf " " $5; pk = pk " " $6
				e = e " " $7; h = h " " $8; f = f " " $9
				back = back " " (($6 > $5) ? 100 * ($6 - $9) / ($6 - $5) : 0) }
			END { n = split(labels, l, ";"); for (i = 1; i <= n; i++)
				if (index(l[i], b "=") == 1) name = substr(l[i], length(b) + 2)
				if (rps == "") exit
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s%% |\n", name, t,
					fmt(rps, "%.0f"), fmt(bf, "%.1f"), fmt(pk, "%.1f"), fmt(e, "%.1f"),
					fmt(h, "%.1f"), fmt(f, "%.1f"), fmt(back, "%.0f") }' \
				"$res/burst.txt" | tee -a "$summary" >&3
		done
	done
	say ""
	for f in "$res"/runs/pools-burst-libpool-*-1-end.txt; do
		[ -f "$f" ] || continue
		say "libpool's show pools $idle s after the burst ($(basename "$f" .txt)):"
		sed -n '$p' "$f" | grep . | sed 's/^/    /' | tee -a "$summary" >&3 || true
		tail -n 2 "$f" | sed -n '1p' | grep -q . && tail -n 2 "$f" | sed -n '1p' |
			sed 's/^/    /' | tee -a "$summary" >&3
	done
	say ""
fi

# The compact tables (doc/benchmarks.md): a row per build, medians, a column per nbthread;
# requests/s with its ratio to the stock build's at the same nbthread
say "Compact tables (medians; (2), (8): nbthread; requests/s with the median of its ratios to" \
	"stock's, round by round):"
say ""
AWK_COMPACT="$AWK_MED"'
function name(b,   n, i, l) { n = split(labels, l, ";"); for (i = 1; i <= n; i++)
	if (index(l[i], b "=") == 1) return substr(l[i], length(b) + 2); return b }
function row(b, f,   out, i, v, q) { out = "| " name(b)
	for (i = 1; i <= nt; i++) { v = fig[b, th[i], f]; if (v == "") { out = out " | -"; continue }
		med(v); if (f == "rps") { out = out sprintf(" | %.0f", MED)
			if ((q = paired(b, "stock", th[i], "r")) != "") { med(q)
				out = out sprintf(" (%.2fx)", MED) } }
		else out = out sprintf(f == "p99" ? " | %.2f" : " | %.1f", MED) }
	return out }'
for s in $shapes; do
	[ "$s" != burst ] || continue
	hd="| $s |" sep="|---|"
	for f in "requests/s" "p99 ms" "CPU us/request" "peak RSS MiB"; do
		for t in $threads; do hd="$hd $f ($t) |"; sep="$sep---|"; done
	done
	say "$hd"
	say "$sep"
	awk -v s="$s" -v threads="$threads" -v builds="$builds" -v labels="$labels" "$AWK_COMPACT"'
	$1 == s { fig[$2, $3, "rps"] = fig[$2, $3, "rps"] " " $5
		fig[$2, $3, "p99"] = fig[$2, $3, "p99"] " " $7 / 1000
		fig[$2, $3, "cpu"] = fig[$2, $3, "cpu"] " " $8; fig[$2, $3, "rss"] = fig[$2, $3, "rss"] " " $9
		pair_add($2, $3, $4, "r", $5) }
	END { nt = split(threads, th, " "); n = split(builds, bs, " ")
		for (k = 1; k <= n; k++) { line = row(bs[k], "rps")
			line = line substr(row(bs[k], "p99"), length(name(bs[k])) + 3)
			line = line substr(row(bs[k], "cpu"), length(name(bs[k])) + 3)
			line = line substr(row(bs[k], "rss"), length(name(bs[k])) + 3)
			print line " |" } }' "$res/results.txt" | tee -a "$summary" >&3
	say ""
done
if echo " $shapes " | grep -q " burst "; then
	hd="| burst: RSS MiB before, peak, $idle s after (given back) |" sep="|---|"
	for t in $threads; do hd="$hd nbthread $t |"; sep="$sep---|"; done
	say "$hd"
	say "$sep"
	awk -v threads="$threads" -v builds="$builds" -v labels="$labels" "$AWK_COMPACT"'
	{ bf[$1, $2] = bf[$1, $2] " " $5; pk[$1, $2] = pk[$1, $2] " " $6; f[$1, $2] = f[$1, $2] " " $9
		g[$1, $2] = g[$1, $2] " " (($6 > $5) ? 100 * ($6 - $9) / ($6 - $5) : 0) }
	END { nt = split(threads, th, " "); n = split(builds, bs, " ")
		for (k = 1; k <= n; k++) { line = "| " name(bs[k])
			for (i = 1; i <= nt; i++) { b = bs[k]; t = th[i]
				if (bf[b, t] == "") { line = line " | -"; continue }
				med(bf[b, t]); x = MED; med(pk[b, t]); y = MED; med(f[b, t]); z = MED
				med(g[b, t]); line = line sprintf(" | %.1f, %.1f, %.1f (%.0f%%)", x, y, z, MED) }
			print line " |" } }' "$res/burst.txt" | tee -a "$summary" >&3
	say ""
fi

# The targets (issue 46), at the first nbthread: the libpool build against the stock one
t=$(echo $threads | cut -d' ' -f1)
if echo " $builds " | grep -q " libpool " && echo " $builds " | grep -q " stock "; then
	say "Targets at nbthread $t (libpool against stock: the median [min-max] of the ratios" \
		"within each round):"
	for s in $shapes; do
		[ "$s" != burst ] || continue
		awk -v s="$s" -v t="$t" "$AWK_MED"'
		$1 == s && $3 == t { pair_add($2, t, $4, "r", $5); pair_add($2, t, $4, "q", $7)
			pair_add($2, t, $4, "m", $9); b[$2] = 1 }
		END { if (!("libpool" in b) || !("stock" in b)) exit
			med(paired("libpool", "stock", t, "r")); a = MED; alo = LO; ahi = HI
			med(paired("libpool", "stock", t, "q")); c = MED
			med(paired("libpool", "stock", t, "m")); e = MED; best = ""
			for (k in b) if (k != "libpool" && k != "stock") {
				med(paired(k, "stock", t, "r")); if (MED > a) best = best " " k }
			if (a < 1) best = best " stock"
			printf "  %s: requests/s %.3fx [%.2f-%.2f] (>= 1: %s), p99 %.3fx (<= 1: %s), peak RSS" \
				" %.3fx (<= 1.1: %s); builds above libpool:%s\n", s, a, alo, ahi,
				(a >= 1) ? "met" : "MISSED", c, (c <= 1) ? "met" : "MISSED", e,
				(e <= 1.1) ? "met" : "MISSED", best == "" ? " none" : best }' \
			"$res/results.txt" | tee -a "$summary" >&3
	done
	if echo " $shapes " | grep -q " burst "; then
		awk -v t="$t" "$AWK_MED"'$1 == "libpool" && $2 == t { bf = bf " " $5; pk = pk " " $6
			f = f " " $9 }
		END { if (bf == "") exit; med(bf); b = MED; med(pk); p = MED; med(f); e = MED
			g = (p > b) ? 100 * (p - e) / (p - b) : 0
			printf "  burst: %.0f%% of the growth given back with no call (>= 75: %s)\n", g,
				(g >= 75) ? "met" : "MISSED" }' "$res/burst.txt" | tee -a "$summary" >&3
	fi
fi

# The plot: requests/s by shape, as a ratio to stock's when stock ran (the median of the ratios
# within each round, as in the tables; a panel per nbthread),
# RSS through the burst (round 1)
nt=$(echo $threads | wc -w)
rows=0
tp=$(echo $shapes | tr ' ' '\n' | grep -v '^burst$' || true)
[ -z "$tp" ] || rows=$((rows + 1))
echo " $shapes " | grep -q " burst " && rows=$((rows + 1))
plot="$res/haproxy-bench.gp"
{
	echo "set terminal pngcairo size $((520 * nt)),$((380 * rows)) font ',9' noenhanced"
	echo "set output '$res/haproxy-bench.png'"
	echo "set multiplot layout $rows,$nt"
	echo "set grid ytics"
	echo "set key top right font ',8'"
	base=
	echo " $builds " | grep -q " stock " && base=stock
	for t in $threads; do
		[ -n "$tp" ] || break
		dat="$res/rps-$t.dat"
		{
			printf "shape"
			for b in $builds; do build_setup "$b"; printf '\t"%s"' "$label"; done
			echo
			for s in $tp; do
				printf "%s" "$s"
				for b in $builds; do
					printf '\t%s' "$(awk -v s="$s" -v b="$b" -v t="$t" -v base="$base" \
						"$AWK_MED"'$1 == s && $3 == t && $2 == b { v = v " " $5 }
						$1 == s && $3 == t { pair_add($2, t, $4, "r", $5) }
						END { if (v == "") { print 0; exit }
							if (base == "") { med(v); print MED; exit }
							q = paired(b, base, t, "r")
							if (q == "") { print 0; exit }; med(q); print MED }' \
						"$res/results.txt")"
				done
				echo
			done
		} > "$dat"
		if [ -n "$base" ]; then
			echo "set title 'HAProxy 2.6.12, nbthread $t: requests/s x stock, paired by round'"
		else
			echo "set title 'HAProxy 2.6.12, nbthread $t: requests/s, median'"
		fi
		echo "set key outside bottom center horizontal font ',8'"
		echo "set style data histograms"
		echo "set style histogram clustered gap 1"
		echo "set style fill solid 0.8 border -1"
		echo "set yrange [0:*]"
		echo "plot for [i=2:$((nb + 1))] '$dat' using i:xtic(1) title columnhead"
	done
	if echo " $shapes " | grep -q " burst "; then
		echo "set style data lines"
		echo "set key inside top right vertical font ',8'"
		echo "set xlabel 's'"
		for t in $threads; do
			echo "set title 'burst, nbthread $t: RSS (MiB) against seconds since the burst began'"
			printf "plot "
			sep=
			for b in $builds; do
				build_setup "$b"
				printf "%s'%s' using 1:2 with lines lw 2 title '%s'" "$sep" \
					"$res/runs/rss-$b-$t-1.dat" "$label"
				sep=", "
			done
			echo
		done
	fi
	echo "unset multiplot"
} > "$plot"
gnuplot "$plot" 2> "$res/gnuplot.log" || die "gnuplot failed ($res/gnuplot.log)"

loads=$(awk '{ print $(NF - 1) }' "$res/results.txt" "$res/burst.txt" 2>/dev/null | sort -n)
lmin=$(echo "$loads" | head -n 1) lmax=$(echo "$loads" | tail -n 1)
lmed=$(echo "$loads" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
tmax=$(echo $threads | tr ' ' '\n' | sort -n | tail -n 1)
say ""
say "load average (1 min) at the start of the runs: ${lmin:-?} to ${lmax:-?}, median ${lmed:-?}"
if [ "$(calc "print (${lmax:-0} > $ncpu + $tmax)")" = 1 ]; then
	say "WARNING: the load average reached $lmax on $ncpu CPUs: other work competed with" \
		"these runs and the figures are noisy; compare ratios, rerun on a quiet machine"
fi
say "haproxy bench: $summary, $res/haproxy-bench.png"
