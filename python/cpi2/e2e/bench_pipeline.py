"""Benchmark: end-to-end throughput and lag of the Flink job, with cpi2-fleetsim as the source.

A fresh job (the job's defaults, ClickHouse sinks on as deployed) reads only what this run
produces into cpi2.samples. Two phases:

1. capacity: cpi2-fleetsim publishes a fleet as fast as it can; the figure is samples taken in
   by the job's host-keyed chain (detector, correlator, judge) per second, from the simulator's
   start until the job has taken in every sample it published.
2. lag at the target rate: cpi2-fleetsim publishes at the target rate (its --speed set from the
   scenario's task count) for BENCH_LAG_WARMUP_S, then BENCH_LAG_S seconds; the figures are of
   the second part, with the warm-up's beside them. A young job's JVMs compile for minutes: on a
   freshly started stack the JIT compilers of the TaskManager and Kafka take a large share of the
   CPU, which a cluster that runs for days pays once; the warm-up keeps that apart from the
   sustained rate's lag, and reports it.
   Its simulated time starts where phase 1's
   ended, so its samples are live for the job, not behind its watermark. Ten times a second the
   bench reads how many samples Kafka holds (the partitions' end offsets) and how many the job
   has taken in (Flink's REST metrics). Each time the job's count changes, the lag is how long ago
   the last sample it counts reached Kafka: the time the new count was seen minus the time
   Kafka's count passed it (interpolated between polls). The count was taken before it was seen,
   so this errs only long, by the count's age when seen: Flink's JobManager fetches it from the
   TaskManager once per metrics.fetcher.update-interval (1 s in the stack's config), when a REST
   request finds its copy older, and the next request after the fetch gets it, so a new count is
   seen about one poll (0.1 s) after it was taken; and when the job has caught up, the time it
   then sat idle counts too. Reported: p50, p99 and max, and beside them
   the earlier figure, the backlog (samples in Kafka minus samples counted, at every poll) over
   the rate, which errs long by the count's age at every poll (up to the 1 s between fetches).

The job writes to a throw-away ClickHouse database (cpi2_bench: the schema applied fresh, dropped
at the end), so the figures do not depend on what earlier runs left in cpi2 and no background
merge of this run's rows outlives it to slow the next benchmark. Each phase also reports the CPU
each server used per sample (from /proc), which says where the cores went.

Targets (issue 4): at least 100,000 samples/s end to end, lag under 2 s at p99.
The default fleet, bench100k (102,000 tasks on 4000 hosts), reaches 100,000 samples/s at
--speed 60: event time passes 60 times as fast as for a real fleet of that size, where fleet300
(7650 tasks) would need --speed 784 and so 13 times more of the job's per-period work (watermarks,
timers, spec folds, rollup rows) per sample.

The stack may be the single-node profile or the multi-node one (stack/multi.env: several Kafka
brokers, TaskManagers and ClickHouse nodes): a server's members (kafka, kafka-1, ...) count
together, and each phase ends with the figures of the capacity model (stack/CAPACITY.md): samples/s
per TaskManager core, Kafka's cores per 1,000 samples/s (all brokers, and per broker), and at the
end ClickHouse's rows stored per CPU-second of all its nodes (replicas included).

Environment: BENCH_SCENARIO (bench100k), BENCH_DURATION (40m simulated, phase 1), BENCH_RATE
(100000), BENCH_LAG_S (60), BENCH_PARALLELISM (the profile's JOB_PARALLELISM, else 2: both
cores), BENCH_JOB_ARGS (more job options),
BENCH_LAG_WARMUP_S (120), BENCH_SIM_ARGS (more cpi2-fleetsim options, e.g. -X linger.ms=5),
BENCH_LAG_SERIES (a file for phase 2's lags: seconds into the phase, lag, backlog over the rate).
"""

import bisect
import os
import re
import resource
import shlex
import subprocess
import sys
import time

import requests
from confluent_kafka import Consumer, TopicPartition

from cpi2 import names
from cpi2.clickhouse import chclient, schema
from cpi2.e2e import pipeline
from cpi2.e2e.pipeline import stack

