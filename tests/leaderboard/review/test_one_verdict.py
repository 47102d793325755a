"""One verdict everywhere: for a pull request adding a real model (BM25 k1=1.5 on the repository's four datasets),
the summary `irboard compare` posts, the board the merge publishes (its dataset pages and compare page, in
Chromium), and `irboard.compare` over the same models give each pair the same corrected p-value, the same verdict
and the same interval; and the summary names the verdicts of other models the merge changes."""

import re
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

import irboard
from evaluator.result import slugify
from leaderboard.analysis import meta
from leaderboard.analysis.aggregate import unit_of
from leaderboard.analysis.verdicts import pvalue_text, shown_pvalue
from leaderboard.review.compare import comparison_markdown
from leaderboard.submissions.verify import Judgments
from leaderboard.web.build import build_site, make_server
from tests.conftest import SHARED

RESULTS = Path(__file__).resolve().parents[3] / "results"
MODELS = ("bm25", "bm25-k1-1.5-b-0.75", "sentence-transformers__all-minilm-l6-v2", "splade-tiny")
NEW = "bm25-k1-1.5-b-0.75"
DATASETS = ("beir/scifact", "classic/cacm", "classic/cisi", "classic/cranfield")
CELL = re.compile(r"([▲▼≈?]) ([+-]\d\.\d{4}) \[([+-]\d\.\d{4}), ([+-]\d\.\d{4})\] vs (\S+) \(p = ([^)]+)\)(?: ◊ could flip)?")


def _judgments() -> Judgments:
    return Judgments({}, SHARED / "data")


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    root = tmp_path_factory.mktemp("board") / "results"
    # the four models of the repository's own runs on ../shared's four datasets (not the published runs, on others)
    for model in MODELS:
        shutil.copytree(RESULTS / model, root / model)
    new = sorted((root / NEW).glob("*.json"))
    summary = comparison_markdown(new, root, judgments=_judgments())
    out = root.parent / "_site"
    build_site(root, out, strict=True, is_verified=_judgments())
    return root, summary, out


def _summary_cells(summary: str) -> dict[str, tuple]:
    """dataset -> (mark, diff, low, high, other, p text) of the new model against the baseline."""
    cells = {}
    for line in summary.splitlines():
        if line.startswith(f"| {NEW} |"):
            parts = [part.strip() for part in line.split(" | ")]
            cells[parts[1]] = CELL.fullmatch(parts[4]).groups()
    return cells


def _runs(root: Path, dataset: str) -> dict:
    names = sorted(path.name for path in root.iterdir() if (path / f"{slugify(dataset)}.json").exists())
    results = [irboard.read_result(root / name / f"{slugify(dataset)}.json") for name in names]
    return {result.model_id: {q: dict(ranking) for q, ranking in result.run.items()} for result in results}


def test_the_summary_and_the_api_give_each_pair_the_boards_numbers(board):
    root, summary, _ = board
    cells = _summary_cells(summary)
    assert sorted(cells) == list(DATASETS)
    for dataset in DATASETS:
        mark, diff, low, high, other, p_text = cells[dataset]
        assert other == "bm25"
        # the API over the dataset's models (the board's family) gives the same p, interval and verdict
        report = irboard.compare(_runs(root, dataset), SHARED / "data" / dataset / "qrels" / "test.tsv", "nDCG@10",
                                 baseline="bm25")
        row = report.to_dataframe().set_index("run").loc[NEW]
        assert pvalue_text(float(shown_pvalue(row["p_corrected"], 0.05)), 0.05) == p_text
        assert (f"{row['diff']:+.4f}", f"{row['diff_low']:+.4f}", f"{row['diff_high']:+.4f}") == (diff, low, high)
        assert mark == {"better": "▲", "worse": "▼", "equivalent": "≈", "undetermined": "?"}[row["verdict"]]
        assert (float(low) > 0 or float(high) < 0) == (mark in "▲▼")  # the interval tells the verdict's story
        assert "pairs of the" in report.family and "every pair of a dataset's models" in report.family
    assert "Change to other models' verdicts" in summary and "p-values move on" in summary


def test_the_dataset_pages_show_the_summarys_p_and_interval(board):
    _, summary, out = board
    for dataset, (_, _, low, high, _, p_text) in _summary_cells(summary).items():
        html = (out / "datasets" / f"{slugify(dataset)}.html").read_text()
        row = next(r for r in re.findall(r"<tr.*?</tr>", html, re.S) if f">{NEW}<" in r)
        assert f">{p_text}</td>" in row
        assert f"[{100 * float(low):.2f}, {100 * float(high):.2f}]" in row
        assert "Corrected p-values depend on the models on the board" in html


