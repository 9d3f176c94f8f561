"""docker-compose.yml without a Docker engine: compose-go (the loader inside `docker compose`)
loads and validates it; the rules of compose_rules.py hold on it and catch broken copies; the
one-shot services' scripts and files are the repository's."""

import pathlib
import re
import subprocess
import sys

import compose_rules as rules
import pytest
import yaml
from conftest import COMPOSE, DOCKER, ROOT, compose_check, stack_env

SERVICES = {
    "kafka-secrets",
    "kafka",
    "kafka-topics",
    "clickhouse",
    "clickhouse-schema",
    "jobmanager",
    "taskmanager",
    "flink-submit",
    "grafana",
    "telegraf",
    "collector",
    "enforcer",
    "fleetsim",
    "fleetsim-enforcer",
}


def test_compose_go_loads_it_with_every_service(project):
    assert set(project["services"]) == SERVICES
    assert project["services"]["fleetsim"]["profiles"] == ["fleetsim"]
    assert project["services"]["fleetsim-enforcer"]["profiles"] == ["fleetsim"]
    assert project["services"]["clickhouse"]["cpu_shares"] == 256  # yields the CPU to the pipeline
    for agent in ("collector", "enforcer"):
        s = project["services"][agent]
        assert not s.get("privileged") and s["pid"] == "host" and s["cgroup"] == "host", agent
        assert s["cap_drop"] == ["ALL"] and "no-new-privileges:true" in s["security_opt"], agent
        assert any(v["source"] == "/sys/fs/cgroup" == v["target"] for v in s["volumes"]), agent
    # collector: perf_event_open on cgroups needs CAP_PERFMON; enforcer: root-owned files, nothing
    assert project["services"]["collector"]["cap_add"] == ["PERFMON"]
    assert not project["services"]["enforcer"].get("cap_add")
    assert not any(s.get("privileged") for s in project["services"].values())
    cg = {v["target"]: v.get("read_only", False) for v in project["services"]["enforcer"]["volumes"]}
    assert cg["/sys/fs/cgroup"] is False  # the enforcer writes caps


@pytest.mark.parametrize("rule", ["image", "mount", "depends_on", "port"])
def test_the_file_keeps_every_rule(project, rule, built):
    args = {"image": (stack_env(), built), "mount": (ROOT,), "depends_on": (), "port": (stack_env(),)}[rule]
    assert getattr(rules, f"{rule}_problems")(project, *args) == []


def _set(path, value):
    def change(d):
        *keys, last = path
        for k in keys:
            d = d[k]
        d[last] = value

    return change


S = ("services",)
BROKEN = {  # change to the YAML -> what the rules must say
    "missing mounted file": (
        _set(S + ("kafka-topics", "volumes", 0), "./docker/nothere.sh:/opt/cpi2/kafka-topics.sh:ro"),
        "kafka-topics: bind mount /",
        "nothere.sh does not exist",
    ),
    "port not stack.env's": (_set(S + ("kafka", "ports"), ["9093:9092"]), "kafka port 9092 is published as 9093"),
    "image not built": (
        _set(S + ("enforcer", "image"), "cpi2/enforcr:0.1.0"),
        "enforcer: image cpi2/enforcr:0.1.0 is not",
    ),
    "image of another version": (
        _set(S + ("jobmanager", "image"), "cpi2/flink-jobs:0.0.9"),
        "jobmanager: image cpi2/flink-jobs:0.0.9 is not one make images builds",
    ),
    "a build of its own": (
        _set(S + ("collector", "build"), {"context": ".", "dockerfile": "docker/agents.Dockerfile"}),
        "collector: builds its image itself",
    ),
    "latest image": (_set(S + ("grafana", "image"), "grafana/grafana:latest"), "grafana: image grafana/grafana:latest"),
    "Kafka not stack.env's": (
        _set(S + ("kafka", "image"), "apache/kafka:4.0.0"),
        "kafka: image apache/kafka:4.0.0 is not",
    ),
    "healthy without healthcheck": (
        _set(S + ("telegraf", "depends_on"), {"kafka-topics": {"condition": "service_healthy"}}),
        "telegraf waits for kafka-topics to be healthy",
    ),
    "one-shot not waited for": (
        _set(S + ("fleetsim", "depends_on"), {"kafka-topics": {"condition": "service_completed_successfully"}}),
        "nothing waits for the one-shot flink-submit",
    ),
    "server without healthcheck": (
        lambda d: d["services"]["taskmanager"].pop("healthcheck"),
        "taskmanager has no healthcheck",
    ),
    "one-shot restarts": (
        _set(S + ("flink-submit", "restart"), "on-failure"),
        "one-shot flink-submit must not restart",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_rules_catch_a_broken_file(load_changed, case, built):
    change, *messages = BROKEN[case]
    rc, project, err = load_changed(change)
    assert rc == 0, err  # compose-go accepts it: only the rules see the problem
    problems = "\n".join(
        rules.image_problems(project, stack_env(), built)
        + rules.mount_problems(project, ROOT)
        + rules.depends_on_problems(project)
        + rules.port_problems(project, stack_env())
    )
    assert all(m in problems for m in messages), problems


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["services"]["grafana"]["depends_on"].update({"nothere": {"condition": "service_started"}}),
            "nothere",
        ),
        (lambda d: d["services"]["kafka"].update({"imagee": "x"}), "imagee"),
        (lambda d: d["services"]["kafka"].update({"ports": "9092"}), "ports"),
    ],
)
def test_compose_go_rejects_invalid_files(load_changed, change, message):
    rc, _, err = load_changed(change)
    assert rc == 1 and message in err


