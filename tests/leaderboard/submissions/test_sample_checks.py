"""The score-sample checks: the screen over all queries (`_suspect_rows`) flags exactly the queries whose sample
the per-query check rejects, so `score_sample_problems` reports what checking every query in order would. Real
SciFact results from the repository, tampered in the ways a forged sample could differ from its ranking."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import hypergeom

from evaluator.metrics import Qrels
from evaluator.result import Run, read_result
from evaluator.trec import read_qrels
from leaderboard.submissions.labels import entry_labels
from leaderboard.submissions.sample_checks import (
    IMPLAUSIBLE,
    SCORE_TOLERANCE,
    _implausible,
    _sample_columns,
    _suspect_rows,
    _unmatched,
    _unmatched_by_group,
    implausible_below,
    query_sample_problem,
    score_sample_problems,
)
from tests.conftest import ROOT, SCIFACT


@pytest.fixture(scope="module")
def scifact():
    """(a repository result on beir/scifact with score samples, the SciFact qrels)."""
    found = [result for path in sorted(ROOT.glob("results/*/beir__scifact.json"))
             if (result := read_result(path)).score_samples is not None]
    assert found, "the repository has no beir/scifact result with score samples"
    return found[-1], read_qrels(SCIFACT / "qrels" / "test.tsv")


def failing(result, qrels) -> dict[int, str]:
    """Every query's problem, the per-query check run on all of them: the oracle."""
    judged = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    problems = {}
    for row, query_id in enumerate(result.query_ids):
        problem = query_sample_problem(result, row, judged.get(query_id, {}))
        if problem is not None:
            problems[row] = problem
    return problems


def assert_same_outcome(result, qrels, exact: bool = True):
    expected = failing(result, qrels)
    first = [expected[min(expected)]] if expected else []
    assert score_sample_problems(result, qrels) == first
    labels = entry_labels(result, qrels)
    assert score_sample_problems(result, qrels, labels) == first
    suspects = set(_suspect_rows(result, qrels, labels).tolist())
    assert suspects >= set(expected)  # never misses a failing query
    if exact:
        assert suspects == set(expected)  # and flags no other (each check is computed exactly)
    return expected


def test_an_untampered_result_passes_without_a_suspect(scifact):
    result, qrels = scifact
    assert failing(result, qrels) == {}
    assert _suspect_rows(result, qrels, entry_labels(result, qrels)).size == 0
    assert score_sample_problems(result, qrels) == []


def _with_samples(result, change: dict):
    """`result` with the samples of some queries replaced ({row: QueryScoreSamples})."""
    samples = result.score_samples
    queries = dict(samples.queries)
    for row, sample in change.items():
        queries[result.query_ids[row]] = sample
    return replace(result, score_samples=replace(samples, queries=queries))


def _sample(result, row):
    return result.score_samples.queries[result.query_ids[row]]


def _last_score(result, row) -> float:
    return float(result.run.scores[result.run.offsets[row + 1] - 1])


@pytest.mark.parametrize(("tamper", "message"), [
    (lambda s, t: replace(s, n_relevant=s.n_relevant + 50), "n_relevant is"),
    (lambda s, t: replace(s, relevant=np.append(s.relevant, t + 1.0)), "relevant scores above"),
    # two: with ignore_identical_ids one sampled score above t may be the query's own document
    (lambda s, t: replace(s, nonrelevant=np.append(s.nonrelevant, s.nonrelevant[-1] + [100.0, 200.0])),
     "sampled non-relevant scores above"),
    (lambda s, t: replace(s, nonrelevant=s.nonrelevant[s.nonrelevant < t - 1.0]), "not a uniform sample"),
])
def test_each_check_reports_the_first_failing_query(scifact, tamper, message):
    result, qrels = scifact
    rows = [7, 3, 250]
    changed = _with_samples(result, {row: tamper(_sample(result, row), _last_score(result, row)) for row in rows})
    problems = assert_same_outcome(changed, qrels)
    assert set(problems) <= set(rows) and message in problems[min(problems)]
    assert score_sample_problems(changed, qrels)[0].startswith(
        f"score_samples of query {result.query_ids[min(problems)]!r}")


