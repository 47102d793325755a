"""Deep metrics checked against everything in the file (issue 33 item 2): below the stored depth a result keeps only
its judged documents' ranks and scores and each ranking's length (`run.below`), and the score samples the same file
carries must agree with them (`leaderboard/submissions/deep_checks.py`); where no sample can check them, the deep
metrics rest on claimed ranks instead of being verified. The file is a fresh, real BM25 run on SciFact to depth
1,000; each forgery is re-scored as a forger would (benchmarks/deep_attacks.py), so only the checks can refuse it."""

import numpy as np
import pytest

from benchmarks.deep_attacks import claim_missed, rescored, shorten, without_samples
from evaluator.result import read_result, result_path, write_result
from evaluator.trec import read_qrels
from leaderboard.cli import main
from leaderboard.submissions.verify import verify_result
from tests.conftest import SCIFACT

DEEP = ("R@1000", "AP", "nDCG@1000", "Judged@1000")


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    """(the result, its qrels, the results folder it lies in): BM25 on SciFact, its deep metrics beside nDCG@10."""
    root = tmp_path_factory.mktemp("deep") / "results"
    assert main(["evaluate", "--model", "bm25", "--dataset", "beir/scifact", "--data-dir", str(SCIFACT),
                 "--metrics", "nDCG@10,R@100," + ",".join(DEEP), "--results-dir", str(root), "--quiet",
                 "--stored-depth", "100"]) == 0
    path = result_path("bm25", "beir/scifact", root)
    result = read_result(path)
    assert result.run.below is not None and int((result.run.below.totals > result.run.lengths).sum()) > 250
    return result, read_qrels(SCIFACT / "qrels" / "test.tsv"), root


