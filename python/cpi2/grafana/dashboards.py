"""Building blocks of the CPI2 dashboards: panels, targets, variables, layout, and the forensics
queries of clickhouse/queries/*.sql turned into panel SQL with Grafana's macros and variables.

Every target records the columns its SQL must return (`Target.columns`); the tests run each
target's SQL, macros expanded, on ClickHouse and compare. The dashboard JSON is generated from
these definitions by generate.py (the source); the JSON files are its output."""

import re
from dataclasses import dataclass, field

from cpi2.clickhouse import forensics

DATASOURCE = {"type": "grafana-clickhouse-datasource", "uid": "cpi2-clickhouse"}
SCHEMA_VERSION = 42  # Grafana's dashboard schema (@grafana/schema 13.2.3), see schema/README.md
DB = "cpi2"
# Grafana's time range as the microsecond timestamps of the CPI2 tables.
FROM_US = "(toInt64(toUnixTimestamp($__fromTime)) * 1000000)"
TO_US = "(toInt64(toUnixTimestamp($__toTime)) * 1000000)"
# The plugin's format numbers (sqlutil.FormatQueryOption): 0 time series, 1 table.
TIMESERIES, TABLE = 0, 1


def us_range(col):
    """col (Int64 microseconds) inside the dashboard's time range."""
    return f"{col} >= {FROM_US} AND {col} < {TO_US}"


def us_time(col):
    """A DateTime from an Int64 microsecond column (the plugin's time column)."""
    return f"toDateTime(intDiv({col}, 1000000))"


def bucket(col_seconds):
    """Start of the $__interval_s bucket of a UInt32/DateTime seconds expression, as DateTime.
    Written out because ClickHouse 18.16 has no toStartOfInterval ($__timeInterval)."""
    return f"toDateTime(intDiv(toUInt32({col_seconds}), $__interval_s) * $__interval_s)"


@dataclass
class Target:
    sql: str
    columns: list  # names the SQL must return, in order
    fmt: int = TABLE
    # The fixture dataset (clickhouse/tests/fixtures) gives this target at least one row.
    rows_on_fixtures: bool = True
    # When the SQL is a forensics query: its name and {param: variable} (the tests compare results).
    forensics: str = ""
    forensics_vars: dict = field(default_factory=dict)

    def json(self, ref):
        return {
            "datasource": dict(DATASOURCE),
            "editorType": "sql",
            "format": self.fmt,
            "queryType": "timeseries" if self.fmt == TIMESERIES else "table",
            "rawSql": self.sql.strip(),
            "refId": ref,
        }


@dataclass
class Panel:
    title: str
    type: str
    targets: list
    w: int = 12
    h: int = 8
    description: str = ""
    unit: str = ""
    options: dict = field(default_factory=dict)
    custom: dict = field(default_factory=dict)
    overrides: list = field(default_factory=list)
    decimals: int = None

    def json(self, pid, x, y):
        defaults = {"custom": dict(self.custom)}
        if self.unit:
            defaults["unit"] = self.unit
        if self.decimals is not None:
            defaults["decimals"] = self.decimals
        p = {
            "id": pid,
            "type": self.type,
            "title": self.title,
            "datasource": dict(DATASOURCE),
            "gridPos": {"h": self.h, "w": self.w, "x": x, "y": y},
            "fieldConfig": {"defaults": defaults, "overrides": list(self.overrides)},
            "options": dict(self.options),
            "targets": [t.json(chr(ord("A") + i)) for i, t in enumerate(self.targets)],
        }
        if self.description:
            p["description"] = self.description
        return p


def override(name, **props):
    """A fieldConfig override for the field named name: props as {id: value} (custom.* allowed)."""
    return {
        "matcher": {"id": "byName", "options": name},
        "properties": [{"id": k.replace("__", "."), "value": v} for k, v in props.items()],
    }


