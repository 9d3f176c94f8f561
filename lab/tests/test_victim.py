#!/usr/bin/env python3
"""cpi2-lab-victim as a program: --help and configuration errors (exit 2); at a rate it keeps
up with, one request per interval from the start, every one in the CSV, latency at least the
service time, the report's percentiles those of the CSV; at a rate it cannot keep up with, the
arrivals keep their schedule (open loop) and the queue shows as latency growing through the run;
SIGTERM ends the run with the report and a complete CSV.

Usage: test_victim.py PATH/TO/cpi2-lab-victim
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from labtest import int_rows as rows
from labtest import nearest_rank

BIN = None


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def check_help_and_errors():
    r = run("--help")
    assert r.returncode == 0 and "--rate" in r.stdout and "--cache-loads" in r.stdout, r
    for args, why in [
        (["--rate", "0"], "rate must be above 0"),
        (["--rate", "fast"], "rate"),
        (["--report", "xml"], "report must be json or text"),
        (["--cpu-ops", "0", "--cache-loads", "0"], "not both 0"),
        (["--duration-s", "-1"], "duration_s"),
        (["-X", "acks=all"], "takes no Kafka properties"),
        (["--no-such-option", "1"], "no-such-option"),
        (["--cpu", "4095", "--duration-s", "0.1"], "pin to CPU 4095"),
    ]:
        r = run(*args)
        assert r.returncode == 2 and why in r.stderr, (args, r)
    print("help and configuration errors: ok")


def check_steady(tmp):
    out = os.path.join(tmp, "steady.csv")
    r = run("--rate", "50", "--duration-s", "2", "--cpu-ops", "2000", "--cache-loads", "200", "--out", out)
    assert r.returncode == 0, r
    rep = json.loads(r.stdout)
    got = rows(out)
    # arrivals every 20 ms from 0 while before 2 s: exactly 100
    assert rep["requests"] == 100 == len(got), (rep, len(got))
    assert rep["stopped_by"] == "duration" and rep["not_kept"] == 0, rep
    for k, row in enumerate(got):
        assert abs(row["arrival_us"] - k * 20000) <= 1, (k, row)
        assert row["latency_us"] >= row["service_us"] >= 0, row
    lat = [row["latency_us"] for row in got]
    for q, key in ((50, "p50_us"), (90, "p90_us"), (99, "p99_us"), (100, "max_us")):
        # the CSV holds whole microseconds of the same nanoseconds the report rounds
        assert abs(rep[key] - nearest_rank(lat, q)) <= 1.0, (key, rep[key], nearest_rank(lat, q))
    print("steady rate: 100 requests, p50 %.0f us, p99 %.0f us, CSV = report: ok" % (rep["p50_us"], rep["p99_us"]))
    return rep


def check_overload(tmp):
    # find the service time of a heavier request, then ask for twice the rate it can serve
    r = run("--rate", "20", "--duration-s", "0.5", "--cpu-ops", "3000000", "--cache-loads", "0")
    assert r.returncode == 0, r
    service_us = json.loads(r.stdout)["service_p50_us"]
    rate = round(2e6 / service_us, 3)  # as the option passes it
    out = os.path.join(tmp, "over.csv")
    r = run("--rate", "%.3f" % rate, "--duration-s", "2", "--cpu-ops", "3000000", "--cache-loads", "0", "--out", out)
    assert r.returncode == 0, r
    rep = json.loads(r.stdout)
    got = rows(out)
    assert len(got) == rep["requests"] and len(got) >= 5, (rep, len(got))
    interval_us = 1e6 / rate
    for k, row in enumerate(got):
        assert abs(row["arrival_us"] - k * interval_us) <= 1.5, (k, row, interval_us)
    # served at about half the arrival rate: the queue grows, and with it the latency
    first, last = got[0]["latency_us"], got[-1]["latency_us"]
    assert last > first + 5 * service_us and last > 0.3e6, (first, last, service_us)
    assert rep["late_requests"] >= len(got) // 2 and rep["p99_us"] > 5 * rep["service_p50_us"], rep
    print(
        "overload at %.0f/s (service %.0f us): latency %d us -> %d us, late %d of %d: ok"
        % (rate, service_us, first, last, rep["late_requests"], len(got))
    )


def check_sigterm(tmp):
    out = os.path.join(tmp, "term.csv")
    p = subprocess.Popen(
        [BIN, "--rate", "100", "--cpu-ops", "2000", "--cache-loads", "200", "--out", out, "--report", "text"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    stdout, stderr = p.communicate(timeout=10)
    assert p.returncode == 0, (p.returncode, stdout, stderr)
    rep = dict(line.split(None, 1) for line in stdout.strip().splitlines())
    assert rep["stopped_by"].strip() == "signal", rep
    n = int(rep["requests"])
    assert 50 <= n <= 150 and len(rows(out)) == n, (n, rep)
    print("SIGTERM after 1 s: %d requests, report and CSV complete: ok" % n)


def main():
    global BIN
    BIN = sys.argv[1]
    check_help_and_errors()
    with tempfile.TemporaryDirectory() as tmp:
        check_steady(tmp)
        check_overload(tmp)
        check_sigterm(tmp)


if __name__ == "__main__":
    main()
