"""Option values more than one command reads: `--data-dir` and `--now`."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from evaluator.errors import IrboardError


def parse_data_dirs(values: list[str]) -> tuple[dict[str, Path], Path | None]:
    """`--data-dir ID=DIR` names one dataset's folder; `--data-dir local:DIR` a folder of one's own, whose results
    (id `local/<folder slug>`, as `evaluate --dataset local:DIR` writes them) are checked against it; a bare
    `--data-dir DIR` is a root holding `<dataset id>/`."""
    from evaluator.datasets.declared import declare_local
    from evaluator.datasets.spec import LOCAL_PREFIX

    explicit, root = {}, None
    for value in values:
        if str(value).startswith(LOCAL_PREFIX):
            folder = str(value).removeprefix(LOCAL_PREFIX)
            explicit[declare_local(folder)] = Path(folder)
        elif "=" in str(value):
            dataset_id, _, folder = str(value).partition("=")
            explicit[dataset_id] = Path(folder)
        else:
            root = Path(value)
    return explicit, root


def instant(text: str | None) -> datetime:
    """`--now`: an ISO 8601 instant with a zone, in UTC; the current time when not given."""
    if text is None:
        return datetime.now(timezone.utc)
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise IrboardError(f"--now {text!r}: write an ISO 8601 instant with a zone, e.g. 2027-01-15T12:00:00Z")
    return value.astimezone(timezone.utc)