@dataclass
class Variable:
    name: str
    label: str
    sql: str = ""
    hide: int = 0  # 2: computed from other variables, not shown
    test_value: str = ""  # the value the tests substitute (from the fixture dataset)
    kind: str = "query"

    def json(self):
        v = {"name": self.name, "label": self.label, "type": self.kind, "hide": self.hide}
        if self.kind == "query":
            v.update(
                {
                    "datasource": dict(DATASOURCE),
                    "query": self.sql.strip(),
                    "refresh": 2,
                    "sort": 1,
                    "includeAll": False,
                    "multi": False,
                    "options": [],
                }
            )
        else:  # textbox
            v.update({"query": self.test_value, "options": []})
        return v


@dataclass
class Dashboard:
    uid: str
    title: str
    description: str
    panels: list
    variables: list = field(default_factory=list)
    time_from: str = "now-6h"
    tags: list = field(default_factory=lambda: ["cpi2"])

    def json(self):
        out, x, y, row_h, pid = [], 0, 0, 0, 1
        for p in self.panels:
            if x + p.w > 24:
                x, y, row_h = 0, y + row_h, 0
            out.append(p.json(pid, x, y))
            pid += 1
            x += p.w
            row_h = max(row_h, p.h)
        return {
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": list(self.tags),
            "editable": True,
            "graphTooltip": 1,
            "schemaVersion": SCHEMA_VERSION,
            "version": 1,
            "timezone": "utc",
            "refresh": "1m",
            "time": {"from": self.time_from, "to": "now"},
            "timepicker": {},
            "annotations": {"list": []},
            "links": [
                {
                    "title": "CPI2 dashboards",
                    "type": "dashboards",
                    "tags": ["cpi2"],
                    "asDropdown": True,
                    "icon": "external link",
                    "includeVars": False,
                    "keepTime": True,
                    "targetBlank": False,
                    "tooltip": "",
                }
            ],
            "templating": {"list": [v.json() for v in self.variables]},
            "panels": out,
        }


def forensics_sql(name, variables=None, bucket_s=None):
    """The forensics query clickhouse/queries/<name>.sql as panel SQL: the time window becomes the
    dashboard's range (an instant, at_us, its end), String parameters become ${var:sqlstring} (variables: {param: var}), bucket_s
    becomes $__interval_s (or a fixed number), other parameters keep their defaults. Rendered by
    forensics.render with sentinel values, then the sentinels are replaced: the query text is not
    copied, and the JSON changes when the query file does (a test checks the JSON is up to date)."""
    variables = variables or {}
    values, swaps = {}, []
    for i, p in enumerate(forensics.params(name)):
        if p.name in ("from_us", "to_us", "at_us"):  # the window, or an instant: the range's end
            sentinel = 7_000_000_000_000_000 + i
            values[p.name], swaps = sentinel, swaps + [(str(sentinel), FROM_US if p.name == "from_us" else TO_US)]
        elif p.name in variables:
            sentinel = f"__grafana_var_{i}__"
            values[p.name] = sentinel
            swaps.append((forensics.literal("String", sentinel), "${%s:sqlstring}" % variables[p.name]))
        elif p.name == "bucket_s":
            sentinel = 3_999_999_000 + i
            values[p.name] = sentinel
            swaps.append((str(sentinel), "$__interval_s" if bucket_s is None else str(bucket_s)))
    sql = forensics.render(name, values, DB)
    for old, new in swaps:
        if old not in sql:
            raise ValueError(f"{name}: parameter value {old} not found in the rendered SQL")
        sql = sql.replace(old, new)
    return sql


def forensics_columns(name):
    """The columns of a forensics query, from its .reference file (header line)."""
    ref = forensics.QUERIES / f"{name}.reference"
    return ref.read_text().splitlines()[0].split("\t")


def forensics_target(name, variables=None, **kw):
    return Target(
        forensics_sql(name, variables),
        forensics_columns(name),
        forensics=name,
        forensics_vars=dict(variables or {}),
        **kw,
    )


def sql(text):
    """Panel SQL written in this file: dedented, database cpi2."""
    lines = [line for line in text.strip("\n").splitlines()]
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return re.sub(r"[ \t]+\n", "\n", "\n".join(line[indent:] for line in lines)).strip()
