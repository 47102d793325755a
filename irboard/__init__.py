"""irboard as a library: evaluate runs, compare them with the leaderboard's statistics, read and check result
files, build the site and predict recall at larger corpus sizes (docs/api.md).

    import irboard
    irboard.evaluate("run.trec", "qrels.txt", "nDCG@10,R@100")            # {'nDCG@10': 0.67, 'R@100': 0.92}
    irboard.evaluate(run_dict, qrels_dict, ["AP"], per_query=True)       # DataFrame, one row per judged query
    irboard.compare({"bm25": "bm25.trec", "dense": "dense.trec"}, "qrels.txt", "nDCG@10").to_markdown()

Every function takes typed keyword arguments; the `irboard` command only parses arguments for them. Each is
imported when first used, so that `import irboard` stays quick (no numpy, pandas or scipy until needed).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from evaluator import __version__
from irboard import errors

if TYPE_CHECKING:
    from irboard.comparison import Report, compare
    from irboard.evaluation import evaluate
    from irboard.results import Result, build, evaluate_model, predict_recall, read_result, validate

_HOMES = {"Report": "comparison", "compare": "comparison", "evaluate": "evaluation", "Result": "results",
          "build": "results", "evaluate_model": "results", "predict_recall": "results", "read_result": "results",
          "validate": "results"}

__all__ = ["Report", "Result", "__version__", "build", "compare", "errors", "evaluate", "evaluate_model",
           "predict_recall", "read_result", "validate"]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'irboard' has no attribute {name!r}")
    value = getattr(import_module(f"irboard.{_HOMES[name]}"), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
