"""`irboard.evaluate`: metric values of a run against judgments, the same numbers as `irboard evaluate --run`."""

from __future__ import annotations

from typing import Any

from irboard.inputs import MetricsLike, QrelsLike, RunLike, check_flag, check_relevance_level


def evaluate(run: RunLike, qrels: QrelsLike, metrics: MetricsLike = "nDCG@10,R@100", *, per_query: bool = False,
             relevance_level: int | None = None, ignore_identical_ids: bool = False, judged: bool = False,
             bounds: bool = False, judgments: str | None = None) -> dict[str, float] | Any:
    """Means of `metrics` over the judged queries (trec_eval's semantics: a judged query the run lacks scores 0;
    run queries without judgments are ignored), or with `per_query` a pandas DataFrame of per-query values
    indexed by query id (one column per metric).

    With `judged`, each metric gains "<metric> judged": Judged@k at its cutoff (the whole ranking for an uncut
    metric), as ir_measures defines it. With `bounds`, "<metric> hole_low" and "<metric> hole_high": the minimum
    and maximum over every labelling of the unjudged documents the metric reads (docs/metrics.md, "Unjudged
    documents"); as means, the range of the mean. A metric without bounds (ARP) is an UnknownNameError.

    `run`: a path (any format `irboard evaluate --run` reads: TREC, MS MARCO, a JSON run dictionary, compressed or
    not), {query_id: {doc_id: score}}, a DataFrame with query_id, doc_id, score, or a
    RankedRun. `qrels`: a path (TREC qrels or BEIR TSV), {query_id: {doc_id: relevance}}, a DataFrame with
    query_id, doc_id, relevance, or a Qrels. `metrics`: "nDCG@10,R@100", Measures, or a list of either.
    Input that would be misread (see irboard/inputs.py) raises an `irboard.errors` error naming it.

    `judgments`: a judgment set of the dataset whose id `qrels` then is (its name, "official", or its sha256 or a
    12-digit prefix; docs/datasets.md, "Judgment sets"): the run is scored against that set's qrels."""
    from evaluator.metrics import evaluate as evaluate_ranked
    from irboard.inputs import mean, set_judgments, to_judgments, to_measures, to_ranked

    per_query = check_flag(per_query, "per_query")
    judged, bounds = check_flag(judged, "judged"), check_flag(bounds, "bounds")
    relevance_level = check_relevance_level(relevance_level, qrels if judgments is not None else None)
    ignore_identical_ids = check_flag(ignore_identical_ids, "ignore_identical_ids")
    judgments = set_judgments(qrels, judgments) if judgments is not None else to_judgments(qrels)
    measures = to_measures(metrics)
    ranked = to_ranked(run, judgments, ignore_identical_ids)
    stats = judgments.qrels.label_stats(relevance_level)
    values = evaluate_ranked(ranked, stats, measures, relevance_level)
    if judged or bounds:
        values = _with_holes(values, ranked, stats, measures, relevance_level, judged, bounds)
    if not per_query:
        return {name: mean(array) for name, array in values.items()}
    import pandas as pd

    return pd.DataFrame(values, index=pd.Index(judgments.qrels.query_ids, name="query_id"))


def _with_holes(values: dict, ranked, stats, measures, relevance_level: int, judged: bool, bounds: bool) -> dict:
    """Each metric's column followed by its Judged@k and hole bounds, as asked."""
    from evaluator.metrics.holes import hole_bounds, judged_at

    if bounds:  # every name checked before any work
        holes = {str(m): hole_bounds(ranked, stats, m, relevance_level) for m in measures}
    columns = {}
    for measure in measures:
        name = str(measure)
        columns[name] = values[name]
        if judged:
            columns[f"{name} judged"] = judged_at(ranked, measure.cutoff)
        if bounds:
            columns[f"{name} hole_low"], columns[f"{name} hole_high"] = holes[name].low, holes[name].high
    return columns