SCENARIO = os.environ.get("BENCH_SCENARIO", "bench100k")
DURATION = os.environ.get("BENCH_DURATION", "40m")
RATE = float(os.environ.get("BENCH_RATE", "100000"))
LAG_S = float(os.environ.get("BENCH_LAG_S", "60"))
WARMUP_S = float(os.environ.get("BENCH_LAG_WARMUP_S", "120"))
PARALLELISM = os.environ.get("BENCH_PARALLELISM", stack.E.get("JOB_PARALLELISM", "2"))
SERIES = open(os.environ["BENCH_LAG_SERIES"], "w") if os.environ.get("BENCH_LAG_SERIES") else None
LOG = "/tmp/cpi2-bench-fleetsim.log"
DATABASE = "cpi2_bench"
TICK = os.sysconf("SC_CLK_TCK")


def stat_cpu(path):
    """(name, CPU seconds so far) from a /proc stat file: a process's or a thread's."""
    stat = open(path).read()
    fields = stat.rsplit(")", 1)[1].split()  # fields[0] is field 3 (state); utime, stime are 14, 15
    return stat[stat.index("(") + 1 : stat.rindex(")")], (int(fields[11]) + int(fields[12])) / TICK


def process_cpu(pid):
    """CPU seconds of a running process so far (/proc), or None once it is gone."""
    try:
        return stat_cpu("/proc/%d/stat" % pid)[1]
    except OSError:
        return None


# Parts of a server's CPU, by the names of its threads (/proc/PID/task/TID/comm, 15 characters):
# ClickHouse's inserts and background merges, the TaskManager's JIT compilers and GC.
THREAD_PARTS = {
    "clickhouse": (("inserts", ("HTTPHandler",)), ("merges", ("BackgrProcPool",))),
    "flink-taskmanager": (("JIT", ("C1 CompilerThre", "C2 CompilerThre")), ("GC", ("G1 ", "GC Thread", "VM Thread"))),
}


def thread_cpu(pid, parts):
    """{part: {thread id: CPU seconds so far}} of the process's threads whose names start so."""
    out = {name: {} for name, _ in parts}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            comm, cpu = stat_cpu("/proc/%d/task/%s/stat" % (pid, tid))
        except OSError:
            continue  # the thread ended
        for name, prefixes in parts:
            if comm.startswith(prefixes):
                out[name][tid] = cpu
    return out


def server_of(member):
    """The server a member of the stack belongs to: kafka-2 -> kafka, flink-taskmanager-1 ->
    flink-taskmanager (member 0 has the server's own name)."""
    return re.sub(r"-\d+$", "", member)


def members():
    """{server: number of its members running} (pid files whose process is alive)."""
    out = {}
    for name, pid in stack.pids().items():
        if process_cpu(pid) is not None:
            out[server_of(name)] = out.get(server_of(name), 0) + 1
    return out


def cpu_seconds(running_sim=None):
    """{server: CPU seconds so far} for the stack's servers, their members summed, and the
    simulators this process ran (those it waited for, and running_sim's so far); "server/part":
    {(pid, thread): seconds} for the THREAD_PARTS."""
    out = {}
    for name, pid in stack.pids().items():
        cpu = process_cpu(pid)
        if cpu is not None:
            server = server_of(name)
            out[server] = out.get(server, 0) + cpu
            for part, threads in thread_cpu(pid, THREAD_PARTS.get(server, ())).items():
                out.setdefault(server + "/" + part, {}).update({(pid, tid): c for tid, c in threads.items()})
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["cpi2-fleetsim"] = ru.ru_utime + ru.ru_stime + ((process_cpu(running_sim.pid) or 0) if running_sim else 0)
    return out


def cpu_used(before, after, k):
    """CPU seconds of server (or server/part) k between two cpu_seconds(). A part counts the
    threads alive at the end (one that ended in between is left out); the server's total counts
    every thread."""
    if k not in after:
        return 0.0
    if isinstance(after[k], dict):
        return sum(cpu - before.get(k, {}).get(tid, 0) for tid, cpu in after[k].items())
    return after[k] - before.get(k, 0)


def cpu_per_sample(before, after, samples):
    """'server x.x µs (part y.y, ...)' for each server's CPU per sample between two cpu_seconds()
    (all its members)."""

    def used(k):
        return cpu_used(before, after, k)

    out = []
    for k in ("flink-taskmanager", "clickhouse", "kafka", "zookeeper", "cpi2-fleetsim", "flink-jobmanager"):
        if k in after:
            parts = [
                "%s %.1f" % (part, used(k + "/" + part) / samples * 1e6)
                for part, _ in THREAD_PARTS.get(k, ())
                if k + "/" + part in after
            ]
            out.append("%s %.1f%s" % (k, used(k) / samples * 1e6, " (%s)" % ", ".join(parts) if parts else ""))
    return "CPU per sample (µs): " + ", ".join(out)


