"""A stored ranking's document ids as one block of text: no Python string per id.

At MS MARCO size the top-100 of 7,000 queries names up to 700,000 distinct documents; as Python strings (about
56 bytes each, plus the set and lists that sorting and checking them build) they were the part of the Ray
driver's memory that grew with the corpus. An `IdTable` keeps them as one Arrow string array (a few bytes an id
plus a 4-byte offset), sorted in code point order (Arrow compares the UTF-8 bytes, which sort like the code
points), and gives the text column its newline-joined bytes in one piece when the result is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class IdTable(Sequence[str]):
    """Sorted ids read as a sequence of str (one made per access) without holding any."""

    __slots__ = ("array",)

    def __init__(self, array: pa.Array):
        self.array = array.cast(pa.string()) if array.type != pa.string() else array

    @classmethod
    def sorted_from(cls, ids: pa.Array) -> tuple[IdTable, np.ndarray]:
        """The table of `ids` (distinct) in code point order, and each input id's index in it."""
        order = pc.sort_indices(ids).to_numpy()
        rank = np.empty(len(ids), np.int64)
        rank[order] = np.arange(len(ids))
        return cls(ids.take(pa.array(order))), rank

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = int(index)
        if not -len(self) <= index < len(self):
            raise IndexError("IdTable index out of range")
        return self.array[index].as_py()

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), 4096):  # a chunk of strings alive at a time
            yield from self.array.slice(start, 4096).to_pylist()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """An object array of the ids (what `np.asarray(run.doc_ids, dtype=object)` gives for a tuple)."""
        return self.array.to_numpy(zero_copy_only=False).astype(dtype or object, copy=False)

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same strings (a table as read back is a tuple)."""
        if isinstance(other, IdTable):
            return self.array.equals(other.array)
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None

    def take(self, indices: np.ndarray) -> IdTable:
        """The ids at sorted `indices` (still sorted)."""
        return IdTable(self.array.take(pa.array(np.asarray(indices, np.int64))))

    def joined(self) -> bytes:
        """The ids' UTF-8 bytes joined by newlines (the text column's content), built in one buffer."""
        if not len(self):
            return b""
        as_list = pa.ListArray.from_arrays(pa.array([0, len(self)], pa.int32()), self.array)
        return pc.binary_join(as_list, "\n")[0].as_buffer().to_pybytes()

    def is_sorted_unique(self) -> bool:
        """Strictly increasing in code point order."""
        if len(self) < 2:
            return True
        return bool(pc.all(pc.less(self.array.slice(0, len(self) - 1), self.array.slice(1))).as_py())

    def has_empty(self) -> bool:
        """Whether an id is the empty string."""
        return bool(len(self)) and int(pc.min(pc.binary_length(self.array)).as_py()) == 0

    def longest(self) -> int:
        """The most characters an id has (0 for an empty table)."""
        return int(pc.max(pc.utf8_length(self.array)).as_py()) if len(self) else 0