def _write(root, result):
    path = result_path(result.model.id, result.dataset.id, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(result, path)
    return path


def test_an_honest_deep_file_verifies(honest, capsys):
    result, qrels, root = honest
    outcome = verify_result(result, qrels)
    assert outcome.problems == () and outcome.claimed == frozenset() and outcome.complete
    assert set(DEEP) <= outcome.verified
    assert main(["validate", str(result_path("bm25", "beir/scifact", root))]) == 0
    assert "1 result file(s) valid, 1 verified" in capsys.readouterr().out


@pytest.mark.parametrize(("scores", "expected"), [
    ("naive", "is claimed below the stored depth with a score that is none of the relevant scores"),
    ("sample", "sampled non-relevant scores lie above the score claimed at rank"),
    ("consistent", "is claimed below the stored depth with a score that is none of the relevant scores"),
])
def test_claiming_missed_relevant_documents_below_the_depth_is_refused(honest, tmp_path, capsys, scores, expected):
    """Every relevant document the run never retrieved, claimed at ranks 101 and beyond (R@1000 to 1.000): with made-
    up scores, with the documents' own scores from the sample (their sampled non-relevant counts put them far
    deeper), or with scores placed where the ranks would put them (none of the sample's relevant scores). One line
    naming the file, exit 1."""
    result, qrels, _ = honest
    forged = rescored(claim_missed(result, qrels, scores), qrels)
    assert forged.metrics["R@1000"] == pytest.approx(1.0) and result.metrics["R@1000"] < 0.98
    problems = verify_result(forged, qrels).problems
    assert len(problems) == 1 and expected in problems[0], problems
    path = _write(tmp_path / "results", forged)
    assert main(["validate", str(path)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if str(path) in line]
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in lines[0]


@pytest.mark.parametrize("fraction", [None, 0.5], ids=["to the deepest judged rank", "halved"])
def test_shortened_ranking_lengths_are_refused(honest, fraction):
    """Claiming shorter rankings raises Judged@1000 (judged documents over min(1000, length)); the sample says how
    many documents score above its lowest score, which a ranking shorter than top_k must hold."""
    result, qrels, _ = honest
    forged = rescored(shorten(result, qrels, fraction), qrels)
    assert forged.metrics["Judged@1000"] > result.metrics["Judged@1000"]
    problems = verify_result(forged, qrels).problems
    assert len(problems) == 1 and "totals says the ranking holds" in problems[0] and "fewer than settings.top_k" \
        in problems[0], problems


def test_a_length_beyond_top_k_is_refused(honest):
    from dataclasses import replace

    from evaluator.below import Below

    result, qrels, _ = honest
    below = result.run.below
    totals = below.totals.copy()
    totals[np.argmax(totals)] = result.settings.top_k + 5
    longer = replace(result, run=replace(result.run, below=Below(totals, below.counts, below.ranks, below.doc_ids,
                                                                 below.scores)))
    problems = verify_result(rescored(longer, qrels), qrels).problems
    assert len(problems) == 1 and "longer than settings.top_k 1000" in problems[0]


def test_claims_no_sample_checks_rest_on_claimed_ranks(honest, tmp_path, capsys):
    """Without score samples nothing checks the ranks below the depth: the deep metrics are re-scored but rest on
    claimed ranks (never verified, never ranked on), the others stay verified and ranked (issue 44: trust per
    metric), validate says which in evaluator.trust's words, the file is not verified on every metric, and a page
    marks such a value † instead of *. The forged R@1000 is never ranked on: not where it is a dataset's main
    metric either."""
    from dataclasses import replace

    from evaluator.trust import CLAIMED, tier_sentence
    from leaderboard.analysis.aggregate import build_leaderboard
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.submissions.load import read_loaded
    from leaderboard.submissions.verify import Judgments
    from leaderboard.web.contexts import CLAIMED_RANKS, value_check
    from leaderboard.web.render import CLAIMED_MARK, score_cells

    result, qrels, _ = honest
    forged = rescored(without_samples(claim_missed(result, qrels, "naive"), qrels), qrels)
    outcome = verify_result(forged, qrels)
    assert outcome.problems == () and outcome.claimed == set(DEEP) and not outcome.complete
    assert outcome.verified == {"nDCG@10", "R@100"}
    path = _write(tmp_path / "results", forged)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: trust: {tier_sentence(CLAIMED, sorted(DEEP))}" in out
    assert "1 result file(s) not re-scored on every metric but ranked on their dataset's main metric" in out
    assert "1 result file(s) valid, 0 verified by re-scoring every metric" in out
    loaded = read_loaded(path, is_verified=Judgments())
    assert not loaded.verified and loaded.claimed_metrics == set(DEEP)
    assert loaded.ranked_on("nDCG@10") and not loaded.ranked_on("R@1000") and loaded.tier_of("R@1000") == CLAIMED
    for metric, ranked in [("nDCG@10", True), ("R@1000", False)]:
        info = replace(dataset_info("beir/scifact"), main_metric=metric)
        board = build_leaderboard([loaded], lookup=lambda _, info=info: info).datasets[0]
        assert bool(board.ranked[0]) is ranked and bool(board.best_set[0]) is ranked
        assert bool((board.rank_range[0] > 0).all()) is ranked
    checks = [value_check(loaded, name) for name in ("nDCG@10", "R@1000")]
    assert checks == [True, CLAIMED_RANKS] and not checks[1]
    cells = str(score_cells([0.5, 0.9], [100.0, 100.0], checks, "*"))
    assert cells.count(str(CLAIMED_MARK)) == 1 and "*" not in cells and "rests on claimed ranks" in cells


def test_a_forgery_of_the_samples_too_is_what_the_checks_cannot_see(honest):
    """The limit the method page states: a forger who rewrites the samples' relevant scores below the cut together
    with the claimed ranks leaves nothing in the file to contradict; only running the model again would."""
    result, qrels, _ = honest
    forged = rescored(claim_missed(result, qrels, "consistent", rewrite_samples=True), qrels)
    assert forged.metrics["R@1000"] == pytest.approx(1.0)
    assert verify_result(forged, qrels).problems == ()


def test_the_build_publishes_nothing_from_a_forged_deep_file(honest, tmp_path, capsys):
    """`irboard build --strict` over a folder holding the forged file: one line naming it, exit 1, no site."""
    result, qrels, _ = honest
    path = _write(tmp_path / "results", rescored(claim_missed(result, qrels, "sample"), qrels))
    assert main(["build", "--strict", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "_site")]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if str(path) in line]
    assert len(lines) == 1 and "sampled non-relevant scores lie above the score claimed at rank" in lines[0]
    assert not (tmp_path / "_site").exists()


@pytest.mark.parametrize("samples", [True, False], ids=["with samples", "without"])
def test_what_evaluate_announces_is_what_re_scoring_gives(honest, samples):
    """`evaluator.trust.planned_tiers` (what `irboard evaluate` prints before validating) equals the tiers of
    `verify_result`'s outcome, with the score samples (every metric re-scored) and without (the deep ones claimed)."""
    from evaluator.trust import CLAIMED, RESCORED, planned_tiers, tier_lines, tiers_of

    result, qrels, _ = honest
    result = result if samples else rescored(without_samples(result, qrels), qrels)
    outcome = verify_result(result, qrels)
    assert planned_tiers(result) == tiers_of(result.metrics, outcome.verified, outcome.claimed)
    assert {name for name, tier in planned_tiers(result).items() if tier == CLAIMED} == (set() if samples else set(DEEP))
    lines = tier_lines(planned_tiers(result))
    assert lines[0].startswith("nDCG@10, " if samples else "nDCG@10, R@100 re-scored")  # nDCG first, highest tier first
    assert len(lines) == (1 if samples else 2) and tier_lines(planned_tiers(result), below=RESCORED) == lines[1:]
