"""Costs are measured only when irboard measured them (issue 33, item 4): a result claiming 1 parameter, 1 dimension
and 1e-9 ms per query is marked claimed on every page and download that shows those costs, and is left out of the
measured-only Pareto views; a reproduced result's costs (read and timed by CI, from its ledger record) are measured.
The trust tier of each result is shown and downloadable beside it (item 1)."""

import csv
import hashlib
import io
import json

import pytest

from leaderboard.analysis.aggregate import build_leaderboard
from leaderboard.submissions.load import load_results
from leaderboard.submissions.reproduce import RELATIVE_TOLERANCE, Reproduction
from leaderboard.submissions.reproductions import mark_reproduced, write_record
from leaderboard.web.build import build_site

DATASET = "custom/costs"
QUERIES = 20
# model id: (parameters, dim, queries per second claimed in the file); both tie (same per-query values)
MODELS = {"honest/reproduced": (22_713_216, 384, 18.0), "claims/tiny": (1, 1, 1e12)}
CI_RATE = 25.0  # what the reproduction measured for the honest model


@pytest.fixture(scope="module")
def site(tmp_path_factory, synth):
    root = tmp_path_factory.mktemp("costs")
    dataset = synth.SyntheticDataset(DATASET, "costs", "Other", "en", "nDCG@10", QUERIES, 0.0)
    paths = {}
    for model_id, (parameters, dim, rate) in MODELS.items():
        data = synth.result_dict(synth.SyntheticModel(model_id, "dense", 0.5, parameters), dataset, ("nDCG@10",),
                                 with_run=True)
        data["model"]["dim"] = dim
        data["provenance"]["timings"]["queries_per_s"] = rate
        if model_id == "honest/reproduced":
            data["model"]["artifact"] = {"spec": "dense:honest/reproduced", "revision": "a" * 40}
        path = paths[model_id] = root / "results" / model_id.replace("/", "__") / "custom__costs.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(synth.dump(data), encoding="utf-8")
    # the record the maintainers' workflow would write for the honest result (its bytes, its measured costs)
    honest = paths["honest/reproduced"]
    write_record(Reproduction(str(honest), hashlib.sha256(honest.read_bytes()).hexdigest(), "honest/reproduced",
                              DATASET, "dense:honest/reproduced", "a" * 40, True, "", QUERIES, 10, 1e-7,
                              parameters=22_713_216, dim=384, queries_per_s=CI_RATE),
                 root / "reproductions", RELATIVE_TOLERANCE)
    verified = synth.VerifiedWhen(lambda result: True)
    build_site(root / "results", root / "_site", is_verified=verified, lookup=synth.golden_lookup,
               reproductions_dir=root / "reproductions")
    return root


