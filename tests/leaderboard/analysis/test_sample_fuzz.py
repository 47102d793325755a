"""Hypothesis over the score-sample columns: the recall-at-scale prediction gives a number in [0, 1] or a reason,
never an exception, whatever the samples hold (constant, tied, single values, huge or tiny ranges, few queries); and
`irboard compare` gives a table for any file the reader accepts, including those validate rejects."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.result import build_result, read_result
from evaluator.score_samples import ScoreSamples, decode_score_samples, encode_score_samples
from leaderboard.analysis.scale import CannotPredictError, forecasts
from leaderboard.analysis.scale_options import MODES
from tests.conftest import ROOT

SCALES = st.sampled_from([1e-12, 1e-3, 1.0, 1e3, 1e12])


@st.composite
def sample_columns(draw) -> tuple[ScoreSamples, list[str]]:
    """Drawn queries' relevant scores and non-relevant samples, written and read back as a result file stores them
    (12-bit codes between each query's lowest and highest sample)."""
    from evaluator.score_samples import QueryScoreSamples

    n_queries = draw(st.integers(1, 5))
    scale, offset = draw(SCALES), draw(st.sampled_from([0.0, -7.5, 1e6]))
    kind = st.sampled_from(["constant", "two values", "spread"])
    # every query of a file samples min(samples_per_query, its non-relevant documents): none, one, or more
    queries, num_docs, size = {}, draw(st.integers(30, 10**7)), draw(st.sampled_from([0, 1, 2, 5, 25]))
    for i in range(n_queries):
        how = draw(kind)
        if how == "constant":
            sampled = np.full(size, offset)
        elif how == "two values":
            sampled = offset + scale * np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=size,
                                                              max_size=size)))
        else:
            sampled = offset + scale * np.array(draw(st.lists(st.floats(-5, 5), min_size=size, max_size=size)))
        relevant = offset + scale * np.array(draw(st.lists(st.floats(-6, 6), max_size=4)))
        queries[f"q{i}"] = QueryScoreSamples(np.sort(relevant), np.sort(sampled), relevant.size,
                                             num_docs - relevant.size)
    samples = ScoreSamples(num_docs, 1, 0, 25, size, queries)
    ids = list(queries)
    return decode_score_samples(encode_score_samples(samples, ids), ids), ids


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns=sample_columns(), mode=st.sampled_from(MODES))
def test_the_prediction_gives_a_value_or_a_reason(columns, mode):
    samples, _ = columns
    try:
        found = forecasts(samples, [1e3, 1e7], [10, 100], mode)
    except CannotPredictError as error:
        assert error.reason
        return
    for forecast in found.values():
        recall = np.asarray(forecast.recall)
        assert np.all(np.isfinite(recall)) and np.all((recall >= 0) & (recall <= 1 + 1e-9))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.slow
def test_compare_gives_a_table_for_any_readable_file(tmp_path_factory, data):
    """The new file keeps a drawn set of per-query metrics (none of the main metric, as a split file validate rejects,
    included) and perhaps fewer queries; its samples and ranking are dropped or kept."""
    from evaluator.result import dump_result, result_path
    from leaderboard.review.compare import comparison_markdown

    root = tmp_path_factory.mktemp("compare") / "results"
    base = read_result(ROOT / "results" / "bm25" / "beir__scifact.json")
    names = sorted(base.per_query)
    kept = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True))
    queries = base.query_ids[: data.draw(st.sampled_from([len(base.query_ids), 10]))]
    header = base.header.model_copy(update={
        "model": base.model.model_copy(update={"id": "org/new"}),
        "dataset": base.dataset.model_copy(update={"num_queries": len(queries)}),
        "metrics": {name: float(base.per_query[name][: len(queries)].mean()) for name in kept}})
    new = build_result(header, queries, {name: base.per_query[name][: len(queries)] for name in kept})
    for result, model_id in ((base, "bm25"), (new, "org/new")):
        path = result_path(model_id, "beir/scifact", root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_result(result))
    table = comparison_markdown([result_path("org/new", "beir/scifact", root)], root)
    assert "| org/new | beir/scifact |" in table
