"""On-disk cache of corpus encodings, written chunk by chunk so an interrupted run resumes where it stopped.

Layout: `<root>/<sha256 of the key parts>/` holding `meta.json`, `chunk-000000.npy` (dense) or
`chunk-000000.npz` (scipy CSR), ... and a `complete` marker once every chunk is there. Each chunk is
written to a temporary file and renamed into place, so a chunk file is either absent or whole, even
after `kill -9`; a rerun encodes only the missing chunks and returns the same array.

The key parts must name everything the encodings depend on: model id, revision and settings, dataset
id (and a corpus checksum where there is one). The default root is `$IRBOARD_CACHE/encodings`, else
`$XDG_CACHE_HOME/irboard/encodings`, else `~/.cache/irboard/encodings`. One writer per entry at a time.

A root is a local folder or a URI that `pyarrow.fs` opens (`file://`, `s3://`, `gs://`), so the machines of a
Ray cluster can share encodings and shard checkpoints without a common mount. On object stores the move
that publishes a file is a copy then a delete; a reader still sees a file absent or whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

import numpy as np
import pyarrow.fs as pafs
from tqdm import tqdm

from evaluator.datasets.download import cache_root, file_sha256
from evaluator.errors import IrboardError

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
ENCODE_CHUNK = 1024  # documents per cached chunk: what an interrupted run loses at most
COMPLETE_MARKER = "complete"


def default_cache_root() -> Path:
    """`encodings/` in the cache (`evaluator.datasets.download.cache_root`)."""
    return cache_root() / "encodings"


def is_uri(location) -> bool:
    return isinstance(location, str) and "://" in location


def local_cache_dir(cache_dir: str | os.PathLike | None) -> Path | None:
    """The local folder for downloaded datasets under `--cache-dir`: the folder itself, the path of a
    `file://` URI, or None (the default cache) for a remote URI, which holds encodings only."""
    if cache_dir is None or not is_uri(cache_dir):
        return Path(cache_dir) if cache_dir is not None else None
    return Path(open_location(cache_dir)[1]) if str(cache_dir).startswith("file://") else None


def encodings_root(cache_dir: str | os.PathLike | None) -> str | Path:
    """Where encodings live under `--cache-dir` (a folder or a URI); the default root without one."""
    if cache_dir is None or cache_dir == "":
        return default_cache_root()
    if is_uri(cache_dir):
        return str(cache_dir).rstrip("/") + "/encodings"
    return Path(cache_dir) / "encodings"


def shared_corpus(path: Path, cache_dir: str | os.PathLike | None) -> tuple[str, str]:
    """(where every node reads the corpus's Arrow file, its sha256). With `--cache-dir` (a folder or a URI) the
    file is copied, streamed, to `<cache-dir>/corpora/<sha256>.arrow` unless it is there already: named by its
    content and moved into place whole, so worker machines need no copy of their own and a rerun, or another
    driver with the same corpus, uploads nothing. Without `--cache-dir` it is the local file (a path every node
    must see)."""
    digest = file_sha256(path)
    if cache_dir is None or cache_dir == "":
        return str(path), digest
    filesystem, root = open_location(cache_dir)
    files, name = Files(filesystem, f"{root.rstrip('/')}/corpora"), f"{digest}.arrow"
    if not files.exists(name):
        files.make()
        files.copy_in(name, Path(path))
    base = str(cache_dir).rstrip("/") if is_uri(cache_dir) else root.rstrip("/")
    return f"{base}/corpora/{name}", digest


def open_location(location: str | os.PathLike) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path on it) of a local folder or a `pyarrow.fs` URI."""
    if not is_uri(location):
        return pafs.LocalFileSystem(), str(Path(location).expanduser().absolute())
    try:
        return pafs.FileSystem.from_uri(str(location))
    except Exception as error:  # pyarrow raises ArrowInvalid, ArrowNotImplementedError, OSError, ...
        raise IrboardError(f"--cache-dir {location}: cannot open it ({error}); give a folder or a file://, s3:// "
                           "or gs:// URI") from None


def cache_key(key_parts: dict) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of `key_parts`."""
    canonical = json.dumps(key_parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class EncodingCache:
    """One cache entry: the chunks of one corpus encoded by one model with one set of settings.

    `root`: a folder or a URI (None: the default root); or a path on `filesystem` when one is given
    (a `pyarrow.fs` filesystem, such as a `SubTreeFileSystem`)."""

    def __init__(self, root: str | Path | None, key_parts: dict, filesystem: pafs.FileSystem | None = None):
        self.key_parts = dict(key_parts)
        self.key = cache_key(self.key_parts)
        if filesystem is None:
            filesystem, root = open_location(root if root is not None else default_cache_root())
        self.files = Files(filesystem, f"{str(root).rstrip('/')}/{self.key}")
        # on the local disk a Path, as callers and tests expect; elsewhere the path on the filesystem
        local = isinstance(filesystem, pafs.LocalFileSystem)
        self.path = Path(self.files.base) if local else PurePosixPath(self.files.base)

    @property
    def is_complete(self) -> bool:
        return self.files.exists(COMPLETE_MARKER)

    def chunk_file(self, index: int) -> str | None:
        """The name of the written file of chunk `index`, or None when it is missing."""
        return self.files.first_existing(f"chunk-{index:06d}")

    def prepare(self, num_items: int, chunk_size: int) -> None:
        """Create the entry, or check an existing one; chunks of a different layout are discarded."""
        meta = {"format_version": FORMAT_VERSION, "key": self.key_parts, "num_items": num_items,
                "chunk_size": chunk_size}
        meta = json.loads(json.dumps(meta, default=str))  # the form it takes on disk
        if self.files.exists("meta.json"):
            try:
                existing = json.loads(self.files.read_bytes("meta.json"))
            except (OSError, ValueError):
                existing = None
            if existing == meta:
                self.files.remove_temporary()
                return
            logger.warning("encoding cache %s: layout changed (meta.json), encoding again", self.files.base)
            self.files.remove_all()
        self.files.make()
        self.files.write("meta.json", json.dumps(meta, indent=2, sort_keys=True).encode())

    def write_chunk(self, index: int, encoded) -> None:
        self.files.write_matrix(f"chunk-{index:06d}", encoded)

    def read_chunk(self, index: int):
        name = self.chunk_file(index)
        return None if name is None else self.files.read_matrix(name)

    def mark_complete(self) -> None:
        self.files.write(COMPLETE_MARKER, b"ok\n")


class Files:
    """The files of one folder on a `pyarrow.fs` filesystem, each written atomically: to a temporary name,
    then moved into place, so a file is either absent or whole even after `kill -9` mid-write."""

    def __init__(self, filesystem: pafs.FileSystem, base: str):
        self.filesystem, self.base = filesystem, base

    def _path(self, name: str) -> str:
        return f"{self.base}/{name}"

    def exists(self, name: str) -> bool:
        return self.filesystem.get_file_info(self._path(name)).type != pafs.FileType.NotFound

    def first_existing(self, stem: str) -> str | None:
        """`stem.npy` or `stem.npz`, whichever is written; None when neither is."""
        return next((stem + suffix for suffix in (".npy", ".npz") if self.exists(stem + suffix)), None)

    def make(self) -> None:
        self.filesystem.create_dir(self.base, recursive=True)

    def remove_all(self) -> None:
        self.filesystem.delete_dir(self.base)

    def remove_temporary(self) -> None:
        """Delete leftovers of a writer killed mid-write."""
        selector = pafs.FileSelector(self.base, allow_not_found=True)
        for info in self.filesystem.get_file_info(selector):
            if ".tmp-" in info.base_name:
                self.filesystem.delete_file(info.path)

    def read_bytes(self, name: str) -> bytes:
        with self.filesystem.open_input_stream(self._path(name)) as source:
            return source.read()

    def read_matrix(self, name: str):
        """A numpy array (`.npy`) or a CSR matrix (`.npz`)."""
        with self.filesystem.open_input_file(self._path(name)) as source:
            if name.endswith(".npy"):
                return np.load(source, allow_pickle=False)
            import scipy.sparse as sp

            return sp.load_npz(source).tocsr()

    def write(self, name: str, data: bytes) -> None:
        self._write_atomically(name, lambda f: f.write(data))

    def copy_in(self, name: str, local: Path) -> None:
        """Copy the local file `local` here as `name`, 8 MiB at a time."""
        import shutil

        def copy(out):
            with open(local, "rb") as source:
                shutil.copyfileobj(source, out, 8 << 20)

        self._write_atomically(name, copy)

    def write_matrix(self, stem: str, matrix) -> None:
        """`stem.npy` for a numpy array, `stem.npz` (uncompressed CSR) for a sparse matrix."""
        if isinstance(matrix, np.ndarray):
            self._write_atomically(stem + ".npy", lambda f: np.save(f, matrix, allow_pickle=False))
        else:
            import scipy.sparse as sp

            self._write_atomically(stem + ".npz", lambda f: sp.save_npz(f, sp.csr_matrix(matrix), compressed=False))

    def _write_atomically(self, name: str, write: Callable) -> None:
        path = self._path(name)
        # unique across processes and machines sharing the folder
        temporary = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        if isinstance(self.filesystem, pafs.LocalFileSystem):  # a local disk: flushed to disk before the rename
            try:
                with open(temporary, "wb") as f:
                    write(f)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temporary, path)
            finally:
                Path(temporary).unlink(missing_ok=True)
            return
        try:
            with self.filesystem.open_output_stream(temporary) as out:
                write(out)
            self.filesystem.move(temporary, path)
        finally:
            if self.filesystem.get_file_info(temporary).type != pafs.FileType.NotFound:
                self.filesystem.delete_file(temporary)


def encode_cached(
    encode_fn: Callable[[list], object],
    items: Sequence,
    chunk_size: int,
    cache: EncodingCache | None,
    quiet: bool = False,
    desc: str = "encode",
):
    """Encode `items` in chunks of `chunk_size` with `encode_fn`, reusing and filling `cache`.

    `encode_fn(list_of_items)` returns a 2-d numpy array or a scipy sparse matrix with one row per
    item. Chunks already in the cache are read, not encoded. Returns the stacked result (a numpy array
    or a CSR matrix). `cache=None` encodes in chunks without writing anything. The progress bar counts
    items and is off with `quiet` or when stderr is not a terminal.
    """
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    num_items = len(items)
    num_chunks = (num_items + chunk_size - 1) // chunk_size
    if cache is not None:
        cache.prepare(num_items, chunk_size)
    stacked = _Stack(num_items)
    with tqdm(total=num_items, desc=desc, unit="item", disable=True if quiet else None) as progress:
        for index in range(num_chunks):
            start, stop = index * chunk_size, min((index + 1) * chunk_size, num_items)
            encoded = cache.read_chunk(index) if cache is not None else None
            if encoded is None or encoded.shape[0] != stop - start:
                encoded = encode_fn(list(items[start:stop]))
                if encoded.shape[0] != stop - start:
                    raise ValueError(f"{desc}: encoder returned {encoded.shape[0]} rows for {stop - start} items")
                if cache is not None:
                    cache.write_chunk(index, encoded)
            stacked.add(start, encoded)
            progress.update(stop - start)
    if cache is not None:
        cache.mark_complete()
    return stacked.result()


class _Stack:
    """Rows of all chunks: dense chunks are copied into one preallocated array as they come, so the
    peak is the result plus one chunk; sparse chunks are stacked at the end."""

    def __init__(self, num_items: int):
        self.num_items = num_items
        self.dense: np.ndarray | None = None
        self.sparse: list = []

    def add(self, start: int, chunk) -> None:
        if isinstance(chunk, np.ndarray):
            if self.dense is None:
                self.dense = np.empty((self.num_items,) + chunk.shape[1:], chunk.dtype)
            self.dense[start : start + chunk.shape[0]] = chunk
        else:
            self.sparse.append(chunk)

    def result(self):
        if self.sparse:
            import scipy.sparse as sp

            return sp.vstack(self.sparse, format="csr")
        return self.dense if self.dense is not None else np.zeros((0, 0), np.float32)
