#!/usr/bin/env python3
"""Generates grafana/dashboards/*.json, the CPI2 dashboards, from the definitions below (the
source: edit here, run `make -C grafana build`, commit both). `--check` exits 1 when a JSON file
differs from what this script generates (the tests run it)."""

import argparse
import json
import sys

from cpi2 import repo
from cpi2.grafana import placement
from cpi2.grafana.dashboards import (
    DB,
    TIMESERIES,
    TO_US,
    Dashboard,
    Panel,
    Target,
    Variable,
    forensics_sql,
    forensics_target,
    override,
    sql,
    us_range,
    us_time,
)

OUT = repo.ROOT / "grafana" / "dashboards"


def bucket_us(col):
    """Start of the $__interval_s bucket of an Int64 microsecond column, as DateTime."""
    return f"toDateTime(intDiv({col}, $__interval_s * 1000000) * $__interval_s)"


def bucket_s(expr):
    """Start of the $__interval_s bucket of a DateTime expression (18.16 has no toStartOfInterval)."""
    return f"toDateTime(intDiv(toUInt32({expr}), $__interval_s) * $__interval_s)"


INCIDENT_LINK = {
    "title": "Incident drill-down",
    "url": "/d/cpi2-incident/cpi2-incident?var-incident=${__value.raw}&${__url_time_range}",
}
TS = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "auto", "spanNulls": False}
# victim_vs_antagonist's capped column as shading: a stepped series filled red on a hidden 0..1 axis
CAPPED = override(
    "capped",
    displayName="antagonist capped",
    color={"mode": "fixed", "fixedColor": "red"},
    custom__drawStyle="line",
    custom__lineInterpolation="stepAfter",
    custom__lineWidth=0,
    custom__fillOpacity=20,
    custom__showPoints="never",
    custom__axisPlacement="hidden",
    min=0,
    max=1,
)
STACKED = dict(TS, stacking={"mode": "normal", "group": "A"}, fillOpacity=60, drawStyle="bars")


def counts_by(title, table, time_col, by, value, per_hour=False, **panel):
    """A stacked time series: table's rows counted per bucket of time_col and per value of by,
    as value (per hour of the bucket when per_hour)."""
    count = "count() * 3600 / $__interval_s" if per_hour else "count()"
    query = f"""
        SELECT {bucket_us(time_col)} AS time, {by}, {count} AS {value}
        FROM {DB}.{table} FINAL
        WHERE $__dateFilter(event_date) AND {us_range(time_col)}
        GROUP BY time, {by}
        ORDER BY time, {by}"""
    return Panel(title, "timeseries", [Target(sql(query), ["time", by, value], TIMESERIES)], custom=STACKED, **panel)


