"""Golden-site test and build behaviour. After an intended change to the site, regenerate the golden copy with

    python tests/data/make_synthetic_results.py

and review the diff of tests/data/site/golden.
"""

import csv
import filecmp
import json
import urllib.request
from pathlib import Path

import pytest

from evaluator.errors import IrboardError
from evaluator.result import read_result, result_path
from leaderboard.web.build import PLOTLY_JS, PLOTLY_TARGET, BuildError, build_site
from leaderboard.web.render import MARKER


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_site_matches_the_golden_copy(built_site, synth):
    built = _tree(built_site)
    golden = _tree(synth.GOLDEN_SITE)
    assert PLOTLY_TARGET in built and PLOTLY_TARGET not in golden
    assert filecmp.cmp(built_site / PLOTLY_TARGET, PLOTLY_JS, shallow=False)
    del built[PLOTLY_TARGET]
    assert sorted(built) == sorted(golden)
    different = [path for path in golden if built[path] != golden[path]]
    assert different == [], "regenerate with: python tests/data/make_synthetic_results.py"


def test_the_build_is_deterministic(tmp_path, synth, built_site):
    build_site(synth.GOLDEN_RESULTS, tmp_path / "again", is_verified=synth.golden_verification,
               lookup=synth.golden_lookup)
    assert _tree(tmp_path / "again") == _tree(built_site)


def test_the_build_is_the_same_in_worker_processes(tmp_path, synth, built_site):
    """Statistics per dataset and pages rendered in two forked workers: the same site, byte for byte."""
    build_site(synth.GOLDEN_RESULTS, tmp_path / "forked", is_verified=synth.golden_verification,
               lookup=synth.golden_lookup, workers=2)
    assert _tree(tmp_path / "forked") == _tree(built_site)


def test_the_site_has_every_page_and_download(built_site, synth):
    models = [m.id for m in synth.GOLDEN_MODELS]
    datasets = [d.id for d in synth.GOLDEN_DATASETS]
    for model_id in models:
        slug = result_path(model_id, "x/y").parent.name
        for path in (f"models/{slug}.html", f"downloads/models/{slug}.csv", f"data/models/{slug}.js"):
            assert (built_site / path).is_file(), path
    for dataset_id in datasets:
        slug = result_path("x", dataset_id).stem
        assert (built_site / f"datasets/{slug}.html").is_file()
    for page in ("index.html", "compare.html", "submit.html", "css/site.css", "js/table.js", MARKER):
        assert (built_site / page).is_file(), page


