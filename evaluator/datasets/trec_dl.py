"""TREC Deep Learning 2019 and 2020, passage ranking: NIST's graded judgments over the MS MARCO v1 passages.

The topics and qrels are the official files Anserini and Pyserini evaluate with (``evaluator.datasets.official``:
``qrels.dl19-passage.txt``, ``topics.dl19-passage.txt``, ``qrels.dl20-passage.txt``, ``topics.dl20.txt``); only the
judged queries count (43 and 54; ``topics.dl20.txt`` holds all 200 test queries). Grades run 0-3 and grade 2 is the
lowest that counts as relevant for binary measures (AP, R@k, P@k, RR), graded gains for nDCG: TREC's rule for these
sets (``trec_eval -l 2``, as the track overviews and Pyserini's tables score them). The passages are MS MARCO v1's
8,841,823, the same ids as ``beir/msmarco`` and ``mmarco/en``, read from the same file as ``mmarco/en``.
"""

from __future__ import annotations

from pathlib import Path

from evaluator.datasets import mmarco
from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.hub import fetch
from evaluator.datasets.layout import check_judged_docs, read_beir_copy, read_corpus, read_judged_topics
from evaluator.datasets.spec import TREC_DL_HEADLINE, DatasetSpec

FAMILY = "msmarco-passage"
RELEVANCE_LEVEL = 2  # TREC DL: grade 1 ("related") is not relevant for binary measures

# year: judged queries
_YEARS: dict[int, int] = {2019: 43, 2020: 54}


def _spec(year: int, num_queries: int) -> DatasetSpec:
    return DatasetSpec(
        id=f"{FAMILY}/trec-dl-{year}",
        family=FAMILY,
        name=f"trec-dl-{year}",
        split="test",
        language="en",
        source="castorini/anserini-tools (topics, qrels); unicamp-dl/mmarco (passages)",
        group="TREC DL",
        headline_metrics=TREC_DL_HEADLINE[0],
        headline_source=TREC_DL_HEADLINE[1],
        relevance_level=RELEVANCE_LEVEL,
        license="MS MARCO terms (non-commercial research)",
        num_queries=num_queries,
        num_docs=mmarco.NUM_PASSAGES,
        homepage=f"https://trec.nist.gov/data/deep{year}.html",
        description=f"TREC {year} Deep Learning track passage ranking: web questions, NIST's graded judgments",
    )


SPECS: list[DatasetSpec] = [_spec(year, queries) for year, queries in _YEARS.items()]


def load(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Dataset:
    """The judged queries and qrels from the official files, the passages from a BEIR-layout ``data_dir`` or
    mMARCO's English collection (a hub mirror in ``data_dir``, else the hub)."""
    from evaluator.datasets.official import fetch_official, official_judgments

    converted = read_beir_copy(data_dir, spec)
    if converted is not None:
        return converted
    record = official_judgments(spec.id)
    qrels_path = fetch_official(record.qrels, cache_dir)
    queries, qrels = read_judged_topics(fetch_official(record.topics, cache_dir), qrels_path)
    collection = mmarco.collection_file("en")
    corpus = read_corpus(fetch(collection, data_dir, cache_dir))
    check_judged_docs(qrels, corpus, spec, qrels_path, corpus_name=str(collection))
    dataset = Dataset(spec=spec, corpus=corpus, queries=queries, qrels=qrels)
    check_against_spec(dataset, record.topics.name)
    return dataset
