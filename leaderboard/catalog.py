"""`irboard datasets`: every registered dataset with its official judgments' source and whether they are cached."""

from __future__ import annotations

import argparse

from evaluator.datasets import all_specs
from evaluator.datasets.download import cache_root
from evaluator.datasets.official import SOURCE, is_cached, official_judgments
from evaluator.errors import IrboardError

COLUMNS = ("id", "split", "queries", "documents", "source", "licence", "judgments")


def dataset_rows(prefix: str = "") -> list[tuple[str, ...]]:
    """One row per registered dataset whose id starts with `prefix`, in registry order."""
    rows = []
    for spec in all_specs():
        if not spec.id.startswith(prefix):
            continue
        official = official_judgments(spec.id)
        if official is not None:
            source, cached = SOURCE, is_cached(official.qrels)
        else:  # no official download: verified from a copy placed in the cache (or --data-dir)
            source, cached = "local copy only", (cache_root() / spec.id / "qrels" / f"{spec.split}.tsv").is_file()
        rows.append((spec.id, spec.split, _count(spec.num_queries), _count(spec.num_docs), source, spec.license,
                     "cached" if cached else "not cached"))
    return rows


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def run_datasets(args: argparse.Namespace) -> int:
    rows = dataset_rows(args.prefix)
    if not rows:
        raise IrboardError(f"no registered dataset id starts with {args.prefix!r}; try `irboard datasets` for all")
    widths = [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    for row in [COLUMNS, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 0
