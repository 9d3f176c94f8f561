#!/usr/bin/env python3
"""make -C ibench bench: the characterisation table of cpi2-ibench on this machine.

For each kernel at intensities 25, 50 and 100 (0 is the probe alone), the slowdown it causes in
the probe that is sensitive to its resource (time per unit beside the kernel / alone) and the
kernel's own CPU use (CPU-seconds per second). The probe runs pinned on one CPU; memory-side
kernels (l2, llc, membw, memcap) run pinned on another, the core kernels (cpu-int, cpu-fp, l1i,
l1d) on the same CPU (CPU contention) and on another. Prints the machine's conditions first and
writes the markdown to stdout and to the report file.

Usage: bench.py PATH/TO/cpi2-ibench [REPORT.md]
Environment: IBENCH_BENCH_CELL_S (probe seconds per cell, default 2),
             IBENCH_BENCH_WARMUP_S (kernel running before the probe starts, default 0.5),
             IBENCH_BENCH_KERNELS (comma list, default all), IBENCH_BENCH_INTENSITIES (default 25,50,100).
"""

import json
import os
import platform
import signal
import subprocess
import sys
import time

CELL_S = float(os.environ.get("IBENCH_BENCH_CELL_S", "2"))
WARMUP_S = float(os.environ.get("IBENCH_BENCH_WARMUP_S", "0.5"))
KERNELS = os.environ.get("IBENCH_BENCH_KERNELS", "cpu-int,cpu-fp,l1i,l1d,l2,llc,membw,memcap").split(",")
INTENSITIES = [int(x) for x in os.environ.get("IBENCH_BENCH_INTENSITIES", "25,50,100").split(",")]
# the probe each kernel is measured with, and whether it also runs on the probe's own CPU
PROBE_OF = {
    "cpu-int": "cpu",
    "cpu-fp": "cpu",
    "l1i": "cpu",
    "l1d": "cache",
    "l2": "cache",
    "llc": "cache",
    "membw": "mem",
    "memcap": "mem",
}
CORE_KERNELS = {"cpu-int", "cpu-fp", "l1i", "l1d"}

BIN = None


def probe(kind, cpu):
    r = subprocess.run(
        [BIN, "probe", "--kind", kind, "--cpu", str(cpu), "--duration-s", str(CELL_S)],
        capture_output=True,
        text=True,
        timeout=CELL_S + 120,
    )
    if r.returncode != 0:
        sys.exit("bench: probe %s on cpu %d failed: %s" % (kind, cpu, r.stderr.strip()))
    return json.loads(r.stdout)


def cell(kernel, intensity, cpu, probe_kind, probe_cpu):
    """The probe beside the kernel: (probe report, kernel report)."""
    k = subprocess.Popen(
        [BIN, kernel, "--intensity", str(intensity), "--cpu", str(cpu)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while True:  # the "running" line comes once the kernel is set up
            line = k.stderr.readline()
            if not line:
                sys.exit("bench: %s at %d ended before it ran: %s" % (kernel, intensity, k.communicate()))
            if "running" in line:
                break
        time.sleep(WARMUP_S)
        p = probe(probe_kind, probe_cpu)
    finally:
        if k.poll() is None:
            k.send_signal(signal.SIGTERM)
    out, err = k.communicate(timeout=60)
    if k.returncode != 0:
        sys.exit("bench: %s at %d: exit %d: %s" % (kernel, intensity, k.returncode, err.strip()))
    return p, json.loads(out)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    global BIN
    BIN = os.path.abspath(sys.argv[1])
    out_path = sys.argv[2] if len(sys.argv) > 2 else None
    cpus = sorted(os.sched_getaffinity(0))
    a = cpus[0]
    b = cpus[1] if len(cpus) > 1 else None
    load = os.getloadavg()
    t0 = time.monotonic()
    lines = ["# cpi2-ibench characterisation", ""]

    alone = {kind: probe(kind, a) for kind in sorted(set(PROBE_OF[k] for k in KERNELS))}
    some = next(iter(alone.values()))
    lines += [
        "- date: %s; CPU: %s; nproc %d (this process may use %s); load average at start %.2f %.2f %.2f"
        % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), cpu_model(), os.cpu_count(), cpus, *load),
        "- caches (sysfs %s%s): L1d %d KiB, L1i %d KiB, L2 %d KiB, LLC %d KiB (level %d); MemAvailable %d MiB"
        % (
            some["cache_dir"],
            ", defaults for " + some["cache_defaulted"] if some["cache_defaulted"] else "",
            some["cache_l1d_bytes"] >> 10,
            some["cache_l1i_bytes"] >> 10,
            some["cache_l2_bytes"] >> 10,
            some["cache_llc_bytes"] >> 10,
            some["cache_llc_level"],
            some["mem_available_bytes"] >> 20,
        ),
        "- probe on cpu %d, %.1f s per cell, the kernel running %.1f s before it; the kernel on cpu %s (other) "
        "or cpu %d (same)" % (a, CELL_S, WARMUP_S, b if b is not None else "-", a),
        "- probes alone (intensity 0): "
        + "; ".join(
            "%s: %d-op units over %d KiB, mean %.0f ns, p50 %d ns, p99 %d ns"
            % (kind, r["unit_ops"], r["footprint_bytes"] >> 10, r["mean_ns"], r["p50_ns"], r["p99_ns"])
            for kind, r in alone.items()
        ),
        "",
        "Each cell: slowdown of the probe's mean time per unit / of its p50 (beside the kernel / alone), "
        "then (the kernel's CPU-seconds per second).",
        "",
        "| kernel | kernel on | probe | 0 | " + " | ".join(str(i) for i in INTENSITIES) + " |",
        "|---|---|---|---|" + "---|" * len(INTENSITIES),
    ]
    print("\n".join(lines), flush=True)
    if b is None:
        print("(one CPU only: the other-CPU rows are left out)")
    for kernel in KERNELS:
        kind = PROBE_OF[kernel]
        places = ([("other", b)] if b is not None else []) + ([("same", a)] if kernel in CORE_KERNELS else [])
        for where, cpu in places:
            cells = []
            for i in INTENSITIES:
                p, k = cell(kernel, i, cpu, kind, a)
                cells.append(
                    "%.2f / %.2f (%.2f)"
                    % (p["mean_ns"] / alone[kind]["mean_ns"], p["p50_ns"] / alone[kind]["p50_ns"], k["cpu_per_s"])
                )
            row = "| %s | %s CPU | %s | 1.00 | %s |" % (kernel, where, kind, " | ".join(cells))
            lines.append(row)
            print(row, flush=True)
    end = {kind: probe(kind, a) for kind in alone}
    tail = [
        "",
        "- probes alone again at the end (drift): "
        + "; ".join(
            "%s mean x %.2f, p50 x %.2f"
            % (kind, r["mean_ns"] / alone[kind]["mean_ns"], r["p50_ns"] / alone[kind]["p50_ns"])
            for kind, r in end.items()
        ),
        "- load average at the end %.2f %.2f %.2f; the bench took %.0f s" % (*os.getloadavg(), time.monotonic() - t0),
    ]
    lines += tail
    print("\n".join(tail))
    if out_path:
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        with open(out_path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print("bench: table written to %s" % out_path)


if __name__ == "__main__":
    main()
