"""Work done on a result file, kept by content: an entry is found only by the exact inputs it was made from.

An entry lives at `<folder>/<k[:2]>/<k>.json`, k = sha256 of its key fields (a code version, the sha256 of the
file's exact bytes, and whatever else the work depended on), and repeats those fields, so that an entry is
used only for exactly those inputs. Writing is atomic without fsync: an entry lost or emptied by a crash is a
miss, never a wrong answer. Anything unreadable or inconsistent is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from pathlib import Path

import orjson

log = logging.getLogger(__name__)


class ContentCache:
    """JSON entries in `folder`, looked up by their key fields (a dict of strings)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._root = os.fspath(folder)

    def _path(self, fields: dict[str, str]) -> str:
        # plain strings, not pathlib: a build looks up two entries for each of tens of thousands of files
        key = hashlib.sha256("\n".join(f"{name}={value}" for name, value in fields.items()).encode()).hexdigest()
        return os.path.join(self._root, key[:2], f"{key}.json")

    def get(self, fields: dict[str, str]) -> dict | None:
        """The entry made from exactly `fields`, or None."""
        try:
            with open(self._path(fields), "rb") as stream:
                text = stream.read()
            try:
                entry = orjson.loads(text)
            except orjson.JSONDecodeError:  # json writes NaN, which orjson refuses
                entry = json.loads(text)
            if not isinstance(entry, dict) or {name: entry.get(name) for name in fields} != fields:
                return None
        except (OSError, ValueError):
            return None
        return entry

    def put(self, fields: dict[str, str], payload: dict) -> None:
        """Store `payload` (a dict whose keys are not among the fields) under `fields`."""
        if fields.keys() & payload.keys():
            raise ValueError(f"payload keys {sorted(fields.keys() & payload.keys())} clash with the key fields")
        path = self._path(fields)
        folder = os.path.dirname(path)
        # a name of this process and thread only: writers of one entry each write a whole file and the last one wins
        temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}-{threading.get_ident()}.tmp")
        text = json.dumps({**fields, **payload}).encode("utf-8")
        try:
            try:
                handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            except FileNotFoundError:  # the first entry of its folder (a build writes tens of thousands of entries)
                os.makedirs(folder, exist_ok=True)
                handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            with os.fdopen(handle, "wb") as stream:
                stream.write(text)
            os.replace(temporary, path)
        except OSError as error:
            log.debug("cannot cache in %s: %s", self.folder, error)
            with contextlib.suppress(OSError):
                os.unlink(temporary)
