"""Recall-at-scale predictions from the flat decoded arrays are, bit for bit, what the former per-query path gave.

The oracle is the former decoder, fit (per-query arrays concatenated, every key checked for order) and
binomial cdf (scipy's public one), kept here as they were."""

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluator.columns import decode_array, encode_array
from evaluator.score_samples import (
    QueryScoreSamples,
    ScoreSamples,
    decode_score_samples,
    encode_score_samples,
)
from leaderboard.analysis import scale, scale_query
from leaderboard.analysis.predictions import CHART_KS, CHART_SIZES, CURVE_SIZES
from leaderboard.analysis.scale import CannotPredictError
from leaderboard.analysis.scale_query import _binom_cdf, _Flat, _model, _tail_shares
from tests.evaluator.test_score_samples_flat import (
    GENERATED,
    REPO_RESULTS,
    decode_query_by_query,
    same_bits,
    stored_field,
)


@dataclass(frozen=True)
class FormerFlat:
    values: np.ndarray
    counts: np.ndarray
    starts: np.ndarray
    query: np.ndarray
    keys: np.ndarray

    @classmethod
    def of(cls, arrays, lowest=0.0, width=1.0):
        counts = np.array([a.size for a in arrays], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        values = np.concatenate(arrays).astype(np.float64, copy=False) if arrays else np.zeros(0)
        query = np.repeat(np.arange(counts.size), counts)
        flat = cls(values, counts, starts, query, query * width + (values - lowest))
        if values.size > 1 and (np.diff(flat.keys) < 0).any():
            order = np.argsort(flat.keys, kind="stable")
            flat = cls(values[order], counts, starts, query, flat.keys[order])
        return flat

    def count_above_and_tied(self, keys, query):
        right = np.searchsorted(self.keys, keys, side="right")
        left = np.searchsorted(self.keys, keys, side="left")
        return self.starts[query] + self.counts[query] - right, right - left


def former_fit_queries(samples, empirical=False):
    kept, relevant, sampled, dropped = [], [], [], Counter()
    for query_id, q in samples.queries.items():
        if q.n_relevant <= 0:
            continue
        if len(q.relevant) != q.n_relevant:
            dropped["relevant or sampled scores missing or not finite"] += 1
        elif len(q.nonrelevant) == 0:
            dropped["no sampled non-relevant score"] += 1
        else:
            kept.append(query_id)
            relevant.append(np.asarray(q.relevant))
            sampled.append(np.asarray(q.nonrelevant))
    if not kept:
        return _model(samples, [], FormerFlat.of([]), *(np.zeros(0),) * 4, empirical, dropped)
    everything = np.concatenate(relevant + sampled).astype(np.float64, copy=False)
    finite = np.isfinite(everything)
    if not finite.all():
        bad = np.zeros(len(kept), dtype=bool)
        owner = np.repeat(np.r_[np.arange(len(kept)), np.arange(len(kept))],
                          [a.size for a in relevant] + [a.size for a in sampled])
        bad[owner[~finite]] = True
        dropped["relevant or sampled scores missing or not finite"] += int(bad.sum())
        return former_subset(samples, kept, ~bad, empirical, dropped)
    lowest, width = float(everything.min()), float(everything.max() - everything.min()) + 1.0
    rel, sam = FormerFlat.of(relevant, lowest, width), FormerFlat.of(sampled, lowest, width)
    above, tied = sam.count_above_and_tied(rel.keys, rel.query)
    share_above, share_tied = above / sam.counts[rel.query], tied / sam.counts[rel.query]
    if not empirical:
        share_above, keep, reasons = _tail_shares(rel, sam, share_above, share_tied)
        if not keep.all():
            dropped.update(reasons)
            return former_subset(samples, kept, keep, empirical, dropped)
    rel_above, rel_tied = rel.count_above_and_tied(rel.keys, rel.query)
    return _model(samples, kept, rel, rel_above, rel_tied - 1, share_above, share_tied, empirical, dropped)


def former_subset(samples, kept, keep, empirical, dropped):
    queries = {qid: samples.queries[qid] for qid, k in zip(kept, keep, strict=True) if k}
    model = former_fit_queries(replace(samples, queries=queries), empirical)
    counts = Counter(dropped)
    counts.update(model.dropped)
    return replace(model, dropped=dict(counts))


def sizes_of(samples):
    return tuple(sorted({float(s) for s in CHART_SIZES} | set(CURVE_SIZES) | {float(samples.num_docs)}))


def assert_same_predictions(new_samples, old_samples, mode):
    """forecasts as the site asks for them, from the new path and from the former one."""
    new = scale.forecasts(new_samples, sizes_of(new_samples), CHART_KS, mode)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scale, "fit_queries", former_fit_queries)
        patch.setattr(scale_query, "_binom_cdf", stats.binom.cdf)
        old = scale.forecasts(old_samples, sizes_of(old_samples), CHART_KS, mode)
    assert list(new) == list(old)
    for growth, forecast in new.items():
        assert same_bits(forecast.recall, old[growth].recall), growth
        assert same_bits(forecast.per_query, old[growth].per_query), growth
        assert list(forecast.dropped.items()) == list(old[growth].dropped.items())
        assert forecast.queries == old[growth].queries
    return new


@pytest.mark.parametrize("mode", ["per_query", "rank"])
def test_real_result_files_predict_as_before(mode):
    assert len(REPO_RESULTS) >= 16
    for path in REPO_RESULTS + GENERATED:
        field, query_ids = stored_field(path)
        samples = decode_score_samples(field, query_ids)
        assert samples.flat_scores() is not None
        assert_same_predictions(samples, decode_query_by_query(field, query_ids), mode)


