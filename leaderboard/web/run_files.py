"""The stored ranking of each result as a TREC run file (`query_id Q0 doc_id rank score tag`, gzip-compressed with
no time stamp, so the same result gives the same bytes), linked from its model page. Ids hold no whitespace (the
result format refuses it), so every line splits into its six fields.

Decoding every ranking again would undo the read cache on a warm build, so each run file is kept in
`$IRBOARD_CACHE/runs`, keyed by the result file's bytes, the tag and this code's version."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
from pathlib import Path

from evaluator.result import read_result, slugify, write_atomic


def run_path(model_slug: str, dataset_id: str) -> str:
    return f"downloads/runs/{model_slug}/{slugify(dataset_id)}.trec.gz"


def trec_run_gz(path: str, tag: str) -> bytes:
    """The ranking stored in the result file at `path`, in trec_eval's order, tagged `tag` (the model's slug)."""
    cached = _cached_path(path, tag)
    try:
        return cached.read_bytes()
    except OSError:
        pass
    rankings = read_result(path, with_samples=False).rankings()
    lines = [f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {tag}\n"
             for query_id, ranking in rankings.items() for rank, (doc_id, score) in enumerate(ranking, 1)]
    content = gzip.compress("".join(lines).encode("utf-8"), compresslevel=6, mtime=0)
    _keep(cached, content)
    return content


def _cached_path(path: str, tag: str) -> Path:
    from evaluator.datasets.download import cache_root
    from leaderboard.submissions.cache import code_version

    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    key = hashlib.sha256(f"{code_version(__name__)}\n{tag}\n{digest.hexdigest()}".encode()).hexdigest()
    return cache_root() / "runs" / key[:2] / f"{key}.trec.gz"


def _keep(path: Path, content: bytes) -> None:
    """Write `path` atomically; a cache that cannot be written is only a cache."""
    with contextlib.suppress(OSError):
        write_atomic(path, content, sync=False)
