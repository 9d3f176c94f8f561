"""Helpers of the collector's tests on the real cgroup v2 hierarchy (stdlib only)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

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


def collect_once(binary, root, job, window_s, extra=()):
    """One window of the collector over root (task-clock, every cgroup a batch task of job, named
    by its path), printed to stdout: (samples by task, the completed process)."""
    with tempfile.NamedTemporaryFile("w", suffix=".rules") as rules:
        rules.write("* job=%s task_id=$1 class=batch\n" % job)
        rules.flush()
        args = [binary, "--events", "task-clock", "--roots", root, "--rules-file", rules.name]
        args += ["--default-rules=false", "--window-s", str(window_s), *extra, "--once"]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    return {s["task"]: s for s in samples(r.stdout)}, r


def has_perf():
    return shutil.which("perf") is not None


def online_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        out = []
        for part in f.read().strip().split(","):
            a, _, b = part.partition("-")
            out.extend(range(int(a), int(b or a) + 1))
        return out
