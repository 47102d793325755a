"""The corpus as Arrow record batches in a file, never a Python list of documents.

Documents go, as they are read, into an Arrow IPC file of `BATCH` rows a batch (columns id, title, text),
under `$IRBOARD_CACHE/corpora/` (see `corpus_root`), keyed by the source files' paths, sizes, times and inodes: a
second run opens the file instead of parsing the source again. Only the id column stays in memory (as one
Arrow array, not as Python strings), with 64-bit hashes of the ids sorted for lookups: about 16 bytes and the
id's own bytes a document. Titles and texts are read batch by batch when a range of documents is asked for,
through `pyarrow.OSFile` rather than a memory map: the batches read are then freed, whereas every mapped page
read would stay counted in the process's resident memory.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from evaluator.datasets.download import cache_root

BATCH = 4096  # documents per record batch: what one read of a range brings in beyond the range
SCHEMA = pa.schema([("id", pa.string()), ("title", pa.string()), ("text", pa.string())])
FORMAT_VERSION = 1


def corpus_root() -> Path:
    """`corpora/` in the cache (`evaluator.datasets.download.cache_root`)."""
    return cache_root() / "corpora"


def source_key(paths: Sequence[Path], id_key: str) -> str:
    """Names the Arrow file of a corpus read from `paths`: their resolved paths, sizes and modification times."""
    stats = [(p, p.stat()) for p in paths]
    parts = [{"path": str(p.resolve()), "size": s.st_size, "mtime_ns": s.st_mtime_ns, "inode": s.st_ino} for p, s in stats]
    text = json.dumps({"files": parts, "id_key": id_key, "version": FORMAT_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class CorpusWriter:
    """Appends documents to a new Arrow file; `finish` renames it into place (absent or whole, never half)."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        self._sink = pa.OSFile(str(self._partial), "wb")
        self._writer = pa.ipc.new_file(self._sink, SCHEMA)
        self._ids: list[str] = []
        self._titles: list[str] = []
        self._texts: list[str] = []
        self.count = 0

    def add(self, doc_id: str, title: str, text: str) -> None:
        self._ids.append(doc_id)
        self._titles.append(title)
        self._texts.append(text)
        self.count += 1
        if len(self._ids) == BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._ids:
            self._writer.write_batch(pa.record_batch([pa.array(self._ids, pa.string()),
                                                      pa.array(self._titles, pa.string()),
                                                      pa.array(self._texts, pa.string())], schema=SCHEMA))
            self._ids, self._titles, self._texts = [], [], []

    def finish(self) -> Corpus:
        """The corpus, read from the partial file; `keep` it once checked."""
        self._flush()
        self._close()
        return Corpus(self._partial)

    def _close(self) -> None:
        if not self._sink.closed:
            self._writer.close()
            self._sink.close()

    def keep(self, corpus: Corpus) -> Corpus:
        os.replace(self._partial, self.path)
        corpus.path = self.path
        return corpus

    def abandon(self) -> None:
        try:
            self._close()
        finally:
            self._partial.unlink(missing_ok=True)


class Corpus(Mapping[str, tuple[str, str]]):
    """Documents in file order: ``corpus[doc_id] == (title, text)``; ``ids`` is a sequence of the ids,
    ``documents(start, stop)`` the (title, text) pairs of a range, ``position(doc_id)`` the inverse of ``ids``."""

    def __init__(self, path: Path):
        self.path = Path(path)
        # Mapped, so that only the pages of the id column are read; read through a file, each batch would
        # come in whole (titles and texts too) and stay alive as long as its id column: the whole corpus.
        # concat_arrays copies the ids out of the mapping (one array too), so no mapped page stays in use.
        with pa.memory_map(str(self.path), "rb") as source:
            reader = pa.ipc.open_file(source)
            id_batches = [reader.get_batch(i).column(0) for i in range(reader.num_record_batches)]
            self._ids = pa.concat_arrays(id_batches) if id_batches else pa.array([], pa.string())
            sizes = [len(b) for b in id_batches]
            del id_batches
        if any(size != BATCH for size in sizes[:-1]):
            raise ValueError(f"{self.path}: not a corpus file of {BATCH}-document batches; delete it to read the source again")
        hashes = np.fromiter((hash(d) for d in _strings(self._ids)), np.int64, count=len(self._ids))
        self._order = np.argsort(hashes, kind="stable")
        self._sorted_hashes = hashes[self._order]
        self.ids = _Column(self, "id")
        self.titles = _Column(self, "title")
        self.texts = _Column(self, "text")

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self._find(doc_id) >= 0

    def __getitem__(self, doc_id: str) -> tuple[str, str]:
        at = self.position(doc_id)
        return self.documents(at, at + 1)[0]

    def __repr__(self) -> str:
        return f"Corpus({len(self)} documents)"

    def position(self, doc_id: str) -> int:
        at = self._find(doc_id)
        if at < 0:
            raise KeyError(doc_id)
        return at

    def _find(self, doc_id: str) -> int:
        h = hash(doc_id)
        i = int(np.searchsorted(self._sorted_hashes, h))
        while i < len(self._sorted_hashes) and self._sorted_hashes[i] == h:
            candidate = int(self._order[i])
            if self._ids[candidate].as_py() == doc_id:
                return candidate
            i += 1
        return -1

    def first_duplicate(self) -> tuple[int, int] | None:
        """(earlier, later) positions of the first id, in file order, that repeats an earlier one; None if none."""
        same = self._sorted_hashes[1:] == self._sorted_hashes[:-1]
        starts = np.flatnonzero(same & ~np.concatenate(([False], same[:-1])))  # runs of equal hashes
        found: tuple[int, int] | None = None
        for start in starts.tolist():
            stop = start + 1
            while stop < len(self._sorted_hashes) and self._sorted_hashes[stop] == self._sorted_hashes[start]:
                stop += 1
            run = sorted(int(p) for p in self._order[start:stop])
            ids = [self._ids[p].as_py() for p in run]  # equal hashes: the ids decide (hashes may collide)
            for j in range(1, len(run)):
                if ids[j] in ids[:j] and (found is None or run[j] < found[1]):
                    found = (run[ids.index(ids[j])], run[j])
        return found

    def take_ids(self, positions: np.ndarray) -> list[str]:
        """The ids at `positions` (an integer array), as Python strings."""
        return self._ids.take(pa.array(np.asarray(positions, np.int64))).to_pylist()

    def positions_of(self) -> Mapping[str, int]:
        """A read-only mapping doc_id -> position over this corpus (no dict of all ids is built)."""
        return _Positions(self)

    def byte_order_keys(self) -> np.ndarray:
        """Integer keys that sort like the ids' UTF-8 bytes (Arrow sorts strings by their bytes)."""
        import pyarrow.compute as pc

        order = pc.sort_indices(self._ids).to_numpy()
        keys = np.empty(len(self), np.int64)
        keys[order] = np.arange(len(self))
        return keys

    def documents(self, start: int, stop: int) -> list[tuple[str, str]]:
        """(title, text) of the documents at positions [start, stop)."""
        out: list[tuple[str, str]] = []
        for batch, lo, hi in self._batches(start, stop):
            out.extend(zip(_strings(batch.column(1).slice(lo, hi - lo)),
                           _strings(batch.column(2).slice(lo, hi - lo)), strict=True))
        return out

    def column(self, name: str, start: int, stop: int) -> list[str]:
        index = SCHEMA.get_field_index(name)
        if index == 0:
            return _strings(self._ids.slice(start, max(stop - start, 0)))
        return [s for batch, lo, hi in self._batches(start, stop) for s in
                _strings(batch.column(index).slice(lo, hi - lo))]

    def view(self) -> DocumentsView:
        """The documents as a sequence of (title, text) that reads only the slices asked for."""
        return DocumentsView(self)

    def _batches(self, start: int, stop: int):
        return _batches(str(self.path), max(start, 0), min(stop, len(self)))


