#!/usr/bin/env python3
"""cpi2-collector's NUMA score on this machine's real files (skipped with the reason where they
are missing): a busy task whose memory the v1 memory hierarchy accounts has a score, 1.0 on a
machine of one node (every access is local), from its per-CPU perf counts (a cgroup v2 root) and
from cpuacct.usage_percpu (a cgroup v1 root); a task with no memory.numa_stat has none (null,
never a made-up 0 or 1).

Usage: test_numa.py PATH/TO/cpi2-collector
"""

import os
import subprocess
import sys
import time

import cgtest  # this script's folder is on the path

V1 = "/sys/fs/cgroup"
NODES = "/sys/devices/system/node"


def join_all(pid, dirs):
    for d in dirs:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write(str(pid))


def run(binary, root):
    by_task, r = cgtest.collect_once(binary, root, "numa", 1)
    return by_task, r.stderr


def main(binary):
    cgtest.skip_unless_real_cgroups()
    for need in ("memory/memory.numa_stat", "cpuacct/cpuacct.usage_percpu", "cpu/cgroup.procs"):
        if not os.path.exists(os.path.join(V1, need)):
            print("SKIP: no %s/%s (the v1 memory, cpuacct and cpu hierarchies this test uses)" % (V1, need))
            sys.exit(cgtest.SKIP)
    with open(os.path.join(NODES, "online")) as f:
        online = f.read().strip()
    one_node = online == "0"
    top = "cpi2-test-numa-%d" % os.getpid()
    made = [os.path.join(cgtest.UNIFIED, top)] + [os.path.join(V1, h, top) for h in ("memory", "cpu", "cpuacct")]
    procs = []
    try:
        # cgroup v2 root: CPU by node from the perf counts, memory from the v1 twin
        a = cgtest.busy(cgtest.make_cgroup("%s/local" % top))
        join_all(a.pid, [os.path.join(V1, "memory", top, "local")])
        b = cgtest.busy(cgtest.make_cgroup("%s/nomem" % top))
        procs += [a, b]
        time.sleep(0.3)
        by_task, err = run(binary, os.path.join(cgtest.UNIFIED, top))
        assert sorted(by_task) == ["local", "nomem"], by_task
        assert by_task["nomem"]["numa_score"] is None, by_task["nomem"]
        assert "memory.numa_stat of nomem" in err, err
        s = by_task["local"]["numa_score"]
        assert s is not None and 0 < s <= 1, by_task["local"]
        if one_node:
            assert s == 1.0, by_task["local"]
        # cgroup v1 root: CPU by node from cpuacct.usage_percpu
        c = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        procs.append(c)
        join_all(c.pid, [os.path.join(V1, h, top, "v1task") for h in ("cpu", "cpuacct", "memory")])
        join_all(c.pid, [cgtest.make_cgroup("%s/v1task" % top)])  # perf counts it in v2 (hybrid)
        time.sleep(0.3)
        by_task, err = run(binary, os.path.join(V1, "cpu", top))
        assert sorted(by_task) == ["v1task"], (by_task, err)
        s = by_task["v1task"]["numa_score"]
        assert s is not None and 0 < s <= 1, by_task["v1task"]
        if one_node:
            assert s == 1.0, by_task["v1task"]
            print("test_numa: ok (one node: 1.0 from the perf counts and from cpuacct.usage_percpu)")
        else:
            print("test_numa: ok; %s nodes: the scores are in (0, 1], 1.0 is for one node only" % online)
    finally:
        for p in procs:
            cgtest.stop(p)
        time.sleep(0.2)
        for d in made:
            cgtest.remove_tree(d)


if __name__ == "__main__":
    main(sys.argv[1])
