"""The one cache of derived state: work done on a result file, kept by content and by the code that did it.

An entry lives at `<folder>/<k[:2]>/<k>.json`, k = sha256 of its key fields: the version of the code that made it
(`code_version`), the sha256 of the file's exact bytes, and whatever else the work depended on. The entry repeats
those fields, so that it is used only for exactly those inputs. Writing is atomic without fsync: an entry lost or
emptied by a crash is a miss, never a wrong answer. Anything unreadable or inconsistent is a miss.

The code version is computed, never written by hand: the sha256 of the source of the modules a stage names and of
every project module they import, transitively (a compiled extension counts by its bytes). Any edit to that code
gives other keys, so entries made by other code are never found; nobody has to remember to bump a string.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import threading
from collections.abc import Iterable
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import orjson

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # holds evaluator/ and leaderboard/ (a checkout or site-packages)
PROJECT_PACKAGES = ("evaluator", "leaderboard")
# `from a.b import c, d` (names possibly in parentheses over several lines) and `import a.b`; a match inside a
# string only adds a module to the version, which can cost a cache miss, never a wrong hit
_IMPORT = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n#]*)|^\s*import\s+([\w.]+)", re.MULTILINE)


@functools.cache
def module_file(name: str, root: Path = PROJECT_ROOT) -> Path | None:
    """The source (or compiled extension) of module `name` under `root`, or None when there is none."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py", *(base.with_name(base.name + suffix)
                                                                  for suffix in EXTENSION_SUFFIXES)):
        if path.is_file():
            return path
    return None


def source_bytes(path: Path) -> bytes:
    """What a module's version is made of (tests stand in an edited copy here)."""
    return path.read_bytes()


@functools.cache
def _imports(path: Path, root: Path, packages: tuple[str, ...]) -> frozenset[str]:
    """The project modules the source at `path` imports, at the top or inside functions."""
    if path.suffix != ".py":
        return frozenset()
    found = set()
    for match in _IMPORT.finditer(source_bytes(path).decode("utf-8")):
        module = match.group(1) or match.group(3)
        if module.split(".")[0] not in packages:
            continue
        if module_file(module, root) is not None:  # a name in a comment or string may be no module at all
            found.add(module)
        for name in re.findall(r"\w+", match.group(2) or ""):  # `from a import b`: b may be a module of a
            if module_file(f"{module}.{name}", root) is not None:
                found.add(f"{module}.{name}")
    return frozenset(found)


@functools.cache
def code_version(*modules: str, root: Path = PROJECT_ROOT, packages: tuple[str, ...] = PROJECT_PACKAGES) -> str:
    """The sha256 of the bytes of `modules` and every module of `packages` they import, transitively (packages'
    `__init__` files included); computed once per process."""
    seen: dict[str, Path] = {}
    todo = list(modules)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ first
            prefix = ".".join(parts[:depth])
            if prefix in seen:
                continue
            path = module_file(prefix, root)
            if path is None:
                if depth == len(parts):
                    raise ValueError(f"{name}: no such module under {root}")
                continue
            seen[prefix] = path
            todo.extend(_imports(path, root, packages))
    digest = hashlib.sha256()
    for name in sorted(seen):
        content = source_bytes(seen[name])
        digest.update(f"{name}\n{len(content)}\n".encode())
        digest.update(content)
    return digest.hexdigest()


class ContentCache:
    """JSON entries in `folder`, looked up by their key fields (a dict of strings) and the version of `code` (the
    modules whose work the entries hold: see `code_version`)."""

    def __init__(self, folder: Path, code: Iterable[str]):
        from evaluator.datasets.declared import declarations_digest

        self.folder = folder
        # the dataset declarations are part of every key: what a file's checks, re-scoring or reading gave depends
        # on its dataset's definition, which for a declared one is a file, not code
        self.code = f"{code_version(*code)}+{declarations_digest()}"
        self._root = os.fspath(folder)

    def _path(self, fields: dict[str, str]) -> str:
        """Where the entry of `fields` (this code's version added) lives."""
        # plain strings, not pathlib: a build looks up two entries for each of tens of thousands of files
        text = "\n".join(f"{name}={value}" for name, value in {"code": self.code, **fields}.items())
        key = hashlib.sha256(text.encode()).hexdigest()
        return os.path.join(self._root, key[:2], f"{key}.json")

    def get(self, fields: dict[str, str]) -> dict | None:
        """The entry made from exactly `fields` by this code, or None."""
        path = self._path(fields)
        fields = {"code": self.code, **fields}
        try:
            with open(path, "rb") as stream:
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
        """Store `payload` (a dict whose keys are not among the fields) under `fields` and this code's version."""
        path = self._path(fields)
        fields = {"code": self.code, **fields}
        if fields.keys() & payload.keys():
            raise ValueError(f"payload keys {sorted(fields.keys() & payload.keys())} clash with the key fields")
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
