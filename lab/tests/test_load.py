#!/usr/bin/env python3
"""cpi2-lab-load as a program, against small servers of this test's own (one thread serving
one request at a time, as redis and an nginx worker do, with a service time, a connection limit
or broken answers as each case needs): --help and configuration errors (exit 2); at a rate the
server keeps up with, fixed gaps keep their schedule, every request is in the CSV and the
report's percentiles are the CSV's; Poisson arrivals have the rate's count and exponential gaps;
open loop: at twice the server's capacity the arrivals keep their schedule and the latency grows
through the run (a closed-loop client would see one service time); a server that closes its
connections (Connection: close, or after a number of answers) loses no request; error answers
are counted and not ok; broken answers, a refused port and SIGTERM end with a report.

Usage: test_load.py PATH/TO/cpi2-lab-load
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from labtest import int_rows, nearest_rank

BIN = None


class Server:
    """A TCP server on the loopback: answers each request in arrival order, one at a time
    (service_s each), across all connections; mode redis or http; close_after: the connection is
    closed after this many answers (http: the last says Connection: close); broken: answers that
    are not the protocol's; error: redis -ERR for GET, HTTP 500."""

    def __init__(self, mode, service_s=0.0, close_after=0, broken=False, error=False):
        self.mode, self.service_s, self.close_after = mode, service_s, close_after
        self.broken, self.error = broken, error
        self.lock = threading.Lock()
        self.answered = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stop = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def requests(self, buf):
        """Complete requests at the start of buf: ([(command, ...)], bytes used)."""
        out, at = [], 0
        while True:
            if self.mode == "http":
                end = buf.find(b"\r\n\r\n", at)
                if end < 0:
                    return out, at
                out.append((buf[at : buf.find(b" ", at)].decode(),))
                at = end + 4
                continue
            if not buf.startswith(b"*", at):
                return out, at
            line = buf.find(b"\r\n", at)
            if line < 0:
                return out, at
            n, pos, args = int(buf[at + 1 : line]), line + 2, []
            for _ in range(n):
                e = buf.find(b"\r\n", pos)
                if e < 0:
                    return out, at
                ln = int(buf[pos + 1 : e])
                if len(buf) < e + 2 + ln + 2:
                    return out, at
                args.append(buf[e + 2 : e + 2 + ln].decode())
                pos = e + 2 + ln + 2
            out.append(tuple(args))
            at = pos

    def answer(self, req, last):
        if self.broken:
            return b"?this is not an answer\r\n"
        if self.mode == "redis":
            if req[0] == "SET":
                return b"+OK\r\n"
            return b"-ERR no\r\n" if self.error else b"$3\r\nabc\r\n"
        status = b"500 Oops" if self.error else b"200 OK"
        return (
            b"HTTP/1.1 "
            + status
            + b"\r\nContent-Length: 5\r\n"
            + (b"Connection: close\r\n" if last else b"")
            + b"\r\nhello"
        )

    def serve(self, c):
        buf, n = b"", 0
        with c:
            while not self.stop:
                try:
                    chunk = c.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                reqs, used = self.requests(buf)
                buf = buf[used:]
                for req in reqs:
                    n += 1
                    last = self.close_after and n == self.close_after
                    with self.lock:
                        if self.service_s and req[0] != "SET":
                            end = time.monotonic() + self.service_s
                            while time.monotonic() < end:
                                pass
                        self.answered += 1
                    try:
                        c.sendall(self.answer(req, last))
                    except OSError:
                        return
                    if last:
                        return

    def close(self):
        self.stop = True
        self.sock.close()


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def load(server, tmp, name, *args, protocol=None, timeout=60):
    out = os.path.join(tmp, name + ".csv")
    r = run(
        "--targets",
        "127.0.0.1:%d" % server.port,
        "--protocol",
        protocol or server.mode,
        "--keys",
        "10",
        "--out",
        out,
        *args,
        timeout=timeout,
    )
    assert r.returncode == 0, r
    return json.loads(r.stdout), int_rows(out)


