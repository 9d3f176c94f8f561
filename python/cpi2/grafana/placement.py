"""The NUMA and placement dashboard (issue 22): CPI against NUMA score per job (seed 004), the
fleet's NUMA score distribution, and the placement advice (job pairs to keep apart), all from the
forensics queries of clickhouse/queries."""

from cpi2.grafana.dashboards import Dashboard, Panel, Target, Variable, forensics_sql, forensics_target, sql


def bars(title, query, variables, label, label_sql, value, description):
    """A bar chart of one forensics query's rows: label_sql (a string column) against value."""
    return Panel(
        title,
        "barchart",
        [
            Target(
                sql(f"""
                SELECT {label_sql} AS {label}, {value}
                FROM (
                {forensics_sql(query, variables)}
                )"""),
                [label, value],
            )
        ],
        w=12,
        options={"xField": label, "orientation": "vertical", "showValue": "auto"},
        description=description,
    )


def dashboard():
    job = {"job": "job"}
    return Dashboard(
        "cpi2-placement",
        "CPI2 NUMA and placement",
        "NUMA scores (seed 004: sum over nodes of CPU share x memory share x local/remote distance) against CPI, "
        "their distribution over the fleet, and the job pairs the interference history says to keep apart.",
        time_from="now-7d",
        variables=[Variable("job", "Job ('' = every job)", kind="textbox", test_value="")],
        panels=[
            bars(
                "Mean CPI by NUMA score (cpi_vs_numa_score)",
                "cpi_vs_numa_score",
                job,
                "job_numa_bucket",
                "concat(job, ' ', toString(numa_bucket))",
                "mean_cpi",
                "clickhouse/queries/cpi_vs_numa_score.sql: a job's samples by NUMA-score bucket "
                "(0.1 wide); seed 004 found a better score goes with a lower CPI.",
            ),
            Panel(
                "CPI by NUMA score, per job (cpi_vs_numa_score)",
                "table",
                [forensics_target("cpi_vs_numa_score", job)],
                w=12,
                description="clickhouse/queries/cpi_vs_numa_score.sql: samples, tasks, mean and median CPI per bucket.",
            ),
            bars(
                "Fleet NUMA score distribution (numa_score_distribution)",
                "numa_score_distribution",
                None,
                "numa_bucket",
                "toString(numa_bucket)",
                "share",
                "clickhouse/queries/numa_score_distribution.sql: the share of tasks by their mean "
                "NUMA score (seed 004: often more than half the jobs have every access at least one hop away).",
            ),
            Panel(
                "Placement advice: job pairs to keep apart (placement_advice)",
                "table",
                [forensics_target("placement_advice")],
                w=24,
                description="clickhouse/queries/placement_advice.sql, as cpi2ctl advise shows it: ranked by "
                "(true positives + 0.5 x incidents not judged) x (victim CPI / spec mean - 1); scope numa_node "
                "when the victim's memory is local (NUMA score >= 0.9), else machine. "
                "`cpi2ctl advise --anti-affinity` writes them as pod anti-affinity.",
            ),
        ],
    )
