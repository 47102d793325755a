"""Score-sample collection and its compact encoding in the result file."""

import base64
import copy
import csv
import json
import zlib
from dataclasses import replace

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from evaluator.columns import encode_array
from evaluator.errors import ResultValidationError
from evaluator.score_samples import (
    BYTES_PER_QUERY,
    LEGACY_LEVELS,
    QueryScoreSamples,
    ScoreSampleCollector,
    ScoreSamples,
    ScoreSamplesColumns,
    collect_score_samples,
    decode_score_samples,
    encode_score_samples,
    encoded_size,
    fit_to_budget,
    score_samples_json_schema,
)
from tests.conftest import SCIFACT


def tiny_corpus():
    doc_ids = [f"d{i}" for i in range(8)]
    # Scores encode the column (query q, doc i -> q + i / 10) so a picked score names its document.
    rows = np.array([[q + i / 10 for i in range(8)] for q in range(3)])
    qrels = {
        "q0": {"d1": 2, "d2": 1, "d3": 0, "d4": -1},
        "q1": {"d7": 1, "absent": 1},
        "q2": {"d0": 0},
    }
    return doc_ids, rows, qrels


def test_relevant_scores_and_counts_follow_the_relevance_level():
    doc_ids, rows, qrels = tiny_corpus()
    samples = collect_score_samples(["q0", "q1", "q2"], doc_ids, rows, qrels, n_samples=100)
    q0, q1, q2 = (samples.queries[q] for q in ("q0", "q1", "q2"))
    np.testing.assert_allclose(q0.relevant, [0.1, 0.2])
    assert (q0.n_relevant, q0.n_nonrelevant) == (2, 6)
    # Judged 0, negative and unjudged documents all count as non-relevant; all kept (6 < 100).
    np.testing.assert_allclose(q0.nonrelevant, [0.0, 0.3, 0.4, 0.5, 0.6, 0.7])
    # A relevant document missing from the corpus is not counted.
    assert (q1.n_relevant, q1.n_nonrelevant) == (1, 7) and q1.relevant.tolist() == [1.7]
    assert (q2.n_relevant, q2.nonrelevant.size) == (0, 8)
    assert samples.num_docs == 8
    strict = collect_score_samples(["q0"], doc_ids, rows[:1], qrels, relevance_level=2)
    np.testing.assert_allclose(strict.queries["q0"].relevant, [0.1])


def sampling_case(n_queries=40, n_docs=3000):
    doc_ids = [f"d{i}" for i in range(n_docs)]
    rng = np.random.default_rng(1)
    qrels = {
        f"q{q}": {f"d{c}": 1 for c in rng.choice(n_docs, size=q % 5, replace=False)} for q in range(n_queries)
    }
    rows = np.tile(np.arange(n_docs, dtype=np.float64), (n_queries, 1))  # score = column
    return doc_ids, rows, qrels


def test_sample_is_drawn_without_replacement_from_non_relevant_documents_only():
    doc_ids, rows, qrels = sampling_case()
    samples = collect_score_samples(list(qrels), doc_ids, rows, qrels, n_samples=500, seed=9)
    for query_id, q in samples.queries.items():
        picked = q.nonrelevant.astype(int)
        relevant_columns = {int(d[1:]) for d in qrels[query_id]}
        assert picked.size == 500 and np.unique(picked).size == 500
        assert relevant_columns.isdisjoint(picked.tolist())
        assert sorted(relevant_columns) == q.relevant.astype(int).tolist()


def test_sample_is_uniform_over_the_corpus():
    doc_ids, rows, qrels = sampling_case(n_queries=200)
    samples = collect_score_samples(list(qrels), doc_ids, rows, qrels, n_samples=300, seed=4)
    picked = np.concatenate([q.nonrelevant for q in samples.queries.values()])
    counts = np.histogram(picked, bins=30, range=(0, 3000))[0]
    assert stats.chisquare(counts).pvalue > 1e-3


def test_sample_does_not_depend_on_blocks_or_query_order():
    doc_ids, rows, qrels = sampling_case()
    query_ids = list(qrels)
    whole = collect_score_samples(query_ids, doc_ids, rows, qrels, n_samples=200, seed=5)
    collector = ScoreSampleCollector(doc_ids, qrels, n_samples=200, seed=5)
    order = np.random.default_rng(0).permutation(len(query_ids))
    for start in range(0, len(order), 7):
        block = order[start : start + 7]
        collector.add([query_ids[i] for i in block], rows[block])
    blocked = collector.result()
    for query_id in query_ids:
        np.testing.assert_array_equal(
            whole.queries[query_id].nonrelevant, blocked.queries[query_id].nonrelevant
        )
    other_seed = collect_score_samples(query_ids, doc_ids, rows, qrels, n_samples=200, seed=6)
    assert not np.array_equal(whole.queries["q0"].nonrelevant, other_seed.queries["q0"].nonrelevant)


