"""BEIR datasets from the Hugging Face hub's files at pinned commits, read directly (no loading script).

Two kinds of copy hold BEIR's layout as plain files:

- ``mteb/<name>``: ``corpus.jsonl`` (one ``{"_id", "title", "text"}`` object a line: BEIR's records
  without their ``metadata``), ``queries.jsonl`` (``{"_id", "text"}``) and the qrels of each split,
  BEIR's TSV ``qrels/<split>.tsv`` (header ``query-id corpus-id score``) or ``qrels/<split>.jsonl``
  (``{"query-id", "corpus-id", "score"}``, the score written as a string);
- ``BeIR/<name>`` with ``BeIR/<name>-qrels``: BEIR's own upload, ``corpus.jsonl.gz`` and
  ``queries.jsonl.gz`` (gzipped JSON lines, next to a loading script that is not used) and, in the
  separate qrels repository, BEIR's TSV ``<split>.tsv`` at its root. Later commits replace the
  gzipped files with Parquet conversions (``corpus/corpus-00000-of-00001.parquet``); the pins are
  earlier commits, where the hub's file listing shows the gzipped files.

Only these three files are downloaded (``hub.fetch``), each at the commit pinned below, and read one
line at a time (gzip streamed). Each pin cites the hub page that shows the file list at that commit
(docs/datasets.md; the hub itself cannot be reached from here). SciFact's three files are also pinned
by sha256 and size; rebuilt from BEIR's ``scifact.zip`` they come out byte for byte the same (the tests
rebuild them), so ``beir/scifact`` from the hub is BEIR's SciFact. Registered BEIR ids without a pin
are read from BEIR's zip; docs/datasets.md lists them with the reason.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import HubFile, fetch
from evaluator.datasets.layout import read_beir_files, read_qrels_file, read_queries
from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError, InputFormatError

logger = logging.getLogger(__name__)

SOURCE_ENV = "IRBOARD_BEIR_SOURCE"  # "zip" (default): BEIR's md5-checked archives; "hub": the copies below
SOURCES = ("zip", "hub")


@dataclass(frozen=True)
class HubCopy:
    """A pinned hub copy of one BEIR dataset: MTEB's (``qrels/`` inside the repository) or BEIR's own
    (gzipped JSON lines, the qrels at the root of the separate ``<repo>-qrels`` repository)."""

    repo: str
    revision: str
    qrels_format: str  # "tsv" or "jsonl": how the qrels of a split are published
    sha256: dict[str, str] = dataclasses.field(default_factory=dict)  # path -> sha256, where published
    gzipped: bool = False  # corpus.jsonl.gz and queries.jsonl.gz (BeIR's copies)
    qrels_at: tuple[str, str] | None = None  # BeIR's: (qrels repository, commit), <split>.tsv at its root

    def file(self, path: str) -> HubFile:
        return HubFile(self.repo, self.revision, path, self.sha256.get(path))

    def files(self, split: str) -> tuple[HubFile, HubFile, HubFile]:
        """The corpus, queries and qrels files of ``split``."""
        suffix = ".gz" if self.gzipped else ""
        name = f"{split}.{self.qrels_format}"
        if self.qrels_at is None:
            qrels = self.file(f"qrels/{name}")
        else:
            qrels = HubFile(*self.qrels_at, name, self.sha256.get(name))
        return self.file(f"corpus.jsonl{suffix}"), self.file(f"queries.jsonl{suffix}"), qrels

    def revisions(self) -> dict[str, str]:
        """Repository -> pinned commit, for every repository read."""
        pinned = {self.repo: self.revision}
        if self.qrels_at is not None:
            pinned[self.qrels_at[0]] = self.qrels_at[1]
        return pinned


def beir_copy(name: str, revision: str, qrels_revision: str) -> HubCopy:
    """BEIR's own copy: ``BeIR/<name>`` (gzipped JSON lines) with its qrels in ``BeIR/<name>-qrels``."""
    return HubCopy(f"BeIR/{name}", revision, "tsv", gzipped=True, qrels_at=(f"BeIR/{name}-qrels", qrels_revision))


