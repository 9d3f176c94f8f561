#!/usr/bin/env python3
"""Metrics endpoints for the collector's scrape bench (bench.sh): COUNT HTTP servers on
127.0.0.1, each answering every GET with a real exporter's answer (a fixture of
libcpi2/tests/data/promtext, prometheus-redis-exporter 1.45's by default) whose work counter and
GET latency summary move at each answer, as a busy redis' would. Writes the ports, one a line, to
PORTS_FILE once all listen; serves until killed. Standard library only.

Usage: bench_endpoints.py COUNT FIXTURE PORTS_FILE
"""

import http.server
import os
import sys
import threading

WORK = "redis_commands_processed_total "
SUM = 'redis_latency_percentiles_usec_sum{cmd="get"} '
COUNT = 'redis_latency_percentiles_usec_count{cmd="get"} '


def template(text):
    """The fixture with its three moving values as @WORK@, @SUM@ and @COUNT@."""
    out = []
    for line in text.splitlines():
        for prefix, mark in ((WORK, "@WORK@"), (SUM, "@SUM@"), (COUNT, "@COUNT@")):
            if line.startswith(prefix):
                line = prefix + mark
        out.append(line)
    t = "\n".join(out) + "\n"
    for mark in ("@WORK@", "@SUM@", "@COUNT@"):
        if mark not in t:
            raise SystemExit("bench_endpoints: the fixture has no line for %s" % mark)
    return t


def server(tmpl):
    state = {"n": 0}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            with lock:
                state["n"] += 1
                n = state["n"]
            body = tmpl.replace("@WORK@", str(40000 + 1000 * n))
            body = body.replace("@SUM@", str(2000 + 150 * n)).replace("@COUNT@", str(20000 + 1000 * n)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def main(count, fixture, ports_file):
    with open(fixture, encoding="utf-8") as f:
        tmpl = template(f.read())
    servers = [server(tmpl) for _ in range(int(count))]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    with open(ports_file + ".tmp", "w") as f:
        f.write("".join("%d\n" % s.server_address[1] for s in servers))
    os.rename(ports_file + ".tmp", ports_file)
    threading.Event().wait()


if __name__ == "__main__":
    main(*sys.argv[1:4])
