"""One split of a dataset: its corpus (an Arrow file, evaluator/datasets/corpus.py), queries and qrels, with checks
against its spec."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from evaluator.datasets.corpus import Corpus
from evaluator.datasets.spec import DatasetSpec, query_ids_sha256
from evaluator.errors import DatasetLoadError


@dataclass
class Dataset:
    """One split of a dataset. ``queries`` holds exactly the queries that have qrels."""

    spec: DatasetSpec
    corpus: Corpus
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    @property
    def num_docs(self) -> int:
        return len(self.corpus)

    @property
    def num_queries(self) -> int:
        return len(self.queries)


def spec_for_split(spec: DatasetSpec, split: str | None) -> DatasetSpec:
    """The spec itself, or a copy for another split (whose official counts are not known)."""
    if split is None or split == spec.split:
        return spec
    return dataclasses.replace(spec, split=split, num_queries=None, query_ids_sha256=None)


def check_against_spec(dataset: Dataset, where: str) -> None:
    """Refuse data whose queries or documents differ from the spec's official counts.

    ``where`` names the data (folder or hub id) for the message.
    """
    spec = dataset.spec
    fix = "use the official files, or evaluate this copy as local:<dir> under its own id"
    if spec.num_queries is not None and dataset.num_queries != spec.num_queries:
        raise DatasetLoadError(
            f"{where}: split {spec.split!r} has {dataset.num_queries} queries with qrels, "
            f"expected {spec.num_queries} for {spec.id}; {fix}"
        )
    if spec.query_ids_sha256 is not None:
        digest = query_ids_sha256(dataset.queries)
        if digest != spec.query_ids_sha256:
            raise DatasetLoadError(
                f"{where}: the query ids of split {spec.split!r} differ from those of {spec.id} "
                f"(sha256 {digest[:12]}…, expected {spec.query_ids_sha256[:12]}…); {fix}"
            )
    if spec.num_docs is not None and dataset.num_docs != spec.num_docs:
        raise DatasetLoadError(
            f"{where}: corpus has {dataset.num_docs} documents, expected {spec.num_docs} for {spec.id}; {fix}"
        )
