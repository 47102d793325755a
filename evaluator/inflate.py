"""Compressed input (gzip, bzip2, xz: known by the file's first bytes, not its name) inflated in a stream.

Every compressed file irboard reads (runs, qrels, dataset files) passes through here, with two caps that make
a compression bomb fail fast in bounded memory, on one line naming the file and the fix:

- the ratio: past the first `RATIO_FLOOR` inflated bytes, a file may inflate at most `MAX_RATIO` times its
  compressed bytes read so far (runs and corpora inflate 3 to 10 times; a bomb, thousands of times);
- the size (for what is read whole into memory: runs and qrels): at most `max_inflated()` bytes, 4 GiB unless
  the environment variable IRBOARD_MAX_INFLATED_BYTES says otherwise.

Inflating goes a megabyte at a time (the decompressors' own bounded reads), so no step holds more than the
caps allow.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import BinaryIO

from evaluator.errors import InputFormatError

COMPRESSIONS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}  # first bytes -> name
_OPENERS = {"gzip": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"), "bzip2": lambda raw: bz2.BZ2File(raw, "rb"),
            "xz": lambda raw: lzma.LZMAFile(raw, "rb")}
MAX_RATIO = 100
RATIO_FLOOR = 16 << 20
MAX_INFLATED_ENV = "IRBOARD_MAX_INFLATED_BYTES"
_CHUNK = 1 << 20
_DAMAGED = (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error)


def max_inflated() -> int:
    """The most bytes a compressed run or qrels file may inflate to (IRBOARD_MAX_INFLATED_BYTES, default 4 GiB)."""
    text = os.environ.get(MAX_INFLATED_ENV, "")
    if not text:
        return 4 << 30
    if not text.isdigit() or int(text) < 1:
        raise InputFormatError(f"{MAX_INFLATED_ENV}={text[:40]!r} is not a positive whole number of bytes; "
                               f"unset it or write e.g. {MAX_INFLATED_ENV}=8589934592")
    return int(text)


def compression_of(head: bytes) -> str:
    """The compression whose magic bytes `head` starts with, or "" for none."""
    return next((name for magic, name in COMPRESSIONS.items() if head.startswith(magic)), "")


def _gib(size: int) -> str:
    if size >= 1 << 30:
        return f"{size / (1 << 30):.3g} GiB"
    return f"{size / (1 << 20):.3g} MiB" if size >= 1 << 20 else f"{size:,} bytes"


class _Capped(io.RawIOBase):
    """The inflated bytes of a compressed file, refusing to go past the caps."""

    def __init__(self, path: Path, name: str, limit: int | None):
        self.path, self.name, self.limit = path, name, limit
        self.raw = open(path, "rb")  # noqa: SIM115 (closed with this stream)
        self.inner = _OPENERS[name](self.raw)
        self.inflated = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self.inner.readinto(memoryview(buffer)[:_CHUNK])  # a damaged file raises the decompressor's error
        self.inflated += count
        self._check()
        return count

    def _check(self) -> None:
        read = max(self.raw.tell(), 1)
        if self.limit is not None and self.inflated > self.limit:
            raise InputFormatError(
                f"{self.path}: inflates to more than {_gib(self.limit)} ({self.name}), the most irboard reads from "
                f"a compressed file; decompress it yourself and pass the plain file, or raise {MAX_INFLATED_ENV}")
        if self.inflated > RATIO_FLOOR and self.inflated > MAX_RATIO * read:
            raise InputFormatError(
                f"{self.path}: inflates more than {MAX_RATIO} times its size ({self.name}: {_gib(self.inflated)} "
                f"from the first {read:,} bytes), which no run, qrels or corpus does: a compression bomb? If the "
                "file is genuine, decompress it yourself and pass the plain file")

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.raw.close()
            super().close()


def open_stream(path: Path | str, limit: int | None = None) -> tuple[BinaryIO, str]:
    """The file's bytes as a binary stream (inflated and capped when compressed; lines iterate) and the
    compression ("" for a plain file). `limit`: a cap on the inflated size (None: the ratio cap only). Reading
    a damaged file raises the decompressor's error (OSError, EOFError, zlib.error, lzma.LZMAError)."""
    path = Path(path)
    try:
        with open(path, "rb") as stream:
            name = compression_of(stream.read(8))
        if not name:
            return open(path, "rb"), ""  # noqa: SIM115 (the caller closes it)
        return io.BufferedReader(_Capped(path, name, limit), _CHUNK), name
    except OSError as error:
        raise InputFormatError(f"{path}: cannot be read ({error.strerror or error}); check the path") from None


def inflate(path: Path | str, name: str) -> bytearray:
    """The whole inflated content of the `name`-compressed file at `path`, within both caps (grown in place, never
    copied whole)."""
    stream = _Capped(Path(path), name, max_inflated())
    content = bytearray()
    try:
        while True:
            start = len(content)
            content.extend(bytes(_CHUNK))
            try:
                count = stream.readinto(memoryview(content)[start:])
            except InputFormatError:  # a cap
                raise
            except _DAMAGED as error:
                raise InputFormatError(f"{path}: is a damaged {name} file ({error}); download or write it "
                                       "again") from None
            del content[start + count:]
            if not count:
                return content
    finally:
        stream.close()
