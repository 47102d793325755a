"""mMARCO: MS MARCO passage ranking machine-translated into 13 languages, plus the English original.

Query and document languages are chosen independently: ``mmarco/fr`` has French queries and
passages, ``mmarco/fr-en`` French queries over English passages. Files read from the hub repository
``unicamp-dl/mmarco`` (no loading script) at commit 6d039c4638c0ba3e46a9cb7b498b145e7edc6230
(Google-translation release, ``<language>`` as below):

- ``data/google/queries/dev/<language>_queries.dev.small.tsv``: ``qid<TAB>query``, the dev-small
  queries under MS MARCO's own query ids;
- ``data/qrels.dev.small.tsv``: MS MARCO's dev-small qrels ``qid 0 pid 1`` (tab-separated; the same
  judgments as Anserini's ``qrels.msmarco-passage.dev-subset.txt``, tabs for spaces, md5
  38a80559a561707ac2ec0f150ecd1e8a), shared by every language since passage ids are too;
- ``data/google/collections/<language>_collection.tsv``: ``pid<TAB>passage``, 8,841,823 lines (2.7 to
  7.7 GB depending on the language), read one line at a time.

The commit is the one public pinned downloads of this repository use (not checked against the hub
from here).
"""

from __future__ import annotations

from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import HubFile, fetch
from evaluator.datasets.layout import check_judged_docs, read_beir_copy, read_corpus, read_judged_topics
from evaluator.datasets.spec import MSMARCO_HEADLINE, DatasetSpec
from evaluator.errors import DatasetLoadError

FAMILY = "mmarco"
SOURCE = "unicamp-dl/mmarco"
REVISION = "6d039c4638c0ba3e46a9cb7b498b145e7edc6230"
QRELS_FILE = HubFile(SOURCE, REVISION, "data/qrels.dev.small.tsv")
NUM_DEV_QUERIES = 6980  # MS MARCO dev small
NUM_PASSAGES = 8841823

# ISO 639-1 code: language name as the hub's file names spell it
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
        headline_metrics=MSMARCO_HEADLINE[0],
        headline_source=MSMARCO_HEADLINE[1],
        revision=REVISION,
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


def queries_file(language: str) -> HubFile:
    """The dev-small queries in ``language`` (ISO code)."""
    return HubFile(SOURCE, REVISION, f"data/google/queries/dev/{LANGUAGES[language]}_queries.dev.small.tsv")


def collection_file(language: str) -> HubFile:
    """The passages in ``language`` (ISO code)."""
    return HubFile(SOURCE, REVISION, f"data/google/collections/{LANGUAGES[language]}_collection.tsv")


def load_judgments(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> tuple[dict[str, str], dict[str, dict[str, int]], Path]:
    """The judged dev-small queries in the query language, the qrels, and the qrels file."""
    if spec.split != "dev":
        raise DatasetLoadError(
            f"{spec.id}: split {spec.split!r} is not published with judgments; mMARCO is evaluated on 'dev' "
            "(MS MARCO dev small)"
        )
    query_lang, _ = languages_of(spec)
    topics = fetch(queries_file(query_lang), data_dir, cache_dir)
    qrels = fetch(QRELS_FILE, data_dir, cache_dir)
    return *read_judged_topics(topics, qrels), qrels


def load(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Dataset:
    converted = read_beir_copy(data_dir, spec)
    if converted is not None:
        return converted
    queries, qrels, qrels_path = load_judgments(spec, data_dir, cache_dir)
    collection = collection_file(languages_of(spec)[1])
    corpus = read_corpus(fetch(collection, data_dir, cache_dir))
    check_judged_docs(qrels, corpus, spec, qrels_path, corpus_name=str(collection))
    dataset = Dataset(spec=spec, corpus=corpus, queries=queries, qrels=qrels)
    check_against_spec(dataset, str(queries_file(languages_of(spec)[0])))
    return dataset
