"""The real-service lab's checks on a run's figures (no lab is run): an antagonist the calibration
finds harmless to the victims is never capped, and one that hurts is judged as make lab judges."""

import types

from cpi2 import lab_real


def a_run(calibration_rows, onsets):
    """A ServiceLab with what its checks read, as a run would leave it."""
    lb = lab_real.ServiceLab.__new__(lab_real.ServiceLab)
    lb.kind = "nginx"
    lb.rows = [(name, threads, placement) for name, threads, placement, _c in calibration_rows]
    lb.calibration = {
        ("nginx", name, threads, placement): {
            "service": "nginx",
            "antagonist": name,
            "threads": threads,
            "placement": placement,
            "hurts": hurts,
            "reaches_service": False,
            "uncapped_x": 1.8 if hurts else 0.6,
        }
        for name, threads, placement, hurts in calibration_rows
    }
    lb.antagonists = [("antagonist-%d" % n, 100.0 + 30 * n, 120.0 + 30 * n) for n in range(len(lb.rows))]
    lb.job_failures = []
    lb.args = types.SimpleNamespace(max_onset_to_cap=5.0, capped_within=1.2, min_uncapped_ratio=1.5)
    named = [{"antagonist_task": task} for task, d in onsets if d is not None]
    caps = {task: [(0, 0)] for task, d in onsets if d is not None}
    return lb, (lb_rows(), 1000.0, onsets, caps, named)


def lb_rows():
    # (name, duration, requests, p50, p99, antagonist CPU, other CPU, caps): p99s within the bounds
    return [
        ("quiet", 40, 1000, 100, 1000, 0, 0.1, ""),
        ("on-0 uncapped", 2, 100, 200, 2000, 0.8, 0.0, ""),
        ("on-0 capped", 18, 900, 100, 1000, 0.1, 0.1, "antagonist-0"),
    ]


def test_a_harmless_antagonist_capped_is_a_failure():
    lb, result = a_run(
        [("cpu", 8, "same", True), ("cache", 2, "other", False)], [("antagonist-0", 1.6), ("antagonist-1", 0.97)]
    )
    failed = lb.check(*result)
    assert failed == [
        "antagonist-1 was capped 0.97 s after its start, though the calibration finds it does not hurt "
        "the victims (p99 x0.60 beside it)"
    ], failed


def test_a_harmful_antagonist_capped_in_time_and_a_harmless_one_left_alone_pass():
    lb, result = a_run(
        [("cpu", 8, "same", True), ("cache", 2, "other", False)], [("antagonist-0", 1.6), ("antagonist-1", None)]
    )
    assert lb.check(*result) == []