@pytest.mark.browser
def test_the_compare_page_agrees_with_the_summary_and_the_api(board, page):
    root, summary, out = board
    server = make_server(out, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/compare.html?a=bm25&b={NEW}")
        expect(page.locator("#compare-pooled")).to_be_visible()
        for dataset, (mark, _diff, low, high, _, p_text) in _summary_cells(summary).items():
            cells = page.locator(f'#compare-summary tr[data-dataset="{dataset}"] td').all_text_contents()
            assert cells[2] == p_text
            assert cells[3] == {"?": "undetermined", "▲": "better", "▼": "worse", "≈": "equivalent"}[mark]
            shown = [float(x) for x in re.findall(r"-?\d+\.\d+", cells[1])]
            # per-query values travel rounded to 4 decimals: the interval within a rounding step ×100
            assert shown == pytest.approx([100 * float(low), 100 * float(high)], abs=0.011)
        # the pooled row of all four datasets is the API's pooling
        per_dataset = {d: irboard.compare(_runs(root, d), SHARED / "data" / d / "qrels" / "test.tsv", "nDCG@10",
                                          baseline="bm25") for d in DATASETS}
        rows = [per_dataset[d].to_dataframe().set_index("run").loc[NEW] for d in DATASETS]
        scores = {d: irboard.evaluate(_runs(root, d)[NEW], SHARED / "data" / d / "qrels" / "test.tsv", "nDCG@10",
                                      per_query=True)["nDCG@10"].to_numpy()
                  - irboard.evaluate(_runs(root, d)["bm25"], SHARED / "data" / d / "qrels" / "test.tsv", "nDCG@10",
                                     per_query=True)["nDCG@10"].to_numpy() for d in DATASETS}
        y, v = meta.unit_differences([r["diff"] for r in rows],
                                     [scores[d].var(ddof=1) / scores[d].size for d in DATASETS],
                                     [unit_of(d) for d in DATASETS])
        fit = meta.pool(y, v)
        cells = page.locator('#compare-pooled tr[data-group="All datasets"] td').all_text_contents()
        assert cells[0] == "4" and float(cells[1]) == pytest.approx(100 * fit.mean, abs=0.011)
        # the pooled interval (the hull of the modified Hartung-Knapp and the unweighted t-interval) is meta's
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d+", cells[2])]
        assert numbers == pytest.approx([100 * fit.ci[0], 100 * fit.ci[1]], abs=0.02)
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d+", cells[4])]
        assert numbers == pytest.approx([100 * fit.prediction[0], 100 * fit.prediction[1]], abs=0.02)
        assert float(cells[5].rstrip("%")) == pytest.approx(100 * fit.p_beats, abs=1.0)
        api = irboard.compare({name: {d: _runs(root, d)[name] for d in DATASETS} for name in ("bm25", NEW)},
                              {d: SHARED / "data" / d / "qrels" / "test.tsv" for d in DATASETS}, "nDCG@10",
                              baseline="bm25").pooled_dataframe().iloc[0]
        assert api["pooled"] == pytest.approx(fit.mean) and api["prediction_low"] == pytest.approx(fit.prediction[0])
        # the pooled equivalence verdict: the API over the group's ranked models (the same family: 6 pairs) gives
        # the page's interval and verdict, meta.mean_interval at alpha / 6
        # the group's models: those with a result on every dataset of it (a published run on SciFact alone is not)
        names = sorted(set.intersection(*(set(_runs(root, d)) for d in DATASETS)))
        assert len(names) == 4 and NEW in names
        group_api = irboard.compare({name: {d: _runs(root, d)[name] for d in DATASETS} for name in names},
                                    {d: SHARED / "data" / d / "qrels" / "test.tsv" for d in DATASETS}, "nDCG@10",
                                    baseline="bm25").pooled_dataframe().set_index("run").loc[NEW]
        low, high, equivalent = meta.equivalence(fit, 0.05, 6, 0.01)
        assert (group_api["equivalence_low"], group_api["equivalence_high"]) == pytest.approx((low, high))
        assert group_api["equivalent"] == equivalent
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d+", cells[6])]
        assert numbers == pytest.approx([100 * low, 100 * high], abs=0.02)
        # four units are fewer than pooled equivalence needs: withheld, on the page and in the API alike
        assert not equivalent and group_api["equivalence_note"] == meta.equivalence_withheld(4)
        assert cells[7] == f"withheld: 4 units, fewer than {meta.MIN_EQUIVALENCE_UNITS}"
        # the forest plot draws that interval beside the others
        forest = page.locator(".compare-forest[open]")
        expect(forest.locator(".ytick text", has_text="pooled (equivalence interval")).to_have_count(1)
        group = page.locator('#compare-summary tr[data-group="All datasets"] td').all_text_contents()
        assert group[2] != "not ranked" and group[3] in ("better", "worse", "equivalent", "undetermined")
        assert np.isfinite(float(group[0]))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
