"""The lab on this machine, first step: does a real antagonist hurt real victims, and does a cap
on it give their latency back? (`make -C lab quiet-vs-antagonist`)

Five replicas of cpi2-lab-victim, each in its own cgroup (v1 cpu and v2, the same path in both),
and a cpi2-ibench CPU antagonist in its own, all pinned to one CPU. Three phases of the same
length, the victims started afresh in each: quiet (victims alone), uncapped (the antagonist at
full intensity beside them) and capped (the antagonist's v1 cpu.cfs_quota_us written directly,
as the enforcer would: 0.01 CPU-sec/sec, the paper's cap for best-effort tasks). The real
collector counts every cgroup of the experiment (task-clock, pressure) in 1 s windows
throughout. It prints, per phase, the victims' pooled p50/p99 latency (from their per-request
CSVs) and the victims' and the antagonist's mean CPU pressure and CPU usage from the collector's
samples. Needs root, cgroup v2 (PSI) and the v1 cpu controller; the C programs from make build.

Usage: python -m cpi2.lab quiet-vs-antagonist [--phase-s S] [--rate R] [--cpu C] [--build DIR]
       python -m cpi2.lab run [--schedule Q,ON,OFF...] [--rate R] [--threads N] (the lab end to end:
       cpi2.lab_loop, make lab)
       python -m cpi2.lab calibrate [--services redis,nginx] [--rows NAME/WORKERS@same|other,...] (real
       services beside stress-ng antagonists, uncapped and capped: cpi2.lab_calibrate)
"""

import argparse
import contextlib
import csv
import fcntl
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

from cpi2.repo import ROOT

V2 = "/sys/fs/cgroup/unified"
V1 = "/sys/fs/cgroup/cpu"
TOP = "cpi2-lab"
REPLICAS = 5
CAP = 0.01  # CPU-sec/sec: the paper's hard cap for best-effort tasks
PERIOD_US = 100000


# One lab at a time on a machine: every checkout's lab works under the same cgroups (TOP) on the
# same CPUs and starts by removing what it finds there, so a second lab (another checkout's make
# test, a calibration) would kill the first's victims and antagonists, and both would measure each
# other. Each lab holds this lock from before it touches TOP until it has removed what it made.
LOCK = "/run/lock/cpi2-lab.lock"


