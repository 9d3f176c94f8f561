"""Fixtures of the docker/ tests: compose-check (compose-go, built on first use) and the resolved
docker-compose.yml."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest
import yaml

from cpi2 import repo

DOCKER = pathlib.Path(__file__).resolve().parents[1]
ROOT = DOCKER.parent
COMPOSE = ROOT / "docker-compose.yml"
CHECKER = ROOT / "build" / "compose-check"


def stack_env():
    """The committed stack/stack.env (what docker-compose.yml must agree with), whatever STACK_ENV says."""
    return repo.read_env(repo.DEFAULT_STACK_ENV, missing_ok=False)


def compose_check(path, env=(), project_dir=None):
    """compose-go's verdict on a Compose file: (returncode, resolved project or None, stderr)."""
    if not CHECKER.exists() or CHECKER.stat().st_mtime < (DOCKER / "compose-check" / "main.go").stat().st_mtime:
        go = shutil.which("go") or "/usr/local/go/bin/go"
        if not os.path.exists(go):
            pytest.fail("go is needed to build docker/compose-check (compose-go, the loader of docker compose)")
        subprocess.run([go, "build", "-o", str(CHECKER), "."], cwd=DOCKER / "compose-check", check=True, timeout=600)
    args = [str(CHECKER)] + [f"-env={e}" for e in env]
    if project_dir:
        args.append(f"-project-dir={project_dir}")
    r = subprocess.run(args + [str(path)], capture_output=True, text=True, timeout=120)
    return r.returncode, json.loads(r.stdout) if r.returncode == 0 else None, r.stderr


@pytest.fixture(scope="session")
def project():
    rc, p, err = compose_check(COMPOSE)
    assert rc == 0, err
    return p


def image_list():
    """docker/images.sh --list: {image: (Containerfile, target, context)}, every image make images builds."""
    r = subprocess.run([str(DOCKER / "images.sh"), "--list"], capture_output=True, text=True, check=True, timeout=60)
    return {
        i: (ROOT / f, None if t == "-" else t, c) for i, f, t, c in (line.split() for line in r.stdout.splitlines())
    }


@pytest.fixture(scope="session")
def built():
    return image_list()


@pytest.fixture(scope="session")
def raw():
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture
def load_changed(tmp_path, raw):
    """docker-compose.yml with CHANGE applied to its YAML, loaded as if it were in the repository."""

    def load(change):
        changed = json.loads(json.dumps(raw))
        change(changed)
        p = tmp_path / "docker-compose.yml"
        p.write_text(yaml.safe_dump(changed))
        return compose_check(p, project_dir=ROOT)

    return load
