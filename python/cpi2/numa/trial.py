"""A placement trial (seed 001, step 4): a container's work run in two important placements for
a few seconds each, pinned to each placement's hardware threads (its memory is first touched
there), and its own measured throughput per placement. Needs more than one NUMA node: on one
node every placement uses the same node and memory, so there is nothing to compare."""

import os
import subprocess
import sys
import time

from cpi2.numa import placements

# each of vcpus threads walks its own buffer of this many bytes with a page-sized stride and
# counts its passes: throughput is the sum of passes per second
WORKLOAD = r"""
import sys, threading, time
n, secs, size = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
counts = [0] * n
def walk(k):
    buf = bytearray(size)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for i in range(0, size, 4096):
            buf[i] = (buf[i] + 1) & 255
        counts[k] += 1
ts = [threading.Thread(target=walk, args=(k,)) for k in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
print(sum(counts) / secs)
"""


class TrialSkipped(Exception):
    """The trial cannot run here; the message says why."""


def pick(topo, vcpus):
    """Two important placements to compare: the one on the fewest nodes and the one on the most
    (the nearest and the widest), the first ones in important_placements' order."""
    ps = placements.important_placements(topo, vcpus)
    a = ps[0]
    b = next((p for p in reversed(ps) if p.nodes != a.nodes), None)
    if b is None:
        raise TrialSkipped("every important placement of %d vCPUs uses nodes %s" % (vcpus, a.nodes))
    return a, b


def trial(topo, vcpus, seconds=3.0, buffer_bytes=64 << 20):
    """[(placement, its hardware threads, passes per second)] for the two placements of pick."""
    if len(topo.nodes) < 2:
        raise TrialSkipped(
            "%s has one NUMA node (%s): every placement runs on the same node and memory, so two "
            "placements cannot be compared" % (topo.name, topo.nodes[0])
        )
    out = []
    for p in pick(topo, vcpus):
        cpus = placements.cpus_of(topo, p, vcpus)
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-c", WORKLOAD, str(vcpus), str(seconds), str(buffer_bytes)],
            capture_output=True,
            text=True,
            timeout=seconds * 10 + 60,
            preexec_fn=lambda cpus=cpus: os.sched_setaffinity(0, cpus),
        )
        if r.returncode != 0:
            raise RuntimeError("trial workload on %s failed: %s" % (cpus, r.stderr.strip()[-300:]))
        out.append((p, cpus, float(r.stdout.strip()), time.monotonic() - t0))
    return out
