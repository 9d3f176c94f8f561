"""The lab, end to end on this machine (`make lab`, `python -m cpi2.lab run`): real interference,
detected by the real pipeline, capped by the real enforcer, measured by the victims themselves.

On this host, under the cgroup `cpi2-lab` (the same path in cgroup v2 and the v1 cpu hierarchy):

- the victim job `lab-victim`: REPLICAS cpi2-lab-victim servers (latency-sensitive), one cgroup
  each, all on one CPU (`--cpu`, the last by default), each recording every request's latency;
- batch antagonists of job `lab-antagonist`: cpi2-ibench cpu-int at intensity 100 on the
  victims' CPU, switched on and off (`--schedule`: quiet, then on/off lengths); each on-phase is
  a new task (`antagonist-N`), as new batch work arriving on a machine;
- bystanders on another CPU that do not interfere: batch job `lab-batch` (two cpi2-ibench cpu-int
  at a low duty cycle) and the latency-sensitive job `lab-frontend` (two small cpi2-lab-victim);
- the real collector (task-clock and the pressure signals, a 1 s window every second, the
  identities from a labels file) publishing to the stack's Kafka; the detection job submitted
  with the 1-second profile (flink-jobs/profiles/lab-1s.properties, `PROFILE`); the real enforcer
  capping this host's tasks through the v1 cpu controller (v2 cpu.max where the v2 cpu controller
  is enabled and v1 is not).

The quiet phase lasts at least `--schedule`'s first figure and until the job has published a
usable cpu_pressure spec of the victims' job (the antagonist comes once detection can act).

It writes, under `build/lab/<time>-XXXXXX/` (a new private folder; `run_folder` says when it
is elsewhere): table.txt (per phase: the victims' p50/p99, the
antagonists' CPU from the collector's samples, the caps in force), lab.png (victim latency over
time, antagonist CPU, caps shaded), the victims' CSVs, the incidents and actions seen, and the
agents' logs. It checks, from the victims' CSVs and the enforcer's actions on cpi2.actions:
every antagonist is named by an incident and capped; no other task is ever capped; the victims'
p99 while the antagonist is capped is within 20% of the quiet p99, and while it is not, at least
`--min-uncapped-ratio` times it; and prints each onset-to-cap latency (antagonist start to the
cap's write, wall clock). Exit 0 when every check holds, 1 otherwise, 2 when it cannot run here.
The cgroups and every process it started are removed on success, failure, SIGTERM and Ctrl-C.
"""

import csv
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid

import requests
from confluent_kafka import Consumer

from cpi2 import lab, names
from cpi2.e2e import pipeline
from cpi2.e2e.monitor import Monitor
from cpi2.repo import ROOT
from cpi2.schemas import wire
from cpi2.testing import stack

# The detection job's options: the 1-second profile as it is (its file says what the lab adds).
PROFILE = os.path.join(ROOT, "flink-jobs", "profiles", "lab-1s.properties")
SIGNAL = "cpu_pressure"  # the victims' queueing delay: the signal the lab's interference shows in
PMU_DEVICES = "/sys/bus/event_source/devices"

VICTIM_JOB, ANTAGONIST_JOB, BATCH_JOB, FRONTEND_JOB = "lab-victim", "lab-antagonist", "lab-batch", "lab-frontend"
SETTLE_S = 2.0  # an incident this soon after an antagonist's end is still its own
MIN_UNCAPPED_S = 1.0  # an uncapped span shorter than this (a cap within a second) is not judged
START_S = 5.0  # the victims' and agents' start: not judged
# cpu.shares of the lab's top v1 cgroup: a hundred default tasks' weight, so the other work of a
# shared machine (each of its busy tasks a 1024 entity beside the lab's group) does not set the
# victims' latency: a group that weighs little waits behind those tasks each time its victims
# wake, which a server answering in a hundred microseconds shows as milliseconds (the bench
# report has the figures); not the most the kernel takes, which left the stack's servers too
# little of the victims' CPU while the antagonist ran (the job fell behind). Inside, every task
# has the default 1024 and the antagonists their own weight, and they compete with the victims as
# described.
TOP_SHARES = 102400
# The enforcer's cap period: a capped task runs its quota in a burst each period (at the lowest CPU
# weight the enforcer gives it, so a waking victim preempts it); the victims' requests take about
# a millisecond, so 10 ms (a 0.1 CPU cap runs 1 ms of each) rather than the paper's 250 ms (25 ms
# bursts, far beyond their latency).
CAP_PERIOD_US = 10000


def weigh_top():
    """The lab's top cgroups, v2 (the collector's root, there before it starts) and v1 at
    TOP_SHARES (where the v1 cpu controller is mounted)."""
    os.makedirs(os.path.join(lab.V2, lab.TOP), exist_ok=True)
    top_v1 = os.path.join(lab.V1, lab.TOP)
    if os.path.exists(os.path.join(lab.V1, "cpu.shares")):
        os.makedirs(top_v1, exist_ok=True)
        with open(os.path.join(top_v1, "cpu.shares"), "w") as f:
            f.write(str(TOP_SHARES))


