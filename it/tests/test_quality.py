"""cpi2.e2e.quality on hand-made ground truth and incidents (no stack): a THROTTLE is right only
when its host, named antagonist, victim and time all match one antagonism of the truth."""

import json

from cpi2.e2e import quality

MIN = 60_000_000
IDS = iter(range(1_000_000))


def antagonism(antagonist, victim, start_min, end_min, host="h1", antagonist_class="batch"):
    return {
        "type": "antagonism",
        "host": host,
        "antagonist": antagonist,
        "antagonist_job": antagonist.split("/")[1],
        "antagonist_class": antagonist_class,
        "victim": victim,
        "victim_job": victim.split("/")[1],
        "victim_class": "latency-sensitive",
        "start_us": start_min * MIN,
        "end_us": end_min * MIN,
        "peak_cpu": 2.0,
        "predicted_cpi_increase": 0.5,
    }


def incident(antagonist, victim, at_min, host="h1", decision="THROTTLE", cls="BATCH"):
    return {
        "incident_id": "i%d" % next(IDS),
        "host": host,
        "victim_task": victim,
        "antagonist_task": antagonist,
        "antagonist_class": cls,
        "decision": decision,
        "detected_at_us": at_min * MIN,
    }


class Run:
    def __init__(self, incidents, actions=()):
        self.incidents, self.actions = list(incidents), list(actions)


# bully hurts web/0 only; noisy hurts web/1 only; both on h1 from minute 100 to 130
TRUTH = [
    {"type": "scenario", "seed": 1, "start_us": 0, "warmup_end_us": 100 * MIN, "end_us": 200 * MIN},
    antagonism("jobs/bully/0", "jobs/web/0", 100, 130),
    antagonism("jobs/noisy/0", "jobs/web/1", 100, 130),
]


def test_right_when_antagonist_victim_host_and_time_match():
    assert quality.truth_matches(TRUTH, incident("jobs/bully/0", "jobs/web/0", 105))
    # within the fade after the episode's end
    assert quality.truth_matches(TRUTH, incident("jobs/bully/0", "jobs/web/0", 135))


def test_real_antagonist_of_the_host_named_for_another_victim_is_wrong():
    # bully is a real antagonist on h1 at that time, but it does not hurt web/1
    assert not quality.truth_matches(TRUTH, incident("jobs/bully/0", "jobs/web/1", 105))
    assert not quality.truth_matches(TRUTH, incident("jobs/noisy/0", "jobs/web/0", 105))


def test_wrong_host_wrong_time_wrong_task():
    assert not quality.truth_matches(TRUTH, incident("jobs/bully/0", "jobs/web/0", 105, host="h2"))
    assert not quality.truth_matches(TRUTH, incident("jobs/bully/0", "jobs/web/0", 99))
    assert not quality.truth_matches(TRUTH, incident("jobs/bully/0", "jobs/web/0", 141))
    assert not quality.truth_matches(TRUTH, incident("jobs/batch/3", "jobs/web/0", 105))


def test_precision_and_recall_count_only_victim_matched_throttles():
    incidents = [
        incident("jobs/bully/0", "jobs/web/0", 103),  # right
        incident("jobs/bully/0", "jobs/web/1", 104),  # real antagonist, wrong victim
        incident("jobs/bully/0", "jobs/web/1", 106),  # again
        incident("jobs/web/0", "jobs/web/1", 107, decision="NO_SUSPECT"),  # not a throttle
    ]
    q = quality.measure(TRUTH, Run(incidents))
    assert q["throttles"] == 3
    assert q["correct"] == 1
    assert abs(q["precision"] - 1 / 3) < 1e-9
    # noisy was never named for its own victim: found 1 of 2
    assert (q["found"], q["real"]) == (1, 2)
    assert q["missed"] == [("h1", "jobs/noisy/0")]


def test_antagonist_named_only_for_the_wrong_victim_is_not_found():
    q = quality.measure(TRUTH, Run([incident("jobs/noisy/0", "jobs/web/0", 103)]))
    assert (q["correct"], q["found"], q["precision"]) == (0, 0, 0.0)


