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

# tests/tools/test_pools_page.sh drives the pools page in headless Chromium, through its DevTools
# protocol (python3-websocket), while wrk loads the server; the page's icicle of the profile's
# stacks is drawn with d3.js, which pool-httpd reads from Debian's libjs-d3 at start (not at
# build time: /usr/share/javascript/d3/d3.min.js, or --d3 <path>): make check installs them.
CHECK_PKGS += chromium python3-websocket wrk libjs-d3

.PHONY: demo
demo: all
	$(Q)sh mk/demo.sh "$(BUILD)" "$(DEMO_DURATION)" "$(DEMO_CONNS)" "$(DEMO_WRK_THREADS)" \
		"$(DEMO_PATH)" "$(DEMO_HTTPD_OPTS)"

# pool-httpd embeds the pools page and uPlot (tools/httpd-page/) with .incbin, from the path
# HTTPD_PAGE_DIR (relative to the top of the source tree, where make runs the compiler);
# rebuild its object when they change.
HTTPD_PAGE_FILES := tools/httpd-page/pools.html tools/httpd-page/uplot/uPlot.iife.min.js \
                    tools/httpd-page/uplot/uPlot.min.css
TOOL_CFLAGS_pool-httpd := -DHTTPD_PAGE_DIR='"tools/httpd-page"'
$(BUILD)/obj/tools/pool-httpd.o: $(HTTPD_PAGE_FILES)

# `make install` puts the example server's source in $(DOCDIR)/examples; it includes tool.h,
# and the page goes with it (examples/httpd-page/, with uPlot's license), so that it builds from
# there with or without the page (see the comment above EMBED() in tools/pool-httpd.c).
INSTALL_EXAMPLES += tools/tool.h
HTTPD_PAGE_DEST   = $(DESTDIR)$(DOCDIR)/examples/httpd-page
.PHONY: install-httpd-page uninstall-httpd-page
install: install-httpd-page
uninstall: uninstall-httpd-page
install-httpd-page:
	install -d $(HTTPD_PAGE_DEST)/uplot
	install -m 644 tools/httpd-page/pools.html $(HTTPD_PAGE_DEST)/
	install -m 644 tools/httpd-page/uplot/uPlot.iife.min.js tools/httpd-page/uplot/uPlot.min.css \
		tools/httpd-page/uplot/LICENSE tools/httpd-page/uplot/README.md $(HTTPD_PAGE_DEST)/uplot/
uninstall-httpd-page:
	rm -f $(HTTPD_PAGE_DEST)/pools.html $(addprefix $(HTTPD_PAGE_DEST)/uplot/,uPlot.iife.min.js \
		uPlot.min.css LICENSE README.md)
	-rmdir $(HTTPD_PAGE_DEST)/uplot $(HTTPD_PAGE_DEST) 2>/dev/null
