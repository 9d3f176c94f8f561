"""The real-service lab's calibration (`python -m cpi2.lab calibrate`, `make -C lab calibrate`):
before any detection, how much each kind of interference hurts each real service on this
machine, and which kinds a cap can fix at all.

For each service kind (redis, nginx: REPLICAS replicas with their exporters, each in its own
cgroup, on the victims' CPU) the open-loop load generator runs on another CPU for the whole
calibration, and for each antagonist row (a stress-ng stressor or an ibench kernel, its workers,
and its placement: the victims' CPU, `same`, or another, `other`) the antagonist starts and
three phases follow each other, --cycles times, each kind pooled over its cycles (a burst of the
machine's other load then falls in all three, not in one):

- quiet: the antagonist frozen, after --antagonist-warmup-s of it running unmeasured (its start:
  a stream stressor allocating and filling gigabytes stalls the whole VM for seconds) (v2 cgroup.freeze: there, its memory too, doing nothing);
- uncapped: the antagonist beside the victims, its v1 cpu.shares 1024 a worker (as Kubernetes
  weighs a pod by its CPU request);
- capped: the same antagonist capped by hand as the enforcer caps a batch task (the job's batch
  cap, in the lab's cap period, with the enforcer's lowered CPU weight and cpu.idle).

Per phase it measures, from the load generator's CSV, the victims' p50/p99/p99.9 latency as
their clients see it; from the servers' own counters, their own time per request (redis' INFO
commandstats usec per GET; nginx has none) and their CPU per request (cgroup cpu.stat over the
requests they served); the victims' CPU pressure (v2 cpu.pressure some, the share of the time a
task of theirs waited for a CPU, as the collector's cpu_pressure); the antagonist's CPU; and the
rest of the machine's load on both CPUs (/proc/stat less the lab's own cgroups).

A row hurts when the uncapped p99 is at least HURTS (1.5) x the quiet p99; the cap fixes it when
the capped p99 is within CAPPED_WITHIN (1.2) x the quiet p99; a cross-core row reaches the
service's own work when its own time (or CPU) per request rises by at least REACHES (1.2) x,
else only its clients. Output: a markdown table on stdout and in --report, every figure in
calibration.json under --out.
"""

import bisect
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from cpi2 import lab, lab_loop, lab_services
from cpi2.repo import ROOT

HURTS = 1.5
CAPPED_WITHIN = 1.2
REACHES = 1.2
# the cap the job writes for a batch task (its cap.batch-cpu default) and the lab's cap period
BATCH_CAP = 0.1
DEFAULT_ROWS = (
    "cpu/8@same,cache/2@same,l1cache/2@same,stream/2@same,memcpy/2@same,"
    "cache/2@other,l1cache/2@other,stream/2@other,memcpy/2@other"
)


def parse_rows(text):
    """ "NAME/THREADS@PLACEMENT,..." -> [(name, threads, placement)]."""
    rows = []
    for item in text.split(","):
        try:
            spec, placement = item.strip().split("@")
            name, threads = spec.split("/")
            threads = int(threads)
        except ValueError:
            raise SystemExit("lab: --rows wants NAME/THREADS@same|other, not %r" % item) from None
        if placement not in lab_services.PLACEMENTS or threads < 1:
            raise SystemExit("lab: --rows: %r: placement same or other, threads at least 1" % item)
        rows.append((name, threads, placement))
    return rows


def psi_total(cg):
    """The cgroup's v2 cpu.pressure some total (us waited by at least one of its tasks)."""
    with open(os.path.join(cg.dirs[0], "cpu.pressure")) as f:
        for line in f:
            if line.startswith("some "):
                return int(line.split("total=")[1])
    return 0


