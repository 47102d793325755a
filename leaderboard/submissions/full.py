"""Split results: the readable part and the main metric's per-query values in git, the full file outside it.

`irboard split RESULT --url-base URL --out-dir DIR` copies the full version-3 file, byte for byte, to
`DIR/<sha256>.json` (to be uploaded under URL) and rewrites RESULT as the split file: the same readable part,
`per_query` with the dataset's main metric only, and `full: {url, sha256, bytes}`.

Verification fetches the full file into `$IRBOARD_CACHE/full/<sha256>.json` (from `$IRBOARD_FULL_MIRROR`, a
folder or URL holding `<sha256>.json`, when set, else from the project's store; then from `full.url` when it is on
one of the public hosts of ALLOWED_HOSTS; any other address the submitter chose only with `validate
--allow-any-full-url`), reading no more than `full.bytes`, checks its sha256, reads it with `read_result`, and
requires its readable part and main-metric values to equal the split file's; it is then re-scored like any whole
file (docs/result-format.md).

A result whose whole ranking does not fit its size cap may name its run file in the same way (`run.full`, written by
`irboard split RESULT --run RUN`): fetched from the same places as `<sha256>.run`, its sha256 checked, read as
`irboard evaluate --run` reads a run, required to hold the stored ranking (the top and the judged documents below
it), and re-scored whole (`resolve_full_run`), so that every metric is re-scored from the run's own bytes.
"""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from evaluator.datasets.download import cache_root, fetch_file, file_sha256
from evaluator.errors import DatasetLoadError, DownloadMismatchError, IrboardError, ResultValidationError
from evaluator.metrics import Qrels
from evaluator.result import (
    SCHEMA_VERSION,
    FullAddress,
    ResultFile,
    Run,
    build_result,
    dump_result,
    full_run_limit,
    read_result,
    split_size_limit,
    write_atomic,
)

FULL_MIRROR_ENV = "IRBOARD_FULL_MIRROR"
# Where the project keeps the full files of split results, content-addressed (<sha256>.json; docs/result-format.md).
# CI verifies from here (IRBOARD_FULL_MIRROR), never from the address a pull request writes into its files.
FULL_STORE = "https://huggingface.co/datasets/irboard/full-results/resolve/main"
_READABLE_BLOCKS = ("model", "dataset", "settings", "metrics", "provenance")
# The public hosts whose addresses a submitted file may name for its full file or run (https, no port, no user):
# the Hugging Face hub, GitHub release assets and Zenodo. Any other address is fetched only with
# `validate --allow-any-full-url`; the bytes are pinned by sha256 wherever they come from.
ALLOWED_HOSTS = ("huggingface.co", "github.com", "objects.githubusercontent.com", "zenodo.org")
FULL_RUN_SUFFIX = ".run"  # a full run file's name in the store, a mirror and the cache: <sha256>.run



def stored_address(url_base: str, data: bytes, suffix: str) -> FullAddress:
    """Where `data` goes in the store under `url_base`: named by its sha256 (split files and full runs alike)."""
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        return FullAddress(url=f"{url_base.rstrip('/')}/{sha256}{suffix}", sha256=sha256, bytes=len(data))
    except ValidationError:
        raise ResultValidationError(f"--url-base {url_base!r}: expected an http:// or https:// address without "
                                    "spaces or quotes") from None

def allowed_url(url: str) -> bool:
    """Is `url` an https address on one of ALLOWED_HOSTS (exactly that host, its default port, no user)?"""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    return parts.scheme == "https" and parts.hostname in ALLOWED_HOSTS and port is None and "@" not in parts.netloc


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
    full = stored_address(url_base, data, ".json")
    split = build_result(result.header, result.query_ids, {metric: result.per_query[metric]}, source=str(path),
                         full=full)
    text = dump_result(split)
    limit = split_size_limit(result.dataset.num_queries)
    if len(text) > limit:  # pragma: no cover - the main metric alone stays far under the cap
        raise ResultValidationError(f"{path}: the split file would take {len(text)} bytes, over its cap of {limit}")
    try:
        write_atomic(out_dir / f"{full.sha256}.json", data)  # the exact bytes the sha256 names
        write_atomic(path, text)  # last: until here `path` is the whole file
    except OSError as error:
        raise IrboardError(f"{error.filename or out_dir}: cannot write ({error.strerror}); check --out-dir and "
                           "the result's folder") from None
    return full


