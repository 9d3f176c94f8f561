#!/usr/bin/env python3
"""The collector's perf path on the real cgroup v2 hierarchy: a busy process in a fresh cgroup,
counted with task-clock by cpi2-collector --once, agrees within 2% with
`perf stat -e task-clock -G <cgroup> -a` over the same window (rates per second of each one's
own window, both started together), and with the cgroup's own CPU usage (cpu.stat).

cpu.stat counts the task's runtime on the scheduler's task clock, which leaves out time stolen by
the hypervisor and time spent in interrupts; task-clock is wall time on the CPU and keeps both. On
a busy virtual machine the two differ by that share, so cpu.stat may fall short of task-clock by
2% plus the largest share of steal, irq and softirq time any CPU had in the window (/proc/stat),
and may exceed it by no more than 2%.

Usage: test_perf_vs_perf_stat.py PATH/TO/cpi2-collector
"""

import os
import re
import subprocess
import sys
import tempfile

import cgtest  # this script's folder is on the path

WINDOW_S = 5


def cpu_times():
    """Per-CPU /proc/stat jiffies: {cpu: (taken from tasks: irq + softirq + steal, total)}."""
    times = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                v = [int(x) for x in fields[:8]]  # user nice system idle iowait irq softirq steal
                times[name] = (v[5] + v[6] + v[7], sum(v))
    return times


def largest_taken_share(before, after):
    """The largest share of a CPU's time between two cpu_times() that no task was charged for."""
    shares = [
        (after[c][0] - before[c][0]) / (after[c][1] - before[c][1])
        for c in before
        if c in after and after[c][1] > before[c][1]
    ]
    return max(shares, default=0.0)


def main():
    collector = sys.argv[1]
    cgtest.skip_unless_real_cgroups()
    if not cgtest.has_perf():
        print("SKIP: no perf binary (Debian package linux-perf)")
        sys.exit(cgtest.SKIP)
    name = "cpi2-test-perf-%d" % os.getpid()
    root = cgtest.make_cgroup(name)
    cg = cgtest.make_cgroup(name + "/busy")
    spinner = cgtest.busy(cg)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".rules") as rules:
            rules.write("busy job=perf-test task_id=0 class=batch\n")
            rules.flush()
            env = dict(os.environ, LC_ALL="C")
            perf = subprocess.Popen(
                ["perf", "stat", "-e", "task-clock", "-G", name + "/busy", "-a", "--", "sleep", str(WINDOW_S)],
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            times0 = cpu_times()
            coll = subprocess.Popen(
                [
                    collector,
                    "--once",
                    "--events",
                    "task-clock",
                    "--roots",
                    root,
                    "--rules-file",
                    rules.name,
                    "--window-s",
                    str(WINDOW_S),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            out, err = coll.communicate(timeout=60)
            _, perf_err = perf.communicate(timeout=60)
            taken = largest_taken_share(times0, cpu_times())
    finally:
        cgtest.stop(spinner)
        cgtest.remove_tree(root)
    print(err, end="")
    print(perf_err, end="")
    assert coll.returncode == 0, "collector exit %d" % coll.returncode
    samples = cgtest.samples(out)
    assert len(samples) == 1, out
    s = samples[0]
    assert s["task"] == "busy" and s["job"] == "perf-test" and s["counter_source"] == "SOFTWARE", s
    assert s["cpi"] is None and s["instructions"] == 0, s
    msec = float(re.search(r"([\d.]+)\s+msec\s+task-clock", perf_err).group(1))
    elapsed = float(re.search(r"([\d.]+)\s+seconds time elapsed", perf_err).group(1))
    perf_rate = msec / 1e3 / elapsed
    coll_rate = s["cycles"] / 1e3 / s["window_us"]
    print(
        "task-clock CPU-sec/sec: collector %.4f (window %.3f s), perf stat %.4f (%.3f s), cpu.stat %.4f; "
        "largest share of a CPU taken by steal, irq and softirq %.4f"
        % (coll_rate, s["window_us"] / 1e6, perf_rate, elapsed, s["cpu_usage"], taken)
    )
    assert perf_rate > 0.2, "the spinning process got almost no CPU: %.3f" % perf_rate
    assert abs(coll_rate - perf_rate) <= 0.02 * perf_rate, "collector and perf stat differ by more than 2%"
    assert s["cpu_usage"] <= coll_rate * 1.02, "cgroup CPU usage exceeds the perf count by more than 2%"
    assert s["cpu_usage"] >= coll_rate * (0.98 - taken), (
        "cgroup CPU usage falls short of the perf count by more than 2%% plus steal, irq and softirq (%.4f)" % taken
    )
    assert 0.98 <= s["time_running_ratio"] <= 1.0, s
    print("test_perf_vs_perf_stat: ok")


if __name__ == "__main__":
    main()
