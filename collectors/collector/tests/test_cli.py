#!/usr/bin/env python3
"""cpi2-collector as a program: --help, configuration errors (exit 2, file:line), the refusal to
publish made-up CPI where hardware counters are missing, and on the real cgroup v2 hierarchy
(skipped with the reason where it is missing): --once on a tree of tasks, the descriptor budget
rotating cgroups across windows, cgroups appearing and disappearing between windows, SIGTERM
in the middle of a window, Kafka being down (sampling goes on, drops are reported), cgroups
that hold others (an unmapped parent is not published: its counts include its children's), and
Kubernetes pods of both cgroup drivers (a pod the labels file does not name is reported once and
not published, never a job of its own).

Usage: test_cli.py PATH/TO/cpi2-collector
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import cgtest  # this script's folder is on the path

BIN = None


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def check_help_and_errors():
    r = run("--help")
    assert r.returncode == 0 and "--events" in r.stdout and "--labels-file" in r.stdout, r
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write("window_s = 5\nperiod_s = often\n")
        f.flush()
        r = run("--config", f.name)
        assert r.returncode == 2 and "%s:2: period_s: 'often' is not a number" % f.name in r.stderr, r
    r = run("--window-s", "90")
    assert r.returncode == 2 and "at most period_s" in r.stderr, r
    with tempfile.NamedTemporaryFile("w", suffix=".rules") as f:
        f.write("# rules\njobs/* job=$1\n")
        f.flush()
        r = run("--once", "--events", "task-clock", "--rules-file", f.name, "--roots", "/tmp")
        assert r.returncode == 2 and "%s:2: rule for 'jobs/*' needs job= and class=" % f.name in r.stderr, r
    r = run("--once", "--events", "task-clock", "--roots", "/nonexistent/cgroups")
    assert r.returncode == 2 and "cgroup root /nonexistent/cgroups: No such file" in r.stderr, r
    print("help and configuration errors: ok")


def hardware_counters_here():
    r = subprocess.run(
        ["perf", "stat", "-e", "cycles", "true"], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C")
    )
    return r.returncode == 0 and "not supported" not in r.stderr and "<not counted>" not in r.stderr


def check_hardware_refusal():
    if not cgtest.has_perf():
        print("hardware refusal: SKIPPED (no perf binary to tell whether this machine has counters)")
        return
    r = run("--once", "--window-s", "0.2", "--roots", "/tmp", "--max-depth", "1")
    if hardware_counters_here():
        assert r.returncode == 0, r
        print("hardware refusal: this machine has hardware counters; the collector counted them")
        return
    assert r.returncode == 2, r
    assert "cannot be counted here" in r.stderr and "Refusing to publish made-up CPI" in r.stderr, r.stderr
    assert r.stdout == "", r.stdout
    print("hardware refusal: ok (%s)" % r.stderr.strip().splitlines()[-1][:120])


def windows_of(samples):
    out = {}
    for s in samples:
        out.setdefault(s["window_start_us"], []).append(s["task"])
    return [sorted(v) for _, v in sorted(out.items())]


def check_real_tree(root, rules):
    # --once: every task of the tree, mapped by the rules; the parent ignored
    r = run("--once", "--events", "task-clock", "--roots", root, "--rules-file", rules, "--window-s", "0.3")
    assert r.returncode == 0, r
    samples = cgtest.samples(r.stdout)
    assert sorted(s["task"] for s in samples) == ["j/0", "j/1", "j/2"], r.stdout
    assert all(s["job"] == "j" and s["task_class"] == "BATCH" for s in samples), samples
    assert sorted(s["task_id"] for s in samples) == ["0", "1", "2"]
    assert "1 ignored, 0 unmapped" in r.stderr, r.stderr
    busy = [s for s in samples if s["task"] == "j/0"][0]
    assert busy["cpu_usage"] > 0.2 and busy["cycles"] > 0.2 * busy["window_us"] * 1e3, busy
    idle = [s for s in samples if s["task"] == "j/1"][0]
    assert idle["cycles"] == 0 and idle["cpu_usage"] == 0 and idle["threads"] == 0, idle
    print("--once on a tree: ok")

    # descriptor budget: two cgroups' worth of descriptors; three tasks rotate over windows
    ncpu = len(cgtest.online_cpus())
    r = run(
        "--stdout",
        "--events",
        "task-clock",
        "--roots",
        root,
        "--rules-file",
        rules,
        "--window-s",
        "0.2",
        "--period-s",
        "0.5",
        "--windows",
        "3",
        "--max-fds",
        str(2 * (ncpu + 2)),  # two cgroups: one task-clock event per CPU and two pressure files each
    )
    assert r.returncode == 0, r
    wins = windows_of(cgtest.samples(r.stdout))
    assert len(wins) == 3 and all(len(w) == 2 for w in wins), wins
    assert set(wins[0]) | set(wins[1]) == {"j/0", "j/1", "j/2"}, wins
    assert r.stderr.count("1 deferred by the fd budget") == 3, r.stderr
    print("fd budget rotation: ok %s" % wins)

    # a cgroup appears and another disappears between windows
    p = subprocess.Popen(
        [
            BIN,
            "--stdout",
            "--events",
            "task-clock",
            "--roots",
            root,
            "--rules-file",
            rules,
            "--window-s",
            "0.2",
            "--period-s",
            "1",
            "--windows",
            "3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = [p.stdout.readline() for _ in range(3)]
    os.mkdir(os.path.join(root, "j", "3"))
    os.rmdir(os.path.join(root, "j", "2"))
    rest, err = p.communicate(timeout=30)
    wins = windows_of(cgtest.samples("".join(first) + rest))
    assert p.returncode == 0 and len(wins) == 3, (wins, err)
    assert wins[0] == ["j/0", "j/1", "j/2"] and wins[2] == ["j/0", "j/1", "j/3"], wins
    print("appearing and disappearing cgroups: ok %s" % wins)

    # SIGTERM in the middle of a long window: prompt, clean exit, nothing half-counted published
    p = subprocess.Popen(
        [
            BIN,
            "--stdout",
            "--events",
            "task-clock",
            "--roots",
            root,
            "--rules-file",
            rules,
            "--window-s",
            "20",
            "--period-s",
            "21",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 0 and time.monotonic() - t0 < 2 and out == "", (p.returncode, out, err)
    assert "stopped" in err, err
    print("SIGTERM: ok (exit within %.2f s)" % (time.monotonic() - t0))

    # Kafka down: sampling keeps its clock, the bounded queue drops and says so, exit bounded
    t0 = time.monotonic()
    r = run(
        "--events",
        "task-clock",
        "--roots",
        root,
        "--rules-file",
        rules,
        "--window-s",
        "0.2",
        "--period-s",
        "0.5",
        "--windows",
        "2",
        "--brokers",
        "127.0.0.1:1",
        "--flush-timeout-ms",
        "500",
        "-X",
        "queue.buffering.max.messages=2",
        timeout=30,
    )
    took = time.monotonic() - t0
    assert r.returncode == 3, r  # messages left undelivered at exit
    assert r.stderr.count("3 samples; kafka: 2 sent") == 1 and "3 samples; kafka: 0 sent" in r.stderr, r.stderr
    assert "1 dropped (queue full)" in r.stderr and "3 dropped (queue full)" in r.stderr, r.stderr
    assert "2 left undelivered at exit" in r.stderr and took < 5, (took, r.stderr)
    print("Kafka down: ok (2 windows sampled, drops reported, exit after %.1f s)" % took)


def check_back_to_back(root, rules):
    """A window as long as the period (the 1 s profile): one every period, each starting where
    the one before ended, not every other period; the busy task's usage fills each window."""
    t0 = time.monotonic()
    r = run(
        "--stdout",
        "--events",
        "task-clock",
        "--roots",
        root,
        "--rules-file",
        rules,
        "--window-s",
        "1",
        "--period-s",
        "1",
        "--windows",
        "4",
    )
    took = time.monotonic() - t0
    assert r.returncode == 0, r
    samples = [s for s in cgtest.samples(r.stdout) if s["task"] == "j/0"]
    starts = [s["window_start_us"] for s in samples]
    assert len(starts) == 4, r.stdout
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert all(abs(g - 1000000) < 100000 for g in gaps), gaps  # one period apart, none skipped
    for a, b in zip(samples, samples[1:]):  # b begins within 50 ms of a's end
        assert 0 <= b["window_start_us"] - (a["window_start_us"] + a["window_us"]) < 50000, (a, b)
    assert all(950000 <= s["window_us"] <= 1050000 for s in samples), [s["window_us"] for s in samples]
    assert all(s["cpu_usage"] > 0.2 for s in samples), [s["cpu_usage"] for s in samples]
    assert took < 7, took  # four windows of 1 s, not eight
    print("1 s windows every 1 s: ok (starts %s us apart, windows %s us)" % (gaps, [s["window_us"] for s in samples]))


