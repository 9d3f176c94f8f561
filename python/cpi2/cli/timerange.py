"""Times on the command line, as Grafana writes them: 'now', 'now-2h', 'now-30m', 'now-1d',
'now+5m', rounded to the start of a unit with '/': 'now/d' (today 00:00 UTC), 'now-1d/d'; the
shorter '-2h' (which argparse takes as a flag unless written --from=-2h); ISO 8601
('2026-11-22T10:00:00Z', '2026-11-22 10:00', '2026-11-22'; UTC unless an offset is given) or
microseconds since the epoch (an integer of at least 13 digits). Windows are [from, to)."""

import datetime as dt
import re
import time

_RELATIVE = re.compile(r"^-(\d+(?:\.\d+)?)([smhdw])$")
# Grafana's relative times: now, then offsets (now-1d+2h), then an optional rounding (/d).
_GRAFANA = re.compile(r"^now((?:[-+]\d+(?:\.\d+)?[smhdw])*)(?:/([smhdw]))?$")
_OFFSET = re.compile(r"([-+])(\d+(?:\.\d+)?)([smhdw])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# Microseconds of 2286-11-20: beyond that an integer is surely not a time (and ISO years stop at 9999).
_MAX_US = 10**16


class TimeError(ValueError):
    """A time or a time range the CLI cannot use; str() says why and what is accepted."""


def now_us():
    return int(time.time() * 1_000_000)


def parse(text, now=None):
    """Microseconds since the epoch for one time argument."""
    now = now_us() if now is None else now
    s = text.strip()
    m = _GRAFANA.match(s)
    if m:
        t = now
        for sign, n, unit in _OFFSET.findall(m.group(1)):
            t += (1 if sign == "+" else -1) * int(float(n) * _UNIT_S[unit] * 1_000_000)
        return _round_down(t, m.group(2)) if m.group(2) else t
    m = _RELATIVE.match(s)
    if m:
        return now - int(float(m.group(1)) * _UNIT_S[m.group(2)] * 1_000_000)
    if re.fullmatch(r"\d{13,}", s):
        v = int(s)
        if v >= _MAX_US:
            raise TimeError(f"time {text!r}: {v} microseconds is beyond year 2286")
        return v
    iso = s[:-1] + "+00:00" if s.endswith("Z") else s
    try:
        t = dt.datetime.fromisoformat(iso)
    except ValueError:
        raise TimeError(
            f"time {text!r} not understood; use now, now-2h/now-30m/now-1d (or now/d, now-1d/d), "
            f"ISO 8601 (2026-11-22T10:00:00Z) or microseconds since the epoch"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return int(t.timestamp()) * 1_000_000 + t.microsecond


def _round_down(us, unit):
    """us rounded down to the start of its UTC second, minute, hour, day or ISO week (Monday)."""
    if unit == "w":
        d = dt.datetime.fromtimestamp(us // 1_000_000, dt.timezone.utc)
        monday = (d - dt.timedelta(days=d.weekday())).replace(hour=0, minute=0, second=0)
        return int(monday.timestamp()) * 1_000_000
    step = _UNIT_S[unit] * 1_000_000
    return us - us % step


def window(from_text, to_text, now=None):
    """(from_us, to_us) of a [from, to) window; raises TimeError unless from < to."""
    now = now_us() if now is None else now
    f, t = parse(from_text, now), parse(to_text, now)
    if f >= t:
        raise TimeError(f"bad time range: --from {from_text} ({iso(f)}) is not before --to {to_text} ({iso(t)})")
    return f, t


def iso(us):
    """A microsecond time as an ISO 8601 UTC string (for messages and tables)."""
    try:
        d = dt.datetime.fromtimestamp(us / 1_000_000, dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(us)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + ("" if us % 1_000_000 == 0 else ".%06d" % (us % 1_000_000)) + "Z"