def cg_cpu(cg):
    try:
        with open(os.path.join(cg.dirs[0], "cpu.stat")) as f:
            return int(f.readline().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def cpu_busy_s(cpus):
    """{cpu: busy seconds} from /proc/stat (less idle and iowait)."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            for c in cpus:
                if line.startswith("cpu%d " % c):
                    ticks = [int(x) for x in line.split()[1:9]]
                    out[c] = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    return out


class Snapshot:
    def __init__(self, replicas, antagonist, load_cg, cpus):
        self.t = time.time()
        self.stats = {r.name: r.stats() for r in replicas}
        self.cpu = {r.name: r.cpu_usec() for r in replicas}
        self.psi = {r.name: psi_total(r.cgroup) for r in replicas}
        self.ant = cg_cpu(antagonist) if antagonist else 0
        self.load = cg_cpu(load_cg)
        self.busy = cpu_busy_s(cpus)


def phase_figures(spans, lat, windows, placement, cpu, other_cpu):
    """What one kind of phase measured over its spans [(a, b)] (a, b: Snapshots; lat: the load
    generator's rows; windows: the replicas' 1 s windows of pressure and CPU), pooled."""
    d = sum(b.t - a.t for a, b in spans)
    # lat is sorted by due time: each span is a slice of it
    picked = [x for a, b in spans for x in lat[bisect.bisect_left(lat, (a.t,)) : bisect.bisect_left(lat, (b.t,))]]

    def delta(f):
        return sum(f(b) - f(a) for a, b in spans)

    names = list(spans[0][0].psi)
    win = [w for w in windows if any(a.t < w[0] <= b.t + 0.1 for a, b in spans)]
    pw = [w[2] for w in win]
    ok = sorted(x[1] for x in picked if x[3])
    failed = sum(1 for x in picked if not x[3])
    ops = delta(lambda s: sum(s.stats[n]["ops"] for n in names))
    own = None
    if all(spans[0][0].stats[n]["usec"] is not None for n in names):
        own = delta(lambda s: sum(s.stats[n]["usec"] for n in names)) / ops if ops else float("nan")
    victims_cpu = delta(lambda s: sum(s.cpu.values())) / 1e6
    ant = delta(lambda s: s.ant) / 1e6
    load = delta(lambda s: s.load) / 1e6
    busy_v = delta(lambda s: s.busy[cpu])
    busy_o = delta(lambda s: s.busy[other_cpu])
    ant_here = ant if placement == "same" else 0.0
    ant_there = ant if placement == "other" else 0.0
    return {
        "seconds": d,
        "requests": len(ok),
        "failed": failed,
        "p50_us": lab.nearest_rank(ok, 50),
        "p99_us": lab.nearest_rank(ok, 99),
        "p999_us": lab.nearest_rank(ok, 99.9),
        "own_us_per_op": own,
        "cpu_us_per_op": victims_cpu * 1e6 / ops if ops else float("nan"),
        "pressure": delta(lambda s: sum(s.psi.values())) / len(names) / 1e6 / d,
        # per replica and 1 s window, as the collector's cpu_pressure
        "pressure_windows": len(pw),
        "pressure_p50": lab.nearest_rank(pw, 50),
        "pressure_p90": lab.nearest_rank(pw, 90),
        "pressure_max": max(pw, default=float("nan")),
        "cpu_per_replica": sum(w[3] for w in win) / len(win) if win else float("nan"),
        "antagonist_cpu": ant / d,
        "other_load_victims_cpu": max(0.0, busy_v - victims_cpu - ant_here) / d,
        "other_load_other_cpu": max(0.0, busy_o - load - ant_there) / d,
    }


def verdict(row):
    q, u, c = row["quiet"], row["uncapped"], row["capped"]
    row["uncapped_x"] = u["p99_us"] / q["p99_us"]
    row["capped_x"] = c["p99_us"] / q["p99_us"]
    row["hurts"] = row["uncapped_x"] >= HURTS
    row["cap_fixes"] = row["capped_x"] <= CAPPED_WITHIN
    key = "own_us_per_op" if q["own_us_per_op"] is not None else "cpu_us_per_op"
    row["work_x"] = u[key] / q[key] if q[key] else float("nan")
    row["work_measure"] = "own time" if key == "own_us_per_op" else "CPU"
    row["reaches_service"] = row["work_x"] >= REACHES
    return row


class Calibration:
    def __init__(self, args):
        self.args = args
        build = args.build or str(ROOT / "build" / "c")
        self.load_bin = os.path.join(build, "lab", "cpi2-lab-load")
        self.ibench = os.path.join(build, "ibench", "cpi2-ibench")
        for b in (self.load_bin, self.ibench):
            if not os.access(b, os.X_OK):
                raise SystemExit("lab: %s missing (make build)" % b)
        self.kinds = [k.strip() for k in args.services.split(",") if k.strip()]
        for k in self.kinds:
            if k not in lab_services.KINDS:
                raise SystemExit("lab: --services: %r is not one of %s" % (k, ", ".join(lab_services.KINDS)))
        self.rows = parse_rows(args.rows)
        self.cpu = args.cpu if args.cpu is not None else os.cpu_count() - 1
        self.other_cpu = 0 if self.cpu != 0 else 1
        self.out = lab_loop.run_folder(args.out)
        self.tmp = tempfile.mkdtemp(prefix="cpi2-lab-cal-")
        self.services = self.load = None
        self.results = []
        self.windows = []  # (wall s at the window's end, replica, pressure, CPU)

    def run(self):
        lab_services.ensure_packages(["stress-ng"] + self.kinds)
        lab.remove_all()
        lab_loop.weigh_top()
        self.started = time.time()
        self.load_before = os.getloadavg()
        for kind in self.kinds:
            self.run_kind(kind)
        self.load_after = os.getloadavg()

    def run_kind(self, kind):
        a = self.args
        self.services = lab_services.Services([kind], lab.REPLICAS, self.cpu, self.tmp)
        self.services.start()
        replicas = self.services.replicas
        load_cg = lab.Cgroup("load", v1=False)
        csv_path = os.path.join(self.out, "%s-load.csv" % kind)
        self.load = lab.start_in(
            load_cg,
            lab_services.load_argv(self.load_bin, kind, replicas, a.rate, self.other_cpu, csv_path),
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(self.out, "%s-load.log" % kind), "w"),
            text=True,
        )
        print(
            "lab: %d %s replicas on CPU %d at %g requests/s each; the load generator on CPU %d"
            % (lab.REPLICAS, kind, self.cpu, a.rate, self.other_cpu),
            flush=True,
        )
        time.sleep(a.warmup_s)
        marks = []
        for n, (name, threads, placement) in enumerate(self.rows):
            cg = lab.Cgroup("antagonist-%s-%d" % (kind, n))
            shares = 1024 * threads
            cg.set_v1("cpu.shares", shares)
            cg.freeze(True)  # started frozen: the first phase is quiet
            where = self.cpu if placement == "same" else self.other_cpu
            ant = lab.start_in(
                cg,
                lab_services.antagonist_argv(name, threads, where, self.ibench, self.tmp),
                stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(self.out, "antagonist-%s-%d.log" % (kind, n)), "w"),
            )
            # its start (a stream stressor allocates and fills its arrays, gigabytes) is not a phase
            cg.freeze(False)
            time.sleep(a.antagonist_warmup_s)
            spans = {"quiet": [], "uncapped": [], "capped": []}
            for _cycle in range(a.cycles):
                for phase in ("quiet", "uncapped", "capped"):
                    if phase == "quiet":
                        cg.freeze(True)
                        cg.uncap(shares)
                    elif phase == "uncapped":
                        cg.freeze(False)
                    else:
                        cg.cap(BATCH_CAP, lab_loop.CAP_PERIOD_US, lower_priority=True)
                    time.sleep(a.settle_s)
                    s0 = Snapshot(replicas, cg, load_cg, (self.cpu, self.other_cpu))
                    self.sample_windows(replicas, a.phase_s)
                    spans[phase].append((s0, Snapshot(replicas, cg, load_cg, (self.cpu, self.other_cpu))))
            if ant.poll() is not None:
                print("lab: the antagonist %s ended early (exit %d)" % (name, ant.returncode), file=sys.stderr)
            cg.freeze(False)
            if not lab.kill_cgroup(cg):
                print("lab: the antagonist %s did not end within 30 s" % name, file=sys.stderr)
            ant.wait(timeout=10)
            marks.append((name, threads, placement, spans))
            print("lab: %s %s/%d@%s measured" % (kind, name, threads, placement), flush=True)
        self.load.send_signal(signal.SIGTERM)
        stdout, _ = self.load.communicate(timeout=60)
        report = lab_services.load_report(stdout)
        self.services.stop()
        self.services = self.load = None
        lat = sorted(lab_services.read_load(csv_path, report["start_unix_us"] / 1e6))
        for name, threads, placement, spans in marks:
            row = {"service": kind, "antagonist": name, "threads": threads, "placement": placement}
            for phase, sp in spans.items():
                row[phase] = phase_figures(sp, lat, self.windows, placement, self.cpu, self.other_cpu)
            self.results.append(verdict(row))
        if not a.keep_csv:
            os.remove(csv_path)

    def sample_windows(self, replicas, seconds):
        """Sleep for seconds, reading each replica's pressure and CPU every second: the 1 s
        windows the collector would publish, (wall s, pressure, CPU) per replica."""
        end = time.time() + seconds
        last = {r.name: (time.time(), psi_total(r.cgroup), r.cpu_usec()) for r in replicas}
        while time.time() < end - 0.05:
            time.sleep(min(1.0, max(0.0, end - time.time())))
            for r in replicas:
                t, p, c = time.time(), psi_total(r.cgroup), r.cpu_usec()
                t0, p0, c0 = last[r.name]
                if t - t0 >= 0.5:
                    self.windows.append((t, r.name, (p - p0) / 1e6 / (t - t0), (c - c0) / 1e6 / (t - t0)))
                last[r.name] = (t, p, c)

    def stop(self):
        if self.load and self.load.poll() is None:
            self.load.kill()
            self.load.wait()
        if self.services:
            self.services.stop()
        lab.remove_all()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- the table ----------------------------------------------------------------------------

    def conditions(self):
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        model = ""
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        return [
            "- date: %s; commit %s; command: `python -m cpi2.lab calibrate %s`"
            % (
                datetime.datetime.fromtimestamp(self.started).isoformat(timespec="seconds"),
                commit.stdout.strip() or "?",
                " ".join(sys.argv[2:]),
            ),
            "- machine: %s, %d CPUs (%s), kernel %s; load average before %.2f, after %.2f"
            % (
                platform.node(),
                os.cpu_count(),
                model,
                platform.release(),
                self.load_before[0],
                self.load_after[0],
            ),
            "- victims: %d replicas of each service, each with its exporter in its own cgroup, on CPU %d; "
            "load: cpi2-lab-load on CPU %d (SCHED_FIFO %d), Poisson arrivals at %g requests/s to each "
            "replica, 2 keep-alive connections each (redis: GET of one of 10000 keys of 256 bytes; nginx: "
            "GET of a 900-byte file)"
            % (lab.REPLICAS, self.cpu, self.other_cpu, lab_services.LOAD_RT_PRIORITY, self.args.rate),
            "- per row, %d cycles of three phases of %g s, pooled: quiet (the antagonist frozen), uncapped, capped "
            "by hand (%g CPU-sec/sec in %d us periods, cpu.shares 2, cpu.idle 1); %g s left out after each change; "
            "the antagonist's cpu.shares 1024 a worker, %g s of it running unmeasured first"
            % (
                self.args.cycles,
                self.args.phase_s,
                BATCH_CAP,
                lab_loop.CAP_PERIOD_US,
                self.args.settle_s,
                self.args.antagonist_warmup_s,
            ),
        ]

    def table(self):
        head = (
            "| service | antagonist | workers | placement | p99 quiet us | p99 uncapped us (x) | p99 capped us (x) "
            "| own work per request quiet / uncapped / capped | pressure quiet / uncapped / capped "
            "| antagonist CPU uncapped / capped | other load victims' CPU / other CPU | hurts | cap fixes | reaches |"
        )
        lines = [head, "|" + "---|" * (head.count("|") - 1)]
        for r in self.results:
            q, u, c = r["quiet"], r["uncapped"], r["capped"]
            key = "own_us_per_op" if r["work_measure"] == "own time" else "cpu_us_per_op"
            lines.append(
                "| %s | %s | %d | %s | %.0f | %.0f (%.2f) | %.0f (%.2f) | %s %.1f / %.1f / %.1f us (%.2f) "
                "| %.2f / %.2f / %.2f (p90 %.2f / %.2f / %.2f) | %.2f / %.2f | %.2f / %.2f | %s | %s | %s |"
                % (
                    r["service"],
                    r["antagonist"],
                    r["threads"],
                    r["placement"],
                    q["p99_us"],
                    u["p99_us"],
                    r["uncapped_x"],
                    c["p99_us"],
                    r["capped_x"],
                    r["work_measure"],
                    q[key],
                    u[key],
                    c[key],
                    r["work_x"],
                    q["pressure"],
                    u["pressure"],
                    c["pressure"],
                    q["pressure_p90"],
                    u["pressure_p90"],
                    c["pressure_p90"],
                    u["antagonist_cpu"],
                    c["antagonist_cpu"],
                    max(q["other_load_victims_cpu"], u["other_load_victims_cpu"], c["other_load_victims_cpu"]),
                    max(q["other_load_other_cpu"], u["other_load_other_cpu"], c["other_load_other_cpu"]),
                    "yes" if r["hurts"] else "no",
                    ("yes" if r["cap_fixes"] else "no") if r["hurts"] else "-",
                    ("service" if r["reaches_service"] else "clients only") if r["placement"] == "other" else "-",
                )
            )
        return lines

    def write(self):
        with open(os.path.join(self.out, "calibration.json"), "w") as f:
            json.dump({"conditions": self.conditions(), "rows": self.results}, f, indent=1)
        text = ["## Calibration", ""] + self.conditions() + [""] + self.table()
        text += [
            "",
            "hurts: p99 uncapped >= %g x quiet; cap fixes: p99 capped <= %g x quiet; reaches (cross-core rows): the "
            "service's own time per request (redis INFO commandstats usec per GET) or, where it has none (nginx), "
            "its CPU per request rises >= %g x (else the interference reaches only its clients); pressure: the "
            "victims' mean v2 cpu.pressure some, share of the time, and the p90 of the replicas' 1 s windows; other load: the most, over the row's phases, "
            "of each CPU's busy time not used by the lab's victims, load generator and antagonist (CPU-sec/sec)"
            % (HURTS, CAPPED_WITHIN, REACHES),
        ]
        print("\n".join(text))
        if self.args.report:
            write_section(self.args.report, "calibration", text)
            print("lab: the table is in %s" % self.args.report)
        print("lab: every figure in %s/calibration.json" % self.out)


def write_section(path, name, lines):
    """Write lines between the file's <!-- NAME begin/end --> markers (appended when absent), so the
    findings written around them stay."""
    begin, end = "<!-- %s begin -->" % name, "<!-- %s end -->" % name
    old = open(path).read() if os.path.exists(path) else ""
    block = "\n".join([begin] + lines + [end])
    if begin in old and end in old:
        new = old[: old.index(begin)] + block + old[old.index(end) + len(end) :]
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + block + "\n"
    with open(path, "w") as f:
        f.write(new)


def run(args):
    why = lab_loop.cannot_run()
    if why:
        print("lab: cannot run here: %s" % why, file=sys.stderr)
        return 2
    cal = Calibration(args)
    if lab_loop.guarded(cal.run, cal.stop):
        return 130
    cal.write()
    return 0