def check_metrics_and_json_log(root, rules):
    """--metrics-address: /metrics counts the windows, their cgroups and samples, /healthz is good
    while windows complete; --log-format json: every line of the log is one JSON object."""
    with tempfile.TemporaryFile("w+") as log:
        p = subprocess.Popen(
            [BIN, "--stdout", "--events", "task-clock", "--roots", root, "--rules-file", rules, "--window-s", "0.5",
             "--period-s", "0.5", "--metrics-address", "127.0.0.1:0", "--log-format", "json"],
            stdout=subprocess.DEVNULL, stderr=log, text=True,
        )  # fmt: skip
        try:

            def text():
                log.seek(0)
                return log.read()

            deadline = time.monotonic() + 30
            while "(port " not in text() and time.monotonic() < deadline and p.poll() is None:
                time.sleep(0.1)
            port = int(re.search(r"\(port (\d+)\)", text()).group(1))

            def metrics():
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                    assert r.status == 200
                    return dict(
                        re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$", r.read().decode(), re.M)
                    )

            m = metrics()
            while int(m.get("cpi2_collector_windows_total", 0)) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
                m = metrics()
            assert int(m["cpi2_collector_windows_total"]) >= 2, m
            assert m['cpi2_collector_window_cgroups{state="counted"}'] == "3", m
            assert m['cpi2_collector_window_cgroups{state="ignored"}'] == "1", m
            assert int(m["cpi2_collector_samples_total"]) >= 6, m
            assert m['cpi2_collector_sample_errors_total{step="encode"}'] == "0", m
            assert m['cpi2_build_info{program="collector",version="%s"}' % version()] == "1", m
            with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=10) as r:
                body = r.read().decode()
                assert r.status == 200 and body.startswith("ok: last progress "), body
        finally:
            p.send_signal(signal.SIGTERM)
            rc = p.wait(15)
        assert rc == 0, text()
        records = [json.loads(line) for line in text().splitlines()]  # fails on a line that is not JSON
        assert all(r["module"] and r["level"] and r["msg"] for r in records)
        assert any(r["msg"].startswith("window: ") for r in records), records
    print("/metrics, /healthz and the JSON log: ok (%s windows)" % m["cpi2_collector_windows_total"])


