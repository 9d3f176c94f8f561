"""What the lab's tests share."""

import csv
import math
import os
import subprocess


def nearest_rank(values, q):
    v = sorted(values)
    return v[max(1, min(len(v), math.ceil(q / 100 * len(v)))) - 1]


def int_rows(path):
    """A CSV file of integers: one {column: int} per line."""
    with open(path) as f:
        return [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f)]


def left_behind(out):
    """The lab's cgroups still there (removed only once empty: their tasks gone), and processes
    whose command line names the run's folder (the victims, the collector, the enforcer)."""
    from cpi2 import lab  # the end-to-end tests only (the program tests run without the package)

    dirs = [d for d in (os.path.join(lab.V2, lab.TOP), os.path.join(lab.V1, lab.TOP)) if os.path.exists(d)]
    procs = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True)
    return dirs, procs.stdout.split()
