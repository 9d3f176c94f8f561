"""The real-service lab end to end, short (make -C lab test): python -m cpi2.lab services with five
real redis replicas (Debian's redis-server and prometheus-redis-exporter, installed by the lab when
missing) as the victims and one on-phase of a stress-ng CPU hog on their CPU, on the real
collector, Kafka, the detection job with the 1-second profile and its default options, and the real
enforcer. The bounds are make lab's, not looser ones: the hog named by an incident and capped within
5 s of its start, the victims' p99 (from the load generator) while it is capped within 1.2 x their
p99 while no antagonist runs, uncapped at least 1.5 x it, nothing else capped. Skipped with the
reason where the lab cannot run (not root, no PSI, no cpu controller, one CPU)."""

import re
import subprocess
import sys

import pytest
from labtest import left_behind

from cpi2 import lab_loop

WHY = lab_loop.cannot_run()
pytestmark = pytest.mark.skipif(WHY is not None, reason="the lab cannot run here: %s" % WHY)


# A quarter of the victims' CPU taken by work outside the lab: on a machine of its own (CI) the stack's
# servers run on the other CPU and this is near 0.
OTHER_LOAD = 0.25


def test_a_cpu_hog_beside_redis_is_named_and_capped_within_make_labs_bounds(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "cpi2.lab", "services", "--services", "redis", "--rows", "cpu/8@same"]
        + ["--quiet-s", "30", "--on-s", "20", "--off-s", "10", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(r.stdout[-4000:], r.stderr[-2000:])
    failed = re.findall(r"^lab: redis: FAILED: (.*)$", r.stdout, re.M)
    noise = [
        float(x) for f in failed for x in re.findall(r"noisiest phase without an antagonist: \S+ at ([0-9.]+) x", f)
    ]
    calm = re.search(r"^no antagonist .* ([0-9.]+)  -$", r.stdout, re.M)
    if failed and calm and float(calm.group(1)) > OTHER_LOAD:
        # Other work the lab's collector does not see (it counts the lab's cgroups only) used the
        # victims' CPU while no antagonist ran: the lab's premise (the victims share their CPU
        # with the tasks it sees) does not hold, and neither detection nor the bounds can be judged.
        pytest.skip(
            "the machine's other work used %s CPU-sec/sec of the victims' CPU while no antagonist ran: %s"
            % (calm.group(1), "; ".join(failed))
        )
    if failed and len(noise) == len(failed) and min(noise) > 1.2:
        # Only the capped phase missed 20%, and a phase without any antagonist missed it as well:
        # the machine's own load moves the victims' p99 more than the bound, so this run cannot
        # judge it (the lab names the noise beside the failure). The bound stays make lab's.
        pytest.skip("the machine's own noise exceeds make lab's 20%%: %s" % "; ".join(failed))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "redis: every check holds" in r.stdout
    table = (tmp_path / "redis" / "table.txt").read_text()
    m = re.search(r"^onset-to-cap antagonist-0: ([0-9.]+) s", table, re.M)
    assert m and float(m.group(1)) <= 5.0, table
    row = re.search(r"^antagonist-0 cpu/8@same \[judged\].*$", table, re.M)
    assert row, table
    # the signal that caught it, beside the others
    assert re.search(
        r"cpu_pressure [0-9.e-]+ -> [0-9.e-]+ \(x[0-9.]+\): [0-9.]+ s THROTTLE->antagonist-0", row.group(0)
    )
    assert "cpu_per_op" in row.group(0) and "latency" in row.group(0), row.group(0)
    # analyses while no antagonist ran name nobody (no suspect explains the machine's own bursts)
    calm = re.search(r"^incidents while no antagonist ran: .*$", table, re.M)
    assert calm and "THROTTLE" not in calm.group(0), table
    assert left_behind(tmp_path) == ([], [])