def cached_full(sha256: str, suffix: str = ".json") -> Path:
    return cache_root() / "full" / f"{sha256}{suffix}"


def full_store() -> str:
    """Where full files are fetched from: `$IRBOARD_FULL_MIRROR` (a folder or URL) when set, else the project's
    store. Never the address a submitted file names, unless a caller allows it (`validate --allow-any-full-url`)."""
    mirror = os.environ.get(FULL_MIRROR_ENV, "").strip()
    if not mirror:
        return FULL_STORE
    if "://" not in mirror:  # a folder
        mirror = Path(mirror).expanduser().resolve().as_uri()
    return mirror.rstrip("/")


def _full_urls(address: FullAddress, any_url: bool = False, suffix: str = ".json") -> list[str]:
    """Where a full file is fetched from, in order: the store (or mirror), then the address the file names when it is
    on an allowed host; with `any_url`, that address alone, whatever it is."""
    if any_url:
        return [address.url]
    return [f"{full_store()}/{address.sha256}{suffix}"] + ([address.url] if allowed_url(address.url) else [])


def fetch_full(address: FullAddress, any_url: bool = False, suffix: str = ".json") -> Path:
    """The cached full file (its sha256 checked), fetched first when missing or damaged (`_full_urls`).
    DatasetLoadError: it cannot be had; DownloadMismatchError: an address serves another file."""
    dest = cached_full(address.sha256, suffix)
    if dest.is_file() and file_sha256(dest) != address.sha256:
        dest.unlink()  # a damaged cache entry: fetch it again
    hint = (f"set {FULL_MIRROR_ENV} to a folder or URL holding {address.sha256}{suffix}, or copy the file to {dest} "
            f"(validate fetches the address the file names on {', '.join(ALLOWED_HOSTS)}; "
            "`irboard validate --allow-any-full-url` any address)")
    urls = _full_urls(address, any_url, suffix)
    for url in urls[:-1]:
        try:
            return fetch_file(url, address.sha256, dest, hint, max_bytes=address.bytes)
        except DownloadMismatchError:
            raise
        except DatasetLoadError:
            continue  # not there: the next address
    return fetch_file(urls[-1], address.sha256, dest, hint, max_bytes=address.bytes)


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


# ---------------------------------------------------------------------------------------------- full runs


def resolve_full_run(result: ResultFile, qrels: Qrels, any_url: bool = False) -> ResultFile:
    """`result` with its whole ranking read from its full run (`run.full`), once the run's bytes match their sha256
    and the run holds exactly the stored ranking (its rows: `qrels`'s queries, which must be the result's).

    ResultValidationError: another file, or a run that is not the result's (reject the result); DatasetLoadError:
    the run cannot be fetched (the stored ranking is then all there is to re-score)."""
    address = result.run.full
    try:
        path = fetch_full(address, any_url, FULL_RUN_SUFFIX)
    except DownloadMismatchError as error:
        raise ResultValidationError(f"run.full: {error}") from None
    return with_run_file(result, path, qrels, f"run.full {address.url}")


