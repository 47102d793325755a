"""Trust per metric with real published runs (issue 44): Pyserini's BM25 and SPLADEv2 runs on BEIR Touché-2020
(depth 1,000, tests/data/runs), evaluated with the defaults against the official judgments.

A result is ranked on every metric that was re-scored: both are ranked on nDCG@10 on the dataset page whatever
R@1000 rests on. Whether R@1000 is re-scored or rests on claimed ranks depends on how much of the ranking the file
keeps, so the † tests force the claims case: the same rankings kept as a file keeps a run beyond its size cap (the
top 100, and below it only the judged documents' ranks, with no score samples to check them). Then R@1000 alone
carries † on the page, in the downloads, in `irboard.compare` and in the pull request's summary, and evaluate,
validate, build and the summary say it in the same sentence (evaluator/trust.py)."""

import contextlib
import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

import irboard
from evaluator.below import Below
from evaluator.datasets.official import official_qrels
from evaluator.result import Run, expand_result, parse_result, read_result, result_path, write_result
from evaluator.trust import CLAIMED, RESCORED, planned_tiers, tier_lines, tier_sentence
from leaderboard.cli import main
from leaderboard.submissions.verify import verify_result
from tests.conftest import ROOT

RUNS = ROOT / "tests" / "data" / "runs"
DATASET = "beir/webis-touche2020"
MODELS = {"pyserini/bm25-multifield": "touche2020-bm25-multifield.trec.xz",
          "castorini/splade-v2": "touche2020-splade-v2.trec.xz"}
DEPTH = 100  # what a file keeps whole when its run is too deep to keep whole


def _run(*args) -> tuple[int, str]:
    """`irboard ARGS` in this process: (exit code, standard output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([str(arg) for arg in args])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """(results folder, {model id: what evaluate printed}): both runs evaluated with the defaults."""
    root = tmp_path_factory.mktemp("touche") / "results"
    printed = {}
    for model_id, name in MODELS.items():
        code, out = _run("evaluate", "--run", RUNS / name, "--model-id", model_id, "--dataset-id", DATASET,
                         "--results-dir", root)
        assert code == 0
        printed[model_id] = out
    return root, printed


def as_claims(result, qrels):
    """The same rankings as a file keeps them beyond its size cap: the top DEPTH, and below it each ranking's length
    and its judged documents' ranks and scores, without score samples (as a run evaluated from a file has none)."""
    run = result.run
    judged = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    if run.below is None:  # the whole ranking is stored: keep what a file beyond the cap keeps of it
        rankings = {q: run.ranking(row) for row, q in enumerate(result.query_ids)}
        entries = [[(rank, doc, score) for rank, (doc, score) in enumerate(rankings[q], 1)
                    if rank > DEPTH and doc in judged.get(q, {})] for q in result.query_ids]
        top = Run.from_rankings(result.query_ids, rankings, DEPTH)
        below = Below.from_entries([len(rankings[q]) for q in result.query_ids], entries)
        run = Run(DEPTH, top.doc_ids, top.lengths, top.docs, top.scores, below)
    return parse_result(expand_result(replace(result, run=run, score_samples=None)))