def model_figures(before, after, samples, seconds):
    """The capacity model's figures of one phase (stack/CAPACITY.md): samples/s per TaskManager
    core, and Kafka's cores per 1,000 samples/s, all brokers and per broker, from the CPU the
    servers used between two cpu_seconds() over the samples of the phase."""
    n = members()
    tm, kafka = cpu_used(before, after, "flink-taskmanager"), cpu_used(before, after, "kafka")
    brokers = n.get("kafka", 1)
    return (
        "capacity model: %.0f samples/s per TaskManager core (%d TaskManager(s) used %.2f cores);"
        " Kafka %.4f cores per 1,000 samples/s (%d broker(s): %.4f each)"
        % (
            samples / tm if tm else float("nan"),
            n.get("flink-taskmanager", 0),
            tm / seconds,
            kafka / samples * 1000,
            brokers,
            kafka / samples * 1000 / brokers,
        )
    )


def stored_rows(database):
    """Rows the job stored in database, each counted once: over its Distributed tables when
    there are any (the cluster layout: each row is in one shard, on every replica), else over
    its MergeTree tables."""
    tables = stack.query(
        "SELECT engine, name FROM system.tables WHERE database = '%s' AND (engine = 'Distributed'"
        " OR engine LIKE '%%MergeTree') AND NOT startsWith(name, '.inner')" % database
    ).splitlines()
    by_engine = [line.split("\t") for line in tables if line]
    names_ = [t for e, t in by_engine if e == "Distributed"] or [t for e, t in by_engine]
    return sum(int(stack.query("SELECT count() FROM %s.`%s`" % (database, t))) for t in names_)


def profile():
    """The stack's profile, as stack.env (or $STACK_ENV) says: absent keys mean one of each."""
    e = stack.E
    return (
        "%s Kafka broker(s) (replication %s, min.insync %s), %s TaskManager(s) of %s, ClickHouse %s shard(s) x %s replica(s)"
        % (
            e.get("KAFKA_BROKERS", "1"),
            e.get("KAFKA_REPLICATION_FACTOR", "1"),
            e.get("KAFKA_MIN_INSYNC_REPLICAS", "1"),
            e.get("FLINK_TASKMANAGERS", "1"),
            e.get("FLINK_TM_PROCESS_MEMORY", "?"),
            e.get("CLICKHOUSE_SHARDS", "1"),
            e.get("CLICKHOUSE_REPLICAS", "1"),
        )
    )


def published_offsets(consumer):
    """The sum of cpi2.samples' partitions' end offsets."""
    md = consumer.list_topics(names.SAMPLES, timeout=10)
    return sum(
        consumer.get_watermark_offsets(TopicPartition(names.SAMPLES, p), timeout=10)[1]
        for p in md.topics[names.SAMPLES].partitions
    )


def seconds_of(duration):
    """Seconds of a fleetsim duration: 90, 90s, 40m, 2h."""
    m = re.fullmatch(r"(\d+)([smh]?)", duration)
    if not m:
        raise SystemExit("pipeline bench: BENCH_DURATION %r is not N, Ns, Nm or Nh" % duration)
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def fleetsim(speed, duration, start_s):
    """cpi2-fleetsim from simulated time start_s: each phase starts where the one before ended, so
    that its samples are live for the job (ahead of its watermark), not late."""
    return subprocess.Popen(
        [
            pipeline.FLEETSIM,
            "-s",
            SCENARIO,
            "--speed",
            speed,
            "--warmup",
            "0",
            "--duration",
            duration,
            "--start",
            str(start_s),
            "--brokers",
            stack.KAFKA,
            "--progress",
            "1",
            "--truth",
            "/tmp/cpi2-bench-fleetsim.truth.jsonl",
        ]
        + stack.agent_kafka_args("collector")
        + shlex.split(os.environ.get("BENCH_SIM_ARGS", "")),
        stdout=open(LOG, "w"),
        stderr=subprocess.STDOUT,
    )