def fleet():
    newest = f"""
        SELECT
            toInt64(toUnixTimestamp($__toTime)) - intDiv(max(window_start_us + window_us), 1000000) AS samples_lag_s,
            (SELECT toInt64(toUnixTimestamp($__toTime)) - intDiv(max(period_end_us), 1000000)
             FROM {DB}.specs WHERE $__dateFilter(event_date) AND {us_range("period_end_us")}) AS specs_age_s,
            (SELECT toInt64(toUnixTimestamp($__toTime)) - intDiv(max(timestamp_ms), 1000)
             FROM {DB}.host_metrics WHERE $__dateTimeFilter(event_date, ts)) AS host_metrics_lag_s
        FROM {DB}.samples
        WHERE $__dateTimeFilter(event_date, ts)"""
    # the caps in force at the end of the range: clickhouse/queries/caps_in_force.sql, counted
    caps_in_force = "SELECT count() AS caps_in_force\nFROM\n(\n" + forensics_sql("caps_in_force") + "\n)"
    return Dashboard(
        "cpi2-fleet",
        "CPI2 fleet overview",
        "The whole fleet: sample rate, incidents, caps in force and how fresh each stream is in ClickHouse.",
        variables=[],
        panels=[
            Panel(
                "Samples per second",
                "stat",
                [
                    Target(
                        sql(f"""
                SELECT count() / greatest(1, toInt64(toUnixTimestamp($__toTime)) - toInt64(toUnixTimestamp($__fromTime))) AS samples_per_s
                FROM {DB}.samples
                WHERE $__dateTimeFilter(event_date, ts)"""),
                        ["samples_per_s"],
                    )
                ],
                w=6,
                h=5,
                unit="short",
                decimals=1,
                description="CPI samples stored per second over the time range (every cgroup of every host, one per window).",
            ),
            Panel(
                "Incidents per hour",
                "stat",
                [
                    Target(
                        sql(f"""
                SELECT count() * 3600 / greatest(1, toInt64(toUnixTimestamp($__toTime)) - toInt64(toUnixTimestamp($__fromTime))) AS incidents_per_h
                FROM {DB}.incidents FINAL
                WHERE $__dateFilter(event_date) AND {us_range("detected_at_us")}"""),
                        ["incidents_per_h"],
                    )
                ],
                w=6,
                h=5,
                decimals=2,
            ),
            Panel(
                "Caps in force",
                "stat",
                [Target(caps_in_force, ["caps_in_force"])],
                w=6,
                h=5,
                description="clickhouse/queries/caps_in_force.sql at the end of the range (as cpi2ctl caps): tasks whose last APPLIED, RENEWED or RELEASED by then is a cap not yet expired.",
            ),
            Panel(
                "Pipeline lag",
                "stat",
                [Target(sql(newest), ["samples_lag_s", "specs_age_s", "host_metrics_lag_s"])],
                w=6,
                h=5,
                unit="s",
                description="Seconds between the end of the range and the newest sample window, spec period and Telegraf metric in ClickHouse (collector → Kafka → Flink → ClickHouse).",
            ),
            Panel(
                "Samples per second",
                "timeseries",
                [
                    Target(
                        sql(f"""
                SELECT {bucket_s("ts")} AS time, count() / $__interval_s AS samples_per_s
                FROM {DB}.samples
                WHERE $__dateTimeFilter(event_date, ts)
                GROUP BY time
                ORDER BY time"""),
                        ["time", "samples_per_s"],
                        TIMESERIES,
                    )
                ],
                custom=TS,
            ),
            counts_by(
                "Incidents per hour by decision",
                "incidents",
                "detected_at_us",
                "decision",
                "incidents_per_h",
                per_hour=True,
            ),
            counts_by("Cap actions per hour by kind", "actions", "at_us", "kind", "actions_per_h", per_hour=True),
            counts_by(
                "Dead letters by component",
                "dead_letters",
                "at_us",
                "component",
                "dead_letters",
                description="Records refused by the pipeline (bad wire format, unknown schema...), with the reason in cpi2.dead_letters.",
            ),
            Panel(
                "Latest incidents",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("detected_at_us")} AS time, incident_id, host, victim_task, victim_job, decision,
                       ifNull(antagonist_task, '') AS antagonist, round(ifNull(correlation, 0.), 3) AS antagonist_correlation
                FROM {DB}.incidents FINAL
                WHERE $__dateFilter(event_date) AND {us_range("detected_at_us")}
                ORDER BY detected_at_us DESC
                LIMIT 100"""),
                        [
                            "time",
                            "incident_id",
                            "host",
                            "victim_task",
                            "victim_job",
                            "decision",
                            "antagonist",
                            "antagonist_correlation",
                        ],
                    )
                ],
                w=24,
                h=9,
                overrides=[override("incident_id", links=[INCIDENT_LINK])],
            ),
            Panel(
                "Antagonists per machine-day (antagonists_per_machine_day)",
                "table",
                [forensics_target("antagonists_per_machine_day")],
                w=24,
                description="clickhouse/queries/antagonists_per_machine_day.sql (paper section 7: 0.37 per machine-day): incidents that named an antagonist over the machines that sent samples, per day.",
            ),
        ],
    )


def signal_variable():
    """The signal incidents were detected on (cpi, cpu_pressure, ...); the panels of incidents and
    the forensics queries filter by it ('' = every signal)."""
    return Variable(
        "signal", "Signal", f"SELECT DISTINCT signal FROM {DB}.incidents FINAL ORDER BY signal", test_value="cpi"
    )


def job():
    spec_filter = "job = ${job:sqlstring} AND platform = ${platform:sqlstring}"
    return Dashboard(
        "cpi2-job",
        "CPI2 job view",
        "One job on one CPU platform: its CPI against its spec, the tasks that are outliers, its incidents and antagonists.",
        variables=[
            Variable("job", "Job", f"SELECT DISTINCT job FROM {DB}.specs FINAL ORDER BY job", test_value="websearch"),
            Variable(
                "platform",
                "Platform",
                f"SELECT DISTINCT platform FROM {DB}.specs FINAL WHERE job = ${{job:sqlstring}} ORDER BY platform",
                test_value="p1",
            ),
            signal_variable(),
        ],
        panels=[
            Panel(
                "CPI against the spec",
                "timeseries",
                [
                    Target(
                        sql(f"""
                    SELECT {bucket_s("minute")} AS time,
                           avgMerge(cpi_avg) AS cpi_mean,
                           quantilesMerge(0.5, 0.9, 0.99)(cpi_quantiles)[2] AS cpi_p90,
                           quantilesMerge(0.5, 0.9, 0.99)(cpi_quantiles)[3] AS cpi_p99
                    FROM {DB}.samples_1m
                    WHERE {spec_filter} AND $__timeFilter(minute)
                    GROUP BY time
                    ORDER BY time"""),
                        ["time", "cpi_mean", "cpi_p90", "cpi_p99"],
                        TIMESERIES,
                    ),
                    Target(
                        sql(f"""
                    SELECT {us_time("period_end_us")} AS time, cpi_mean AS spec_mean, cpi_mean + 2 * cpi_stddev AS outlier_threshold
                    FROM {DB}.specs FINAL
                    WHERE {spec_filter} AND $__dateFilter(event_date) AND {us_range("period_end_us")}
                    ORDER BY time"""),
                        ["time", "spec_mean", "outlier_threshold"],
                        TIMESERIES,
                    ),
                ],
                w=24,
                h=9,
                custom=TS,
                overrides=[
                    override(
                        "outlier_threshold",
                        custom__lineStyle={"fill": "dash", "dash": [10, 10]},
                        color={"mode": "fixed", "fixedColor": "red"},
                    ),
                    override("spec_mean", color={"mode": "fixed", "fixedColor": "green"}),
                ],
                description="Per-minute rollup (samples_1m) of the job's CPI on the platform; the spec's mean and the outlier threshold mean + 2σ (paper section 4.1).",
            ),
            Panel(
                "CPI distribution",
                "barchart",
                [
                    Target(
                        sql(f"""
                SELECT toString(floor(assumeNotNull(cpi) * 10) / 10) AS cpi_bucket, count() AS samples
                FROM {DB}.samples
                WHERE {spec_filter} AND $__dateTimeFilter(event_date, ts) AND cpi IS NOT NULL
                GROUP BY cpi_bucket
                ORDER BY toFloat64(cpi_bucket)"""),
                        ["cpi_bucket", "samples"],
                    )
                ],
                options={"xField": "cpi_bucket", "orientation": "vertical", "showValue": "never"},
            ),
            Panel(
                "Outlier tasks (CPI above mean + 2σ of the latest spec)",
                "table",
                [
                    Target(
                        sql(f"""
                WITH (SELECT argMax(cpi_mean + 2 * cpi_stddev, period_end_us) FROM {DB}.specs FINAL
                      WHERE {spec_filter} AND period_end_us < {TO_US}) AS threshold
                SELECT task, any(host) AS on_host, count() AS samples, countIf(cpi > threshold) AS outliers,
                       round(avg(cpi), 3) AS mean_cpi, round(max(cpi), 3) AS max_cpi, round(threshold, 3) AS spec_threshold
                FROM {DB}.samples
                WHERE {spec_filter} AND $__dateTimeFilter(event_date, ts) AND cpi IS NOT NULL
                GROUP BY task
                HAVING outliers > 0
                ORDER BY outliers DESC, task
                LIMIT 50"""),
                        ["task", "on_host", "samples", "outliers", "mean_cpi", "max_cpi", "spec_threshold"],
                    )
                ],
            ),
            Panel(
                "Incidents of the job",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("detected_at_us")} AS time, incident_id, host, victim_task, decision,
                       round(victim_cpi, 3) AS cpi, round(cpi_threshold, 3) AS threshold,
                       ifNull(antagonist_task, '') AS antagonist, round(ifNull(correlation, 0.), 3) AS antagonist_correlation
                FROM {DB}.incidents FINAL
                WHERE victim_job = ${{job:sqlstring}} AND victim_platform = ${{platform:sqlstring}}
                  AND (${{signal:sqlstring}} = '' OR signal = ${{signal:sqlstring}})
                  AND $__dateFilter(event_date) AND {us_range("detected_at_us")}
                ORDER BY detected_at_us DESC
                LIMIT 100"""),
                        [
                            "time",
                            "incident_id",
                            "host",
                            "victim_task",
                            "decision",
                            "cpi",
                            "threshold",
                            "antagonist",
                            "antagonist_correlation",
                        ],
                    )
                ],
                overrides=[override("incident_id", links=[INCIDENT_LINK])],
            ),
            Panel(
                "Most aggressive antagonists (top_antagonists)",
                "table",
                [forensics_target("top_antagonists", {"job": "job", "signal": "signal"})],
                description="clickhouse/queries/top_antagonists.sql over the time range (paper section 5).",
            ),
            Panel(
                "Victim CPI by machine utilisation at detection (cpi_vs_machine_utilization)",
                "barchart",
                [forensics_target("cpi_vs_machine_utilization", {"job": "job", "signal": "signal"})],
                options={"xField": "utilization_bucket", "orientation": "vertical", "showValue": "auto"},
                description="clickhouse/queries/cpi_vs_machine_utilization.sql (paper figure 14a-c): utilisation = the host's summed task CPU usage over its CPUs.",
            ),
            Panel(
                "Victim CPI over its job's mean, antagonist identified or not (incident_cpi_distribution)",
                "table",
                [forensics_target("incident_cpi_distribution")],
                description="clickhouse/queries/incident_cpi_distribution.sql (paper figure 14d): quantiles of victim CPI / spec mean at detection, fleet-wide.",
            ),
        ],
    )


