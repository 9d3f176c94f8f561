"""What Grafana and the grafana-clickhouse-datasource plugin (v4) do to a panel's SQL before
ClickHouse sees it: the frontend replaces template variables ($var, ${var}, ${var:sqlstring},
[[var]]), then the plugin's backend expands its macros (pkg/macros/macros.go of the plugin:
$__timeFilter(col), $__fromTime, $__toTime, $__interval_s, $__timeInterval(col), ...).
Any other $__ name is an error here, as the plugin would fail the query."""

import datetime as dt
import re


class ExpandError(ValueError):
    pass


def sqlstring(value):
    """Grafana's ${var:sqlstring} format: quoted, single quotes doubled."""
    return "'" + value.replace("'", "''") + "'"


def replace_variables(sql, variables):
    def one(name, fmt):
        if name.startswith("__"):
            return None  # Grafana's own ($__interval, $__url_time_range...) or a plugin macro
        if name not in variables:
            raise ExpandError(f"template variable ${name} is not defined")
        v = variables[name]
        if fmt in (None, "raw"):
            return v
        if fmt == "sqlstring":
            return sqlstring(v)
        raise ExpandError(f"variable format {fmt} not supported by these tests")

    def sub(m):
        fmt = m.group(2) if m.re.groups > 1 else None
        r = one(m.group(1), fmt)
        return m.group(0) if r is None else r

    sql = re.sub(r"\$\{(\w+)(?::(\w+))?\}", sub, sql)
    sql = re.sub(r"\[\[(\w+)\]\]", sub, sql)
    return re.sub(r"\$(\w+)", sub, sql)


def _args(sql, start):
    """Arguments of a macro call whose '(' is at sql[start]; returns (args, index after ')')."""
    depth, args, cur, i = 0, [], "", start
    while i < len(sql):
        c = sql[i]
        if c == "(":
            depth += 1
            if depth > 1:
                cur += c
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return [a for a in args if a != ""], i + 1
            cur += c
        elif c == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    raise ExpandError(f"unbalanced parentheses after macro at {start}")


def expand_macros(sql, from_s, to_s, interval_s):
    """The plugin's macros for a time range [from_s, to_s] (Unix seconds) and an interval."""
    dfrom = dt.datetime.fromtimestamp(from_s, dt.timezone.utc).strftime("%Y-%m-%d")
    dto = dt.datetime.fromtimestamp(to_s, dt.timezone.utc).strftime("%Y-%m-%d")
    ival = max(int(interval_s), 1)
    simple = {
        "fromTime": f"toDateTime({from_s})",
        "toTime": f"toDateTime({to_s})",
        "fromTime_ms": f"fromUnixTimestamp64Milli({from_s * 1000})",
        "toTime_ms": f"fromUnixTimestamp64Milli({to_s * 1000})",
        "interval_s": str(ival),
    }

    def call(name, a):
        n = len(a)
        if name == "timeFilter" and n == 1:
            return f"{a[0]} >= toDateTime({from_s}) AND {a[0]} <= toDateTime({to_s})"
        if name == "timeFilter_ms" and n == 1:
            return f"{a[0]} >= {simple['fromTime_ms']} AND {a[0]} <= {simple['toTime_ms']}"
        if name == "dateFilter" and n == 1:
            return f"{a[0]} >= toDate('{dfrom}') AND {a[0]} <= toDate('{dto}')"
        if name in ("dateTimeFilter", "dt") and n == 2:
            return (
                f"({a[0]} >= toDate('{dfrom}') AND {a[0]} <= toDate('{dto}')) AND "
                f"({a[1]} >= toDateTime({from_s}) AND {a[1]} <= toDateTime({to_s}))"
            )
        if name == "timeInterval" and n == 1:
            return f"toStartOfInterval(toDateTime({a[0]}), INTERVAL {ival} second)"
        raise ExpandError(f"macro $__{name} with {n} argument(s) is not a grafana-clickhouse-datasource macro")

    out, i = "", 0
    for m in re.finditer(r"\$__(\w+)", sql):
        if m.start() < i:
            continue
        out += sql[i : m.start()]
        name = m.group(1)
        end = m.end()
        if end < len(sql) and sql[end] == "(" and name not in simple:
            a, i = _args(sql, end)
            out += call(name, a)
        elif name in simple:
            out += simple[name]
            i = end
        else:
            raise ExpandError(f"$__{name} is not a grafana-clickhouse-datasource macro")
    out += sql[i:]
    if "$__" in out:  # a macro inside a macro's arguments
        return expand_macros(out, from_s, to_s, interval_s)
    return out


def expand(sql, variables, from_s, to_s, interval_s):
    return expand_macros(replace_variables(sql, variables), from_s, to_s, interval_s)