def test_downloads_hold_the_tables(built_site, synth):
    with open(built_site / "downloads" / "leaderboard.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(synth.GOLDEN_MODELS)
    # a model with a group mean but not verified on the whole group has no rank range and no band: empty, not 0
    unranked = next(row for row in rows if row["verified"] == "some" and row["All datasets mean"])
    assert (unranked["All datasets rank_low"], unranked["All datasets rank_high"], unranked["All datasets band"]) == \
        ("", "", "")
    assert all(row["All datasets rank_low"] != "0" for row in rows)
    data = json.loads((built_site / "downloads" / "leaderboard.json").read_text())
    assert [row["model_id"] for row in data["rows"]] == [row["model_id"] for row in rows]
    scifact = json.loads((built_site / "downloads" / "datasets" / "beir__scifact.json").read_text())
    values = read_result(result_path("bm25", "beir/scifact", synth.GOLDEN_RESULTS)).per_query["nDCG@10"]
    bm25 = next(row for row in scifact["rows"] if row["model_id"] == "bm25")
    assert bm25["nDCG@10"] == pytest.approx(values.mean(), abs=1e-6)
    assert bm25["rank_best"] >= 1 and bm25["verified"] is True and bm25["unverified"] == ""
    markup = next(row for row in scifact["rows"] if row["model_id"] == "test/markup-in-metadata")
    assert scifact["rows"][-2:].count(markup) == 1  # unverified rows come last, without rank
    assert (markup["rank_best"], markup["best_set"], markup["verified"]) == (None, False, False)
    assert markup["unverified"] == "nDCG@10 R@100 RR@10"
    assert "Holm–Bonferroni" in scifact["significance"]


def test_problems_stop_the_build_and_leave_the_old_site(tmp_path, results_copy, synth):
    out = tmp_path / "_site"
    build_site(results_copy, out, lookup=synth.golden_lookup)
    before = _tree(out)
    result_path("bm25", "beir/nfcorpus", results_copy).write_text("[1, 2")
    result_path("bm25", "miracl/sw", results_copy).write_text("{}")
    with pytest.raises(BuildError) as caught:
        build_site(results_copy, out, lookup=synth.golden_lookup)
    assert isinstance(caught.value, IrboardError)
    assert len(caught.value.problems) == 2
    assert "beir__nfcorpus.json" in str(caught.value) and "miracl__sw.json" in str(caught.value)
    assert _tree(out) == before


def test_strict_turns_warnings_into_failure(tmp_path, results_copy, synth):
    (results_copy / "notes.txt").write_text("stray")
    report = build_site(results_copy, tmp_path / "lenient", lookup=synth.golden_lookup)
    assert len(report.warnings) == 1 and "notes.txt" in report.warnings[0]
    with pytest.raises(BuildError, match="notes.txt"):
        build_site(results_copy, tmp_path / "strict", strict=True, lookup=synth.golden_lookup)
    assert not (tmp_path / "strict").exists()


def test_refuses_to_replace_a_folder_it_did_not_build(tmp_path, synth):
    precious = tmp_path / "docs"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    with pytest.raises(BuildError, match="not an irboard build"):
        build_site(synth.GOLDEN_RESULTS, precious, lookup=synth.golden_lookup)
    with pytest.raises(BuildError, match="contains the results"):
        build_site(synth.GOLDEN_RESULTS, synth.GOLDEN_RESULTS.parent, lookup=synth.golden_lookup)
    assert (precious / "keep.txt").read_text() == "mine"


def test_rebuilding_replaces_the_previous_site(tmp_path, synth):
    out = tmp_path / "_site"
    build_site(synth.GOLDEN_RESULTS, out, lookup=synth.golden_lookup)
    (out / "stale.html").write_text("old")
    build_site(synth.GOLDEN_RESULTS, out, lookup=synth.golden_lookup)
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["_site"]  # no staging folders left behind


def test_served_over_http(site_url, built_site):
    with urllib.request.urlopen(f"{site_url}/index.html") as response:
        assert response.status == 200
        assert response.read() == (built_site / "index.html").read_bytes()
    with urllib.request.urlopen(f"{site_url}/js/plotly.min.js") as response:
        assert response.read() == PLOTLY_JS.read_bytes()


def test_test_settings_reach_the_pages(tmp_path, synth):
    from leaderboard.analysis.stats import TestSettings

    out = tmp_path / "_site"
    settings = TestSettings(alpha=0.01, seed=7, correction="bh", ci_method="percentile")
    build_site(synth.GOLDEN_RESULTS, out, settings=settings, lookup=synth.golden_lookup)
    page = (out / "datasets" / "beir__scifact.html").read_text()
    assert "α = 0.01" in page and "seed 7" in page and "Benjamini" in page
    assert "carry no family-wise guarantee" in page  # the rank ranges say what BH does not promise


def test_downloads_state_their_unit_and_full_dataset_ids(built_site, synth):
    with open(built_site / "downloads" / "leaderboard.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["unit"] for row in rows} == {"0-1"}
    bm25 = next(row for row in rows if row["model_id"] == "bm25")
    values = read_result(result_path("bm25", "beir/scifact", synth.GOLDEN_RESULTS)).per_query["nDCG@10"]
    assert float(bm25["beir/scifact nDCG@10"]) == pytest.approx(values.mean(), abs=1e-6) and values.mean() < 1
    for dataset in synth.GOLDEN_DATASETS:  # every dataset column is headed by its full id and metric
        assert any(name.startswith(f"{dataset.id} ") for name in rows[0]), dataset.id
    for table in ("leaderboard.json", "datasets/beir__scifact.json", "models/bm25.json"):
        document = json.loads((built_site / "downloads" / table).read_text())
        assert "0-1" in document["unit"] and "×100" in document["unit"]
    with open(built_site / "downloads" / "datasets" / "beir__scifact.csv", newline="") as handle:
        scifact = list(csv.DictReader(handle))
    assert {row["dataset_id"] for row in scifact} == {"beir/scifact"} and {row["unit"] for row in scifact} == {"0-1"}
