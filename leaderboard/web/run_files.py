"""The stored ranking of each result as a TREC run file (`query_id Q0 doc_id rank score tag`, gzip-compressed with
no time stamp, so the same result gives the same bytes), linked from its model page. Ids hold no whitespace (the
result format refuses it), so every line splits into its six fields."""

from __future__ import annotations

import gzip

from evaluator.result import read_result, slugify


def run_path(model_slug: str, dataset_id: str) -> str:
    return f"downloads/runs/{model_slug}/{slugify(dataset_id)}.trec.gz"


def trec_run_gz(path: str, tag: str) -> bytes:
    """The ranking stored in the result file at `path`, in trec_eval's order, tagged `tag` (the model's slug)."""
    rankings = read_result(path, with_samples=False).rankings()
    lines = [f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {tag}\n"
             for query_id, ranking in rankings.items() for rank, (doc_id, score) in enumerate(ranking, 1)]
    return gzip.compress("".join(lines).encode("utf-8"), compresslevel=6, mtime=0)
