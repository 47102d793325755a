"""`rank_plain_dict` (a dict run ranked in C) ranks exactly as the reference `rank_run`: trec_eval's order for ties,
ids beyond ASCII, ids holding NUL, long ids, -0.0 against 0.0, scores equal only as float32, int scores,
numpy floats and ignored identical ids. Anything outside its plain case gives None, for the general path."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evaluator.metrics.ranking import Qrels, rank_plain_dict, rank_run

names = st.text(alphabet=["a", "b", "é", "z", "ａ", "\U0001F600", "\x00", "0"], min_size=1, max_size=4) | \
    st.text(alphabet="ab", min_size=65, max_size=70) | st.just("q1")  # q1: a query's own id
scores = st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-9, -2.5, 3e38, -3e38, 1e-45, 0.5, 2, -1, np.float64(0.5),
                          2**60, 2**60 + 1])
queries = st.sampled_from(["q1", "q2", "q3", "é"])
QRELS = Qrels.from_dict({"q1": {"a": 1, "b": 2, "é": 0, "q1": 1}, "q2": {"z": 1, "\x00": 3}, "é": {"ａ": -1}})


@settings(max_examples=300, deadline=None)
@given(run=st.dictionaries(queries, st.dictionaries(names, scores, max_size=12), max_size=4),
       ignore_identical_ids=st.booleans())
@example(run={"q1": {"a\x00": 1.0, "a": 1.0, "b": 0.0, "z": -0.0}}, ignore_identical_ids=False)
@example(run={"q1": {"q1": 9.0, "é": 1.0, "z": 1.0 + 1e-9, "a": 1}}, ignore_identical_ids=True)
def test_rank_plain_dict_ranks_like_rank_run(run, ignore_identical_ids):
    ranked = rank_plain_dict(run, QRELS, ignore_identical_ids)
    if not set(run) & set(QRELS.query_ids):
        assert ranked is None  # the general path says that they share no query
        return
    expected = rank_run(run, QRELS, ignore_identical_ids)
    assert ranked.query_ids == expected.query_ids
    assert ranked.labels.tolist() == expected.labels.tolist()
    assert ranked.lengths.tolist() == expected.lengths.tolist()


class Text(str):
    pass


@pytest.mark.parametrize("run", [
    {"q1": {"a": math.nan}},
    {"q1": {"a": np.float64(math.nan)}},
    {"q1": {"a": -math.inf}},
    {"q1": {"a": 1e39}},
    {"q1": {"a": 10**400}},
    {"q1": {"a": True}},
    {"q1": {"a": None}},
    {"q1": {"a": "1"}},
    {"q1": {"a": np.float32(1.0)}},
    {"q1": {1: 1.0}},
    {1: {"a": 1.0}, "q1": {"b": 1.0}},
    {"q1": {"a": 1.0}, "q9": {2: 1.0}},  # an unjudged query's ids are still checked
    {"q1": [("a", 1.0)]},
    {"q1": {"\ud800": 1.0}},  # a lone surrogate: no UTF-8
    {Text("q1"): {"a": 1.0}},
    {"q9": {"a": 1.0}},
    {},
], ids=repr)
def test_anything_but_the_plain_case_gives_none(run):
    assert rank_plain_dict(run, QRELS) is None


def test_an_unjudged_querys_scores_are_not_read():
    """As in the general path (and trec_eval), a query without judgments is skipped whatever its scores."""
    ranked = rank_plain_dict({"q1": {"b": 1.0, "a": 2.0}, "q9": {"a": math.nan}}, QRELS)
    assert ranked.labels.tolist() == [[1, 2], [-2_000_000] * 2, [-2_000_000] * 2]
