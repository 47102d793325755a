"""irboard as a library: evaluate runs, compare them with the leaderboard's statistics, read and check result
files, build the site and predict recall at larger corpus sizes (docs/api.md).

    import irboard
    irboard.evaluate("run.trec", "qrels.txt", "nDCG@10,R@100")            # {'nDCG@10': 0.67, 'R@100': 0.92}
    irboard.evaluate(run_dict, qrels_dict, ["AP"], per_query=True)       # DataFrame, one row per judged query
    irboard.compare({"bm25": "bm25.trec", "dense": "dense.trec"}, "qrels.txt", "nDCG@10").to_markdown()

Every function takes typed keyword arguments; the `irboard` command only parses arguments for them.
"""

from __future__ import annotations

from evaluator import __version__
from irboard import errors
from irboard.comparison import Report, compare
from irboard.evaluation import evaluate
from irboard.results import Result, build, evaluate_model, predict_recall, read_result, validate

__all__ = ["Report", "Result", "__version__", "build", "compare", "errors", "evaluate", "evaluate_model",
           "predict_recall", "read_result", "validate"]
