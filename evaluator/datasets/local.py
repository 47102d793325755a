"""``local:<dir>``: any BEIR-layout folder (corpus.jsonl, corpus.jsonl.gz or corpus.arrow, queries.jsonl, qrels/).

The spec's id is ``local:<slug of the folder name>`` (lower-case ``[a-z0-9._-]``), so result files
carry a stable, path-free id; ``source`` keeps the resolved folder. The split is ``test`` when
``qrels/test.tsv`` exists, else the only split present; ask for another with ``split=``.
"""

from __future__ import annotations

import re
from pathlib import Path

from evaluator.datasets.dataset import Dataset
from evaluator.datasets.layout import LAYOUT_HINT, qrels_splits, read_beir_folder
from evaluator.datasets.spec import LOCAL_PREFIX, DatasetSpec
from evaluator.errors import DatasetLoadError, UnknownNameError

FAMILY = "local"
DEFAULT_SPLIT = "test"


def slug(name: str) -> str:
    """Lower-case ``[a-z0-9._-]`` form of a folder name."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")
    return cleaned or "dataset"


def default_split(folder: Path) -> str:
    splits = qrels_splits(folder)
    if DEFAULT_SPLIT in splits or len(splits) != 1:
        return DEFAULT_SPLIT
    return splits[0]


def local_spec(dataset_id: str, data_dir: str | Path | None = None) -> DatasetSpec:
    """Spec for ``local:<dir>``; ``data_dir``, when given, is the folder instead of ``<dir>``."""
    target = dataset_id.removeprefix(LOCAL_PREFIX)
    if not target and data_dir is None:
        raise UnknownNameError(f"dataset id {dataset_id!r} names no folder; write {LOCAL_PREFIX}<dir>")
    folder = Path(data_dir if data_dir is not None else target).expanduser().resolve()
    if not folder.is_dir():
        raise DatasetLoadError(f"{dataset_id}: folder {folder} does not exist; {LAYOUT_HINT}")
    return DatasetSpec(
        id=f"local/{slug(Path(target).name or folder.name)}",  # a result id: no ":" in file names
        family=FAMILY,
        name=folder.name,
        split=default_split(folder),
        language="und",  # not declared by the folder
        source=str(folder),
        group="Local",
        description=f"BEIR-layout folder {folder.name}",
    )


def load(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Dataset:
    del cache_dir  # local folders are read in place
    folder = Path(data_dir) if data_dir is not None else Path(spec.source)
    if not folder.is_dir():  # a declared dataset names its data by sha256 only
        raise DatasetLoadError(f"{spec.id}: declared in {spec.source}; pass --data-dir with its BEIR-layout folder")
    return read_beir_folder(folder, spec)
