"""What every cpi2ctl command prints, in one of three forms chosen with -o/--output:
table (aligned columns, times as ISO 8601), json (an array of objects, values as ClickHouse typed
them: times in microseconds) or yaml (the same objects)."""

import json

from cpi2.cli import timerange

FORMATS = ("table", "json", "yaml")


def add_option(p):
    """-o/--output on a command's parser (every command has it, the one spelling)."""
    p.add_argument(
        "-o",
        "--output",
        choices=FORMATS,
        default="table",
        help="table (default; times as ISO 8601), json or yaml (times in microseconds)",
    )


def table(cols, rows, raw_times=False):
    """Aligned text table; columns named *_us hold times and are shown as ISO 8601 unless raw_times
    (0 as empty: a time not set)."""

    def cell(col, v):
        if v is None:
            return "NULL"
        if not raw_times and col.endswith("_us") and isinstance(v, int):
            return timerange.iso(v) if v else ""
        if isinstance(v, float):
            return f"{v:g}"
        return str(v)

    cells = [[cell(c, v) for c, v in zip(cols, r)] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    lines.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(lines)


def as_json(cols, rows):
    """A JSON array of objects, one per row, values as ClickHouse typed them (times in microseconds)."""
    return json.dumps([dict(zip(cols, r)) for r in rows], indent=1)


def as_yaml(obj):
    import yaml

    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True).rstrip("\n")


def rows_text(fmt, cols, rows, raw_times=False):
    """Rows in the chosen form."""
    if fmt == "json":
        return as_json(cols, rows)
    if fmt == "yaml":
        return as_yaml([dict(zip(cols, r)) for r in rows])
    return table(cols, rows, raw_times)


def record_text(fmt, record, line):
    """One record (a dict): json or yaml as such, the table form as one line of text."""
    if fmt == "json":
        return json.dumps(record, indent=1)
    if fmt == "yaml":
        return as_yaml(record)
    return line
