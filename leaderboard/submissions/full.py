"""Split results: the readable part and the main metric's per-query values in git, the full file outside it.

`irboard split RESULT --url-base URL --out-dir DIR` copies the full version-3 file, byte for byte, to
`DIR/<sha256>.json` (to be uploaded under URL) and rewrites RESULT as the split file: the same readable part,
`per_query` with the dataset's main metric only, and `full: {url, sha256, bytes}`.

Verification fetches the full file into `$IRBOARD_CACHE/full/<sha256>.json` (from `$IRBOARD_FULL_MIRROR`, a
folder or URL holding `<sha256>.json`, when set, else from the project's store; `full.url`, an address the
submitter chose, only with `validate --allow-any-full-url`), reading no more than `full.bytes`,
checks its sha256, reads it with `read_result`, and requires its readable part and main-metric values to
equal the split file's; it is then re-scored like any whole file (docs/result-format.md).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from evaluator.datasets.download import cache_root, fetch_file, file_sha256
from evaluator.errors import DownloadMismatchError, IrboardError, ResultValidationError
from evaluator.result import (
    SCHEMA_VERSION,
    FullAddress,
    ResultFile,
    build_result,
    dump_result,
    read_result,
    split_size_limit,
    write_atomic,
)

FULL_MIRROR_ENV = "IRBOARD_FULL_MIRROR"
# Where the project keeps the full files of split results, content-addressed (<sha256>.json; docs/result-format.md).
# CI verifies from here (IRBOARD_FULL_MIRROR), never from the address a pull request writes into its files.
FULL_STORE = "https://huggingface.co/datasets/irboard/full-results/resolve/main"
_READABLE_BLOCKS = ("model", "dataset", "settings", "metrics", "provenance")


def split_problems(result: ResultFile) -> list[str]:
    """What keeps a split result from serving the site: its per_query must hold the dataset's main metric."""
    from leaderboard.submissions.catalog import main_metric  # the dataset registry, loaded only when needed

    metric = main_metric(result.dataset.id)
    if result.full is None or metric in result.per_query:
        return []
    return [f"per_query holds {sorted(result.per_query)}, not the main metric {metric} of {result.dataset.id}; "
            "split the full file again with `irboard split`"]


def split_result(path: Path, url_base: str, out_dir: Path) -> FullAddress:
    """Write `path`'s full file to `out_dir/<sha256>.json` and rewrite `path` as its split file."""
    result = read_result(path)
    if result.full is not None:
        raise ResultValidationError(f"{path}: already a split file (its full file: {result.full.url})")
    if result.source_version != SCHEMA_VERSION:
        raise ResultValidationError(f"{path}: schema version {result.source_version}; run `irboard migrate` first")
    from leaderboard.submissions.catalog import main_metric

    metric = main_metric(result.dataset.id)
    if metric not in result.per_query:
        raise ResultValidationError(f"{path}: has no values of {metric}, the main metric of {result.dataset.id}; "
                                    "evaluate with it")
    data = path.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        full = FullAddress(url=f"{url_base.rstrip('/')}/{sha256}.json", sha256=sha256, bytes=len(data))
    except ValidationError:
        raise ResultValidationError(f"--url-base {url_base!r}: expected an http:// or https:// address without "
                                    "spaces or quotes") from None
    split = build_result(result.header, result.query_ids, {metric: result.per_query[metric]}, source=str(path),
                         full=full)
    text = dump_result(split)
    limit = split_size_limit(result.dataset.num_queries)
    if len(text) > limit:  # pragma: no cover - the main metric alone stays far under the cap
        raise ResultValidationError(f"{path}: the split file would take {len(text)} bytes, over its cap of {limit}")
    try:
        write_atomic(out_dir / f"{sha256}.json", data)  # the exact bytes the sha256 names
        write_atomic(path, text)  # last: until here `path` is the whole file
    except OSError as error:
        raise IrboardError(f"{error.filename or out_dir}: cannot write ({error.strerror}); check --out-dir and "
                           "the result's folder") from None
    return full


def cached_full(sha256: str) -> Path:
    return cache_root() / "full" / f"{sha256}.json"


def full_store() -> str:
    """Where full files are fetched from: `$IRBOARD_FULL_MIRROR` (a folder or URL) when set, else the project's
    store. Never the address a submitted file names, unless a caller allows it (`validate --allow-any-full-url`)."""
    mirror = os.environ.get(FULL_MIRROR_ENV, "").strip()
    if not mirror:
        return FULL_STORE
    if "://" not in mirror:  # a folder
        mirror = Path(mirror).expanduser().resolve().as_uri()
    return mirror.rstrip("/")


def _full_url(address: FullAddress, any_url: bool = False) -> str:
    return address.url if any_url else f"{full_store()}/{address.sha256}.json"


def fetch_full(address: FullAddress, any_url: bool = False) -> Path:
    """The cached full file (its sha256 checked), fetched first when missing or damaged, from the store
    (`full_store`), or from `full.url` when `any_url`.
    DatasetLoadError: it cannot be had; DownloadMismatchError: the address serves another file."""
    dest = cached_full(address.sha256)
    if dest.is_file() and file_sha256(dest) != address.sha256:
        dest.unlink()  # a damaged cache entry: fetch it again
    hint = (f"set {FULL_MIRROR_ENV} to a folder or URL holding {address.sha256}.json, or copy the file to {dest} "
            "(`irboard validate --allow-any-full-url` fetches the address the file names)")
    return fetch_file(_full_url(address, any_url), address.sha256, dest, hint, max_bytes=address.bytes)


def resolve_full(split: ResultFile, any_url: bool = False) -> ResultFile:
    """The full file of a split result, fetched, read and checked against the split file.

    ResultValidationError: the full file is not the split file's (reject the result); DatasetLoadError: it
    cannot be fetched (the result stays valid but unverified)."""
    address = split.full
    try:
        path = fetch_full(address, any_url)
    except DownloadMismatchError as error:
        raise ResultValidationError(f"full: {error}") from None
    if path.stat().st_size != address.bytes:
        raise ResultValidationError(f"full.bytes is {address.bytes} but the file with its sha256 has "
                                    f"{path.stat().st_size} bytes; split the full file again with `irboard split`")
    try:
        full = read_result(path)
    except ResultValidationError as error:
        raise ResultValidationError(f"full file {address.url}: {error}") from None
    if full.full is not None:
        raise ResultValidationError(f"full file {address.url}: is itself a split file; address the whole file")
    differing = [block for block in _READABLE_BLOCKS if getattr(full.header, block) != getattr(split.header, block)]
    if differing:
        raise ResultValidationError(f"full file {address.url}: its {', '.join(differing)} differ from the split "
                                    "file's; split the full file again with `irboard split`")
    for metric, values in sorted(split.per_query.items()):
        if full.query_ids != split.query_ids or not np.array_equal(full.per_query[metric], values):
            raise ResultValidationError(f"full file {address.url}: per_query[{metric!r}] differs from the split "
                                        "file's; split the full file again with `irboard split`")
    return full
