# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# pool-bench's server table with one line per row, as doc/benchmarks.md's run of record shows it:
#   awk -f mk/bench-server-table.awk <the output of make bench>
# Columns: each backend's ns per allocation, libpool's x fastest, the peak RSS of each, libpool's
# x leanest and its OS-layer share of the steady rounds.
/^(server|larson|xmalloc|mstress|larson-mb|xmalloc-test)-[0-9]+(-[0-9]+k-[a-z]+-[a-z]+|-1cpu)? +(libpool|glibc|jemalloc|tcmalloc|mimalloc) / {
	r = $1; if (!(r in ns)) order[++n] = r
	ns[r] = ns[r] " | " $3; rss[r] = rss[r] (rss[r] == "" ? "" : " / ") $7
	if ($2 == "libpool") { xb[r] = $5; xl[r] = $9; os[r] = ($13 == "-" || $13 == "") ? "-" : $13 } }
END { for (i = 1; i <= n; i++) { r = order[i]
	printf "| `%s`%s | %s | %s | %s | %s |\n", r, ns[r], xb[r], rss[r], xl[r], os[r] } }
