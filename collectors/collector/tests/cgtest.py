"""Helpers of the collector's tests on the real cgroup v2 hierarchy (stdlib only)."""

import json
import os
import shutil
import subprocess
import sys

UNIFIED = "/sys/fs/cgroup/unified"
SKIP = 77


def skip_unless_real_cgroups():
    """Exit with ctest's skip code and the exact reason when this machine cannot run the test."""
    if os.geteuid() != 0:
        print("SKIP: not root (perf_event_open on cgroups and creating cgroups need root)")
        sys.exit(SKIP)
    if not os.path.exists(os.path.join(UNIFIED, "cgroup.controllers")):
        print("SKIP: no cgroup v2 hierarchy at %s" % UNIFIED)
        sys.exit(SKIP)


def make_cgroup(rel):
    path = os.path.join(UNIFIED, rel)
    os.makedirs(path, exist_ok=True)
    return path


def remove_tree(path):
    """rmdir a cgroup tree bottom-up (cgroupfs directories are removed with rmdir only)."""
    for top, dirs, _ in os.walk(path, topdown=False):
        for d in dirs:
            try:
                os.rmdir(os.path.join(top, d))
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


def busy(cgroup_dir):
    """A process spinning on one CPU inside cgroup_dir."""
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as f:
        f.write(str(p.pid))
    return p


def stop(p):
    p.kill()
    p.wait()


def samples(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def has_perf():
    return shutil.which("perf") is not None


def online_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        out = []
        for part in f.read().strip().split(","):
            a, _, b = part.partition("-")
            out.extend(range(int(a), int(b or a) + 1))
        return out
