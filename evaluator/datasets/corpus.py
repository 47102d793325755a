"""The corpus as Arrow record batches in a file, never a Python list of documents.

Documents go, as they are read, into an Arrow IPC file of `BATCH` rows a batch (columns id, title, text),
under `$IRBOARD_CACHE/corpora/` (see `corpus_root`), keyed by the source files' paths, sizes, times and inodes: a
second run opens the file instead of parsing the source again. Opening one reads its footer only. The local
engine's lookups by id load the id column (one Arrow array, not Python strings) with 64-bit hashes of the ids
sorted for lookups: about 16 bytes and the id's own bytes a document. The Ray driver never does: it finds the
ids it needs (judged documents, queries) in one pass over the id column and reads the ids of the ranked
positions when it writes them (`IdsOnDemand`), so its memory does not grow with the corpus. Titles and texts
are read batch by batch when a range of documents is asked for, through `pyarrow.OSFile` rather than a memory
map: the batches read are then freed, whereas every mapped page read would stay counted in the process's
resident memory; reads of ids leave the other columns out (`IpcReadOptions(included_fields=[0])`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from evaluator.datasets.download import cache_root
from evaluator.id_table import bool_values, int_array, int_values, string_array

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
            # from buffers: `pa.array` would import pandas (about 30 MB that a Ray driver keeps to its end)
            self._writer.write_batch(pa.record_batch([string_array(self._ids), string_array(self._titles),
                                                      string_array(self._texts)], schema=SCHEMA))
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
        self._num_docs = count_documents(str(self.path))  # reads the file's footer and last batch only
        self._table: _IdTable | None = None  # built on first lookup by id: the local engine's need
        self.ids = _Column(self, "id")
        self.titles = _Column(self, "title")
        self.texts = _Column(self, "text")

    @property
    def _ids(self) -> pa.Array:
        return self._lookup().ids

    def _lookup(self) -> _IdTable:
        if self._table is None:
            self._table = _IdTable(self.path)
        return self._table

    def __len__(self) -> int:
        return self._num_docs

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
        table, h = self._lookup(), hash(doc_id)
        i = int(np.searchsorted(table.sorted_hashes, h))
        while i < len(table.sorted_hashes) and table.sorted_hashes[i] == h:
            candidate = int(table.order[i])
            if table.ids[candidate].as_py() == doc_id:
                return candidate
            i += 1
        return -1

    def find(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """Position of each of `doc_ids` found in the corpus: from the lookup table when it is built, else
        read from the id column batch by batch (memory: the ids asked for and one batch of ids)."""
        if self._table is not None:
            return {d: at for d in set(doc_ids) if (at := self._find(d)) >= 0}
        return find_positions(str(self.path), doc_ids)

    def first_duplicate(self) -> tuple[int, int] | None:
        """(earlier, later) positions of the first id, in file order, that repeats an earlier one; None if none.
        Memory stays bounded (`first_duplicate`): the check spills the ids' hashes next to the file."""
        return first_duplicate(str(self.path), len(self), self.path.parent)

    def take_ids(self, positions: np.ndarray) -> list[str]:
        """The ids at `positions` (an integer array), as Python strings."""
        return self.take_id_array(positions).to_pylist()

    def take_id_array(self, positions: np.ndarray) -> pa.Array:
        """The ids at `positions` (an integer array), as one Arrow string array (no Python string per id)."""
        if self._table is None:
            return _take_ids(str(self.path), positions)
        return self._ids.take(int_array(positions))

    def ids_on_demand(self, wanted: Iterable[str]) -> IdsOnDemand:
        """The corpus's ids as a ranking needs them, with no list of them held (`IdsOnDemand`)."""
        return IdsOnDemand(str(self.path), len(self), wanted)

    def positions_of(self) -> Mapping[str, int]:
        """A read-only mapping doc_id -> position over this corpus (no dict of all ids is built)."""
        return _Positions(self)

    def byte_order_keys(self) -> np.ndarray:
        """Integer keys that sort like the ids' UTF-8 bytes (Arrow sorts strings by their bytes)."""
        table = self._lookup()
        if table.byte_keys is None:
            table.byte_keys = _byte_order_ranks(table.ids)
        return table.byte_keys

    def keys_of(self, positions: np.ndarray) -> np.ndarray:
        """Keys of the documents at `positions` that sort like their ids' bytes (`byte_order_keys`)."""
        return self.byte_order_keys()[positions]

    def documents(self, start: int, stop: int) -> list[tuple[str, str]]:
        """(title, text) of the documents at positions [start, stop)."""
        out: list[tuple[str, str]] = []
        for batch, lo, hi in self._batches(start, stop):
            out.extend(zip(_strings(batch.column(1).slice(lo, hi - lo)),
                           _strings(batch.column(2).slice(lo, hi - lo)), strict=True))
        return out

    def column(self, name: str, start: int, stop: int) -> list[str]:
        index = SCHEMA.get_field_index(name)
        if index == 0 and self._table is not None:
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


