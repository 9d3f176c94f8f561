"""The Grafana dashboards as one HTML file, without Grafana: every panel of grafana/dashboards/*.json
(what Grafana provisions) is run with its own SQL (variables and the plugin's macros expanded as
Grafana and the plugin expand them, cpi2.grafana.grafana_sql) against a ClickHouse and a time
range, and drawn in the page: time series, bar and pie charts as inline SVG, stats, tables. No
server and no script from elsewhere: it opens in any browser. A small script in the page marks,
once the browser has laid it out, how many marks each panel drew (data-drawn), which the test
reads back from headless Chromium.

  python -m cpi2.grafana.report --from 2026-11-28T06:00:00Z --to 2026-11-28T10:00:00Z \\
      [--var incident=ID --var job=websearch ...] [--database cpi2] [--clickhouse URL] -o report.html
"""

import argparse
import datetime as dt
import html
import json
import math
import re
import sys
import zoneinfo

from cpi2 import repo
from cpi2.clickhouse import chclient, forensics
from cpi2.grafana import grafana_sql

DASHBOARD_DIR = repo.ROOT / "grafana" / "dashboards"
# Grafana's named colours and its classic palette, in order.
COLORS = {
    "green": "#73BF69",
    "yellow": "#FADE2A",
    "blue": "#5794F2",
    "orange": "#FF9830",
    "red": "#F2495C",
    "purple": "#B877D9",
}
PALETTE = ["#73BF69", "#F2CC0C", "#8AB8FF", "#FF780A", "#F2495C", "#5794F2", "#B877D9", "#705DA0", "#37872D", "#FADE2A"]
TABLE_ROWS = 100  # rows a table shows (the rest are counted)
ROW_PX = 30  # Grafana's height of one grid unit


def dashboards(folder=DASHBOARD_DIR):
    """The dashboards' JSON, in the order of the generator (fleet first)."""
    from cpi2.grafana import generate

    order = [d.uid for d in generate.DASHBOARDS]
    out = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return sorted(out, key=lambda d: order.index(d["uid"]) if d["uid"] in order else len(order))


def interval_s(from_s, to_s, points=150):
    """$__interval_s for a range: the smallest of Grafana's round steps that gives at most `points`
    points (Grafana: range / max data points, rounded)."""
    steps = [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
    want = (to_s - from_s) / points
    return next((s for s in steps if s >= want), steps[-1])


class Runner:
    """Runs a dashboard's SQL on one database with the dashboard's variables, for a time range."""

    def __init__(self, ch, database, from_s, to_s, interval=None):
        self.ch, self.database = ch, database
        self.from_s, self.to_s = from_s, to_s
        self.interval = interval or interval_s(from_s, to_s)
        self.tz = zoneinfo.ZoneInfo(ch.query("SELECT timezone()").strip() or "UTC")

    def sql(self, text, variables):
        sql = grafana_sql.expand(text, variables, self.from_s, self.to_s, self.interval)
        if self.database != "cpi2":
            sql = re.sub(r"\bcpi2\.", f"{self.database}.", sql)
        return sql

    def select(self, text, variables):
        return forensics.select(self.ch, self.sql(text, variables), "panel")

    def epoch(self, text):
        """A DateTime as the server wrote it (its time zone) -> Unix seconds."""
        return int(dt.datetime.fromisoformat(text).replace(tzinfo=self.tz).timestamp())

    def variables(self, dash, overrides):
        """{name: value}: each variable of the dashboard in order, overridden ('UID:name' for this
        dashboard alone, else 'name'), else its textbox default, else the first value its query
        returns (as Grafana picks one); '' when none."""
        values = {}
        for v in dash.get("templating", {}).get("list", []):
            name = v["name"]
            own = f"{dash['uid']}:{name}"
            if own in overrides or name in overrides:
                values[name] = overrides.get(own, overrides.get(name))
            elif v.get("type") == "textbox":
                values[name] = v.get("query", "")
            else:
                try:
                    _, rows = self.select(v["query"], values)
                except (chclient.ClickHouseError, grafana_sql.ExpandError):
                    rows = []
                values[name] = str(rows[0][0]) if rows else ""
        return values


def _override_props(panel):
    """{field name: {property id: value}} from the panel's byName overrides."""
    out = {}
    for o in panel.get("fieldConfig", {}).get("overrides", []):
        if o.get("matcher", {}).get("id") == "byName":
            props = out.setdefault(o["matcher"]["options"], {})
            for p in o.get("properties", []):
                props[p["id"]] = p["value"]
    return out


def _color(spec, i):
    if isinstance(spec, dict) and spec.get("mode") == "fixed":
        c = spec.get("fixedColor", "")
        return COLORS.get(c, c if c.startswith("#") else PALETTE[i % len(PALETTE)])
    return PALETTE[i % len(PALETTE)]


def _subst(text, variables):
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), text)


