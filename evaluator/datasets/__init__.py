"""Datasets: the spec registry and one loader per family (beir, miracl, mmarco, trec_dl, classic, local).

    >>> from evaluator.datasets import load_dataset
    >>> scifact = load_dataset("beir/scifact")                     # downloaded once, then cached
    >>> cran = load_dataset("classic/cranfield", data_dir="path/to/cranfield")
    >>> mine = load_dataset("local:path/to/folder")                # any BEIR-layout folder

The cache is ``$IRBOARD_CACHE`` (default ``$XDG_CACHE_HOME/irboard`` or ``~/.cache/irboard``); hub
datasets (miracl, mmarco, and beir with ``IRBOARD_BEIR_SOURCE=hub``, see ``beir_hub``) are downloaded
file by file at pinned commits (see ``hub``). docs/datasets.md lists every source.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evaluator.datasets import beir, classic, declared, local, miracl, mmarco, trec_dl
from evaluator.datasets.dataset import Corpus, Dataset, spec_for_split
from evaluator.datasets.spec import LOCAL_PREFIX, DatasetSpec, all_specs, query_ids_sha256, registry
from evaluator.errors import UnknownNameError

__all__ = [
    "Corpus",
    "Dataset",
    "DatasetSpec",
    "all_specs",
    "get_spec",
    "load_dataset",
    "query_ids_sha256",
]

_PathLike = str | Path
# family -> loader(spec, data_dir, cache_dir)
_LOADERS: dict[str, Callable[..., Dataset]] = {
    beir.FAMILY: beir.load,
    classic.FAMILY: classic.load,
    local.FAMILY: local.load,
    miracl.FAMILY: miracl.load,
    mmarco.FAMILY: mmarco.load,
    trec_dl.FAMILY: trec_dl.load,
}


def get_spec(dataset_id: str) -> DatasetSpec:
    """The spec of a registered id, of a declared one (`declared`: a file in datasets/, or a local folder named in
    this process), or one built for ``local:<dir>``."""
    if dataset_id.startswith(LOCAL_PREFIX):
        return local.local_spec(dataset_id)
    try:
        return registry().get(dataset_id)
    except UnknownNameError:
        found = declared.find_declared(dataset_id)
        if found is None:
            raise
        return found.spec


def load_dataset(
    dataset: str | DatasetSpec,
    data_dir: _PathLike | None = None,
    cache_dir: _PathLike | None = None,
    split: str | None = None,
) -> Dataset:
    """Load one split (default: the spec's official split) of a dataset id or spec.

    ``data_dir``: a local copy instead of the download: a BEIR-layout folder, or for miracl, mmarco
    and BEIR's hub copies a mirror laid out like the hub (``DIR/<repository>/<path in it>``).
    ``cache_dir``: overrides ``$IRBOARD_CACHE``.
    """
    if isinstance(dataset, DatasetSpec):
        spec = dataset
    elif dataset.startswith(LOCAL_PREFIX):
        spec = local.local_spec(dataset, data_dir)
    else:
        spec = get_spec(dataset)
    spec = spec_for_split(spec, split)
    return _LOADERS[spec.family](spec, data_dir=data_dir, cache_dir=cache_dir)
