"""On-disk cache of corpus encodings, written chunk by chunk so an interrupted run resumes where it stopped.

Layout: `<root>/<sha256 of the key parts>/` holding `meta.json`, `chunk-000000.npy` (dense) or
`chunk-000000.npz` (scipy CSR), ... and a `complete` marker once every chunk is there. Each chunk is
written to a temporary file and renamed into place, so a chunk file is either absent or whole, even
after `kill -9`; a rerun encodes only the missing chunks and returns the same array.

The key parts must name everything the encodings depend on: model id, revision and settings, dataset
id (and a corpus checksum where there is one). The default root is `$IRBOARD_CACHE/encodings`, else
`$XDG_CACHE_HOME/irboard/encodings`, else `~/.cache/irboard/encodings`. One writer per entry at a time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
ENCODE_CHUNK = 1024  # documents per cached chunk: what an interrupted run loses at most
COMPLETE_MARKER = "complete"


def default_cache_root() -> Path:
    """`$IRBOARD_CACHE/encodings`, else `$XDG_CACHE_HOME/irboard/encodings`, else `~/.cache/irboard/encodings`."""
    if os.environ.get("IRBOARD_CACHE"):
        base = Path(os.environ["IRBOARD_CACHE"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "irboard"
    return base / "encodings"


def cache_key(key_parts: dict) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of `key_parts`."""
    canonical = json.dumps(key_parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class EncodingCache:
    """One cache entry: the chunks of one corpus encoded by one model with one set of settings."""

    def __init__(self, root: str | Path | None, key_parts: dict):
        self.key_parts = dict(key_parts)
        self.key = cache_key(self.key_parts)
        self.path = Path(root if root is not None else default_cache_root()) / self.key

    @property
    def is_complete(self) -> bool:
        return (self.path / COMPLETE_MARKER).exists()

    def chunk_file(self, index: int) -> Path | None:
        """The written file of chunk `index`, or None when it is missing."""
        for suffix in (".npy", ".npz"):
            path = self.path / f"chunk-{index:06d}{suffix}"
            if path.exists():
                return path
        return None

    def prepare(self, num_items: int, chunk_size: int) -> None:
        """Create the entry, or check an existing one; chunks of a different layout are discarded."""
        meta = {"format_version": FORMAT_VERSION, "key": self.key_parts, "num_items": num_items,
                "chunk_size": chunk_size}
        meta = json.loads(json.dumps(meta, default=str))  # the form it takes on disk
        meta_path = self.path / "meta.json"
        if meta_path.exists():
            try:
                existing = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                existing = None
            if existing == meta:
                self._remove_temporary_files()
                return
            logger.warning("encoding cache %s: layout changed (%s), encoding again", self.path, meta_path)
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        _write_atomically(meta_path, lambda f: f.write(json.dumps(meta, indent=2, sort_keys=True).encode()))

    def write_chunk(self, index: int, encoded) -> None:
        if isinstance(encoded, np.ndarray):
            path = self.path / f"chunk-{index:06d}.npy"
            _write_atomically(path, lambda f: np.save(f, encoded, allow_pickle=False))
        else:
            import scipy.sparse as sp

            path = self.path / f"chunk-{index:06d}.npz"
            _write_atomically(path, lambda f: sp.save_npz(f, sp.csr_matrix(encoded), compressed=False))

    def read_chunk(self, index: int):
        path = self.chunk_file(index)
        if path is None:
            return None
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        import scipy.sparse as sp

        return sp.load_npz(path).tocsr()

    def mark_complete(self) -> None:
        _write_atomically(self.path / COMPLETE_MARKER, lambda f: f.write(b"ok\n"))

    def _remove_temporary_files(self) -> None:
        for leftover in self.path.glob("*.tmp-*"):  # from a run killed while writing
            leftover.unlink(missing_ok=True)


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


def _write_atomically(path: Path, write: Callable) -> None:
    """Write through a temporary file in the same folder, flushed to disk, then rename over `path`."""
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
