"""The dashboard JSON: generated from generate.py (up to date), valid against Grafana's dashboard
schema (schema/dashboard.schema.json, from @grafana/schema), and consistent in itself."""

import json
import re
import subprocess
import sys

import jsonschema
import pytest
import yaml
from conftest import GRAFANA

from cpi2.grafana import generate
from cpi2.grafana.dashboards import DATASOURCE

SCHEMA = json.loads((GRAFANA / "schema" / "dashboard.schema.json").read_text())
FILES = sorted((GRAFANA / "dashboards").glob("*.json"))
DASHBOARDS = {p.name: json.loads(p.read_text()) for p in FILES}


def test_json_is_what_the_generator_writes():
    r = subprocess.run([sys.executable, "-m", "cpi2.grafana.generate", "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert {f"{d.uid}.json" for d in generate.DASHBOARDS} == set(DASHBOARDS)


def test_the_check_notices_a_stale_file(tmp_path, monkeypatch):
    monkeypatch.setattr(generate, "OUT", tmp_path)
    assert generate.main([]) == 0
    assert generate.main(["--check"]) == 0
    p = tmp_path / "cpi2-fleet.json"
    p.write_text(p.read_text().replace("Samples per second", "Samples"))
    assert generate.main(["--check"]) == 1


def test_the_six_dashboards_exist():
    assert {d["uid"] for d in DASHBOARDS.values()} == {
        "cpi2-fleet",
        "cpi2-job",
        "cpi2-incident",
        "cpi2-outcomes",
        "cpi2-host",
        "cpi2-placement",
    }


@pytest.mark.parametrize("name", DASHBOARDS)
def test_valid_against_grafanas_schema(name):
    jsonschema.Draft7Validator(SCHEMA).validate(DASHBOARDS[name])


def test_the_schema_rejects_what_grafana_rejects():
    d = json.loads(json.dumps(DASHBOARDS["cpi2-fleet.json"]))
    v = jsonschema.Draft7Validator(SCHEMA)
    bad = [
        lambda x: x.pop("schemaVersion"),
        lambda x: x["panels"][0].pop("type"),
        lambda x: x["panels"][0]["gridPos"].pop("w"),
        lambda x: x.update(refresh=5),
        lambda x: x["panels"][0].update(notAPanelField=1),
    ]
    for change in bad:
        broken = json.loads(json.dumps(d))
        change(broken)
        assert not v.is_valid(broken)


@pytest.mark.parametrize("name", DASHBOARDS)
def test_consistent(name):
    d = DASHBOARDS[name]
    assert 8 <= len(d["uid"]) <= 40 and d["title"]
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    cells = set()
    variables = {v["name"] for v in d["templating"]["list"]}
    uids = {x["uid"] for x in DASHBOARDS.values()}
    for p in d["panels"]:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
        mine = {(g["x"] + i, g["y"] + j) for i in range(g["w"]) for j in range(g["h"])}
        assert not cells & mine, f"{p['title']} overlaps another panel"
        cells |= mine
        assert p["datasource"] == DATASOURCE
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)) and refs
        for t in p["targets"]:
            assert t["datasource"] == DATASOURCE and t["editorType"] == "sql" and t["format"] in (0, 1)
            used = set(re.findall(r"\$\{(\w+)(?::\w+)?\}", t["rawSql"])) | set(
                re.findall(r"\$(?!__)(\w+)", t["rawSql"])
            )
            assert used <= variables, f"{p['title']}: undefined variables {used - variables}"
        for o in p["fieldConfig"]["overrides"]:
            for prop in o["properties"]:
                for link in prop["value"] if prop["id"] == "links" else []:
                    uid = re.match(r"/d/([\w-]+)", link["url"]).group(1)
                    assert uid in uids, f"{p['title']}: link to unknown dashboard {uid}"
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            assert v["datasource"] == DATASOURCE


@pytest.mark.parametrize("dash", generate.DASHBOARDS, ids=lambda d: d.uid)
def test_overrides_name_columns_the_sql_returns(dash):
    for p in dash.panels:
        columns = {c for t in p.targets for c in t.columns}
        for o in p.overrides:
            assert o["matcher"]["id"] == "byName"
            assert o["matcher"]["options"] in columns, (
                f"{p.title}: override for {o['matcher']['options']} not in {columns}"
            )
        x = p.options.get("xField")
        assert x is None or x in columns, p.title
        for t in p.targets:
            if t.fmt == 0:
                assert t.columns[0] == "time", f"{p.title}: a time series starts with its time column"


def test_provisioning_matches_the_dashboards():
    ds = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "clickhouse.yaml").read_text())
    (source,) = ds["datasources"]
    assert {"type": source["type"], "uid": source["uid"]} == DATASOURCE
    assert source["jsonData"]["defaultDatabase"] == "cpi2" and source["jsonData"]["protocol"] == "http"
    prov = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "cpi2.yaml").read_text())
    (provider,) = prov["providers"]
    assert provider["type"] == "file" and provider["options"]["path"].startswith("/")