def tasks_of_scenario():
    """The scenario's task count, from a one-minute dry run's first line."""
    out = subprocess.run(
        [
            pipeline.FLEETSIM,
            "-s",
            SCENARIO,
            "--dry-run",
            "--warmup",
            "0",
            "--duration",
            "1m",
            "--speed",
            "max",
            "--truth",
            "none",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"(\d+) tasks", out.stdout + out.stderr).group(1))


def taken_in(jid):
    n, state = pipeline.samples_read(jid)
    if state != "RUNNING":
        raise SystemExit("pipeline bench: the job is %s" % state)
    return n


def wait_taken_in(jid, target, stalled_s=60):
    last, since = -1, time.time()
    while True:
        n = taken_in(jid)
        if n >= target:
            return time.time()
        if n != last:
            last, since = n, time.time()
        elif time.time() - since > stalled_s:
            raise SystemExit("pipeline bench: the job stopped at %d of %d samples" % (n, target))
        time.sleep(0.2)


def capacity(jid, consumer, start_s):
    base = published_offsets(consumer)
    cpu0 = cpu_seconds()
    t0 = time.time()
    sim = fleetsim("max", DURATION, start_s)
    if sim.wait() != 0:
        raise SystemExit("pipeline bench: cpi2-fleetsim failed; see " + LOG)
    published = published_offsets(consumer) - base
    t1 = wait_taken_in(jid, published)
    cpu1 = cpu_seconds()
    return published, t1 - t0, cpu_per_sample(cpu0, cpu1, published), model_figures(cpu0, cpu1, published, t1 - t0)


class TakenIn:
    """Samples the detector's vertex has taken in: its records in, summed over its subtasks, from
    the REST API's metric store (lighter for the JobManager than the whole job's details)."""

    def __init__(self, jid):
        d = requests.get(stack.FLINK + "/jobs/" + jid, timeout=10).json()
        vid = pipeline.detector_vertex(d)["id"]
        self.url = "%s/jobs/%s/vertices/%s/subtasks/metrics" % (stack.FLINK, jid, vid)

    def __call__(self):
        got = requests.get(self.url, params={"get": "numRecordsIn", "agg": "sum"}, timeout=10).json()
        return int(got[0]["sum"]) if got else 0


def published_at(times, counts, n):
    """When Kafka's count of samples passed n, from the polls' times and counts (counts never
    fall; interpolated); None before the first poll's count or beyond the last."""
    i = bisect.bisect_left(counts, n)  # the first poll whose count reached n
    if i == 0 or i == len(counts):
        return None
    t0, c0, t1, c1 = times[i - 1], counts[i - 1], times[i], counts[i]
    return t0 + (t1 - t0) * (n - c0) / (c1 - c0)


def lag(jid, consumer, tasks, start_s):
    """(speed, samples published after the warm-up, seconds after it, {"warm-up"/"measured": (lags,
    backlog lags)}, CPU per sample after the warm-up) of phase 2."""
    speed = RATE * 60.0 / tasks
    duration_s = int((WARMUP_S + LAG_S) * speed)
    read = TakenIn(jid)
    base_pub, base_read = published_offsets(consumer), taken_in(jid)
    base_n = prev_n = read()  # the same count as base_read, through the lighter request
    t0 = time.time()
    sim = fleetsim("%.3f" % speed, "%ds" % duration_s, start_s)
    times, counts = [t0], [0]  # each poll's time and samples in Kafka since the phase began
    figures = {"warm-up": ([], []), "measured": ([], [])}
    warm = None  # (time, samples in Kafka, CPU seconds) when the warm-up ended
    while sim.poll() is None:
        time.sleep(0.1)
        n = read()
        now = time.time()
        times.append(now)
        counts.append(published_offsets(consumer) - base_pub)  # after the count: never below it
        if warm is None and now - t0 >= WARMUP_S:
            warm = (now, counts[-1], cpu_seconds(sim))
        lags, backlog_lags = figures["warm-up" if warm is None else "measured"]
        backlog_lags.append(max(0, counts[-1] - (n - base_n)) / RATE)
        if n != prev_n:  # a new count, taken before now
            since = published_at(times, counts, n - base_n)
            if since is not None:
                lags.append(max(0.0, now - since))
                if SERIES:
                    SERIES.write("%.2f %.3f %.3f\n" % (now - t0, lags[-1], backlog_lags[-1]))
        prev_n = n
    published = published_offsets(consumer) - base_pub
    wait_taken_in(jid, base_read + published)
    if warm is None:
        raise SystemExit("pipeline bench: phase 2 ended within its warm-up; see " + LOG)
    cpu1, t1 = cpu_seconds(), time.time()
    return (
        speed,
        published - warm[1],
        t1 - warm[0],
        figures,
        cpu_per_sample(warm[2], cpu1, published - warm[1]),
        model_figures(warm[2], cpu1, published - warm[1], t1 - warm[0]),
    )


