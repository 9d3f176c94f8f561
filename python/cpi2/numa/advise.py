"""Placement advice from the interference history (issue 22, the paper's section 9): the job
pairs that should not share a machine or a NUMA node, from ClickHouse's placement_advice query
(incidents, judged caps, victim CPI, NUMA scores), and the forms a scheduler takes: Kubernetes pod
anti-affinity terms and a JSON score file.

A pair is advised when its score is above 0 (true positives, or incidents not judged, with the
victim's CPI above its spec mean). Kubernetes has no NUMA-node topology key, so a pair of scope
`machine` becomes a required anti-affinity term on `kubernetes.io/hostname` and a pair of scope
`numa_node` a preferred one (weight from its score): the kubelet's topology manager keeps pods on
one machine apart by NUMA node."""

import json

from cpi2.clickhouse import forensics

HOSTNAME = "kubernetes.io/hostname"


def pairs(from_us, to_us, url=None, database="cpi2", ch=None, limit=100, signal=""):
    """The placement_advice rows as dicts, best-evidenced first."""
    params = {"from_us": from_us, "to_us": to_us, "limit": limit, "signal": signal}
    kw = {"database": database, "ch": ch}
    if url:
        kw["url"] = url
    cols, rows = forensics.run("placement_advice", params, **kw)
    return [dict(zip(cols, r)) for r in rows]


def advised(rows):
    """The pairs to keep apart: score above 0, in the query's order."""
    return [r for r in rows if (r.get("score") or 0) > 0]


def score_file(rows, from_us, to_us):
    """The JSON score file: one entry per advised pair with its evidence."""
    keep = advised(rows)
    top = max((r["score"] for r in keep), default=0) or 1
    return {
        "kind": "cpi2.placement-advice/v1",
        "from_us": from_us,
        "to_us": to_us,
        "pairs": [
            {
                "jobs": [r["victim_job"], r["antagonist_job"]],
                "victim_job": r["victim_job"],
                "antagonist_job": r["antagonist_job"],
                "scope": r["scope"],
                "score": r["score"],
                "weight": max(1, min(100, round(100 * r["score"] / top))),
                "evidence": {
                    k: r[k]
                    for k in (
                        "incidents",
                        "hosts",
                        "true_positives",
                        "false_positives",
                        "not_judged",
                        "mean_correlation",
                        "mean_relative_cpi",
                        "capped_relative_cpi",
                        "victim_numa_score",
                    )
                },
            }
            for r in keep
        ],
    }


def anti_affinity(rows, label_key="app"):
    """Per job, the podAntiAffinity of its pods' spec: {job: {"podAntiAffinity": {...}}}. Both jobs
    of a pair get the term (a scheduler places whichever comes second)."""
    doc = score_file(rows, 0, 0)
    out = {}
    for p in doc["pairs"]:
        for me, other in ((p["victim_job"], p["antagonist_job"]), (p["antagonist_job"], p["victim_job"])):
            aa = out.setdefault(me, {"podAntiAffinity": {}})["podAntiAffinity"]
            selector = {"matchExpressions": [{"key": label_key, "operator": "In", "values": [other]}]}
            term = {"labelSelector": selector, "topologyKey": HOSTNAME}
            if p["scope"] == "machine":
                req = aa.setdefault("requiredDuringSchedulingIgnoredDuringExecution", [])
                if term not in req:
                    req.append(term)
            else:
                pref = aa.setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
                if all(t["podAffinityTerm"] != term for t in pref):
                    pref.append({"weight": p["weight"], "podAffinityTerm": term})
    return out


def to_yaml(obj, indent=0):
    """A small YAML writer for anti_affinity's output (dicts, lists, strings, numbers): no
    dependency, strings quoted as JSON (valid YAML)."""
    pad = "  " * indent
    lines = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                lines.append("%s%s:" % (pad, json.dumps(k)))
                lines.append(to_yaml(v, indent + 1))
            else:
                lines.append("%s%s: %s" % (pad, json.dumps(k), json.dumps(v)))
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, (dict, list)) and v:
                inner = to_yaml(v, indent + 1).splitlines()
                lines.append("%s- %s" % (pad, inner[0].strip()))
                lines.extend(inner[1:])
            else:
                lines.append("%s- %s" % (pad, json.dumps(v)))
    return "\n".join(lines)
