"""Fixtures for the tests of submissions/: stand-in edits of the project's code."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from leaderboard.submissions import cache


@pytest.fixture
def edit_code(monkeypatch) -> Iterator[Callable[[str], None]]:
    """`edit_code(module)`: from then on, `cache.code_version` reads `module`'s source as if a line had been added to
    it (as an edit of the file would), so every cache whose code imports it, however indirectly, gets another key.
    Nothing is bumped by hand; the versions computed meanwhile are forgotten when the test ends."""
    edited: set[Path] = set()
    original = cache.source_bytes

    def source(path: Path) -> bytes:
        content = original(path)
        return content + b"\n# an edit\n" if path in edited else content

    def edit(module: str) -> None:
        path = cache.module_file(module)
        assert path is not None, module
        edited.add(path)
        cache.code_version.cache_clear()

    monkeypatch.setattr(cache, "source_bytes", source)
    yield edit
    cache.code_version.cache_clear()
