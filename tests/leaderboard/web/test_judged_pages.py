"""Judged@10 beside every main-metric value and the ◊ mark of verdicts unjudged documents could flip, on the real
case: the nine TREC DL 2020 runs scored against a shallow pool's judgments (tests/data/dl20_board.py)."""

import re
import sys

import pytest

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.web.render import make_environment
from leaderboard.web.views.dataset import build as build_dataset
from tests.conftest import OFFICIAL, ROOT

sys.path.insert(0, str(ROOT / "tests" / "data"))
import dl20_board  # noqa: E402


@pytest.fixture(scope="module")
def boards():
    return {pool: build_leaderboard(dl20_board.loaded_results(OFFICIAL, pool), SiteSettings(), dl20_board.lookup)
            for pool in ("official", "shallow")}


def _page(board):
    return build_dataset(board, board.dataset(dl20_board.DATASET))


def test_the_shallow_pool_flags_every_reversed_verdict_and_the_official_judgments_none(boards):
    shallow = {row.model_id: row for row in _page(boards["shallow"]).rows}
    assert all(shallow[name].mark == "worse" for name in dl20_board.NEURAL[:4])
    assert not any(shallow[name].verdict_holds for name in dl20_board.NEURAL)
    assert shallow["bm25"].best and not shallow["bm25"].best_holds  # ★ it may not deserve
    assert all(0.32 <= shallow[name].judged <= 0.375 for name in dl20_board.NEURAL[:4])
    official = {row.model_id: row for row in _page(boards["official"]).rows}
    assert all(official[name].mark == "better" and official[name].verdict_holds for name in dl20_board.NEURAL)
    assert all(row.judged >= 0.93 for row in official.values())


def test_the_dataset_page_says_how_complete_the_judgments_are_in_one_line(boards):
    page = _page(boards["shallow"])
    dataset = boards["shallow"].dataset(dl20_board.DATASET)
    judged = [row.judged for row in page.rows]
    width = max(dataset.hole_high - dataset.hole_low)
    assert page.judgments.startswith(f"Judged@10 of the shown models: {min(judged):.2f}–{max(judged):.2f}; "
                                     f"unjudged documents could move nDCG@10 by up to {100 * width:.2f} (×100)")
    assert "could flip (◊)" in page.judgments
    assert _page(boards["official"]).judgments.endswith("every verdict holds over them.") or \
        "could flip" in _page(boards["official"]).judgments


def test_the_rendered_rows_carry_judged_and_the_mark_with_its_words(boards):
    page = _page(boards["shallow"])
    html = make_environment().get_template("dataset.html").render(ctx=page)
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr[^>]*data-id="([^"]+)".*?</tr>', html, re.S)}
    tas = rows["tas-b"]
    assert re.search(r'<sub class="jd" title="Judged@10 0\.32[^"]*"><span aria-hidden="true">\.32</span>'
                     r'<span class="sr"> \(Judged@10 0\.32\)</span></sub>', tas)
    delta = _cells(tas)[6]  # rank, ★, model, mean, CI, plot, Δ vs baseline
    assert "▼" in delta and 'class="flip" title="could flip' in delta and "(could flip: unjudged documents)" in delta
    assert "flip" not in _cells(rows["bm25-rm3"])[6]  # no difference, and none the holes could make
    assert f'<p class="note" id="judgments">{page.judgments}</p>' in html


def _cells(row: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)


def test_the_downloads_carry_judged_the_bounds_and_the_flags(boards):
    import io
    import json

    import pandas as pd

    from leaderboard.web.downloads import dataset_downloads

    page = _page(boards["shallow"])
    files = dataset_downloads(page, "dl20")
    frame = pd.read_csv(io.StringIO(files["downloads/datasets/dl20.csv"])).set_index("model_id")
    parquet = pd.read_parquet(io.BytesIO(files["downloads/datasets/dl20.parquet"])).set_index("model_id")
    document = json.loads(files["downloads/datasets/dl20.json"])
    assert document["judgments"] == page.judgments
    for row in page.rows:
        for table in (frame, parquet):
            assert table.loc[row.model_id, "judged"] == pytest.approx(row.judged, abs=1e-6)
            assert table.loc[row.model_id, "hole_low"] <= table.loc[row.model_id, "nDCG@10"] + 1e-6
            assert bool(table.loc[row.model_id, "verdict_holds"]) == row.verdict_holds
            assert bool(table.loc[row.model_id, "best_set_holds"]) == row.best_holds
    assert not frame.loc["tas-b", "verdict_holds"] and frame.loc["bm25-rm3", "verdict_holds"]


def test_the_pull_request_summary_gives_judged_beside_the_score_and_the_flip_words(boards):
    from leaderboard.review.compare import FLIP, judged_note, judgments_lines

    dataset = boards["shallow"].dataset(dl20_board.DATASET)
    row = dataset.position["tas-b"]
    assert judged_note(dataset, row) == f" (Judged@10 0.32, holes up to {dataset.hole_high[row]:.4f})"
    lines = judgments_lines([dataset])
    assert lines[1].startswith(f"{FLIP}: the verdict") and lines[2].startswith(f"- {dl20_board.DATASET}: Judged@10")


def test_the_condensed_view_is_trec_eval_minus_j_and_the_page_carries_it(boards):
    """The verify stage's condensed values (nDCG'@10) are pytrec_eval's with judged_docs_only_flag; the dataset page
    gives their means in a column of their own, which its script hides until asked (data-hide)."""
    import numpy as np
    import pytrec_eval

    runs, _, shallow = dl20_board.runs_and_qrels(OFFICIAL)
    oracle = pytrec_eval.RelevanceEvaluator(shallow, {"ndcg_cut_10"}, relevance_level=2,
                                            judged_docs_only_flag=True).evaluate(runs["tas-b"])
    result = next(r for r in dl20_board.loaded_results(OFFICIAL, "shallow") if r.model.id == "tas-b")
    expected = [oracle[q]["ndcg_cut_10"] if q in oracle else 0.0 for q in result.query_ids]
    assert np.allclose(result.holes.condensed, expected, atol=1e-6)
    page = _page(boards["shallow"])
    assert page.condensed_name == "nDCG'@10"
    tas = next(row for row in page.rows if row.model_id == "tas-b")
    assert tas.condensed == pytest.approx(float(np.mean(expected)), abs=1e-6) and tas.condensed > tas.mean + 0.1
    html = make_environment().get_template("dataset.html").render(ctx=page)
    assert 'data-hide="cond"' in html and 'name="col" value="cond"' in html
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr[^>]*data-id="([^"]+)".*?</tr>', html, re.S)}
    assert _cells(rows["tas-b"])[-1] == f"{100 * tas.condensed:.2f}"