def incident():
    inc = "incident_id = ${incident:sqlstring}"
    around = forensics_sql(
        "victim_vs_antagonist",
        {"host": "host", "victim_task": "victim", "antagonist_task": "antagonist", "signal": "signal"},
    )
    body = "\n".join("    " + line for line in around.splitlines())
    return Dashboard(
        "cpi2-incident",
        "CPI2 incident drill-down",
        "One incident: the victim's CPI against the antagonist's CPU usage with the caps shaded (paper figure 9), its suspects, the enforcer's actions and the judged outcome.",
        time_from="now-24h",
        variables=[
            Variable(
                "incident",
                "Incident",
                f"""
                SELECT incident_id FROM {DB}.incidents FINAL
                WHERE $__dateFilter(event_date) AND {us_range("detected_at_us")}
                ORDER BY detected_at_us DESC LIMIT 1000""",
                test_value="h1-websearch/0-1",
            ),
            Variable(
                "host", "Host", f"SELECT host FROM {DB}.incidents FINAL WHERE {inc} LIMIT 1", hide=2, test_value="h1"
            ),
            Variable(
                "victim",
                "Victim",
                f"SELECT victim_task FROM {DB}.incidents FINAL WHERE {inc} LIMIT 1",
                hide=2,
                test_value="websearch/0",
            ),
            Variable(
                "antagonist",
                "Antagonist",
                f"""
                SELECT if(ifNull(antagonist_task, '') != '', assumeNotNull(antagonist_task),
                          (SELECT any(task) FROM {DB}.incident_suspects FINAL WHERE {inc} AND rank = 1))
                FROM {DB}.incidents FINAL WHERE {inc} LIMIT 1""",
                hide=2,
                test_value="mapreduce/3",
            ),
            Variable(
                "signal",
                "Signal",
                f"SELECT signal FROM {DB}.incidents FINAL WHERE {inc} LIMIT 1",
                hide=2,
                test_value="cpi",
            ),
        ],
        panels=[
            Panel(
                "Victim CPI vs antagonist CPU usage, caps shaded",
                "timeseries",
                [
                    Target(
                        f"SELECT toDateTime(intDiv(bucket_start_us, 1000000)) AS time, victim_cpi, antagonist_cpu_usage, capped, cap_cpu,\n"
                        f"       (SELECT any(cpi_threshold) FROM {DB}.incidents FINAL WHERE {inc}) AS cpi_threshold\n"
                        f"FROM\n(\n{body}\n)\nORDER BY time",
                        ["time", "victim_cpi", "antagonist_cpu_usage", "capped", "cap_cpu", "cpi_threshold"],
                        TIMESERIES,
                    )
                ],
                w=24,
                h=10,
                custom=dict(TS, showPoints="always", pointSize=4),
                overrides=[
                    override(
                        "victim_cpi",
                        displayName="victim ${signal} (${victim})",
                        color={"mode": "fixed", "fixedColor": "blue"},
                    ),
                    override(
                        "cpi_threshold",
                        displayName="${signal} threshold",
                        color={"mode": "fixed", "fixedColor": "blue"},
                        custom__lineStyle={"fill": "dash", "dash": [10, 10]},
                        custom__showPoints="never",
                    ),
                    override(
                        "antagonist_cpu_usage",
                        displayName="antagonist CPU (${antagonist})",
                        unit="short",
                        color={"mode": "fixed", "fixedColor": "orange"},
                        custom__axisPlacement="right",
                        custom__axisLabel="CPU-sec/sec",
                    ),
                    CAPPED,
                    override(
                        "cap_cpu",
                        displayName="cap (CPU)",
                        custom__hideFrom={"viz": True, "legend": True, "tooltip": False},
                    ),
                ],
                description="clickhouse/queries/victim_vs_antagonist.sql (paper figure 9), buckets of $__interval_s seconds; red: the antagonist's cap was in force.",
            ),
            Panel(
                "Antagonist CPU usage and threads, caps shaded (lame duck)",
                "timeseries",
                [
                    Target(
                        "SELECT toDateTime(intDiv(bucket_start_us, 1000000)) AS time, antagonist_cpu_usage, antagonist_threads, capped\n"
                        f"FROM\n(\n{body}\n)\nORDER BY time",
                        ["time", "antagonist_cpu_usage", "antagonist_threads", "capped"],
                        TIMESERIES,
                    )
                ],
                w=24,
                h=8,
                custom=dict(TS, showPoints="always", pointSize=4),
                overrides=[
                    override(
                        "antagonist_cpu_usage",
                        displayName="antagonist CPU (${antagonist})",
                        color={"mode": "fixed", "fixedColor": "orange"},
                        custom__axisLabel="CPU-sec/sec",
                    ),
                    override(
                        "antagonist_threads",
                        displayName="antagonist threads",
                        unit="short",
                        color={"mode": "fixed", "fixedColor": "purple"},
                        custom__axisPlacement="right",
                        custom__axisLabel="threads",
                    ),
                    CAPPED,
                ],
                description="clickhouse/queries/victim_vs_antagonist.sql's antagonist_threads (paper section 6.2, figure 12b): a task that tolerates caps piles up threads while capped and goes lame duck (few threads, little CPU) for a while after.",
            ),
            Panel(
                "Incident",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT incident_id, host, {us_time("detected_at_us")} AS detected, victim_task, victim_job, victim_class, decision,
                       round(victim_cpi, 3) AS cpi, round(cpi_threshold, 3) AS threshold, round(spec_mean, 3) AS mean,
                       round(spec_stddev, 3) AS stddev, ifNull(antagonist_task, '') AS antagonist,
                       round(ifNull(correlation, 0.), 3) AS antagonist_correlation, ifNull(cap_cpu, 0.) AS cap,
                       ifNull(cap_duration_s, 0) AS cap_s, round(ifNull(machine_cpu_utilization, 0.), 3) AS host_cpu_usage
                FROM {DB}.incidents FINAL
                WHERE {inc}"""),
                        [
                            "incident_id",
                            "host",
                            "detected",
                            "victim_task",
                            "victim_job",
                            "victim_class",
                            "decision",
                            "cpi",
                            "threshold",
                            "mean",
                            "stddev",
                            "antagonist",
                            "antagonist_correlation",
                            "cap",
                            "cap_s",
                            "host_cpu_usage",
                        ],
                    )
                ],
                w=24,
                h=4,
                options={"showHeader": True},
            ),
            Panel(
                "Suspects",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT rank, task, job, task_class, round(correlation, 3) AS antagonist_correlation, round(cpu_usage, 3) AS cpu
                FROM {DB}.incident_suspects FINAL
                WHERE {inc}
                ORDER BY rank"""),
                        ["rank", "task", "job", "task_class", "antagonist_correlation", "cpu"],
                    )
                ],
                w=8,
            ),
            Panel(
                "Enforcement actions",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("at_us")} AS time, kind, cause, task, ifNull(cap_cpu, 0.) AS cap,
                       if(isNull(expires_at_us), '', toString({us_time("assumeNotNull(expires_at_us)")})) AS expires, reason
                FROM {DB}.actions FINAL
                WHERE ifNull(incident_id, '') = ${{incident:sqlstring}}
                   OR (host = ${{host:sqlstring}} AND task = ${{antagonist:sqlstring}} AND $__dateFilter(event_date) AND {us_range("at_us")})
                ORDER BY at_us"""),
                        ["time", "kind", "cause", "task", "cap", "expires", "reason"],
                    )
                ],
                w=10,
            ),
            Panel(
                "Outcome",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("judged_at_us")} AS judged, verdict, round(relative_cpi, 3) AS relative, round(cpi_before, 3) AS before,
                       round(cpi_during, 3) AS during, samples_before AS n_before, samples_during AS n_during
                FROM {DB}.outcomes FINAL
                WHERE ifNull(incident_id, '') = ${{incident:sqlstring}}"""),
                        ["judged", "verdict", "relative", "before", "during", "n_before", "n_during"],
                    )
                ],
                w=6,
                description="The outcome judge's verdict (paper section 7.2): relative CPI = victim CPI while capped / before.",
            ),
        ],
    )


