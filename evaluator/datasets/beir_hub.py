"""BEIR datasets from the Hugging Face hub: MTEB's copies of BEIR's files, read directly (no loading script).

A ``mteb/<name>`` dataset repository holds BEIR's layout as plain files: ``corpus.jsonl`` (one
``{"_id", "title", "text"}`` object a line: BEIR's records without their ``metadata``),
``queries.jsonl`` (``{"_id", "text"}``) and the qrels of each split, either BEIR's TSV
``qrels/<split>.tsv`` (header ``query-id corpus-id score``) or ``qrels/<split>.jsonl``
(``{"query-id", "corpus-id", "score"}``, the score written as a string). Only these files are
downloaded (``hub.fetch``), each at the commit pinned below, and read one line at a time.

Each pin is a commit at which public pinned downloads fetch exactly these paths (docs/datasets.md
names them; the hub itself cannot be reached from here). SciFact's three files are also pinned by
sha256 and size, published with that commit; rebuilt from BEIR's ``scifact.zip`` they come out byte
for byte the same (the tests rebuild them), so ``beir/scifact`` from the hub is BEIR's SciFact.

The other hub copies, ``BeIR/<name>`` with ``BeIR/<name>-qrels``, are not used: their current
commits hold Parquet conversions (``corpus/corpus-00000-of-00001.parquet``), earlier ones gzipped
JSON lines next to a loading script; MTEB's plain JSON lines need neither pyarrow nor a script.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import HubFile, fetch
from evaluator.datasets.layout import read_beir_files, read_jsonl_qrels, read_qrels, read_queries
from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError, InputFormatError

logger = logging.getLogger(__name__)

SOURCE_ENV = "IRBOARD_BEIR_SOURCE"  # "zip" (default): BEIR's md5-checked archives; "hub": the copies below
SOURCES = ("zip", "hub")


@dataclass(frozen=True)
class HubCopy:
    repo: str
    revision: str
    qrels_format: str  # "tsv" or "jsonl": how this commit publishes qrels/<split>.<format>
    sha256: dict[str, str] = dataclasses.field(default_factory=dict)  # path -> sha256, where published

    def file(self, path: str) -> HubFile:
        return HubFile(self.repo, self.revision, path, self.sha256.get(path))


# BEIR name -> its pinned hub copy (see docs/datasets.md for where each commit and file list was read).
# fmt: off
HUB_COPIES: dict[str, HubCopy] = {
    "scifact": HubCopy("mteb/scifact", "cf10ab6856b15b0e670ef8ae5dae4e266c12d035", "tsv", {
        "corpus.jsonl": "f0d32db0d156b526d75921ed7a76f2cb912902631c87248c5c97c617bad0b60c",  # 8,023,638 bytes
        "queries.jsonl": "9db7df096f7414435d52bafcbacf814c30cea50eb565c1e8fa6d11440759bba8",  # 129,085 bytes
        "qrels/test.tsv": "0864bb985e0ca2367ba217977e72004d549054b2b06666ed9d4825ac7c21284c",  # 5,389 bytes
    }),
    "nfcorpus": HubCopy("mteb/nfcorpus", "52ac3f19d3449632d9f00aab0ad34a110fc03816", "tsv"),
    "fiqa": HubCopy("mteb/fiqa", "5e59eeb3a7df6b85882112b747008547c21587ea", "tsv"),
    "arguana": HubCopy("mteb/arguana", "6c1bcf74b13dfd823aff056b79d4d93e702f19c7", "jsonl"),
    "msmarco": HubCopy("mteb/msmarco", "49b09e5f3736c430f448d07150a5c2d425c24ce3", "tsv"),
}
# fmt: on


def hub_copy(spec: DatasetSpec) -> HubCopy | None:
    return HUB_COPIES.get(spec.name)


def hub_files(spec: DatasetSpec) -> tuple[HubFile, HubFile, HubFile]:
    """The corpus, queries and qrels files of ``spec.split`` in its pinned hub copy."""
    copy = _require_copy(spec)
    qrels = f"qrels/{spec.split}.{copy.qrels_format}"
    return copy.file("corpus.jsonl"), copy.file("queries.jsonl"), copy.file(qrels)


def chosen_source(spec: DatasetSpec, data_dir: str | Path | None) -> str:
    """Where ``spec`` is read from: "hub" for a ``data_dir`` mirroring its hub copy
    (``DIR/<repository>/corpus.jsonl``); else ``$IRBOARD_BEIR_SOURCE`` (default "zip"), where "hub"
    falls back to the zip for a dataset without a pinned hub copy."""
    copy = hub_copy(spec)
    if data_dir is not None:
        mirrored = copy is not None and (Path(data_dir) / copy.repo / "corpus.jsonl").is_file()
        return "hub" if mirrored else "zip"
    source = os.environ.get(SOURCE_ENV, "").strip().lower() or "zip"
    if source not in SOURCES:
        raise DatasetLoadError(f"{SOURCE_ENV}={source!r}: unknown BEIR source; use one of {', '.join(SOURCES)}")
    if source == "hub" and copy is None:
        logger.info("%s: no hub copy is pinned; downloading BEIR's zip", spec.id)
        return "zip"
    return source


def load_judgments(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> tuple[dict[str, str], dict[str, dict[str, int]], Path]:
    """The judged queries (qrels order) and qrels of ``spec.split`` from the hub copy, and the qrels file."""
    _, queries_file, qrels_file = hub_files(spec)
    qrels_path = fetch(qrels_file, data_dir, cache_dir)
    reader = read_jsonl_qrels if qrels_file.path.endswith(".jsonl") else read_qrels
    qrels, _ = reader(qrels_path)
    queries_path = fetch(queries_file, data_dir, cache_dir)
    texts, _ = read_queries(queries_path, keep=set(qrels))
    missing = [query_id for query_id in qrels if query_id not in texts]
    if missing:
        raise InputFormatError(f"{qrels_path}: judged query {missing[0]!r} is not in {queries_path}; "
                               "the queries and qrels must be of the same commit")
    return {query_id: texts[query_id] for query_id in qrels}, qrels, qrels_path


def load(spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None) -> Dataset:
    """``spec`` from its hub copy; the result's spec names the repository and commit read."""
    files = hub_files(spec)
    paths = [fetch(file, data_dir, cache_dir) for file in files]
    copy = _require_copy(spec)
    pinned = dataclasses.replace(spec, source=copy.repo, revision=copy.revision, md5=None)
    dataset = read_beir_files(*paths, pinned)
    check_against_spec(dataset, str(files[0]))
    return dataset


def _require_copy(spec: DatasetSpec) -> HubCopy:
    copy = hub_copy(spec)
    if copy is None:
        names = ", ".join(f"beir/{name}" for name in HUB_COPIES)
        raise DatasetLoadError(
            f"{spec.id}: no hub copy is pinned for this dataset (pinned: {names}); "
            "download BEIR's zip instead (beir.load), or pass --data-dir with a BEIR-layout copy"
        )
    return copy