def _empty_rankings(result, rows: list[int]):
    run, keep = result.run, np.ones(result.run.docs.size, dtype=bool)
    lengths = run.lengths.copy()
    for row in rows:
        keep[run.offsets[row]:run.offsets[row + 1]] = False
        lengths[row] = 0
    return replace(result, run=Run(run.depth, run.doc_ids, lengths, run.docs[keep], run.scores[keep]))


def _tampered(result, data) -> object:
    """`result` with a few queries' samples changed in drawn ways (values near the boundaries included)."""
    n, run = len(result.query_ids), result.run
    change = {}
    for _ in range(data.draw(st.integers(1, 6), label="changes")):
        row = data.draw(st.integers(0, n - 1), label="row")
        sample = change.get(row, _sample(result, row))
        start, end = run.offsets[row], run.offsets[row + 1]
        t = float(run.scores[end - 1]) if end > start else 0.0
        tolerance = SCORE_TOLERANCE * max(1.0, abs(t))
        nonrelevant = sample.nonrelevant
        step = float(nonrelevant[-1] - nonrelevant[0]) / result.score_samples.levels + tolerance \
            if nonrelevant.size else tolerance
        ranked = run.scores[start:end]
        kind = data.draw(st.sampled_from(["shift relevant", "shift non-relevant", "n_relevant", "drop top",
                                          "add relevant", "add non-relevant", "boundary"]), label="kind")
        if kind == "shift relevant":
            delta = data.draw(st.sampled_from([-1.0, -1e-3, tolerance, 1e-3, 1.0, 100.0]), label="delta")
            sample = replace(sample, relevant=sample.relevant + delta)
        elif kind == "shift non-relevant":
            delta = data.draw(st.sampled_from([-100.0, -1.0, -step, step, 2 * step, 1.0]), label="delta")
            sample = replace(sample, nonrelevant=nonrelevant + delta)
        elif kind == "n_relevant":
            sample = replace(sample, n_relevant=max(0, sample.n_relevant + data.draw(st.integers(-2, 3))))
        elif kind == "drop top":  # fewer sampled scores reach t: the hypergeometric tail shrinks
            keep = nonrelevant.size - data.draw(st.integers(0, max(nonrelevant.size // 20, 1)), label="dropped")
            sample = replace(sample, nonrelevant=nonrelevant[:max(keep, 0)])
        elif kind == "add relevant" and ranked.size:
            value = data.draw(st.sampled_from(list(ranked) + [t + tolerance, np.nextafter(t + tolerance, np.inf),
                                                               float(ranked[0]) + tolerance]), label="value")
            sample = replace(sample, relevant=np.sort(np.append(sample.relevant, value)))
        elif kind == "add non-relevant" and ranked.size:
            value = data.draw(st.sampled_from(list(ranked[:5]) + [float(ranked[0]) + step, float(ranked[0]) + 2 * step,
                                                                  float(ranked[-1]) + 1.0]), label="value")
            sample = replace(sample, nonrelevant=np.sort(np.append(nonrelevant, value)))
        elif kind == "boundary":  # values exactly at the cuts t + tolerance, t + step, t - step
            cut = data.draw(st.sampled_from([t + tolerance, t + step, t - step]), label="cut")
            values = np.full(data.draw(st.integers(1, 3)), cut)
            which = data.draw(st.booleans(), label="relevant side")
            sample = replace(sample, relevant=np.sort(np.append(sample.relevant, values))) if which else \
                replace(sample, nonrelevant=np.sort(np.append(nonrelevant, values)))
        change[row] = sample
    changed = _with_samples(result, change)
    if data.draw(st.booleans(), label="ignore identical ids"):
        header = changed.header
        changed = replace(changed, header=header.model_copy(
            update={"settings": header.settings.model_copy(update={"ignore_identical_ids": True})}))
    emptied = data.draw(st.lists(st.integers(0, n - 1), max_size=3), label="emptied rankings")
    return _empty_rankings(changed, emptied) if emptied else changed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.slow
def test_tampered_samples_give_the_per_query_outcome(scifact, data):
    result, qrels = scifact
    changed = _tampered(result, data)
    judgments = data.draw(st.sampled_from(["all", "some queries without judgments"]), label="qrels")
    if judgments != "all":
        dropped = set(data.draw(st.lists(st.sampled_from(list(changed.query_ids)), min_size=1, max_size=20)))
        kept = [i for i, query_id in enumerate(qrels.query_ids) if query_id not in dropped]
        qrels = Qrels([qrels.query_ids[i] for i in kept], [qrels.judgments[i] for i in kept])
    assert_same_outcome(changed, qrels)


def test_decoded_flat_arrays_and_the_queries_one_by_one_give_the_same_screen(scifact):
    """A file's samples are screened from their decoded flat arrays; samples made otherwise (evaluate's, or with
    queries replaced) from the queries one by one: the same columns, so the same suspects."""
    result, qrels = scifact
    assert result.score_samples.flat_scores() is not None
    samples = result.score_samples
    one_by_one = replace(result, score_samples=replace(samples, queries=dict(samples.queries)))
    assert one_by_one.score_samples.flat_scores() is None
    for flat, joined in zip(_sample_columns(samples, result.query_ids),
                            _sample_columns(one_by_one.score_samples, result.query_ids), strict=True):
        assert flat.dtype == joined.dtype and flat.tobytes() == joined.tobytes()
    # queries without judgments claim relevant documents the qrels do not have; emptied rankings are skipped
    kept = [i for i, query_id in enumerate(qrels.query_ids) if i % 7]
    partial = Qrels([qrels.query_ids[i] for i in kept], [qrels.judgments[i] for i in kept])
    for qrels_used in (qrels, partial):
        for rows in ([], [0, 5, 9]):
            a, b = (_empty_rankings(r, rows) if rows else r for r in (result, one_by_one))
            screened = _suspect_rows(a, qrels_used, entry_labels(a, qrels_used))
            assert screened.tolist() == _suspect_rows(b, qrels_used, entry_labels(b, qrels_used)).tolist()
    assert _suspect_rows(result, partial, entry_labels(result, partial)).size > 0


def test_repeated_qrels_queries_are_checked_one_by_one(scifact):
    result, qrels = scifact
    doubled = Qrels([*qrels.query_ids, qrels.query_ids[0]], [*qrels.judgments, qrels.judgments[0]])
    changed = _with_samples(result, {5: replace(_sample(result, 5), n_relevant=10_000)})
    assert_same_outcome(changed, doubled, exact=False)
    assert "n_relevant is 10000" in score_sample_problems(changed, doubled)[0]


@given(data=st.data())
@settings(max_examples=200, deadline=None)
def test_grouped_matching_counts_what_unmatched_counts_per_group(data):
    groups = data.draw(st.integers(1, 5))
    grid = st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-5, 1.0 - 1e-5, 2.0, 2.5, -3.0, 1e-5, 1e300])
    values, value_groups, targets, target_groups = [], [], [], []
    for group in range(groups):
        for pool, owner, size in ((values, value_groups, 6), (targets, target_groups, 6)):
            drawn = data.draw(st.lists(grid, max_size=size))
            pool += drawn
            owner += [group] * len(drawn)
    tolerance = np.array(data.draw(st.lists(st.sampled_from([0.0, 1e-5, 0.5, 1.0]), min_size=groups,
                                            max_size=groups)))
    values, targets = np.array(values, dtype=np.float64), np.array(targets, dtype=np.float64)
    value_groups, target_groups = np.array(value_groups, dtype=np.int64), np.array(target_groups, dtype=np.int64)
    # targets in group order, as the screen passes them; values in any order
    expected = [_unmatched(values[value_groups == g], np.sort(targets[target_groups == g]), float(tolerance[g]))
                for g in range(groups)]
    got = _unmatched_by_group(values, value_groups, targets, target_groups, tolerance, groups)
    assert got.tolist() == expected


@given(observed=st.integers(-2, 60), population=st.integers(-1, 3000), higher=st.integers(-1, 120),
       drawn=st.integers(-1, 2000))
@settings(max_examples=400, deadline=None)
def test_the_tail_bound_decides_as_scipy_does(observed, population, higher, drawn):
    got = _implausible(*(np.array([x], dtype=np.int64) for x in (observed, population, higher, drawn)))
    assert got.tolist() == [bool(hypergeom.cdf(observed, population, higher, drawn) < IMPLAUSIBLE)]


def test_the_tail_bound_near_the_threshold():
    """Around p = 1e-6 the bound settles nothing and scipy decides, on both sides."""
    population, higher, drawn = 5000, 60, 2000
    observed = np.arange(0, 40)
    p = hypergeom.cdf(observed, population, higher, drawn)
    assert (p < IMPLAUSIBLE).any() and (p >= IMPLAUSIBLE).any()
    args = [np.full(observed.size, x, dtype=np.int64) for x in (population, higher, drawn)]
    assert _implausible(observed, *args).tolist() == (p < IMPLAUSIBLE).tolist()


def test_the_plausibility_level_is_for_the_whole_file(scifact):
    """A query's sample is implausible below IMPLAUSIBLE / (queries in the file), not below IMPLAUSIBLE: an honest
    file of any size is then rejected with probability at most IMPLAUSIBLE (Bonferroni over its queries)."""
    result, qrels = scifact
    n = len(result.query_ids)
    assert implausible_below(result) == IMPLAUSIBLE / n
    judged = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    labels = entry_labels(result, qrels)
    run, level, levels = result.run, result.settings.relevance_level, result.score_samples.levels

    def tail(row):  # (sample, last score, step, ranked non-relevant scores above t + step) as the check sees them
        sample, t = _sample(result, row), _last_score(result, row)
        step = float(sample.nonrelevant[-1] - sample.nonrelevant[0]) / levels + SCORE_TOLERANCE * max(1.0, abs(t))
        ranked = run.scores[run.offsets[row]:run.offsets[row + 1]]
        nonrelevant = ranked[labels[run.offsets[row]:run.offsets[row + 1]] < level]
        return sample, t, step, int(np.count_nonzero(nonrelevant > t + step))

    row = max(range(n), key=lambda r: tail(r)[3])
    sample, t, step, higher = tail(row)
    above = np.flatnonzero(sample.nonrelevant > t - step)[:-1]  # keep the largest: the step stays the same
    outcomes = {}
    for dropped in range(above.size + 1):
        kept = np.delete(sample.nonrelevant, above[:dropped])
        p = hypergeom.cdf(above.size + 1 - dropped, sample.n_nonrelevant, higher, kept.size)
        band = "file" if p < IMPLAUSIBLE / n else "query" if p < IMPLAUSIBLE else "plausible"
        if band not in outcomes:
            changed = _with_samples(result, {row: replace(sample, nonrelevant=kept)})
            outcomes[band] = (p, query_sample_problem(changed, row, judged.get(result.query_ids[row], {})))
            assert_same_outcome(changed, qrels)
    assert set(outcomes) == {"plausible", "query", "file"}, outcomes
    assert outcomes["plausible"][1] is None and outcomes["query"][1] is None  # p < 1e-6 alone rejects no longer
    assert "not a uniform sample" in outcomes["file"][1] and f"below {IMPLAUSIBLE / n:.1e}" in outcomes["file"][1]
