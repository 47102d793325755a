"""Rows of hub datasets through the `datasets` library, from the hub or from a local mirror.

A family loader names each table it needs as a ``HubTable`` (hub id, config, split) and reads
its rows through a ``HubLoader``. The default loader calls ``datasets.load_dataset``; with
``--data-dir DIR`` the tables are read with ``datasets.load_from_disk`` from ``DIR/<hub id>/<config>``
(folders written by ``save_to_disk``, a ``DatasetDict`` holding the split or a single ``Dataset``).
Tests and offline users pass their own loader or a mirror.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.datasets.dataset import Corpus
from evaluator.errors import DatasetLoadError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HubTable:
    path: str  # hub id, e.g. "miracl/miracl"
    config: str | None
    split: str
    streaming: bool = False
    revision: str | None = None

    def mirror_path(self, root: str | Path) -> Path:
        """Where a local mirror keeps this table: ``root/<hub id>[/<config>]``."""
        folder = Path(root) / self.path
        return folder / self.config if self.config else folder

    def __str__(self) -> str:
        config = f" config {self.config}" if self.config else ""
        return f"{self.path}{config} split {self.split}"


HubLoader = Callable[[HubTable], Iterable[Mapping[str, Any]]]


def _import_datasets():
    try:
        import datasets
    except ImportError:
        raise DatasetLoadError(
            "the `datasets` package is needed for hub datasets; install it with: pip install 'irboard[datasets]'"
        ) from None
    return datasets


def load_from_hub(table: HubTable) -> Iterable[Mapping[str, Any]]:
    """Rows of ``table`` from the Hugging Face hub (streamed when ``table.streaming``)."""
    datasets = _import_datasets()
    logger.info("loading %s from the hub", table)
    try:
        return datasets.load_dataset(
            table.path, table.config, split=table.split, streaming=table.streaming, revision=table.revision
        )
    # the hub client raises many unrelated types for one cause (unreachable, absent, gated, script-based)
    except Exception as err:
        hint = "check the network and the dataset's terms on huggingface.co"
        if "scripts are no longer supported" in str(err):
            hint = "this hub dataset needs a loading script, which the installed `datasets` no longer runs"
        raise DatasetLoadError(
            f"{table}: cannot load from the hub ({type(err).__name__}: {err}); {hint}; or pass --data-dir "
            f"with a local mirror ({table.mirror_path('DIR')} written by save_to_disk)"
        ) from None


def mirror_loader(root: Path) -> HubLoader:
    """A loader reading ``root/<hub id>/<config>`` folders written by ``save_to_disk``."""

    def load(table: HubTable) -> Iterable[Mapping[str, Any]]:
        folder = table.mirror_path(root)
        if not folder.is_dir():
            raise DatasetLoadError(
                f"{folder}: not found; a --data-dir for hub datasets holds DIR/<hub id>/<config> folders "
                f"written by save_to_disk (here: {table})"
            )
        datasets = _import_datasets()
        try:
            loaded = datasets.load_from_disk(str(folder))
        except (FileNotFoundError, ValueError) as err:
            raise DatasetLoadError(
                f"{folder}: not a save_to_disk folder ({err}); save it with save_to_disk"
            ) from None
        if isinstance(loaded, datasets.DatasetDict):
            if table.split not in loaded:
                raise DatasetLoadError(
                    f"{folder}: has splits {', '.join(loaded)}, not {table.split!r}; save the {table.split!r} split"
                )
            return loaded[table.split]
        return loaded

    return load


def choose_loader(data_dir: str | Path | None, hub_loader: HubLoader | None) -> HubLoader:
    if hub_loader is not None:
        return hub_loader
    if data_dir is not None:
        return mirror_loader(Path(data_dir))
    return load_from_hub


def iter_rows(loader: HubLoader, table: HubTable) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(row number from 1, row); errors while streaming become DatasetLoadError naming the table."""
    rows = iter(loader(table))
    number = 0
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except DatasetLoadError:
            raise
        except Exception as err:  # network or decoding failure inside the datasets library
            raise DatasetLoadError(
                f"{table}: reading failed after row {number} ({type(err).__name__}: {err})"
            ) from None
        number += 1
        yield number, row


def text_field(row: Mapping[str, Any], key: str, table: HubTable, number: int) -> str:
    value = row.get(key)
    if value is None:
        if key == "title":
            return ""
        raise DatasetLoadError(f"{table} row {number}: missing field {key!r}; columns: {', '.join(row)}")
    return value if isinstance(value, str) else str(value)


def read_passages(loader: HubLoader, table: HubTable, expected: int | None, id_key: str = "docid") -> Corpus:
    """Passages in hub order; a repeated id is an error."""
    from tqdm.auto import tqdm

    corpus = Corpus()
    with tqdm(total=expected, unit="doc", desc=str(table), disable=not sys.stderr.isatty()) as bar:
        for number, row in iter_rows(loader, table):
            doc_id = text_field(row, id_key, table, number)
            title, text = text_field(row, "title", table, number), text_field(row, "text", table, number)
            if corpus.add(doc_id, title, text) is not None:
                raise DatasetLoadError(
                    f"{table} row {number}: passage id {doc_id!r} appears twice; ids must be unique"
                )
            bar.update()
    return corpus
