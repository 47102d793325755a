"""A stored ranking's document ids as one block of text: no Python string per id.

At MS MARCO size the top-100 of 7,000 queries names up to 700,000 distinct documents; as Python strings (about
56 bytes each, plus the set and lists that sorting and checking them build) they were the part of the Ray
driver's memory that grew with the corpus. An `IdTable` keeps them as one Arrow string array (a few bytes an id
plus a 4-byte offset), sorted in code point order (Arrow compares the UTF-8 bytes, which sort like the code
points), and gives the text column its newline-joined bytes in one piece when the result is written.

Arrays are made and read here through their buffers (`int_array`, `string_array`, `int_values`, `bool_values`), not
with `pa.array` or `to_numpy`, which import pandas (to ask whether the input is a pandas object): 28 MB that the
Ray driver otherwise never loads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def int_array(values) -> pa.Array:
    """`values` (integers) as an int64 Arrow array over a numpy buffer."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


MAX_STRING_BYTES = 2**31 - 1  # an Arrow string array's offsets are int32


def string_array(values: Sequence[str]) -> pa.Array:
    """`values` as an Arrow string array (a batch of a few thousand: each is encoded once on the way)."""
    encoded = [value.encode("utf-8") for value in values]
    ends = np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)))
    if len(ends) and ends[-1] > MAX_STRING_BYTES:
        raise OverflowError(f"{ends[-1]:,} bytes of text in one batch of {len(ends):,}: at most "
                            f"{MAX_STRING_BYTES:,} fit")
    offsets = np.zeros(len(encoded) + 1, np.int32)
    offsets[1:] = ends
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)))


JOIN_CHUNK = 4096  # ids whose bytes `IdTable.joined` places at once (three int64 per byte of scratch)
_NUMPY_OF = {pa.int32(): np.int32, pa.int64(): np.int64, pa.uint32(): np.uint32, pa.uint64(): np.uint64}


def int_values(array: pa.Array) -> np.ndarray:
    """The values of an integer Arrow array without nulls (a view of its buffer)."""
    dtype = np.dtype(_NUMPY_OF[array.type])
    return np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * dtype.itemsize)


def bool_values(array: pa.Array) -> np.ndarray:
    """The values of a boolean Arrow array without nulls (unpacked from its bits)."""
    bits = np.unpackbits(np.frombuffer(array.buffers()[1], np.uint8), bitorder="little")
    return bits[array.offset:array.offset + len(array)].astype(bool)


class IdTable(Sequence[str]):
    """Sorted ids read as a sequence of str (one made per access) without holding any."""

    __slots__ = ("array",)

    def __init__(self, array: pa.Array):
        self.array = array.cast(pa.string()) if array.type != pa.string() else array

    @classmethod
    def sorted_from(cls, ids: pa.Array) -> tuple[IdTable, np.ndarray]:
        """The table of `ids` (distinct) in code point order, and each input id's index in it."""
        order = int_values(pc.sort_indices(ids))
        rank = np.empty(len(ids), np.int64)
        rank[order] = np.arange(len(ids))
        return cls(ids.take(int_array(order))), rank

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
        return np.fromiter(iter(self), object, len(self)).astype(dtype or object, copy=False)

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
        return IdTable(self.array.take(int_array(indices)))

    def joined(self) -> bytes:
        """The ids' UTF-8 bytes joined by newlines (the text column's content), copied from the array's buffers
        a chunk of ids at a time (each byte moves forward by the separators before it)."""
        n = len(self)
        if not n:
            return b""
        offsets = np.frombuffer(self.array.buffers()[1], np.int32, n + 1, self.array.offset * 4).astype(np.int64)
        data = np.frombuffer(self.array.buffers()[2], np.uint8)
        out = np.full(int(offsets[-1] - offsets[0]) + n - 1, ord("\n"), np.uint8)
        for first in range(0, n, JOIN_CHUNK):
            last = min(first + JOIN_CHUNK, n)
            lo, hi = int(offsets[first]), int(offsets[last])
            shift = np.repeat(np.arange(first, last), np.diff(offsets[first:last + 1]))  # separators before a byte
            out[np.arange(lo, hi) - int(offsets[0]) + shift] = data[lo:hi]
        return out.tobytes()

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
