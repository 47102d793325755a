"""`irboard predict RESULT --docs N`: the predicted Recall@k of one result file at another corpus size, as JSON.

Options are checked here rather than by argparse so that every bad value is one `error:` line and exit 1.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from evaluator.errors import UnknownNameError
from leaderboard.analysis.scale_options import DEFAULT_GROWTH, DEFAULT_MODE, DEFAULT_TAIL, GROWTHS, MODES

DEFAULT_KS = "10,100,1000"
MAX_DOCS = 10**12
FIX = "see irboard predict --help"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("result", type=Path, help="a result file with score samples")
    parser.add_argument("--docs", required=True, metavar="N", help="corpus size to predict at (documents)")
    parser.add_argument("--k", default=DEFAULT_KS, metavar="K,K,...", help=f"cut-offs (default {DEFAULT_KS})")
    parser.add_argument("--growth", default=DEFAULT_GROWTH, metavar="|".join(GROWTHS),
                        help="fixed-relevant: the relevant documents stay, non-relevant ones are added; uniform: "
                             f"relevant documents grow in proportion (default {DEFAULT_GROWTH})")
    parser.add_argument("--mode", default=DEFAULT_MODE, metavar="|".join(MODES),
                        help=f"per_query (the site's model), pooled (the SDM paper's) or rank (rank scaling); "
                             f"default {DEFAULT_MODE}")
    parser.add_argument("--tail", default=DEFAULT_TAIL, metavar="hybrid|skewnorm",
                        help=f"pooled mode's non-relevant tail (default {DEFAULT_TAIL})")


def _docs(text: str) -> float:
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value == math.floor(value) and 1 <= value <= MAX_DOCS):
        raise UnknownNameError(f"--docs {text!r}: expected a whole number of documents from 1 to {MAX_DOCS:.0e}; "
                               f"e.g. --docs 10000000")
    return value


def _ks(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",")]
    if not parts or not all(part.isdigit() and int(part) >= 1 for part in parts):
        raise UnknownNameError(f"--k {text!r}: expected positive whole numbers separated by commas, e.g. --k 10,100")
    return list(dict.fromkeys(int(part) for part in parts))


def _choice(option: str, value: str, choices) -> str:
    if value not in choices:
        raise UnknownNameError(f"{option} {value!r}: expected one of {', '.join(choices)}; {FIX}")
    return value


def run(args: argparse.Namespace) -> int:
    from evaluator.result import read_result
    from leaderboard.analysis.predict import predict_recall

    docs, ks = _docs(args.docs), _ks(args.k)
    growth = _choice("--growth", args.growth, GROWTHS)
    mode = _choice("--mode", args.mode, MODES)
    tail = _choice("--tail", args.tail, ("hybrid", "skewnorm"))
    print(json.dumps(predict_recall(read_result(args.result), docs, ks=ks, growth=growth, mode=mode, tail=tail,
                                    source=str(args.result))))
    return 0
