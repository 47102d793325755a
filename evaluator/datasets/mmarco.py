"""mMARCO: MS MARCO passage ranking machine-translated into 13 languages, plus the English original.

Query and document languages are chosen independently: ``mmarco/fr`` has French queries and
passages, ``mmarco/fr-en`` French queries over English passages. Queries are the dev-small set
(hub ``unicamp-dl/mmarco``, config ``queries-<language>``, split ``dev``), passages config
``collection-<language>`` (split ``collection``, streamed), and the judgments MS MARCO's dev qrels
(hub ``BeIR/msmarco-qrels``, split ``validation``; passage ids are shared by all translations).
"""

from __future__ import annotations

from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import HubLoader, HubTable, choose_loader, iter_rows, read_passages, text_field
from evaluator.datasets.layout import check_qrels_docs
from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError

FAMILY = "mmarco"
SOURCE = "unicamp-dl/mmarco"
QRELS_SOURCE = "BeIR/msmarco-qrels"
QRELS_SPLIT = "validation"
NUM_DEV_QUERIES = 6980  # MS MARCO dev small
NUM_PASSAGES = 8841823

# ISO 639-1 code: language name as the hub configs spell it
LANGUAGES: dict[str, str] = {
    "ar": "arabic",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fr": "french",
    "hi": "hindi",
    "id": "indonesian",
    "it": "italian",
    "ja": "japanese",
    "nl": "dutch",
    "pt": "portuguese",
    "ru": "russian",
    "vi": "vietnamese",
    "zh": "chinese",
}


def _spec(query_lang: str, doc_lang: str) -> DatasetSpec:
    language = query_lang if query_lang == doc_lang else f"{query_lang}-{doc_lang}"
    query_name, doc_name = LANGUAGES[query_lang].capitalize(), LANGUAGES[doc_lang].capitalize()
    return DatasetSpec(
        id=f"{FAMILY}/{language}",
        family=FAMILY,
        name=language,
        split="dev",
        language=language,
        source=SOURCE,
        group="mMARCO",
        main_metric="RR@10",  # MS MARCO's official measure (MRR@10)
        license="MS MARCO terms (non-commercial research)",
        num_queries=NUM_DEV_QUERIES,
        num_docs=NUM_PASSAGES,
        homepage="https://github.com/unicamp-dl/mMARCO",
        description=f"{query_name} queries, {doc_name} passages (MS MARCO dev small)",
    )


SPECS: list[DatasetSpec] = [_spec(q, q) for q in LANGUAGES] + [
    _spec(q, d) for q in LANGUAGES for d in LANGUAGES if q != d
]


def languages_of(spec: DatasetSpec) -> tuple[str, str]:
    """(query language, document language) as ISO codes."""
    query_lang, _, doc_lang = spec.language.partition("-")
    return query_lang, doc_lang or query_lang


def load(
    spec: DatasetSpec,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    hub_loader: HubLoader | None = None,
) -> Dataset:
    del cache_dir  # the datasets library keeps its own cache
    loader = choose_loader(data_dir, hub_loader)
    query_lang, doc_lang = languages_of(spec)
    qrels_table = HubTable(QRELS_SOURCE, None, QRELS_SPLIT)
    qrels, qrels_rows = read_qrels(loader, qrels_table)

    queries_table = HubTable(
        spec.source, f"queries-{LANGUAGES[query_lang]}", spec.split, revision=spec.revision
    )
    queries: dict[str, str] = {}
    for number, row in iter_rows(loader, queries_table):
        query_id = text_field(row, "id", queries_table, number)
        if query_id in qrels:
            queries[query_id] = text_field(row, "text", queries_table, number)
    for (query_id, _doc), number in qrels_rows.items():
        if query_id not in queries:
            raise DatasetLoadError(
                f"{qrels_table} row {number}: query {query_id!r} is not in {queries_table}; "
                "the qrels and queries must come from the same MS MARCO split"
            )

    corpus_table = HubTable(
        spec.source, f"collection-{LANGUAGES[doc_lang]}", "collection", streaming=True, revision=spec.revision
    )
    corpus = read_passages(loader, corpus_table, spec.num_docs, id_key="id")
    check_qrels_docs(
        qrels_rows, corpus, spec, where=f"{qrels_table} row {{line}}", corpus_name=str(corpus_table)
    )
    dataset = Dataset(spec=spec, corpus=corpus, queries={q: queries[q] for q in qrels}, qrels=qrels)
    check_against_spec(dataset, str(queries_table))
    return dataset


def read_qrels(loader: HubLoader, table: HubTable):
    """Qrels from rows ``query-id``, ``corpus-id``, ``score`` and the row of each judgment."""
    qrels: dict[str, dict[str, int]] = {}
    rows: dict[tuple[str, str], int] = {}
    for number, row in iter_rows(loader, table):
        query_id = text_field(row, "query-id", table, number)
        doc_id = text_field(row, "corpus-id", table, number)
        try:
            score = int(row["score"])
        except (KeyError, TypeError, ValueError):
            raise DatasetLoadError(
                f"{table} row {number}: score {row.get('score')!r} is not an integer grade"
            ) from None
        qrels.setdefault(query_id, {})[doc_id] = score
        rows.setdefault((query_id, doc_id), number)
    return qrels, rows