# The v1 cpu cgroup of the pipeline while the lab runs: the stack's servers the lab uses (this
# checkout's Kafka and Flink; not ClickHouse, which the lab's job does not write; their threads
# kept off the victims' CPU, as the servers would be on other machines) and the lab's collector
# and enforcer, beside the lab's top cgroup at a quarter of its weight, as a node reserves CPU for
# its own agents: else, while an
# uncapped antagonist fills the victims' CPU at the lab's weight and the rest of a shared machine
# fills the other, the job's incidents reach Kafka only once the antagonist has ended; at the
# lab's own weight, the job's start (its compilation, its first checkpoints) set the victims'
# latency in the quiet phase.
SYSTEM = "cpi2-lab-system"
SYSTEM_SHARES = TOP_SHARES // 4
SYSTEM_SERVERS = ("kafka", "flink-jobmanager", "flink-taskmanager")


def pin_threads(pid, cpus):
    """Every thread of process pid allowed on cpus only (a set; all CPUs to undo)."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return
    for tid in tids:
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # gone meanwhile


def shield(pids, away_from=None):
    """Move pids (whole processes) into the SYSTEM v1 cgroup at SYSTEM_SHARES, and with
    away_from (a CPU) keep their threads off that CPU; the pids moved."""
    if away_from is not None:
        for pid in pids:
            pin_threads(pid, set(range(os.cpu_count())) - {away_from})
    d = os.path.join(lab.V1, SYSTEM)
    if not os.path.exists(os.path.join(lab.V1, "cpu.shares")):
        return []
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cpu.shares"), "w") as f:
        f.write(str(SYSTEM_SHARES))
    moved = []
    for pid in pids:
        try:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(pid))
            moved.append(pid)
        except OSError:
            pass  # gone meanwhile
    return moved


def unshield():
    """Every process of the SYSTEM cgroup back to the v1 root, and the cgroup removed."""
    d = os.path.join(lab.V1, SYSTEM)
    if not os.path.isdir(d):
        return
    with open(os.path.join(d, "cgroup.procs")) as f:
        pids = f.read().split()
    for pid in pids:
        pin_threads(int(pid), set(range(os.cpu_count())))
        try:
            with open(os.path.join(lab.V1, "cgroup.procs"), "w") as f:
                f.write(pid)
        except OSError:
            pass
    try:
        os.rmdir(d)
    except OSError as e:
        print("lab: rmdir %s: %s" % (d, e), file=sys.stderr)


class Interrupted(Exception):
    pass


def profile(path=PROFILE):
    """The profile's options: {key: value} of its key=value lines (# comments, blank lines)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, sep, value = line.partition("=")
                if not sep:
                    raise SystemExit("lab: %s: not key=value: %r" % (path, line))
                out[key.strip()] = value.strip()
    return out


# Every signal the job has: the real-service lab's victims carry their own (cpu_per_op, latency,
# from their exporters); the job's default list leaves those out
SIGNALS = "cpi,cpu_pressure,memory_pressure,llc_mpki,cpu_per_op,latency"


def job_options(prof, on_phases):
    """The detection job's arguments: the profile file, then what the lab adds: a consumer group
    of its own from the latest offsets, no ClickHouse, every signal, and a cap at least as long as
    the longest on-phase (a cap that lapses while its antagonist still runs would split the capped
    phase)."""
    options = ["--config", PROFILE, "--kafka.group", pipeline.fresh_group("lab")]
    options += ["--kafka.start", "latest", "--clickhouse.url", "", "--signals", SIGNALS]
    if max(on_phases) > float(prof["cap.duration-s"]):
        options += ["--cap.duration-s", str(int(max(on_phases)) + 5)]
    return options


def job_failures(jid):
    """The failures of a running job so far (Flink's exception history), each as its deepest cause."""
    try:
        hist = requests.get(stack.FLINK + "/jobs/%s/exceptions" % jid, timeout=10).json()
    except (requests.RequestException, ValueError) as e:
        return ["its exception history could not be read: %s" % e]
    out = []
    for entry in hist.get("exceptionHistory", {}).get("entries", []):
        causes = [ln.strip() for ln in entry.get("stacktrace", "").splitlines() if ln.startswith("Caused by:")]
        out.append(causes[-1] if causes else entry.get("exceptionName", "unknown"))
    return out


class SpecWatch:
    """Follows cpi2.specs from its end: when the job published a usable spec of `job` for the
    signal (the detector then has a threshold the correlator acts on)."""

    def __init__(self, job, signal):
        self.job, self.signal = job, signal
        self.usable_at = None
        self.assigned = False
        self.consumer = Consumer(
            {
                **stack.kafka_conf("admin"),
                "group.id": "cpi2-lab-specs-" + uuid.uuid4().hex[:8],
                "auto.offset.reset": "latest",
                "enable.auto.commit": False,
            }
        )
        self.consumer.subscribe([names.SPECS], on_assign=lambda c, p: setattr(self, "assigned", True))

    def join(self, timeout=60):
        deadline = time.time() + timeout
        while not self.assigned and time.time() < deadline:
            self.poll(0.5)
        if not self.assigned:
            raise RuntimeError("lab: no cpi2.specs partitions assigned within %ds" % timeout)

    def poll(self, seconds):
        for m in self.consumer.consume(num_messages=1000, timeout=seconds):
            if m.error() or self.usable_at is not None:
                continue
            try:
                s = wire.decode("CpiSpec", m.value())
            except wire.WireError:
                continue
            if s["job"] == self.job and s.get("signal") == self.signal and s["usable"]:
                self.usable_at = time.time()

    def close(self):
        self.consumer.close()