@contextlib.contextmanager
def one_at_a_time(lock=LOCK):
    """Hold the machine's lab lock, waiting (and saying so) while another lab holds it."""
    os.makedirs(os.path.dirname(lock), exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            print(
                "lab: another lab runs on this machine (pid %s, %s): waiting for it to end" % (holder, lock),
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def nearest_rank(values, q):
    v = sorted(values)
    return v[max(1, min(len(v), math.ceil(q / 100 * len(v)))) - 1] if v else float("nan")


class Cgroup:
    """One task's cgroup, the same path in v2 and in the v1 cpu hierarchy (v2 alone with
    v1=False: a task counted by the lab, scheduled where it started, e.g. under SCHED_FIFO, which
    a v1 cpu child cgroup without a real-time budget refuses)."""

    def __init__(self, name, v1=True):
        self.name = name
        self.dirs = [os.path.join(V2, TOP, name)] + ([os.path.join(V1, TOP, name)] if v1 else [])
        for d in self.dirs:
            os.makedirs(d, exist_ok=True)

    def add(self, pid):
        for d in self.dirs:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(pid))

    def set_v1(self, key, value):
        """Write a v1 cpu controller file of this cgroup; False where the kernel has no such file."""
        path = os.path.join(self.dirs[-1], key)
        if len(self.dirs) < 2 or not os.path.exists(path):
            return False
        with open(path, "w") as f:
            f.write(str(value))
        return True

    def cap(self, cpus, period_us=PERIOD_US, lower_priority=False):
        """Write the v1 quota directly: cpus CPU-sec/sec in periods of period_us; with
        lower_priority also what the enforcer writes with a cap (its cap_weight: cpu.shares 2,
        then cpu.idle 1 where the kernel has it). Returns the quota."""
        quota = max(1000, int(cpus * period_us))
        self.set_v1("cpu.cfs_period_us", period_us)
        self.set_v1("cpu.cfs_quota_us", quota)
        if lower_priority:
            self.set_v1("cpu.shares", 2)
            self.set_v1("cpu.idle", 1)
        return quota

    def uncap(self, shares):
        """Undo cap(): cpu.idle 0 first (clearing it resets the weight), then shares, no quota."""
        self.set_v1("cpu.idle", 0)
        self.set_v1("cpu.shares", shares)
        self.set_v1("cpu.cfs_quota_us", -1)

    def freeze(self, frozen):
        """Freeze or thaw every task of the cgroup (v2 cgroup.freeze): a frozen antagonist is
        there, its memory too, and does nothing."""
        with open(os.path.join(self.dirs[0], "cgroup.freeze"), "w") as f:
            f.write("1" if frozen else "0")


def _procs(dirs):
    pids = set()
    for d in dirs:
        try:
            with open(os.path.join(d, "cgroup.procs")) as f:
                pids.update(int(p) for p in f.read().split())
        except OSError:
            pass
    return pids


def _populated(d):
    """Whether the v2 cgroup d still holds a task, a dying one included (cgroup.events)."""
    try:
        with open(os.path.join(d, "cgroup.events")) as f:
            return "populated 1" in f.read()
    except OSError:
        return False


def kill_cgroup(cg, timeout=30, lift=True):
    """Lift any cap (a capped task dies slowly: its exit runs in its quota; lift=False leaves it,
    as another writer's), SIGKILL whatever is in cg (v2 and v1) and wait until the v2 cgroup holds
    nothing, dying tasks included. False when something is still there after timeout seconds."""
    if lift:
        cg.set_v1("cpu.idle", 0)
        cg.set_v1("cpu.cfs_quota_us", -1)
    deadline = time.time() + timeout
    while time.time() < deadline:
        pids = _procs(cg.dirs)
        if not pids and not _populated(cg.dirs[0]):
            return True
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return False


def remove_all():
    """Kill what is left in the experiment's cgroups and remove them (rmdir only, leaves first)."""
    names = set()
    for base in (V2, V1):
        top = os.path.join(base, TOP)
        if os.path.isdir(top):
            names.update(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d)))
    for name in sorted(names):
        kill_cgroup(Cgroup(name))
    for base in (V2, V1):
        top = os.path.join(base, TOP)
        if not os.path.isdir(top):
            continue
        for d in sorted(names):
            if os.path.isdir(os.path.join(top, d)):
                try:
                    os.rmdir(os.path.join(top, d))
                except OSError as e:
                    print("lab: rmdir %s: %s" % (os.path.join(top, d), e), file=sys.stderr)
        try:
            os.rmdir(top)
        except OSError as e:
            print("lab: rmdir %s: %s" % (top, e), file=sys.stderr)


def start_in(cgroup, argv, **kw):
    """Start argv with its process in cgroup before it runs anything (a shell that moves itself,
    then execs)."""
    script = 'for d in "$@"; do echo $$ > "$d/cgroup.procs" || exit 97; done; exec %s' % " ".join(
        "'%s'" % a for a in argv
    )
    return subprocess.Popen(["sh", "-c", script, "sh", *cgroup.dirs], **kw)


def run_victims(bins, victims, tmp, phase, args):
    procs, outs = [], []
    for i, cg in enumerate(victims):
        out = os.path.join(tmp, "%s-%d.csv" % (phase, i))
        argv = [bins["victim"], "--rate", str(args.rate), "--duration-s", str(args.phase_s), "--cpu", str(args.cpu)]
        procs.append(start_in(cg, argv + ["--out", out], stdout=subprocess.PIPE, text=True))
        outs.append(out)
    reports = []
    for p in procs:
        stdout, _ = p.communicate(timeout=args.phase_s + 60)
        if p.returncode != 0:
            raise SystemExit("lab: a victim failed (exit %d)" % p.returncode)
        reports.append(json.loads(stdout))
    latencies = []
    for out in outs:
        with open(out) as f:
            latencies += [int(r["latency_us"]) for r in csv.DictReader(f)]
    return reports, latencies