def awkward_samples():
    """Decoded samples of queries the model drops or treats apart: a tie mass with too few scores above it, no
    relevant document, relevant scores tied with the mass, a huge score range."""
    rng = np.random.default_rng(7)
    num_docs, queries = 5000, {}
    for q in range(12):
        sampled = np.sort(rng.gamma(2.0, 1.0 + q / 10, 300))
        relevant = np.sort(rng.gamma(2.0, 2.0, 1 + q % 4) + 2.0)
        if q == 3:
            sampled[:292] = 0.0  # 8 scores above the tie mass: too few for a tail
            relevant[-1] = 50.0  # a relevant score in the tail
        if q == 5:
            relevant = np.zeros(0)
        if q == 7:
            sampled[:200] = 0.0
            relevant[0] = 0.0  # tied with the mass
        if q == 9:
            sampled, relevant = sampled * 1e12, relevant * 1e12  # (at 1e17 keys of two queries collide)
        queries[f"q{q}"] = QueryScoreSamples(relevant, sampled, relevant.size, num_docs - relevant.size)
    samples = ScoreSamples(num_docs, 1, 0, 300, 300, queries)
    return encode_score_samples(samples, list(queries)), list(queries)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("mode", ["per_query", "rank"])
@pytest.mark.parametrize("overflow", [False, True])
def test_awkward_samples_predict_as_before(mode, overflow):
    field, query_ids = awkward_samples()
    if overflow:  # one query's hi - lo overflows: its sampled scores are NaN and inf, and it is dropped
        n = len(query_ids)
        lows, highs = decode_array(field["lo"], "<f8", n, "lo"), decode_array(field["hi"], "<f8", n, "hi")
        lows[2], highs[2] = -1e308, 1e308
        field = {**field, "lo": encode_array(lows, "<f8"), "hi": encode_array(highs, "<f8")}
    samples = decode_score_samples(field, query_ids)
    before = decode_query_by_query(field, query_ids)
    new = assert_same_predictions(samples, before, mode)
    dropped = new["fixed-relevant"].dropped
    assert dropped.get("relevant or sampled scores missing or not finite", 0) == int(overflow)
    if mode == "per_query":
        assert "fewer than 11 sampled scores above the tie mass, too few for a tail fit" in dropped
    # The same samples without their flat arrays (as after fit_to_budget) take the per-query path: same again.
    assert_same_predictions(replace(samples, queries=dict(samples.queries)), before, mode)


@pytest.mark.parametrize("flat", [True, False])
def test_scores_too_far_apart_give_a_reason_not_a_crash(flat):
    """Spread over 1e17 (a hostile file: no model scores like that), neighbouring queries' sort keys would round
    into each other; the prediction says why there is none instead."""
    field, query_ids = awkward_samples()
    n = len(query_ids)
    lows, highs = decode_array(field["lo"], "<f8", n, "lo"), decode_array(field["hi"], "<f8", n, "hi")
    lows[4], highs[4] = -1e17, 1e17
    samples = decode_score_samples({**field, "lo": encode_array(lows, "<f8"), "hi": encode_array(highs, "<f8")},
                                   query_ids)
    if not flat:
        samples = replace(samples, queries=dict(samples.queries))
    with pytest.raises(CannotPredictError, match="the scores span 2e[+]17, too wide a range"):
        scale.forecasts(samples, sizes_of(samples), CHART_KS)


def test_samples_without_sampled_scores_cannot_be_predicted_as_before():
    field, query_ids = awkward_samples()
    field = {**field, "samples_per_query": 0, "codes": encode_array(np.zeros(0), "<u2")}
    messages = []
    for samples, fit in ((decode_score_samples(field, query_ids), scale.fit_queries),
                         (decode_query_by_query(field, query_ids), former_fit_queries)):
        with pytest.MonkeyPatch.context() as patch, pytest.raises(CannotPredictError) as caught:
            patch.setattr(scale, "fit_queries", fit)
            scale.forecasts(samples, sizes_of(samples), CHART_KS)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] == "no query could be modelled (11 no sampled non-relevant score)"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.floats(-1e18, 1e18), min_size=1, max_size=6), min_size=1, max_size=6),
       st.floats(-1e18, 1e18), st.sampled_from([1.0, 3.0, 1e17, 2.5e17]))
def test_flat_keys_match_the_former_keys(queries, lowest, width):
    arrays = [np.sort(np.array(q)) for q in queries]
    counts = np.array([a.size for a in arrays], dtype=np.int64)
    former = FormerFlat.of(arrays, lowest, width)
    for ascending in (True, False):
        flat = _Flat.of(np.concatenate(arrays), counts, lowest, width, ascending)
        for name in ("values", "counts", "starts", "keys", "query"):
            assert same_bits(getattr(flat, name), getattr(former, name)), name


def test_binomial_cdf_is_scipys():
    n = np.array([1.0, 2.0, 7.0, 40.0, 1e4, 1e7, 3e8])
    p = np.array([0.0, 1e-9, 0.013, 0.5, 0.97, 1.0, 1.5, -0.1])
    grid_n, grid_p, share = np.meshgrid(n, p, np.linspace(0.0, 0.999, 7), indexing="ij")
    x = np.floor(share * grid_n) + np.where(share > 0.5, 0.5, 0.0)  # whole and half counts in [0, n)
    x, grid_n, grid_p = (a.ravel() for a in (x, grid_n, grid_p))
    assert (x >= 0).all() and (x < grid_n).all()
    assert same_bits(_binom_cdf(x, grid_n, grid_p), stats.binom.cdf(x, grid_n, grid_p))