@pytest.fixture(scope="module")
def claimed(evaluated, tmp_path_factory):
    """A results folder with both results in the claims form (the values unchanged: the claims are honest)."""
    root = tmp_path_factory.mktemp("claims") / "results"
    qrels = official_qrels(DATASET)
    for model_id in MODELS:
        result = as_claims(read_result(result_path(model_id, DATASET, evaluated[0])), qrels)
        assert verify_result(result, qrels).claimed == {"R@1000"}
        path = result_path(model_id, DATASET, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_result(result, path)
    return root


def test_evaluate_says_each_metrics_tier_before_validate_and_both_rank_on_ndcg10(evaluated, tmp_path):
    """With the defaults (R@1000 among them): evaluate prints each metric's tier as validate will find it, validate
    says the same of what is short of re-scored, and the dataset page ranks both runs on nDCG@10."""
    root, printed = evaluated
    code, validated = _run("validate", "--results", root)
    assert code == 0
    for model_id in MODELS:
        path = result_path(model_id, DATASET, root)
        tiers = planned_tiers(read_result(path))
        assert tiers["nDCG@10"] == RESCORED and tiers["R@1000"] in (RESCORED, CLAIMED)
        for line in tier_lines(tiers):
            assert f"irboard: trust: {line}" in printed[model_id]
        for line in tier_lines(tiers, below=RESCORED):
            assert f"{path}: trust: {line}" in validated
    assert _run("build", "--results", root, "--out", tmp_path / "site")[0] == 0
    table = json.loads((tmp_path / "site" / "downloads" / "datasets" / "beir__webis-touche2020.json").read_text())
    ranks = {row["model_id"]: (row["rank_best"], row["verified"], row["trust"]) for row in table["rows"]}
    assert ranks == {"pyserini/bm25-multifield": (1, True, RESCORED), "castorini/splade-v2": (2, True, RESCORED)}


def test_r1000_resting_on_claims_carries_the_mark_alone(claimed, tmp_path):
    """The claims case: both ranked on nDCG@10 (BM25 first, significantly), R@1000 marked † in every row and
    nothing else marked; the downloads name R@1000 alone in `claimed`."""
    assert _run("build", "--results", claimed, "--out", tmp_path / "site")[0] == 0
    page = (tmp_path / "site" / "datasets" / "beir__webis-touche2020.html").read_text()
    assert '<tbody class="unranked">' not in page
    for model_id in MODELS:
        row = page[page.index(f'data-id="{model_id}"'):]
        row = row[:row.index("</tr>")]
        assert row.count("(rests on claimed ranks)") == 1 and "(not re-scored)" not in row
        cells = row.split('<td class="num">')
        columns = [c.split("</td>")[0] for c in cells]
        marked = [c for c in columns if "(rests on claimed ranks)" in c]
        stored = read_result(result_path(model_id, DATASET, claimed)).metrics["R@1000"]
        assert len(marked) == 1 and marked[0].startswith(f"{100 * stored:.2f}<span")
    with open(tmp_path / "site" / "downloads" / "datasets" / "beir__webis-touche2020.csv", newline="") as handle:
        rows = {row["model_id"]: row for row in csv.DictReader(handle)}
    table = json.loads((tmp_path / "site" / "downloads" / "datasets" / "beir__webis-touche2020.json").read_text())
    for row in [*rows.values(), *table["rows"]]:
        assert (row["claimed"], row["unverified"]) == ("R@1000", "")
        assert str(row["verified"]) == "True" and row["trust"] == RESCORED
    assert [rows[m]["rank_best"] for m in MODELS] == ["1", "2"]
    model = json.loads((tmp_path / "site" / "downloads" / "models" / "pyserini__bm25-multifield.json").read_text())
    assert model["rows"][0]["claimed"] == "R@1000" and model["rows"][0]["rank_best"] == 1


def test_the_four_outputs_say_it_in_one_sentence(claimed):
    """evaluate (what it prints of a result, before anything is validated), validate, build and the pull request's
    summary: the same sentence for R@1000 of the same file."""
    from evaluator.cli import say_trust
    from leaderboard.review.compare import comparison_markdown
    from leaderboard.submissions.verify import Judgments

    sentence = tier_sentence(CLAIMED, ["R@1000"])
    assert "rests on claimed ranks" in sentence and "†" in sentence and "irboard evaluate --model" in sentence
    path = result_path("pyserini/bm25-multifield", DATASET, claimed)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        say_trust(read_result(path))
    _, validated = _run("validate", path)
    _, built = _run("build", "--results", claimed, "--out", claimed.parent / "site")
    summary = comparison_markdown([path], claimed, judgments=Judgments())
    assert f"irboard: trust: {sentence}" in said.getvalue().splitlines()
    assert f"{path}: trust: {sentence}" in validated.splitlines()
    assert f"{path}: trust: {sentence}" in built.splitlines()
    assert f"- pyserini/bm25-multifield on {DATASET}: trust: {sentence}" in summary.splitlines()
    # the summary ranks it: #1 with a re-scored nDCG@10, whatever R@1000 rests on
    row = next(line for line in summary.splitlines() if line.startswith("| pyserini/bm25-multifield"))
    assert "★ yes" in row and "not ranked" not in row


def test_compare_marks_the_metric_resting_on_claims(claimed):
    """`irboard.compare` over the two result files: R@1000 rests on claimed ranks, nDCG@10 is re-scored; a metric
    their stored rankings do not determine, or other judgments, are refused in one sentence."""
    qrels = official_qrels(DATASET)
    runs = {m: irboard.read_result(result_path(m, DATASET, claimed)) for m in MODELS}
    frame = irboard.compare(runs, qrels, "nDCG@10,R@1000").to_dataframe()
    trust = {(row.run, row.metric): row.trust for row in frame.itertuples()}
    assert trust == {(m, "nDCG@10"): RESCORED for m in MODELS} | {(m, "R@1000"): CLAIMED for m in MODELS}
    stored = {m: r.metrics for m, r in runs.items()}
    for row in frame.itertuples():  # the stored values, from the stored rankings
        assert row.mean == pytest.approx(stored[row.run][row.metric], abs=1e-9)
    cut = {m: replace(r, file=replace(r.file, run=replace(r.file.run, below=None))) for m, r in runs.items()}
    with pytest.raises(irboard.errors.InputFormatError, match="does not determine R@1000"):
        irboard.compare(cut, qrels, "nDCG@10,R@1000")
    other = {q: dict(judged) for q, judged in zip(qrels.query_ids, qrels.judgments, strict=True)}
    other[qrels.query_ids[0]] = {"made-up": 1}
    with pytest.raises(irboard.errors.InputFormatError, match="other judgments"):
        irboard.compare(runs, other, "nDCG@10")


def test_a_plain_run_has_no_tier(claimed):
    qrels = official_qrels(DATASET)
    frame = irboard.compare({m: str(RUNS / name) for m, name in MODELS.items()}, qrels, "R@1000").to_dataframe()
    assert frame["trust"].isna().all()
    # the whole runs give the values their stored claims re-score to
    stored = {m: read_result(result_path(m, DATASET, claimed)).metrics["R@1000"] for m in MODELS}
    assert dict(zip(frame["run"], frame["mean"], strict=True)) == pytest.approx(stored, abs=1e-9)


def test_a_forged_deep_claim_is_never_ranked_on_the_metric_it_forges(claimed, tmp_path):
    """Claiming the missed relevant documents below the depth (raising R@1000) with no samples to contradict it: the
    file validates, R@1000 rests on claimed ranks, and a board whose main metric is R@1000 does not rank it."""
    from benchmarks.deep_attacks import _query_parts, rescored
    from leaderboard.analysis.aggregate import build_leaderboard
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.submissions.load import read_loaded
    from leaderboard.submissions.verify import Judgments

    qrels = official_qrels(DATASET)
    honest = read_result(result_path("castorini/splade-v2", DATASET, claimed))
    run, entries = honest.run, []
    for row in range(len(honest.query_ids)):  # each missed relevant document claimed after the last judged one, as ranked
        ranked, last, claims, relevant = _query_parts(honest, qrels, row)
        claims, held = list(claims), set(ranked) | {doc for _, doc, _ in claims}
        rank, score = claims[-1][0] if claims else run.depth, claims[-1][2] if claims else last
        for doc in sorted(d for d in relevant if d not in held)[:max(0, int(run.below.totals[row]) - rank)]:
            rank, score = rank + 1, score - 1e-3 * max(abs(score), 1.0)
            claims.append((rank, doc, score))
        entries.append(claims)
    below = Below.from_entries(run.below.totals.tolist(), entries)
    forged = rescored(replace(honest, run=replace(run, below=below)), qrels)
    assert forged.metrics["R@1000"] > honest.metrics["R@1000"] + 0.05
    path = result_path("castorini/splade-v2", DATASET, tmp_path / "results")
    path.parent.mkdir(parents=True)
    write_result(forged, path)
    loaded = read_loaded(Path(path), is_verified=Judgments())
    assert loaded.tier_of("R@1000") == CLAIMED and not loaded.ranked_on("R@1000")
    info = replace(dataset_info(DATASET), main_metric="R@1000")
    board = build_leaderboard([loaded], lookup=lambda _: info).datasets[0]
    assert not board.ranked.any() and not board.best_set.any() and not board.rank_range.any()