def wait_merges_done(timeout_s=300):
    """Waits (bounded) until ClickHouse merges nothing: rows earlier runs left would take cores."""
    deadline = time.time() + timeout_s
    while stack.query("SELECT count() FROM system.merges") != "0" and time.time() < deadline:
        time.sleep(2)


def main():
    stack.ensure_up()
    pipeline.cancel_running_jobs()
    wait_merges_done()
    schema.drop_database(chclient.connect(stack.CLICKHOUSE), DATABASE)  # every node of a cluster
    pipeline.apply_clickhouse_schema(DATABASE)
    # The sinks are named here: the submit script turns them on only where the cpi2 tables exist.
    args = [
        "--checkpoint.interval-ms",
        "30000",
        "--job.parallelism",
        PARALLELISM,
        "--clickhouse.url",
        stack.CLICKHOUSE,
        "--clickhouse.database",
        DATABASE,
    ] + shlex.split(os.environ.get("BENCH_JOB_ARGS", ""))
    # BENCH_JOB_ARGS="--clickhouse.url ''" turns them off again, for a diagnostic (the last one wins).
    sinks_on = bool(dict(zip(args[::2], args[1::2]))["--clickhouse.url"])
    consumer = Consumer(stack.kafka_conf("admin", **{"group.id": "cpi2-bench-offsets"}))
    tasks = tasks_of_scenario()
    start_s = int(time.time()) // 60 * 60
    cpu0 = cpu_seconds()
    jid = pipeline.submit_job(args)
    try:
        published, seconds, capacity_cpu, capacity_model = capacity(jid, consumer, start_s)
        rate = published / seconds
        if LAG_S > 0:
            speed, lag_published, lag_seconds, figures, lag_cpu, lag_model = lag(
                jid, consumer, tasks, start_s + seconds_of(DURATION)
            )
        stored, distinct = (
            map(
                int,
                stack.query(
                    "SELECT count(), uniqExact(host, task, window_start_us) FROM %s.samples" % DATABASE
                ).split(),
            )
            if sinks_on
            else (0, 0)
        )
        rows = stored_rows(DATABASE) if sinks_on else 0
        clickhouse_cpu = cpu_used(cpu0, cpu_seconds(), "clickhouse")
    finally:
        pipeline.cancel_running_jobs()
        schema.drop_database(chclient.connect(stack.CLICKHOUSE), DATABASE)  # every node of a cluster
    if sinks_on and stored == 0:
        raise SystemExit(
            "pipeline bench: the job stored no sample in ClickHouse (%s.samples): its sinks were off" % DATABASE
        )
    print(
        "pipeline: end-to-end throughput and lag of the Flink job, cpi2-fleetsim (%s, %d tasks) as the source"
        % (SCENARIO, tasks)
    )
    print(
        "  conditions: local Kafka 4.3.1, Flink 2.2.1 session cluster, job parallelism %s, checkpoints every 30 s,"
        " %s; %d cores shared by the simulator, Kafka, Flink and ClickHouse%s"
        % (
            PARALLELISM,
            "ClickHouse sinks on (%d samples stored by the end, %d distinct)" % (stored, distinct)
            if sinks_on
            else "ClickHouse sinks OFF",
            os.cpu_count(),
            "; job options " + os.environ["BENCH_JOB_ARGS"] if os.environ.get("BENCH_JOB_ARGS") else "",
        )
    )
    print(
        "  capacity: %d samples (%s simulated, as fast as possible) taken in by the detection chain in %.1f s:"
        " %.0f samples/s (target >= 100,000/s: %s)"
        % (published, DURATION, seconds, rate, "met" if rate >= 100000 else "NOT met")
    )
    print("  profile: " + profile())
    print("    " + capacity_cpu)
    print("    " + capacity_model)
    if sinks_on:
        print(
            "  ClickHouse, the whole run: %d rows stored (every table, each row once; %.2f rows per sample stored)"
            " for %.1f CPU-seconds of its %d node(s): %.0f rows/s per core"
            % (rows, rows / max(stored, 1), clickhouse_cpu, members().get("clickhouse", 0), rows / clickhouse_cpu)
        )
    if LAG_S <= 0:
        print("  lag at %.0f samples/s: not measured (BENCH_LAG_S=0)" % RATE)
        return
    for lags, backlog_lags in figures.values():
        lags.sort()
        backlog_lags.sort()
    if not figures["measured"][0]:
        raise SystemExit("pipeline bench: the job's count of samples taken in never changed after the warm-up")
    p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    lags, backlog_lags = figures["measured"]
    print(
        "  lag at %.0f samples/s (--speed %.0f), after %.0f s at that rate, %d samples over %.0f s, from Kafka to the"
        " detector, %d counts: p50 %.2f s, p99 %.2f s, max %.2f s (target p99 < 2 s: %s)"
        % (
            RATE,
            speed,
            WARMUP_S,
            lag_published,
            lag_seconds,
            len(lags),
            p(lags, 0.5),
            p(lags, 0.99),
            lags[-1],
            "met" if p(lags, 0.99) < 2 else "NOT met",
        )
    )
    print(
        "    backlog over the rate (with the count's age): p50 %.2f s, p99 %.2f s, max %.2f s"
        % (p(backlog_lags, 0.5), p(backlog_lags, 0.99), backlog_lags[-1])
    )
    w = figures["warm-up"][0]
    if w:
        print(
            "    during the %.0f s of warm-up at that rate (the JVMs still compiling): p50 %.2f s, p99 %.2f s, max %.2f s"
            % (WARMUP_S, p(w, 0.5), p(w, 0.99), w[-1])
        )
    print("    " + lag_cpu)
    print("    " + lag_model)


