#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# libpool.so can be loaded with dlopen() into a program that is not linked with it (a plugin, a
# language binding), and the README's example runs through dlsym() (tests/package/dlopen_example.c),
# twice, with a dlclose() in between.
# The jemalloc build (USE_JEMALLOC=1) pulls in Debian's libjemalloc.so.2, which keeps its
# thread-local state in initial-exec TLS and cannot be dlopen()ed itself ("cannot allocate
# memory in static TLS block"): that build is skipped (77) with the reason when dlopen() fails
# on libjemalloc, and then run again with jemalloc preloaded (LD_PRELOAD), the way such a program
# can use it. The C library build (USE_JEMALLOC=0) must load.
# Then a plugin host's life (tests/package/dlclose_cycles.c): 2000 dlopen()/dlclose() cycles leak no
# pthread key and almost no memory, and a thread that outlives the library exits cleanly; with
# jemalloc preloaded in the jemalloc build. hwloc reads a small machine from
# tests/topologies/ rather than probing this one 2000 times. Then 100 cycles that unload the
# library with its CLI server running (a client answered, another left connected): no crash,
# no socket file and no thread left (issue 29). Then 20 cycles with each report at exit
# switched on (POOL_LEAK_REPORT's modes, POOL_STATS_ON_EXIT), which run at dlclose(): each
# cycle reports, and the host lives on.
# Env (from make check): BUILD, CC, SAN, USE_JEMALLOC.
set -u
BUILD=${BUILD:?BUILD must be set}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
lib=$BUILD/libpool.so.2
[ -e "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
san=
[ -n "${SAN:-}" ] && san="-fsanitize=$SAN -fno-omit-frame-pointer"
# shellcheck disable=SC2086
${CC:-cc} -std=gnu11 -O1 -g -Wall -Wextra -Iinclude $san -o "$tmp/dlopen_example" \
	tests/package/dlopen_example.c -ldl -lpthread || { echo "FAIL: tests/package/dlopen_example.c does not build"; exit 1; }
# shellcheck disable=SC2086
${CC:-cc} -std=gnu11 -O1 -g -Wall -Wextra -Iinclude $san -o "$tmp/dlclose_cycles" \
	tests/package/dlclose_cycles.c -ldl -lpthread || { echo "FAIL: tests/package/dlclose_cycles.c does not build"; exit 1; }
if readelf -d "$tmp/dlopen_example" "$tmp/dlclose_cycles" | grep -q 'NEEDED.*libpool'; then
	echo "FAIL: the test programs are linked with libpool"; exit 1
fi

# cycles PRELOAD: dlclose_cycles with that LD_PRELOAD (may be empty); exits on a failure
cycles() {
	# the sanitizers' runtimes keep memory of their own per library loaded: report it only
	HWLOC_XMLFILE=tests/topologies/32em64t-2n8c2t-pci-noio.xml LD_PRELOAD="$1" \
		"$tmp/dlclose_cycles" "$lib" 2000 "$([ -n "${SAN:-}" ] && echo 0 || echo 1)" \
		> "$tmp/cycles" 2>&1
	crc=$?
	cat "$tmp/cycles"
	[ $crc -eq 0 ] || { echo "FAIL: dlopen()/dlclose() cycles (exit $crc)"; exit 1; }
	mkdir "$tmp/sock" || exit 1
	HWLOC_XMLFILE=tests/topologies/32em64t-2n8c2t-pci-noio.xml LD_PRELOAD="$1" \
		"$tmp/dlclose_cycles" "$lib" 100 0 "$tmp/sock" > "$tmp/cycles" 2>&1
	crc=$?
	cat "$tmp/cycles"
	[ $crc -eq 0 ] || { echo "FAIL: dlclose() with the CLI server running (exit $crc)"; exit 1; }
	[ -z "$(ls -A "$tmp/sock")" ] || { echo "FAIL: left in the socket directory:" \
		"$(ls -A "$tmp/sock")"; exit 1; }
	# each report at exit switched on: it runs at dlclose(), which must not kill the host.
	# Not under ThreadSanitizer, whose atexit() interception loses the library the handler
	# belongs to: none runs at dlclose() (0 reports) and exit() calls the unmapped handler (SEGV).
	case "${SAN:-}" in
	*thread*)
		echo "skip: the reports at dlclose() under ThreadSanitizer (its atexit() interception)"
		return 0 ;;
	esac
	for report in POOL_LEAK_REPORT=1 POOL_LEAK_REPORT=json POOL_LEAK_REPORT=error \
		"POOL_LEAK_REPORT=1,heap:$tmp/heap.%p" POOL_STATS_ON_EXIT=1; do
		env "$report" HWLOC_XMLFILE=tests/topologies/32em64t-2n8c2t-pci-noio.xml \
			LD_PRELOAD="$1" "$tmp/dlclose_cycles" "$lib" 20 0 > "$tmp/cycles" 2>&1
		crc=$?
		reports=$(grep -c '^libpool: \(leak report\|pools at exit\)\|^{"format"' "$tmp/cycles")
		echo "dlclose() with $report: exit $crc, $reports reports"
		[ $crc -eq 0 ] || { tail -n 5 "$tmp/cycles"; echo "FAIL: dlclose() with $report" \
			"(exit $crc)"; exit 1; }
		[ "$reports" -ge 20 ] || { tail -n 5 "$tmp/cycles"; echo "FAIL: dlclose() with" \
			"$report: $reports reports in 20 cycles"; exit 1; }
	done
}

