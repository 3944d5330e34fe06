#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# bench.sh LIBPOOL_BUILD OUT [options] - memcached on libpool (OUT/memcached) and on its own
# slab allocator (OUT/memcached-slabs) side by side, under the same load from mc-load
# (OUT/mc-load) on loopback. For each build in turn (--rounds alternates them), one server with
# --threads worker threads and -m --mem:
#   fill     every key of --keys set once (the key space is larger than -m: evictions start)
#   mixed    --seconds of gets and sets (--get-ratio), values log-uniform in --value-min..max
#   burst    --burst seconds of sets only, with twice the connections
#   flush    flush_all, then --quiet seconds with no request at all
#   (pool)   then `pools flush` and `pools trim` on the CLI: what an operator gets back today
# Measured: throughput, p50/p90/p99/p99.9 latency (mc-load), the server's CPU time (user +
# system, /proc/<pid>/stat) per phase, its RSS every --sample seconds (VmRSS), its stats
# (evictions, items, total_malloced, total_pool_bytes); for the libpool build, `pools show`
# and `pools profile` (the profile runs from the start, at libpool's default rate) at the
# end of the burst and after the quiet time. Writes OUT/bench/: summary.txt (what it prints),
# rss.png (RSS over time, gnuplot), rss-<build>-<round>.dat, phases-<build>-<round>.txt,
# <build>-<round>.log (mc-load lines, stats), pools-*.txt. The machine's load average is
# printed with every round: figures from a busy machine are noisy.
#
# Options: --mem MB (64) --threads N (4) --keys N (300000) --seconds S (30) --burst S (10)
# --quiet S (60) --get-ratio R (0.9) --value-min B (32) --value-max B (32768)
# --load-threads N (2) --conns N (32, over all load threads) --sample S (0.5) --rounds N (1)
# --builds "pool slabs" (the order within a round) --port P (first port tried: 21211).
set -eu

die() { echo "memcached bench: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: bench.sh LIBPOOL_BUILD OUT [options]"
lib=$1
out=$(cd "$2" && pwd) || die "no $2: make memcached first"
shift 2
mem=64 threads=4 keys=300000 seconds=30 burst=10 quiet=60 get_ratio=0.9 vmin=32 vmax=32768
load_threads=2 conns=32 sample=0.5 rounds=1 builds="pool slabs" port=21211
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "option $1 needs a value"
	case $1 in
	--mem) mem=$2 ;; --threads) threads=$2 ;; --keys) keys=$2 ;; --seconds) seconds=$2 ;;
	--burst) burst=$2 ;; --quiet) quiet=$2 ;; --get-ratio) get_ratio=$2 ;;
	--value-min) vmin=$2 ;; --value-max) vmax=$2 ;; --load-threads) load_threads=$2 ;;
	--conns) conns=$2 ;; --sample) sample=$2 ;; --rounds) rounds=$2 ;; --builds) builds=$2 ;;
	--port) port=$2 ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
load="$out/mc-load"
pools="$lib/tools/pools"
for f in "$out/memcached" "$out/memcached-slabs" "$load" "$pools"; do
	[ -x "$f" ] || die "no $f (make memcached-bench builds it)"