def with_run_file(result: ResultFile, path: Path, qrels: Qrels, where: str) -> ResultFile:
    """`result` with its whole ranking read from the run file at `path` (see resolve_full_run)."""
    from evaluator.below import judged_below
    from evaluator.run_formats import read_run_file

    settings, stored = result.settings, result.run
    try:
        top = read_run_file(path, qrels, ignore_identical_ids=settings.ignore_identical_ids, keep_top=None).ranking.top
    except IrboardError as error:
        raise ResultValidationError(f"{where}: {str(error).splitlines()[0]}") from None
    fix = "record the run the result was evaluated from with `irboard split RESULT --run RUN`"
    if int(top.lengths.max(initial=0)) > settings.top_k:
        raise ResultValidationError(f"{where}: ranks {int(top.lengths.max())} documents for a query, more than "
                                    f"settings.top_k {settings.top_k}; {fix}")
    cut = top.cut(stored.depth)
    differs = _first_difference(cut, stored, result.query_ids)
    if differs is None and stored.below is not None:
        below, kept = judged_below(top, qrels.judgments, stored.depth), stored.below
        same = [np.array_equal(below.totals, kept.totals), np.array_equal(below.counts, kept.counts),
                np.array_equal(below.ranks, kept.ranks), below.doc_ids == kept.doc_ids,
                np.array_equal(below.scores, kept.scores)]
        if not all(same):
            differs = "the judged documents below the stored depth (run.below)"
    if differs is not None:
        raise ResultValidationError(f"{where}: is not the run of this result: {differs} differ from the stored "
                                    f"ranking; {fix}")
    return replace(result, run=Run(settings.top_k, top.doc_ids, top.lengths, top.docs, top.scores))


def _first_difference(cut: Run, stored: Run, query_ids) -> str | None:
    """Where the top of a run file and a stored ranking first differ ("query X's ranking"), or None."""
    if not np.array_equal(cut.lengths, stored.lengths):
        row = int(np.flatnonzero(cut.lengths != stored.lengths)[0])
        return f"query {query_ids[row]!r}'s ranking length"
    same = np.ones(cut.docs.size, dtype=bool) if cut.docs.size else np.zeros(0, dtype=bool)
    ids = [cut.doc_ids[d] for d in cut.docs.tolist()]
    kept = [stored.doc_ids[d] for d in stored.docs.tolist()]
    same &= np.fromiter(map(str.__eq__, ids, kept), dtype=bool, count=len(ids)) & (cut.scores == stored.scores)
    if same.all():
        return None
    row = int(np.searchsorted(np.cumsum(cut.lengths), int(np.flatnonzero(~same)[0]), side="right"))
    return f"query {query_ids[row]!r}'s ranked documents or scores"


def add_full_run(path: Path, run_path: Path, url_base: str, out_dir: Path,
                 judgments: Callable[[str, str], Qrels | None]) -> FullAddress:
    """Copy the run file at `run_path` to `out_dir/<sha256>.run` (to be uploaded under `url_base`) and record it in
    the result at `path` as `run.full`, after checking that the run holds exactly the stored ranking against
    `judgments(dataset_id, split)` (`verify.qrels_for`; None: none at hand, validate checks it later)."""
    result = read_result(path)
    if result.full is not None or result.run is None:
        raise ResultValidationError(f"{path}: {'a split file' if result.full is not None else 'stores no ranking'}; "
                                    "record the run of a whole result file")
    try:
        data = run_path.read_bytes()
    except OSError as error:
        raise IrboardError(f"{run_path}: cannot read ({error.strerror}); check --run") from None
    limit = full_run_limit(result.dataset.num_queries)
    if len(data) > limit:
        raise ResultValidationError(f"{run_path}: {len(data)} bytes, over the cap of {limit} for "
                                    f"{result.dataset.num_queries} queries (1 MB + 16 KB a query); compress it "
                                    "(gzip or xz)")
    full = stored_address(url_base, data, FULL_RUN_SUFFIX)
    try:
        qrels = judgments(result.dataset.id, result.dataset.split)
    except DatasetLoadError:
        qrels = None  # validate checks it once the judgments can be had
    if qrels is not None and tuple(qrels.query_ids) == result.query_ids:
        with_run_file(result, run_path, qrels, str(run_path))
    recorded = replace(result, run=replace(result.run, full=full))
    try:
        write_atomic(out_dir / f"{full.sha256}{FULL_RUN_SUFFIX}", data)
        write_atomic(path, dump_result(recorded))
    except OSError as error:
        raise IrboardError(f"{error.filename or out_dir}: cannot write ({error.strerror}); check --out-dir and "
                           "the result's folder") from None
    return full
