"""Every panel's SQL, every variable query, with Grafana's variables and the plugin's macros
expanded, runs on ClickHouse (the local 18.16 server and chdb-core 26.x) over the fixture
dataset and returns the columns the panel expects; forensics panels return what the forensics
query returns for the same window."""

import re

import pytest

from cpi2.clickhouse import forensics
from cpi2.grafana import generate
from cpi2.grafana.grafana_sql import expand
from cpi2.testing import fixtures

FROM_S = fixtures.FIXTURE_FROM_US // 1_000_000
TO_S = fixtures.FIXTURE_TO_US // 1_000_000
TARGETS = [(d, p, i, t) for d in generate.DASHBOARDS for p in d.panels for i, t in enumerate(p.targets)]
VARIABLES = [(d, v) for d in generate.DASHBOARDS for v in d.variables if v.kind == "query"]


def _values(d):
    return {v.name: v.test_value for v in d.variables}


def _run(ch, db, sql_text):
    """(columns, types, rows as lists of strings) of one statement on the backend's database."""
    if db != "cpi2":
        sql_text = re.sub(r"\bcpi2\.", f"{db}.", sql_text)
    out = ch.query(sql_text, "TabSeparatedWithNamesAndTypes").splitlines()
    assert len(out) >= 2, f"no header in {out[:3]}"
    return out[0].split("\t"), out[1].split("\t"), [line.split("\t") for line in out[2:]]


@pytest.mark.parametrize(
    "dash, panel, i, target", TARGETS, ids=[f"{d.uid}:{p.title}:{chr(65 + i)}" for d, p, i, _ in TARGETS]
)
def test_panel_sql_returns_its_columns(backend, dash, panel, i, target):
    ch, db = backend
    cols, types, rows = _run(ch, db, expand(target.sql, _values(dash), FROM_S, TO_S, 60))
    assert cols == target.columns
    if target.rows_on_fixtures:
        assert rows, f"{panel.title}: no rows over the fixture dataset"
    if target.fmt == 0:  # time series: a DateTime time column, buckets of $__interval_s inside the range
        assert types[0].startswith("DateTime"), types[0]
        for r in rows:
            assert FROM_S - 60 <= int(_epoch(ch, r[0])) <= TO_S


_EPOCH = {}


def _epoch(ch, text):
    if text not in _EPOCH:
        _EPOCH[text] = int(ch.query(f"SELECT toUnixTimestamp(toDateTime('{text}', 'UTC'))").strip())
    return _EPOCH[text]


@pytest.mark.parametrize("interval", [10, 300])
def test_time_series_follow_the_interval(backend, interval):
    ch, db = backend
    for d, p, _i, t in TARGETS:
        if t.fmt != 0:
            continue
        cols, types, rows = _run(ch, db, expand(t.sql, _values(d), FROM_S, TO_S, interval))
        assert cols == t.columns
        for r in rows:
            assert _epoch(ch, r[0]) % interval == 0, f"{p.title}: {r[0]} is not on a {interval} s boundary"


@pytest.mark.parametrize(
    "dash, panel, i, target",
    [x for x in TARGETS if x[3].forensics],
    ids=[f"{d.uid}:{t.forensics}" for d, p, i, t in TARGETS if t.forensics],
)
def test_forensics_panels_return_the_query_result(backend, dash, panel, i, target):
    ch, db = backend
    _, _, rows = _run(ch, db, expand(target.sql, _values(dash), FROM_S, TO_S, 60))
    params = {"from_us": FROM_S * 1_000_000, "to_us": TO_S * 1_000_000}
    params.update({p: _values(dash)[v] for p, v in target.forensics_vars.items()})
    _, expected = forensics.run(target.forensics, params, database=db, ch=ch)
    assert [[_typed(v) for v in r] for r in rows] == [
        [_typed("\\N" if v is None else str(v)) for v in r] for r in expected
    ]
    assert rows or not target.rows_on_fixtures


def _typed(text):
    """A TSV value as a number when it is one (ClickHouse writes 1 where Python writes 1.0)."""
    try:
        return float(text)
    except ValueError:
        return text


def test_incident_panel_shades_the_caps(backend):
    """The drill-down's capped series is 1 exactly while the fixture's cap of mapreduce/3 was in force
    (APPLIED at 00:10, RELEASED by the operator at 00:14)."""
    ch, db = backend
    (dash,) = [d for d in generate.DASHBOARDS if d.uid == "cpi2-incident"]
    target = dash.panels[0].targets[0]
    cols, _, rows = _run(ch, db, expand(target.sql, _values(dash), FROM_S, TO_S, 60))
    capped = [_epoch(ch, r[0]) for r in rows if r[cols.index("capped")] == "1"]
    assert capped == list(range(FROM_S + 600, FROM_S + 840, 60))
    assert {r[cols.index("cpi_threshold")] for r in rows} == {"1.6"}


@pytest.mark.parametrize("dash, var", VARIABLES, ids=[f"{d.uid}:{v.name}" for d, v in VARIABLES])
def test_variable_queries(backend, dash, var):
    ch, db = backend
    cols, _, rows = _run(ch, db, expand(var.sql, _values(dash), FROM_S, TO_S, 60))
    values = [r[0] for r in rows]
    if var.hide == 2:  # derived from another variable: exactly one value
        assert values == [var.test_value]
    else:
        assert var.test_value in values