# The capacity model's figures in a bench's output (model_figures and the ClickHouse line).
MODEL_RE = re.compile(
    r"capacity model: (?P<tm>[\d.]+) samples/s per TaskManager core .*?Kafka (?P<kafka>[\d.]+) cores per 1,000"
    r" samples/s \((?P<brokers>\d+) broker"
)
CLICKHOUSE_RE = re.compile(r"; (?P<rows_per_sample>[\d.]+) rows per sample stored\).* (?P<ch>\d+) rows/s per core")


def model_of(output):
    """{tm, kafka, brokers, rows_per_sample, ch} from a bench's output: the per-core figures of the
    phase at the target rate (the last capacity model line: a steady fleet's), or None."""
    found = MODEL_RE.findall(output)
    ch = CLICKHOUSE_RE.search(output)
    if not found or not ch:
        return None
    tm, kafka, brokers = found[-1]
    return {
        "tm": float(tm),
        "kafka": float(kafka),
        "brokers": int(brokers),
        "rows_per_sample": float(ch["rows_per_sample"]),
        "ch": float(ch["ch"]),
    }


def fleet_needs(m, hosts, tasks_per_host):
    """(samples/s, TaskManager cores, Kafka cores, ClickHouse cores) of a fleet at the paper's
    sampling (a 10 s window once a minute per task: one sample per task per minute), by the
    model of stack/CAPACITY.md with the per-core figures m."""
    rate = hosts * tasks_per_host / 60.0
    return rate, rate / m["tm"], rate / 1000 * m["kafka"], rate * m["rows_per_sample"] / m["ch"]