def count_documents(location: str) -> int:
    """Documents in the corpus file at `location`, from its footer and its last batch's ids."""
    with _open(location) as source:
        reader = pa.ipc.open_file(source, options=_IDS_ONLY)
        batches = reader.num_record_batches
        return (batches - 1) * BATCH + reader.get_batch(batches - 1).num_rows if batches else 0


def find_positions(location: str, doc_ids: Iterable[str]) -> dict[str, int]:
    """Position of each of `doc_ids` in the corpus file at `location`, read batch by batch from its id column;
    ids not in the corpus are left out. Memory: the ids asked for and one batch of ids."""
    import pyarrow.compute as pc

    wanted = string_array(sorted(set(doc_ids)))
    found: dict[str, int] = {}
    if not len(wanted):
        return found
    for start, ids in _id_batches(location):
        for row in np.flatnonzero(bool_values(pc.is_in(ids, value_set=wanted))).tolist():
            found.setdefault(ids[row].as_py(), start + row)
    return found


def take_ids(location: str, positions: np.ndarray) -> list[str]:
    """The ids at `positions` in the corpus file at `location`, reading only the id column of the batches that
    hold them, one batch at a time (memory: the ids returned and one batch of ids)."""
    return _take_ids(location, positions).to_pylist()


def _take_ids(location: str, positions) -> pa.Array:
    positions = np.asarray(positions, np.int64)
    order = np.argsort(positions, kind="stable")
    ordered = positions[order]
    batch_of = ordered // BATCH
    firsts = np.flatnonzero(np.diff(batch_of, prepend=-1))  # where each batch's positions begin
    pieces = []
    with _open(location) as source:
        reader = pa.ipc.open_file(source, options=_IDS_ONLY)
        for lo, hi in zip(firsts.tolist(), [*firsts[1:].tolist(), len(ordered)], strict=True):
            batch = int(batch_of[lo])
            pieces.append(reader.get_batch(batch).column(0).take(int_array(ordered[lo:hi] - batch * BATCH)))
    taken = pa.concat_arrays(pieces) if pieces else string_array([])
    back = np.empty(len(order), np.int64)
    back[order] = np.arange(len(order))
    return taken.take(int_array(back))


BUCKET_ROWS = 1 << 20  # (hash, position) pairs a spill bucket holds on average: 16 MiB sorted at a time


