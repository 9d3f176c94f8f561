"""Benchmark: end-to-end throughput and lag of the Flink job, with cpi2-fleetsim as the source.

A fresh job (the job's defaults, ClickHouse sinks on as deployed) reads only what this run
produces into cpi2.samples. Two phases:

1. capacity: cpi2-fleetsim publishes a fleet as fast as it can; the figure is samples taken in
   by the job's host-keyed chain (detector, correlator, judge) per second, from the simulator's
   start until the job has taken in every sample it published.
2. lag at the target rate: cpi2-fleetsim publishes at the target rate (its --speed set from the
   scenario's task count) for BENCH_LAG_S seconds; twice a second the backlog (samples in Kafka,
   from the partitions' end offsets, minus samples the job has taken in) is read, and the lag is
   that backlog divided by the rate: how long a sample published then waits. Reported: p50, p99
   and max. Its simulated time starts where phase 1's ended, so its samples are live for the job,
   not behind its watermark. The records taken in come from Flink's REST metrics, at most
   metrics.fetcher.update-interval old (1 s in the stack's config).

The job writes to a throw-away ClickHouse database (cpi2_bench: the schema applied fresh, dropped
at the end), so the figures do not depend on what earlier runs left in cpi2 and no background
merge of this run's rows outlives it to slow the next benchmark. Each phase also reports the CPU
each server used per sample (from /proc), which says where the cores went.

Targets (issue 4): at least 100,000 samples/s end to end, lag under 2 s at p99.
The default fleet, bench100k (102,000 tasks on 4000 hosts), reaches 100,000 samples/s at
--speed 60: event time passes 60 times as fast as for a real fleet of that size, where fleet300
(7650 tasks) would need --speed 784 and so 13 times more of the job's per-period work (watermarks,
timers, spec folds, rollup rows) per sample.

Environment: BENCH_SCENARIO (bench100k), BENCH_DURATION (40m simulated, phase 1), BENCH_RATE
(100000), BENCH_LAG_S (60), BENCH_PARALLELISM (2: both cores), BENCH_JOB_ARGS (more job options).
"""

import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time

from confluent_kafka import Consumer, TopicPartition

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pipeline  # noqa: E402
from pipeline import stack  # noqa: E402

SCENARIO = os.environ.get("BENCH_SCENARIO", "bench100k")
DURATION = os.environ.get("BENCH_DURATION", "40m")
RATE = float(os.environ.get("BENCH_RATE", "100000"))
LAG_S = float(os.environ.get("BENCH_LAG_S", "60"))
PARALLELISM = os.environ.get("BENCH_PARALLELISM", "2")
LOG = "/tmp/cpi2-bench-fleetsim.log"
DATABASE = "cpi2_bench"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds():
    """{server: CPU seconds so far} for the stack's servers, and the simulators this process ran."""
    out = {}
    for name, pid in stack.pids().items():
        try:
            fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
            out[name] = (int(fields[11]) + int(fields[12])) / TICK
        except OSError:
            pass
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["cpi2-fleetsim"] = ru.ru_utime + ru.ru_stime
    return out


def cpu_per_sample(before, after, samples):
    """'server x.x µs' for each server's CPU per sample between two cpu_seconds()."""
    parts = ["%s %.1f" % (k, (after[k] - before.get(k, 0)) / samples * 1e6)
             for k in ("flink-taskmanager", "clickhouse", "kafka", "cpi2-fleetsim", "flink-jobmanager") if k in after]
    return "CPU per sample (µs): " + ", ".join(parts)


def published_offsets(consumer):
    """The sum of cpi2.samples' partitions' end offsets."""
    md = consumer.list_topics("cpi2.samples", timeout=10)
    return sum(consumer.get_watermark_offsets(TopicPartition("cpi2.samples", p), timeout=10)[1]
               for p in md.topics["cpi2.samples"].partitions)


def seconds_of(duration):
    """Seconds of a fleetsim duration: 90, 90s, 40m, 2h."""
    m = re.fullmatch(r"(\d+)([smh]?)", duration)
    if not m:
        raise SystemExit("pipeline bench: BENCH_DURATION %r is not N, Ns, Nm or Nh" % duration)
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def fleetsim(speed, duration, start_s):
    """cpi2-fleetsim from simulated time start_s: each phase starts where the one before ended, so
    that its samples are live for the job (ahead of its watermark), not late."""
    return subprocess.Popen([pipeline.FLEETSIM, "-s", SCENARIO, "--speed", speed, "--warmup", "0", "--duration", duration,
                             "--start", str(start_s),
                             "--brokers", stack.KAFKA, "--progress", "1", "--truth", "/tmp/cpi2-bench-fleetsim.truth.jsonl"],
                            stdout=open(LOG, "w"), stderr=subprocess.STDOUT)