def test_analysis_latency_per_victim_from_its_onset():
    incidents = [
        incident("jobs/web/1", "jobs/web/0", 95, decision="NO_SUSPECT"),  # before the onset: not counted
        incident("jobs/bully/0", "jobs/web/0", 102),
        incident("", "jobs/web/1", 109, decision="NO_SUSPECT"),  # analysed, nobody named: counts
        incident("jobs/noisy/0", "jobs/web/1", 111),
    ]
    q = quality.measure(TRUTH, Run(incidents))
    assert q["victims"] == 2 and q["victims_analysed"] == 2
    assert q["analysis_latencies"] == [120.0, 540.0]
    assert (q["analysis_median"], q["analysis_max"]) == (330.0, 540.0)


def test_victim_never_analysed_is_reported():
    q = quality.measure(TRUTH, Run([incident("jobs/bully/0", "jobs/web/0", 101)]))
    assert (q["victims"], q["victims_analysed"], q["analysis_max"]) == (2, 1, 60.0)


def test_onset_to_cap_and_latency_sensitive_caps():
    incidents = [
        incident("jobs/bully/0", "jobs/web/0", 101),
        incident("jobs/web/1", "jobs/web/0", 102, cls="LATENCY_SENSITIVE"),
    ]
    actions = [
        {
            "kind": "APPLIED",
            "host": "h1",
            "task": "jobs/bully/0",
            "at_us": 103 * MIN,
            "incident_id": incidents[0]["incident_id"],
        },
        {
            "kind": "APPLIED",
            "host": "h1",
            "task": "jobs/web/1",
            "at_us": 104 * MIN,
            "incident_id": incidents[1]["incident_id"],
        },
    ]
    q = quality.measure(TRUTH, Run(incidents, actions))
    assert q["latencies"] == [180.0]
    assert q["ls_caps"] == 1


def test_analysis_latency_counts_the_wait_of_a_queued_analysis():
    # About the sample of minute 101, but run at 102:30 (it waited for a slot): 150 s, not 60 s.
    waited = dict(incident("jobs/bully/0", "jobs/web/0", 101), analysed_at_us=101 * MIN + 90_000_000)
    q = quality.measure(TRUTH, Run([waited, incident("jobs/noisy/0", "jobs/web/1", 101)]))
    assert q["analysis_latencies"] == [60.0, 150.0]
    assert q["event_latency_median"] == 105.0


def test_onset_to_cap_in_event_time_is_analysis_time_plus_the_enforcers_real_delay():
    first = dict(incident("jobs/bully/0", "jobs/web/0", 101), analysed_at_us=101 * MIN + 5_000_000)
    later = dict(incident("jobs/bully/0", "jobs/web/0", 104), analysed_at_us=104 * MIN)
    unread = incident("jobs/noisy/0", "jobs/web/1", 102)
    incidents = [first, later, unread]

    def applied(action_id, inc, at_min):
        return {
            "kind": "APPLIED",
            "action_id": action_id,
            "host": "h1",
            "task": inc["antagonist_task"],
            "at_us": at_min * MIN,  # the simulated clock at 240x: wall delays multiplied
            "incident_id": inc["incident_id"],
        }

    actions = [applied("a1", first, 109), applied("a2", later, 110), applied("a3", unread, 111)]
    run = Run(incidents, actions)
    run.read_at = {
        ("Incident", first["incident_id"]): 1000.0,
        ("EnforcementAction", "a1"): 1001.5,
        ("Incident", later["incident_id"]): 1003.0,
        ("EnforcementAction", "a2"): 1003.25,
        ("Incident", unread["incident_id"]): 1004.0,  # its action never read: left out
    }
    q = quality.measure(TRUTH, run)
    assert q["latencies"] == [540.0, 660.0]  # wall-clock delays at the simulator's speed
    assert q["enforcer_delays"] == [0.25, 1.5]
    # bully: analysed 65 s after its onset, capped 1.5 real seconds later; noisy's cap is unknown.
    assert q["cap_event_latencies"] == [66.5]
    assert (q["cap_event_median"], q["cap_event_max"]) == (66.5, 66.5)


