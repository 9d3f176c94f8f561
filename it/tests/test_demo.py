"""The demo (`make demo`, cpi2.e2e.demo) end to end on a small fleet (paper case 1, one simulated
hour at 240x), and what it promises a newcomer:

- the most severe incident that was capped, plotted with its cap shaded;
- an HTML report of every dashboard panel over the run, opened by headless Chromium: no panel
  fails, and every panel with rows is drawn;
- the cpi2ctl commands it prints, each with rows;
- every cpi2ctl example of the docs (README.md, cli/README.md) and of `cpi2ctl --help`, run while
  the run's enforcer still holds its caps, its words in capitals filled from the run: each
  succeeds, and each that reads returns rows. Commands that act go to a throw-away topic, so no
  enforcer obeys them; config examples write a throw-away config file.
"""

import os
import re
import shlex
import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cpi2 import repo
from cpi2.cli import main as cpi2ctl
from cpi2.cli import timerange
from cpi2.e2e import demo
from cpi2.testing import browser, fixtures

pytestmark = pytest.mark.usefixtures("stack_up")

DOCS = [repo.ROOT / "README.md", repo.ROOT / "cli" / "README.md"]
ACTING = (["cap"], ["uncap"], ["protection", "on"], ["protection", "off"])


def examples():
    """Every `cpi2ctl ...` example: the docs' code lines (four-space indented or fenced), with
    their continuation lines, and the example lines of `cpi2ctl --help`; comments cut."""
    out = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^\s{4,}(?:\$ )?((?:cli/bin/|\.venv/bin/)?cpi2ctl\b.*)$", lines[i])
            if m:
                cmd = m.group(1)
                while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
                out.append((str(path.relative_to(repo.ROOT)), cmd))
            i += 1
    for line in cpi2ctl.__doc__.splitlines():
        m = re.match(r"^\s+(cpi2ctl\b.*)$", line)
        if m:
            out.append(("cpi2ctl --help", m.group(1)))
    return out


def argv_of(text):
    """The arguments of an example: the program and a trailing '# comment' or column of notes cut."""
    text = re.sub(r"\s#\s.*$", "", text)
    text = re.split(r"\s{3,}", text.strip())[0]  # the --help lines' notes column
    args = shlex.split(text)
    return args[1:]


def fill(args, values):
    return [values.get(a, a) for a in args]


def test_demo_shows_its_payoff(tmp_path, monkeypatch):
    kafka = fixtures.kafka()
    topic = "cpi2-demo-test-%d-%d" % (os.getpid(), time.time_ns())
    admin = AdminClient(fixtures.kafka_conf(kafka))
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
    checked = {}

    def run_examples(result):
        inc = result["incident"]
        assert inc, "no incident was capped in the run; logs in %s" % result["dir"]
        values = {
            "JOB": inc["victim_job"],
            "HOST": inc["host"],
            "TASK": inc["victim_task"],
            "INCIDENT_ID": inc["incident_id"],
            "TIME": timerange.iso(result["cap_at_us"]),
        }
        monkeypatch.chdir(tmp_path)
        for where, text in examples():
            args = fill(argv_of(text), values)
            # the config examples write a throw-away file; the others use no context (the local stack)
            config = "config.yaml" if args[:1] == ["config"] else "no-config.yaml"
            monkeypatch.setenv("CPI2_CONFIG", str(tmp_path / config))
            acting = any(args[: len(a)] == a for a in ACTING)
            if acting:
                args += ["--topic", topic, "--kafka-client-file", fixtures.kafka_client_file("admin")]
                if "--cluster" in args and "off" in args:
                    args.append("--yes")
            if args[:1] == ["config"] or "--help" in args or "--version" in args:
                try:
                    code, _, err = demo.ctl(*args)
                except SystemExit as e:  # --help and --version print and exit 0
                    code, err = e.code, ""
                assert code == 0, (where, text, err)
                checked[text] = "ok"
                continue
            n = demo.rows_of(args)
            assert n != -1, (where, text, demo.ctl(*args)[2])
            if args == ["caps"]:
                # caps in force now: what the run's enforcer holds (none when its caps all expired,
                # or the task's day of capped time is used up: enforcer max_cap_s_per_task_day)
                held = result["caps_held"]
                assert (0 < n <= len(held)) if held else n == 0, (n, held)
            elif not acting:
                assert n > 0, "%s: %r returned no rows (as %s)" % (where, text, args)
            checked[text] = n
        monkeypatch.delenv("CPI2_CONFIG")

    try:
        result = demo.main(
            ["--scenario", "case1", "--speed", "240", "--duration", "1h", "--workdir", str(tmp_path / "run")],
            before_stop=run_examples,
        )
    finally:
        admin.delete_topics([topic])[topic].result(30)
    assert len(checked) >= 15, checked  # the docs' and --help's examples were found and run
    # the plot of the most severe capped incident shades its cap
    assert result["plot"]["cap_intervals_us"] and os.path.getsize(result["png"]) > 10_000
    assert result["plot"]["incident_id"] == result["incident"]["incident_id"]
    # every printed command returned rows
    assert all(n > 0 for _, n in result["commands"]), result["commands"]
    # the report: nothing failed, and most panels have the run's data
    assert result["panels"]["error"] == 0, result["panel_titles"]["error"]
    assert result["panels"]["data"] >= 30, result["panel_titles"]["empty"]
    if not browser.CHROMIUM:
        pytest.skip(browser.MISSING + ": the report was not opened")
    panels = browser.report_panels(browser.dom(result["report"], tmp_path / "chromium"))
    assert len(panels) == sum(result["panels"].values())
    assert all(drawn > 0 for state, _, drawn, _ in panels if state == "data"), panels