def fmt_value(v, unit=None):
    if v is None:
        return "–"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (int, float)):
        if unit == "percent":
            return f"{v:.1f}%"
        if unit == "s":
            return f"{v:,.0f} s" if abs(v) >= 10 else f"{v:.2g} s"
        a = abs(v)
        for div, suffix in ((1e9, " B"), (1e6, " M"), (1e3, " K")):
            if a >= div * 10:
                return f"{v / div:.3g}{suffix}"
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    return str(v)


def _esc(x):
    return html.escape(str(x), quote=True)


def _nice_max(v):
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * e:
            return m * e
    return 10 * e


# ---- panels -------------------------------------------------------------------------------------

PAD_L, PAD_R, PAD_T, PAD_B = 52, 52, 8, 24
COL_PX = 64  # a grid column's width in the SVG's coordinates (a page about 1600 px wide)


def size(panel):
    """(width, height) of a panel's chart in its SVG's coordinates, in the proportions of its
    grid cell (less its title and legend), so that the chart scales without stretching its text."""
    g = panel.get("gridPos", {"w": 12, "h": 8})
    return g["w"] * COL_PX, max(g["h"] * ROW_PX - 56, 60)


def timeseries(panel, results, variables, runner):
    """Series from every target: wide (time, value columns) or long (time, a text column, values),
    drawn as lines (stepped when asked, dashed, filled) or stacked bars, on a left axis, a right
    axis, or a hidden 0..1 axis (the caps' shading)."""
    custom = panel.get("fieldConfig", {}).get("defaults", {}).get("custom", {})
    props = _override_props(panel)
    series = []  # (name, field, [(t, v)])
    for cols, rows in results:
        if not rows:
            continue
        ti = cols.index("time") if "time" in cols else 0
        text = [i for i, c in enumerate(cols) if i != ti and isinstance(rows[0][i], str)]
        nums = [i for i, c in enumerate(cols) if i != ti and i not in text]
        if text:  # long form: one series per value of the text column(s)
            groups = {}
            for r in rows:
                key = " ".join(str(r[i]) for i in text)
                for i in nums:
                    name = key if len(nums) == 1 else f"{key} {cols[i]}"
                    groups.setdefault((name, cols[i]), []).append((runner.epoch(r[ti]), r[i]))
            series += [(n, f, pts) for (n, f), pts in groups.items()]
        else:
            for i in nums:
                series.append((cols[i], cols[i], [(runner.epoch(r[ti]), r[i]) for r in rows]))
    if not series:
        return None
    x0, x1 = runner.from_s, runner.to_s
    styled = []
    for k, (name, field, pts) in enumerate(series):
        p = props.get(field, {})
        if p.get("custom.hideFrom", {}).get("viz"):
            continue
        st = dict(custom)
        st.update({k2[7:]: v for k2, v in p.items() if k2.startswith("custom.")})
        styled.append(
            {
                "name": _subst(p.get("displayName", name), variables),
                "pts": [(t, v) for t, v in pts if v is not None],
                "color": _color(p.get("color"), k),
                "axis": st.get("axisPlacement", "left"),
                "style": st,
                "min": p.get("min"),
                "max": p.get("max"),
            }
        )
    left = [s for s in styled if s["axis"] not in ("right", "hidden")]
    right = [s for s in styled if s["axis"] == "right"]
    stacked = custom.get("stacking", {}).get("mode") == "normal" and custom.get("drawStyle") == "bars"

    def ymax(group, stack=False):
        if stack:
            sums = {}
            for s in group:
                for t, v in s["pts"]:
                    sums[t] = sums.get(t, 0) + max(v, 0)
            return _nice_max(max(sums.values(), default=0))
        return _nice_max(max((v for s in group for _, v in s["pts"]), default=0))

    lmax, rmax = ymax(left, stacked), ymax(right)
    W, H = size(panel)
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def X(t):
        return PAD_L + (t - x0) / max(x1 - x0, 1) * pw

    def Y(v, top):
        return PAD_T + ph - (v / top) * ph

    out = [f'<svg viewBox="0 0 {W} {H}" class="chart">']
    for i in range(5):  # grid and axes
        y = PAD_T + ph * i / 4
        out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        out.append(
            f'<text x="{PAD_L - 4}" y="{y + 3:.1f}" class="tick" text-anchor="end">{fmt_value(lmax * (4 - i) / 4)}</text>'
        )
        if right:
            out.append(f'<text x="{W - PAD_R + 4}" y="{y + 3:.1f}" class="tick">{fmt_value(rmax * (4 - i) / 4)}</text>')
    for i in range(5):
        t = x0 + (x1 - x0) * i / 4
        label = dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%H:%M")
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(f'<text x="{X(t):.1f}" y="{H - 6}" class="tick" text-anchor="{anchor}">{label}</text>')
    bar_w = max(pw * runner.interval / max(x1 - x0, 1) * 0.8, 1)
    base = {}
    for s in styled:
        st, pts, color = s["style"], sorted(s["pts"]), s["color"]
        if not pts:
            continue
        if s["axis"] == "hidden":
            lo, hi = s["min"] if s["min"] is not None else 0, s["max"] if s["max"] is not None else 1
            top = hi - lo or 1
            y = lambda v, lo=lo, top=top: PAD_T + ph - ((v - lo) / top) * ph  # noqa: E731
        else:
            top = rmax if s["axis"] == "right" else lmax
            y = lambda v, top=top: Y(v, top)  # noqa: E731
        if st.get("drawStyle") == "bars":
            for t, v in pts:
                b = base.get(t, 0) if stacked else 0
                y0, y1 = y(b), y(b + v)
                out.append(
                    f'<rect class="mark" x="{X(t) - bar_w / 2:.1f}" y="{min(y0, y1):.1f}" width="{bar_w:.1f}" '
                    f'height="{abs(y0 - y1):.1f}" fill="{color}" fill-opacity="{st.get("fillOpacity", 60) / 100:.2f}"/>'
                )
                if stacked:
                    base[t] = b + v
            continue
        step = st.get("lineInterpolation") == "stepAfter"
        xy = []
        for j, (t, v) in enumerate(pts):
            if step and j:
                xy.append((X(t), xy[-1][1]))
            xy.append((X(t), y(v)))
        if step:  # the last step lasts one interval
            xy.append((X(pts[-1][0] + runner.interval), xy[-1][1]))
        d = " ".join(f"{a:.1f},{b:.1f}" for a, b in xy)
        fill = st.get("fillOpacity", 0)
        if fill:
            floor = y(s["min"] or 0) if s["axis"] == "hidden" else y(0)
            area = f"{xy[0][0]:.1f},{floor:.1f} {d} {xy[-1][0]:.1f},{floor:.1f}"
            out.append(f'<polygon class="mark" points="{area}" fill="{color}" fill-opacity="{fill / 100:.2f}"/>')
        width = st.get("lineWidth", 1)
        if width:
            dash = st.get("lineStyle", {})
            da = f' stroke-dasharray="{",".join(map(str, dash.get("dash", [])))}"' if dash.get("fill") == "dash" else ""
            out.append(
                f'<polyline class="mark" points="{d}" fill="none" stroke="{color}" stroke-width="{max(width, 1) * 1.5}"{da}/>'
            )
        if st.get("showPoints") == "always":
            out += [f'<circle class="mark" cx="{a:.1f}" cy="{b:.1f}" r="2" fill="{color}"/>' for a, b in xy[: len(pts)]]
    out.append("</svg>")
    legend = "".join(
        f'<span class="key"><i style="background:{s["color"]}"></i>{_esc(s["name"])}</span>' for s in styled if s["pts"]
    )
    return "".join(out) + f'<div class="legend">{legend}</div>'


