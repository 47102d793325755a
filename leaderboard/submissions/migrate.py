"""`irboard migrate`: rewrite result files of older schema versions as the current version, losslessly."""

from __future__ import annotations

from pathlib import Path

from evaluator.errors import ResultValidationError
from evaluator.result import (
    FLOAT_DECIMALS,
    SCHEMA_VERSION,
    dump_result,
    parse_result_text,
    read_result,
    write_atomic,
)


def migrate_file(path: Path) -> bool:
    """Rewrite `path` in the current schema version if it is older; True when it was rewritten.

    Everything is kept: metadata, means (stored, as every writer stores them, to FLOAT_DECIMALS places),
    per-query values (float64), the ranking in its order and the score samples at their stored precision; the
    new file is read back and compared before it replaces the old."""
    result = read_result(path)
    if result.source_version == SCHEMA_VERSION:
        return False
    text = dump_result(result)
    again = parse_result_text(text, str(path))
    means = {name: round(value, FLOAT_DECIMALS) for name, value in result.metrics.items()}
    same = (again.header == result.header.model_copy(update={"metrics": means}) and again.query_ids == result.query_ids
            and all((again.per_query[m] == result.per_query[m]).all() for m in result.per_query)
            and again.rankings() == result.rankings())
    if not same:  # pragma: no cover - a bug in the writer, never an input problem
        raise ResultValidationError(f"{path}: migration would change the result; nothing was written")
    write_atomic(path, text)
    return True
