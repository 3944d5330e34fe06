# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
# make demo: tools/pool-httpd under wrk, with pools and then with malloc (mk/demo.sh).
#
# Targets
#   make demo            build the tools, then for pools and for --malloc in turn: start
#                        pool-httpd on 127.0.0.1 (ephemeral port), run wrk, print wrk's
#                        summary, stop the server and print its final `pools show` (pools run
#                        only); end with one line comparing requests per second. Every server
#                        it starts is stopped, also when a step fails or on Ctrl-C.
#                        Needs wrk (Debian package wrk).
#
# Variables
#   DEMO_DURATION=10     seconds wrk runs against each server
#   DEMO_CONNS=200       wrk connections
#   DEMO_WRK_THREADS=2   wrk threads
#   DEMO_PATH=/          the URL path wrk requests (e.g. /bytes/16384)
#   DEMO_HTTPD_OPTS=     extra pool-httpd options for both runs (e.g. --threads 1, -dMcaller)

DEMO_DURATION    ?= 10
DEMO_CONNS       ?= 200
DEMO_WRK_THREADS ?= 2
DEMO_PATH        ?= /
DEMO_HTTPD_OPTS  ?=

.PHONY: demo
demo: all
	$(Q)sh mk/demo.sh "$(BUILD)" "$(DEMO_DURATION)" "$(DEMO_CONNS)" "$(DEMO_WRK_THREADS)" \
		"$(DEMO_PATH)" "$(DEMO_HTTPD_OPTS)"

# pool-httpd embeds the pools page and uPlot (tools/httpd-page/) with .incbin: rebuild it when
# they change.
$(BUILD)/obj/tools/pool-httpd.o: $(wildcard tools/httpd-page/*.html tools/httpd-page/uplot/*.js \
                                           tools/httpd-page/uplot/*.css)