def test_a_run_without_read_times_has_no_event_time_cap_figure():
    inc = incident("jobs/bully/0", "jobs/web/0", 101)
    action = {"kind": "APPLIED", "action_id": "a1", "host": "h1", "task": "jobs/bully/0", "at_us": 103 * MIN}
    q = quality.measure(TRUTH, Run([inc], [dict(action, incident_id=inc["incident_id"])]))
    assert q["latencies"] == [180.0]
    assert q["cap_event_latencies"] == [] and q["cap_event_median"] is None


def test_bench_keeps_the_incidents_and_actions_it_read_in_the_work_folder(tmp_path):
    from cpi2.e2e import bench_detection

    inc = incident("jobs/bully/0", "jobs/web/0", 101)
    action = {"kind": "REFUSED", "action_id": "a1", "incident_id": inc["incident_id"], "reason": "rate"}
    run = Run([inc], [action])
    run.read_at = {("Incident", inc["incident_id"]): 1000.0}
    holder = type("R", (), {"dir": str(tmp_path), "monitor": run})()
    bench_detection.save_outputs(holder)
    lines = [json.loads(x) for x in (tmp_path / "incidents.jsonl").read_text().splitlines()]
    assert lines == [dict(inc, read_at=1000.0)]
    lines = [json.loads(x) for x in (tmp_path / "actions.jsonl").read_text().splitlines()]
    assert lines == [dict(action, read_at=None)]


def test_bench_report_rewrites_only_the_part_between_its_markers(tmp_path):
    from cpi2.e2e import bench_detection

    q = quality.measure(TRUTH, Run([incident("jobs/bully/0", "jobs/web/0", 101)]))
    q.update(scenario="case9 (1h at 240x)", policy="project", speed=240.0, wall_s=61.0, load="1.00 2.00 3.00")
    path = tmp_path / "detection.md"
    path.write_text(
        "# Title\n\n%s\nold figures\n%s\n\n## Findings\nkept\n" % (bench_detection.BEGIN, bench_detection.END)
    )
    bench_detection.write_report(str(path), ["case9"], 1, [q], ["project: precision 1.00"], "0.5 0.5 0.5")
    text = path.read_text()
    assert text.startswith("# Title\n\n") and text.endswith("\n\n## Findings\nkept\n")
    assert "old figures" not in text
    assert "| case9 (1h at 240x) | project | 1 | 1.00 | 1/2 | 0.50 | 0 |" in text
    assert "- missed in case9 (1h at 240x) (project): jobs/noisy/0 on h1" in text
    assert "- project: precision 1.00" in text and "0.5 0.5 0.5 before" in text


def test_throttles_in_a_job_wide_shift_are_counted_wrong_and_job_wide_shift_decisions_counted():
    # web's release from minute 140 to 170: a THROTTLE about web/2 then (or up to 10 minutes
    # after) is a wrong one in the shift; at minute 185 it is not in the shift any more.
    shift = {"type": "shift", "job": "web", "class": "latency-sensitive", "start_us": 140 * MIN, "end_us": 170 * MIN}
    truth = TRUTH + [shift]
    inside = dict(incident("jobs/mr/0", "jobs/web/2", 150), victim_job="web")
    fading = dict(incident("jobs/mr/0", "jobs/web/2", 178), victim_job="web")
    after = dict(incident("jobs/mr/0", "jobs/web/2", 185), victim_job="web")
    other = dict(incident("jobs/mr/0", "jobs/db/0", 150), victim_job="db")
    said = dict(incident(None, "jobs/web/3", 152, decision="JOB_WIDE_SHIFT"), victim_job="web")
    right = dict(incident("jobs/bully/0", "jobs/web/0", 105), victim_job="web")
    m = quality.measure(truth, Run([inside, fading, after, other, said, right]))
    assert quality.in_shift(truth, inside) and quality.in_shift(truth, fading)
    assert not quality.in_shift(truth, after) and not quality.in_shift(truth, other)
    assert (m["shifts"], m["shift_throttles"], m["job_wide_shift"]) == (1, 2, 1)
