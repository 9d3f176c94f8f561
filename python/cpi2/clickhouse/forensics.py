#!/usr/bin/env python3
"""Named forensics queries over the CPI2 tables (clickhouse/queries/<name>.sql).

Each query declares its parameters in its header, `-- param NAME TYPE [= DEFAULT]: text`, and uses
them as {NAME:TYPE} placeholders. They are substituted here, client-side, as validated and quoted
literals, so that the same text runs on ClickHouse 18.16 (which has no query parameters) and on
current versions. Library use (the operator CLI):

    from cpi2.clickhouse import forensics
    forensics.names()                                   # every query
    forensics.params("top_antagonists")                 # [Param(name, type, default, doc)]
    cols, rows = forensics.run("top_antagonists", {"job": "websearch", "from_us": 0, "to_us": 2**62})
"""

import argparse
import json
import math
import os
import re
import sys
from dataclasses import dataclass

from cpi2 import repo
from cpi2.clickhouse.chclient import ClickHouseError, connect

QUERIES = repo.CLICKHOUSE_DIR / "queries"
_PARAM_DECL = re.compile(r"^-- param (\w+) (\w+)(?: = ('(?:[^'\\]|\\.)*'|[-\w.]+))?: (.*)$", re.M)
_PLACEHOLDER = re.compile(r"\{(\w+):(\w+)\}")
_INT_RANGES = {
    "Int32": (-(2**31), 2**31 - 1),
    "Int64": (-(2**63), 2**63 - 1),
    "UInt32": (0, 2**32 - 1),
    "UInt64": (0, 2**64 - 1),
}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ParamError(ValueError):
    """A parameter is missing, unknown or not a valid value of its type."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: object  # None when the parameter is required
    doc: str


def names():
    return sorted(p.stem for p in QUERIES.glob("*.sql"))


def text(name):
    if name not in names():
        raise ParamError(f"unknown query {name!r}; known: {', '.join(names())}")
    return (QUERIES / f"{name}.sql").read_text()


def params(name):
    out = []
    for pname, ptype, default, doc in _PARAM_DECL.findall(text(name)):
        out.append(Param(pname, ptype, None if default == "" else convert(pname, ptype, _unliteral(default)), doc))
    return out


def _unliteral(s):
    if s.startswith("'"):
        return re.sub(r"\\(.)", r"\1", s[1:-1])
    return s


def convert(name, ptype, value):
    """value (Python value or command-line string) as a Python value of the ClickHouse type ptype."""
    if ptype == "String":
        if not isinstance(value, str):
            raise ParamError(f"{name}: expected a string, got {value!r}")
        return value
    if ptype in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ParamError(f"{name}: expected an integer ({ptype}), got {value!r}")
        try:
            v = int(value)
        except ValueError:
            raise ParamError(f"{name}: expected an integer ({ptype}), got {value!r}") from None
        lo, hi = _INT_RANGES[ptype]
        if not lo <= v <= hi:
            raise ParamError(f"{name}: {v} is outside {ptype}")
        return v
    if ptype == "Float64":
        if isinstance(value, bool):
            raise ParamError(f"{name}: expected a number, got {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ParamError(f"{name}: expected a number, got {value!r}") from None
        if not math.isfinite(v):
            raise ParamError(f"{name}: {v} is not a finite number")
        return v
    raise ParamError(f"{name}: unsupported parameter type {ptype}")


def literal(ptype, v):
    """A ClickHouse literal of type ptype for the already converted value v."""
    if ptype == "String":
        escaped = (
            v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r").replace("\0", "\\0")
        )
        return f"'{escaped}'"
    if ptype == "Float64":
        return repr(v)
    return str(v)  # a plain literal: LIMIT on 18.16 takes nothing else


def render(name, values, database="cpi2"):
    """The query's SQL with every placeholder replaced; raises ParamError on a bad parameter set."""
    if not _IDENT.match(database):
        raise ParamError(f"database name {database!r} is not a plain identifier")
    declared = {p.name: p for p in params(name)}
    unknown = set(values) - set(declared)
    if unknown:
        raise ParamError(f"{name}: unknown parameter(s) {', '.join(sorted(unknown))}; expected {', '.join(declared)}")
    resolved = {}
    for p in declared.values():
        if p.name in values:
            resolved[p.name] = convert(p.name, p.type, values[p.name])
        elif p.default is not None:
            resolved[p.name] = p.default
        else:
            raise ParamError(f"{name}: missing parameter {p.name} ({p.type}: {p.doc})")
    sql = text(name)

    def fill(m):
        pname, ptype = m.group(1), m.group(2)
        p = declared.get(pname)
        if p is None or p.type != ptype:
            raise ParamError(f"{name}: placeholder {{{pname}:{ptype}}} has no matching '-- param' declaration")
        return literal(ptype, resolved[pname])

    body = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
    return _PLACEHOLDER.sub(fill, body).replace("{{DB}}", database).strip()


