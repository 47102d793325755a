"""Which metrics a ranking of a given depth determines.

A measure cut at k reads the top k of each ranking: a run ranked to depth d determines it when d >= k (nDCG@10 at
any depth from 10), or when the run ranked the whole corpus. An uncut measure (AP, RR, R-prec) reads the whole
ranking, which trec_eval takes to 1,000 by default, so it is determined from depth 1,000. A value that is not
determined (R@1000 of a depth-100 run equals its R@100) is never compared with one that is.
"""

from __future__ import annotations

from collections.abc import Iterable

from evaluator.metrics.names import parse_measure

UNCUT_DEPTH = 1000  # trec_eval's default depth (-M 1000): what an uncut measure reads


def depth_needed(metric: str) -> int:
    """The ranking depth `metric` (a canonical name such as 'R@1000') needs to be determined."""
    measure = parse_measure(metric)
    if measure.judged_only:  # a condensed top k may reach any depth to find k judged documents
        return UNCUT_DEPTH
    return measure.cutoff if measure.cutoff is not None else UNCUT_DEPTH


def is_determined(metric: str, top_k: int, num_docs: int | None = None) -> bool:
    """Whether a run ranked to `top_k` (of a corpus of `num_docs`, when known) determines `metric`."""
    return top_k >= depth_needed(metric) or (num_docs is not None and top_k >= num_docs)


def undetermined(metrics: Iterable[str], top_k: int, num_docs: int | None = None) -> list[str]:
    """The metrics of `metrics` that a run ranked to `top_k` does not determine, in the order given."""
    return [name for name in metrics if not is_determined(name, top_k, num_docs)]


def ranked_to(top_k: int) -> str:
    """How a page shows a metric the result's depth does not determine."""
    return f"–, ranked to {top_k:,}"


def why(metrics: Iterable[str], top_k: int) -> str:
    """'R@1000 needs a ranking of depth 1,000 but the run is ranked to 100'."""
    names = list(metrics)
    deepest = max(depth_needed(name) for name in names)
    return (f"{', '.join(names)} need{'s' if len(names) == 1 else ''} a ranking of depth {deepest:,} but the run is "
            f"ranked to {top_k:,}")


def deeper(metrics: Iterable[str]) -> str:
    """How to report them: rank deep enough."""
    deepest = max(depth_needed(name) for name in metrics)
    return f"rank {deepest:,} documents a query (for --model: --top-k {deepest}) to report them"


def remedy(metrics: Iterable[str], top_k: int) -> str:
    """The one-line fix for a result that states metrics its depth does not determine."""
    names = list(metrics)
    return (f"{why(names, top_k)}: re-run `irboard evaluate`, which leaves them out of a shallower run (the board "
            f"shows '{ranked_to(top_k)}'), or {deeper(names)}")