def barchart(panel, results, variables, runner):
    """Grouped bars: the xField's values along x, one bar per numeric column."""
    cols, rows = results[0]
    if not rows:
        return None
    xf = panel.get("options", {}).get("xField") or cols[0]
    xi = cols.index(xf)
    nums = [i for i, c in enumerate(cols) if i != xi and isinstance(rows[0][i], (int, float))]
    top = {i: _nice_max(max((r[i] or 0 for r in rows), default=0)) for i in nums}
    W, H = size(panel)
    pw, ph = W - PAD_L - 10, H - PAD_T - PAD_B
    gw = pw / len(rows)
    bw = gw * 0.8 / max(len(nums), 1)
    out = [f'<svg viewBox="0 0 {W} {H}" class="chart">']
    first = nums[0] if nums else None
    for i in range(5):
        y = PAD_T + ph * i / 4
        out.append(f'<line x1="{PAD_L}" x2="{W - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        if first is not None:
            out.append(
                f'<text x="{PAD_L - 4}" y="{y + 3:.1f}" class="tick" text-anchor="end">{fmt_value(top[first] * (4 - i) / 4)}</text>'
            )
    every = max(1, len(rows) // 12)
    for k, r in enumerate(rows):
        gx = PAD_L + k * gw + gw * 0.1
        for j, i in enumerate(nums):
            v = r[i] or 0
            h = v / top[i] * ph
            out.append(
                f'<rect class="mark" x="{gx + j * bw:.1f}" y="{PAD_T + ph - h:.1f}" width="{bw:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[j % len(PALETTE)]}"><title>{_esc(r[xi])}: {_esc(cols[i])} {fmt_value(r[i])}</title></rect>'
            )
        if k % every == 0:
            out.append(
                f'<text x="{gx + gw * 0.4:.1f}" y="{H - 6}" class="tick" text-anchor="middle">{_esc(r[xi])}</text>'
            )
    out.append("</svg>")
    legend = "".join(
        f'<span class="key"><i style="background:{PALETTE[j % len(PALETTE)]}"></i>{_esc(cols[i])}'
        f"{' (own scale)' if j else ''}</span>"
        for j, i in enumerate(nums)
    )
    return "".join(out) + f'<div class="legend">{legend}</div>'


def piechart(panel, results, variables, runner):
    """One slice per row: the label is the text column, the value the field reduceOptions names."""
    cols, rows = results[0]
    if not rows:
        return None
    pat = panel.get("options", {}).get("reduceOptions", {}).get("fields", "").strip("/")
    vi = next((i for i, c in enumerate(cols) if pat and re.search(pat, c)), len(cols) - 1)
    li = next((i for i, c in enumerate(cols) if i != vi and isinstance(rows[0][i], str)), 0)
    total = sum(max(r[vi] or 0, 0) for r in rows) or 1
    cx, cy, rad = 110, 110, 100
    out = ['<svg viewBox="0 0 420 220" class="chart pie">']
    a0 = -math.pi / 2
    for k, r in enumerate(rows):
        frac = max(r[vi] or 0, 0) / total
        a1 = a0 + frac * 2 * math.pi
        color = PALETTE[k % len(PALETTE)]
        if frac >= 0.9999:
            out.append(f'<circle class="mark" cx="{cx}" cy="{cy}" r="{rad}" fill="{color}"/>')
        elif frac > 0:
            large = 1 if a1 - a0 > math.pi else 0
            p0 = (cx + rad * math.cos(a0), cy + rad * math.sin(a0))
            p1 = (cx + rad * math.cos(a1), cy + rad * math.sin(a1))
            out.append(
                f'<path class="mark" d="M{cx},{cy} L{p0[0]:.1f},{p0[1]:.1f} A{rad},{rad} 0 {large} 1 {p1[0]:.1f},{p1[1]:.1f} Z" fill="{color}"/>'
            )
        out.append(
            f'<rect x="240" y="{20 + k * 22}" width="12" height="12" fill="{color}"/>'
            f'<text x="258" y="{31 + k * 22}" class="label">{_esc(r[li])}: {fmt_value(r[vi])}</text>'
        )
        a0 = a1
    if panel.get("options", {}).get("pieType") == "donut":
        out.append(f'<circle cx="{cx}" cy="{cy}" r="{rad * 0.55}" fill="#181b1f"/>')
    out.append("</svg>")
    return "".join(out)


def stat(panel, results, variables, runner):
    """Each numeric field of the first row, large."""
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
    cells = []
    for cols, rows in results:
        if not rows:
            continue
        for c, v in zip(cols, rows[0]):
            if v is None or isinstance(v, (int, float)):
                cells.append(
                    f'<div class="stat"><b class="mark">{_esc(fmt_value(v, unit))}</b><small>{_esc(c)}</small></div>'
                )
    return f'<div class="stats">{"".join(cells)}</div>' if cells else None


def table(panel, results, variables, runner):
    cols, rows = results[0]
    if not rows:
        return None
    head = "".join(f"<th>{_esc(c)}</th>" for c in cols)

    def cell(c, v):
        if c.endswith("_us") and isinstance(v, int) and v:
            v = dt.datetime.fromtimestamp(v / 1e6, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        return f"<td>{_esc(fmt_value(v))}</td>"

    body = "".join(
        '<tr class="mark">' + "".join(cell(c, v) for c, v in zip(cols, r)) + "</tr>" for r in rows[:TABLE_ROWS]
    )
    more = f'<p class="more">{len(rows) - TABLE_ROWS} more rows</p>' if len(rows) > TABLE_ROWS else ""
    return f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}</div>'


RENDERERS = {"timeseries": timeseries, "barchart": barchart, "piechart": piechart, "stat": stat, "table": table}


def panel_html(panel, runner, variables):
    """(html of the panel, its state: data | empty | error, rows)."""
    results, errors = [], []
    for t in panel.get("targets", []):
        try:
            results.append(runner.select(t["rawSql"], variables))
        except (chclient.ClickHouseError, grafana_sql.ExpandError) as e:
            errors.append(str(e).splitlines()[0][:300])
    rows = sum(len(r) for _, r in results)
    render = RENDERERS.get(panel["type"])
    body = render(panel, results, variables, runner) if render and results and rows else None
    if errors:
        state, body = "error", '<p class="error">' + "<br>".join(_esc(e) for e in errors) + "</p>"
    elif body is None:
        state, body = "empty", '<p class="nodata">No data</p>'
    else:
        state = "data"
    g = panel.get("gridPos", {"x": 0, "y": 0, "w": 12, "h": 8})
    desc = panel.get("description", "")
    return (
        f'<section class="panel" id="panel-{_esc(panel.get("id"))}" data-type="{_esc(panel["type"])}" '
        f'data-state="{state}" data-rows="{rows}" style="grid-column:{g["x"] + 1} / span {g["w"]};'
        f'grid-row:{g["y"] + 1} / span {g["h"]}"><h3 title="{_esc(desc)}">{_esc(panel["title"])}</h3>'
        f'<div class="body">{body}</div></section>',
        state,
        rows,
    )


def dashboard_html(dash, runner, overrides):
    variables = runner.variables(dash, overrides)
    parts, states = [], []
    for p in dash.get("panels", []):
        h, state, _ = panel_html(p, runner, variables)
        parts.append(h)
        states.append((state, f"{dash['title']}: {p['title']}"))
    shown = ", ".join(f"{k} = {_esc(v)}" for k, v in variables.items() if v != "" and not k.startswith("__"))
    head = (
        f'<h2 id="{_esc(dash["uid"])}">{_esc(dash["title"])}</h2><p class="desc">{_esc(dash.get("description", ""))}'
        f"{'<br>variables: ' + shown if shown else ''}</p>"
    )
    return head + f'<div class="grid" data-uid="{_esc(dash["uid"])}">' + "".join(parts) + "</div>", states


CSS = """
body{background:#111217;color:#ccccdc;font:13px/1.4 Inter,Helvetica,Arial,sans-serif;margin:16px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 2px;border-top:1px solid #2c3235;padding-top:12px}
p.desc{color:#8e8e9e;margin:0 0 8px}a{color:#6e9fff}
.grid{display:grid;grid-template-columns:repeat(24,1fr);grid-auto-rows:30px;gap:6px}
.panel{background:#181b1f;border:1px solid #2c3235;border-radius:3px;display:flex;flex-direction:column;min-width:0;overflow:hidden}
.panel h3{font-size:13px;font-weight:500;margin:0;padding:5px 8px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.body{flex:1;min-height:0;display:flex;flex-direction:column;padding:0 6px 4px}
svg.chart{flex:1;min-height:0;width:100%}svg.pie{max-height:100%}
.grid line.grid{stroke:#2c3235;stroke-width:1}text.tick{fill:#8e8e9e;font-size:10px}text.label{fill:#ccccdc;font-size:12px}
.legend{font-size:11px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.key{margin-right:10px}
.key i{display:inline-block;width:10px;height:3px;margin:0 4px 3px 0;vertical-align:middle}
.stats{flex:1;display:flex;flex-wrap:wrap;align-items:center;justify-content:space-around}
.stat{display:flex;flex-direction:column;align-items:center;padding:0 6px}
.stat b{font-size:26px;font-weight:500;color:#73BF69}.stat small{color:#8e8e9e}
.table{overflow:auto;flex:1}table{border-collapse:collapse;width:100%;font-size:11px}
th{position:sticky;top:0;background:#22252b;text-align:left}td,th{padding:2px 6px;border-bottom:1px solid #2c3235;white-space:nowrap}
.nodata{color:#8e8e9e;margin:auto}.error{color:#F2495C;font-size:11px}.more{color:#8e8e9e;margin:2px}
"""

# After layout: how many marks of each panel the browser drew with a size (data-drawn).
CHECK = """
addEventListener('load', () => {
  let drawn = 0;
  for (const p of document.querySelectorAll('section.panel')) {
    let n = 0;
    for (const m of p.querySelectorAll('.mark')) {
      const r = m.getBoundingClientRect();
      if (r.width > 0 || r.height > 0) n++;
    }
    p.dataset.drawn = n;
    if (n > 0) drawn++;
  }
  document.body.dataset.panelsDrawn = drawn;
});
"""


def report(ch, database, from_us, to_us, overrides=None, title="CPI2 dashboards", note="", folder=DASHBOARD_DIR):
    """(the HTML page, {state: number of panels}, {state: ['dashboard: panel' titles]}) over every
    dashboard; states data, empty, error."""
    runner = Runner(ch, database, from_us // 1_000_000, to_us // 1_000_000)
    sections, counts, titles = [], {"data": 0, "empty": 0, "error": 0}, {"data": [], "empty": [], "error": []}
    for d in dashboards(folder):
        h, states = dashboard_html(d, runner, overrides or {})
        sections.append(h)
        for s, t in states:
            counts[s] += 1
            titles[s].append(t)
    iso = lambda us: dt.datetime.fromtimestamp(us / 1e6, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")  # noqa: E731
    toc = " · ".join(f'<a href="#{_esc(d["uid"])}">{_esc(d["title"])}</a>' for d in dashboards(folder))
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_esc(title)}</title><style>{CSS}</style>"
        f"<script>{CHECK}</script></head><body data-panels='{sum(counts.values())}'>"
        f"<h1>{_esc(title)}</h1><p class='desc'>{iso(from_us)} to {iso(to_us)}, {runner.interval} s buckets; "
        f"database {_esc(database)}; {counts['data']} of {sum(counts.values())} panels with data"
        f"{', ' + str(counts['empty']) + ' without' if counts['empty'] else ''}"
        f"{', ' + str(counts['error']) + ' failed' if counts['error'] else ''}. "
        f"Each panel is its Grafana dashboard's own SQL (grafana/dashboards/*.json). {_esc(note)}</p>"
        f"<p>{toc}</p>{''.join(sections)}</body></html>\n"
    )
    return page, counts, titles


def main(argv=None):
    from cpi2.cli import timerange

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clickhouse", default=repo.default_clickhouse_url(), metavar="URL")
    p.add_argument("--database", default="cpi2")
    p.add_argument("--from", dest="from_", default="now-6h", metavar="TIME", help="default now-6h")
    p.add_argument("--to", default="now", metavar="TIME", help="default now")
    p.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a dashboard variable's value (UID:NAME=VALUE: on that dashboard alone)",
    )
    p.add_argument("--title", default="CPI2 dashboards")
    p.add_argument("-o", "--output", default="cpi2-report.html", metavar="FILE")
    a = p.parse_args(argv)
    try:
        from_us, to_us = timerange.window(a.from_, a.to)
        overrides = dict(v.split("=", 1) for v in a.var)
        page, counts, _ = report(chclient.connect(a.clickhouse), a.database, from_us, to_us, overrides, a.title)
    except (timerange.TimeError, ValueError) as e:
        print(f"report: {e}", file=sys.stderr)
        return 2
    except chclient.ClickHouseError as e:
        print(f"report: {e}", file=sys.stderr)
        return 1
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"report: {a.output}: {counts['data']} panels with data, {counts['empty']} without, {counts['error']} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
