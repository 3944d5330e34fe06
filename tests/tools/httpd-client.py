#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
"""Test client for tools/pool-httpd, driven by tests/tools/test_httpd.sh. Standard library only.

    httpd-client.py load   PORT N        N keep-alive requests over 8 connections, every byte checked
    httpd-client.py bad    PORT          every bad-input case, its status and whether it closes
    httpd-client.py flood  PORT N        N connections opened at once (past the server's fd limit)
    httpd-client.py faults PORT N        N requests while the server fails allocations at random
    httpd-client.py pools  JSON-FILE     no httpd-* pool has an object in use (used - cached == 0)
    httpd-client.py memreturn PORT PID N POOLS SOCKET [rss|no-rss]
                                          after a slowloris wave of N connections, each holding
                                          an input buffer, and at most 10 idle seconds, the
                                          httpd-ibuf pool holds at most 32 buffers (asked with
                                          the pools tool POOLS on the CLI socket SOCKET) and the
                                          server's RSS is within 1.5x of its idle baseline (not
                                          with no-rss)
    httpd-client.py stats  PORT          --stats: /metrics, /pools.json and /pools answer
    httpd-client.py nostats PORT         without --stats those paths are 404

Each prints what it did on one line and exits 0, or prints the first failure and exits 1.
Waits are bounded so that a broken server fails the test instead of hanging it; nothing here
measures time.
"""
import errno
import json
import random
import resource
import selectors
import socket
import struct
import subprocess
import sys
import time

