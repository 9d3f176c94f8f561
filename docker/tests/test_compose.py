"""docker-compose.yml without a Docker engine: compose-go (the loader inside `docker compose`)
loads and validates it; every image pinned and consistent with the local stack's versions; every
build context, Dockerfile, COPY source and bind-mounted file in the repository; depends_on
consistent with healthchecks and one-shot services; ports those of stack/stack.env; the
Dockerfiles' build stage compiles with exactly what they copy."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest
import yaml

DOCKER = pathlib.Path(__file__).resolve().parents[1]
ROOT = DOCKER.parent
COMPOSE = ROOT / "docker-compose.yml"
CHECKER = ROOT / "build" / "compose-check"
HOST_PATHS = {"/proc", "/sys", "/sys/fs/cgroup"}  # bind mounts of the host itself (agents, Telegraf)
ONE_SHOT = {"kafka-topics", "clickhouse-schema", "flink-build", "flink-submit"}


def stack_env():
    out = {}
    for line in (ROOT / "stack" / "stack.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def compose_check(path, env=()):
    if not CHECKER.exists() or CHECKER.stat().st_mtime < (DOCKER / "compose-check" / "main.go").stat().st_mtime:
        go = shutil.which("go") or "/usr/local/go/bin/go"
        if not os.path.exists(go):
            pytest.fail("go is needed to build docker/compose-check (compose-go, the loader of docker compose)")
        subprocess.run([go, "build", "-o", str(CHECKER), "."], cwd=DOCKER / "compose-check", check=True, timeout=600)
    args = [str(CHECKER)] + [f"-env={e}" for e in env] + [str(path)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def project():
    r = compose_check(COMPOSE)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_go_loads_it_with_every_service(project):
    assert set(project["services"]) == {
        "kafka", "kafka-topics", "clickhouse", "clickhouse-schema", "flink-build", "jobmanager", "taskmanager",
        "flink-submit", "grafana", "telegraf", "collector", "enforcer", "fleetsim"}
    assert project["services"]["fleetsim"]["profiles"] == ["fleetsim"]


@pytest.mark.parametrize("change, message", [
    (lambda d: d["services"]["grafana"]["depends_on"].update({"nothere": {"condition": "service_started"}}), "nothere"),
    (lambda d: d["services"]["kafka"].update({"imagee": "x"}), "imagee"),
    (lambda d: d["services"]["kafka"].update({"ports": "9092"}), "ports"),
])
def test_compose_go_rejects_broken_files(tmp_path, raw, change, message):
    broken = json.loads(json.dumps(raw))
    change(broken)
    p = tmp_path / "docker-compose.yml"
    p.write_text(yaml.safe_dump(broken))
    r = compose_check(p)
    assert r.returncode == 1 and message in r.stderr


def test_settings_are_interpolated(project):
    r = compose_check(COMPOSE, ["CPI2_HOSTNAME=node-7", "CPI2_COLLECTOR_EVENTS=task-clock", "CPI2_ENFORCER_DRY_RUN=true"])
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)["services"]
    assert s["collector"]["command"][-4:] == ["--host", "node-7", "--events", "task-clock"]
    assert "--dry-run=true" in s["enforcer"]["command"]
    assert s["telegraf"]["hostname"] == s["collector"]["hostname"] == s["enforcer"]["hostname"] == "node-7"
    assert "--dry-run=false" in project["services"]["enforcer"]["command"]


def test_every_image_is_pinned_and_matches_the_local_stack(project):
    env = stack_env()
    images = {name: s["image"] for name, s in project["services"].items()}
    for name, image in images.items():
        repo, _, tag = image.rpartition(":")
        assert repo and tag and tag != "latest" and re.search(r"\d", tag), f"{name}: {image} is not pinned"
    assert images["kafka"] == f"apache/kafka:{env['KAFKA_VERSION']}" == images["kafka-topics"]
    assert images["jobmanager"].startswith(f"flink:{env['FLINK_VERSION']}-")
    assert images["jobmanager"] == images["taskmanager"] == images["flink-submit"]
    assert images["telegraf"] == f"telegraf:{env['TELEGRAF_VERSION'].lstrip('v')}"
    schema_readme = (ROOT / "grafana" / "schema" / "README.md").read_text()
    assert f"@grafana/schema@{images['grafana'].split(':')[1]}" in schema_readme, "Grafana = the schema the dashboards are checked with"


def test_builds_exist_and_their_base_images_are_pinned(project):
    builds = {n: s["build"] for n, s in project["services"].items() if "build" in s}
    assert set(builds) == {"collector", "enforcer", "fleetsim"}
    for name, b in builds.items():
        ctx = pathlib.Path(b["context"])
        dockerfile = ctx / b["dockerfile"]
        assert ctx.is_dir() and dockerfile.is_file(), name
        for line in dockerfile.read_text().splitlines():
            if line.startswith("FROM "):
                image = line.split()[1]
                assert re.search(r":[\w.-]*\d", image), f"{dockerfile}: {image} is not pinned"
            if line.startswith("COPY ") and "--from=" not in line:
                for src in line.split()[1:-1]:
                    assert (ctx / src).exists(), f"{dockerfile}: COPY {src} not in the build context"


def test_bind_mounts_exist(project):
    for name, s in project["services"].items():
        for v in s.get("volumes", []):
            if v["type"] != "bind":
                continue
            src = v["source"]
            if src in HOST_PATHS:
                continue
            p = pathlib.Path(src)
            assert p.exists(), f"{name}: bind mount {src} does not exist"
            assert ROOT in p.resolve().parents or p.resolve() == ROOT, f"{name}: {src} is outside the repository"


def test_depends_on(project):
    services = project["services"]
    for name, s in services.items():
        for target, dep in s.get("depends_on", {}).items():
            assert target in services, f"{name} depends on unknown {target}"
            if dep["condition"] == "service_healthy":
                assert "healthcheck" in services[target] and services[target]["healthcheck"].get("test"), \
                    f"{name} waits for {target} to be healthy, but it has no healthcheck"
            if dep["condition"] == "service_completed_successfully":
                assert target in ONE_SHOT, f"{name} waits for {target} to complete, but it is not a one-shot service"
    for name in ONE_SHOT:
        assert services[name].get("restart", "no") == "no", f"one-shot {name} must not restart"
    waits = {t for s in services.values() for t, d in s.get("depends_on", {}).items()
             if d["condition"] == "service_completed_successfully"}
    assert ONE_SHOT <= waits, "every one-shot setup service is waited for"
    for name in ("kafka", "clickhouse", "jobmanager", "taskmanager", "grafana"):
        assert "healthcheck" in services[name], name


def test_ports_are_the_local_stacks(project):
    env = stack_env()
    published = {(n, int(p["target"])): int(p["published"]) for n, s in project["services"].items() for p in s.get("ports", [])}
    assert published == {
        ("kafka", 9092): int(env["KAFKA_PORT"]),
        ("clickhouse", 8123): int(env["CLICKHOUSE_HTTP_PORT"]),
        ("clickhouse", 9000): int(env["CLICKHOUSE_TCP_PORT"]),
        ("jobmanager", 8081): int(env["FLINK_REST_PORT"]),
        ("grafana", 3000): 3000,
    }
    kafka_env = project["services"]["kafka"]["environment"]
    assert f"EXTERNAL://127.0.0.1:{env['KAFKA_PORT']}" in kafka_env["KAFKA_ADVERTISED_LISTENERS"]


def test_grafana_gets_its_provisioning(project):
    g = project["services"]["grafana"]
    mounts = {v["target"]: pathlib.Path(v["source"]) for v in g["volumes"] if v["type"] == "bind"}
    assert mounts["/etc/grafana/provisioning"] == ROOT / "grafana" / "provisioning"
    provider = yaml.safe_load((ROOT / "grafana" / "provisioning" / "dashboards" / "cpi2.yaml").read_text())["providers"][0]
    assert mounts[provider["options"]["path"]] == ROOT / "grafana" / "dashboards"
    assert g["environment"]["CPI2_CLICKHOUSE_HOST"] in project["services"]
    assert g["environment"]["GF_PLUGINS_PREINSTALL_SYNC"].startswith("grafana-clickhouse-datasource@")
    home = g["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (ROOT / "grafana" / "dashboards" / pathlib.Path(home).name).is_file()


def test_one_shot_commands_point_at_real_files(project):
    s = project["services"]
    assert s["clickhouse-schema"]["command"][1] == "/opt/cpi2/clickhouse/apply.py" and (ROOT / "clickhouse" / "apply.py").is_file()
    jar = s["flink-submit"]["environment"]["CPI2_JOB_JAR"]
    assert pathlib.Path(jar).name in (DOCKER / "build-flink-job.sh").read_text()
    pom = (ROOT / "flink-jobs" / "pom.xml").read_text()
    assert re.search(r"<artifactId>cpi2-flink-jobs</artifactId>", pom)
    assert "--kafka.bootstrap kafka:19092" in s["flink-submit"]["environment"]["CPI2_JOB_ARGS"]


@pytest.mark.parametrize("script", sorted(p.name for p in DOCKER.glob("*.sh")))
def test_scripts_parse(script):
    subprocess.run(["bash", "-n", str(DOCKER / script)], check=True)


def test_every_topic_is_created():
    out = subprocess.run(["bash", str(DOCKER / "kafka-topics.sh"), "--print", str(ROOT / "stack" / "kafka" / "topics.conf")],
                         capture_output=True, text=True, check=True).stdout
    created = set(re.findall(r"--topic (\S+)", out))
    listed = {line.split()[0] for line in (ROOT / "stack" / "kafka" / "topics.conf").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert created == listed and {"cpi2.samples", "cpi2.control", "cpi2.host-metrics"} <= created
    assert "--topic cpi2.specs --partitions 4 --replication-factor 1 --config retention.ms=-1 --config cleanup.policy=compact" in out


@pytest.mark.parametrize("dockerfile, targets", [("collectors/Dockerfile", ["cpi2-collector", "cpi2-fleetsim"]),
                                                 ("enforcer/Dockerfile", ["cpi2-enforcer"])])
def test_build_stage_compiles_with_what_it_copies(tmp_path, dockerfile, targets):
    """The build stage's COPY lines, replayed into an empty directory, then its cmake commands:
    the image would build (on this machine's Debian 12 packages, as in the image)."""
    text = (ROOT / dockerfile).read_text()
    build_stage = text.split("\nFROM ", 2)[0] + "\n" + "FROM " + text.split("\nFROM ", 2)[1]
    src = tmp_path / "src"
    for line in build_stage.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            *sources, dest = line.split()[1:]
            for s in sources:  # WORKDIR is the root of src; "dir/" destinations keep the name
                target = src / dest / pathlib.Path(s).name if dest.endswith("/") else src / dest
                target.parent.mkdir(parents=True, exist_ok=True)
                (shutil.copytree if (ROOT / s).is_dir() else shutil.copy)(ROOT / s, target)
    built = re.findall(r"--target ([\w -]+?)(?:\n|$|\\)", build_stage)
    assert built and built[0].split() == targets
    t0 = time.time()
    subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "build"), "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, capture_output=True, timeout=300)
    subprocess.run(["nice", "cmake", "--build", str(tmp_path / "build"), "-j2", "--target", *targets],
                   check=True, capture_output=True, timeout=600)
    for t in targets:
        assert list((tmp_path / "build").rglob(t)), f"{t} not built"
    print(f"{dockerfile}: build stage in {time.time() - t0:.0f} s")