def run_profiles(pairs, report, fleets):
    """The bench on each profile (ENV:STACK_DIR), one after the other, into one report: each
    stack is started if it is down (and stopped again after its bench), so only one runs."""
    sections = []
    for env_file, stack_dir in pairs:
        env = dict(os.environ, STACK_ENV=os.path.abspath(env_file), STACK_DIR=os.path.abspath(stack_dir))
        make = ["make", "-C", stack.ROOT, "--no-print-directory"]
        was_up = subprocess.run(make + ["status"], env=env, capture_output=True).returncode == 0
        print("==== pipeline bench on %s (STACK_DIR %s) ====" % (env_file, stack_dir), flush=True)
        if not was_up:
            subprocess.run(make + ["up"], env=env, check=True)
        try:
            run = subprocess.run(
                [sys.executable, "-m", "cpi2.e2e.bench_pipeline"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        finally:
            if not was_up:
                subprocess.run(make + ["down"], env=env)
        print(run.stdout, flush=True)
        sections.append((env_file, stack_dir, run.returncode, run.stdout))
    write_report(report, pairs, sections, fleets)
    return 0 if all(rc == 0 for _, _, rc, _ in sections) else 1


def write_report(report, pairs, sections, fleets):
    """The report of run_profiles: each profile's output, the per-core table and the fleets."""
    import datetime
    import platform

    models = [(env_file, model_of(out) if rc == 0 else None) for env_file, _, rc, out in sections]
    load = open("/proc/loadavg").read().split()[:3]
    lines = [
        "# Pipeline bench on the single-node and multi-node profiles",
        "",
        "- date: %s, commit %s"
        % (
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            subprocess.run(
                ["git", "-C", stack.ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
            ).stdout.strip(),
        ),
        "- machine: %d cores, %s, load average at the end %s; every profile's servers share these cores"
        % (os.cpu_count(), platform.platform(), " ".join(load)),
        "- command: `python -m cpi2.e2e.bench_pipeline --profiles %s`; bench settings: %s"
        % (
            " ".join("%s:%s" % p for p in pairs),
            ", ".join("%s=%s" % (k, v) for k, v in sorted(os.environ.items()) if k.startswith("BENCH_")) or "defaults",
        ),
        "- the figures are per core: on 2 shared cores more processes do not mean more speed, the point is",
        "  that the pipeline is correct on a cluster and what each sample costs there",
        "",
    ]
    for env_file, stack_dir, rc, out in sections:
        lines += ["## %s (STACK_DIR %s)%s" % (env_file, stack_dir, "" if rc == 0 else ": FAILED, exit %d" % rc), ""]
        lines += ["```", out.rstrip(), "```", ""]
    lines += [
        "## Capacity model (stack/CAPACITY.md), from the phase at the target rate",
        "",
        "| profile | samples/s per TaskManager core | Kafka cores per 1,000 samples/s (per broker) |"
        " ClickHouse rows/s per core | rows per sample |",
        "|---|---|---|---|---|",
    ]
    for env_file, m in models:
        if m:
            lines.append(
                "| %s | %.0f | %.4f (%.4f) | %.0f | %.2f |"
                % (env_file, m["tm"], m["kafka"], m["kafka"] / m["brokers"], m["ch"], m["rows_per_sample"])
            )
        else:
            lines.append("| %s | no figures: its bench failed | | | |" % env_file)
    lines += [
        "",
        "A fleet at the paper's sampling (a 10 s window once a minute per task), by each profile's figures:",
        "",
        "| hosts x tasks per host | samples/s | profile | TaskManager cores | Kafka cores | ClickHouse cores |",
        "|---|---|---|---|---|---|",
    ]
    for hosts, per_host in fleets:
        for env_file, m in models:
            if m:
                rate, tm, kafka, ch = fleet_needs(m, hosts, per_host)
                lines.append(
                    "| %d x %d | %.0f | %s | %.3f | %.3f | %.3f |" % (hosts, per_host, rate, env_file, tm, kafka, ch)
                )
    os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("pipeline bench: report written to " + report)


def cli():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--profiles",
        nargs="+",
        metavar="ENV[:STACK_DIR]",
        help="run the bench on each profile in turn (default STACK_DIR: .stack for stack/stack.env,"
        " else .stack-<name of the env file>) and write one report",
    )
    ap.add_argument("--report", default=os.path.join(stack.ROOT, "bench-report", "pipeline-profiles.md"))
    ap.add_argument(
        "--fleet",
        nargs="+",
        default=["1000x25", "10000x25", "10000x57"],
        metavar="HOSTSxTASKS",
        help="fleets for the model's table: hosts x tasks per host",
    )
    a = ap.parse_args()
    if not a.profiles:
        return main()
    pairs = []
    for p in a.profiles:
        env_file, _, stack_dir = p.partition(":")
        if not stack_dir:
            name = os.path.basename(env_file).rsplit(".", 1)[0]
            stack_dir = os.path.join(stack.ROOT, ".stack" if name == "stack" else ".stack-" + name)
        pairs.append((env_file, stack_dir))
    fleets = []
    for f in a.fleet:
        m = re.fullmatch(r"(\d+)x(\d+)", f)
        if not m:
            raise SystemExit("pipeline bench: --fleet %r is not HOSTSxTASKS" % f)
        fleets.append((int(m.group(1)), int(m.group(2))))
    return run_profiles(pairs, a.report, fleets)


if __name__ == "__main__":
    sys.exit(cli())