PATTERN = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n"
HELLO = b"Hello from pool-httpd\n"
GUARD_S = 60          # longest wait for anything before declaring the server stuck


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def expected_bytes(n):
    return (PATTERN * (n // len(PATTERN) + 1))[:n]


class Conn:
    """One client connection with its own receive buffer."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def _more(self):
        try:
            data = self.s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return False
        self.buf += data
        return bool(data)

    def response(self, head_only=False):
        """(status, headers, body), or None when the server closed first."""
        while b"\r\n\r\n" not in self.buf:
            if not self._more():
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 3 or parts[0] != b"HTTP/1.1":
            fail("bad status line %r" % lines[0])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower().decode()] = value.strip().decode()
        n = 0 if head_only else int(headers["content-length"])
        while len(self.buf) < n:
            if not self._more():
                return None
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(parts[1]), headers, body

    def closed(self):
        """True when the server closed the connection (end of stream or reset)."""
        while True:
            if not self._more():
                return True
            if len(self.buf) > 1 << 20:
                return False

    def close(self):
        self.s.close()


def get(path, extra=b"", version=b"HTTP/1.1", method=b"GET"):
    return method + b" " + path + b" " + version + b"\r\nHost: test\r\n" + extra + b"\r\n"


def check_ok(resp, path, head_only=False):
    if resp is None:
        fail("connection closed instead of answering %s" % path)
    status, headers, body = resp
    if status != 200:
        fail("%s: status %d" % (path, status))
    if path == "/":
        want = HELLO
    else:
        want = expected_bytes(int(path[len("/bytes/"):]))
    if int(headers["content-length"]) != len(want):
        fail("%s: content-length %s, expected %d" % (path, headers["content-length"], len(want)))
    if not head_only and body != want:
        fail("%s: wrong body" % path)


def cmd_load(port, n):
    rng = random.Random(7)
    conns = [Conn(port) for _ in range(8)]
    sizes = [0, 1, 63, 64, 65, 1000, 16384, 16385, 40000]
    done = 0
    while done < n:
        c = conns[done % len(conns)]
        if done % 500 == 499:
            # three pipelined requests in one segment, answered in order
            paths = ["/", "/bytes/100", "/bytes/%d" % rng.choice(sizes)]
            c.send(b"".join(get(p.encode()) for p in paths))
            for p in paths:
                check_ok(c.response(), p)
            done += 3
            continue
        if done % 1000 == 0:
            path = "/bytes/1048576"
        elif done % 3 == 0:
            path = "/"
        else:
            path = "/bytes/%d" % rng.choice(sizes + [rng.randrange(0, 70000)])
        head_only = done % 7 == 0
        c.send(get(path.encode(), method=b"HEAD" if head_only else b"GET"))
        resp = c.response(head_only)
        check_ok(resp, path, head_only)
        if resp[1].get("connection") != "keep-alive":
            fail("%s: not kept alive" % path)
        done += 1
    for c in conns:
        c.close()
    print("load: %d requests answered correctly over %d keep-alive connections" % (done, len(conns)))


def expect(port, name, data, status, closes, shut=False, head_only=False):
    """Send data on a new connection; check the status and whether the server closes after it."""
    c = Conn(port)
    c.send(data)
    if shut:
        c.s.shutdown(socket.SHUT_WR)
    resp = c.response(head_only)
    if resp is None:
        fail("%s: closed without a response" % name)
    if resp[0] != status:
        fail("%s: status %d, expected %d" % (name, resp[0], status))
    if closes:
        if resp[1].get("connection") != "close" or not c.closed():
            fail("%s: connection not closed after %d" % (name, status))
    elif not shut:
        c.send(get(b"/"))
        check_ok(c.response(), "/")
    c.close()
    return resp


def expect_closed_silently(port, name, data, trickle=False):
    """Send data and go silent (or trickle one byte at a time): the server must close."""
    c = Conn(port)
    c.send(data)
    if trickle:
        c.s.settimeout(0.2)
        for i in range(GUARD_S * 5):
            try:
                data = c.s.recv(4096)
                if data:
                    fail("%s: answered %r instead of closing" % (name, data[:40]))
                break
            except socket.timeout:
                pass
            except ConnectionResetError:
                break
            try:
                c.send(b"X-Slow-%d: y\r\n" % i)
            except (BrokenPipeError, ConnectionResetError):
                break
        else:
            fail("%s: never closed" % name)
    elif not c.closed():
        fail("%s: answered instead of closing" % name)
    if c.buf:
        fail("%s: answered %r before closing" % (name, c.buf[:40]))
    c.close()


def cmd_bad(port):
    rng = random.Random(3)
    n = 0
    cases = [
        ("garbage", b"\x00\x01\x02garbage\r\n\r\n", 400, True),
        ("random bytes", bytes(rng.randrange(256) for _ in range(3000)), 400, True),
        ("bare LF", b"GET / HTTP/1.1\nHost: x\n\n", 400, True),
        ("bare CR", b"GET / HTTP/1.1\rHost: x\r\n\r\n", 400, True),
        ("empty first line", b"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 400, True),
        ("no Host", b"GET / HTTP/1.1\r\n\r\n", 400, True),
        ("two Hosts", get(b"/", b"Host: again\r\n"), 400, True),
        ("space before colon", get(b"/", b"Bad : y\r\n"), 400, True),
        ("folded line", get(b"/", b"X-A: y\r\n folded\r\n"), 400, True),
        ("bad target", b"GET nope HTTP/1.1\r\nHost: x\r\n\r\n", 400, True),
        ("bad version", b"GET / HTTX/1.1\r\nHost: x\r\n\r\n", 400, True),
        ("bad content-length", get(b"/", b"Content-Length: 1x\r\n"), 400, True),
        ("HTTP/2.0", b"GET / HTTP/2.0\r\n\r\n", 505, True),
        ("printable garbage", b"A" * 20000, 431, True),
        ("header section > 16 KiB", get(b"/", b"X-Big: " + b"a" * 20000 + b"\r\n"), 431, True),
        ("body on GET", get(b"/", b"Content-Length: 5\r\n") + b"hello", 413, True),
        ("chunked GET", get(b"/", b"Transfer-Encoding: chunked\r\n") + b"0\r\n\r\n", 413, True),
        ("POST with body", get(b"/", b"Content-Length: 3\r\n", method=b"POST") + b"abc", 405,
         True),
        ("DELETE", get(b"/x", method=b"DELETE"), 405, False),
        ("not found", get(b"/nope"), 404, False),
        ("bytes not a number", get(b"/bytes/abc"), 404, False),
        ("bytes too many", get(b"/bytes/1048577"), 404, False),
        ("bytes empty", get(b"/bytes/"), 404, False),
        ("header section of 16000 bytes", get(b"/", b"X-Big: " + b"a" * 15950 + b"\r\n"), 200,
         False),
        ("query string", get(b"/bytes/10?x=1"), 200, False),
        ("Connection: close", get(b"/", b"Connection: close\r\n"), 200, True),
        ("HTTP/1.0", b"GET / HTTP/1.0\r\n\r\n", 200, True),
        ("HTTP/1.0 keep-alive", b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 200, False),
    ]
    for name, data, status, closes in cases:
        expect(port, name, data, status, closes)
        n += 1
    r = expect(port, "DELETE", get(b"/x", method=b"DELETE"), 405, False)
    if r[1].get("allow") != "GET, HEAD":
        fail("405 without 'Allow: GET, HEAD'")
    r = expect(port, "HEAD", get(b"/bytes/100", method=b"HEAD"), 200, False, head_only=True)
    if r[1]["content-length"] != "100" or r[2]:
        fail("HEAD: wrong content-length or a body")
    # The request line without CRLF, then the client ends its side: 400, then closed.
    expect(port, "request line without CRLF", b"GET / HTTP/1.1", 400, True, shut=True)
    n += 3
    # Half a request then silence, a silent client, a slow trickle: closed after --timeout.
    expect_closed_silently(port, "half request", b"GET / HTTP/1.1\r\nHost: x\r\n")
    expect_closed_silently(port, "silent client", b"")
    expect_closed_silently(port, "request line, no CRLF, silence", b"GET / HTTP/1.1")
    expect_closed_silently(port, "trickling client", b"GET / HTTP/1.1\r\nHost: x\r\n",
                           trickle=True)
    n += 4
    # Clients that reset in the middle of a 1 MiB response.
    for i in range(20):
        c = Conn(port)
        c.send(get(b"/bytes/1048576"))
        c.s.recv(1000 + i * 5000)
        c.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
    n += 1
    c = Conn(port)
    c.send(get(b"/"))
    check_ok(c.response(), "/")
    c.close()
    print("bad: %d bad-input cases answered as expected; the server still serves" % n)


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < want:
        want = hard
    if soft == resource.RLIM_INFINITY or soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


def cmd_flood(port, n):
    limit = raise_fd_limit(n + 64)
    if limit < n + 64:
        print("flood: note: this client may open only %d descriptors; using %d connections"
              % (limit, limit - 64))
        n = limit - 64
    sel = selectors.DefaultSelector()
    request = get(b"/")
    state = {}
    served = refused = 0
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex(("127.0.0.1", port))
        if err not in (0, errno.EINPROGRESS):
            refused += 1
            s.close()
            continue
        state[s] = b""
        sel.register(s, selectors.EVENT_WRITE)

    def finish(sock, ok):
        nonlocal served, refused
        sel.unregister(sock)
        sock.close()
        del state[sock]
        if ok:
            served += 1
        else:
            refused += 1

    deadline = time.monotonic() + GUARD_S
    while state and time.monotonic() < deadline:
        for key, events in sel.select(timeout=1):
            s = key.fileobj
            if events & selectors.EVENT_WRITE:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    finish(s, False)
                    continue
                try:
                    s.send(request)
                except OSError:
                    finish(s, False)
                    continue
                sel.modify(s, selectors.EVENT_READ)
                continue
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                finish(s, False)
                continue
            if not data:
                finish(s, False)
                continue
            state[s] += data
            buf = state[s]
            if b"\r\n\r\n" in buf and buf.endswith(HELLO):
                if not buf.startswith(b"HTTP/1.1 200 "):
                    fail("flood: bad response %r" % buf[:40])
                finish(s, True)
    if state:
        fail("flood: %d connections neither served nor closed (%d served, %d refused)"
             % (len(state), served, refused))
    if not served:
        fail("flood: no connection served")
    # The server must serve new clients once the flood is over.
    for _ in range(GUARD_S * 10):
        try:
            c = Conn(port)
            c.send(get(b"/"))
            resp = c.response()
            c.close()
            if resp is not None:
                check_ok(resp, "/")
                break
        except OSError:
            pass
        time.sleep(0.1)
    else:
        fail("flood: the server does not serve after the flood")
    print("flood: %d connections at once: %d served, %d refused; then served normally"
          % (n, served, refused))


def cmd_faults(port, n):
    rng = random.Random(11)
    ok = broken = 0
    c = None
    while ok + broken < n:
        try:
            if c is None:
                c = Conn(port)
            path = "/" if rng.random() < 0.5 else "/bytes/%d" % rng.randrange(0, 50000)
            c.send(get(path.encode()))
            resp = c.response()
        except (ConnectionResetError, BrokenPipeError):
            resp = None
        if resp is None:
            broken += 1
            c.close()
            c = None
            continue
        check_ok(resp, path)
        ok += 1
    if c:
        c.close()
    if not ok:
        fail("faults: no request succeeded")
    if not broken:
        fail("faults: no connection was closed: is -dMfail on?")
    print("faults: %d requests answered correctly, %d connections closed on a failure"
          % (ok, broken))


def rss_kib(pid):
    """VmRSS of process pid, in KiB (from /proc/PID/status)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    fail("memreturn: no VmRSS in /proc/%d/status" % pid)


def ibufs_allocated(pools_tool, socket_path):
    """The objects httpd-ibuf holds above its slab tier (allocated less those free in its slabs,
    whose slabs go back once wholly free), asked on the CLI socket: its thread touches no pool,
    so asking does not make the server busy as an HTTP request would."""
    out = subprocess.run([pools_tool, "-S", socket_path, "show", "json"], check=True,
                         stdout=subprocess.PIPE, timeout=GUARD_S).stdout
    return [p["allocated"] - p["slab_free"] for p in find_pools(json.loads(out), [])
            if p["name"] == "httpd-ibuf"][0]


def ibuf_bound(pools_tool, socket_path, threads=2):
    """What httpd-ibuf may keep once idle: each worker thread's loaded magazine, which its fast
    path may be using (up to a magazine's capacity, as its slot may have gone deeper), and the
    floor (64 KiB worth, at most a slot's starting depth), from the settings the server shows
    and libpool's sizing rule (src/shared/pool-demand.c; tests/testutil.h has the same): 2 x 8
    + 4 = 20 buffers under a 512 KiB budget, 2 x 32 + 4 = 68 under 2 MiB."""
    out = subprocess.run([pools_tool, "-S", socket_path, "show", "json"], check=True,
                         stdout=subprocess.PIPE, timeout=GUARD_S).stdout
    doc = json.loads(out)
    budget, cluster = doc["settings"]["cache_bytes"], doc["settings"]["cluster"]
    stride = [p["stride"] for p in find_pools(doc, []) if p["name"] == "httpd-ibuf"][0]
    share, most = budget // 16 // stride, budget // 4 // stride
    if share < 8:
        share = (max(most, share) if most < 8 else 8)
    depth = min(max(share, 1), cluster)
    capacity = max(min(cluster, most), depth)
    return threads * capacity + min(65536 // stride, depth)


def cmd_memreturn(port, pid, n, pools_tool, socket_path, check_rss):
    """Baseline RSS when idle; a wave of n connections that each fill an input buffer with a
    header section that never ends (slowloris); the pool must hold them and RSS rise by most of
    n x 16 KiB; once the clients are gone, in at most 10 idle seconds, the pool must hold at most
    a magazine per worker thread and the floor (ibuf_bound()) and RSS fall back within 1.5x of
    the baseline. check_rss False leaves RSS out (a sanitizer's allocator that keeps freed
    memory: ThreadSanitizer's)."""
    raise_fd_limit(n + 64)
    # Warm up: every path the wave will take has run once, so the baseline holds its code and
    # stacks; then let the server go idle (the library gives back what the warm-up left).
    c = Conn(port)
    for _ in range(50):
        c.send(get(b"/bytes/20000"))
        check_ok(c.response(), "/bytes/20000")
    c.close()
    time.sleep(3)
    samples = []
    for _ in range(3):
        samples.append(rss_kib(pid))
        time.sleep(0.3)
    baseline = min(samples)
    # A header section of 15000 bytes without its end: the server holds a 16 KiB input buffer
    # per connection, its pages touched, waiting for the rest.
    pad = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 15000
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
        s.sendall(pad)
        conns.append(s)
    want = baseline + n * 16 * 3 // 4 if check_rss else 0
    deadline = time.monotonic() + GUARD_S
    peak = rss_kib(pid)
    held = ibufs_allocated(pools_tool, socket_path)
    while (peak < want or held < n) and time.monotonic() < deadline:
        time.sleep(0.2)
        peak = max(peak, rss_kib(pid))
        held = ibufs_allocated(pools_tool, socket_path)
    if held < n or peak < want:
        fail("memreturn: the wave did not show: %d input buffers, RSS %d KiB, expected at least "
             "%d buffers and %d KiB (baseline %d KiB + 3/4 of %d x 16 KiB)"
             % (held, peak, n, want, baseline, n))
    for s in conns:
        s.close()
    limit = baseline * 3 // 2 if check_rss else float("inf")
    bound = ibuf_bound(pools_tool, socket_path)
    waited = 0.0
    rss = rss_kib(pid)
    left = ibufs_allocated(pools_tool, socket_path)
    while (rss > limit or left > bound) and waited < 10:
        time.sleep(0.5)
        waited += 0.5
        rss = rss_kib(pid)
        left = ibufs_allocated(pools_tool, socket_path)
    if left > bound:
        out = subprocess.run([pools_tool, "-S", socket_path, "show", "json"], check=True,
                             stdout=subprocess.PIPE, timeout=GUARD_S).stdout
        p = [p for p in find_pools(json.loads(out), []) if p["name"] == "httpd-ibuf"][0]
        fail("memreturn: the httpd-ibuf pool still holds %d buffers 10 s after the wave, "
             "over %d (%s)" % (left, bound, ", ".join("%s %s" % (k, p.get(k)) for k in
                                                     ("used", "cached", "shared_free",
                                                      "slab_free", "slabs"))))
    if rss > limit:
        fail("memreturn: RSS %d KiB 10 s after the wave, over 1.5 x the idle baseline of %d KiB "
             "(peak %d KiB)" % (rss, baseline, peak))
    print("memreturn: RSS idle %d KiB, %d slowloris connections %d KiB, %.1f s after they left "
          "%d KiB (limit %s); httpd-ibuf %d buffers, then %d"
          % (baseline, n, peak, waited, rss,
             "1.5 x idle = %d KiB" % limit if check_rss else "not checked", held, left))


def http_get(port, path):
    c = Conn(port)
    c.send(get(path.encode(), b"Connection: close\r\n"))
    resp = c.response()
    c.close()
    if resp is None:
        fail("GET %s: closed without a response" % path)
    return resp


def cmd_stats(port):
    status, headers, body = http_get(port, "/metrics")
    if status != 200 or not headers["content-type"].startswith("text/plain; version=0.0.4"):
        fail("/metrics: %d %s" % (status, headers.get("content-type")))
    text = body.decode()
    for want in ('libpool_pool_allocated_bytes{pool="httpd-ibuf"}', "# TYPE ",
                 "# TYPE pool_httpd_requests_total counter", "pool_httpd_connections_open "):
        if want not in text:
            fail("/metrics lacks %r" % want)
    requests = [int(line.split()[1]) for line in text.splitlines()
                if line.startswith("pool_httpd_requests_total ")]
    try:    # the reference parser, where installed (Debian: python3-prometheus-client)
        from prometheus_client.parser import text_string_to_metric_families
        families = {f.name: f.type for f in text_string_to_metric_families(text)}
        if families.get("pool_httpd_requests") != "counter":
            fail("/metrics: prometheus_client reads %r" % families)
    except ImportError:
        pass
    again = [int(line.split()[1]) for line in http_get(port, "/metrics")[2].decode().splitlines()
             if line.startswith("pool_httpd_requests_total ")]
    if len(requests) != 1 or len(again) != 1 or again[0] <= requests[0]:
        fail("/metrics: pool_httpd_requests_total %r, then %r: no growth" % (requests, again))
    status, headers, body = http_get(port, "/pools.json")
    if status != 200 or headers["content-type"] != "application/json":
        fail("/pools.json: %d %s" % (status, headers.get("content-type")))
    doc = json.loads(body)
    names = sorted(p["name"] for p in find_pools(doc, []))
    if names != ["httpd-conn", "httpd-ibuf", "httpd-obuf", "httpd-req"]:
        fail("/pools.json: pools %s" % names)
    if doc.get("format") != 2 or b"address" in body or b"0x" in body:
        fail("/pools.json: not the format 2 JSON of a user-level session (no addresses): %r"
             % body[:200])
    # doc/example-server.md's table of objects gives each pool's object size: the server's
    sizes = {p["name"]: p["size"] for p in find_pools(doc, [])}
    documented = {}
    for line in open("doc/example-server.md"):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and cells[2].startswith("`httpd-"):
            n, unit = cells[3].split()
            documented[cells[2].strip("`")] = int(n) * (1024 if unit == "KiB" else 1)
    if documented != sizes:
        fail("doc/example-server.md gives the sizes %r, the server's pools are %r"
             % (documented, sizes))
    status, headers, body = http_get(port, "/profile.json")
    if status != 200 or headers["content-type"] != "application/json" or \
            json.loads(body).get("format") != 1 or "/profile.json" not in \
            open("doc/example-server.md").read() + open("doc/pool-httpd.1").read():
        fail("/profile.json: %d %s, or undocumented" % (status, headers.get("content-type")))
    status, headers, body = http_get(port, "/pools")
    if status != 200 or not headers["content-type"].startswith("text/html") or \
            b'src="/pools/uPlot.iife.min.js"' not in body:
        fail("/pools: %d %s" % (status, headers.get("content-type")))
    for path, ctype, start in (("/pools/uPlot.iife.min.js", "text/javascript", b"/*! "),
                               ("/pools/uPlot.min.css", "text/css", b".uplot")):
        status, headers, body = http_get(port, path)
        if status != 200 or not headers["content-type"].startswith(ctype) or \
                not body.startswith(start):
            fail("%s: %d %s %r" % (path, status, headers.get("content-type"), body[:20]))
    c = Conn(port)
    c.send(get(b"/metrics", method=b"HEAD"))
    status, headers, body = c.response(head_only=True)
    c.close()
    if status != 200 or int(headers["content-length"]) < 1000:
        fail("HEAD /metrics: %d, content-length %s" % (status, headers.get("content-length")))
    print("stats: /metrics (%d requests so far), /pools.json (4 pools, format 2, no address, "
          "the documented sizes), /profile.json (documented), /pools and its uPlot files answer"
          % requests[0])


def cmd_nostats(port):
    for path in ("/metrics", "/pools.json", "/profile.json", "/pools", "/pools/uPlot.iife.min.js"):
        status = http_get(port, path)[0]
        if status != 404:
            fail("%s without --stats: status %d, expected 404" % (path, status))
    print("nostats: the statistics paths are 404 without --stats")


def find_pools(node, out):
    """Collect every JSON object that has name, used and cached members."""
    if isinstance(node, dict):
        if {"name", "used", "cached"} <= node.keys():
            out.append(node)
        for v in node.values():
            find_pools(v, out)
    elif isinstance(node, list):
        for v in node:
            find_pools(v, out)
    return out


def cmd_pools(path):
    with open(path) as f:
        pools = [p for p in find_pools(json.load(f), []) if p["name"].startswith("httpd-")]
    if len(pools) != 4:
        fail("pools: expected the 4 httpd-* pools, found %s" % [p["name"] for p in pools])
    left = ["%s used %d cached %d" % (p["name"], p["used"], p["cached"])
            for p in pools if p["used"] - p["cached"] != 0]
    if left:
        print("objects in use: " + ", ".join(left))
        sys.exit(1)
    print("pools: no object in use in %s" % ", ".join(sorted(p["name"] for p in pools)))


def main():
    args = sys.argv[1:]
    try:
        if args[0] == "load":
            cmd_load(int(args[1]), int(args[2]))
        elif args[0] == "bad":
            cmd_bad(int(args[1]))
        elif args[0] == "flood":
            cmd_flood(int(args[1]), int(args[2]))
        elif args[0] == "faults":
            cmd_faults(int(args[1]), int(args[2]))
        elif args[0] == "pools":
            cmd_pools(args[1])
        elif args[0] == "memreturn":
            if len(args) not in (6, 7) or (len(args) == 7 and args[6] not in ("rss", "no-rss")):
                raise ValueError
            cmd_memreturn(int(args[1]), int(args[2]), int(args[3]), args[4], args[5],
                          len(args) == 6 or args[6] == "rss")
        elif args[0] == "stats":
            cmd_stats(int(args[1]))
        elif args[0] == "nostats":
            cmd_nostats(int(args[1]))
        else:
            raise IndexError
    except (IndexError, ValueError):
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
