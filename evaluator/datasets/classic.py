"""Classic test collections (Cranfield, CISI, CACM) converted to the BEIR layout.

There is no official BEIR-layout download of these, so they are read from ``--data-dir`` or from
``<cache>/classic/<name>`` where a user placed the folder. Query-id fingerprints were computed from
the verified conversions; they catch a copy whose judged queries differ.
"""

from __future__ import annotations

from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.download import cache_root
from evaluator.datasets.layout import read_beir_folder
from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError

FAMILY = "classic"
_LICENSE = "no licence stated; distributed for research by the Glasgow IR group"


def _spec(name: str, homepage: str, num_queries: int, num_docs: int, sha256: str, about: str) -> DatasetSpec:
    return DatasetSpec(
        id=f"{FAMILY}/{name}",
        family=FAMILY,
        name=name,
        split="test",
        language="en",
        source=homepage,
        group="Classic",
        license=_LICENSE,
        num_queries=num_queries,
        num_docs=num_docs,
        query_ids_sha256=sha256,
        homepage=homepage,
        description=about,
    )


_GLASGOW = "http://ir.dcs.gla.ac.uk/resources/test_collections"
SPECS: list[DatasetSpec] = [
    _spec(
        "cranfield",
        f"{_GLASGOW}/cran/",
        225,
        1400,
        "069cee8578b44bb0efeb41c7df8ee7d70af52310063f0763c6f0336679439dab",
        "aeronautics abstracts; graded judgments (4 = complete answer, 0 = judged non-relevant)",
    ),
    _spec(
        "cisi",
        f"{_GLASGOW}/cisi/",
        76,
        1460,
        "7c5a2c05d5f5d974901c5e60fa7833bedc951f6e65e4212cb82a563463eb34e1",
        "information-science abstracts; 76 of 112 queries judged",
    ),
    _spec(
        "cacm",
        f"{_GLASGOW}/cacm/",
        52,
        3204,
        "05209a59416279a93160b849a6139e8e5f5bc7e1769574de31ec5a7f1895ad5f",
        "CACM titles and abstracts; 52 of 64 queries judged",
    ),
]


def load(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Dataset:
    folder = Path(data_dir) if data_dir is not None else cache_root(cache_dir) / FAMILY / spec.name
    if data_dir is None and not folder.is_dir():
        raise DatasetLoadError(
            f"{spec.id}: no copy found at {folder} and there is no official download; pass --data-dir "
            "with a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or place one there"
        )
    dataset = read_beir_folder(folder, spec)
    check_against_spec(dataset, str(folder))
    return dataset
