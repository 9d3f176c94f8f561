"""Detection quality of one run against the simulator's ground truth: who was named, who should
have been, how fast, and whether a latency-sensitive task was ever capped. Shared by the demo's
summary and `make bench` (bench_detection.py).

- precision: right THROTTLE incidents / all THROTTLE incidents. A THROTTLE is right only when
  the ground truth has an antagonism with the incident's host, its named antagonist AND its
  victim, at its (simulated) time (the episode, or the 10 minutes after, while its effect
  fades): a real antagonist of the host named for a victim it does not hurt is wrong;
- recall: eligible real antagonists (batch or best-effort hurting a latency-sensitive task: the
  only ones the paper's policy caps) named by at least one right THROTTLE / all eligible ones;
- detection latency: simulated seconds from an antagonist's onset to the first cap on it
  (target: 3 sampling periods + 5 s = 185 s). Faster than real time, every wall-clock second
  of processing counts `speed` simulated seconds, so runs at 1x give the real figure; the
  event-time part (onset to the anomalous sample that named it) is reported beside it;
- analysis latency: simulated seconds from the onset of a latency-sensitive victim's first
  antagonism (ground truth) to the job's first analysis of that victim on that host (the
  earliest incident about it, whatever its decision) at the incident's `detected_at_us`: the event
  time of the anomalous sample the analysis is about. An analysis the job queues keeps that time,
  so this says whether a victim is analysed and for which of its anomalous samples, not how long
  the queue held it (that shows in onset to cap);
- caps on latency-sensitive tasks (target: none).
"""

import statistics

LATENCY_TARGET_S = 3 * 60 + 5
FADE_US = 600_000_000


def truth_matches(truth, incident):
    """Does the incident's named antagonist really hurt the incident's victim, on its host, at
    that (simulated) time? Host, antagonist, victim and time all have to match one antagonism
    of the ground truth."""
    for t in truth:
        if (
            t["type"] == "antagonism"
            and t["host"] == incident["host"]
            and t["antagonist"] == incident["antagonist_task"]
            and t["victim"] == incident["victim_task"]
            and t["start_us"] <= incident["detected_at_us"] <= t["end_us"] + FADE_US
        ):
            return True
    return False


def eligible(t):
    return t["antagonist_class"] != "latency-sensitive" and t["victim_class"] == "latency-sensitive"


def onsets(truth):
    """(host, antagonist) -> the start of its first antagonism episode (simulated us)."""
    out = {}
    for t in truth:
        if t["type"] == "antagonism":
            key = (t["host"], t["antagonist"])
            out[key] = min(out.get(key, t["start_us"]), t["start_us"])
    return out


def first_after_onset(onset, events):
    """(host, antagonist) -> simulated seconds from its onset to the earliest of events, an
    iterable of ((host, antagonist), time_us)."""
    out = {}
    for key, t_us in events:
        if key in onset and t_us >= onset[key]:
            out[key] = min(out.get(key, float("inf")), (t_us - onset[key]) / 1e6)
    return out


def detection_latencies(truth, actions):
    """(host, antagonist) -> simulated seconds from its onset (ground truth) to the first cap on it."""
    return first_after_onset(
        onsets(truth), (((a["host"], a["task"]), a["at_us"]) for a in actions if a["kind"] == "APPLIED")
    )


def detection_event_latencies(truth, incidents):
    """(host, antagonist) -> simulated seconds from its onset to the event time of the first
    right THROTTLE naming it (the anomalous sample's window start): the pipeline's own delay in
    simulated time, without the wall-clock delays that a faster-than-real-time run multiplies."""
    return first_after_onset(
        onsets(truth),
        (
            ((i["host"], i["antagonist_task"]), i["detected_at_us"])
            for i in incidents
            if i["decision"] == "THROTTLE" and truth_matches(truth, i)
        ),
    )


def victim_onsets(truth):
    """(host, victim) -> the start of the first eligible antagonism hurting it (simulated us)."""
    out = {}
    for t in truth:
        if t["type"] == "antagonism" and eligible(t):
            key = (t["host"], t["victim"])
            out[key] = min(out.get(key, t["start_us"]), t["start_us"])
    return out


def analysis_latencies(truth, incidents):
    """(host, victim) -> simulated seconds from its first eligible antagonism's onset to the first
    analysis of it (any incident naming it as victim, at or after the onset)."""
    return first_after_onset(
        victim_onsets(truth), (((i["host"], i["victim_task"]), i["detected_at_us"]) for i in incidents)
    )


def measure(truth, monitor):
    """The figures of one run, as a dict (see the module's doc)."""
    throttles = [i for i in monitor.incidents if i["decision"] == "THROTTLE"]
    correct = [i for i in throttles if truth_matches(truth, i)]
    real = {(t["host"], t["antagonist"]) for t in truth if t["type"] == "antagonism" and eligible(t)}
    found = {(i["host"], i["antagonist_task"]) for i in correct} & real
    classes = {i["incident_id"]: i["antagonist_class"] for i in monitor.incidents}
    ls_caps = [
        a
        for a in monitor.actions
        if a["kind"] == "APPLIED" and classes.get(a.get("incident_id")) == "LATENCY_SENSITIVE"
    ]
    latencies = sorted(detection_latencies(truth, monitor.actions).values())
    event_latencies = sorted(detection_event_latencies(truth, monitor.incidents).values())
    victims = victim_onsets(truth)
    analysed = sorted(analysis_latencies(truth, monitor.incidents).values())
    return {
        "throttles": len(throttles),
        "correct": len(correct),
        "precision": len(correct) / len(throttles) if throttles else None,
        "real": len(real),
        "found": len(found),
        "recall": len(found) / len(real) if real else None,
        "missed": sorted(real - found),
        "latencies": latencies,
        "latency_median": statistics.median(latencies) if latencies else None,
        "latency_max": latencies[-1] if latencies else None,
        "event_latency_median": statistics.median(event_latencies) if event_latencies else None,
        "victims": len(victims),
        "victims_analysed": len(analysed),
        "analysis_latencies": analysed,
        "analysis_median": statistics.median(analysed) if analysed else None,
        "analysis_max": analysed[-1] if analysed else None,
        "ls_caps": len(ls_caps),
        "exits": sorted((t["host"], t["task"], t["start_us"]) for t in truth if t["type"] == "exit"),
    }


def fmt(x, spec="%.2f"):
    return "n/a" if x is None else spec % x
