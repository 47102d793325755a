"""The predicted Recall@k of one result file at another corpus size: what `irboard predict` prints and
`irboard.predict_recall` returns (the command's options are checked in leaderboard/commands/predict.py)."""

from __future__ import annotations

from collections.abc import Sequence

from evaluator.result import ResultFile
from leaderboard.analysis.scale_options import DEFAULT_GROWTH, DEFAULT_MODE, DEFAULT_TAIL


def predict_recall(result: ResultFile, docs: float, ks: Sequence[int] = (10, 100, 1000), growth: str = DEFAULT_GROWTH, mode: str = DEFAULT_MODE,
                   tail: str = DEFAULT_TAIL, source: str = "result") -> dict[str, object]:
    """Predicted Recall@k of `result` (a ResultFile with score samples) at `docs` documents, with its 95% band
    over queries when the method gives one; the same numbers `irboard predict` prints."""
    from leaderboard.analysis.scale import CannotPredictError, forecast

    try:
        found = forecast(result, [docs], list(ks), growth, mode, tail)
    except CannotPredictError as error:
        raise CannotPredictError(f"{source}: cannot predict recall at {docs:,.0f} documents: {error}") from None
    out: dict[str, object] = {f"R@{k}": round(float(found.recall[0, j]), 6) for j, k in enumerate(found.ks)}
    band = found.band()
    if band is not None:
        out["band"] = {f"R@{k}": [round(float(band[0, 0, j]), 6), round(float(band[1, 0, j]), 6)]
                       for j, k in enumerate(found.ks)}
        out["band_level"] = "95% bootstrap interval over queries"
    out.update({"docs": int(docs), "growth": growth, "mode": mode, "queries": found.queries,
                "dropped_queries": found.n_dropped})
    return out
