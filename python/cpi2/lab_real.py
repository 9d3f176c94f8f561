"""The real-service lab end to end (`make lab SERVICES=redis,nginx`, `python -m cpi2.lab services`):
the loop of `make lab` (cpi2.lab_loop: the real collector, Kafka, the detection job with the
1-second profile, the real enforcer) with real servers as the victims and real batch work as the
antagonists.

For each service kind, one run: its REPLICAS replicas (server and exporter in one cgroup each,
cpi2.lab_services) on the victims' CPU, the job `lab-<kind>-<id>`, latency-sensitive;
cpi2-lab-load on the other CPU at --rate requests/s to each replica for the whole run (the
victims' latency as their clients see it); the bystanders of make lab on the other CPU; then,
once the job has a usable spec of the victims, one on-phase per antagonist row of --rows (a
stress-ng stressor or ibench kernel, its workers, the victims' CPU or the other), each a batch
task of its own (`antagonist-N`, cpu.shares 1024 a worker), --on-s on and --off-s off.

The table adds, per row: whether the calibration (--calibration, calibration.json of `python -m
cpi2.lab calibrate`) found that it hurts the victims (p99 at least 1.5 x quiet) and, cross-core,
whether it reaches the service's own work; for each signal (cpu_pressure, cpu_per_op, latency)
the first incident of the run's victims while it ran, its decision and when (seconds after the
antagonist's start), and the first that named it; the onset-to-cap; the victims' p99 while it ran
uncapped and capped, over their p99 while no antagonist ran. The checks of make lab (named and
capped within --max-onset-to-cap, capped p99 within --capped-within x, uncapped at least
--min-uncapped-ratio x) judge the rows that hurt and, cross-core, reach the service (without
--calibration: every row); nothing other than the antagonists is ever capped, in any row.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from cpi2 import lab, lab_calibrate, lab_loop, lab_services

SIGNALS = ("cpu_pressure", "cpu_per_op", "latency")


def calibration_rows(path):
    """{(service, antagonist, workers, placement): row} of a calibration.json, {} without one."""
    if not path:
        return {}
    with open(path) as f:
        rows = json.load(f)["rows"]
    return {(r["service"], r["antagonist"], r["threads"], r["placement"]): r for r in rows}


class ServiceLab(lab_loop.Lab):
    def __init__(self, args, kind):
        self.kind = kind
        self.rows = lab_calibrate.parse_rows(args.rows)
        args.schedule = ",".join(["%g" % args.quiet_s] + ["%g,%g" % (args.on_s, args.off_s)] * len(self.rows))
        super().__init__(args)
        self.victim_job = "lab-%s-%s" % (kind, self.run_id)
        self.calibration = calibration_rows(args.calibration)
        self.services = self.load = None
        self.load_rows = None
        self.workdir = tempfile.mkdtemp(prefix="cpi2-lab-%s-" % kind)
        self.load_csv = os.path.join(self.out, "load.csv")
        self.load_json = os.path.join(self.out, "load.json")
        lab_services.ensure_packages(["stress-ng", kind])
        load_bin = os.path.join(args.build or str(lab_loop.ROOT / "build" / "c"), "lab", "cpi2-lab-load")
        if not os.access(load_bin, os.X_OK):
            raise SystemExit("lab: %s missing (make build)" % load_bin)
        self.bins["load"] = load_bin
        # chosen now: the labels file, written before the servers start, names the exporters
        self.ports = {n: (lab_services.free_port(), lab_services.free_port()) for n in self.victim_names()}
        help_text = subprocess.run([self.bins["collector"], "--help"], capture_output=True, text=True).stdout
        self.scrapes = "--scrape" in help_text

    def victim_names(self):
        return ["%s-%d" % (self.kind, i) for i in range(lab.REPLICAS)]

    def victim_label_lines(self):
        """The replicas, latency-sensitive, each with its exporter to scrape where the collector
        scrapes (cpu_per_op and latency)."""
        out = []
        for i, name in enumerate(self.victim_names()):
            opts = lab_services.scrape_options(self.kind, self.ports[name][1]) if self.scrapes else []
            out.append(" ".join(["%s %s %d latency_sensitive" % (name, self.victim_job, i)] + opts))
        return out

    def start_victims(self, total):
        self.services = lab_services.Services([self.kind], lab.REPLICAS, self.cpu, self.workdir, self.ports)
        try:
            self.services.start()
        finally:
            self.procs.extend(self.services.procs)
        argv = lab_services.load_argv(
            self.bins["load"], self.kind, self.services.replicas, self.args.rate, self.other_cpu, self.load_csv
        )
        self.load = lab.start_in(
            lab.Cgroup("load", v1=False),
            argv + ["--duration-s", str(total)],
            stdout=open(self.load_json, "w"),
            stderr=open(os.path.join(self.out, "load.log"), "w"),
        )
        self.procs.append(self.load)
        self.started = time.time()

    def antagonist_argv(self, n):
        name, threads, placement = self.rows[n]
        cpu = self.cpu if placement == "same" else self.other_cpu
        return lab_services.antagonist_argv(name, threads, cpu, self.bins["ibench"], self.workdir)

    def antagonist_shares(self, n):
        return 1024 * self.rows[n][1]

    def play(self):
        for n, (name, threads, placement) in enumerate(self.rows):
            print("lab: antagonist-%d: %s, %d workers, %s CPU" % (n, name, threads, placement))
        super().play()

    def stop(self):
        super().stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # --- what happened ----------------------------------------------------------------------

    def requests(self):
        """The load generator's rows, (due wall s, latency us, target, ok), once it has ended."""
        if self.load_rows is None:
            with open(self.load_json) as f:
                start = lab_services.load_report(f.read())["start_unix_us"] / 1e6
            self.load_rows = lab_services.read_load(self.load_csv, start)
        return self.load_rows

    def latencies(self):
        return sorted((due, lat) for due, lat, _t, ok in self.requests() if ok)

    def drained(self, t):
        """When every replica's queue is empty again after t: the latest, over the replicas, due
        time of its first request after t answered within one request interval."""
        interval_us = 1e6 / self.args.rate
        first = {}
        for due, lat, target, ok in self.requests():
            if due >= t and ok and lat < interval_us and (target not in first or due < first[target]):
                first[target] = due
        return max(first.values(), default=t)

    def row_of(self, n):
        name, threads, placement = self.rows[n]
        return self.calibration.get((self.kind, name, threads, placement))

    def claimed(self, n):
        """Whether row n is judged: it hurts the victims in the calibration (and, cross-core,
        reaches the service's own work); every row without a calibration."""
        if not self.calibration:
            return True
        c = self.row_of(n)
        if c is None:
            return False
        return c["hurts"] and (c["placement"] == "same" or c["reaches_service"])

    def judged(self):
        return {n for n in range(len(self.antagonists)) if self.claimed(n)}

    def check(self, rows, quiet_p99, onsets, caps, incidents):
        """make lab's checks, and: an antagonist the calibration finds harmless to the victims
        (p99 under 1.5 x quiet beside it) is never capped (a cap there is a wrong one, whatever
        else its row shows)."""
        failed = super().check(rows, quiet_p99, onsets, caps, incidents)
        for n, (task, d) in enumerate(onsets):
            c = self.row_of(n)
            if d is not None and c is not None and not c["hurts"]:
                failed.append(
                    "%s was capped %.2f s after its start, though the calibration finds it does not hurt "
                    "the victims (p99 x%.2f beside it)" % (task, d, c["uncapped_x"])
                )
        return failed

    def signal_mean(self, signal, spans):
        """The victims' mean value of signal over the collector's 1 s windows inside spans."""
        v = []
        for (host, task), rows in self.monitor.signals.items():
            if host == self.host and task in self.victim_names():
                for ws, values in rows:
                    t = ws / 1e6
                    if values.get(signal) is not None and any(a <= t and t + 1 <= b for a, b in spans):
                        v.append(values[signal])
        return sum(v) / len(v) if v else None

    def more_lines(self, lat, phases, caps, incidents):
        by_name = {name: (t0, t1) for name, t0, t1 in phases}
        quiet = [x for at, x in lat if any(t0 <= at < t1 for n, t0, t1 in phases if "capped" not in n)]
        quiet_p99 = lab.nearest_rank(quiet, 99)
        out = [
            "",
            "per antagonist (%s, %d replicas at %g requests/s; the first incident of each signal while it ran, "
            "s after its start: decision -> task; 'named' the first that named it)"
            % (
                self.kind,
                lab.REPLICAS,
                self.args.rate,
            ),
        ]
        for n, (task, t0, t1) in enumerate(self.antagonists):
            name, threads, placement = self.rows[n]
            c = self.row_of(n)
            cal = (
                "calibration: p99 x%.2f uncapped, x%.2f capped, own work x%.2f"
                % (c["uncapped_x"], c["capped_x"], c["work_x"])
                if c
                else "no calibration row"
            )
            calm = [(a, b) for name_, a, b in phases if "capped" not in name_]
            on = [(a, b) for name_, a, b in phases if name_ == "on-%d uncapped" % n]
            sig = []
            for s in SIGNALS:
                before, during = self.signal_mean(s, calm), self.signal_mean(s, on)
                level = (
                    "%.4g -> %.4g (x%.2f)" % (before, during, during / before)
                    if before and during is not None
                    else "not measured"
                )
                mine = sorted(
                    (i for i in incidents if i.get("signal") == s and t0 <= i["detected_at_us"] / 1e6 <= t1 + 2),
                    key=lambda i: i["detected_at_us"],
                )
                named = [i for i in mine if i.get("antagonist_task") == task]
                if not mine:
                    sig.append("%s %s: no incident" % (s, level))
                    continue
                first = mine[0]
                sig.append(
                    "%s %s: %.1f s %s->%s%s"
                    % (
                        s,
                        level,
                        first["detected_at_us"] / 1e6 - t0,
                        first["decision"],
                        first.get("antagonist_task") or "-",
                        "; named at %.1f s" % (named[0]["detected_at_us"] / 1e6 - t0) if named else "; never named",
                    )
                )
            spans = [s for s in caps.get(task, []) if t0 <= s[0] <= t1]
            ratios = []
            for phase in ("uncapped", "capped"):
                t = by_name.get("on-%d %s" % (n, phase))
                v = [x for at, x in lat if t and t[0] <= at < t[1]]
                ratios.append(
                    "%s p99 x%.2f" % (phase, lab.nearest_rank(v, 99) / quiet_p99) if v else "%s: none" % phase
                )
            out.append(
                "%s %s/%d@%s [%s] %s; cap %s; %s; %s"
                % (
                    task,
                    name,
                    threads,
                    placement,
                    "judged" if n in self.judged() else "not claimed",
                    cal,
                    "%.2f s after its start" % (spans[0][0] - t0) if spans else "none",
                    ", ".join(ratios),
                    "; ".join(sig),
                )
            )
        return out


def run(args):
    why = lab_loop.cannot_run()
    if why:
        print("lab: cannot run here: %s" % why, file=sys.stderr)
        return 2
    failed_kinds = []
    base_out = lab_loop.run_folder(args.out) if args.out else None
    for kind in [k.strip() for k in args.services.split(",") if k.strip()]:
        if kind not in lab_services.KINDS:
            raise SystemExit("lab: --services: %r is not one of %s" % (kind, ", ".join(lab_services.KINDS)))
        args.out = os.path.join(base_out, kind) if base_out else None
        lb = ServiceLab(args, kind)
        if lab_loop.guarded(lambda lb=lb: (lb.setup(), lb.play()), lb.stop):
            return 130
        result = lb.report()
        failed = lb.check(*result)
        for f in failed:
            print("lab: %s: FAILED: %s" % (kind, f))
        print("lab: %s: %s" % (kind, "every check holds" if not failed else "%d check(s) failed" % len(failed)))
        if failed:
            failed_kinds.append(kind)
    return 1 if failed_kinds else 0
