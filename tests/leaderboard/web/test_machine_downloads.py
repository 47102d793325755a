"""Every table's download is for machines: the CSV and the Parquet file hold the same rows and columns, one value a
cell (a group's mean, interval, rank range and verdict in columns of their own), numbers typed as numbers in the
Parquet file and written as numbers in the CSV, missing values empty (null), never "–"."""

from __future__ import annotations

import csv
import json
import math

import pyarrow.parquet as pq
import pytest

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.submissions.load import load_results


def _tables(site):
    return sorted(path.relative_to(site / "downloads").with_suffix("").as_posix()
                  for path in (site / "downloads").rglob("*.csv"))


def test_every_table_has_a_parquet_twin_with_the_same_values(built_site):
    names = _tables(built_site)
    assert "leaderboard" in names and any(name.startswith("datasets/") for name in names) \
        and any(name.startswith("models/") for name in names)
    for name in names:
        with open(built_site / "downloads" / f"{name}.csv", encoding="utf-8", newline="") as handle:
            header, *rows = list(csv.reader(handle))
        table = pq.read_table(built_site / "downloads" / f"{name}.parquet")
        assert table.column_names == header, name
        assert table.num_rows == len(rows), name
        meta = json.loads(table.schema.metadata[b"irboard"])
        assert meta == {key: value for key, value in json.loads(
            (built_site / "downloads" / f"{name}.json").read_text()).items() if key not in ("columns", "rows")}
        for index, field in enumerate(table.schema):
            values = table.column(index).to_pylist()
            for row, value in zip(rows, values, strict=True):
                text = row[index]
                assert text != "–", (name, field.name)
                if value is None:
                    assert text == "", (name, field.name, text)
                elif field.type in ("double", "int64") or str(field.type) in ("double", "int64"):
                    assert math.isclose(float(text), value, abs_tol=1e-6), (name, field.name)
                elif str(field.type) == "bool":
                    assert text == str(value), (name, field.name)
                else:
                    assert text.lstrip("'") == value.replace("\r", "\n"), (name, field.name)


def test_the_home_table_gives_each_group_its_verdict(built_site, synth):
    with open(built_site / "downloads" / "leaderboard.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    groups = [name[:-len(" verdict")] for name in rows[0] if name.endswith(" verdict")]
    assert "All datasets" in groups and "BEIR" in groups
    table = pq.read_table(built_site / "downloads" / "leaderboard.parquet")
    assert str(table.schema.field("All datasets mean").type) == "double"
    assert str(table.schema.field("All datasets rank_low").type) == "int64"
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    board = build_leaderboard(loaded.results, SiteSettings(), synth.golden_lookup)
    best = {group.name: group.best_set for group in board.groups}  # ★: who could be #1 among all ranked
    for row in rows:
        for group in groups:
            low = row[f"{group} rank_low"]
            expected = "" if low == "" else "best_set" if row["model_id"] in best[group] else ""
            assert row[f"{group} verdict"] == expected
            assert (low == "") == (row[f"{group} rank_high"] == "")
    assert any(row["All datasets verdict"] == "best_set" for row in rows)


@pytest.mark.parametrize("page", ["index.html", "datasets/beir__scifact.html", "models/bm25.html"])
def test_each_table_links_its_parquet_file(built_site, page):
    html = (built_site / page).read_text()
    assert html.count(".parquet\" download>Parquet</a>") == 1


@pytest.mark.browser
@pytest.mark.parametrize("path", ["index.html?type=dense&sort=d-beir__scifact&desc=1", "datasets/beir__scifact.html"])
def test_the_views_parquet_download_is_its_csv_typed(watched, site_url, path):
    """The view's Parquet file (written in the browser, site/js/parquet.js) holds the view's CSV: the same columns
    and rows, numbers as doubles, `verified` as booleans, empty cells as nulls; pyarrow reads it."""
    import io
    from pathlib import Path

    page = watched
    page.goto(f"{site_url}/{path}")
    files = {}
    for button in ("#download-view", "#download-view-parquet"):
        with page.expect_download() as event:
            page.click(button)
        files[button] = (Path(event.value.path()).read_bytes(), event.value.suggested_filename)
    (text, csv_name), (data, parquet_name) = files["#download-view"], files["#download-view-parquet"]
    assert parquet_name == csv_name.removesuffix(".csv") + ".parquet"
    header, *rows = list(csv.reader(io.StringIO(text.decode("utf-8"))))
    table = pq.read_table(io.BytesIO(data))
    assert table.column_names == header and table.num_rows == len(rows) > 0
    assert str(table.schema.field("verified").type) == "bool"
    numbers = 0
    for index, field in enumerate(table.schema):
        for row, value in zip(rows, table.column(index).to_pylist(), strict=True):
            if value is None:
                assert row[index] == ""
            elif str(field.type) == "double":
                assert float(row[index]) == value
                numbers += 1
            elif str(field.type) == "bool":
                assert row[index] == ("true" if value else "false")
            else:
                assert row[index] == value
    assert numbers > len(rows)  # scores, intervals and ranks are typed as numbers