def _raise_interrupted(signum, _frame):
    raise Interrupted("signal %d" % signum)


def _others_may_swap(path):
    """Could a user other than root and us rename or replace what is in the folder path (or one
    of its ancestors), putting a symlink where the lab writes as root? A folder they own, or one
    group or others may write without the sticky bit (/tmp has it: a name there is its owner's)."""
    me = os.geteuid()
    path = os.path.abspath(path)
    while True:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            return "%s is not a folder (a symlink?)" % path
        if st.st_uid not in (0, me):
            return "%s belongs to uid %d" % (path, st.st_uid)
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return "%s may be written by others (mode %04o)" % (path, st.st_mode & 0o7777)
        if path == os.path.dirname(path):
            return None
        path = os.path.dirname(path)


def run_folder(out=None):
    """The run's folder, fresh and private (0700): --out (made if missing; one that exists must be
    an empty folder of ours), or a new build/lab/<time>-XXXXXX. Its ancestors must be folders no
    other user may rename into (else a new folder in the system's temporary folder): the lab
    writes there as root."""
    if out:
        out = os.path.abspath(out)
        try:
            os.mkdir(out, 0o700)
        except FileExistsError:
            st = os.lstat(out)
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or os.listdir(out):
                raise SystemExit(
                    "lab: --out %s exists and is not an empty folder of this user: choose a new one" % out
                ) from None
            os.chmod(out, 0o700)
        why = _others_may_swap(out)
        if why:
            raise SystemExit("lab: --out %s is not private: %s" % (out, why))
        return out
    prefix = time.strftime("%Y%m%d-%H%M%S-")
    parent = os.path.join(ROOT, "build", "lab")
    try:
        why = _others_may_swap(ROOT)  # before anything is made in it
        if not why:
            os.makedirs(parent, exist_ok=True)
            why = _others_may_swap(parent)
    except OSError as e:
        why = str(e)
    if why:
        print("lab: not under %s (%s): the run goes to the system's temporary folder" % (parent, why))
        return tempfile.mkdtemp(prefix="cpi2-lab-" + prefix)
    return tempfile.mkdtemp(prefix=prefix, dir=parent)


def bins(build):
    b = {
        "victim": os.path.join(build, "lab", "cpi2-lab-victim"),
        "ibench": os.path.join(build, "ibench", "cpi2-ibench"),
        "collector": os.path.join(build, "collectors", "collector", "cpi2-collector"),
        "enforcer": os.path.join(build, "enforcer", "cpi2-enforcer"),
    }
    missing = [p for p in b.values() if not os.access(p, os.X_OK)]
    if not os.path.exists(pipeline.JOB_JAR):
        missing.append(pipeline.JOB_JAR)
    return b, missing


def cannot_run():
    """Why the lab cannot run on this machine, or None."""
    if os.geteuid() != 0:
        return "not root (cgroups, perf_event_open per cgroup and cgroup limits need root)"
    if not os.path.exists(os.path.join(lab.V2, "cpu.pressure")):
        return "no cgroup v2 with PSI at %s (cpu.pressure, the victims' queueing-delay signal)" % lab.V2
    if not os.path.exists(os.path.join(lab.V1, "cpu.cfs_quota_us")) and not v2_cpu_enabled():
        return "no writable cpu controller: neither cgroup v1 cpu at %s nor cpu in %s/cgroup.controllers" % (
            lab.V1,
            lab.V2,
        )
    if (os.cpu_count() or 1) < 2:
        return "one CPU: the bystanders need a CPU other than the victims'"
    return None


def core_pmu():
    """The core PMU's sysfs directory (the kernel registers it as cpu, or cpu_core on hybrid
    CPUs), or None: without one there are no hardware counters and no CPI."""
    for name in ("cpu", "cpu_core"):
        path = os.path.join(PMU_DEVICES, name)
        if os.path.isdir(path):
            return path
    return None


def v2_cpu_enabled():
    try:
        with open(os.path.join(lab.V2, "cgroup.controllers")) as f:
            return "cpu" in f.read().split()
    except OSError:
        return False


def enforcer_root():
    """(cgroup root the enforcer caps under, its version): v1 cpu where it is mounted, else v2."""
    if os.path.exists(os.path.join(lab.V1, "cpu.cfs_quota_us")):
        return os.path.join(lab.V1, lab.TOP), 1
    return os.path.join(lab.V2, lab.TOP), 2


def parse_schedule(text):
    """ "quiet,on,off,on,off..." seconds: [quiet_s, (on_s, off_s), ...]."""
    v = [float(x) for x in text.split(",")]
    if len(v) < 3 or len(v) % 2 == 0 or any(x <= 0 for x in v):
        raise SystemExit("lab: --schedule wants quiet,on,off[,on,off...] seconds, all > 0: %r" % text)
    return v[0], list(zip(v[1::2], v[2::2]))