def version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("cpi2-collector "), r
    return r.stdout.split()[1]


def two_windows(root, *args):
    """Two short windows of task-clock on root's tree, samples on stdout."""
    window = ("--window-s", "0.2", "--period-s", "0.5", "--windows", "2")
    return run("--stdout", "--events", "task-clock", "--roots", root, *args, *window)


def check_parents(root):
    """root: a/{b,c} unmapped, k mapped with k/x ignored, m and m/n both mapped."""
    with tempfile.NamedTemporaryFile("w", suffix=".rules") as rules:
        rules.write(
            "m job=m task_id=0 class=batch\nm/* job=m task_id=$1 class=batch\n"
            "k job=k task_id=0 class=batch\nk/* ignore\n"
        )
        rules.flush()
        r = two_windows(root, "--rules-file", rules.name)
        assert r.returncode == 0, r
        wins = windows_of(cgtest.samples(r.stdout))
        # a holds a/b and a/c and no rule maps it: not published; its leaves are, as UNKNOWN.
        # k and m are mapped on purpose: published although they hold cgroups
        assert wins == [["a/b", "a/c", "k", "m", "m/n"]] * 2, wins
        assert (
            r.stderr.count("(1 ignored, 2 unmapped, 1 unmapped parents not published, 0 without the labels entry") == 2
        ), r.stderr
        # reported once, not every window
        assert (
            r.stderr.count(
                "cgroup a matches no rule or label and holds other cgroups (a/b among them): "
                "not published, its counts include theirs"
            )
            == 1
        ), r.stderr
        assert r.stderr.count("cgroup a/b matches no rule or label: published as job=a/b") == 1, r.stderr
        assert r.stderr.count("cgroup m is mapped and m/n under it is published too: their counts overlap") == 1, (
            r.stderr
        )
        assert "cgroup k is mapped" not in r.stderr and "published as job=a," not in r.stderr, r.stderr
        # at max_depth 1 the children are not walked: a is a leaf there (nothing else counts its
        # children), published as UNKNOWN; m's child is not published, so no overlap
        r = run(
            "--once",
            "--events",
            "task-clock",
            "--roots",
            root,
            "--rules-file",
            rules.name,
            "--window-s",
            "0.2",
            "--max-depth",
            "1",
        )
        assert r.returncode == 0, r
        samples = cgtest.samples(r.stdout)
        assert sorted(s["task"] for s in samples) == ["a", "k", "m"], r.stdout
        assert [s["task_class"] for s in samples if s["task"] == "a"] == ["UNKNOWN"], samples
        assert "(0 ignored, 1 unmapped, 0 unmapped parents not published, 0 without the labels entry" in r.stderr, (
            r.stderr
        )
        assert "holds other cgroups" not in r.stderr and "overlap" not in r.stderr, r.stderr
    print("cgroups holding others: ok %s" % wins[0])


