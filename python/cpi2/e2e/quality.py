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
  of processing counts `speed` simulated seconds, so runs at 1x give the real figure;
- detection latency in event time, free of the speed-up: the same first cap, timed as the
  analysis time of the incident it enforces (`analysed_at_us`: the host's event time when the job
  ran that analysis) minus the onset, plus the enforcer's real delay (wall-clock seconds from the
  monitor reading that incident to reading its APPLIED action). Beside it, onset to the analysis
  time of the first right THROTTLE (the job's part alone; all a replay without enforcer has);
- analysis latency: simulated seconds from the onset of a latency-sensitive victim's first
  antagonism (ground truth) to the job's first analysis of that victim on that host (the
  earliest incident about it, whatever its decision), at the incident's analysis time: a
  victim whose analysis waited for a free slot or for its host's period counts the wait;
- caps on latency-sensitive tasks (target: none);
- job-wide shifts (the truth's `shift` lines: a release, a new mix of requests): wrong THROTTLEs
  about a victim of a shifting job while it shifts (or in the 10 minutes after; target: none), and
  the incidents that say JOB_WIDE_SHIFT.
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


def analysed_at(incident):
    """The event time (us) at which the job ran the incident's analysis: its analysed_at_us, or for
    a job before Incident v5 its detected_at_us (the anomalous sample's time)."""
    at = incident.get("analysed_at_us")
    return incident["detected_at_us"] if at is None else at


def enforcer_delays(actions, read_at):
    """action_id -> real seconds from the monitor reading an incident to reading the APPLIED
    action that enforces it (read_at: Monitor.read_at), for the actions whose both it read."""
    out = {}
    for a in actions:
        if a["kind"] != "APPLIED" or not a.get("incident_id"):
            continue
        inc = read_at.get(("Incident", a["incident_id"]))
        act = read_at.get(("EnforcementAction", a.get("action_id")))
        if inc is not None and act is not None:
            out[a["action_id"]] = max(0.0, act - inc)
    return out


def detection_latencies(truth, actions):
    """(host, antagonist) -> simulated seconds from its onset (ground truth) to the first cap on it."""
    return first_after_onset(
        onsets(truth), (((a["host"], a["task"]), a["at_us"]) for a in actions if a["kind"] == "APPLIED")
    )


def detection_event_latencies(truth, incidents):
    """(host, antagonist) -> simulated seconds from its onset to the analysis time of the first
    right THROTTLE naming it: the job's own delay in event time, without the wall-clock delays
    that a faster-than-real-time run multiplies."""
    return first_after_onset(
        onsets(truth),
        (
            ((i["host"], i["antagonist_task"]), analysed_at(i))
            for i in incidents
            if i["decision"] == "THROTTLE" and truth_matches(truth, i)
        ),
    )


def cap_event_latencies(truth, incidents, actions, delays):
    """(host, antagonist) -> seconds from its onset to the first cap on it in event time: the
    analysis time of the incident the cap enforces, plus the enforcer's real delay for it
    (delays: enforcer_delays). Caps whose incident or delay is unknown are left out."""
    by_id = {i["incident_id"]: i for i in incidents}
    return first_after_onset(
        onsets(truth),
        (
            ((a["host"], a["task"]), analysed_at(by_id[a["incident_id"]]) + delays[a["action_id"]] * 1e6)
            for a in actions
            if a["kind"] == "APPLIED" and a.get("action_id") in delays and a["incident_id"] in by_id
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
    analysis of it (any incident naming it as victim, at or after the onset), at its analysis time."""
    return first_after_onset(victim_onsets(truth), (((i["host"], i["victim_task"]), analysed_at(i)) for i in incidents))


def in_shift(truth, incident):
    """Is the incident's victim a task of a job that shifts (the truth's `shift` lines) at the
    incident's (simulated) time, or in the 10 minutes after?"""
    return any(
        t["type"] == "shift"
        and t["job"] == incident["victim_job"]
        and t["start_us"] <= incident["detected_at_us"] <= t["end_us"] + FADE_US
        for t in truth
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
    delays = enforcer_delays(monitor.actions, getattr(monitor, "read_at", {}))
    cap_event = sorted(cap_event_latencies(truth, monitor.incidents, monitor.actions, delays).values())
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
        "cap_event_latencies": cap_event,
        "cap_event_median": statistics.median(cap_event) if cap_event else None,
        "cap_event_max": cap_event[-1] if cap_event else None,
        "enforcer_delays": sorted(delays.values()),
        "victims": len(victims),
        "victims_analysed": len(analysed),
        "analysis_latencies": analysed,
        "analysis_median": statistics.median(analysed) if analysed else None,
        "analysis_max": analysed[-1] if analysed else None,
        "ls_caps": len(ls_caps),
        "shifts": sum(1 for t in truth if t["type"] == "shift"),
        "shift_throttles": sum(1 for i in throttles if in_shift(truth, i) and not truth_matches(truth, i)),
        "job_wide_shift": sum(1 for i in monitor.incidents if i["decision"] == "JOB_WIDE_SHIFT"),
        "exits": sorted((t["host"], t["task"], t["start_us"]) for t in truth if t["type"] == "exit"),
    }


def fmt(x, spec="%.2f"):
    return "n/a" if x is None else spec % x