def test_settings_are_interpolated(project):
    rc, p, err = compose_check(
        COMPOSE, ["CPI2_HOSTNAME=node-7", "CPI2_COLLECTOR_EVENTS=task-clock", "CPI2_ENFORCER_DRY_RUN=true"]
    )
    assert rc == 0, err
    s = p["services"]
    assert s["collector"]["command"][-4:] == ["--host", "node-7", "--events", "task-clock"]
    assert "--dry-run=true" in s["enforcer"]["command"]
    assert s["telegraf"]["hostname"] == s["collector"]["hostname"] == s["enforcer"]["hostname"] == "node-7"
    assert "--dry-run=false" in project["services"]["enforcer"]["command"]


def test_grafana_is_the_one_the_dashboards_are_checked_with(project):
    tag = project["services"]["grafana"]["image"].split(":")[1]
    assert f"@grafana/schema@{tag}" in (ROOT / "grafana" / "schema" / "README.md").read_text()


def test_grafana_gets_its_provisioning(project):
    g = project["services"]["grafana"]
    mounts = {v["target"]: pathlib.Path(v["source"]) for v in g["volumes"] if v["type"] == "bind"}
    assert mounts["/etc/grafana/provisioning"] == ROOT / "grafana" / "provisioning"
    provider = yaml.safe_load((ROOT / "grafana" / "provisioning" / "dashboards" / "cpi2.yaml").read_text())[
        "providers"
    ][0]
    assert mounts[provider["options"]["path"]] == ROOT / "grafana" / "dashboards"
    assert g["environment"]["CPI2_CLICKHOUSE_HOST"] in project["services"]
    assert g["environment"]["GF_PLUGINS_PREINSTALL_SYNC"].startswith("grafana-clickhouse-datasource@")
    home = g["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (ROOT / "grafana" / "dashboards" / pathlib.Path(home).name).is_file()


def test_one_shot_commands_point_at_real_files(project):
    s = project["services"]
    schema_job = s["clickhouse-schema"]
    assert (
        schema_job["entrypoint"][1:3] == ["-m", "cpi2.clickhouse.apply"]
        and (ROOT / "python" / "cpi2" / "clickhouse" / "apply.py").is_file()
    )
    # the job jar where the Flink image puts it (docker/flink.Dockerfile), the same as the chart's jarURI
    jar = s["flink-submit"]["environment"]["CPI2_JOB_JAR"]
    assert "COPY usrlib " + str(pathlib.Path(jar).parent) in (DOCKER / "flink.Dockerfile").read_text()
    values = yaml.safe_load((ROOT / "deploy" / "helm" / "cpi2" / "values.yaml").read_text())
    assert values["pipeline"]["jarURI"] == "local://" + jar
    assert "--kafka.bootstrap kafka:19092" in s["flink-submit"]["environment"]["CPI2_JOB_ARGS"]
    assert (
        s["kafka-secrets"]["entrypoint"][1] == "/opt/cpi2/kafka-secrets.sh" and (DOCKER / "kafka-secrets.sh").is_file()
    )
    assert s["kafka"]["entrypoint"][1] == "/opt/cpi2/kafka-start.sh" and (DOCKER / "kafka-start.sh").is_file()


def test_schema_service_needs_only_the_standard_library(project):
    """clickhouse-schema runs cpi2.clickhouse.apply with Debian's python3 alone: no site-packages (-S) here either."""
    cmd = project["services"]["clickhouse-schema"]["command"]
    r = subprocess.run(
        [sys.executable, "-S", "-s", "-E", "-m", "cpi2.clickhouse.apply", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT / "python",
    )
    assert r.returncode == 0, r.stderr
    assert all(opt in r.stdout for opt in cmd if opt.startswith("--"))


@pytest.mark.parametrize("script", sorted(p.name for p in DOCKER.glob("*.sh")))
def test_scripts_parse(script):
    subprocess.run(["bash", "-n", str(DOCKER / script)], check=True)


def test_every_topic_is_created():
    topics = ROOT / "schemas" / "topics.conf"
    out = subprocess.run(
        ["bash", str(DOCKER / "kafka-topics.sh"), "--print", str(topics)], capture_output=True, text=True, check=True
    ).stdout
    listed = {line.split()[0] for line in topics.read_text().splitlines() if line.strip() and not line.startswith("#")}
    assert (
        set(re.findall(r"--topic (\S+)", out)) == listed
        and {"cpi2.samples", "cpi2.control", "cpi2.host-metrics"} <= listed
    )
    assert (
        "--topic cpi2.specs --partitions 4 --replication-factor 1 --config retention.ms=-1 --config retention.bytes=-1 --config cleanup.policy=compact --config segment.ms=3600000"
        in out
    )
    assert (
        "--topic cpi2.samples --partitions 8 --replication-factor 1 --config retention.ms=604800000 --config retention.bytes=536870912 "
        in out
    )


def _secrets_mount(service):
    return [v for v in service.get("volumes", []) if v["type"] == "volume" and v["source"] == "kafka-secrets"]


def test_kafka_takes_only_sasl_over_tls_with_acls(project):
    k = project["services"]["kafka"]["environment"]
    protocols = dict(x.split(":") for x in k["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    assert set(protocols.values()) == {"SASL_SSL"}, protocols
    assert k["KAFKA_AUTHORIZER_CLASS_NAME"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert k["KAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND"] == "false" and k["KAFKA_SUPER_USERS"] == "User:admin"
    assert not any("password" in v.lower() for v in k.values()), "a password in the compose file"
    topics = project["services"]["kafka-topics"]["entrypoint"]
    assert topics[topics.index("--acls") + 1] == "/opt/cpi2/acls.conf" and "--command-config" in topics


# service -> the principal whose client file it is given (stack/kafka/acls.conf)
CLIENTS = {
    "collector": "collector",
    "fleetsim": "collector",
    "enforcer": "enforcer",
    "fleetsim-enforcer": "enforcer",
    "flink-submit": "detector",
}


@pytest.mark.parametrize("service,principal", sorted(CLIENTS.items()))
def test_each_client_signs_in_as_its_principal(project, service, principal):
    s = project["services"][service]
    words = list(s.get("command") or []) + (s.get("environment") or {}).get("CPI2_JOB_ARGS", "").split()
    i = words.index("--kafka-client-file") if "--kafka-client-file" in words else words.index("--kafka.client-file")
    assert words[i + 1] == f"/secrets/kafka-{principal}.properties"
    assert _secrets_mount(s) and all(v.get("read_only") for v in _secrets_mount(s)), service
    acls = (ROOT / "stack" / "kafka" / "acls.conf").read_text()
    assert re.search(rf"^{principal}\s", acls, re.M), principal


@pytest.mark.parametrize("agent", ["collector", "enforcer"])
def test_agents_serve_metrics_and_their_healthcheck_asks_healthz(project, agent):
    """As the chart: --metrics-address on the agent's port, and the healthcheck a GET /healthz
    there that wants 200 (the image has bash, no curl)."""
    s = project["services"][agent]
    cmd = s["command"]
    port = cmd[cmd.index("--metrics-address") + 1].lstrip(":")
    values = yaml.safe_load((ROOT / "deploy" / "helm" / "cpi2" / "values.yaml").read_text())
    assert int(port) == values["agents"]["metrics"][agent + "Port"]
    test = " ".join(s["healthcheck"]["test"])
    assert f"/dev/tcp/127.0.0.1/{port}" in test and "GET /healthz HTTP/1.0" in test and "200 OK" in test, test


def test_servers_that_read_kafka_secrets_mount_them_read_only(project):
    for name in ("kafka", "kafka-topics", "clickhouse", "telegraf", "jobmanager", "taskmanager"):
        mounts = _secrets_mount(project["services"][name])
        assert mounts and all(v.get("read_only") for v in mounts), name
    assert [v.get("read_only", False) for v in _secrets_mount(project["services"]["kafka-secrets"])] == [False]


# service -> the copy of ClickHouse's password it reads (docker/kafka-secrets.sh makes one a reader)
CLICKHOUSE_READERS = {
    "clickhouse": "clickhouse",
    "clickhouse-schema": "tools",
    "flink-submit": "flink",
    "grafana": "grafana",
}


def test_clickhouse_signs_in_as_the_charts_user_with_a_password(project):
    """The chart's ClickHouse credentials (clickhouse.user, a password from a secret): no
    password-less default user; the password only in kafka-secrets' files, each client given its
    own copy, read where it runs."""
    s = project["services"]
    user = yaml.safe_load((ROOT / "deploy" / "helm" / "cpi2" / "values.yaml").read_text())["clickhouse"]["user"]
    assert user != "default"
    ch = s["clickhouse"]
    assert ch["environment"].get("CLICKHOUSE_USER") == user and "CLICKHOUSE_SKIP_USER_SETUP" not in ch["environment"]
    for name in s:
        env = s[name].get("environment") or {}
        assert not any("PASSWORD" in k and not k.endswith("_FILE") for k in env if k != "GF_SECURITY_ADMIN_PASSWORD"), (
            name,
            "a password in the compose file",
        )
    files = {name: "/secrets/clickhouse-password-" + reader for name, reader in CLICKHOUSE_READERS.items()}
    assert "CLICKHOUSE_PASSWORD=" in " ".join(ch["entrypoint"]) and files["clickhouse"] in " ".join(ch["entrypoint"])
    assert f"--user {user} " in " ".join(ch["healthcheck"]["test"]) and files["clickhouse"] in " ".join(
        ch["healthcheck"]["test"]
    )
    schema = s["clickhouse-schema"]["command"]
    assert (
        schema[schema.index("--user") + 1] == user
        and schema[schema.index("--password-file") + 1] == files["clickhouse-schema"]
    )
    loader = s["flink-submit"]["environment"]["CPI2_LOADER_ARGS"].split()
    assert loader[loader.index("--clickhouse.user") + 1] == user
    assert loader[loader.index("--clickhouse.password-file") + 1] == files["flink-submit"]
    grafana = s["grafana"]
    assert grafana["environment"]["CPI2_CLICKHOUSE_USER"] == user and files["grafana"] in " ".join(
        grafana["entrypoint"]
    )
    # the loader runs in the TaskManager, which holds the file
    for name in ("clickhouse", "clickhouse-schema", "taskmanager", "grafana"):
        assert _secrets_mount(s[name]) and all(v.get("read_only") for v in _secrets_mount(s[name])), name
    # each copy belongs to the user its container runs as
    script = (DOCKER / "kafka-secrets.sh").read_text()
    owners = {"clickhouse": 101, "tools": 65532, "flink": 9999, "grafana": 472}
    for reader, uid in owners.items():
        assert re.search(rf'^chown {uid} .*"\$dir/clickhouse-password-{reader}"', script, re.M), reader


def test_secrets_script_makes_files_no_one_else_reads(tmp_path):
    """kafka-secrets.sh over the real make-secrets.sh (openssl), without chown: files 0600 but
    ca.pem, and the broker's JAAS lines for both client listeners."""
    d = tmp_path / "s"
    script = (DOCKER / "kafka-secrets.sh").read_text().replace("/opt/cpi2/kafka/", str(ROOT / "stack" / "kafka") + "/")
    script = re.sub(r"^chown .*$", ":", script, flags=re.M)
    (tmp_path / "k.sh").write_text(script)
    subprocess.run(["bash", str(tmp_path / "k.sh"), str(d)], check=True, capture_output=True)
    modes = {f.name: f.stat().st_mode & 0o777 for f in d.iterdir()}
    assert modes.pop("ca.pem") == 0o644 and set(modes.values()) == {0o600}, modes
    assert {"kafka-admin-java.properties", "kafka-server.pem", "kafka-collector.properties"} <= set(modes)
    ch = {f: (d / f).read_text() for f in modes if f.startswith("clickhouse-password-")}
    assert set(ch) == {"clickhouse-password-" + r for r in CLICKHOUSE_READERS.values()}, modes
    assert len(set(ch.values())) == 1 and re.fullmatch(r"[0-9a-f]{32}\n", next(iter(ch.values()))), ch
    subprocess.run(["bash", str(tmp_path / "k.sh"), str(d)], check=True, capture_output=True)
    assert (d / "clickhouse-password-grafana").read_text() == ch["clickhouse-password-grafana"], "made once"
    sasl = (d / "server-sasl.properties").read_text()
    assert "listener.name.internal.plain.sasl.jaas.config=" in sasl and "listener.name.external.scram-sha-512" in sasl
    assert 'user_collector="' in sasl and 'user_detector="' not in sasl  # detector is a SCRAM user
    san = subprocess.run(
        ["openssl", "x509", "-in", str(d / "kafka-server.pem"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:kafka" in san and "IP Address:127.0.0.1" in san


def _arg(command, option):
    return command[command.index(option) + 1]


def _volume_at(service, target):
    return next((v for v in service.get("volumes", []) if v["target"] == target), None)


def test_fleetsim_profile_closes_the_loop(project):
    """fleetsim writes its simulated hosts' cgroup tree into a volume; fleetsim-enforcer acts for
    every host folder of that same volume, in the simulator's clock (as python/cpi2/e2e runs them);
    it touches nothing of the real host."""
    sim, enf = project["services"]["fleetsim"], project["services"]["fleetsim-enforcer"]
    root = _arg(sim["command"], "--cgroup-root")
    tree = _volume_at(sim, root)
    assert tree and tree["type"] == "volume" and not tree.get("read_only"), sim["volumes"]
    sim_root = _arg(enf["command"], "--sim-hosts-root")
    mounted = _volume_at(enf, sim_root)
    assert mounted and mounted["source"] == tree["source"] and not mounted.get("read_only"), enf["volumes"]
    # the simulator writes its clock as <cgroup root>/clock
    assert _arg(enf["command"], "--clock-file") == root + "/clock"
    assert '"%s/clock"' in (ROOT / "collectors" / "fleetsim" / "src" / "main.c").read_text()
    # its own state and consumer group (default cpi2-enforcer-sim), not the host enforcer's
    state = _arg(enf["command"], "--state-dir")
    assert _volume_at(enf, state)["source"] != _volume_at(project["services"]["enforcer"], state)["source"]
    assert "--group-id" not in enf["command"] and "--host" not in enf["command"]
    assert '"sim" : c->host' in (ROOT / "enforcer" / "src" / "conf.c").read_text()
    assert not any(v["target"].startswith("/sys") for v in enf["volumes"])
    assert not enf.get("pid") and not enf.get("cgroup") and enf["cap_drop"] == ["ALL"]
    assert enf["depends_on"]["fleetsim"]["condition"] == "service_started"
    assert enf["image"] == project["services"]["enforcer"]["image"]


def test_submission_reads_the_jobmanagers_savepoints(project):
    s = project["services"]
    folder = s["flink-submit"]["environment"]["CPI2_SAVEPOINT_DIR"]
    props = yaml.safe_load(s["jobmanager"]["environment"]["FLINK_PROPERTIES"])
    assert props["execution.checkpointing.savepoint-dir"] == "file://" + folder
    state = _volume_at(s["jobmanager"], "/opt/flink/state")
    mine = _volume_at(s["flink-submit"], "/opt/flink/state")
    assert folder.startswith("/opt/flink/state/") and mine and mine["source"] == state["source"]


FAKE_FLINK = """#!/bin/bash
# flink CLI stand-in: logs its arguments; `list -r` prints $FAKE_RUNNING (lines as flink prints them)
echo "$*" >> "$FAKE_LOG"
if [[ $1 == list ]]; then printf '%s\n' "$FAKE_RUNNING"; fi
"""


def _submit(tmp_path, *args, running=""):
    flink = tmp_path / "flink"
    flink.write_text(FAKE_FLINK)
    flink.chmod(0o755)
    jar = tmp_path / "job.jar"
    jar.write_bytes(b"PK")
    log = tmp_path / "flink.log"
    log.write_text("")
    env = {
        "PATH": "/usr/bin:/bin",
        "FLINK": str(flink),
        "FAKE_LOG": str(log),
        "FAKE_RUNNING": running,
        "FLINK_JOBMANAGER": "jobmanager:8081",
        "CPI2_JOB_JAR": str(jar),
        "CPI2_JOB_ARGS": "--kafka.bootstrap kafka:19092",
        "CPI2_LOADER_ARGS": "--clickhouse.url http://clickhouse:8123",
        "CPI2_SAVEPOINT_DIR": str(tmp_path / "savepoints"),
    }
    r = subprocess.run(["bash", str(DOCKER / "flink-submit.sh"), *args], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [line.split() for line in log.read_text().splitlines() if not line.startswith("list")], r.stderr


def _savepoint(tmp_path, job, name, age_s, complete=True):
    import os
    import time

    d = tmp_path / "savepoints" / job / name
    d.mkdir(parents=True)
    if complete:
        (d / "_metadata").write_bytes(b"meta")
        t = time.time() - age_s
        os.utime(d / "_metadata", (t, t))
    return d


def test_submission_starts_fresh_without_a_savepoint(tmp_path):
    runs, _ = _submit(tmp_path)
    assert [r[:2] for r in runs] == [["run", "-d"], ["run", "-d"]]
    assert all("-s" not in r for r in runs)
    assert [r[r.index("-c") + 1] for r in runs] == ["org.cpi2.flink.Cpi2Job", "org.cpi2.loader.LoaderJob"]


def test_submission_resumes_each_job_from_its_latest_savepoint(tmp_path):
    _savepoint(tmp_path, "cpi2-flink-jobs", "savepoint-aaaaaa-old", 3600)
    newest = _savepoint(tmp_path, "cpi2-flink-jobs", "savepoint-bbbbbb-new", 60)
    _savepoint(tmp_path, "cpi2-flink-jobs", "savepoint-cccccc-unfinished", 0, complete=False)
    _savepoint(tmp_path, "another-job", "savepoint-dddddd", 0)
    runs, err = _submit(tmp_path)
    job, loader = runs
    assert job[job.index("-s") + 1] == str(newest) and "resumes from savepoint" in err
    assert job[job.index("--job.name") + 1] == "cpi2-flink-jobs"
    assert "-s" not in loader  # no savepoint of its own: another job's is not its
    loader_sp = _savepoint(tmp_path, "cpi2-loader", "savepoint-eeeeee", 10)
    runs, _ = _submit(tmp_path)
    assert runs[1][runs[1].index("-s") + 1] == str(loader_sp)


def test_submission_leaves_a_running_job_alone_and_stop_takes_savepoints(tmp_path):
    running = "24.11.2026 23:00:00 : 0123456789abcdef0123456789abcdef : cpi2-flink-jobs (RUNNING)"
    runs, err = _submit(tmp_path, running=running)
    assert len(runs) == 1 and runs[0][runs[0].index("--job.name") + 1] == "cpi2-loader"
    assert "cpi2-flink-jobs is already running" in err
    stops, err = _submit(tmp_path, "stop", running=running)
    folder = str(tmp_path / "savepoints" / "cpi2-flink-jobs")
    assert stops == [["stop", "-m", "jobmanager:8081", "--savepointPath", folder, "0123456789abcdef0123456789abcdef"]]
    assert "cpi2-loader is not running" in err
