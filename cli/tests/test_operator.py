"""cpi2ctl's operator reads on the fixture dataset (year 2100) of the real local ClickHouse: the
caps in force at an instant, recent incidents with filters, Kubernetes tasks as namespace/pod,
the one spelling of output (-o table|json|yaml), --version."""

import json

import pytest
import yaml

from cpi2.cli import main
from cpi2.testing import fixtures

WINDOW = ["--from", "2100-01-01T00:00:00Z", "--to", "2100-01-01T00:20:00Z"]
MIN = 60_000_000
T0 = fixtures.FIXTURE_FROM_US


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main.main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("cpi2ctl 0.1.0") and "commit " in out


def test_caps_in_force_at_an_instant(cli, db):
    # 00:17:30: a2 (h1 video/1, incident, to 00:19), op1 (h2 sorter/2, to 00:19), op2 (h3 video/1,
    # to 00:20); a1 on h1 was released at 00:14 and a3 on h2 expired at 00:11
    code, out, err = cli("--database", db, "caps", "--at", "2100-01-01T00:17:30Z", "-o", "json")
    assert code == 0, err
    caps = json.loads(out)
    assert [(c["host"], c["task"], c["cause"]) for c in caps] == [
        ("h1", "video/1", "INCIDENT"),
        ("h2", "sorter/2", "OPERATOR"),
        ("h3", "video/1", "OPERATOR"),
    ]
    assert caps[0]["expires_at_us"] == T0 + 19 * MIN and caps[0]["incident_id"] == "h1-websearch/0-2"
    code, out, err = cli("--database", db, "caps", "--at", "2100-01-01T00:12:30Z", "--host", "h1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[:3] == ["h1", "mapreduce/3", "APPLIED"] and lines[-1] == "(1 row)"
    assert "2100-01-01T00:15:00Z" in lines[1]  # its expiry, as ISO 8601
    code, out, err = cli("--database", db, "caps", "--at", "2100-01-01T00:14:30Z", "--host", "h1", "-o", "json")
    assert json.loads(out) == []  # released by the operator at 00:14


def test_incidents_with_filters(cli, db):
    code, out, err = cli("--database", db, "incidents", *WINDOW, "-o", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 9 and rows[0]["detected_at_us"] >= rows[-1]["detected_at_us"]  # newest first
    by_id = {r["incident_id"]: r for r in rows}
    assert by_id["h1-websearch/0-1"]["action"] == "APPLIED" and by_id["h2-websearch/1-5"]["action"] == "REFUSED"
    code, out, err = cli(
        "--database", db, "incidents", *WINDOW, "--job", "websearch", "--decision", "THROTTLE", "--limit", "2"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:-1]] == ["h1-websearch/0-2", "h2-websearch/1-5"]
    assert lines[-1] == "(2 rows)"
    code, out, err = cli("--database", db, "incidents", *WINDOW, "--host", "h4", "-o", "yaml")
    assert code == 0 and yaml.safe_load(out)[0]["decision"] == "VICTIM_CPU_TOO_LOW"


def test_grafana_times(cli, db):
    """--from now-1d is a value, not a flag (the issue's first command failed with argparse), and
    the fixtures, 74 years ahead, are not within it."""
    code, out, err = cli("--database", db, "query", "top-antagonists", "--job", "websearch", "--from", "now-1d")
    assert code == 0, err
    assert out.splitlines()[-1] == "(0 rows)"


@pytest.mark.parametrize("fmt", ["table", "json", "yaml"])
def test_every_form_has_the_same_rows(cli, db, fmt):
    code, out, err = cli(
        "--database", db, "query", "victim-incidents", "--victim-task", "websearch/0", *WINDOW, "-o", fmt
    )
    assert code == 0, err
    if fmt == "table":
        assert out.splitlines()[-1] == "(5 rows)"
    else:
        rows = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert len(rows) == 5 and rows[0]["detected_at_us"] == 4102445340000000


@pytest.fixture(scope="module")
def k8s_db(ch):
    """The fixtures plus a Kubernetes node k1: pod shop/web-7d9f on the kubelet's cgroup, hurt by
    batch/etl-1, with an incident and a cap."""
    name = fixtures.database_name("cpi2ctl_k8s_test")
    fixtures.create_fixture_database(ch, name)
    web, etl = (
        "kubepods/pod0b5e8c1a-1111-4a4a-8a8a-000000000001",
        "kubepods/besteffort/pod0b5e8c1a-2222-4a4a-8a8a-000000000002",
    )
    samples = []
    for m in range(20):
        for task, job, pod in ((web, "shop/deployment/web", "web-7d9f"), (etl, "batch/job/etl", "etl-1")):
            samples.append(
                {
                    "host": "k1",
                    "task": task,
                    "job": job,
                    "task_id": pod,
                    "platform": "p1",
                    "task_class": "LATENCY_SENSITIVE" if pod.startswith("web") else "BEST_EFFORT",
                    "is_protected": 0,
                    "window_start_us": T0 + m * MIN,
                    "window_us": 10_000_000,
                    "cycles": 10**9,
                    "instructions": 10**9,
                    "counter_source": "SIMULATED",
                    "time_running_ratio": 1.0,
                    "cpu_usage": 1.0,
                    "cpi": 1.0,
                }
            )
    fixtures.insert_rows(ch, name, "samples", [json.dumps(s) for s in samples])
    incident = json.loads(fixtures.sink_rows("incidents")[0])
    incident.update(
        incident_id="k1-web-1", host="k1", victim_task=web, victim_job="shop/deployment/web", antagonist_task=etl
    )
    fixtures.insert_rows(ch, name, "incidents", [json.dumps(incident)])
    yield name, web, etl
    ch.query(f"DROP DATABASE IF EXISTS {name}")


def test_kubernetes_tasks_as_namespace_pod(cli, k8s_db):
    db, web, etl = k8s_db
    code, out, err = cli("--database", db, "incidents", *WINDOW, "--host", "k1", "-o", "json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["victim_task"], row["antagonist_task"]) == ("shop/web-7d9f", "batch/etl-1")
    code, out, err = cli("--database", db, "incidents", *WINDOW, "--host", "k1", "--cgroups", "-o", "json")
    assert (json.loads(out)[0]["victim_task"], json.loads(out)[0]["antagonist_task"]) == (web, etl)
    # a pod's name where a task is asked: its cgroup on that host
    code, out, err = cli(
        "--database", db, "incidents", *WINDOW, "--host", "k1", "--task", "shop/web-7d9f", "-o", "json"
    )
    assert [r["incident_id"] for r in json.loads(out)] == ["k1-web-1"]
    # without a host the name is taken as it is (no lookup over every host's samples)
    code, out, err = cli("--database", db, "incidents", *WINDOW, "--task", "shop/web-7d9f", "-o", "json")
    assert json.loads(out) == []
    # fleet tasks that look like namespace/pod stay as they are
    code, out, err = cli("--database", db, "incidents", *WINDOW, "--host", "h1", "--task", "websearch/0", "-o", "json")
    assert len(json.loads(out)) == 3


def test_cap_of_a_pod_sends_its_cgroup(cli, k8s_db, monkeypatch):
    """cpi2ctl cap namespace/pod --host: the command names the pod's cgroup on that host (publish,
    tested in test_control, is replaced here so that no enforcer gets a cap)."""
    from cpi2.cli import control

    db, web, _ = k8s_db
    sent = []

    def publish(rec, *a, **k):
        sent.append(rec)
        return 0, 0

    monkeypatch.setattr(control, "publish", publish)
    monkeypatch.setattr(control.timerange, "now_us", lambda: fixtures.FIXTURE_TO_US)
    code, out, err = cli("--database", db, "cap", "shop/web-7d9f", "--host", "k1", "--cpu", "0.2")
    assert code == 0, err
    assert sent[0]["task"] == web and f"cap {web} to 0.2 CPU" in out