def signals(samples, start_us, end_us, tasks):
    """Mean cpu_pressure and cpu_usage of tasks over the collector's windows within the phase."""
    vals = {"cpu_pressure": [], "cpu_usage": []}
    for s in samples:
        if s["task"] in tasks and start_us <= s["window_start_us"] and s["window_start_us"] + s["window_us"] <= end_us:
            for k in vals:
                if s[k] is not None:
                    vals[k].append(s[k])
    return {k: (sum(v) / len(v) if v else float("nan")) for k, v in vals.items()}, len(vals["cpu_usage"])


def quiet_vs_antagonist(args):
    if (
        os.geteuid() != 0
        or not os.path.exists(os.path.join(V2, "cpu.pressure"))
        or not os.path.exists(os.path.join(V1, "cpu.cfs_quota_us"))
    ):
        raise SystemExit("lab: needs root, cgroup v2 with PSI at %s and the v1 cpu controller at %s" % (V2, V1))
    build = args.build or str(ROOT / "build" / "c")
    bins = {
        "victim": os.path.join(build, "lab", "cpi2-lab-victim"),
        "ibench": os.path.join(build, "ibench", "cpi2-ibench"),
        "collector": os.path.join(build, "collectors", "collector", "cpi2-collector"),
    }
    for b in bins.values():
        if not os.access(b, os.X_OK):
            raise SystemExit("lab: %s missing (make build)" % b)
    with one_at_a_time():
        measure_quiet_vs_antagonist(args, bins)


