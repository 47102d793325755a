"""The stored ranking of each result as a TREC run file (`query_id Q0 doc_id rank score tag`, gzip-compressed with
no time stamp, so the same result gives the same bytes), linked from its model page. Ids hold no whitespace (the
result format refuses it), so every line splits into its six fields.

Decoding every ranking again would undo the read cache on a warm build, so each run file is kept in
`$IRBOARD_CACHE/runs`, keyed by the sha256 of the result file's bytes, the tag and this code's version. On a cold
build the read step hands over each ranking it decoded (`keep_decoded`), so the file is not read a second time for
its run file (a quarter of a cold build's time went to that)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
from pathlib import Path

from evaluator.datasets import download
from evaluator.result import ResultFile, read_result, read_result_bytes, slugify, write_atomic


def run_path(model_slug: str, dataset_id: str) -> str:
    return f"downloads/runs/{model_slug}/{slugify(dataset_id)}.trec.gz"


def trec_run_gz(path: str, tag: str) -> bytes:
    """The ranking stored in the result file at `path`, in trec_eval's order, tagged `tag` (the model's slug)."""
    try:
        # hashed in 1 MiB blocks: a warm build finds its run files without holding a result in memory
        return _cached_path(download.file_sha256(Path(path)), tag).read_bytes()
    except OSError:
        pass  # not kept yet (or the result cannot be read: read_result_bytes says so)
    content = read_result_bytes(path)
    run_file = _trec_gz(read_result(path, content=content, with_samples=False), tag)
    _keep(_cached_path(hashlib.sha256(content).hexdigest(), tag), run_file)
    return run_file


def keep_decoded(file_sha256: str, result: ResultFile) -> None:
    """Keep the run file of `result`, read and validated with its ranking from bytes whose sha256 is `file_sha256`,
    tagged with its model's slug, for trec_run_gz to find (`build_site` passes this to the read step)."""
    if result.run is not None:
        tag = slugify(result.model.id)
        path = _cached_path(file_sha256, tag)
        if not path.exists():  # kept before: same bytes, same tag, same code, so the same run file
            _keep(path, _trec_gz(result, tag))


def _trec_gz(result: ResultFile, tag: str) -> bytes:
    lines = [f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {tag}\n"
             for query_id, ranking in result.rankings().items() for rank, (doc_id, score) in enumerate(ranking, 1)]
    return gzip.compress("".join(lines).encode("utf-8"), compresslevel=6, mtime=0)


def _cached_path(file_sha256: str, tag: str) -> Path:
    from leaderboard.submissions.cache import code_version

    key = hashlib.sha256(f"{code_version(__name__)}\n{tag}\n{file_sha256}".encode()).hexdigest()
    return download.cache_root() / "runs" / key[:2] / f"{key}.trec.gz"


def _keep(path: Path, content: bytes) -> None:
    """Write `path` atomically; a cache that cannot be written is only a cache."""
    with contextlib.suppress(OSError):
        write_atomic(path, content, sync=False)