# pods of both cgroup drivers as the kubelet lays them out, each with a container cgroup
PODS = {
    "a": "kubepods/burstable/pod0c6f4a52-8d55-4c1e-9a51-3b1f4e9a0001",
    "b": "kubepods/burstable/pod0c6f4a52-8d55-4c1e-9a51-3b1f4e9a0002",
    "c": "kubepods/pod0c6f4a52-8d55-4c1e-9a51-3b1f4e9a0003",
    "d": "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0c6f4a52_8d55_4c1e_9a51_3b1f4e9a0004.slice",
    "e": "kubepods.slice/kubepods-pod0c6f4a52_8d55_4c1e_9a51_3b1f4e9a0005.slice",
}


def check_kubernetes(root):
    """Pods a, c, d in the labels file (as cpi2-k8s-identity writes it), b and e not: only a, c,
    d are published, with the file's job; b and e are reported once each and counted in every
    window's line; no sample carries a made-up one-pod job."""
    with tempfile.NamedTemporaryFile("w", suffix=".labels") as labels:
        labels.write(
            "# cpi2-k8s-identity: node n1, 3 pods\n# TASK JOB TASK_ID CLASS [protected]\n"
            "%s shop/deployment/web web-7d9f8-x2x4q batch\n"
            "%s shop/statefulset/db db-0 latency_sensitive protected\n"
            "%s shop/deployment/web web-7d9f8-p5kzl best_effort\n" % (PODS["a"], PODS["c"], PODS["d"])
        )
        labels.flush()
        r = two_windows(root, "--labels-file", labels.name)
        assert r.returncode == 0, r
        samples = cgtest.samples(r.stdout)
        assert windows_of(samples) == [sorted([PODS["a"], PODS["c"], PODS["d"]])] * 2, windows_of(samples)
        got = {(s["task"], s["job"], s["task_id"], s["task_class"], s["is_protected"]) for s in samples}
        assert got == {
            (PODS["a"], "shop/deployment/web", "web-7d9f8-x2x4q", "BATCH", False),
            (PODS["c"], "shop/statefulset/db", "db-0", "LATENCY_SENSITIVE", True),
            (PODS["d"], "shop/deployment/web", "web-7d9f8-p5kzl", "BEST_EFFORT", False),
        }, got
        assert not [s for s in samples if s["job"].startswith("k8s-pod")], samples
        for pod in ("b", "e"):
            line = "cgroup %s is a task only the labels file maps, and %s has no entry for it: not published" % (
                PODS[pod],
                labels.name,
            )
            assert r.stderr.count(line) == 1, r.stderr  # once, not every window
        assert r.stderr.count("unmapped parents not published, 2 without the labels entry they need") == 2, r.stderr
        assert "matches no rule" not in r.stderr, r.stderr
    print("Kubernetes pods without a labels entry: ok (%d samples, 2 pods reported and skipped)" % len(samples))


def main():
    global BIN
    BIN = sys.argv[1]
    check_help_and_errors()
    check_hardware_refusal()
    cgtest.skip_unless_real_cgroups()
    root = cgtest.make_cgroup("cpi2-test-cli-%d" % os.getpid())
    for t in ("j/0", "j/1", "j/2"):
        os.makedirs(os.path.join(root, t))
    spinner = cgtest.busy(os.path.join(root, "j/0"))
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".rules") as rules:
            rules.write("j ignore\nj/* job=j task_id=$1 class=batch\n")
            rules.flush()
            check_real_tree(root, rules.name)
            check_back_to_back(root, rules.name)
            check_metrics_and_json_log(root, rules.name)
    finally:
        cgtest.stop(spinner)
        cgtest.remove_tree(root)
    root = cgtest.make_cgroup("cpi2-test-cli-parents-%d" % os.getpid())
    try:
        for t in ("a/b", "a/c", "k/x", "m/n"):
            os.makedirs(os.path.join(root, t))
        check_parents(root)
    finally:
        cgtest.remove_tree(root)
    root = cgtest.make_cgroup("cpi2-test-cli-k8s-%d" % os.getpid())
    try:
        for pod in PODS.values():
            os.makedirs(os.path.join(root, pod, "ctr0" if pod.startswith("kubepods/") else "cri-containerd-0.scope"))
        check_kubernetes(root)
    finally:
        cgtest.remove_tree(root)
    print("test_cli: ok")


if __name__ == "__main__":
    main()
