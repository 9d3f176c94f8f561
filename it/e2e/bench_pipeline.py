"""Benchmark: sustained end-to-end throughput of the Flink job with cpi2-fleetsim as the source.

cpi2-fleetsim publishes a fleet as fast as it can (one core) into cpi2.samples; a fresh job
reads only what this run produces. Each second the job's source vertex reports how many records
it has read; the figures are the rate from the first record to the last, and the backlog
(published - read) over the run, in records and in seconds at the measured rate. Target
(issue 4): at least 100,000 samples/s with lag under 2 s at p99.
"""

import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pipeline  # noqa: E402
from pipeline import stack  # noqa: E402

SCENARIO = os.environ.get("BENCH_SCENARIO", "fleet300")
DURATION = os.environ.get("BENCH_DURATION", "2h")


def main():
    stack.ensure_up()
    pipeline.cancel_running_jobs()
    jid = pipeline.submit_job(shlex.split(os.environ.get("BENCH_JOB_ARGS", "")))
    log = open("/tmp/cpi2-bench-fleetsim.log", "w")
    t0 = time.time()
    sim = subprocess.Popen([pipeline.FLEETSIM, "-s", SCENARIO, "--speed", "max", "--warmup", "0", "--duration", DURATION,
                            "--brokers", stack.KAFKA, "--progress", "1", "--truth", "/tmp/cpi2-bench-fleetsim.truth.jsonl"], stdout=log, stderr=subprocess.STDOUT)
    backlog, first, last_n, last_change = [], None, 0, time.time()
    published = None
    while True:
        time.sleep(1)
        n, state = pipeline.samples_read(jid)
        if state != "RUNNING":
            raise SystemExit("pipeline bench: the job is %s" % state)
        text = open(log.name).read()
        if sim.poll() is not None and published is None:
            import re
            m = re.findall(r"done: (\d+) samples", text)
            published = int(m[-1]) if m else None
        sent = [int(x) for x in __import__("re").findall(r"kafka delivered (\d+)", text)]
        if n and first is None:
            first = time.time()
        pub = published if published is not None else (sent[-1] if sent else None)
        if pub is not None:
            backlog.append(max(0, pub - n))
        if n != last_n:
            last_n, last_change = n, time.time()
        if published is not None and n >= published:
            break
        if time.time() - last_change > 60:
            raise SystemExit("pipeline bench: the job stopped reading at %d of %s records" % (n, published))
    t1 = time.time()
    rate = published / (t1 - (first or t0))
    backlog.sort()
    p99 = backlog[int(0.99 * (len(backlog) - 1))] if backlog else 0
    print("pipeline: end-to-end throughput of the Flink job, cpi2-fleetsim (%s, %s simulated, as fast as possible) as"
          " the source" % (SCENARIO, DURATION))
    print("  conditions: local Kafka 4.3.1, Flink 2.2.1 session cluster (parallelism 1), ClickHouse sinks on, %d cores"
          " shared by the simulator, Kafka, Flink and ClickHouse" % os.cpu_count())
    print("  %d samples read in %.1f s: %.0f samples/s (target >= 100,000/s: %s)"
          % (published, t1 - (first or t0), rate, "met" if rate >= 100000 else "NOT met"))
    print("  backlog (published - read), p99 over the run: %d samples = %.1f s at that rate; the simulator publishes"
          " faster than the job reads, so this is the queue of a saturated job, not the lag at a sustainable rate"
          " (target: < 2 s at p99 at 100,000 samples/s: not reachable while the job's capacity is below that)"
          % (p99, p99 / rate))
    pipeline.cancel_running_jobs()


if __name__ == "__main__":
    main()
