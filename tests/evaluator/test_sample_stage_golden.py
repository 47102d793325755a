"""The stored score samples equal, column for column, those the sampling stage wrote before it worked a block of
queries at a time (tests/data/golden/sample-stage.json, written by commit 7811814's code with
`python -m tests.evaluator.test_sample_stage_golden`).

The cases cover each way numpy draws a query's sample (Floyd's algorithm below 10,000 non-relevant documents and
for small samples of large corpora; a shuffled tail above 10,000 when the sample is over a fiftieth of them), a
corpus no larger than the sample (every non-relevant document), queries without judgments, with several relevant
documents and with relevant documents the corpus lacks, and the budget fit lowering the cap (a seeded subsample)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from evaluator import pipeline
from evaluator.index.sparse import SparseIndex
from evaluator.score_samples import encode_score_samples, fit_to_budget

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "sample-stage.json"
CASES = {"floyd-small": 5_000, "tail-shuffle": 20_000, "floyd-large": 150_000, "whole-corpus": 1_500}
NUM_QUERIES, VOCABULARY = 40, 60


def _case(num_docs: int):
    """A seeded BM25-like index (Zipf-ish term frequencies), queries of 1-6 terms, and judgments."""
    rng = np.random.default_rng(num_docs)
    terms_per_doc = 4
    rows = np.repeat(np.arange(num_docs), terms_per_doc)
    p = 1.0 / np.arange(1, VOCABULARY + 1)
    cols = rng.choice(VOCABULARY, size=rows.size, p=p / p.sum())
    weights = rng.random(rows.size).astype(np.float32) + np.float32(0.01)
    documents = sp.csr_matrix((weights, (rows, cols)), shape=(num_docs, VOCABULARY), dtype=np.float32)
    lengths = rng.integers(1, 7, NUM_QUERIES)
    q_rows = np.repeat(np.arange(NUM_QUERIES), lengths)
    q_cols = rng.integers(0, VOCABULARY, q_rows.size)
    queries = sp.csr_matrix((np.ones(q_rows.size, np.float32), (q_rows, q_cols)), shape=(NUM_QUERIES, VOCABULARY))
    doc_ids = [f"d{i}" for i in range(num_docs)]
    qrels = {}
    for q in range(NUM_QUERIES):
        if q % 10 == 9:
            continue  # no judgments: every document is non-relevant
        picked = rng.choice(num_docs, size=1 + q % 4, replace=False)
        labels = {f"d{d}": int(rng.integers(0, 3)) for d in picked}
        if q % 7 == 3:
            labels["missing-doc"] = 1  # judged relevant, not in the corpus
        qrels[f"q{q}"] = labels
    return SparseIndex.from_documents(documents), queries, [f"q{q}" for q in range(NUM_QUERIES)], doc_ids, qrels


def _stored(num_docs: int) -> dict:
    index, queries, query_ids, doc_ids, qrels = _case(num_docs)
    positions = {d: i for i, d in enumerate(doc_ids)}
    samples = pipeline.collect_samples(index, queries, query_ids, positions, qrels, block=16)
    order = sorted(query_ids)
    return {"fitted": encode_score_samples(samples, order),
            "budget-120": encode_score_samples(fit_to_budget(samples, order, bytes_per_query=120), order)}


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", CASES)
def test_stored_samples_equal_those_of_the_per_query_stage(case, golden):
    got = _stored(CASES[case])
    for variant in ("fitted", "budget-120"):
        assert got[variant] == golden[case][variant], (case, variant)
    assert got["budget-120"]["samples_per_query"] < got["fitted"]["samples_per_query"]  # the fit did subsample


if __name__ == "__main__":  # writes the golden file with the code at hand
    GOLDEN.write_text(json.dumps({case: _stored(n) for case, n in CASES.items()}, indent=1, sort_keys=True) + "\n")
    sys.exit(0)