def run(name, values, url="http://127.0.0.1:8123", database="cpi2", ch=None):
    """Runs a query; returns (column names, rows) with values typed (int, float, str, None).
    Raises ParamError for bad parameters and chclient.ClickHouseError for server failures."""
    return select(ch or connect(url), render(name, values, database), name)


def select(ch, sql, what="query"):
    """Runs any SELECT on a chclient connection; returns (column names, rows) typed as run() types
    them. what names the statement in an error."""
    out = ch.query(sql, "TabSeparatedWithNamesAndTypes")
    lines = out.splitlines()
    if len(lines) < 2:
        raise ClickHouseError(f"{what}: unexpected answer {out[:200]!r}")
    cols, types = lines[0].split("\t"), lines[1].split("\t")
    rows = [tuple(_value(t, v) for t, v in zip(types, line.split("\t"))) for line in lines[2:]]
    return cols, rows


def _value(ctype, v):
    if v == "\\N":
        return None
    base = re.sub(r"^(Nullable|LowCardinality)\((.*)\)$", r"\2", ctype)
    base = re.sub(r"^(Nullable|LowCardinality)\((.*)\)$", r"\2", base)
    if re.match(r"^U?Int\d+$", base):
        return int(v)
    if base.startswith("Float"):
        return float(v)
    return v.replace("\\t", "\t").replace("\\n", "\n").replace("\\'", "'").replace("\\\\", "\\")


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Run a named CPI2 forensics query.", epilog="queries: " + ", ".join(names())
    )
    p.add_argument("query", nargs="?", help="query name; omit to list queries and their parameters")
    p.add_argument("param", nargs="*", help="NAME=VALUE")
    p.add_argument(
        "--url", default="http://127.0.0.1:8123", help="ClickHouse HTTP URL or chdb:DIR (default %(default)s)"
    )
    p.add_argument("--database", default="cpi2", help="database (default %(default)s)")
    p.add_argument("--json", action="store_true", help="one JSON object per row instead of a table")
    p.add_argument("--sql", action="store_true", help="print the rendered SQL and exit")
    a = p.parse_args(argv)
    if not a.query:
        for n in names():
            print(n)
            for q in params(n):
                print(f"  {q.name} {q.type}{'' if q.default is None else ' = ' + repr(q.default)}: {q.doc}")
        return 0
    try:
        values = dict(kv.split("=", 1) for kv in a.param)
    except ValueError:
        print("forensics.py: parameters are NAME=VALUE", file=sys.stderr)
        return 2
    try:
        if a.sql:
            print(render(a.query, values, a.database))
            return 0
        cols, rows = run(a.query, values, a.url, a.database)
    except ParamError as e:
        print(f"forensics.py: {e}", file=sys.stderr)
        return 2
    except ClickHouseError as e:
        print(f"forensics.py: {e}", file=sys.stderr)
        return 1
    if a.json:
        for r in rows:
            print(json.dumps(dict(zip(cols, r))))
    else:
        print("\t".join(cols))
        for r in rows:
            print("\t".join("NULL" if v is None else str(v) for v in r))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into head & co.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