def test_non_finite_scores_and_bad_shapes_are_rejected():
    doc_ids, rows, qrels = tiny_corpus()
    rows[1, 4] = np.nan
    with pytest.raises(ResultValidationError, match="query 'q1' has 1 non-finite"):
        collect_score_samples(["q0", "q1"], doc_ids, rows[:2], qrels)
    collector = ScoreSampleCollector(doc_ids, qrels)
    with pytest.raises(ValueError, match="shape"):
        collector.add(["q0"], rows[:2])


def encode_round_trip(samples):
    query_ids = sorted(samples.queries)
    encoded = json.loads(json.dumps(encode_score_samples(samples, query_ids)))
    return encoded, decode_score_samples(encoded, query_ids)


@pytest.mark.parametrize("levels", [4095, LEGACY_LEVELS])
def test_round_trip_keeps_relevant_exact_and_nonrelevant_within_the_quantization_step(levels):
    rng = np.random.default_rng(2)
    doc_ids = [f"d{i}" for i in range(4000)]
    rows = stats.skewnorm.rvs(2.0, -0.1, 0.1, size=(5, 4000), random_state=rng).astype(np.float32)
    qrels = {f"q{q}": {f"d{q}": 1, f"d{q + 10}": 3} for q in range(5)}
    samples = replace(collect_score_samples(list(qrels), doc_ids, rows, qrels, n_samples=1000), levels=levels)
    encoded, decoded = encode_round_trip(samples)
    ScoreSamplesColumns.model_validate(encoded)
    jsonschema.validate(encoded, score_samples_json_schema())
    assert decoded.samples_per_query == decoded.samples_requested == 1000 and decoded.levels == levels
    for query_id, original in samples.queries.items():
        back = decoded.queries[query_id]
        np.testing.assert_array_equal(back.relevant, original.relevant)
        step = (original.nonrelevant[-1] - original.nonrelevant[0]) / levels
        assert np.max(np.abs(back.nonrelevant - original.nonrelevant)) <= step / 2 * (1 + 1e-9)
        assert (back.n_relevant, back.n_nonrelevant) == (2, 3998)
    # decoded samples encode to the same field again: migration of stored samples is lossless
    assert encode_score_samples(decoded, sorted(samples.queries)) == encoded


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(0, 300), elements=st.floats(-1e6, 1e6, allow_nan=False)))
def test_round_trip_error_is_bounded_for_any_finite_sample(values):
    values = np.sort(values)
    query = QueryScoreSamples(np.array([0.5]), values, 1, values.size)
    samples = ScoreSamples(values.size + 1, 1, 0, 300, 300, {"q": query})
    back = encode_round_trip(samples)[1].queries["q"].nonrelevant
    assert back.size == values.size
    if values.size:
        step = (values[-1] - values[0]) / samples.levels
        assert np.max(np.abs(back - values)) <= step / 2 + 1e-9 * max(1.0, np.abs(values).max())


@pytest.fixture(scope="module")
def scifact_samples():
    """SciFact's 5,183 document ids and 300 test queries' qrels with dense-like synthetic scores."""
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as corpus:
        doc_ids = [json.loads(line)["_id"] for line in corpus]
    qrels = {}
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    rng = np.random.default_rng(3)
    rows = stats.skewnorm.rvs(1.9, -0.07, 0.097, size=(len(qrels), len(doc_ids)), random_state=rng)
    return collect_score_samples(list(qrels), doc_ids, rows.astype(np.float32), qrels)


def test_scifact_with_2000_samples_per_query_fits_the_budget(scifact_samples):
    assert (scifact_samples.num_docs, len(scifact_samples.queries)) == (5183, 300)
    assert fit_to_budget(scifact_samples, sorted(scifact_samples.queries)) is scifact_samples
    encoded, decoded = encode_round_trip(scifact_samples)
    assert encoded_size(encoded) <= BYTES_PER_QUERY * 300
    assert decoded.samples_per_query == 2000
    assert {q.nonrelevant.size for q in decoded.queries.values()} == {2000}
    assert sum(q.n_relevant for q in decoded.queries.values()) == 339  # SciFact test qrels rows


