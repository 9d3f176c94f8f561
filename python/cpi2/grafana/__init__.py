"""The Grafana dashboards: the generator (generate, dashboards), Grafana's macros in Python
(grafana_sql) and the panel bench. The JSON goes to grafana/dashboards."""
