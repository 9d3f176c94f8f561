"""docker/agents.Dockerfile without a Docker engine: its build stage, replayed on this machine's
Debian 12 packages (its COPY lines into an empty folder, then its cmake commands), builds every
program the final stages copy; the final stages carry no compiler; the programs know the options
docker-compose.yml gives them."""

import json
import re
import shutil
import subprocess

import compose_rules as rules
import pytest
from conftest import ROOT

DOCKERFILE = ROOT / "docker" / "agents.Dockerfile"
STAGES = {name: (base, lines) for name, base, lines in rules.dockerfile_stages(DOCKERFILE)}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The build stage replayed; returns the folder that stands for /build in the image."""
    _, lines = STAGES["build"]
    tmp = tmp_path_factory.mktemp("agents")
    src, out = tmp / "src", tmp / "build"
    for line in lines:
        if line.startswith("COPY "):
            *sources, dest = line.split()[1:]
            for s in sources:  # WORKDIR /src is src; "dir/" destinations keep the name
                target = src / dest / s.rsplit("/", 1)[-1] if dest.endswith("/") else src / dest
                target.parent.mkdir(parents=True, exist_ok=True)
                (shutil.copytree if (ROOT / s).is_dir() else shutil.copy)(ROOT / s, target)
    run = [line for line in lines if line.startswith("RUN cmake")]
    assert len(run) == 1, "one RUN of cmake in the build stage"
    for cmd in run[0][4:].split("&&"):  # cmake -S . -B /build ...: . is src, /build is out
        args = [str(src) if a == "." else str(out) if a == "/build" else a for a in cmd.split()]
        subprocess.run(["nice"] + args, cwd=src, check=True, capture_output=True, timeout=600)
    return out


def copied_from_build(stage):
    """Paths under /build that STAGE copies from the build stage."""
    return [p for line in STAGES[stage][1] if line.startswith("COPY --from=build ") for p in line.split()[2:-1]]


def test_stages():
    assert STAGES["build"][0] == STAGES["runtime"][0] and rules.pinned(STAGES["build"][0])
    assert STAGES["collector"][0] == STAGES["enforcer"][0] == "runtime"
    for stage in ("runtime", "collector", "enforcer"):  # small images: no toolchain or headers
        text = " ".join(STAGES[stage][1])
        assert not re.search(r"build-essential|cmake|-dev\b|gcc", text), stage


@pytest.mark.parametrize(
    "stage, programs", [("collector", {"cpi2-collector", "cpi2-fleetsim"}), ("enforcer", {"cpi2-enforcer"})]
)
def test_build_stage_builds_what_each_image_copies(built, stage, programs):
    paths = copied_from_build(stage)
    assert {p.rsplit("/", 1)[-1] for p in paths} == programs
    for p in paths:
        assert p.startswith("/build/") and (built / p[len("/build/") :]).is_file(), f"{stage}: {p} not built"


def _help(built, program):
    path = next(built.rglob(program))
    r = subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=30)
    return (r.stdout + r.stderr).replace("_", "-")


@pytest.mark.parametrize(
    "service, program",
    [
        ("collector", "cpi2-collector"),
        ("enforcer", "cpi2-enforcer"),
        ("fleetsim", "cpi2-fleetsim"),
        ("fleetsim-enforcer", "cpi2-enforcer"),
    ],
)
def test_programs_know_the_options_compose_gives(built, project, service, program):
    s = project["services"][service]
    image_entrypoint = next(line for line in STAGES[s["build"]["target"]][1] if line.startswith("ENTRYPOINT "))
    assert (s.get("entrypoint") or json.loads(image_entrypoint[len("ENTRYPOINT ") :]))[0] == program
    text = _help(built, program)
    options = [a.split("=")[0] for a in s["command"] if a.startswith("--")]
    assert options and all(re.search(rf"{re.escape(o)}[\s,=]", text) for o in options), (options, text)


def test_fleetsim_reads_the_scenarios_the_image_holds(project):
    cmd = project["services"]["fleetsim"]["command"]
    scenario_dir, scenario = cmd[cmd.index("--scenario-dir") + 1], cmd[cmd.index("--scenario") + 1]
    assert f"COPY collectors/fleetsim/scenarios {scenario_dir}" in STAGES["collector"][1]
    assert (ROOT / "collectors" / "fleetsim" / "scenarios" / f"{scenario}.scn").is_file()
