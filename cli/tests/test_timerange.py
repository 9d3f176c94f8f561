"""Command-line times and windows."""

import pytest

from cpi2.cli import timerange

NOW = 1_800_000_000_000_000


@pytest.mark.parametrize(
    "text, expected",
    [
        ("now", NOW),
        ("now-2h", NOW - 7_200_000_000),
        ("now-1d", NOW - 86_400_000_000),
        ("now+5m", NOW + 300_000_000),
        ("now-1d+2h", NOW - 79_200_000_000),
        ("now/d", 1_799_971_200_000_000),  # 2027-01-15T00:00:00Z (NOW is 08:00 that day)
        ("now-1d/d", 1_799_884_800_000_000),
        ("now/h", NOW),
        ("now/w", 1_799_625_600_000_000),  # Monday 2027-01-11
        ("-2h", NOW - 7_200_000_000),
        ("-30m", NOW - 1_800_000_000),
        ("-1.5d", NOW - 129_600_000_000),
        ("4102444800000000", 4102444800000000),
        ("2100-01-01T00:00:00Z", 4102444800000000),
        ("2100-01-01 01:00:00+01:00", 4102444800000000),
        ("2100-01-01", 4102444800000000),
        ("2100-01-01T00:00:00.250000Z", 4102444800250000),
    ],
)
def test_parse(text, expected):
    assert timerange.parse(text, NOW) == expected


@pytest.mark.parametrize(
    "text",
    ["yesterday", "-2x", "12", "99999999999999999", "2100-13-01", "now-", "now-1x", "now/", "now-1d/dd", "nowish"],
)
def test_parse_refuses(text):
    with pytest.raises(timerange.TimeError) as e:
        timerange.parse(text, NOW)
    assert repr(text) in str(e.value)


def test_window_must_be_ordered():
    assert timerange.window("-1h", "now", NOW) == (NOW - 3_600_000_000, NOW)
    for a, b in [("now", "-1h"), ("now", "now")]:
        with pytest.raises(timerange.TimeError, match="bad time range"):
            timerange.window(a, b, NOW)


def test_iso():
    assert timerange.iso(4102444800000000) == "2100-01-01T00:00:00Z"
    assert timerange.iso(4102444800000001) == "2100-01-01T00:00:00.000001Z"
