"""The images of make images (docker/images.sh) without building them: every image the chart and
docker-compose.yml name has a Containerfile; the Containerfiles copy only what docker/images.sh
stages (staged here by the project's own builds); the staged programs
know the options docker-compose.yml gives them; the Flink image carries the Flink of the job;
every image has the chart's version. `make images` itself builds them (docker/README.md)."""

import json
import re
import shutil
import subprocess
import sys

import compose_rules as rules
import pytest
import yaml
from conftest import DOCKER, ROOT, image_list, stack_env

CHART = ROOT / "deploy" / "helm" / "cpi2"
IMAGES = image_list()
VERSION = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]


def chart_images():
    v = yaml.safe_load((CHART / "values.yaml").read_text())
    named = {k: i for k, i in v["images"].items() if isinstance(i, str) and i.startswith("cpi2/")}
    named["pipeline.image"] = v["pipeline"]["image"]
    return named


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    """docker/images.sh --stage into a temporary folder: {context: folder}."""
    ctx = tmp_path_factory.mktemp("images")
    env = {**__import__("os").environ, "IMAGES_CONTEXT": str(ctx)}
    r = subprocess.run(
        ["nice", str(DOCKER / "images.sh"), "--stage"], env=env, capture_output=True, text=True, timeout=1200
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return {c: ctx / c for c in {c for _, _, c in IMAGES.values()}}


def test_every_image_named_has_a_build_file(project):
    named = set(chart_images().values()) | {
        s["image"] for s in project["services"].values() if s["image"].startswith("cpi2/")
    }
    assert named == set(IMAGES), "an image the chart or compose names without a build file, or one built for no one"
    for image, (file, target, _) in IMAGES.items():
        assert file.is_file(), image
        stages = [n for n, _, _ in rules.dockerfile_stages(file)]
        assert target is None or target in stages, (image, target, stages)
        assert image.endswith(":" + VERSION), "images have the chart's appVersion"


def test_version_is_the_projects():
    """The chart's appVersion (the images' tag) is the version of the Maven and Python projects."""
    parent = (ROOT / "pom.xml").read_text()
    assert re.search(rf"<artifactId>cpi2-parent</artifactId>\s*<version>{re.escape(VERSION)}</version>", parent)
    assert re.search(rf'^version = "{re.escape(VERSION)}"$', (ROOT / "pyproject.toml").read_text(), re.M)


@pytest.mark.parametrize("file", sorted({f for f, _, _ in IMAGES.values()}), ids=lambda f: f.name)
def test_containerfiles_are_small_and_pinned(file):
    text = file.read_text()
    stages = rules.dockerfile_stages(file)
    base = re.search(r"^ARG BASE=(\S+)$", text, re.M)
    for _, frm, lines in stages:
        assert frm in ("scratch", "${BASE}") or frm in [n for n, _, _ in stages], frm
        # a runtime only: no compiler, headers or package caches left behind
        body = " ".join(lines)
        assert not re.search(r"build-essential|cmake|gcc|-dev\b|maven|golang", body), (file.name, body)
        for run in (line for line in lines if "apt-get install" in line):
            assert "--no-install-recommends" in run and "rm -rf /var/lib/apt/lists" in run, run
    if any(frm == "${BASE}" for _, frm, _ in stages):
        assert base and rules.pinned(base.group(1)), "the default base (docker build without make images) is pinned"
    assert "ARG VERSION" in text and "org.opencontainers.image.version" in text


@pytest.mark.parametrize(
    "image, user", [("k8s-identity", "65532:65532"), ("tools", "65532:65532"), ("flink-jobs", "9999:9999")]
)
def test_non_root_where_the_component_allows_it(image, user):
    file, _, _ = IMAGES[f"cpi2/{image}:{VERSION}"]
    assert re.findall(r"^USER (\S+)$", file.read_text(), re.M)[-1] == user


def test_containerfiles_copy_what_is_staged(staged):
    for image, (file, _target, ctx) in IMAGES.items():
        for _name, _, lines in rules.dockerfile_stages(file):
            for line in lines:
                if line.startswith("COPY ") and "--from=" not in line:
                    for src in line.split()[1:-1]:
                        assert (staged[ctx] / src).exists(), f"{image}: COPY {src} is not staged in {ctx}"


@pytest.mark.parametrize(
    "service, program",
    [
        ("collector", "cpi2-collector"),
        ("enforcer", "cpi2-enforcer"),
        ("fleetsim", "cpi2-fleetsim"),
        ("fleetsim-enforcer", "cpi2-enforcer"),
    ],
)
def test_programs_know_the_options_compose_gives(staged, project, service, program):
    s = project["services"][service]
    file, target, _ = IMAGES[s["image"]]
    stage = next(lines for n, _, lines in rules.dockerfile_stages(file) if n == target)
    entry = json.loads(next(line for line in stage if line.startswith("ENTRYPOINT "))[len("ENTRYPOINT ") :])
    assert (s.get("entrypoint") or entry)[0] == program
    r = subprocess.run([str(staged["agents"] / "bin" / program), "--help"], capture_output=True, text=True, timeout=30)
    text = (r.stdout + r.stderr).replace("_", "-")
    options = [a.split("=")[0] for a in s["command"] if a.startswith("--")]
    assert options and all(re.search(rf"{re.escape(o)}[\s,=]", text) for o in options), (options, text)


@pytest.mark.parametrize(
    "ctx, program",
    [
        ("agents", "bin/cpi2-collector"),
        ("agents", "bin/cpi2-fleetsim"),
        ("agents", "bin/cpi2-enforcer"),
        ("identity", "cpi2-k8s-identity"),
        ("identity", "cpi2-issuer"),
    ],
)
def test_programs_print_the_images_version(staged, ctx, program):
    r = subprocess.run([str(staged[ctx] / program), "--version"], capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stdout) == (0, f"{program.split('/')[-1]} {VERSION}\n"), r.stderr


def test_job_jar_prints_the_images_version(staged):
    java = shutil.which("java")
    if not java:
        pytest.fail("java is missing (make setup installs a JDK 17)")
    r = subprocess.run([java, "-jar", str(staged["flink"] / "usrlib" / "cpi2-flink-jobs.jar"), "--version"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (r.returncode, r.stdout) == (0, f"cpi2-flink-jobs {VERSION}\n"), r.stderr


def test_fleetsim_reads_the_scenarios_the_image_holds(staged, project):
    cmd = project["services"]["fleetsim"]["command"]
    scenario_dir, scenario = cmd[cmd.index("--scenario-dir") + 1], cmd[cmd.index("--scenario") + 1]
    file, _, _ = IMAGES[project["services"]["fleetsim"]["image"]]
    assert f"COPY scenarios {scenario_dir}" in file.read_text()
    assert (staged["agents"] / "scenarios" / f"{scenario}.scn").is_file()


def test_flink_image_runs_the_jobs_flink(staged):
    """The Flink of the image is the job's (the Maven parent of flink-jobs) and the local stack's (stack.env),
    with the Prometheus reporter its configuration names and the job jar at the chart's jarURI."""
    want = stack_env()["FLINK_VERSION"]
    pom = (ROOT / "pom.xml").read_text()  # the job's Flink (flink-jobs/pom.xml's parent)
    assert re.search(rf"<flink.version>{re.escape(want)}</flink.version>", pom)
    lib = {p.name for p in (staged["flink"] / "lib").iterdir()}
    assert {f"flink-runtime-{want}.jar", f"flink-clients-{want}.jar", f"flink-metrics-prometheus-{want}.jar"} <= lib
    assert not [n for n in lib if re.match(r"flink-(runtime|core|streaming-java|clients)-\d", n) and want not in n]
    conf = yaml.safe_load((staged["flink"] / "conf" / "config.yaml").read_text())
    assert (
        conf["metrics.reporter.prom.factory.class"] == "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"
    )
    assert (staged["flink"] / "usrlib" / "cpi2-flink-jobs.jar").is_file()
    assert any((staged["flink"] / "plugins" / "s3-fs-presto").glob("flink-s3-fs-presto-*.jar"))


def test_tools_image_runs_cpi2ctl_and_the_migrations(staged):
    """What the tools image holds runs with the standard library and its own site folder alone."""
    t = staged["tools"]
    env = {"PYTHONPATH": f"{t / 'python'}:{t / 'site'}", "CPI2_ROOT": str(t), "PATH": "/usr/bin:/bin"}
    for mod in ("cpi2.cli", "cpi2.clickhouse.apply"):
        r = subprocess.run(
            [sys.executable, "-s", "-m", mod, "--help"], env=env, capture_output=True, text=True, timeout=60
        )
        assert r.returncode == 0 and "usage" in r.stdout, r.stderr
    r = subprocess.run(
        [sys.executable, "-s", "-c", "from cpi2.clickhouse import schema; print(len(schema.migrations()))"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and int(r.stdout) == len(list((ROOT / "clickhouse" / "migrations").glob("*.sql"))), (
        r.stderr
    )
