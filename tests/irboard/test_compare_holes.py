"""irboard.compare's judgment columns on the real case: nine published TREC DL 2020 passage runs against the official
judgments and against the judgments a shallow pool (BM25 and BM25+RM3, top 10) would have made. The plain test
turns the neural runs' verdicts round on the shallow pool; every one of those verdicts must be flagged, and none
with the official judgments."""

import numpy as np
import pytest

import irboard
from evaluator.trec import read_qrels, read_run
from tests.conftest import OFFICIAL, ROOT

RUNS = ROOT / "tests" / "data" / "runs"
NAMES = ("bm25", "bm25-rm3", "tas-b", "ada-002", "splade-pp-ed", "repllama", "bm25-rankgpt-gpt-3.5",
         "bm25-rankvicuna-7b", "bm25-rankvicuna-7b-aug")
NEURAL = NAMES[2:]
FIRST_STAGE = NAMES[2:6]  # the dense and learned sparse runs, which share least with BM25's top 10


def _top(ranking: dict[str, float], k: int) -> list[str]:
    """trec_eval's order: score descending, ties by doc id descending."""
    return sorted(ranking, key=lambda d: (ranking[d], d), reverse=True)[:k]


@pytest.fixture(scope="module")
def dl20():
    runs = {name: read_run(RUNS / f"dl20-{name}.trec.xz") for name in NAMES}
    qrels = read_qrels(OFFICIAL / "qrels" / "qrels.dl20-passage.txt").to_dict()
    pool: dict[str, set[str]] = {}
    for name in ("bm25", "bm25-rm3"):
        for query, ranking in runs[name].items():
            pool.setdefault(query, set()).update(_top(ranking, 10))
    shallow = {q: {d: g for d, g in judged.items() if d in pool.get(q, ())} for q, judged in qrels.items()}
    frames = {label: irboard.compare(runs, judgments, "nDCG@10", baseline="bm25", relevance_level=2).to_dataframe()
              .set_index("run") for label, judgments in (("official", qrels), ("shallow", shallow))}
    return runs, qrels, shallow, frames


def test_with_the_official_judgments_every_neural_run_is_better_and_the_verdicts_hold_over_the_holes(dl20):
    runs, qrels, _, frames = dl20
    frame = frames["official"]
    assert (frame.loc[list(NEURAL), "verdict"] == "better").all()
    assert frame.loc[list(NAMES[1:]), "robust_verdict"].all()
    assert frame.loc[list(NAMES), "judged"].between(0.93, 1.0).all()


def test_on_a_shallow_pool_the_reversed_verdicts_are_flagged_as_could_flip(dl20):
    _, _, _, frames = dl20
    frame = frames["shallow"]
    assert (frame.loc[list(FIRST_STAGE), "verdict"] == "worse").all()
    assert frame.loc["bm25", "best_set"]  # the plain test puts BM25 among who could be #1
    assert not frame.loc[list(NEURAL), "robust_verdict"].any()
    assert not frame.loc[list(NEURAL), "robust"].any() and not frame.loc["bm25", "robust_best"]
    assert frame.loc[list(FIRST_STAGE), "judged"].between(0.32, 0.375).all()


def test_judged_is_the_share_of_the_top_ten_in_the_judgments_and_the_bounds_hold_the_mean(dl20):
    runs, _, shallow, frames = dl20
    frame = frames["shallow"]
    for name in ("tas-b", "bm25"):
        shares = [sum(d in shallow[q] for d in _top(runs[name].get(q, {}), 10)) / max(min(10, len(runs[name].get(q, {}))), 1)
                  if runs[name].get(q) else 0.0 for q in shallow]
        assert frame.loc[name, "judged"] == pytest.approx(np.mean(shares), abs=1e-12)
    assert (frame["hole_low"] <= frame["mean"] + 1e-12).all() and (frame["mean"] <= frame["hole_high"]).all()
    # most of a dense run's top 10 is unjudged there: its nDCG@10 could be far higher
    assert frame.loc["tas-b", "hole_high"] - frame.loc["tas-b", "mean"] > 0.3


def test_fully_judged_runs_have_no_hole_and_every_verdict_holds():
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"a": 0, "b": 1, "c": 1}, "q3": {"a": 2, "b": 1, "c": 0}}
    runs = {"x": {q: {"a": 3, "b": 2, "c": 1} for q in qrels}, "y": {q: {"c": 3, "b": 2, "a": 1} for q in qrels}}
    frame = irboard.compare(runs, qrels, "nDCG@3").to_dataframe()
    assert (frame["judged"] == 1.0).all()
    assert np.allclose(frame["hole_low"], frame["mean"]) and np.allclose(frame["hole_high"], frame["mean"])
    assert frame["robust"].all()
