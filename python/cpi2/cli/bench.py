#!/usr/bin/env python3
"""cpi2ctl bench: ControlCommand encoding rate, and the latency of a command acknowledged by the
local Kafka (acks=all) as an operator sees it (one producer per command, like one cpi2ctl run)."""

import os
import platform
import statistics
import time

from cpi2.cli import control
from cpi2.testing import fixtures


def main():
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    rec = control.command("CAP", host="h1", task="cpi2.slice/batch-7", cap_cpu=0.1, duration_s=300, operator="bench")
    n = 100_000
    t0 = time.perf_counter()
    for _ in range(n):
        control.encode(rec)
    dt = time.perf_counter() - t0
    print(f"encode ControlCommand ({len(control.encode(rec))} bytes): {n / dt:,.0f} records/s over {n} records")
    kafka = fixtures.kafka()
    lat = []
    for i in range(20):
        r = control.command("PROTECTION_ON", host=f"cpi2ctl-bench-{i}", operator="bench", reason="bench")
        t0 = time.perf_counter()
        control.publish(r, kafka)
        lat.append((time.perf_counter() - t0) * 1000)
    print(
        f"publish to {control.TOPIC} at {kafka}, acks=all, new producer each: "
        f"median {statistics.median(lat):.1f} ms, max {max(lat):.1f} ms over {len(lat)} commands"
    )


if __name__ == "__main__":
    main()
