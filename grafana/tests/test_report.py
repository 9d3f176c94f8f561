"""The HTML report (cpi2.grafana.report): every panel of every dashboard, from the dashboards' own
JSON, over the fixture dataset on both backends, opened by headless Chromium (Debian's chromium,
`make -C grafana tools`), which must draw every panel with data; a window without data draws
"No data", not a chart."""

import json

import pytest

from cpi2.grafana import generate, report
from cpi2.testing import browser, fixtures

# The test values of the generator's variables, per dashboard (clickhouse/tests/fixtures).
VALUES = {f"{d.uid}:{v.name}": v.test_value for d in generate.DASHBOARDS for v in d.variables}
PANELS = sum(len(d["panels"]) for d in report.dashboards())


def dom(path, tmp_path):
    """The page's DOM after Chromium loaded and laid it out (its load handler has run)."""
    if not browser.CHROMIUM:
        pytest.skip(browser.MISSING)
    return browser.dom(path, tmp_path / "chromium")


panels = browser.report_panels


def test_every_panel_of_every_dashboard_is_drawn_with_data(backend, tmp_path):
    ch, db = backend
    page, counts, titles = report.report(ch, db, fixtures.FIXTURE_FROM_US, fixtures.FIXTURE_TO_US, VALUES)
    assert counts == {"data": PANELS, "empty": 0, "error": 0} and len(titles["data"]) == PANELS
    path = tmp_path / "report.html"
    path.write_text(page)
    before = panels(page)
    assert len(before) == PANELS and all(d is None for _, _, d, _ in before)  # drawn is the browser's
    after = panels(dom(path, tmp_path))
    assert len(after) == PANELS
    for state, rows, drawn, title in after:
        assert state == "data" and rows > 0 and drawn and drawn > 0, (title, state, rows, drawn)
    # the drill-down's caps: the fixture's cap of mapreduce/3 (00:10-00:14) is a shaded area
    assert "antagonist capped" in page and 'fill-opacity="0.20"' in page


def test_panels_run_the_dashboards_own_sql(backend):
    """The report reads grafana/dashboards/*.json, the files Grafana provisions: the same panels,
    titles and SQL as the generator writes."""
    assert [d["uid"] for d in report.dashboards()] == [d.uid for d in generate.DASHBOARDS]
    for d, g in zip(report.dashboards(), generate.DASHBOARDS):
        assert d == json.loads(generate.render(g))


def test_a_window_without_data_is_said_so(backend, tmp_path):
    ch, db = backend
    hour = 3_600_000_000
    page, counts, titles = report.report(
        ch, db, fixtures.FIXTURE_FROM_US - 5 * hour, fixtures.FIXTURE_FROM_US - 4 * hour, VALUES
    )
    assert counts["error"] == 0 and counts["empty"] > counts["data"]
    path = tmp_path / "empty.html"
    path.write_text(page)
    for state, rows, drawn, title in panels(dom(path, tmp_path)):
        if state == "empty":
            assert rows == 0 and drawn == 0, title
    assert page.count("No data") == counts["empty"]


def test_interval_follows_the_range():
    assert report.interval_s(0, 1200) == 10  # the fixtures' 20 minutes
    assert report.interval_s(0, 4 * 3600) == 120  # the demo's 4 hours
    assert report.interval_s(0, 7 * 86400) == 7200
