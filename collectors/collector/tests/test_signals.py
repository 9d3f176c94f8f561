#!/usr/bin/env python3
"""cpi2-collector's signals beside the perf counts on the real cgroup v2 hierarchy (skipped with
the reason where it is missing): two busy cgroups contending for one CPU show CPU pressure, a
lone idle one shows none; memory pressure is read; resctrl and LLC signals are null here (no
resctrl, no PMU), never 0; --psi=false leaves the pressure null.

Usage: test_signals.py PATH/TO/cpi2-collector
"""

import os
import subprocess
import sys
import time

import cgtest  # this script's folder is on the path


def sleeper(cgroup_dir):
    p = subprocess.Popen(["sleep", "60"])
    with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as f:
        f.write(str(p.pid))
    return p


def main(binary):
    cgtest.skip_unless_real_cgroups()
    if not os.path.exists(os.path.join(cgtest.UNIFIED, "cpu.pressure")):
        print("SKIP: no cpu.pressure in %s (kernel without PSI, or psi=0 on its command line)" % cgtest.UNIFIED)
        sys.exit(cgtest.SKIP)
    top = "cpi2-test-signals-%d" % os.getpid()
    root = cgtest.make_cgroup(top)
    procs = []
    try:
        cpu = cgtest.online_cpus()[-1]
        for name in ("busy-a", "busy-b"):
            p = cgtest.busy(cgtest.make_cgroup("%s/%s" % (top, name)))
            os.sched_setaffinity(p.pid, {cpu})
            procs.append(p)
        procs.append(sleeper(cgtest.make_cgroup("%s/idle" % top)))
        time.sleep(0.3)
        by_task, r = cgtest.collect_once(binary, root, "signals", 2)
        assert sorted(by_task) == ["busy-a", "busy-b", "idle"], r.stdout
        for t in ("busy-a", "busy-b"):
            s = by_task[t]
            # each waits while the other runs on the one CPU: about half the window
            assert s["cpu_pressure"] is not None and s["cpu_pressure"] > 0.2, s
        idle = by_task["idle"]
        assert idle["cpu_pressure"] is not None and idle["cpu_pressure"] < 0.01, idle
        for s in by_task.values():
            assert s["memory_pressure"] is not None and 0 <= s["memory_pressure"] <= 1, s
            assert s["memory_pressure_full"] is not None and 0 <= s["memory_pressure_full"] <= 1, s
            # no resctrl and a software event here: null, not 0
            assert s["llc_occupancy_bytes"] is None and s["memory_bandwidth_bytes_per_s"] is None, s
            assert s["llc_misses"] is None and s["llc_mpki"] is None, s
            # the host's online CPUs, the denominator of its utilisation (figure 14)
            assert s["host_cpus"] == len(cgtest.online_cpus()), s
        print(
            "contention: cpu_pressure busy-a %.3f busy-b %.3f (usage %.2f, %.2f), idle %.4f: ok"
            % (
                by_task["busy-a"]["cpu_pressure"],
                by_task["busy-b"]["cpu_pressure"],
                by_task["busy-a"]["cpu_usage"],
                by_task["busy-b"]["cpu_usage"],
                idle["cpu_pressure"],
            )
        )
        by_task, r = cgtest.collect_once(binary, root, "signals", 0.5, ["--psi=false"])
        got = cgtest.samples(r.stdout)
        assert len(got) == 3 and all(s["cpu_pressure"] is None and s["memory_pressure"] is None for s in got), got
        print("--psi=false: pressure null: ok")
    finally:
        for p in procs:
            cgtest.stop(p)
        time.sleep(0.1)
        cgtest.remove_tree(root)


if __name__ == "__main__":
    main(sys.argv[1])
