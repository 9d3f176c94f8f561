"""Runs the whole system on a scenario: the Flink job (fresh, reading only what this run
produces), cpi2-fleetsim playing the scenario into Kafka with its cgroup tree, one cpi2-enforcer
acting for every simulated host on that tree in simulated time, ClickHouse receiving
everything. Used by `make demo` and by the end-to-end tests."""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import requests
from confluent_kafka import Consumer, TopicPartition

from cpi2 import names
from cpi2.e2e.monitor import Monitor
from cpi2.testing import stack

ROOT = stack.ROOT

FLEETSIM = os.path.join(ROOT, "build", "c", "collectors", "fleetsim", "cpi2-fleetsim")
ENFORCER = os.path.join(ROOT, "build", "c", "enforcer", "cpi2-enforcer")
JOB_JAR = os.path.join(ROOT, "flink-jobs", "target", "cpi2-flink-jobs-0.1.0.jar")
REST = os.path.join(ROOT, "flink-jobs", "scripts", "flink-rest.sh")


def log(msg):
    print("e2e: " + msg, flush=True)


@contextlib.contextmanager
def ticking(what, every=20):
    """Says what a slow step does, then the time so far every `every` seconds until it ends, and
    the time it took (as stack/step.sh does for setup): nothing is silent for minutes."""
    t0, done = time.time(), threading.Event()

    def tick():
        while not done.wait(every):
            log("... %s: %.0f s so far" % (what, time.time() - t0))

    log(what + " ...")
    t = threading.Thread(target=tick, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()
    log("%s: done in %.0f s" % (what, time.time() - t0))


def apply_clickhouse_schema(database="cpi2"):
    """The schema into database; the cpi2 database also gets Telegraf's Kafka feed."""
    feed = ["--kafka-brokers", stack.KAFKA] if database == "cpi2" else []
    r = subprocess.run(
        [sys.executable, "-m", "cpi2.clickhouse.apply", "--url", stack.CLICKHOUSE, "--database", database] + feed,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode != 0:
        raise RuntimeError("clickhouse schema: " + r.stdout + r.stderr)


def cancel_running_jobs():
    jobs = requests.get(stack.FLINK + "/jobs/overview", timeout=10).json()["jobs"]
    for j in jobs:
        if j["state"] in ("RUNNING", "CREATED", "INITIALIZING", "RESTARTING"):
            requests.patch(stack.FLINK + "/jobs/%s?mode=cancel" % j["jid"], timeout=10)
            stack.wait_until(
                lambda jid=j["jid"]: (
                    requests.get(stack.FLINK + "/jobs/" + jid, timeout=10).json()["state"]
                    in ("CANCELED", "FAILED", "FINISHED")
                ),
                60,
                "job %s to cancel" % j["jid"],
            )


def rest(*args, timeout=180):
    """flink-rest.sh with this stack's environment; returns its last line of stdout."""
    # stack.env's ports, and the multi-node profile's KAFKA_BROKERS, JOB_PARALLELISM, KAFKA_DELIVERY
    env = dict(os.environ, **stack.E, STACK_DIR=stack.STACK_DIR)
    r = subprocess.run([REST] + list(args), capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("flink-rest.sh %s failed:\n%s" % (args[0], r.stderr))
    return r.stdout.strip().splitlines()[-1]


def fresh_group(purpose):
    """A new consumer group for a detection job: named cpi2-flink-*, the only groups the detector
    principal may join (stack/kafka/acls.conf); under another name every offset commit fails the
    job, which restarts from its checkpoint."""
    return "cpi2-flink-%s-%s" % (purpose, uuid.uuid4().hex[:8])


def commit_ends(kafka_conf, group, topics):
    """Commits the current end of every partition of topics as the offsets of consumer group
    group (which has no member yet): a consumer of the group that joins later starts there,
    however long its join takes, and reads everything produced from now on. A fresh group with
    auto.offset.reset=latest would instead start at the end of the moment it is assigned, and
    miss what was produced while it joined."""
    c = Consumer({**kafka_conf, "group.id": group, "enable.auto.commit": False})
    try:
        offsets = []
        for topic in topics:
            meta = c.list_topics(topic, timeout=30).topics[topic]
            if meta.error is not None:
                raise RuntimeError("topic %s: %s" % (topic, meta.error))
            for p in sorted(meta.partitions):
                _, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                offsets.append(TopicPartition(topic, p, high))
        c.commit(offsets=offsets, asynchronous=False)
    finally:
        c.close()


def job_options(extra_args=()):
    """A fresh job's options: it reads only what is produced from now on (its own consumer group)."""
    return [
        "--kafka.group",
        fresh_group("e2e"),
        "--kafka.start",
        "latest",
        "--checkpoint.interval-ms",
        "5000",
    ] + list(extra_args)


def submit_job(extra_args=(), options=None, savepoint="", jar=None):
    """Submits the job (the project's build, or another jar) from a savepoint if given, and
    returns its id once it runs."""
    # flink-rest.sh waits until every task of the job and of the loader runs (a minute or more for
    # transactional sinks on a loaded machine)
    with ticking("submitting the detection job and the loader to Flink (about a minute)"):
        jid = rest(
            "submit",
            jar or JOB_JAR,
            savepoint,
            *(options if options is not None else job_options(extra_args)),
            timeout=420,
        )
    time.sleep(3)  # the Kafka source resolves "latest" when its readers start
    return jid


def detector_vertex(job):
    """The vertex of the host-keyed chain (detector, correlator, judge) in a job's REST details."""
    return next((v for v in job["vertices"] if v["name"].startswith("Outlier and anomaly detector")), None)


def samples_read(jid):
    """(samples the job's host-keyed chain has taken in, the job's state), from Flink's REST API:
    the records the detector's vertex read from the network (every sample, and the rare actions).
    Not the source vertex's records out: it sends each sample twice (to the spec builder too)."""
    d = requests.get(stack.FLINK + "/jobs/" + jid, timeout=10).json()
    host = detector_vertex(d)
    return (host["metrics"].get("read-records", 0) if host else 0), d["state"]


class Run:
    """One scenario through the whole pipeline. Call start(), then wait(), then stop()."""

    def __init__(
        self,
        scenario,
        speed=60,
        duration=None,
        warmup=None,
        seed=1,
        workdir=None,
        job_args=(),
        fleetsim_args=(),
        enforcer_args=(),
        sample_hosts=(),
        settle_warmup=False,
        job_jar=None,
        start_s=None,
        align_end_s=None,
    ):
        """settle_warmup: play the warm-up first on its own, as fast as possible, and start the
        scripted part only once the job has read all of it (for large fleets, whose warm-up the
        job takes a while to read: otherwise the simulated clock runs ahead of the pipeline).
        job_jar: the job's jar (default: the project's build), e.g. an earlier build to compare.
        start_s: the simulated clock's start, Unix seconds (default the simulator's: now - warm-up,
        so the scripted part starts about now and runs ahead of the wall clock).
        align_end_s: with settle_warmup, the scripted part's simulated length (s): it starts where
        it ends when the wall clock does (now + length/speed - length), or right after the warm-up
        if that is later, so that "now" means the same to the fleet and to its operator at the end."""
        self.scenario, self.speed, self.duration, self.warmup, self.seed = scenario, speed, duration, warmup, seed
        self.settle_warmup = settle_warmup
        self.start_s = start_s
        self.align_end_s = align_end_s
        self.job_jar = job_jar or JOB_JAR
        self.job_args, self.fleetsim_args, self.enforcer_args = list(job_args), list(fleetsim_args), list(enforcer_args)
        self.sample_hosts = list(sample_hosts)  # the monitor keeps these hosts' samples
        self.dir = workdir or tempfile.mkdtemp(prefix="cpi2-e2e-%s-" % scenario)
        self.cgroot = os.path.join(self.dir, "cgroups")
        self.truth_path = os.path.join(self.dir, "truth.jsonl")
        self.sim = self.enforcer = None
        self.monitor = None
        self.job = None

    def start(self, fresh_job=True):
        for b in (FLEETSIM, ENFORCER, self.job_jar):
            if not os.path.exists(b):
                raise RuntimeError("%s is not built (make build)" % b)
        stack.ensure_up()
        apply_clickhouse_schema()
        if fresh_job:
            cancel_running_jobs()
            self.options = job_options(self.job_args)
            self.job = submit_job(options=self.options, jar=self.job_jar)
            log("flink job %s running" % self.job)
        self.monitor = Monitor(stack.kafka_conf("admin"), sample_hosts=self.sample_hosts)
        self.monitor.join()  # before anything is produced
        warmup = ["--warmup", self.warmup] if self.warmup else []
        if self.start_s is not None:
            warmup += ["--start", "%d" % self.start_s]
        if self.settle_warmup:
            start = self.play_warmup(warmup)
            if self.align_end_s is not None:
                start = max(start, int(time.time() + self.align_end_s / self.speed - self.align_end_s) // 60 * 60)
            warmup = ["--warmup", "0", "--start", "%d" % start]
        cmd = [
            FLEETSIM,
            "-s",
            self.scenario,
            "--speed",
            str(self.speed),
            "--seed",
            str(self.seed),
            "--cgroup-root",
            self.cgroot,
            "--truth",
            self.truth_path,
            "--brokers",
            stack.KAFKA,
            "--progress",
            "5",
        ]
        cmd += stack.agent_kafka_args("collector")
        if self.duration:
            cmd += ["--duration", self.duration]
        cmd += warmup + self.fleetsim_args
        # The enforcer (started once the simulator's cgroup tree exists) reads its topics from
        # their end before the scenario plays, not from wherever they end once its group has
        # joined: an incident the job publishes while it joins (the first seconds of a run,
        # hundreds of simulated seconds when faster than real time) is acted on.
        group = "cpi2-enforcer-e2e-" + uuid.uuid4().hex[:8]
        commit_ends(stack.kafka_conf("enforcer"), group, [names.INCIDENTS, names.CONTROL])
        self.sim_log = open(os.path.join(self.dir, "fleetsim.log"), "w")
        self.sim = subprocess.Popen(cmd, stdout=self.sim_log, stderr=subprocess.STDOUT)
        stack.wait_until(
            lambda: os.path.exists(os.path.join(self.cgroot, "clock")) or self.sim.poll() is not None,
            120,
            "the simulator's cgroup tree",
        )
        if self.sim.poll() is not None:
            raise RuntimeError("cpi2-fleetsim exited:\n" + open(self.sim_log.name).read()[-3000:])
        self.enf_log = open(os.path.join(self.dir, "enforcer.log"), "a")
        self.enforcer_cmd = [
            ENFORCER,
            "--sim-hosts-root",
            self.cgroot,
            "--clock-file",
            os.path.join(self.cgroot, "clock"),
            "--state-dir",
            os.path.join(self.dir, "enforcer-state"),
            "--brokers",
            stack.KAFKA,
            "--group-id",
            group,
            "-X",
            "auto.offset.reset=latest",
        ]
        self.enforcer_cmd += stack.agent_kafka_args("enforcer")
        self.enforcer_cmd += self.enforcer_args
        self.start_enforcer()
        log("playing %s at %sx (work dir %s)" % (self.scenario, self.speed, self.dir))

    def play_warmup(self, warmup):
        """The warm-up alone, at full speed; returns once the job has read all of it, with the
        simulated time (s) where it ended, for the scripted part to start at."""
        truth = os.path.join(self.dir, "warmup.truth.jsonl")
        cmd = (
            [
                FLEETSIM,
                "-s",
                self.scenario,
                "--seed",
                str(self.seed),
                "--duration",
                "0",
                # at full speed the producer's queue runs ahead of a loaded broker: the final flush
                # waits for all of it (the default 10 s left 37092 of 116280 unsent at load 35)
                "--flush-timeout",
                "300",
                "--truth",
                truth,
                "--brokers",
                stack.KAFKA,
            ]
            + stack.agent_kafka_args("collector")
            + warmup
            + self.fleetsim_args
        )
        path = os.path.join(self.dir, "fleetsim-warmup.log")
        with open(path, "w") as f, ticking("publishing the warm-up (%s) at full speed" % self.scenario):
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=1800)
        text = open(path).read()
        done = re.findall(r"done: (\d+) samples", text)
        if r.returncode != 0 or not done:
            raise RuntimeError("cpi2-fleetsim (warm-up) failed:\n" + text[-3000:])
        n = int(done[-1])
        with open(truth) as t:
            end_us = json.loads(t.readline())["warmup_end_us"]
        log("warm-up: %d samples published; waiting until the job has read them" % n)
        t0 = time.time()

        said = [t0]

        def read_all():
            self.monitor.poll(1)  # follows the outputs meanwhile: the consumer stays in its group
            read = samples_read(self.job)[0]
            if time.time() - said[0] >= 20:
                said[0] = time.time()
                log("... the job has read %d of the warm-up's %d samples (%.0f s)" % (read, n, time.time() - t0))
            return read >= n

        stack.wait_until(read_all, 1200, "the job to read the warm-up's %d samples" % n, interval=1)
        log("the job read the warm-up in %.0f s" % (time.time() - t0))
        return end_us // 1_000_000

    def start_enforcer(self):
        """Starts the enforcer (again: same state folder and consumer group, as after a crash)."""
        self.enforcer = subprocess.Popen(self.enforcer_cmd, stdout=self.enf_log, stderr=subprocess.STDOUT)

    def kill_enforcer(self):
        """kill -9: no chance to lift its caps or write anything more."""
        self.enforcer.send_signal(signal.SIGKILL)
        self.enforcer.wait(30)
        log("enforcer killed with SIGKILL")

    def restart_from_savepoint(self):
        """Stops the job with a savepoint and resumes it from there with the same options (an
        upgrade in place); returns the savepoint's path."""
        savepoint = rest("stop")
        log("job %s stopped with savepoint %s" % (self.job, savepoint))
        self.job = submit_job(options=self.options, savepoint=savepoint, jar=self.job_jar)
        log("job %s resumed from it" % self.job)
        return savepoint

    def running(self):
        return self.sim is not None and self.sim.poll() is None

    def poll_until(self, pred, timeout):
        """Follows the output topics until pred(monitor) holds, the scenario ends or timeout
        seconds pass; returns pred's last answer."""
        deadline = time.time() + timeout
        while self.running() and time.time() < deadline and not pred(self.monitor):
            self.monitor.poll(1)
        return pred(self.monitor)

    def wait(self, timeout, progress=None, settle=20):
        """Until the simulator ends (bounded), then settle seconds more for the pipeline to drain."""
        deadline = time.time() + timeout
        while self.running() and time.time() < deadline:
            self.monitor.poll(1)
            if progress:
                progress(self)
        if self.running():
            raise RuntimeError("the scenario did not end within %ss; logs in %s" % (timeout, self.dir))
        if self.sim.returncode != 0:
            raise RuntimeError("cpi2-fleetsim failed:\n" + open(self.sim_log.name).read()[-3000:])
        end = time.time() + settle
        while time.time() < end:
            self.monitor.poll(1)

    def stop(self):
        if self.enforcer and self.enforcer.poll() is None:
            self.enforcer.send_signal(signal.SIGTERM)
            self.enforcer.wait(30)
        if self.sim and self.sim.poll() is None:
            self.sim.send_signal(signal.SIGTERM)
            self.sim.wait(30)
        if self.monitor:
            self.monitor.poll(2)
            self.monitor.close()

    def truth(self):
        with open(self.truth_path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def published(self):
        """The simulator's final count of samples, all acknowledged when it exits 0."""
        for line in reversed(open(self.sim_log.name).read().splitlines()):
            if " done: " in line:
                return int(line.split(" done: ")[1].split()[0])
        raise AssertionError("no final line in %s" % self.sim_log.name)

    def stored_samples(self):
        """(rows, distinct samples) of this run's time span in cpi2.samples, before merging."""
        truth = self.truth()[0]
        where = "window_start_us >= %d AND window_start_us <= %d" % (truth["start_us"], truth["end_us"])
        rows, distinct = stack.query(
            "SELECT count(), uniqExact(host, task, window_start_us) FROM cpi2.samples WHERE " + where
        ).split()
        return int(rows), int(distinct)

    def stored_samples_final(self):
        """This run's samples in cpi2.samples under FINAL (one row per sample once merged)."""
        truth = self.truth()[0]
        where = "window_start_us >= %d AND window_start_us <= %d" % (truth["start_us"], truth["end_us"])
        return int(stack.query("SELECT count() FROM cpi2.samples FINAL WHERE " + where))

    def sim_progress(self):
        """The simulator's last progress line."""
        lines = [line for line in open(self.sim_log.name).read().splitlines() if " sim " in line]
        return lines[-1] if lines else ""

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
