"""irboard as a library: evaluate runs, compare them with the leaderboard's statistics, read and check result
files, build the site and predict recall at larger corpus sizes (docs/api.md).

    import irboard
    irboard.evaluate("run.trec", "qrels.txt", "nDCG@10,R@100")            # {'nDCG@10': 0.67, 'R@100': 0.92}
    irboard.evaluate(run_dict, qrels_dict, ["AP"], per_query=True)       # DataFrame, one row per judged query

Every function takes typed keyword arguments; the `irboard` command only parses arguments for them.
"""

from __future__ import annotations

from evaluator import __version__
from irboard import errors
from irboard.evaluation import evaluate
from irboard.results import Result, build, predict_recall, read_result, validate

__all__ = ["Result", "__version__", "build", "errors", "evaluate", "predict_recall", "read_result", "validate"]
