"""The test expander does what the plugin's macros.go and Grafana's variable formats do."""

import pytest

from cpi2.grafana.grafana_sql import ExpandError, expand, expand_macros, replace_variables

F, T = 4102444800, 4102446000  # 2100-01-01T00:00Z .. 00:20Z


def test_macros():
    assert (
        expand_macros("WHERE $__timeFilter(ts)", F, T, 60) == f"WHERE ts >= toDateTime({F}) AND ts <= toDateTime({T})"
    )
    assert (
        expand_macros("$__dateTimeFilter(event_date, ts)", F, T, 60)
        == f"(event_date >= toDate('2100-01-01') AND event_date <= toDate('2100-01-01')) AND (ts >= toDateTime({F}) AND ts <= toDateTime({T}))"
    )
    assert (
        expand_macros("$__timeInterval(ts) x $__interval_s", F, T, 0.2)
        == "toStartOfInterval(toDateTime(ts), INTERVAL 1 second) x 1"
    )
    assert (
        expand_macros("toUnixTimestamp($__fromTime) $__toTime", F, T, 60)
        == f"toUnixTimestamp(toDateTime({F})) toDateTime({T})"
    )
    assert expand_macros("$__timeFilter(toDateTime(intDiv(a, 1000000)))", F, T, 60).startswith(
        "toDateTime(intDiv(a, 1000000)) >= "
    )


def test_unknown_macros_fail():
    for bad in ["$__interval", "$__timeFilter(a, b)", "$__unknown(x)", "$__timeFilter(x"]:
        with pytest.raises(ExpandError):
            expand_macros(bad, F, T, 60)


def test_variables():
    v = {"job": "web'search", "host": "h1"}
    assert (
        replace_variables("a = ${job:sqlstring} AND b = '$host' AND c = '${host}' AND [[host]]", v)
        == "a = 'web''search' AND b = 'h1' AND c = 'h1' AND h1"
    )
    assert replace_variables("$__interval_s", v) == "$__interval_s"
    with pytest.raises(ExpandError):
        replace_variables("${nope}", v)
    assert (
        expand("x = ${host:sqlstring} AND $__timeFilter(ts)", v, F, T, 60)
        == f"x = 'h1' AND ts >= toDateTime({F}) AND ts <= toDateTime({T})"
    )