def _csv(path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_claimed_costs_are_marked_and_left_out_of_the_measured_front(site, synth):
    from leaderboard.web.views.pareto import build as build_pareto

    pareto = (site / "_site" / "pareto" / "d-custom__costs.html").read_text(encoding="utf-8")
    row = pareto.split('<a href="../models/claims__tiny.html">claims/tiny</a>')[1].split("</tr>")[0]
    assert row.count(">claimed</small>") == 3  # parameters, dimensions and latency
    honest_row = pareto.split('<a href="../models/honest__reproduced.html">honest/reproduced</a>')[1].split("</tr>")[0]
    assert "claimed" not in honest_row and "40.0 ms" in honest_row  # 1000 / CI's 25 queries per second
    assert "(measured by irboard only)" in pareto
    # the views, from the board as the build makes it
    problems = []
    results = mark_reproduced(load_results(site / "results", is_verified=synth.VerifiedWhen(lambda r: True)).results,
                              site / "reproductions", problems)
    assert problems == [] and [r.model.id for r in results if r.reproduced] == ["honest/reproduced"]
    board = build_leaderboard(results, lookup=synth.golden_lookup)
    views = {view.cost: view for view in next(c for c in build_pareto(board)
                                              if c.choice.key == "d-custom__costs").choice.views}
    for cost in ("parameters", "dim", "latency"):
        assert "claims/tiny" in views[cost].front and views[cost].claimed == ("claims/tiny",)
        measured = views[f"{cost}-measured"]
        assert measured.front == ("honest/reproduced",) and measured.missing == ("claims/tiny",)


def test_model_pages_and_downloads_say_who_measured_each_cost(site):
    tiny = (site / "_site" / "models" / "claims__tiny.html").read_text(encoding="utf-8")
    facts = tiny.split('<dl class="facts">')[1].split("</dl>")[0]
    assert facts.count(">claimed</small>") == 2 and ">measured</small>" not in facts
    assert "nothing (not reproduced)" in tiny and "self-reported" not in facts and "re-scored</span>" in facts
    honest = (site / "_site" / "models" / "honest__reproduced.html").read_text(encoding="utf-8")
    facts = honest.split('<dl class="facts">')[1].split("</dl>")[0]
    assert facts.count(">measured</small>") == 2 and "reproduced</span>" in facts
    assert "25.0 queries per second (CI)" in honest
    assert f"declared artifact: <code>dense:honest/reproduced at revision {'a' * 40}</code>" in honest
    assert "declared artifact: none, so it cannot be reproduced" in tiny
    board = {row["model_id"]: row for row in _csv(site / "_site" / "downloads" / "leaderboard.csv")}
    assert (board["claims/tiny"]["parameters_measured"], board["claims/tiny"]["trust"]) == ("False", "re-scored")
    assert (board["honest/reproduced"]["parameters_measured"], board["honest/reproduced"]["trust"]) == (
        "True", "reproduced")
    rows = _csv(site / "_site" / "downloads" / "models" / "claims__tiny.csv")
    assert rows[0]["measured_queries_per_s"] == "" and float(rows[0]["timing queries_per_s"]) == 1e12
    assert _csv(site / "_site" / "downloads" / "models" / "honest__reproduced.csv")[0]["measured_queries_per_s"] == "25.000000"
    dataset = {row["model_id"]: row["trust"] for row in _csv(site / "_site" / "downloads" / "datasets" /
                                                            "custom__costs.csv")}
    assert dataset == {"claims/tiny": "re-scored", "honest/reproduced": "reproduced"}
    home = (site / "_site" / "index.html").read_text(encoding="utf-8")
    assert 'data-tier="reproduced"' in home and 'data-tier="re-scored"' in home
    script = (site / "_site" / "data" / "board.js").read_text(encoding="utf-8")
    rows = json.loads(script.split("d.board = ", 1)[1].rsplit(";\n})", 1)[0])["rows"]
    assert {row[0]: (row[10], "m" in row[6]) for row in rows} == {"claims/tiny": ("re-scored", False),
                                                                 "honest/reproduced": ("reproduced", True)}


def test_a_reproduced_result_stays_reproduced_when_other_files_change(site, synth, tmp_path):
    """Other results changing, new ones arriving: the record names only its own result's bytes, so the tier holds;
    one byte changed in the reproduced result itself takes it back to re-scored."""
    import shutil

    shutil.copytree(site / "results", tmp_path / "results")
    shutil.copytree(site / "reproductions", tmp_path / "reproductions")
    other = tmp_path / "results" / "claims__tiny" / "custom__costs.json"
    other.write_text(other.read_text().replace('"license": "apache-2.0"', '"license": "mit"'))
    new = tmp_path / "results" / "new__model" / "custom__costs.json"
    new.parent.mkdir()
    new.write_text(other.read_text().replace('"id": "claims/tiny"', '"id": "new/model"'))
    verified = synth.VerifiedWhen(lambda result: True)

    def tiers():
        build_site(tmp_path / "results", tmp_path / "_site", is_verified=verified, lookup=synth.golden_lookup,
                   reproductions_dir=tmp_path / "reproductions")
        return {row["model_id"]: row["trust"] for row in _csv(tmp_path / "_site" / "downloads" / "leaderboard.csv")}

    assert tiers() == {"honest/reproduced": "reproduced", "claims/tiny": "re-scored", "new/model": "re-scored"}
    honest = tmp_path / "results" / "honest__reproduced" / "custom__costs.json"
    honest.write_text(honest.read_text().replace('"license": "apache-2.0"', '"license": "mit"'))
    assert tiers()["honest/reproduced"] == "re-scored"