done
command -v gnuplot >/dev/null 2>&1 || die "no gnuplot: install gnuplot-nox"
res="$out/bench"
rm -rf "$res"
mkdir -p "$res"
exec 3>&1
summary="$res/summary.txt"
say() { echo "$*" | tee -a "$summary" >&3; }
hz=$(getconf CLK_TCK)
user=
[ "$(id -u)" = 0 ] && user="-u root"
conns_per=$(( (conns + load_threads - 1) / load_threads ))
server_pid=
sampler_pid=
cleanup() {
	[ -z "$sampler_pid" ] || kill "$sampler_pid" 2>/dev/null || true
	[ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# CPU seconds (user + system) the server used so far
cpu_s() { awk -v hz="$hz" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"; }
rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
stat_of() {    # stat_of <port> <command> <name>: one STAT value
	"$load" --server "127.0.0.1:$1" --command "$2" | tr -d '\r' |
		awk -v n="$3" '$1 == "STAT" && $2 == n { print $3 }'
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
since() { minus "$(date +%s.%N)" "$1"; }

say "memcached bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(sed -n \
	's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), memcached 1.6.18" \
	"($(cat "$out/src/memcached-1.6.18/.fetched" 2>/dev/null || echo '?'))"
say "server: -t $threads -m $mem; load: mc-load $load_threads threads x $conns_per connections," \
	"keys $keys, values $vmin..$vmax B log-uniform, get ratio $get_ratio;" \
	"fill, ${seconds} s mixed, ${burst} s set burst (2x connections), flush_all, ${quiet} s quiet"

run_one() {    # run_one <build> <round>
	b=$1 r=$2 tag="$1-$2"
	bin="$out/memcached"
	[ "$b" = slabs ] && bin="$out/memcached-slabs"
	log="$res/$tag.log" dat="$res/rss-$tag.dat" ph="$res/phases-$tag.txt"
	cli="$res/pools-$tag.sock"
	: > "$ph"
	say ""
	say "== $b (round $r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	# a free port: the server exits at once when its port is taken
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$((port + 1))
		# shellcheck disable=SC2086
		if [ "$b" = pool ]; then
			MEMCACHED_POOL_CLI="$cli" MEMCACHED_POOL_CLI_LEVEL=admin \
				POOL_DEBUG="${POOL_DEBUG:+$POOL_DEBUG,}profile" \
				"$bin" $user -l 127.0.0.1 -p "$port" -U 0 -t "$threads" -m "$mem" \
				-c 4096 2> "$res/$tag.stderr" &
		else
			"$bin" $user -l 127.0.0.1 -p "$port" -U 0 -t "$threads" -m "$mem" -c 4096 \
				2> "$res/$tag.stderr" &
		fi
		server_pid=$!
		i=0
		while [ $i -lt 50 ] && kill -0 "$server_pid" 2>/dev/null &&
		      ! "$load" --server "127.0.0.1:$port" --command version >/dev/null 2>&1; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -0 "$server_pid" 2>/dev/null && break
		server_pid=
	done
	[ -n "$server_pid" ] || die "$b: the server did not start ($res/$tag.stderr)"
	t0=$(date +%s.%N)
	(
		while kill -0 "$server_pid" 2>/dev/null; do
			echo "$(since "$t0") $(rss_mib "$server_pid")"
			sleep "$sample"
		done
	) > "$dat" 2>/dev/null &
	sampler_pid=$!
	rss_start=$(rss_mib "$server_pid")
	phase() { echo "$(since "$t0") $1" >> "$ph"; }
	L="$load --server 127.0.0.1:$port --threads $load_threads --keys $keys"
	L="$L --value-min $vmin --value-max $vmax"

	cpu0=$(cpu_s "$server_pid")
	phase fill
	fill=$($L --conns "$conns_per" --fill --seconds 3600)
	echo "fill: $fill" >> "$log"
	cpu1=$(cpu_s "$server_pid")
	phase mixed
	mixed=$($L --conns "$conns_per" --seconds "$seconds" --get-ratio "$get_ratio" --seed "$r")
	echo "mixed: $mixed" >> "$log"
	cpu2=$(cpu_s "$server_pid")
	phase burst
	bst=$($L --conns $((conns_per * 2)) --seconds "$burst" --get-ratio 0 --seed $((r + 100)))
	echo "burst: $bst" >> "$log"
	cpu3=$(cpu_s "$server_pid")
	rss_peak=$(sort -k2 -n "$dat" | tail -n 1 | cut -d' ' -f2)
	rss_load=$(rss_mib "$server_pid")
	"$load" --server "127.0.0.1:$port" --command stats > "$res/$tag.stats"
	"$load" --server "127.0.0.1:$port" --command "stats slabs" > "$res/$tag.stats-slabs"
	evictions=$(tr -d '\r' < "$res/$tag.stats" | awk '$2 == "evictions" { print $3 }')
	items=$(tr -d '\r' < "$res/$tag.stats" | awk '$2 == "curr_items" { print $3 }')
	malloced=$(tr -d '\r' < "$res/$tag.stats-slabs" |
		awk '$2 == "total_malloced" { printf "%.1f", $3 / 1048576 }')
	if [ "$b" = pool ]; then
		"$pools" -S "$cli" show byusage detailed > "$res/pools-show-$tag.txt" 2>&1 || true
		"$pools" -S "$cli" profile > "$res/pools-profile-$tag.txt" 2>&1 || true
	fi
	phase flush_all
	"$load" --server "127.0.0.1:$port" --command flush_all >> "$log"
	sleep "$quiet"
	phase quiet-end
	rss_quiet=$(rss_mib "$server_pid")
	"$load" --server "127.0.0.1:$port" --command "stats slabs" > "$res/$tag.stats-slabs-quiet"
	used_after=$(tr -d '\r' < "$res/$tag.stats-slabs-quiet" |
		awk '$1 == "STAT" && $2 ~ /:used_chunks$/ { s += $3 } END { print s + 0 }')
	rss_gc=-
	if [ "$b" = pool ]; then
		"$pools" -S "$cli" show byusage detailed > "$res/pools-show-quiet-$tag.txt" 2>&1 || true
		"$pools" -S "$cli" flush > /dev/null 2>&1 || true
		"$pools" -S "$cli" trim > /dev/null 2>&1 || true
		sleep 2
		phase pools-flush+trim
		rss_gc=$(rss_mib "$server_pid")
		"$pools" -S "$cli" show byusage detailed > "$res/pools-show-flushed-$tag.txt" 2>&1 || true
	fi
	sleep 1
	kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=
	wait "$sampler_pid" 2>/dev/null || true
	sampler_pid=

	say "  mixed: $(field "$mixed" ops_per_s) ops/s, p50 $(field "$mixed" p50_us) us," \
		"p99 $(field "$mixed" p99_us) us, p99.9 $(field "$mixed" p999_us) us," \
		"hits $(field "$mixed" hits)/$(field "$mixed" gets); server CPU" \
		"$(minus "$cpu2" "$cpu1") s"
	say "  burst: $(field "$bst" ops_per_s) sets/s, p50 $(field "$bst" p50_us) us," \
		"p99 $(field "$bst" p99_us) us, p99.9 $(field "$bst" p999_us) us, set errors" \
		"$(field "$bst" set_errors); server CPU $(minus "$cpu3" "$cpu2") s"
	say "  fill: $(field "$fill" ops_per_s) sets/s in $(field "$fill" seconds) s, p99" \
		"$(field "$fill" p99_us) us; server CPU $(minus "$cpu1" "$cpu0") s"
	say "  after the load: $items items, $evictions evictions, total_malloced $malloced MiB," \
		"RSS $rss_load MiB (peak $rss_peak MiB; $rss_start MiB at start)"
	gc_note=
	[ "$b" = pool ] && gc_note="; after pools flush + trim: RSS $rss_gc MiB"
	say "  after flush_all and ${quiet} s: RSS $rss_quiet MiB, given back" \
		"$(minus "$rss_load" "$rss_quiet") MiB (used_chunks $used_after)$gc_note"
	echo "$b $r $(field "$mixed" ops_per_s) $(field "$mixed" p50_us) $(field "$mixed" p99_us)" \
		"$(field "$bst" ops_per_s) $(field "$bst" p99_us) $(minus "$cpu2" "$cpu1")" \
		"$rss_load $rss_quiet $rss_gc" >> "$res/results.txt"
}

r=1
while [ $r -le "$rounds" ]; do
	for b in $builds; do
		run_one "$b" "$r"
	done
	r=$((r + 1))
done

# RSS over time, one line per run, the phases of the first run marked
plot="$res/rss.gp"
{
	echo "set terminal pngcairo size 1000,560 font ',10' noenhanced"
	echo "set output '$res/rss.png'"
	echo "set title 'memcached 1.6.18 -t $threads -m $mem: RSS over time (phases of the first" \
		"run marked: fill, mixed, burst, flush_all, quiet)'"
	echo "set xlabel 'seconds since start'"
	echo "set ylabel 'RSS (MiB)'"
	echo "set key outside below horizontal"
	echo "set grid"
	first=$(echo "$builds" | cut -d' ' -f1)
	while read -r t name; do
		echo "set arrow from $t, graph 0 to $t, graph 1 nohead dt 3 lc rgb 'gray50'"
		echo "set label '$name' at $t, graph 0.03 offset 0.8,0 rotate by 90 left" \
			"font ',8' tc rgb 'gray30'"
	done < "$res/phases-$first-1.txt"
	printf "plot "
	sep=
	for f in "$res"/rss-*.dat; do
		name=$(basename "$f" .dat | sed 's/^rss-//')
		label=$name
		case $name in
		pool-*) label="libpool (round ${name#pool-})" ;;
		slabs-*) label="memcached's slabs (round ${name#slabs-})" ;;
		esac
		printf "%s'%s' using 1:2 with lines lw 2 title \"%s\"" "$sep" "$f" "$label"
		sep=", "
	done
	echo
} > "$plot"
gnuplot "$plot" || die "gnuplot failed ($plot)"
say ""
say "memcached bench: $res/summary.txt, $res/rss.png"