def first_duplicate(location: str, num_docs: int, spill_dir: Path) -> tuple[int, int] | None:
    """(earlier, later) positions of the first id, in file order, that repeats an earlier one; None if none.
    Each id's 64-bit hash and position go to one of ceil(num_docs / BUCKET_ROWS) spill files by hash, a batch of
    ids at a time; each file is then sorted on its own and runs of equal hashes are checked against the ids
    themselves (hashes may collide). Memory: one batch of ids and one bucket, whatever the corpus's size."""
    import tempfile

    buckets = max(1, -(-num_docs // BUCKET_ROWS))
    found: tuple[int, int] | None = None
    with tempfile.TemporaryDirectory(dir=spill_dir, prefix=".duplicates-") as folder:
        names = [Path(folder) / f"{b}.bin" for b in range(buckets)]
        files = [open(name, "wb") for name in names]  # noqa: SIM115 - closed below, all together
        try:
            for start, ids in _id_batches(location):
                hashes = np.fromiter((_id_hash(d) for d in _strings(ids)), np.int64, count=len(ids))
                pairs = np.stack([hashes, np.arange(start, start + len(ids), dtype=np.int64)], axis=1)
                bucket_of = hashes.view(np.uint64) % np.uint64(buckets)
                for b in np.unique(bucket_of).tolist():
                    pairs[bucket_of == b].tofile(files[b])
        finally:
            for f in files:
                f.close()
        for name in names:
            pairs = np.fromfile(name, np.int64).reshape(-1, 2)
            pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]  # by hash, then position
            hashes, positions = pairs[:, 0], pairs[:, 1]
            repeats = np.flatnonzero(hashes[1:] == hashes[:-1]) + 1
            if not len(repeats):
                continue
            run_starts = np.unique(np.searchsorted(hashes, hashes[repeats]))  # first row of each run of equal hashes
            for run_start in run_starts.tolist():
                run_stop = int(np.searchsorted(hashes, hashes[run_start], side="right"))
                run = positions[run_start:run_stop].tolist()  # ascending
                run_ids = take_ids(location, np.array(run))
                for j in range(1, len(run)):
                    if run_ids[j] in run_ids[:j] and (found is None or run[j] < found[1]):
                        found = (run[run_ids.index(run_ids[j])], run[j])
    return found


_id_hash = hash  # a name tests can replace, to make hashes collide


def _byte_order_ranks(ids: pa.Array) -> np.ndarray:
    """Each id's rank in UTF-8 byte order (Arrow sorts strings by their bytes)."""
    import pyarrow.compute as pc

    order = int_values(pc.sort_indices(ids))
    keys = np.empty(len(ids), np.int64)
    keys[order] = np.arange(len(ids))
    return keys


def _id_batches(location: str):
    """(first position, id array) of each batch, reading only the id column. Each read allocates room for the
    whole batch (only the ids are read into it), freed with the batch: hold one batch at a time."""
    with _open(location) as source:
        reader = pa.ipc.open_file(source, options=_IDS_ONLY)
        for b in range(reader.num_record_batches):
            yield b * BATCH, reader.get_batch(b).column(0)


class _IdTable:
    """The id column in memory with 64-bit hashes of the ids sorted for lookups: about 16 bytes and the id's own
    bytes a document. Read with the other columns left out, so no title or text is ever held."""

    def __init__(self, path: Path):
        # concat_arrays copies the ids out of the map, so no mapped page stays in use once it is closed
        with pa.memory_map(str(path), "rb") as source:  # zero-copy: only the pages read are touched
            reader = pa.ipc.open_file(source)
            id_batches = [reader.get_batch(b).column(0) for b in range(reader.num_record_batches)]
            self.ids = pa.concat_arrays(id_batches) if id_batches else pa.array([], pa.string())
            sizes = [len(b) for b in id_batches]
            del id_batches
        if any(size != BATCH for size in sizes[:-1]):
            raise ValueError(f"{path}: not a corpus file of {BATCH}-document batches; delete it to read the source again")
        hashes = np.fromiter((hash(d) for d in _strings(self.ids)), np.int64, count=len(self.ids))
        self.order = np.argsort(hashes, kind="stable")
        self.sorted_hashes = hashes[self.order]
        self.byte_keys: np.ndarray | None = None


class IdsOnDemand:
    """What score sampling and ranking need of a corpus's ids, with no list of all ids in memory: the positions
    of the ids asked for (the judged documents, the queries), found in one pass over the id column, and the ids
    at given positions, read from the file when asked. The Ray driver's view of the corpus: its memory does not
    grow with the corpus."""

    def __init__(self, location: str, num_docs: int, wanted: Iterable[str]):
        self.location, self.num_docs = location, num_docs
        self.known = find_positions(location, wanted)

    def __len__(self) -> int:
        return self.num_docs

    def positions_of(self) -> Mapping[str, int]:
        """doc_id -> position for the ids asked for; its length is the corpus's."""
        return _KnownPositions(self.known, self.num_docs)

    def take_ids(self, positions: np.ndarray) -> list[str]:
        return take_ids(self.location, positions)

    def take_id_array(self, positions: np.ndarray) -> pa.Array:
        return _take_ids(self.location, positions)

    def keys_of(self, positions: np.ndarray) -> np.ndarray:
        """Keys that sort the documents at `positions` like their ids' bytes: ranks among these documents only,
        which is all a tie between two of them needs."""
        unique, inverse = np.unique(np.asarray(positions, np.int64), return_inverse=True)
        return _byte_order_ranks(_take_ids(self.location, unique))[inverse.reshape(-1)]


class _KnownPositions(Mapping[str, int]):
    """Positions of some ids of a corpus; `len` is the corpus's size (a column count for score sampling), so
    iteration yields only the ids that were asked for."""

    def __init__(self, known: dict[str, int], num_docs: int):
        self.known, self.num_docs = known, num_docs

    def __getitem__(self, doc_id: str) -> int:
        return self.known[doc_id]

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.known

    def __iter__(self) -> Iterator[str]:
        return iter(self.known)

    def __len__(self) -> int:
        return self.num_docs


_IDS_ONLY = pa.ipc.IpcReadOptions(included_fields=[0])


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
        if self.name == "id":  # one id at a time (a caller walking a ranking): from the lookup table, not the file
            return self.corpus._ids[item].as_py()
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
