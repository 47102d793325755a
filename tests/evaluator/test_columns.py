"""Numeric and text columns: what the encoder writes, the decoder gives back exactly, and any stream that is not
exactly one whole zlib stream of the declared size is refused with one line naming the field."""

import base64
import zlib

import numpy as np
import pytest

from evaluator.columns import decode_array, decode_strings, encode_array, encode_strings
from evaluator.errors import ResultValidationError


def _text(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize("dtype", ["<f8", "<u4", "<u2"])
def test_round_trip(dtype):
    values = (np.random.default_rng(0).random(5000) * 60000).astype(dtype)
    assert np.array_equal(decode_array(encode_array(values, dtype), dtype, values.size, "col"), values)


def test_strings_round_trip():
    ids = ["doc-1", "Zürich#3", "東京", ""]
    assert decode_strings(encode_strings(ids), 10_000, "ids") == ids


@pytest.mark.parametrize(("text", "message"), [
    (_text(b"not a zlib stream at all"), "col: not zlib data"),
    (_text(zlib.compress(b"\0" * 16)[:-6]), "col: holds a different amount of data"),  # cut short
    (_text(zlib.compress(b"\0" * 16) + b"tail"), "col: holds a different amount of data"),  # data after the stream
    (_text(zlib.compress(b"\0" * 24)), "col: holds a different amount of data"),  # more than the counts say
    (_text(zlib.compress(b"\0" * 50_000_000, 9)), "col: holds a different amount of data"),  # a bomb stops early
    ("***", "col: not base64 text"),
])
def test_a_bad_numeric_column_is_one_line(text, message):
    with pytest.raises(ResultValidationError) as caught:
        decode_array(text, "<u8", 2, "col")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_text_bomb_is_refused():
    with pytest.raises(ResultValidationError, match="ids: inflates to more than"):
        decode_strings(_text(zlib.compress(b"q" * 5_000_000, 9)), 10**9, "ids")
