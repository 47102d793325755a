"""Dataset specs and the one registry of dataset ids.

Each family module (beir, miracl, mmarco, trec_dl, classic) declares its specs as data in a ``SPECS`` list;
the registry collects them on first use and refuses duplicate ids. ``local:<dir>`` ids are not
registered: their spec is built from the folder on demand.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from evaluator.errors import UnknownNameError, closest_names

LOCAL_PREFIX = "local:"

# Family modules whose SPECS make up the registry, in display order.
_FAMILY_MODULES = ("beir", "miracl", "mmarco", "trec_dl", "classic")


@dataclass(frozen=True, kw_only=True)
class DatasetSpec:
    """What is needed to fetch, check and score one dataset split.

    ``num_queries``, ``num_docs`` and ``query_ids_sha256`` describe the official ``split``; a loaded
    copy that disagrees with them is refused, so a result under this id is always on the same data.
    """

    id: str
    family: str
    name: str
    split: str
    language: str  # ISO 639-1 code; "fr-en" style (query-doc) when the two differ
    source: str  # download URL, hub id, or folder for local datasets
    group: str  # leaderboard display group: "BEIR", "MIRACL", "mMARCO", "TREC DL", "Classic", "Local"
    main_metric: str = "nDCG@10"
    # The metrics the dataset's family is published with (main metric first), and where: `evaluate` writes them
    # beside the standard set, and the dataset page shows them first. Empty: just the main metric.
    headline_metrics: tuple[str, ...] = ()
    headline_source: str = ""
    # Evaluation rules, part of the dataset's definition (docs/metrics.md, "Per-dataset rules"): a result must
    # record the same ones. ignore_identical_ids drops a retrieved doc whose id equals the query id.
    ignore_identical_ids: bool = False
    relevance_level: int = 1  # lowest grade that counts as relevant for binary measures
    allow_unknown_qrels_docs: bool = False  # official qrels name documents missing from the corpus
    license: str = ""
    md5: str | None = None  # published md5 of the downloaded archive
    revision: str | None = None  # hub revision, None for the default branch
    num_queries: int | None = None  # queries with qrels in the official split
    num_docs: int | None = None
    query_ids_sha256: str | None = None  # see query_ids_sha256()
    homepage: str = ""
    description: str = ""


# Each family's published metrics (docs/datasets.md, "Headline metrics", says why these).
BEIR_HEADLINE = (("nDCG@10", "R@100", "R@1000"),
                 "nDCG@10 and Recall@100: the BEIR paper (Thakur et al., NeurIPS 2021 Datasets and Benchmarks: "
                 "nDCG@10 in its results, Recall@100 beside it); Recall@1000: Pyserini's and Anserini's BEIR "
                 "regression tables")
MIRACL_HEADLINE = (("nDCG@10", "R@100"),
                   "nDCG@10 and Recall@100: the MIRACL paper (Zhang et al., TACL 2023) and Anserini's MIRACL "
                   "regressions")
MSMARCO_HEADLINE = (("RR@10", "R@1000"),
                    "MRR@10: the official MS MARCO passage ranking leaderboard (microsoft.github.io/msmarco); "
                    "Recall@1000: Pyserini's and Anserini's MS MARCO passage tables (trec_eval recall.1000)")
TREC_DL_HEADLINE = (("nDCG@10", "AP@1000", "R@1000"),
                    "nDCG@10 (graded gains), AP and Recall@1000 with grade 2 as the relevance threshold: the TREC "
                    "Deep Learning track overviews (Craswell et al., 2019 and 2020) and Pyserini's and Anserini's "
                    "DL passage tables (trec_eval -c -m ndcg_cut.10; -c -l 2 -m map; -c -l 2 -m recall.1000)")


def query_ids_sha256(query_ids: Iterable[str]) -> str:
    """sha256 of the sorted query ids joined by newlines: a fingerprint of which queries count."""
    return hashlib.sha256("\n".join(sorted(query_ids)).encode("utf-8")).hexdigest()


class DatasetRegistry:
    """Specs by id; registering an id twice is a bug and raises."""

    def __init__(self) -> None:
        self._specs: dict[str, DatasetSpec] = {}

    def register(self, spec: DatasetSpec) -> None:
        if spec.id in self._specs:
            raise ValueError(f"dataset id {spec.id!r} is registered twice")
        if spec.id.startswith(LOCAL_PREFIX):
            raise ValueError(f"dataset id {spec.id!r}: the {LOCAL_PREFIX} prefix is reserved for folders")
        if spec.headline_metrics and spec.headline_metrics[0] != spec.main_metric:
            raise ValueError(f"dataset id {spec.id!r}: headline_metrics must start with the main metric")
        self._specs[spec.id] = spec

    def get(self, dataset_id: str) -> DatasetSpec:
        spec = self._specs.get(dataset_id)
        if spec is None:
            raise UnknownNameError(self._unknown_message(dataset_id))
        return spec

    def all(self) -> list[DatasetSpec]:
        return list(self._specs.values())

    def _unknown_message(self, dataset_id: str) -> str:
        ids = list(self._specs)
        close = closest_names(dataset_id.lower(), ids, n=3)
        if not close:  # a bare name such as "scifact" matches on the part after the family
            close = [i for i in ids if i.split("/", 1)[-1] == dataset_id.lower()][:3]
        hint = f"did you mean {', '.join(close)}? " if close else ""
        families = sorted({i.split("/", 1)[0] for i in ids})
        return (
            f"unknown dataset id {dataset_id!r}; {hint}ids look like <family>/<name> with family one of "
            f"{', '.join(families)}, or {LOCAL_PREFIX}<dir> for a BEIR-layout folder"
        )


_REGISTRY: DatasetRegistry | None = None


def registry() -> DatasetRegistry:
    """The registry, filled from the family modules on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        built = DatasetRegistry()
        for module_name in _FAMILY_MODULES:
            module = importlib.import_module(f"{__package__}.{module_name}")
            for spec in module.SPECS:
                built.register(spec)
        _REGISTRY = built
    return _REGISTRY


def all_specs() -> list[DatasetSpec]:
    """Every registered spec, grouped by family in display order."""
    return registry().all()