"$tmp/dlopen_example" "$lib" > "$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
if [ $rc -eq 0 ]; then
	echo "dlopen: the README example ran through dlsym(), twice"
	cycles ""
	exit 0
fi
[ $rc -ne 3 ] && { echo "FAIL: the example failed once loaded (exit $rc)"; exit 1; }

why=$(sed -n 's/^dlopen: //p' "$tmp/out")
case "$why" in
*libjemalloc*"static TLS"*)
	[ "${USE_JEMALLOC:-1}" = 1 ] || { echo "FAIL: jemalloc in a USE_JEMALLOC=0 build"; exit 1; }
	jemalloc=$(ldd "$lib" | awk '/libjemalloc/ { print $3 }')
	# a shared AddressSanitizer runtime (gcc's) must stay first among the loaded libraries
	asan=$(ldd "$tmp/dlopen_example" | awk '/libasan/ { print $3 }')
	LD_PRELOAD="${asan:+$asan }$jemalloc" "$tmp/dlopen_example" "$lib" > "$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	[ $rc -eq 0 ] || { echo "FAIL: with $jemalloc preloaded, libpool still does not load (exit $rc)"; exit 1; }
	cycles "${asan:+$asan }$jemalloc"
	echo "skip: the jemalloc build cannot be dlopen()ed: Debian's libjemalloc.so.2 uses"
	echo "      initial-exec TLS ($why); it loads and runs with jemalloc preloaded,"
	echo "      and the USE_JEMALLOC=0 build loads alone (make check USE_JEMALLOC=0)"
	exit 77 ;;
*"static TLS"*)
	tls=$(printf '%d' "$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')" 2>/dev/null)
	echo "FAIL: libpool's own thread-local state is too large for dlopen(): $why"
	echo "      its TLS block (PT_TLS) is ${tls:-?} bytes, all of it static TLS since the library"
	echo "      uses initial-exec TLS (readelf -lW $lib; readelf -sW ... | grep TLS)"
	echo "      (a library's initial-exec TLS must fit in the small surplus of static TLS"
	echo "      that glibc keeps for libraries loaded later: tunable glibc.rtld.optional_static_tls)"
	exit 1 ;;
*)
	echo "FAIL: dlopen($lib): $why"; exit 1 ;;
esac