def read_documents(location: str, start: int, stop: int) -> list[tuple[str, str]]:
    """(title, text) of the documents at positions [start, stop) of the corpus file at `location`, a local
    path or a URI that `pyarrow.fs` opens (`s3://…`, `gs://…`): what a worker on another machine reads of its
    shard, without the ids' lookup table that `Corpus` builds."""
    out: list[tuple[str, str]] = []
    for batch, lo, hi in _batches(location, start, stop):
        out.extend(zip(_strings(batch.column(1).slice(lo, hi - lo)), _strings(batch.column(2).slice(lo, hi - lo)),
                       strict=True))
    return out


def _open(location: str):
    if "://" in location:
        import pyarrow.fs

        filesystem, path = pyarrow.fs.FileSystem.from_uri(location)
        return filesystem.open_input_file(path)
    return pa.OSFile(location, "rb")


def _batches(location: str, start: int, stop: int):
    """(batch, first row, end row) of the batches covering [start, stop): every batch but the last holds
    BATCH rows (CorpusWriter writes them so), so batch b starts at b * BATCH."""
    if start >= stop:
        return
    with _open(location) as source:
        reader = pa.ipc.open_file(source)
        for b in range(start // BATCH, min((stop - 1) // BATCH + 1, reader.num_record_batches)):
            base = b * BATCH
            batch = reader.get_batch(b)
            yield batch, max(start - base, 0), min(stop - base, batch.num_rows)


def _strings(array) -> list[str]:
    """Python strings of a string array; nulls (absent titles) as ''."""
    return ["" if s is None else s for s in array.to_pylist()]


class DocumentsView(Sequence[tuple[str, str]]):
    """`corpus.documents` as a sequence: `view[a:b]` reads that range; iteration reads a batch at a time."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus

    def __len__(self) -> int:
        return len(self.corpus)

    def __getitem__(self, item):
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step != 1:
                raise ValueError("a corpus view is sliced with step 1 only")
            return self.corpus.documents(start, stop)
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        return self.corpus.documents(item, item + 1)[0]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for start in range(0, len(self), BATCH):
            yield from self.corpus.documents(start, start + BATCH)


class _Column(Sequence[str]):
    """One column of the corpus as a read-only sequence (equal to a list holding the same strings)."""

    def __init__(self, corpus: Corpus, name: str):
        self.corpus, self.name = corpus, name

    def __len__(self) -> int:
        return len(self.corpus)

    def __getitem__(self, item):
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            return self.corpus.column(self.name, start, stop)[::step] if step > 0 else list(self)[item]
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        return self.corpus.column(self.name, item, item + 1)[0]

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), BATCH):
            yield from self.corpus.column(self.name, start, start + BATCH)

    def __eq__(self, other) -> bool:
        if isinstance(other, _Column | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class _Positions(Mapping[str, int]):
    def __init__(self, corpus: Corpus):
        self.corpus = corpus

    def __getitem__(self, doc_id: str) -> int:
        return self.corpus.position(doc_id)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.corpus

    def __iter__(self) -> Iterator[str]:
        return iter(self.corpus.ids)

    def __len__(self) -> int:
        return len(self.corpus)