def outcomes():
    return Dashboard(
        "cpi2-outcomes",
        "CPI2 enforcement outcomes",
        "Did capping help? The enforcer's actions, the judged outcomes and the true/false-positive rates (paper figures 15 and 16).",
        time_from="now-7d",
        variables=[signal_variable()],
        panels=[
            counts_by("Actions by kind", "actions", "at_us", "kind", "actions"),
            Panel(
                "Verdicts",
                "piechart",
                [
                    Target(
                        sql(f"""
                SELECT verdict, count() AS outcomes
                FROM {DB}.outcomes FINAL
                WHERE $__dateFilter(event_date) AND {us_range("judged_at_us")}
                GROUP BY verdict
                ORDER BY verdict"""),
                        ["verdict", "outcomes"],
                    )
                ],
                w=6,
                options={
                    "reduceOptions": {"values": True, "calcs": ["lastNotNull"], "fields": "/^outcomes$/"},
                    "pieType": "donut",
                    "legend": {"displayMode": "table", "placement": "right", "values": ["value"]},
                },
            ),
            counts_by("Verdicts over time", "outcomes", "judged_at_us", "verdict", "outcomes", w=6),
            Panel(
                "True/false-positive rates by correlation threshold (fp_rates_by_threshold)",
                "table",
                [forensics_target("fp_rates_by_threshold", {"signal": "signal"})],
                description="clickhouse/queries/fp_rates_by_threshold.sql (paper figure 15).",
            ),
            Panel(
                "Relative victim CPI while capped (relative_cpi_distribution)",
                "table",
                [forensics_target("relative_cpi_distribution", {"signal": "signal"})],
                description="clickhouse/queries/relative_cpi_distribution.sql (paper figure 16d): below 1, capping helped.",
            ),
            Panel(
                "Rates by the victim's CPI rise in sigmas (rates_by_cpi_increase)",
                "table",
                [forensics_target("rates_by_cpi_increase")],
                description="clickhouse/queries/rates_by_cpi_increase.sql (paper figure 16b): caps at correlation 0.35 or more, by (victim CPI - spec mean) / stddev at detection.",
            ),
            Panel(
                "Relative CPI by correlation and CPI degradation (relative_cpi_by_detection)",
                "table",
                [forensics_target("relative_cpi_by_detection")],
                description="clickhouse/queries/relative_cpi_by_detection.sql (paper figures 15b and 16c): each judged cap's relative CPI beside its correlation and the victim's CPI before the cap over its job's mean.",
            ),
            Panel(
                "Relative LLC misses vs relative CPI, true positives (relative_llc_mpki)",
                "table",
                [forensics_target("relative_llc_mpki")],
                description="clickhouse/queries/relative_llc_mpki.sql (paper figure 15c): the victim's LLC misses per 1000 instructions during the cap over before it, where a PMU counts them.",
            ),
            Panel(
                "Operators' caps judged (operator_caps_judged)",
                "table",
                [forensics_target("operator_caps_judged")],
                description="clickhouse/queries/operator_caps_judged.sql: caps set by hand (cpi2ctl cap), judged by the Flink judge's rule against the victim of the latest incident that named the task.",
            ),
            Panel(
                "Refused and failed actions",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("at_us")} AS time, host, task, kind, cause, reason
                FROM {DB}.actions FINAL
                WHERE kind IN ('REFUSED', 'FAILED') AND $__dateFilter(event_date) AND {us_range("at_us")}
                ORDER BY at_us DESC
                LIMIT 200"""),
                        ["time", "host", "task", "kind", "cause", "reason"],
                    )
                ],
            ),
            Panel(
                "Job pairs that interfere most (interfering_job_pairs)",
                "table",
                [forensics_target("interfering_job_pairs", {"signal": "signal"})],
                description="clickhouse/queries/interfering_job_pairs.sql: placement advice, keep these jobs apart.",
            ),
        ],
    )


def host():
    h = "host = ${host:sqlstring}"

    def metric(name, cols):
        averages = ", ".join(f"avg({c}) AS {c}" for c in cols)
        cpu_total = " AND cpu = 'cpu-total'" if name == "cpu" else ""
        return Target(
            sql(f"""
            SELECT {bucket_s("ts")} AS time, {averages}
            FROM {DB}.host_metrics FINAL
            WHERE {h} AND name = '{name}'{cpu_total} AND $__dateTimeFilter(event_date, ts)
            GROUP BY time
            ORDER BY time"""),
            ["time"] + cols,
            TIMESERIES,
        )

    return Dashboard(
        "cpi2-host",
        "CPI2 host view",
        "One machine: Telegraf's CPU, memory and load next to the CPU usage and CPI of each task (cgroup), its incidents and caps.",
        variables=[
            Variable(
                "host",
                "Host",
                f"""
            SELECT DISTINCT host FROM
            (
                SELECT host FROM {DB}.host_metrics WHERE $__dateTimeFilter(event_date, ts)
                UNION ALL
                SELECT host FROM {DB}.samples WHERE $__dateTimeFilter(event_date, ts)
            )
            ORDER BY host""",
                test_value="h1",
            )
        ],
        panels=[
            Panel(
                "CPU (Telegraf)",
                "timeseries",
                [metric("cpu", ["usage_user", "usage_system", "usage_iowait", "usage_steal"])],
                w=8,
                unit="percent",
                custom=dict(TS, stacking={"mode": "normal", "group": "A"}, fillOpacity=40),
            ),
            Panel(
                "Memory used (Telegraf)",
                "timeseries",
                [metric("mem", ["used_percent"])],
                w=8,
                unit="percent",
                custom=TS,
            ),
            Panel("Load (Telegraf)", "timeseries", [metric("system", ["load1", "load5", "load15"])], w=8, custom=TS),
            Panel(
                "CPU usage per task",
                "timeseries",
                [
                    Target(
                        sql(f"""
                SELECT {bucket_s("ts")} AS time, task, avg(cpu_usage) AS cpu_usage
                FROM {DB}.samples
                WHERE {h} AND $__dateTimeFilter(event_date, ts)
                GROUP BY time, task
                ORDER BY time, task"""),
                        ["time", "task", "cpu_usage"],
                        TIMESERIES,
                    )
                ],
                custom=dict(TS, stacking={"mode": "normal", "group": "A"}, fillOpacity=40),
                description="CPU-seconds per second of each cgroup (CpiSample.cpu_usage).",
            ),
            Panel(
                "CPI per task",
                "timeseries",
                [
                    Target(
                        sql(f"""
                SELECT {bucket_s("ts")} AS time, task, avg(cpi) AS task_cpi
                FROM {DB}.samples
                WHERE {h} AND $__dateTimeFilter(event_date, ts) AND cpi IS NOT NULL
                GROUP BY time, task
                ORDER BY time, task"""),
                        ["time", "task", "task_cpi"],
                        TIMESERIES,
                    )
                ],
                custom=TS,
            ),
            Panel(
                "Incidents on the host",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("detected_at_us")} AS time, incident_id, victim_task, decision, ifNull(antagonist_task, '') AS antagonist
                FROM {DB}.incidents FINAL
                WHERE {h} AND $__dateFilter(event_date) AND {us_range("detected_at_us")}
                ORDER BY detected_at_us DESC
                LIMIT 100"""),
                        ["time", "incident_id", "victim_task", "decision", "antagonist"],
                    )
                ],
                overrides=[override("incident_id", links=[INCIDENT_LINK])],
            ),
            Panel(
                "Cap actions on the host",
                "table",
                [
                    Target(
                        sql(f"""
                SELECT {us_time("at_us")} AS time, task, kind, cause, ifNull(cap_cpu, 0.) AS cap, reason
                FROM {DB}.actions FINAL
                WHERE {h} AND $__dateFilter(event_date) AND {us_range("at_us")}
                ORDER BY at_us DESC
                LIMIT 100"""),
                        ["time", "task", "kind", "cause", "cap", "reason"],
                    )
                ],
            ),
        ],
    )


DASHBOARDS = [fleet(), job(), incident(), outcomes(), host(), placement.dashboard()]


def render(d):
    return json.dumps(d.json(), indent=2, sort_keys=False) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--check", action="store_true", help="only compare dashboards/*.json with what would be generated")
    a = p.parse_args(argv)
    expected = {f"{d.uid}.json": render(d) for d in DASHBOARDS}
    if a.check:
        stale = [n for n, text in expected.items() if not (OUT / n).is_file() or (OUT / n).read_text() != text]
        extra = sorted(p.name for p in OUT.glob("*.json") if p.name not in expected)
        for n in stale:
            print(
                f"grafana: dashboards/{n} is not what generate.py writes; run `make -C grafana build`", file=sys.stderr
            )
        for n in extra:
            print(f"grafana: dashboards/{n} is not generated by generate.py", file=sys.stderr)
        return 1 if stale or extra else 0
    OUT.mkdir(exist_ok=True)
    for n, text in expected.items():
        (OUT / n).write_text(text)
    print(f"grafana: {len(expected)} dashboards written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
