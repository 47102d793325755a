"""MIRACL: 18 languages, Wikipedia passages, native-speaker queries and judgments (dev split).

Files read from the hub (no loading script), each at a pinned commit:

- ``miracl/miracl`` @ 5be20db9509754dadad47689368639fcec739c00:
  ``miracl-v1.0-<lang>/topics/topics.miracl-v1.0-<lang>-<split>.tsv`` (``qid<TAB>query``) and
  ``miracl-v1.0-<lang>/qrels/qrels.miracl-v1.0-<lang>-<split>.tsv`` (TREC ``qid Q0 docid grade``,
  tab-separated; grade 0 = judged non-relevant, kept as a judgment). At this commit they are byte
  for byte the files of castorini/anserini-tools that Pyserini evaluates with (same sha256).
- ``miracl/miracl-corpus`` @ d921ec7e349ce0d28daf30b2da9da5ee698bef0d:
  ``miracl-corpus-v1.0-<lang>/docs-<i>.jsonl.gz``, i = 0 .. shards-1, gzipped JSON lines
  ``{"docid": "<page id>#<passage>", "title": ..., "text": ...}``, read one line at a time.

The commits are those public pinned downloads of these repositories use (not checked against the
hub from here). Shard counts are those published with the corpus; each shard holds up to 500,000
passages, which the passage counts agree with. Counts: Zhang et al. 2023 (MIRACL paper and README).
"""

from __future__ import annotations

from pathlib import Path

from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import HubFile, fetch
from evaluator.datasets.layout import check_judged_docs, read_beir_copy, read_corpus, read_judged_topics
from evaluator.datasets.spec import MIRACL_HEADLINE, DatasetSpec

FAMILY = "miracl"
TOPICS_REPO = "miracl/miracl"
TOPICS_REVISION = "5be20db9509754dadad47689368639fcec739c00"
CORPUS_REPO = "miracl/miracl-corpus"
CORPUS_REVISION = "d921ec7e349ce0d28daf30b2da9da5ee698bef0d"

# language: (name, dev queries, passages, corpus shards)
_LANGUAGES: dict[str, tuple[str, int, int, int]] = {
    "ar": ("Arabic", 2896, 2061414, 5),
    "bn": ("Bengali", 411, 297265, 1),
    "en": ("English", 799, 32893221, 66),
    "es": ("Spanish", 648, 10373953, 21),
    "fa": ("Persian", 632, 2207172, 5),
    "fi": ("Finnish", 1271, 1883509, 4),
    "fr": ("French", 343, 14636953, 30),
    "hi": ("Hindi", 350, 506264, 2),
    "id": ("Indonesian", 960, 1446315, 3),
    "ja": ("Japanese", 860, 6953614, 14),
    "ko": ("Korean", 213, 1486752, 3),
    "ru": ("Russian", 1252, 9543918, 20),
    "sw": ("Swahili", 482, 131924, 1),
    "te": ("Telugu", 828, 518079, 2),
    "th": ("Thai", 733, 542166, 2),
    "zh": ("Chinese", 393, 4934368, 10),
    "de": ("German", 305, 15866222, 32),
    "yo": ("Yoruba", 119, 49043, 1),
}

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        id=f"{FAMILY}/{lang}",
        family=FAMILY,
        name=lang,
        split="dev",
        language=lang,
        source=TOPICS_REPO,
        group="MIRACL",
        headline_metrics=MIRACL_HEADLINE[0],
        headline_source=MIRACL_HEADLINE[1],
        license="Apache-2.0 (judgments); Wikipedia text CC BY-SA",
        revision=TOPICS_REVISION,
        num_queries=num_queries,
        num_docs=num_docs,
        homepage="https://project-miracl.github.io/",
        description=f"{name} Wikipedia passages, native-speaker questions",
    )
    for lang, (name, num_queries, num_docs, _shards) in _LANGUAGES.items()
]


def topics_file(lang: str, split: str) -> HubFile:
    return HubFile(TOPICS_REPO, TOPICS_REVISION, f"miracl-v1.0-{lang}/topics/topics.miracl-v1.0-{lang}-{split}.tsv")


def qrels_file(lang: str, split: str) -> HubFile:
    return HubFile(TOPICS_REPO, TOPICS_REVISION, f"miracl-v1.0-{lang}/qrels/qrels.miracl-v1.0-{lang}-{split}.tsv")


def corpus_files(lang: str) -> list[HubFile]:
    shards = _LANGUAGES[lang][3]
    return [
        HubFile(CORPUS_REPO, CORPUS_REVISION, f"miracl-corpus-v1.0-{lang}/docs-{i}.jsonl.gz") for i in range(shards)
    ]


def load_judgments(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> tuple[dict[str, str], dict[str, dict[str, int]], Path]:
    """The judged queries and qrels of ``spec.split``, and the qrels file they came from."""
    topics = fetch(topics_file(spec.name, spec.split), data_dir, cache_dir)
    qrels = fetch(qrels_file(spec.name, spec.split), data_dir, cache_dir)
    return *read_judged_topics(topics, qrels), qrels


def load(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Dataset:
    converted = read_beir_copy(data_dir, spec)
    if converted is not None:
        return converted
    queries, qrels, qrels_path = load_judgments(spec, data_dir, cache_dir)
    shards = [fetch(file, data_dir, cache_dir) for file in corpus_files(spec.name)]
    corpus = read_corpus(shards, id_key="docid")
    check_judged_docs(qrels, corpus, spec, qrels_path, corpus_name=f"{CORPUS_REPO} {spec.name} passages")
    dataset = Dataset(spec=spec, corpus=corpus, queries=queries, qrels=qrels)
    check_against_spec(dataset, str(topics_file(spec.name, spec.split)))
    return dataset