def check_help_and_errors():
    r = run("--help")
    assert r.returncode == 0 and "--targets" in r.stdout and "--rt-priority" in r.stdout, r
    for args, why in [
        ([], "targets: none given"),
        (["--targets", "127.0.0.1"], "is not host:port"),
        (["--targets", "127.0.0.1:0"], "the port must be 1 to 65535"),
        (["--targets", "localhost:80"], "is not an IPv4 address"),
        (["--targets", "127.0.0.1:80", "--protocol", "memcached"], "protocol must be redis or http"),
        (["--targets", "127.0.0.1:80", "--rate", "0"], "rate must be above 0"),
        (["--targets", "127.0.0.1:80", "--arrivals", "bursty"], "arrivals must be poisson or uniform"),
        (["--targets", "127.0.0.1:80", "--connections", "0"], "connections must be 1 to 64"),
        (["--targets", "127.0.0.1:80", "--path", "index.html"], "path must start with /"),
        (["--targets", "127.0.0.1:80", "--rt-priority", "100"], "rt_priority must be 0 to 99"),
        (["--targets", "127.0.0.1:80", "-X", "acks=all"], "takes no Kafka properties"),
        (["--targets", "127.0.0.1:80", "--cpu", "4095"], "pin to CPU 4095"),
    ]:
        r = run(*args)
        assert r.returncode == 2 and why in r.stderr, (args, r)
    print("help and configuration errors: ok")


def check_steady(tmp, mode):
    s = Server(mode)
    try:
        rep, rows = load(s, tmp, "steady-" + mode, "--rate", "200", "--arrivals", "uniform", "--duration-s", "1")
    finally:
        s.close()
    assert rep["requests"] == rep["answered"] == len(rows) and 195 <= len(rows) <= 201, (rep, len(rows))
    assert rep["errors"] == rep["unanswered"] == rep["refused"] == 0 and rep["stopped_by"] == "duration", rep
    # written as answered: two connections may answer out of the order they were due in
    rows.sort(key=lambda r: r["sched_us"])
    for k, row in enumerate(rows):
        # due every 5 ms from the first gap
        assert abs(row["sched_us"] - (k + 1) * 5000) <= 1, (k, row)
        assert row["ok"] == 1 and row["latency_us"] >= row["lag_us"] >= 0, row
    lat = [row["latency_us"] for row in rows]
    for q, key in ((50, "p50_us"), (99, "p99_us"), (100, "max_us")):
        assert abs(rep[key] - nearest_rank(lat, q)) <= 1.0, (key, rep[key], nearest_rank(lat, q))
    assert abs(rep["t0_p99_us"] - rep["p99_us"]) <= 1.0, rep
    print("%s, 200/s uniform for 1 s: %d requests on schedule, CSV = report: ok" % (mode, len(rows)))


def check_poisson(tmp):
    s = Server("redis")
    try:
        rep, rows = load(s, tmp, "poisson", "--rate", "1000", "--duration-s", "2", "--seed", "7")
    finally:
        s.close()
    n = len(rows)
    # a Poisson count over 2 s at 1000/s: mean 2000, sigma 45
    assert 1775 <= n <= 2225 and rep["answered"] == n, (n, rep)
    due = sorted(r["sched_us"] for r in rows)
    gaps = [b - a for a, b in zip(due, due[1:])]
    mean = sum(gaps) / len(gaps)
    sd = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5
    # exponential gaps: the standard deviation is the mean (fixed gaps: 0)
    assert 800 <= mean <= 1250 and 0.8 <= sd / mean <= 1.2, (mean, sd)
    print("Poisson at 1000/s for 2 s: %d requests, gap mean %.0f us, cv %.2f: ok" % (n, mean, sd / mean))


