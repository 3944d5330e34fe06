#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
"""Drive pool-httpd's live pools page in headless Chromium; driven by tests/tools/test_pools_page.sh.

    pools-page.py CHROMIUM HTTPD_PORT SCREENSHOT.png [SETTLE_REFRESHES]

Starts CHROMIUM headless with a DevTools port, opens http://127.0.0.1:HTTPD_PORT/pools and,
through the DevTools protocol (python3-websocket), checks from the DOM that:
  - the page refreshes itself (body[data-refreshes] grows);
  - there is one chart per httpd-* pool, each a uPlot canvas on which the series are drawn
    (pixels of their colours), with the legend allocated/used/cached;
  - the table has a row per httpd-* pool with numeric cells;
  - the values change between two refreshes: the client opens idle connections that each hold
    an input buffer (a partial request) after the first sample, and the httpd-ibuf and
    httpd-conn rows and charts must show more objects in use at a later refresh;
  - clicking a column header sorts the rows by it, a second click reverses the order;
  - the profile's table (the server runs with -dMprofile) says the profile is on and lists
    sites of the httpd-* pools with bytes, most first, and the sites of httpd-ibuf and
    httpd-conn hold the connections held open;
  - in a window 1280 px wide, no table is cut: each ends within the window and within its box,
    which has nothing to scroll (the pools table used to be cut there); the pools table has the
    in_use column (used minus cached), and its used and needed_avg headers say what they count;
  - the profile's ages are in milliseconds, as on the CLI (the page said seconds);
  - the icicle of the profile's call stacks (d3.js, served by the server from Debian's
    libjs-d3) is drawn: a root as wide as the drawing holding the bytes of every stack, the
    server's obj_alloc() wrapper below a worker thread's frames, each frame no wider than its
    caller; a click on a frame zooms to it (full width), a second click zooms out;
then saves a screenshot of the page as SCREENSHOT.png. Prints one line per check and exits 0, or
prints the first failure and exits 1. Every wait is bounded (GUARD_S); nothing here measures time.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

GUARD_S = 90                    # longest wait for anything before declaring the page broken
POOLS = ["httpd-conn", "httpd-ibuf", "httpd-req", "httpd-obuf"]
HELD_CONNS = 24                 # idle connections opened between the two samples


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


class DevTools:
    """A minimal DevTools protocol client over one websocket: send a command, wait its answer."""

    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=GUARD_S, suppress_origin=True)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    fail("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})

    def eval(self, expr):
        """The value of a JavaScript expression in the page (awaited, returned by value)."""
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            fail("page script error in %r: %s" % (expr[:60], r["exceptionDetails"]))
        return r["result"].get("value")

    def wait(self, expr, what):
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            if self.eval(expr):
                return
            time.sleep(0.2)
        fail("timed out waiting for " + what)


# Everything the checks read from the page, in one evaluation.
SNAPSHOT_JS = r"""(() => {
  const rows = {};
  for (const tr of document.querySelectorAll('#pools-table tbody tr')) {
    const cells = {};
    const heads = [...document.querySelectorAll('#pools-table thead th')].map(th => th.dataset.key);
    [...tr.children].forEach((td, i) => {
      cells[heads[i]] = td.dataset.value !== undefined ? Number(td.dataset.value) : td.textContent;
    });
    rows[tr.dataset.pool] = cells;
  }
  const charts = {};
  for (const div of document.querySelectorAll('div.chart')) {
    const canvas = div.querySelector('canvas');
    let coloured = 0;             // pixels of the series strokes #1f77b4, #2ca02c, #ff7f0e
    if (canvas && canvas.width) {
      const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      const near = (i, c) => Math.abs(px[i] - c[0]) < 40 && Math.abs(px[i + 1] - c[1]) < 40 &&
                             Math.abs(px[i + 2] - c[2]) < 40 && px[i + 3] > 128;
      for (let i = 0; i < px.length; i += 4)
        if (near(i, [31, 119, 180]) || near(i, [44, 160, 44]) || near(i, [255, 127, 14]))
          coloured++;
    }
    charts[div.dataset.pool] = {
      title: (div.querySelector('.u-title') || {}).textContent,
      width: canvas ? canvas.width : 0,
      coloured,
      legend: [...div.querySelectorAll('.u-legend .u-label')].map(e => e.textContent),
    };
  }
  const sites = [...document.querySelectorAll('#profile-table tbody tr')].map(tr => {
    const s = { site: tr.dataset.site, pool: tr.dataset.pool };
    for (const td of tr.children)
      s[td.dataset.key] = td.dataset.value !== undefined ? Number(td.dataset.value) : td.textContent;
    return s;
  });
  const fit = {};
  for (const id of ['pools-table', 'traffic-table', 'profile-table']) {
    const t = document.getElementById(id), box = t.parentElement;
    fit[id] = { right: Math.ceil(t.getBoundingClientRect().right),
                window: document.documentElement.clientWidth,
                scroll: box.scrollWidth, box: box.clientWidth,
                columns: t.querySelectorAll('thead th').length };
  }
  const titles = {};
  for (const th of document.querySelectorAll('#pools-table thead th'))
    titles[th.dataset.key] = th.title;
  const oldest = (document.querySelector('#profile-table thead th:last-child') || {}).textContent;
  const svg = document.querySelector('#flame svg');
  const flame = [...document.querySelectorAll('#flame svg rect')].map(r => ({
    name: r.dataset.name, bytes: Number(r.dataset.bytes), path: r.dataset.path,
    width: Number(r.getAttribute('width')) }));
  return { refreshes: Number(document.body.dataset.refreshes), rows, charts, sites, fit, titles,
           oldest, flame, flame_width: svg ? Number(svg.getAttribute('width')) : 0,
           flame_zoom: document.getElementById('flame').dataset.zoom,
           flame_status: document.getElementById('flame-status').textContent,
           profile: document.getElementById('profile-status').textContent,
           order: [...document.querySelectorAll('#pools-table tbody tr')].map(r => r.dataset.pool),
           status: document.getElementById('status').textContent };
})()"""


def start_chromium(chromium, profile):
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--hide-scrollbars", "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0", "--user-data-dir=" + profile,
            "--window-size=1280,1000", "about:blank"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, "DevToolsActivePort")
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail("chromium exited with status %d at start" % proc.returncode)
        try:
            with open(port_file) as f:
                port = int(f.readline())
            break
        except (OSError, ValueError):
            time.sleep(0.2)
    else:
        fail("chromium did not open its DevTools port")
    # the page target chromium opened for about:blank
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                return proc, pages[0]["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.2)
    fail("chromium has no page target")


def hold_connections(port, n):
    """n connections that each sent part of a request: the server holds an input buffer each."""
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
    return conns


def in_use(row):
    return row["used"] - row["cached"]


def check_flame(dt):
    """The icicle of the profile's stacks: drawn, consistent, and zoomed by a click."""
    dt.wait("document.querySelectorAll('#flame svg rect[data-path*=\"obj_alloc\"]').length > 0",
            "the icicle to draw a stack through obj_alloc")
    snap = dt.eval(SNAPSHOT_JS)
    frames = {f["path"]: f for f in snap["flame"]}
    root = frames.get("")
    if not root or abs(root["width"] - snap["flame_width"]) > 1:
        fail("icicle: no root as wide as the drawing: %s" % snap["flame"][:3])
    if root["bytes"] <= 0:
        fail("icicle: the root holds no bytes")
    # (frames narrower than half a pixel are not drawn: sums over what is drawn are at most)
    for p, f in frames.items():
        callees = [g for q, g in frames.items() if q.rpartition(";")[0] == p and ";" in q or
                   (p == "" and q and ";" not in q)]
        if sum(g["bytes"] for g in callees) > f["bytes"]:
            fail("icicle: the frames below %r hold more than it: %s" % (p, callees))
        if abs(f["width"] - snap["flame_width"] * f["bytes"] / root["bytes"]) > 1:
            fail("icicle: %r is %.1f px wide for %d of %d bytes" %
                 (p, f["width"], f["bytes"], root["bytes"]))
    wrapped = [p for p in frames if "obj_alloc" in p.split(";") and "worker_main" in p]
    if not wrapped:
        fail("icicle: no obj_alloc below worker_main: %s" % sorted(frames))
    print("page: the icicle draws %d frames, %d bytes (%s), obj_alloc below worker_main"
          % (len(frames), root["bytes"], snap["flame_status"]))
    # zoom to the worker's frame, then back out
    target = min((p for p in wrapped), key=len)
    target = target[:target.index("worker_main") + len("worker_main")]
    click = "document.querySelector('#flame svg rect[data-path=\"%s\"]')" % target
    dt.eval(click + ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    snap = dt.eval(SNAPSHOT_JS)
    zoomed = {f["path"]: f for f in snap["flame"]}.get(target)
    if snap["flame_zoom"] != target or not zoomed or \
            abs(zoomed["width"] - snap["flame_width"]) > 1:
        fail("icicle: a click on %s did not zoom to it: zoom %r, %s" %
             (target, snap["flame_zoom"], zoomed))
    dt.eval(click + ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    snap = dt.eval(SNAPSHOT_JS)
    if snap["flame_zoom"] != target.rpartition(";")[0]:
        fail("icicle: a second click did not zoom out: zoom %r" % snap["flame_zoom"])
    print("page: a click on the icicle zooms to %s, a second one zooms out" % target)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        sys.exit(2)
    chromium, port, shot = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    settle = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    profile = tempfile.mkdtemp(prefix="pools-page-chromium.")
    proc = None
    held = []
    try:
        proc, ws_url = start_chromium(chromium, profile)
        dt = DevTools(ws_url)
        dt.call("Emulation.setDeviceMetricsOverride", width=1280, height=1000,
                deviceScaleFactor=1, mobile=False)
        dt.call("Page.enable")
        dt.call("Page.navigate", url="http://127.0.0.1:%d/pools" % port)
        dt.wait("document.body && Number(document.body.dataset.refreshes) >= 2",
                "two refreshes of the page")
        first = dt.eval(SNAPSHOT_JS)
        print("page: loaded, %d refreshes, status '%s'" % (first["refreshes"], first["status"]))

        for name in POOLS:
            chart = first["charts"].get(name)
            if not chart:
                fail("no chart for pool %s (charts: %s)" % (name, sorted(first["charts"])))
            if chart["title"] != name or chart["width"] <= 0:
                fail("chart of %s: title %r, canvas width %d" % (name, chart["title"],
                                                                chart["width"]))
            if chart["legend"][-3:] != ["allocated", "used", "cached"]:
                fail("chart of %s: legend %r" % (name, chart["legend"]))
            row = first["rows"].get(name)
            if not row:
                fail("no table row for pool %s (rows: %s)" % (name, sorted(first["rows"])))
            for k in ("size", "allocated", "allocated_bytes", "used", "cached"):
                if not isinstance(row.get(k), (int, float)):
                    fail("table row %s: %s is %r, not a number" % (name, k, row.get(k)))
        print("page: a chart (allocated/used/cached) and a table row for each of %s"
              % ", ".join(POOLS))

        # Change what the server holds, then wait for two more refreshes.
        held = hold_connections(port, HELD_CONNS)
        dt.wait("Number(document.body.dataset.refreshes) >= %d" % (first["refreshes"] + 2),
                "two more refreshes")
        deadline = time.monotonic() + GUARD_S
        while True:
            second = dt.eval(SNAPSHOT_JS)
            grown = [n for n in ("httpd-conn", "httpd-ibuf")
                     if in_use(second["rows"][n]) >= in_use(first["rows"][n]) + HELD_CONNS // 2]
            if len(grown) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if len(grown) != 2:
            fail("the table did not show the %d held connections: before %s, after %s"
                 % (HELD_CONNS, {n: first["rows"][n] for n in POOLS},
                    {n: second["rows"][n] for n in POOLS}))
        changed = [n for n in POOLS if second["rows"][n] != first["rows"][n]]
        print("page: values changed between refreshes %d and %d (%s); in use: httpd-conn %d -> %d, "
              "httpd-ibuf %d -> %d" % (first["refreshes"], second["refreshes"],
                                       ", ".join(changed),
                                       in_use(first["rows"]["httpd-conn"]),
                                       in_use(second["rows"]["httpd-conn"]),
                                       in_use(first["rows"]["httpd-ibuf"]),
                                       in_use(second["rows"]["httpd-ibuf"])))
        for name in POOLS:
            if second["charts"][name]["coloured"] == 0:
                fail("chart of %s: no series is drawn" % name)
        print("page: every chart draws its series (%s pixels)"
              % ", ".join("%s %d" % (n, second["charts"][n]["coloured"]) for n in POOLS))

        # Sorting: by name ascending, again descending, then by allocated_bytes.
        dt.eval("document.querySelector('th[data-key=\"name\"]').click()")
        order = dt.eval(SNAPSHOT_JS)["order"]
        if order != sorted(order):
            fail("click on 'name': rows not in ascending order: %s" % order)
        dt.eval("document.querySelector('th[data-key=\"name\"]').click()")
        order = dt.eval(SNAPSHOT_JS)["order"]
        if order != sorted(order, reverse=True):
            fail("second click on 'name': rows not in descending order: %s" % order)
        dt.eval("document.querySelector('th[data-key=\"allocated_bytes\"]').click()")
        snap = dt.eval(SNAPSHOT_JS)
        values = [snap["rows"][n]["allocated_bytes"] for n in snap["order"]]
        if values != sorted(values, reverse=True):
            fail("click on 'allocated_bytes': not largest first: %s" % values)
        print("page: headers sort the table (name up, name down, allocated_bytes down)")

        # The profile's table: on, sites of the pools with bytes, most first; the held
        # connections (still open here) are in the httpd-ibuf and httpd-conn sites.
        if "profile on" not in snap["profile"]:
            fail("profile table: status %r" % snap["profile"])
        sites = [s for s in snap["sites"] if s["pool"] in POOLS]
        if not sites or not all(isinstance(s.get("live_bytes"), (int, float)) for s in sites):
            fail("profile table: no site of the httpd pools: %s" % snap["sites"])
        values = [s["live_bytes"] for s in snap["sites"]]
        if values != sorted(values, reverse=True):
            fail("profile table: not most bytes first: %s" % values)
        held_bytes = {n: sum(s["live_bytes"] for s in sites if s["pool"] == n)
                      for n in ("httpd-ibuf", "httpd-conn")}
        if any(v <= 0 for v in held_bytes.values()):
            fail("profile table: the held connections hold no bytes: %s" % snap["sites"])
        print("page: the profile's table lists %d sites (%s), httpd-ibuf %d and httpd-conn %d "
              "bytes" % (len(sites), snap["profile"], held_bytes["httpd-ibuf"],
                         held_bytes["httpd-conn"]))

        # 1280 px: every table within the window, nothing to scroll in its box
        for tid, f in snap["fit"].items():
            if f["right"] > f["window"] or f["scroll"] > f["box"]:
                fail("%s is cut in a window 1280 px wide: it ends at %d px of %d, its box "
                     "scrolls %d px over %d (%d columns)" % (tid, f["right"], f["window"],
                                                             f["scroll"], f["box"],
                                                             f["columns"]))
        for name in POOLS:
            row = snap["rows"][name]
            if row.get("in_use") != max(0, row["used"] - row["cached"]):
                fail("table row %s: in_use %r, used %r, cached %r" % (name, row.get("in_use"),
                                                                      row["used"], row["cached"]))
        if "thread caches" not in snap["titles"].get("used", "") or \
                "average of used" not in snap["titles"].get("needed_avg", ""):
            fail("the used and needed_avg headers do not say what they count: %s" % snap["titles"])
        if snap["oldest"] != "oldest (ms)" or any(
                s.get("age_max_ms") not in ("-", None) and not isinstance(s["age_max_ms"], (int, float))
                for s in snap["sites"]):
            fail("profile ages not in milliseconds: header %r" % snap["oldest"])
        print("page: at 1280 px every table fits (%s); in_use = used - cached; ages in ms"
              % ", ".join("%s %d of %d px" % (t, f["right"], f["window"])
                          for t, f in snap["fit"].items()))

        check_flame(dt)

        for s in held:
            s.close()
        held = []
        if settle:
            start = snap["refreshes"]
            dt.wait("Number(document.body.dataset.refreshes) >= %d" % (start + settle),
                    "%d refreshes before the screenshot" % settle)
        png = base64.b64decode(dt.call("Page.captureScreenshot", format="png")["data"])
        if png[:8] != b"\x89PNG\r\n\x1a\n":
            fail("the screenshot is not a PNG")
        with open(shot, "wb") as f:
            f.write(png)
        print("page: screenshot %s (%d bytes)" % (shot, len(png)))
    finally:
        for s in held:
            s.close()
        if proc:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
