"""cpi2ctl incident show: the PNG of the victim's CPI against the antagonist's CPU usage with caps
shaded, over the fixture dataset on the real local ClickHouse."""

import json
import struct

from cpi2.cli import incident


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_incident_plot(cli, db, tmp_path):
    png = tmp_path / "inc.png"
    code, out, err = cli("--database", db, "incident", "show", "h1-websearch/0-1", "--png", str(png), "-o", "json")
    assert code == 0, err
    assert _png_size(png) == (1000, 450)
    doc = json.loads(out)
    # The fixture's cap a1 of mapreduce/3 (APPLIED 00:10, released by the operator at 00:14): shaded.
    capped = [r["bucket_start_us"] for r in doc["series"] if r["capped"]]
    assert capped and min(capped) == 4102445400000000 and max(capped) < 4102445640000000
    assert doc["cap_intervals_us"] == [[4102445400000000, 4102445640000000]]
    assert (doc["antagonist_plotted"], doc["png"], doc["decision"]) == ("mapreduce/3", str(png), "THROTTLE")
    code, out, err = cli("--database", db, "incident", "show", "h1-websearch/0-1", "--png", str(png))
    assert "antagonist mapreduce/3" in out and "1 cap interval(s)" in out


def test_cap_spans_merge_consecutive_buckets():
    cols = {"bucket_start_us": 0, "capped": 1}
    rows = [(0, 0), (60, 1), (120, 1), (180, 0), (240, 1)]
    assert incident.cap_spans(rows, cols, 60) == [(60, 180), (240, 300)]


def test_plot_differs_with_and_without_caps(cli, db, tmp_path):
    # The same incident plotted against a task that was never capped has no shading, so another image.
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert cli("--database", db, "incident", "show", "h1-websearch/0-1", "--png", str(a))[0] == 0
    code, out, err = cli(
        "--database", db, "incident", "show", "h1-websearch/0-1", "--png", str(b), "--antagonist", "nobody/0"
    )
    assert code == 0, err
    assert "0 cap interval(s)" in out
    assert a.read_bytes() != b.read_bytes()


def test_unknown_incident(cli, db, tmp_path):
    png = tmp_path / "x.png"
    code, out, err = cli("--database", db, "incident", "show", "no-such-incident", "--png", str(png))
    assert code == 2
    assert "unknown incident 'no-such-incident'" in err
    assert not png.exists()


def test_bad_bucket(cli, db):
    code, out, err = cli("--database", db, "incident", "show", "h1-websearch/0-1", "--bucket", "0")
    assert code == 2 and "--bucket 0" in err