def measure_quiet_vs_antagonist(args, bins):
    remove_all()
    tmp = tempfile.mkdtemp(prefix="cpi2-lab-")
    victims = [Cgroup("victim-%d" % i) for i in range(REPLICAS)]
    antagonist = Cgroup("antagonist")
    rules = os.path.join(tmp, "rules")
    with open(rules, "w") as f:
        f.write("victim-* job=lab-victim task_id=$1 class=latency_sensitive\n")
        f.write("antagonist job=lab-antagonist task_id=0 class=best_effort\n")
    collector_out = open(os.path.join(tmp, "samples.jsonl"), "w")
    collector = subprocess.Popen(
        [bins["collector"], "--stdout", "--events", "task-clock", "--roots", os.path.join(V2, TOP)]
        + ["--rules-file", rules, "--default-rules=false", "--window-s", "1", "--period-s", "1"],
        stdout=collector_out,
        stderr=subprocess.DEVNULL,
    )
    ant = None
    phases = []
    try:
        print(
            "lab: %d victims at %g requests/s each, a cpu-int antagonist (intensity 100, %d threads), all on CPU %d; "
            "%g s phases; collector windows 1 s every 1 s" % (REPLICAS, args.rate, args.threads, args.cpu, args.phase_s)
        )
        for phase in ("quiet", "uncapped", "capped"):
            if phase == "uncapped":
                ant = start_in(
                    antagonist,
                    ["taskset", "-c", str(args.cpu), bins["ibench"], "cpu-int", "--intensity", "100"]
                    + ["--threads", str(args.threads), "--report", "text"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                time.sleep(1.0)
            if phase == "capped":
                quota = antagonist.cap(CAP)
                print("lab: antagonist capped: cpu.cfs_quota_us %d / cpu.cfs_period_us %d" % (quota, PERIOD_US))
                time.sleep(1.0)
            start_us = int(time.time() * 1e6)
            reports, lat = run_victims(bins, victims, tmp, phase, args)
            end_us = int(time.time() * 1e6)
            phases.append((phase, start_us, end_us, reports, lat))
        time.sleep(1.5)  # the collector's last window of the capped phase
    finally:
        if ant:
            ant.terminate()
            ant.wait(timeout=10)
        collector.terminate()
        collector.wait(timeout=20)
        collector_out.close()
        with open(os.path.join(tmp, "samples.jsonl")) as f:
            samples = [json.loads(line) for line in f if line.startswith("{")]
        remove_all()

    victim_tasks = {"victim-%d" % i for i in range(REPLICAS)}
    print()
    print(
        "%-9s %9s %9s %10s %8s | %-26s | %-26s"
        % (
            "phase",
            "requests",
            "p50 us",
            "p99 us",
            "p99/quiet",
            "victims: pressure / usage",
            "antagonist: pressure / usage",
        )
    )
    quiet_p99 = None
    for phase, start_us, end_us, _reports, lat in phases:
        p99 = nearest_rank(lat, 99)
        quiet_p99 = quiet_p99 or p99
        vs, vn = signals(samples, start_us, end_us, victim_tasks)
        an, _ = signals(samples, start_us, end_us, {"antagonist"})
        print(
            "%-9s %9d %9.0f %10.0f %8.2f | %12.3f / %-11.3f | %12.3f / %-11.3f"
            % (
                phase,
                len(lat),
                nearest_rank(lat, 50),
                p99,
                p99 / quiet_p99,
                vs["cpu_pressure"],
                vs["cpu_usage"],
                an["cpu_pressure"],
                an["cpu_usage"],
            )
        )
        if vn == 0:
            print("  (no collector window fell inside the %s phase)" % phase)
    print(
        "\nper-replica p99 (us): "
        + "; ".join("%s %s" % (ph, " ".join("%.0f" % r["p99_us"] for r in reports)) for ph, _, _, reports, _ in phases)
    )
    print("lab: %d collector samples%s" % (len(samples), "; files in %s" % tmp if args.keep else ""))
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cpi2.lab", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quiet-vs-antagonist", help="victims' p99 quiet, beside an uncapped antagonist, capped")
    q.add_argument("--phase-s", type=float, default=15.0, help="length of each phase (default 15)")
    q.add_argument("--rate", type=float, default=100.0, help="requests/s of each victim (default 100)")
    q.add_argument("--cpu", type=int, default=os.cpu_count() - 1, help="the one CPU everything runs on")
    q.add_argument("--threads", type=int, default=2, help="antagonist threads (default 2)")
    q.add_argument("--build", help="the C release build (default build/c)")
    q.add_argument("--keep", action="store_true", help="keep the CSVs and samples")
    r = sub.add_parser("run", help="the lab end to end: detection, enforcement, table and plot (make lab)")
    r.add_argument(
        "--schedule",
        default="45,30,20,30,20",
        help="seconds: quiet, then the antagonist on, off, on, off... (default 45,30,20,30,20)",
    )
    r.add_argument("--rate", type=float, default=200.0, help="requests/s of each victim (default 200)")
    r.add_argument("--cpu", type=int, default=None, help="the victims' and antagonists' CPU (default the last)")
    r.add_argument("--threads", type=int, default=8, help="threads of each antagonist (default 8)")
    r.add_argument(
        "--min-uncapped-ratio",
        type=float,
        default=2.0,
        help="the victims' p99 while the antagonist runs uncapped: at least this times the quiet p99 (default 2)",
    )
    r.add_argument(
        "--capped-within",
        type=float,
        default=1.2,
        help="the victims' p99 while the antagonist is capped: at most this times the quiet p99 (default 1.2)",
    )
    r.add_argument(
        "--max-onset-to-cap",
        type=float,
        default=5.0,
        help="seconds from an antagonist's start to its cap's write, at most (default 5)",
    )
    r.add_argument("--build", help="the C release build (default build/c)")
    r.add_argument(
        "--job-arg",
        action="append",
        help="one more argument of the detection job, after the lab's (repeat: --job-arg=--signal.x.y --job-arg=1)",
    )
    r.add_argument(
        "--out",
        help="a new folder (or an empty one of yours) for the table, plot and files (default build/lab/<time>-XXXXXX)",
    )
    c = sub.add_parser(
        "calibrate",
        help="real services (redis, nginx) quiet, beside each antagonist, and capped by hand: the calibration table",
    )
    c.add_argument(
        "--services", default="redis,nginx", help="the kinds of victims, one after the other (default redis,nginx)"
    )
    c.add_argument(
        "--rows",
        default=None,
        help="antagonists: NAME/WORKERS@same|other,... NAME a stress-ng stressor (cpu, cache, l1cache, stream, "
        "memcpy) or ibench:<kernel> (default: each stressor on the victims' CPU, the cache and memory ones "
        "also on the other)",
    )
    c.add_argument("--rate", type=float, default=1000.0, help="requests/s to each replica (default 1000)")
    c.add_argument("--phase-s", type=float, default=5.0, help="length of each phase (default 5)")
    c.add_argument(
        "--cycles",
        type=int,
        default=3,
        help="quiet, uncapped, capped this many times per row, pooled: the machine's own bursts spread over "
        "the three (default 3)",
    )
    c.add_argument("--settle-s", type=float, default=1.0, help="left out after each change (default 1)")
    c.add_argument("--warmup-s", type=float, default=3.0, help="after the services and load start (default 3)")
    c.add_argument(
        "--antagonist-warmup-s",
        type=float,
        default=5.0,
        help="each antagonist runs this long unmeasured before its first phase (default 5)",
    )
    c.add_argument("--cpu", type=int, default=None, help="the victims' CPU (default the last)")
    c.add_argument("--build", help="the C release build (default build/c)")
    c.add_argument(
        "--out", help="a new folder (or an empty one of yours) for calibration.json (default build/lab/<time>-XXXXXX)"
    )
    c.add_argument("--report", help="also write the table into this markdown file (between its markers)")
    c.add_argument("--keep-csv", action="store_true", help="keep the load generator's CSVs")
    v = sub.add_parser(
        "services",
        help="the lab end to end with real services (redis, nginx) as victims and stress-ng as antagonists",
    )
    v.add_argument("--services", default="redis,nginx", help="one run per kind of victims (default redis,nginx)")
    v.add_argument("--rows", default=None, help="one on-phase per antagonist, as calibrate's --rows (default its)")
    v.add_argument(
        "--calibration",
        help="calibrate's calibration.json: which rows hurt the victims (judged); without it, every row",
    )
    v.add_argument("--rate", type=float, default=1000.0, help="requests/s to each replica (default 1000)")
    v.add_argument("--quiet-s", type=float, default=45.0, help="quiet at least this long (default 45)")
    v.add_argument("--on-s", type=float, default=20.0, help="each antagonist on this long (default 20)")
    v.add_argument("--off-s", type=float, default=15.0, help="then off this long (default 15)")
    v.add_argument("--cpu", type=int, default=None, help="the victims' CPU (default the last)")
    v.add_argument(
        "--min-uncapped-ratio",
        type=float,
        default=1.5,
        help="a judged row's p99 while uncapped: at least this times the quiet p99 (default 1.5)",
    )
    v.add_argument(
        "--capped-within",
        type=float,
        default=1.2,
        help="a judged row's p99 while capped: at most this times the quiet p99 (default 1.2)",
    )
    v.add_argument(
        "--max-onset-to-cap", type=float, default=5.0, help="a judged row's antagonist capped within (default 5 s)"
    )
    v.add_argument("--build", help="the C release build (default build/c)")
    v.add_argument(
        "--job-arg",
        action="append",
        help="one more argument of the detection job, after the lab's (repeat: --job-arg=--signal.x.y --job-arg=1)",
    )
    v.add_argument("--out", help="a new folder (or an empty one of yours): one folder per kind in it")
    args = ap.parse_args(argv)
    if args.cmd == "services":
        from cpi2 import lab_calibrate, lab_real

        if args.rows is None:
            args.rows = lab_calibrate.DEFAULT_ROWS
        sys.exit(lab_real.run(args))
    if args.cmd == "calibrate":
        from cpi2 import lab_calibrate  # it imports this module

        if args.rows is None:
            args.rows = lab_calibrate.DEFAULT_ROWS
        sys.exit(lab_calibrate.run(args))
    if args.cmd == "quiet-vs-antagonist":
        quiet_vs_antagonist(args)
    elif args.cmd == "run":
        from cpi2 import lab_loop  # it imports this module

        sys.exit(lab_loop.run(args))


if __name__ == "__main__":
    main()
