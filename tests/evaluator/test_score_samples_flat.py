"""Decoding all queries' score samples at once gives, bit for bit, what decoding them query by query gave.

The oracle is the former per-query decoder, kept here as it was."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.columns import decode_array, encode_array
from evaluator.errors import ResultValidationError
from evaluator.result import parse_result_text
from evaluator.score_samples import (
    _FIX,
    FORMAT,
    QueryScoreSamples,
    ScoreSamples,
    ScoreSamplesColumns,
    _validated,
    decode_score_samples,
)

ROOT = Path(__file__).resolve().parents[2]
# the repository's results that carry score samples (those irboard ran; the published runs' results have none)
REPO_RESULTS = sorted(p for p in (ROOT / "results").glob("*/*.json") if b'"score_samples"' in p.read_bytes())
# Real-shaped files (100 queries of 2,000 sampled scores each) where the benchmark data generator has written them.
GENERATED = sorted(Path("/tmp/small_gen/results").glob("*/*.json"))


def decode_query_by_query(data, query_ids, where="score_samples") -> ScoreSamples:
    """The former decoder: validation as in decode_score_samples, then a loop over the queries."""
    model = _validated(ScoreSamplesColumns, data, where)
    n = len(query_ids)
    n_relevant = decode_array(model.n_relevant, "<u4", n, f"{where}.n_relevant").astype(np.int64)
    if n_relevant.size and int(n_relevant.max()) > model.num_docs:
        raise ResultValidationError(f"{where}.n_relevant: more relevant documents than num_docs; {_FIX}")
    counts = np.minimum(model.samples_per_query, model.num_docs - n_relevant)
    relevant = decode_array(model.relevant, "<f8", int(n_relevant.sum()), f"{where}.relevant")
    lows = decode_array(model.lo, "<f8", n, f"{where}.lo")
    highs = decode_array(model.hi, "<f8", n, f"{where}.hi")
    deltas = decode_array(model.codes, "<u2", int(counts.sum()), f"{where}.codes").astype(np.int64)
    for name, column in (("relevant", relevant), ("lo", lows), ("hi", highs)):
        if not np.isfinite(column).all():
            raise ResultValidationError(f"{where}.{name}: every score must be finite; {_FIX}")
    if (highs < lows).any():
        raise ResultValidationError(f"{where}: a query's hi is below its lo; {_FIX}")
    rel_at = np.concatenate(([0], np.cumsum(n_relevant)))
    code_at = np.concatenate(([0], np.cumsum(counts)))
    queries = {}
    for i, query_id in enumerate(query_ids):
        codes = np.cumsum(deltas[code_at[i]:code_at[i + 1]])
        if codes.size and codes[-1] > model.levels:
            raise ResultValidationError(f"{where}.codes: query {query_id!r} has codes above {model.levels}; {_FIX}")
        scores = relevant[rel_at[i]:rel_at[i + 1]]
        if scores.size > 1 and (np.diff(scores) < 0).any():
            raise ResultValidationError(f"{where}.relevant: query {query_id!r} is not in ascending order; {_FIX}")
        queries[query_id] = QueryScoreSamples(
            relevant=scores,
            nonrelevant=lows[i] + codes * ((highs[i] - lows[i]) / model.levels),
            n_relevant=int(n_relevant[i]),
            n_nonrelevant=model.num_docs - int(n_relevant[i]),
        )
    return ScoreSamples(model.num_docs, model.relevance_level, model.seed, model.samples_requested,
                        model.samples_per_query, queries, model.levels)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_identical(new: ScoreSamples, old: ScoreSamples) -> None:
    assert replace(new, queries={}) == replace(old, queries={})
    assert list(new.queries) == list(old.queries)
    for query_id, q in new.queries.items():
        o = old.queries[query_id]
        assert same_bits(q.relevant, o.relevant) and same_bits(q.nonrelevant, o.nonrelevant), query_id
        assert (q.n_relevant, q.n_nonrelevant) == (o.n_relevant, o.n_nonrelevant)
        assert type(q.n_relevant) is type(o.n_relevant) is int
    flat = new.flat_scores()
    assert flat is not None and flat.queries is new.queries
    queries = list(old.queries.values())
    assert same_bits(flat.n_relevant, np.array([q.n_relevant for q in queries], dtype=np.int64))
    assert same_bits(flat.n_sampled, np.array([q.nonrelevant.size for q in queries], dtype=np.int64))
    for name, column in (("relevant", flat.relevant), ("nonrelevant", flat.nonrelevant)):
        assert same_bits(column, np.concatenate([getattr(q, name) for q in queries] + [np.zeros(0)])), name


def decode_both(field, query_ids, where="score_samples"):
    """(new, old) decodings, or (new error message, old error message)."""
    results = []
    for decode in (decode_score_samples, decode_query_by_query):
        try:
            results.append(decode(field, query_ids, where))
        except ResultValidationError as error:
            results.append(str(error))
    return results


def stored_field(path: Path):
    raw = path.read_bytes()
    return orjson.loads(raw)["score_samples"], list(parse_result_text(raw, str(path), with_run=False).query_ids)


def test_real_result_files_decode_as_query_by_query():
    assert len(REPO_RESULTS) >= 16  # bm25, splade, dense models on four datasets
    for path in REPO_RESULTS + GENERATED:
        field, query_ids = stored_field(path)
        new, old = decode_both(field, query_ids, f"{path}: score_samples")
        assert isinstance(new, ScoreSamples), new
        assert_identical(new, old)


def crafted(queries, num_docs=6, samples_per_query=3, levels=4095, lo=None, hi=None):
    """A field from (relevant scores, code deltas) per query, stored as given (unsorted, too large: as asked)."""
    n = len(queries)
    return {
        "format": FORMAT, "num_docs": num_docs, "relevance_level": 1, "seed": 0,
        "samples_requested": samples_per_query, "samples_per_query": samples_per_query, "levels": levels,
        "n_relevant": encode_array(np.array([len(r) for r, _ in queries], dtype=np.int64), "<u4"),
        "relevant": encode_array(np.array([s for r, _ in queries for s in r], dtype=np.float64), "<f8"),
        "lo": encode_array(np.array(lo if lo is not None else [-1.0 - i for i in range(n)]), "<f8"),
        "hi": encode_array(np.array(hi if hi is not None else [2.0 + i for i in range(n)]), "<f8"),
        "codes": encode_array(np.array([d for _, c in queries for d in c], dtype=np.int64), "<u2"),
    }


IDS = ["qa", "qb", "qc", "qd"]
# num_docs 6, 3 sampled a query at most: n relevant 0 -> 3 codes, 4 -> 2, 6 -> none (all relevant)
CASES = {
    "valid": ([[], [1.0, 2.0, 2.0, 3.0], [0.5] * 6, [-1.0]], [[0, 5, 7], [1, 0], [], [4095, 0, 0]]),
    "codes above levels in the second query": (
        [[], [1.0, 2.0, 3.0, 4.0], [0.0] * 6, [5.0]], [[0, 1, 2], [4000, 96], [], [0, 0, 0]]),
    "relevant falling in the third query": (
        [[1.0], [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 0.5, 2.0, 3.0, 4.0], [5.0]], [[0, 1, 2], [0, 1], [], [0, 0, 0]]),
    "falling relevant before codes above levels": (
        [[2.0, 1.0], [1.0, 2.0, 3.0, 4.0], [0.0] * 6, [5.0]], [[0, 1, 2], [4095, 1], [], [0, 0, 0]]),
    "both in one query: codes named": (
        [[], [2.0, 1.0, 3.0, 4.0], [0.0] * 6, [5.0]], [[0, 1, 2], [4095, 1], [], [0, 0, 0]]),
    "falling only from one query to the next": (
        [[9.0], [1.0, 2.0, 3.0, 4.0], [0.0] * 6, [-5.0]], [[0, 1, 2], [0, 1], [], [0, 0, 0]]),
    "falling after a query without relevant scores": (
        [[], [3.0, 2.0, 1.0, 0.0], [0.0] * 6, []], [[0, 1, 2], [0, 1], [], [0, 0, 0]]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_crafted_samples_decode_or_fail_as_query_by_query(case):
    relevant, codes = CASES[case]
    field = crafted(list(zip(relevant, codes, strict=True)))
    new, old = decode_both(field, IDS, "results/m/d.json: score_samples")
    if isinstance(old, str):
        assert new == old
        assert "results/m/d.json: score_samples." in new
    else:
        assert_identical(new, old)
    expected = {"codes above levels in the second query": "codes: query 'qb' has codes above 4095",
                "relevant falling in the third query": "relevant: query 'qc' is not in ascending order",
                "falling relevant before codes above levels": "relevant: query 'qa' is not in ascending order",
                "both in one query: codes named": "codes: query 'qb' has codes above 4095",
                "falling after a query without relevant scores": "relevant: query 'qb' is not in ascending order",
                }.get(case)
    assert (expected in new) if expected else isinstance(new, ScoreSamples), new


def test_queries_without_samples_and_results_without_queries():
    no_samples = crafted([([1.0], []), ([], [])], samples_per_query=0)
    for field, ids in ((no_samples, ["qa", "qb"]), (crafted([]), [])):
        new, old = decode_both(field, ids)
        assert_identical(new, old)
    assert decode_score_samples(no_samples, ["qa", "qb"]).flat.nonrelevant.size == 0


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_overflowing_ranges_give_the_same_nan_and_inf():
    # hi - lo overflows: the step is inf, so code 0 gives NaN and the others inf, as before.
    field = crafted([([], [0, 1, 1]), ([], [2, 0, 0]), ([], [0, 0, 4095])],
                    lo=[-1e308, -1e308, 1e308], hi=[1e308, 1e308, 1.7e308])
    new, old = decode_both(field, ["qa", "qb", "qc"])
    assert_identical(new, old)
    assert np.isnan(new.queries["qa"].nonrelevant[0]) and np.isinf(new.queries["qb"].nonrelevant).all()


def test_flat_arrays_are_dropped_when_the_queries_are_replaced():
    samples = decode_score_samples(crafted(list(zip(*CASES["valid"], strict=True))), IDS)
    assert samples.flat_scores() is samples.flat
    assert replace(samples, num_docs=7).flat_scores() is samples.flat  # the same queries
    assert replace(samples, queries=dict(samples.queries)).flat_scores() is None
    assert decode_score_samples(crafted([([], [0, 1, 1])] * 2), ["qa", "qa"]).flat_scores() is None  # one id twice


query_strategy = st.tuples(
    st.lists(st.sampled_from([-2.0, 0.0, 0.5, 1.0, 7.0]), max_size=6),
    st.lists(st.sampled_from([0, 1, 2, 1000, 4095, 65535]), min_size=3, max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(query_strategy, max_size=5), st.sampled_from([4095, 65535]))
def test_any_crafted_samples_decode_or_fail_as_query_by_query(queries, levels):
    # num_docs 6, 3 sampled at most: a query's count of codes follows from its relevant count
    queries = [(relevant, codes[:min(3, 6 - len(relevant))]) for relevant, codes in queries]
    field = crafted(queries, levels=levels)
    ids = [f"q{i}" for i in range(len(queries))]
    new, old = decode_both(field, ids)
    if isinstance(old, str):
        assert new == old
    else:
        assert_identical(new, old)
