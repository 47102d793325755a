"""MIRACL: 18 languages, Wikipedia passages, native-speaker queries and judgments (dev split).

Topics and qrels come from hub dataset ``miracl/miracl`` (config = language; rows ``query_id``,
``query``, ``positive_passages``, ``negative_passages``), passages from ``miracl/miracl-corpus``
(config = language, split ``train``; rows ``docid``, ``title``, ``text``), streamed for large
languages. Judged-negative passages are kept as grade 0: judged, never relevant.
Counts: Zhang et al. 2023 (MIRACL paper and project README).
"""

from __future__ import annotations

from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import HubLoader, HubTable, choose_loader, iter_rows, read_passages, text_field
from evaluator.datasets.layout import check_qrels_docs
from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError

FAMILY = "miracl"
TOPICS_SOURCE = "miracl/miracl"
CORPUS_SOURCE = "miracl/miracl-corpus"
CORPUS_SPLIT = "train"
STREAM_ABOVE_DOCS = 1_000_000  # larger corpora are streamed instead of materialised in the hub cache

# language: (name, dev queries, passages)
_LANGUAGES: dict[str, tuple[str, int, int]] = {
    "ar": ("Arabic", 2896, 2061414),
    "bn": ("Bengali", 411, 297265),
    "en": ("English", 799, 32893221),
    "es": ("Spanish", 648, 10373953),
    "fa": ("Persian", 632, 2207172),
    "fi": ("Finnish", 1271, 1883509),
    "fr": ("French", 343, 14636953),
    "hi": ("Hindi", 350, 506264),
    "id": ("Indonesian", 960, 1446315),
    "ja": ("Japanese", 860, 6953614),
    "ko": ("Korean", 213, 1486752),
    "ru": ("Russian", 1252, 9543918),
    "sw": ("Swahili", 482, 131924),
    "te": ("Telugu", 828, 518079),
    "th": ("Thai", 733, 542166),
    "zh": ("Chinese", 393, 4934368),
    "de": ("German", 305, 15866222),
    "yo": ("Yoruba", 119, 49043),
}

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        id=f"{FAMILY}/{lang}",
        family=FAMILY,
        name=lang,
        split="dev",
        language=lang,
        source=TOPICS_SOURCE,
        group="MIRACL",
        license="Apache-2.0 (judgments); Wikipedia text CC BY-SA",
        num_queries=num_queries,
        num_docs=num_docs,
        homepage="https://project-miracl.github.io/",
        description=f"{name} Wikipedia passages, native-speaker questions",
    )
    for lang, (name, num_queries, num_docs) in _LANGUAGES.items()
]


def load(
    spec: DatasetSpec,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    hub_loader: HubLoader | None = None,
) -> Dataset:
    del cache_dir  # the datasets library keeps its own cache
    loader = choose_loader(data_dir, hub_loader)
    topics = HubTable(spec.source, spec.name, spec.split, revision=spec.revision)
    queries, qrels, qrels_rows = read_topics(loader, topics)
    corpus_table = HubTable(
        CORPUS_SOURCE,
        spec.name,
        CORPUS_SPLIT,
        streaming=spec.num_docs is None or spec.num_docs > STREAM_ABOVE_DOCS,
    )
    corpus = read_passages(loader, corpus_table, spec.num_docs)
    check_qrels_docs(qrels_rows, corpus, spec, where=f"{topics} row {{line}}", corpus_name=str(corpus_table))
    dataset = Dataset(spec=spec, corpus=corpus, queries=queries, qrels=qrels)
    check_against_spec(dataset, str(topics))
    return dataset


def read_topics(loader: HubLoader, table: HubTable):
    """Queries with judgments, qrels (positives 1, negatives 0) and the row of each judgment."""
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    rows: dict[tuple[str, str], int] = {}
    for number, row in iter_rows(loader, table):
        query_id = text_field(row, "query_id", table, number)
        judged: dict[str, int] = {}
        # a passage listed as both negative and positive counts as positive
        for key, grade in (("negative_passages", 0), ("positive_passages", 1)):
            for passage in row.get(key) or ():
                judged[text_field(passage, "docid", table, number)] = grade
        if not judged:
            continue  # no judgments: not evaluated
        if query_id in qrels:
            raise DatasetLoadError(
                f"{table} row {number}: query {query_id!r} appears twice; ids must be unique"
            )
        queries[query_id] = text_field(row, "query", table, number)
        qrels[query_id] = judged
        rows.update(((query_id, doc_id), number) for doc_id in judged)
    return queries, qrels, rows
