"""Query results on the terminal: an aligned table (times as ISO 8601) or JSON."""

import json

from cpi2.cli import timerange


def table(cols, rows, raw_times=False):
    """Aligned text table; columns named *_us hold times and are shown as ISO 8601 unless raw_times."""

    def cell(col, v):
        if v is None:
            return "NULL"
        if not raw_times and col.endswith("_us") and isinstance(v, int):
            return timerange.iso(v)
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