# BEIR name -> its pinned hub copy (see docs/datasets.md for where each commit and file list was read).
# fmt: off
HUB_COPIES: dict[str, HubCopy] = {
    "scifact": HubCopy("mteb/scifact", "cf10ab6856b15b0e670ef8ae5dae4e266c12d035", "jsonl", {
        "corpus.jsonl": "f0d32db0d156b526d75921ed7a76f2cb912902631c87248c5c97c617bad0b60c",  # 8,023,638 bytes
        "queries.jsonl": "9db7df096f7414435d52bafcbacf814c30cea50eb565c1e8fa6d11440759bba8",  # 129,085 bytes
        "qrels/test.jsonl": "da33fc0edc7447d43908ea92bf11de010e361ac43228295f09bdcd33ce14730c",  # 19,940 bytes
    }),
    "nfcorpus": HubCopy("mteb/nfcorpus", "52ac3f19d3449632d9f00aab0ad34a110fc03816", "tsv"),
    "fiqa": HubCopy("mteb/fiqa", "5e59eeb3a7df6b85882112b747008547c21587ea", "tsv"),
    "arguana": HubCopy("mteb/arguana", "6c1bcf74b13dfd823aff056b79d4d93e702f19c7", "jsonl"),
    "msmarco": HubCopy("mteb/msmarco", "49b09e5f3736c430f448d07150a5c2d425c24ce3", "tsv"),
    # BEIR's own copies; each commit's file list: https://huggingface.co/datasets/<repository>/tree/<commit>
    "nq": beir_copy("nq", "ed7edb11ab8c173ff4394c30ff266c7297904b24", "519acd4e48bb3e5da22b2b888ce36c614f4f2bc9"),
    "hotpotqa": beir_copy("hotpotqa", "d01a1664af564332aeb82454911d50f83a8a05ee",
                          "1fddb0dd8bebbbdc8bf8df0e16aff3e7b9af6777"),
    "fever": beir_copy("fever", "7e012b2fdeed2d45b1a1a883ab3efad279cf4aff", "8933b506014e3d04293ca58f3e20da1c75401617"),
    "dbpedia-entity": beir_copy("dbpedia-entity", "557e61a19c83e94bb79c1d0e378f599241588b90",
                                "c81f61ac54bbd5f162f9dc6ad36e236e2aeb8d82"),
    "quora": beir_copy("quora", "6205996560df11e3a3da9ab4f926788fc30a7db4", "4426022673e5bb2183cd948ea52f669123fa432b"),
    "scidocs": beir_copy("scidocs", "5c59ef3e437a0a9651c8fe6fde943e7dce59fba5",
                         "6627c96d49b26efd6444412159f99f013855e68d"),
}
# fmt: on


def hub_copy(spec: DatasetSpec) -> HubCopy | None:
    return HUB_COPIES.get(spec.name)


def hub_files(spec: DatasetSpec) -> tuple[HubFile, HubFile, HubFile]:
    """The corpus, queries and qrels files of ``spec.split`` in its pinned hub copy."""
    return _require_copy(spec).files(spec.split)


def chosen_source(spec: DatasetSpec, data_dir: str | Path | None) -> str:
    """Where ``spec`` is read from: "hub" for a ``data_dir`` mirroring its hub copy
    (``DIR/<repository>/corpus.jsonl[.gz]``); else ``$IRBOARD_BEIR_SOURCE`` (default "zip"), where "hub"
    falls back to the zip for a dataset without a pinned hub copy."""
    copy = hub_copy(spec)
    if data_dir is not None:
        mirrored = copy is not None and copy.files(spec.split)[0].mirror_path(data_dir).is_file()
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
    qrels, _ = read_qrels_file(qrels_path)
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
