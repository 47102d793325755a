"""Progress for long steps: a line per step with its duration, and bars on a terminal; silent with --quiet."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def bars_enabled() -> bool:
    """Bars only on a terminal and without --quiet (they would clutter logs and CI output)."""
    return not _quiet and sys.stderr.isatty()


@contextmanager
def step(description: str, timings: dict[str, float] | None = None, key: str | None = None) -> Iterator[None]:
    """Announce a step on stderr, then report its duration; record it in `timings[key]` if given."""
    if not _quiet:
        print(f"irboard: {description} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    yield
    elapsed = time.perf_counter() - start
    if timings is not None and key:
        timings[key] = elapsed
    if not _quiet:
        print(f"irboard: {description}: done in {elapsed:.2f} s", file=sys.stderr, flush=True)


def bar(iterable=None, total: int | None = None, desc: str = "", unit: str = "it"):
    """A tqdm bar when bars are enabled, else the iterable unchanged (a no-op object without one)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not bars_enabled(), leave=False)
