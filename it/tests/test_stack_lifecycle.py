"""make up / down / status behave: config errors say what to fix, a second up is a no-op,
down stops exactly the stack's processes. Runs last in it/ (it stops and restarts the stack)."""

import os
import subprocess

from cpi2.testing import stack

UP = os.path.join(stack.ROOT, "stack", "up.sh")


def _run(cmd, **env):
    e = dict(os.environ, **env)
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=600)


def test_bad_port_fails_with_what_to_fix(tmp_path):
    bad = tmp_path / "stack.env"
    text = open(stack.ENV_PATH).read().replace("KAFKA_PORT=", "KAFKA_PORT=70000\n#", 1)
    bad.write_text(text)
    r = _run([UP], STACK_ENV=str(bad))
    assert r.returncode != 0
    assert "KAFKA_PORT='70000'" in r.stderr and "not a port number" in r.stderr, r.stderr


def test_duplicate_port_fails(tmp_path):
    bad = tmp_path / "stack.env"
    text = open(stack.ENV_PATH).read()
    bad.write_text(text + "\nFLINK_REST_PORT=%s\n" % stack.E["KAFKA_PORT"])
    r = _run([UP], STACK_ENV=str(bad))
    assert r.returncode != 0 and "used twice" in r.stderr, r.stderr


def test_missing_java_fails_with_what_to_fix():
    r = _run([UP], JAVA="/nonexistent/bin/java")
    assert r.returncode != 0
    assert "Java not found" in r.stderr and "openjdk-17" in r.stderr, r.stderr


def test_second_up_is_a_noop_and_down_stops_everything():
    stack.ensure_up()
    before = stack.pids()
    assert set(before) == {"clickhouse", "kafka", "flink-jobmanager", "flink-taskmanager", "telegraf"}
    r = _run(["make", "-C", stack.ROOT, "--no-print-directory", "up"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("already running") == 5, r.stdout
    assert stack.pids() == before

    r = _run(["make", "-C", stack.ROOT, "--no-print-directory", "down"])
    assert r.returncode == 0, r.stderr
    alive = [name for name, pid in before.items() if os.path.exists("/proc/%d" % pid)]
    assert alive == [], "still running after make down: %s" % alive
    assert stack.status().returncode != 0
    # Leave the stack as we found it for whatever runs next.
    stack.ensure_up()
    assert stack.status().returncode == 0