def tasks_of_scenario():
    """The scenario's task count, from a one-minute dry run's first line."""
    out = subprocess.run([pipeline.FLEETSIM, "-s", SCENARIO, "--dry-run", "--warmup", "0", "--duration", "1m", "--speed", "max",
                          "--truth", "none"], capture_output=True, text=True, check=True)
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
    return published, t1 - t0, cpu_per_sample(cpu0, cpu_seconds(), published)


def lag(jid, consumer, tasks, start_s):
    speed = RATE * 60.0 / tasks
    duration_s = int(LAG_S * speed)
    base_pub, base_read = published_offsets(consumer), taken_in(jid)
    cpu0 = cpu_seconds()
    sim = fleetsim("%.3f" % speed, "%ds" % duration_s, start_s)
    lags = []
    t0 = time.time()
    while sim.poll() is None:
        time.sleep(0.5)
        backlog = (published_offsets(consumer) - base_pub) - (taken_in(jid) - base_read)
        lags.append(max(0, backlog) / RATE)
    published = published_offsets(consumer) - base_pub
    wait_taken_in(jid, base_read + published)
    return speed, published, time.time() - t0, lags, cpu_per_sample(cpu0, cpu_seconds(), published)


def wait_merges_done(timeout_s=300):
    """Waits (bounded) until ClickHouse merges nothing: rows earlier runs left would take cores."""
    deadline = time.time() + timeout_s
    while stack.query("SELECT count() FROM system.merges") != "0" and time.time() < deadline:
        time.sleep(2)


def main():
    stack.ensure_up()
    pipeline.cancel_running_jobs()
    wait_merges_done()
    stack.query("DROP DATABASE IF EXISTS " + DATABASE)
    pipeline.apply_clickhouse_schema(DATABASE)
    args = ["--checkpoint.interval-ms", "30000", "--job.parallelism", PARALLELISM, "--clickhouse.database", DATABASE] + shlex.split(os.environ.get("BENCH_JOB_ARGS", ""))
    consumer = Consumer({"bootstrap.servers": stack.KAFKA, "group.id": "cpi2-bench-offsets"})
    tasks = tasks_of_scenario()
    start_s = int(time.time()) // 60 * 60
    jid = pipeline.submit_job(args)
    try:
        published, seconds, capacity_cpu = capacity(jid, consumer, start_s)
        rate = published / seconds
        if LAG_S > 0:
            speed, lag_published, lag_seconds, lags, lag_cpu = lag(jid, consumer, tasks, start_s + seconds_of(DURATION))
    finally:
        pipeline.cancel_running_jobs()
        stack.query("DROP DATABASE IF EXISTS " + DATABASE)
    print("pipeline: end-to-end throughput and lag of the Flink job, cpi2-fleetsim (%s, %d tasks) as the source" % (SCENARIO, tasks))
    print("  conditions: local Kafka 4.3.1, Flink 2.2.1 session cluster, job parallelism %s, checkpoints every 30 s,"
          " ClickHouse sinks on; %d cores shared by the simulator, Kafka, Flink and ClickHouse%s"
          % (PARALLELISM, os.cpu_count(), "; job options " + os.environ["BENCH_JOB_ARGS"] if os.environ.get("BENCH_JOB_ARGS") else ""))
    print("  capacity: %d samples (%s simulated, as fast as possible) taken in by the detection chain in %.1f s:"
          " %.0f samples/s (target >= 100,000/s: %s)" % (published, DURATION, seconds, rate, "met" if rate >= 100000 else "NOT met"))
    print("    " + capacity_cpu)
    if LAG_S <= 0:
        print("  lag at %.0f samples/s: not measured (BENCH_LAG_S=0)" % RATE)
        return
    lags.sort()
    p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))]  # noqa: E731
    print("  lag at %.0f samples/s (--speed %.0f, %d samples over %.0f s): p50 %.2f s, p99 %.2f s, max %.2f s"
          " (target p99 < 2 s: %s)" % (RATE, speed, lag_published, lag_seconds, p(0.5), p(0.99), lags[-1],
                                       "met" if p(0.99) < 2 else "NOT met"))
    print("    " + lag_cpu)


if __name__ == "__main__":
    main()