class Lab:
    def __init__(self, args):
        self.args = args
        self.bins, missing = bins(args.build or str(ROOT / "build" / "c"))
        if missing:
            raise SystemExit("lab: missing %s (make build)" % ", ".join(missing))
        self.quiet_s, self.cycles = parse_schedule(args.schedule)
        self.host = "lab-" + socket.gethostname()
        # The run's jobs are new jobs: a spec an earlier run left on the compacted cpi2.specs
        # (which seeds the detection job, and which an age weight per day keeps for days) has
        # learned that run's interference too, and would set these victims' threshold
        self.run_id = uuid.uuid4().hex[:6]
        self.victim_job, self.antagonist_job, self.batch_job, self.frontend_job = (
            "%s-%s" % (job, self.run_id) for job in (VICTIM_JOB, ANTAGONIST_JOB, BATCH_JOB, FRONTEND_JOB)
        )
        self.out = run_folder(args.out)
        ncpu = os.cpu_count()
        self.cpu = args.cpu if args.cpu is not None else ncpu - 1
        self.other_cpu = 0 if self.cpu != 0 else 1
        self.procs = []  # every process started, for the cleanup
        self.victims = []  # (cgroup name, Popen, start wall s, csv path)
        self.antagonists = []  # (task, start wall s, end wall s)
        self.collector = self.enforcer = self.monitor = self.job = self.specs = None
        self.job_failures = []
        self.cpu_samples = []  # (wall s, victims' CPU busy s, the lab's part of it s)
        self.profile = profile()
        self.quiet_end = self.end = None
        self.pmu = core_pmu()
        self.events = "hardware" if self.pmu else "task-clock"
        if self.pmu:
            self.hardware = "collector --events hardware (PMU %s): CPI beside the pressure signals" % self.pmu
        else:
            self.hardware = (
                "the hardware-events run (collector --events hardware, CPI-based detection) is skipped: "
                "no hardware counters on this machine (no core PMU under %s); task-clock and pressure only"
                % PMU_DEVICES
            )

    # --- start and stop ---------------------------------------------------------------------

    def labels(self):
        lines = ["# TASK JOB TASK_ID CLASS [protected]: the lab's tasks under %s" % lab.TOP]
        lines += self.victim_label_lines()
        lines += ["antagonist-%d %s %d batch" % (i, self.antagonist_job, i) for i in range(len(self.cycles))]
        lines += ["batch-%d %s %d batch" % (i, self.batch_job, i) for i in range(2)]
        lines += ["frontend-%d %s %d latency_sensitive" % (i, self.frontend_job, i) for i in range(2)]
        path = os.path.join(self.out, "labels")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def victim_names(self):
        return ["victim-%d" % i for i in range(lab.REPLICAS)]

    def victim_label_lines(self):
        return ["%s %s %d latency_sensitive" % (n, self.victim_job, i) for i, n in enumerate(self.victim_names())]

    def start_victims(self, total):
        """Start the victims for total seconds; self.started is when they started."""
        for name in self.victim_names():
            out = os.path.join(self.out, "%s.csv" % name)
            argv = [self.bins["victim"], "--rate", str(self.args.rate), "--duration-s", str(total)]
            p = self.start(name, argv + ["--cpu", str(self.cpu), "--out", out])
            self.victims.append((name, p, time.time(), out))
        self.started = self.victims[0][2]

    def antagonist_argv(self, n):
        """The command line of the n-th on-phase's antagonist, pinned to its CPU."""
        return ["taskset", "-c", str(self.cpu), self.bins["ibench"], "cpu-int", "--intensity", "100"] + [
            "--threads",
            str(self.args.threads),
        ]

    def antagonist_shares(self, n):
        """The antagonist's v1 cpu.shares: 1024 per thread, as Kubernetes weighs a pod by its CPU
        request; beside five victims of 1024 each, it takes more than their share of the CPU."""
        return 1024 * self.args.threads

    def start(self, name, argv, log=None):
        p = lab.start_in(lab.Cgroup(name), argv, stdout=log or subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        return p

    def agent(self, name, argv):
        log = open(os.path.join(self.out, name + ".log"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        shield([p.pid])
        return p

    def total_s(self):
        return self.quiet_s + sum(on + off for on, off in self.cycles)

    def spec_wait_s(self):
        """How long past the schedule's quiet phase a usable spec may take: the eligibility's
        samples, two spec periods (a partial first one, then one that folds them), the
        watermark's delay."""
        p = self.profile
        return int(p["spec.min-samples-per-task"]) + 2 * int(p["spec.period-s"]) + 10

    def setup(self):
        lab.remove_all()
        stack.ensure_up()
        # the servers off the victims' CPU, as they would be on other machines
        shield([pid for name, pid in stack.pids().items() if name in SYSTEM_SERVERS], away_from=self.cpu)
        self.monitor = Monitor(
            stack.kafka_conf("admin"),
            sample_hosts=[self.host],
            sample_signals=("cpu_pressure", "cpu_per_op", "latency"),
        )
        self.monitor.join()
        self.specs = SpecWatch(self.victim_job, SIGNAL)
        self.specs.join()
        options = job_options(self.profile, [on for on, _off in self.cycles]) + list(
            getattr(self.args, "job_arg", None) or []
        )
        self.job = pipeline.submit_job(options=options)
        print("lab: detection job %s submitted: %s" % (self.job, " ".join(options)))
        root, version = enforcer_root()
        os.makedirs(root, exist_ok=True)
        weigh_top()
        self.enforcer = self.agent(
            "enforcer",
            [self.bins["enforcer"], "--host", self.host, "--cgroup-root", root, "--cgroup-version", str(version)]
            + ["--period-us", str(CAP_PERIOD_US)]
            + ["--state-dir", os.path.join(self.out, "enforcer-state"), "--brokers", stack.KAFKA]
            + ["--group-id", "cpi2-enforcer-lab-" + uuid.uuid4().hex[:8], "-X", "auto.offset.reset=latest"]
            + stack.agent_kafka_args("enforcer"),
        )
        self.collector = self.agent(
            "collector",
            [self.bins["collector"], "--host", self.host, "--brokers", stack.KAFKA, "--events", self.events]
            + ["--roots", os.path.join(lab.V2, lab.TOP), "--labels-file", self.labels(), "--default-rules=false"]
            + ["--window-s", "1", "--period-s", "1"]
            + stack.agent_kafka_args("collector"),
        )
        total = self.total_s() + self.spec_wait_s() + 5  # SIGTERM ends them before
        for n in range(len(self.cycles)):  # there from the start, empty until their on-phase
            lab.Cgroup("antagonist-%d" % n).set_v1("cpu.shares", self.antagonist_shares(n))
        for i in range(2):  # bystanders, on the other CPU
            self.start(
                "batch-%d" % i,
                ["taskset", "-c", str(self.other_cpu), self.bins["ibench"], "cpu-int", "--intensity", "5"],
            )
            self.start(
                "frontend-%d" % i,
                [self.bins["victim"], "--rate", "20", "--duration-s", str(total), "--cpu", str(self.other_cpu)]
                + ["--out", os.path.join(self.out, "frontend-%d.csv" % i)],
            )
        self.start_victims(total)
        print(
            "lab: host %s; %d victims (%s) at %g requests/s on CPU %d; bystanders %s and %s on CPU %d; "
            "collector 1 s windows; enforcer on %s (cgroup v%d); files in %s"
            % (
                (self.host, lab.REPLICAS, self.victim_job, self.args.rate, self.cpu, self.batch_job, self.frontend_job)
                + (self.other_cpu, root, version, self.out)
            )
        )

    def wait(self, seconds):
        """Sleep while following the output topics; fail early when an agent died."""
        end = time.time() + seconds
        while time.time() < end:
            self.monitor.poll(min(0.5, max(0.01, end - time.time())))
            self.specs.poll(0)
            self.sample_cpu()
            for name, p in (("collector", self.collector), ("enforcer", self.enforcer)):
                if p.poll() is not None:
                    raise RuntimeError("lab: the %s exited (%d): see %s/%s.log" % (name, p.returncode, self.out, name))

    def play(self):
        print("lab: %s" % self.hardware)
        print("lab: quiet for %g s at least (the job learns the victims' spec)" % self.quiet_s)
        self.wait(self.quiet_s)
        deadline = time.time() + self.spec_wait_s()
        while self.specs.usable_at is None and time.time() < deadline:
            self.wait(0.5)
        if self.specs.usable_at is None:
            raise RuntimeError(
                "lab: no usable %s spec of %s on %s within %g s"
                % (SIGNAL, self.victim_job, names.SPECS, self.total_quiet())
            )
        self.quiet_end = time.time()
        print(
            "lab: usable %s spec of %s %.1f s after the victims started; quiet for %.1f s"
            % (SIGNAL, self.victim_job, self.specs.usable_at - self.started, self.total_quiet())
        )
        for n, (on, off) in enumerate(self.cycles):
            task = "antagonist-%d" % n
            t0 = time.time()
            p = self.start(task, self.antagonist_argv(n))
            print("lab: %s on for %g s" % (task, on))
            self.wait(on)
            # the batch job ends: every process of its cgroup at once, the cap left as it is (the
            # enforcer's; a capped process exits slowly, at its quota)
            lab.kill_cgroup(lab.Cgroup(task), lift=False, timeout=5)
            self.antagonists.append((task, t0, time.time()))
            p.wait(timeout=10)
            print("lab: %s off for %g s" % (task, off))
            self.wait(off)
        self.end = time.time()

    def total_quiet(self):
        return time.time() - self.started if self.quiet_end is None else self.quiet_end - self.started

    def stop(self):
        """Every process this lab started, then the cgroups; the job it submitted."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)  # the enforcer lifts its caps, the victims flush
        for p in reversed(self.procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.monitor:
            try:
                self.monitor.poll(1)
            finally:
                self.monitor.close()
        if self.specs:
            self.specs.close()
        if self.job:
            self.job_failures = job_failures(self.job)
            try:
                requests.patch(stack.FLINK + "/jobs/%s?mode=cancel" % self.job, timeout=10)
            except requests.RequestException as e:
                print("lab: cancelling job %s: %s" % (self.job, e), file=sys.stderr)
        lab.remove_all()
        unshield()

    # --- what happened ----------------------------------------------------------------------

    def latencies(self):
        """[(arrival wall s, latency us)] of every victim request, by arrival."""
        out = []
        for _name, _p, t0, path in self.victims:
            with open(path) as f:
                out += [(t0 + int(r["arrival_us"]) / 1e6, int(r["latency_us"])) for r in csv.DictReader(f)]
        return sorted(out)

    def caps(self):
        """{task: [(applied wall s, released wall s or None)]} from the enforcer's actions."""
        caps = {}
        for a in sorted(self.monitor.actions, key=lambda a: a["at_us"]):
            if a["host"] != self.host:
                continue
            spans = caps.setdefault(a["task"], [])
            if a["kind"] == "APPLIED":
                spans.append([a["at_us"] / 1e6, None])
            elif a["kind"] == "RELEASED" and spans and spans[-1][1] is None:
                spans[-1][1] = a["at_us"] / 1e6
        return caps

    def sample_cpu(self):
        """Once a second: the victims' CPU's busy time (/proc/stat) and the part of it the lab's
        victims and antagonists used (their v2 cpu.stat), to tell the machine's other load there."""
        now = time.time()
        if self.cpu_samples and now - self.cpu_samples[-1][0] < 1.0:
            return
        busy = lab_s = 0.0
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu%d " % self.cpu):
                    ticks = [int(x) for x in line.split()[1:9]]  # user..steal
                    busy = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait
        top = os.path.join(lab.V2, lab.TOP)
        for name in os.listdir(top) if os.path.isdir(top) else []:
            if name in self.victim_names() or name.startswith("antagonist-"):
                try:
                    with open(os.path.join(top, name, "cpu.stat")) as f:
                        lab_s += int(f.readline().split()[1]) / 1e6  # usage_usec
                except (OSError, IndexError, ValueError):
                    pass
        self.cpu_samples.append((now, busy, lab_s))

    def noise_cpu(self, t0, t1):
        """CPU-sec/sec of the victims' CPU used in [t0, t1) by tasks other than the lab's victims
        and antagonists (the stack, the agents, the rest of the machine): the noise beside them."""
        inside = [x for x in self.cpu_samples if t0 <= x[0] <= t1]
        if len(inside) < 2 or inside[-1][0] - inside[0][0] < 1:
            return float("nan")
        (a, busy_a, lab_a), (b, busy_b, lab_b) = inside[0], inside[-1]
        return max(0.0, (busy_b - busy_a) - (lab_b - lab_a)) / (b - a)

    def antagonist_cpu(self, t0, t1):
        """Mean of the antagonists' summed cpu_usage over the collector's windows in [t0, t1)."""
        per_window = {}
        for (host, task), rows in self.monitor.samples.items():
            if host == self.host and task.startswith("antagonist-"):
                for ws, _cpi, usage in rows:
                    if t0 <= ws / 1e6 and ws / 1e6 + 1 <= t1:
                        per_window[ws] = per_window.get(ws, 0.0) + (usage or 0.0)
        return sum(per_window.values()) / len(per_window) if per_window else float("nan")

    def drained(self, t):
        """When every victim's queue is empty again after t (a cap, an antagonist's end): the
        latest, over the victims, arrival of its first request after t that waited less than one
        request interval. The backlog the antagonist built while it ran uncapped is the detection's
        delay, not the cap's effect: it drains first, then the phase is judged."""
        interval_us = 1e6 / self.args.rate
        latest = t
        for _name, _p, t0, path in self.victims:
            with open(path) as f:
                for r in csv.DictReader(f):
                    at = t0 + int(r["arrival_us"]) / 1e6
                    if at >= t and int(r["latency_us"]) - int(r["service_us"]) < interval_us:
                        latest = max(latest, at)
                        break
        return latest

    def phases(self, caps):
        """[(name, t0, t1)]: quiet, and each on-phase split at its cap into uncapped and capped,
        then its off-phase; the capped and off-phases from when the victims' queues drained."""
        end = self.end
        start = self.started + START_S
        ph = [("quiet", start, self.quiet_end)]
        for n, (task, t0, t1) in enumerate(self.antagonists):
            capped = [s for s in caps.get(task, []) if t0 <= s[0] <= t1]
            cap_t = capped[0][0] if capped else None
            ph.append(("on-%d uncapped" % n, t0, cap_t or t1))
            if cap_t:
                ph.append(("on-%d capped" % n, self.drained(cap_t), t1))
            nxt = self.antagonists[n + 1][1] if n + 1 < len(self.antagonists) else end
            ph.append(("off-%d" % n, self.drained(t1), nxt))
        return ph

    def report(self):
        lat = self.latencies()
        caps = self.caps()
        phases = self.phases(caps)
        rows = []
        for name, t0, t1 in phases:
            v = [latency for at, latency in lat if t0 <= at < t1]
            in_force = sorted(
                task for task, spans in caps.items() for a, r in spans if a < t1 and (r is None or r > t0)
            )
            rows.append(
                (name, t1 - t0, len(v), lab.nearest_rank(v, 50), lab.nearest_rank(v, 99))
                + (self.antagonist_cpu(t0, t1), self.noise_cpu(t0, t1), in_force)
            )
        # the quiet reference: every request while no antagonist ran (the quiet phase and the
        # off-phases), so a shared machine's noise over the run is in it as in the others
        quiet = [lat_us for at, lat_us in lat if any(t0 <= at < t1 for n, t0, t1 in phases if "capped" not in n)]
        quiet_s = sum(t1 - t0 for n, t0, t1 in phases if "capped" not in n)
        quiet_p99 = lab.nearest_rank(quiet, 99)
        other = [(t1 - t0, self.noise_cpu(t0, t1)) for n, t0, t1 in phases if "capped" not in n]
        other = [(d, o) for d, o in other if o == o]
        other_mean = sum(d * o for d, o in other) / sum(d for d, _o in other) if other else float("nan")
        rows.append(("no antagonist", quiet_s, len(quiet), lab.nearest_rank(quiet, 50), quiet_p99, 0.0, other_mean, []))
        lines = [
            "%-16s %7s %9s %9s %10s %9s %10s %10s  %s"
            % ("phase", "s", "requests", "p50 us", "p99 us", "p99/quiet", "ant. CPU", "other CPU", "caps in force")
        ]
        for name, dur, n, p50, p99, cpu, oth, in_force in rows:
            lines.append(
                "%-16s %7.1f %9d %9.0f %10.0f %9.2f %10.3f %10.3f  %s"
                % (
                    name,
                    dur,
                    n,
                    p50,
                    p99,
                    p99 / quiet_p99 if quiet_p99 else float("nan"),
                    cpu,
                    oth,
                    " ".join(in_force) or "-",
                )
            )
        lines.append(
            "(other CPU: CPU-sec/sec of the victims' CPU %d used by everything but the victims and "
            "antagonists: the machine's own load beside them)" % self.cpu
        )
        onsets = []
        for task, t0, _t1 in self.antagonists:
            spans = caps.get(task, [])
            onsets.append((task, spans[0][0] - t0 if spans else None))
        lines.append("")
        for task, d in onsets:
            lines.append(
                "onset-to-cap %s: %s"
                % (task, "%.2f s (antagonist start to the cap's write)" % d if d is not None else "never capped")
            )
        inc = [i for i in self.monitor.incidents if i["host"] == self.host]
        # incidents of a time no antagonist ran (by the time of the sample that completed them)
        quiet_inc = [
            i
            for i in inc
            if not any(t0 <= i["detected_at_us"] / 1e6 < t1 + SETTLE_S for _a, t0, t1 in self.antagonists)
        ]
        lines.append(
            "incidents for %s: %d (%s); actions: %s"
            % (
                self.host,
                len(inc),
                ", ".join(sorted({"%s->%s" % (i["decision"], i.get("antagonist_task")) for i in inc})) or "none",
                ", ".join("%s %s" % (a["kind"], a["task"]) for a in self.monitor.actions if a["host"] == self.host)
                or "none",
            )
        )
        by_signal = {}
        for i in inc:
            by_signal[i.get("signal", "cpi")] = by_signal.get(i.get("signal", "cpi"), 0) + 1
        lines.append(
            "incidents by signal: %s" % (", ".join("%s %d" % kv for kv in sorted(by_signal.items())) or "none")
        )
        lines.append(self.hardware)
        lines.append(
            "incidents while no antagonist ran: %d (%s)"
            % (
                len(quiet_inc),
                ", ".join(sorted({"%s %s" % (i["decision"], i["victim_job"]) for i in quiet_inc})) or "none",
            )
        )
        lines += self.more_lines(lat, phases, caps, inc)
        text = "\n".join(lines)
        with open(os.path.join(self.out, "table.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(self.out, "events.jsonl"), "w") as f:
            for task, t0, t1 in self.antagonists:
                f.write(json.dumps({"record": "antagonist", "task": task, "start_s": t0, "end_s": t1}) + "\n")
            for record, recs, message, key in (
                ("incident", inc, "Incident", "incident_id"),
                ("action", self.monitor.actions, "EnforcementAction", "action_id"),
            ):
                for r in recs:
                    # when the lab read it from Kafka (wall s): how late it reached the host
                    read_at = self.monitor.read_at.get((message, r[key]))
                    f.write(json.dumps({"record": record, "read_at_s": read_at, **r}, default=str) + "\n")
        print("\n" + text)
        plot = self.plot(lat, caps)
        print(
            "\nlab: table %s/table.txt, plot %s, victims' CSVs, events.jsonl and logs in %s"
            % (self.out, plot, self.out)
        )
        return rows, quiet_p99, onsets, caps, inc

    def plot(self, lat, caps):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        t_base = self.started
        per_s = {}
        for at, latency in lat:
            per_s.setdefault(int(at - t_base), []).append(latency)
        xs = sorted(per_s)
        fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(11, 6))
        ax1.plot(xs, [lab.nearest_rank(per_s[x], 99) / 1000 for x in xs], label="victims' p99 (per second)")
        ax1.plot(xs, [lab.nearest_rank(per_s[x], 50) / 1000 for x in xs], label="victims' p50")
        ax1.set_yscale("log")
        ax1.set_ylabel("latency (ms)")
        per_w = {}
        for (host, task), rows in self.monitor.samples.items():
            if host == self.host and task.startswith("antagonist-"):
                for ws, _cpi, usage in rows:
                    per_w[ws / 1e6 - t_base] = per_w.get(ws / 1e6 - t_base, 0) + (usage or 0)
        wx = sorted(per_w)
        ax2.step(wx, [per_w[x] for x in wx], where="post", label="antagonists' CPU (collector)")
        ax2.set_ylabel("CPU-sec/sec")
        ax2.set_xlabel("seconds since the victims started")
        for _task, t0, t1 in self.antagonists:
            for ax in (ax1, ax2):
                ax.axvspan(t0 - t_base, t1 - t_base, color="orange", alpha=0.12)
        for spans in caps.values():
            for a, r in spans:
                for ax in (ax1, ax2):
                    ax.axvspan(a - t_base, (r or time.time()) - t_base, color="green", alpha=0.25)
        ax1.set_title("cpi2 lab: antagonist on (orange), capped by the enforcer (green)")
        ax1.legend(loc="upper left")
        ax2.legend(loc="upper left")
        path = os.path.join(self.out, "lab.png")
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        return path

    def judged(self):
        """The on-phases the checks judge (their antagonist named and capped in time, the
        victims' p99 while capped and not): every one."""
        return set(range(len(self.antagonists)))

    def more_lines(self, lat, phases, caps, incidents):
        """Lines the table adds after its own (none here)."""
        return []

    def check(self, rows, quiet_p99, onsets, caps, incidents):
        """The lab's assertions; returns the list of those that failed."""
        failed = []
        ants = {task for task, _t0, _t1 in self.antagonists}
        judged = self.judged()
        for n, (task, d) in enumerate(onsets):
            if n not in judged:
                continue
            named = [i for i in incidents if i.get("antagonist_task") == task]
            if not named:
                failed.append("%s was never named by an incident" % task)
            if d is None:
                failed.append("%s was never capped" % task)
            elif d > self.args.max_onset_to_cap:
                failed.append("%s: onset-to-cap %.2f s > %g s" % (task, d, self.args.max_onset_to_cap))
        if self.job_failures:
            failed.append(
                "the detection job failed %d time(s) during the run (each restart from a checkpoint "
                "delays detection); the first: %s" % (len(self.job_failures), self.job_failures[0])
            )
        wrong = sorted(set(caps) - ants)
        if wrong:
            failed.append("tasks other than the antagonists were capped: %s" % ", ".join(wrong))
        # the machine's own noise, to name beside a capped phase that fails: the no-antagonist
        # phase (quiet, off) whose p99 stood farthest from the pooled reference
        calm = [
            (p99, name, oth)
            for name, _d, n, _p50, p99, _c, oth, _f in rows
            if n and (name == "quiet" or name.startswith("off-"))
        ]
        for name, _dur, n, _p50, p99, _cpu, other, _caps in rows:
            if name.startswith("on-") and int(name.split()[0][3:]) not in judged:
                continue
            if name.endswith(" capped") and n and p99 > self.args.capped_within * quiet_p99:
                worst = max(calm, default=None)
                failed.append(
                    "%s: victims' p99 %.0f us > %.1f x quiet p99 %.0f us (other CPU %.3f in it; "
                    "noisiest phase without an antagonist: %s)"
                    % (
                        name,
                        p99,
                        self.args.capped_within,
                        quiet_p99,
                        other,
                        "%s at %.2f x, other CPU %.3f" % (worst[1], worst[0] / quiet_p99, worst[2])
                        if worst
                        else "none",
                    )
                )
            if name.endswith(" uncapped") and _dur < MIN_UNCAPPED_S:
                print("lab: %s lasted %.1f s, under %g s: its p99 is not judged" % (name, _dur, MIN_UNCAPPED_S))
            elif name.endswith(" uncapped") and n and p99 < self.args.min_uncapped_ratio * quiet_p99:
                failed.append(
                    "%s: victims' p99 %.0f us is not %.1f x the quiet p99 %.0f us: no interference to remove"
                    % (name, p99, self.args.min_uncapped_ratio, quiet_p99)
                )
        return failed


def guarded(body, stop):
    """Run body() with SIGTERM and SIGINT raising Interrupted, then stop(), whatever happened
    (stop ends every process and cgroup the run started), all of it holding the machine's lab lock
    (lab.one_at_a_time). True when it was interrupted."""
    old = {s: signal.signal(s, _raise_interrupted) for s in (signal.SIGTERM, signal.SIGINT)}
    held = []
    try:
        with lab.one_at_a_time():
            held.append(True)
            return _guarded(body, stop)
    except (Interrupted, KeyboardInterrupt) as e:
        if held:
            raise
        print("lab: interrupted (%s) while waiting for another lab: nothing started" % e, file=sys.stderr)
        return True
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _guarded(body, stop):
    try:
        body()
    except (Interrupted, KeyboardInterrupt) as e:
        print("lab: interrupted (%s): stopping everything it started" % e, file=sys.stderr)
        stop()
        return True
    except BaseException:
        stop()
        raise
    stop()
    return False


def run(args):
    why = cannot_run()
    if why:
        print("lab: cannot run here: %s" % why, file=sys.stderr)
        return 2
    lb = Lab(args)
    if guarded(lambda: (lb.setup(), lb.play()), lb.stop):
        return 130
    result = lb.report()
    failed = lb.check(*result)
    for f in failed:
        print("lab: FAILED: " + f)
    print("lab: %s" % ("every check holds" if not failed else "%d check(s) failed" % len(failed)))
    return 1 if failed else 0
