"""`cpi2ctl advise` over the fixture dataset on the local ClickHouse: the pairs ranked by evidence,
the JSON score file, and Kubernetes pod anti-affinity (required on the hostname for scope
machine, preferred for scope numa_node)."""

import json

from cpi2.numa import advise

WINDOW = ["--from", "4102444800000000", "--to", "4102446000000000"]


def test_table_ranks_pairs_by_evidence(cli, db):
    code, out, err = cli("--database", db, "advise", *WINDOW)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["victim_job", "antagonist_job"]
    first = lines[2].split() if set(lines[1]) <= {"-", " "} else lines[1].split()
    # websearch/mapreduce: 2 true-positive caps, victim at 1.625x its spec mean: score 1.25
    assert first[:2] == ["websearch", "mapreduce"] and first[-1] == "1.25" and "numa_node" in first


def test_score_file(cli, db):
    code, out, err = cli("--database", db, "advise", *WINDOW, "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    code, out, err = cli("--database", db, "advise", *WINDOW, "-o", "yaml")
    assert code == 0 and __import__("yaml").safe_load(out) == doc
    assert doc["kind"] == "cpi2.placement-advice/v1" and doc["from_us"] == 4102444800000000
    # the false positives' pairs (score 0) are not advised
    assert [p["jobs"] for p in doc["pairs"]] == [
        ["websearch", "mapreduce"],
        ["bigtable", "mapreduce"],
        ["mapreduce", "video"],
    ]
    top = doc["pairs"][0]
    assert (
        top["weight"] == 100 and top["evidence"]["true_positives"] == 2 and top["evidence"]["victim_numa_score"] == 0.95
    )
    assert top["scope"] == "numa_node" and doc["pairs"][1]["scope"] == "machine"  # bigtable: no NUMA score
    assert doc["pairs"][1]["weight"] == 80 and doc["pairs"][2]["weight"] == 40


def test_kubernetes_anti_affinity(cli, db):
    code, out, err = cli("--database", db, "advise", *WINDOW, "--anti-affinity", "-o", "json", "--label-key", "job")
    assert code == 0, err
    aa = json.loads(out)
    assert sorted(aa) == ["bigtable", "mapreduce", "video", "websearch"]
    # bigtable x mapreduce: scope machine, a required term both ways
    req = aa["bigtable"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert req == [
        {
            "labelSelector": {"matchExpressions": [{"key": "job", "operator": "In", "values": ["mapreduce"]}]},
            "topologyKey": "kubernetes.io/hostname",
        }
    ]
    # websearch x mapreduce: scope numa_node, preferred with the weight of its score
    pref = aa["websearch"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert pref[0]["weight"] == 100 and pref[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"][0][
        "values"
    ] == ["mapreduce"]
    mr = aa["mapreduce"]["podAntiAffinity"]
    assert len(mr["requiredDuringSchedulingIgnoredDuringExecution"]) == 2  # bigtable, video
    code, yaml_out, _ = cli("--database", db, "advise", *WINDOW, "--anti-affinity", "--label-key", "job")
    assert code == 0 and '"podAntiAffinity":' in yaml_out and '- "labelSelector":' in yaml_out


def test_yaml_writer_round_trips_through_a_yaml_reader():
    yaml = __import__("pytest").importorskip("yaml", reason="PyYAML is not in the .venv")
    obj = {"a": {"podAntiAffinity": {"x": [{"weight": 5, "t": {"k": ["v", "w"]}}], "y": []}}}
    assert yaml.safe_load(advise.to_yaml(obj)) == obj
