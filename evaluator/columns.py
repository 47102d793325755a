"""Binary columns inside a JSON result: numbers and ids as compact, deterministic base64 text.

A numeric column is the array in little-endian byte planes (all first bytes, then all second bytes, ...),
zlib-compressed with fixed settings and base64-encoded (RFC 4648, with padding). Byte planes put the bytes
that barely vary (signs, exponents, high bytes of small integers) next to each other, which is what
makes zlib effective on them. A text column is the UTF-8 strings joined by newlines, compressed and
encoded the same way (so the strings themselves may not hold a newline).

Decoding is defensive: the caller says how many values it expects, the decompressor is never allowed
to produce more than those bytes (a zlib bomb stops there), and every mismatch is one
`ResultValidationError` naming the field.
"""

from __future__ import annotations

import base64
import binascii
import zlib

import numpy as np
from isal import isal_zlib  # inflates the same zlib streams 2-3 times as fast as the zlib module

from evaluator.errors import ResultValidationError

# Fixed, so the same input always gives the same bytes; the decoder reads any level and strategy
# (docs/result-format.md). Text columns: level 4 encodes twice as fast as 6 for 1-3% more bytes. Numeric
# columns: run-length matching only (Z_RLE, where the level makes no difference). What compresses in byte
# planes is runs (signs, exponents, high bytes, zero bytes of float32 scores); the other planes look random,
# where deflate's string search took three times as long and the result files came out larger.
ZLIB_LEVEL = 4
NUMERIC_STRATEGY = zlib.Z_RLE
_FIX = "re-create the result with irboard evaluate"


def _deflate(raw: bytes, strategy: int) -> str:
    packer = zlib.compressobj(ZLIB_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS, 8, strategy)  # 8: zlib's memLevel
    return base64.b64encode(packer.compress(raw) + packer.flush()).decode("ascii")


PLANE_SLICE = 1 << 20  # values whose plane bytes are copied out for the compressor at a time


def encode_array(values: np.ndarray, dtype: str) -> str:
    """`values` as a numeric column of little-endian `dtype` ('<f8', '<u4', '<u2', '<u8', ...). The planes reach
    the compressor a slice at a time (deflate's output does not depend on how its input is split), so no
    transposed copy of the whole column is made."""
    array = np.ascontiguousarray(values, dtype=dtype)
    planes = array.view(np.uint8).reshape(-1, array.itemsize)
    packer = zlib.compressobj(ZLIB_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS, 8, NUMERIC_STRATEGY)
    packed = [packer.compress(np.ascontiguousarray(planes[start:start + PLANE_SLICE, plane]))
              for plane in range(array.itemsize) for start in range(0, len(planes), PLANE_SLICE)]
    return base64.b64encode(b"".join(packed) + packer.flush()).decode("ascii")


def _inflate(text: str, max_bytes: int, where: str) -> tuple[bytes, bool]:
    """The column's bytes, inflated no further than `max_bytes`; and whether it ended cleanly within them."""
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ResultValidationError(f"{where}: not base64 text; {_FIX}") from None
    inflater = isal_zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, max_bytes + 1)  # one byte more reveals an oversized column
    except (zlib.error, isal_zlib.error) as error:
        raise ResultValidationError(f"{where}: not zlib data ({error}); {_FIX}") from None
    whole = len(raw) <= max_bytes and inflater.eof and not inflater.unconsumed_tail and not inflater.unused_data
    return raw, whole


def decode_array(text: str, dtype: str, count: int, where: str) -> np.ndarray:
    """The `count` values of a numeric column (see encode_array)."""
    item = np.dtype(dtype)
    expected = count * item.itemsize
    raw, whole = _inflate(text, expected, where)
    if not whole or len(raw) != expected:
        raise ResultValidationError(
            f"{where}: holds a different amount of data than its counts say ({expected} bytes expected); {_FIX}")
    planes = np.frombuffer(raw, dtype=np.uint8).reshape(item.itemsize, count)
    values = np.empty((count, item.itemsize), dtype=np.uint8)
    for plane in range(item.itemsize):  # a strided copy a plane: several times faster than one transposing copy
        values[:, plane] = planes[plane]
    return values.view(item).reshape(count)


def encode_strings(values: list[str] | tuple[str, ...]) -> str:
    """Strings (none holding a newline) as a text column."""
    return encode_text("\n".join(values).encode("utf-8"))


def encode_text(joined: bytes) -> str:
    """UTF-8 strings already joined by newlines as a text column."""
    return _deflate(joined, zlib.Z_DEFAULT_STRATEGY)


# Ids compress a few times over, never a thousand times (unique strings); a text column that would inflate
# more than this ratio is a bomb, refused whatever its declared counts allow.
MAX_TEXT_RATIO = 64


def decode_strings(text: str, max_bytes: int, where: str) -> list[str]:
    """The strings of a text column, refusing more than `max_bytes` (or MAX_TEXT_RATIO times the column's own
    size) once inflated."""
    max_bytes = min(max_bytes, MAX_TEXT_RATIO * len(text) + 4096)
    raw, whole = _inflate(text, max_bytes, where)
    if not whole:
        raise ResultValidationError(f"{where}: inflates to more than {max_bytes} bytes or is cut short; {_FIX}")
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultValidationError(f"{where}: is not UTF-8 text; {_FIX}") from None
    return decoded.split("\n") if decoded else []
