"""The machine judgment set of SciFact (evaluator/judges/, docs/datasets.md "A machine set: SciFact"): the threshold
rule by its formula, the maker on a small real slice (the same bytes twice; the judge's scores are the MiniLM
result's own stored scores; every hole graded by the rule), and the committed set: its rule's sha256 is the
declared prompt's, it keeps every official judgment, judges every pooled document, and passes `irboard validate`."""

import json

import pytest

from evaluator.datasets.judgment_sets import find_set, judgment_set_problems, load_qrels
from evaluator.judges.embedding import (
    SCALE,
    Judge,
    build,
    grade,
    rule_text,
    threshold,
    to_units,
)
from evaluator.judges.pool import make_pool, top
from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.cli import main
from tests.conftest import OFFICIAL, ROOT, SCIFACT, SHARED

DATASET = "beir/scifact"
DECLARED = ROOT / "judgments" / "beir__scifact" / "minilm-cosine-pool10.json"
OFFICIAL_QRELS = OFFICIAL / "qrels" / "qrels.beir-v1.0.0-scifact.test.txt"
MINILM = ROOT / "results" / "sentence-transformers__all-minilm-l6-v2" / "beir__scifact.json"


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("IRBOARD_MIRROR", str(OFFICIAL))
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("IRBOARD_JUDGMENTS", str(ROOT / "judgments"))


def test_the_threshold_is_the_ceil_share_n_th_highest_positive():
    scores = [5000, 9000, 7000, 6000, 8000]
    assert threshold(scores, 0.8) == 6000  # ceil(0.8 * 5) = 4th highest
    assert threshold(scores, 0.5) == 7000  # ceil(2.5) = 3rd
    assert threshold(scores, 0.21) == 8000 and threshold(scores, 0.2) == 9000 and threshold(scores, 1.0) == 5000
    for share in (0.2, 0.5, 0.8, 1.0):
        cut = threshold(scores, share)
        assert sum(grade(s, cut) for s in scores) / len(scores) >= share  # the rule's promise
        assert sum(s > cut for s in scores) / len(scores) < share  # and the largest such threshold
    assert (grade(6000, 6000), grade(5999, 6000)) == (1, 0)
    assert (to_units(0.46244), to_units(0.46236), to_units(-0.1)) == (4624, 4624, -1000)
    with pytest.raises(Exception, match="no official positive"):
        threshold([], 0.8)


@pytest.fixture(scope="module")
def sliced():
    """The maker on the first 2 queries of the pool, twice with one judge."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRBOARD_MIRROR", str(OFFICIAL))
        official = read_qrels(OFFICIAL_QRELS).to_dict()
        queries = set(sorted(official, key=str.encode)[:2])
        judge = Judge()
        return [build(DATASET, SCIFACT, ROOT / "results", query_ids=queries, judge=judge) for _ in range(2)]


def test_the_maker_gives_the_same_bytes_twice(sliced):
    first, second = sliced
    assert first.text == second.text and first.sha256 == second.sha256 and first.rule == second.rule
    assert len(first.pool.holes) > 10 and set(first.qrels) == {q for q, _ in first.pool.holes}


def test_every_hole_is_graded_by_the_stated_rule(sliced):
    made = sliced[0]
    assert made.threshold == threshold(made.positive_scores, 0.8)
    assert f"grade: 1 when the score is at least {made.threshold / SCALE:.4f}, else 0." in made.rule
    official = read_qrels(OFFICIAL_QRELS).to_dict()
    for (q, d), score in made.hole_scores.items():
        assert d not in official[q] and made.qrels[q][d] == int(score >= made.threshold)
    for q in made.qrels:
        assert all(made.qrels[q][d] == g for d, g in official[q].items())  # official kept as is


def test_the_judge_scores_are_the_minilm_results_own(sliced):
    """The self-preference in one line: the judge's cosine is the judged MiniLM run's stored score."""
    made = sliced[0]
    stored = {(q, d): s for q, ranking in read_result(MINILM).rankings().items() for d, s in ranking}
    shared = [(pair, score) for pair, score in made.hole_scores.items() if pair in stored]
    assert len(shared) >= 10
    assert all(abs(score - stored[pair] * SCALE) <= 1.01 for pair, score in shared)


def test_the_committed_set_is_the_rule_applied_to_the_board(env):
    declared = json.loads(DECLARED.read_text())
    found = find_set(DATASET, declared["name"])
    assert judgment_set_problems() == [] and found.kind == "machine"
    qrels = load_qrels(found).to_dict()
    official = read_qrels(OFFICIAL_QRELS).to_dict()
    pool = make_pool(ROOT / "results", DATASET, official, 10)
    assert all(qrels[q][d] == g for q in official for d, g in official[q].items())
    assert sum(map(len, qrels.values())) == sum(map(len, official.values())) + len(pool.holes)
    assert {g for q, d in pool.holes for g in [qrels[q][d]]} == {0, 1}
    for path in sorted((ROOT / "results").glob("*/beir__scifact.json")):  # Judged@10 = 1 for every result
        assert all(d in qrels[q] for q, ranking in read_result(path).rankings().items() for d in top(ranking, 10))
    cut = round(float(declared["description"].split("cosine at least ")[1][:6]) * SCALE)
    positives = sum(official[q][d] > 0 for q, d in pool.judged)
    rule = rule_text(DATASET, 10, 0.8, cut, positives)
    import hashlib

    assert hashlib.sha256(rule.encode()).hexdigest() == declared["judge"]["prompt_sha256"]


def test_validate_passes_with_the_set(env, capsys):
    files = [str(p) for p in sorted((ROOT / "results").glob("*/beir__scifact.json"))]
    assert main(["validate", *files, "--data-dir", str(SHARED / "data")]) == 0