def test_over_budget_reduces_samples_uniformly_and_records_the_count(scifact_samples):
    query_ids = sorted(scifact_samples.queries)
    reduced = fit_to_budget(scifact_samples, query_ids, bytes_per_query=500)
    encoded, decoded = encode_round_trip(reduced)
    assert encoded_size(encoded) <= 500 * 300
    cap = decoded.samples_per_query
    assert 10 <= cap < 2000 and decoded.samples_requested == 2000
    for query_id, q in decoded.queries.items():
        assert q.nonrelevant.size == cap
        original = scifact_samples.queries[query_id].nonrelevant
        # Each kept value is one of the original sample's values (up to quantization).
        nearest = original[np.clip(np.searchsorted(original, q.nonrelevant), 0, original.size - 1)]
        below = original[np.clip(np.searchsorted(original, q.nonrelevant) - 1, 0, original.size - 1)]
        gap = np.minimum(np.abs(nearest - q.nonrelevant), np.abs(below - q.nonrelevant))
        assert gap.max() <= (original[-1] - original[0]) / decoded.levels


QUERIES = ["q0", "q1"]


def valid_field():
    doc_ids, rows, qrels = tiny_corpus()
    samples = collect_score_samples(QUERIES, doc_ids, rows[:2], qrels, n_samples=4)
    return json.loads(json.dumps(encode_score_samples(samples, QUERIES)))


def _set(key, value):
    def mutate(field):
        field[key] = value

    return mutate


MALFORMED = {
    "bad base64": (_set("codes", "not base64!"), "score_samples.codes"),
    "not zlib": (_set("codes", base64.b64encode(b"abcd").decode()), "score_samples.codes"),
    "zlib bomb": (_set("codes", base64.b64encode(zlib.compress(b"\0" * 50_000_000, 9)).decode()), "codes"),
    "wrong length": (_set("lo", encode_array(np.zeros(3), "<f8")), "score_samples.lo"),
    "NaN bound": (_set("lo", encode_array(np.array([np.nan, 0.0]), "<f8")), "score_samples.lo"),
    "hi below lo": (_set("hi", encode_array(np.array([-5.0, -5.0]), "<f8")), "hi is below"),
    "codes overflow": (_set("codes", encode_array(np.array([0, 4000, 4000, 0, 0, 0, 0, 0]), "<u2")), "codes"),
    "relevant count": (_set("n_relevant", encode_array(np.array([9, 1]), "<u4")), "n_relevant"),
    "NaN relevant": (_set("relevant", encode_array(np.array([0.1, np.nan, 0.2]), "<f8")), "relevant"),
    "unsorted relevant": (_set("relevant", encode_array(np.array([0.2, 0.1, 0.2]), "<f8")), "relevant"),
    "extra field": (_set("rank", 1), "rank"),
    "wrong format": (_set("format", "irboard-score-samples/1"), "format"),
    "string count": (_set("samples_per_query", "4"), "samples_per_query"),
    "odd levels": (_set("levels", 1000), "levels"),
    "cap over request": (_set("samples_per_query", 5), "samples_per_query"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_fields_are_rejected_with_the_field_named(case):
    mutate, field_name = MALFORMED[case]
    field = copy.deepcopy(valid_field())
    decode_score_samples(field, QUERIES)  # the unmodified field is valid
    mutate(field)
    with pytest.raises(ResultValidationError) as caught:
        decode_score_samples(field, QUERIES, where="results/m/d.json: score_samples")
    message = str(caught.value)
    assert message.startswith("results/m/d.json: score_samples") and field_name in message


def test_packed_samples_write_the_same_field_and_read_back_as_decoded():
    """What a Ray worker sends the driver (`packed`): the stored field, written as it is, the same bytes as the
    scores encoded in the driver; each query decoded from it when read; another order of queries encodes anew."""
    from pathlib import Path

    from evaluator.result import read_result
    from evaluator.score_samples import packed

    samples = read_result(Path(__file__).parents[2] / "results" / "bm25" / "beir__scifact.json").score_samples
    ids = sorted(samples.queries)
    rng = np.random.default_rng(2)
    # scores as sampling makes them (float32, not yet quantised): the packed field is what encoding them gives
    raw = replace(samples, queries={q: replace(v, nonrelevant=np.sort(v.nonrelevant.astype(np.float32)
                                                       + rng.random(v.nonrelevant.size, np.float32) * 1e-3))
                                    for q, v in samples.queries.items()}, flat=None)
    small = packed(raw)
    assert encode_score_samples(small, ids) is small.queries.stored
    assert small.queries.stored == encode_score_samples(raw, ids) and list(small.queries) == ids
    assert len(small.queries) == len(ids) and ids[0] in small.queries and "nope" not in small.queries
    decoded = decode_score_samples(encode_score_samples(raw, ids), ids).queries
    assert np.array_equal(small.queries[ids[3]].nonrelevant, decoded[ids[3]].nonrelevant)
    assert encode_score_samples(small, ids[::-1]) == encode_score_samples(  # re-encoded from the decoded queries
        replace(raw, queries=dict(decoded), flat=None), ids[::-1])