def check_open_loop(tmp):
    # the server serves 250/s (4 ms each); asked for 500/s on one connection for 1 s
    s = Server("redis", service_s=0.004)
    try:
        rep, rows = load(
            s, tmp, "overload", "--rate", "500", "--arrivals", "uniform", "--duration-s", "1", "--connections", "1"
        )
    finally:
        s.close()
    assert len(rows) >= 490, (len(rows), rep)
    rows.sort(key=lambda r: r["sched_us"])
    for k, row in enumerate(rows[:490]):
        assert abs(row["sched_us"] - (k + 1) * 2000) <= 1, (k, row)
    answered = [r for r in rows if r["ok"]]
    first, last = answered[0]["latency_us"], answered[-1]["latency_us"]
    # half the requests wait behind the other half: about half a second by the end
    assert first < 50000 and last > 300000, (first, last)
    # the sends were on time: the queue was the server's, not the client's
    assert nearest_rank([r["lag_us"] for r in rows], 50) < 2000, rep
    print("open loop at 2x capacity: latency %d us -> %d us, sends on time: ok" % (first, last))


def check_connection_close(tmp):
    for mode in ("http", "redis"):
        s = Server(mode, close_after=37)
        try:
            rep, rows = load(s, tmp, "close-" + mode, "--rate", "500", "--duration-s", "1")
        finally:
            s.close()
        assert rep["reconnects"] >= 5 and rep["answered"] == rep["requests"] == len(rows), rep
        assert rep["errors"] == rep["unanswered"] == 0 and all(r["ok"] for r in rows), rep
        print("%s closing after every 37 answers: %d reconnects, no request lost: ok" % (mode, rep["reconnects"]))


def check_errors(tmp):
    for mode in ("redis", "http"):
        s = Server(mode, error=True)
        try:
            # redis: the SETs before the run are answered +OK
            rep, rows = load(s, tmp, "error-" + mode, "--rate", "200", "--duration-s", "0.5")
        finally:
            s.close()
        assert rep["answered"] == 0 and rep["errors"] == rep["requests"] == len(rows) > 50, rep
        assert not any(r["ok"] for r in rows), rows[:3]
        print("%s error answers: %d errors, none ok: ok" % (mode, rep["errors"]))


def check_broken_and_refused(tmp):
    s = Server("http", broken=True)
    try:
        t = time.monotonic()
        rep, rows = load(s, tmp, "broken", "--rate", "200", "--duration-s", "0.5", "--drain-s", "0.5")
        took = time.monotonic() - t
    finally:
        s.close()
    assert rep["answered"] == 0 and rep["errors"] + rep["unanswered"] == rep["requests"] == len(rows), rep
    assert took < 5, took
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    r = run("--targets", "127.0.0.1:%d" % port, "--protocol", "http", "--rate", "200", "--duration-s", "0.5")
    # refused connections are tried again every 100 ms; what comes meanwhile is refused at once
    assert r.returncode == 0 and "connection refused" in r.stderr, r
    rep = json.loads(r.stdout)
    assert rep["answered"] == 0 and rep["errors"] == rep["requests"] > 50 and rep["refused"] > 0, rep
    print("broken answers and a refused port: every request counted, the run ends: ok")


def check_sigterm(tmp):
    s = Server("http")
    out = os.path.join(tmp, "term.csv")
    try:
        p = subprocess.Popen(
            [BIN, "--targets", "127.0.0.1:%d" % s.port, "--protocol", "http", "--rate", "100"]
            + ["--out", out, "--report", "text"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)
        p.send_signal(signal.SIGTERM)
        stdout, stderr = p.communicate(timeout=10)
    finally:
        s.close()
    assert p.returncode == 0, (p.returncode, stdout, stderr)
    rep = dict(line.split(None, 1) for line in stdout.strip().splitlines())
    assert rep["stopped_by"].strip() == "signal", rep
    n = int(rep["answered"])
    with open(out) as f:
        assert 50 <= n <= 160 and sum(1 for _ in f) - 1 == int(rep["requests"]), (n, rep)
    print("SIGTERM after 1 s: %d answered, report and CSV complete: ok" % n)


def main():
    global BIN
    BIN = sys.argv[1]
    check_help_and_errors()
    with tempfile.TemporaryDirectory() as tmp:
        check_steady(tmp, "redis")
        check_steady(tmp, "http")
        check_poisson(tmp)
        check_open_loop(tmp)
        check_connection_close(tmp)
        check_errors(tmp)
        check_broken_and_refused(tmp)
        check_sigterm(tmp)


if __name__ == "__main__":
    main()
