"""BEIR: the public datasets, downloaded as BEIR's official zips (md5-checked) into the cache.

With ``IRBOARD_BEIR_SOURCE=hub`` (or a ``--data-dir`` mirroring the hub) the datasets that have a
pinned hub copy are read from the Hugging Face hub's files instead (``beir_hub``).

Counts and md5s are BEIR's published ones (README dataset table, Thakur et al. 2021). Each
CQADupStack subforum is its own dataset inside ``cqadupstack.zip``.

BEIR datasets whose corpus is not public (``NOT_PUBLIC``: BEIR publishes no zip, only how to build its layout
from a licensed copy) are registered for their official judgments (``evaluator.datasets.official``): a run file
is scored on them with ``evaluate --run`` and re-scored by ``validate``; running a model needs ``--data-dir`` with
a BEIR-layout folder built from a licensed copy.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from evaluator.datasets import beir_hub
from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.download import cache_root, fetch_archive
from evaluator.datasets.layout import find_file, read_beir_folder
from evaluator.datasets.spec import BEIR_HEADLINE, DatasetSpec
from evaluator.errors import DatasetLoadError

FAMILY = "beir"
BASE_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"
HOMEPAGE = "https://github.com/beir-cellar/beir"

# name: (split, md5 of <name>.zip, test queries, documents, licence, description)
# fmt: off
_DATASETS: dict[str, tuple[str, str, int, int, str, str]] = {
    "msmarco":          ("dev",  "444067daf65d982533ea17ebd59501e4", 6980, 8841823,
                         "MS MARCO terms (non-commercial research)", "Bing questions, web passages"),
    "trec-covid":       ("test", "ce62140cb23feb9becf6270d0d1fe6d1", 50, 171332,
                         "CORD-19 terms (upstream)", "COVID-19 questions, scientific articles"),
    "nfcorpus":         ("test", "a89dba18a62ef92f7d323ec890a0d38d", 323, 3633,
                         "research use (NFCorpus terms)", "nutrition questions, medical articles"),
    "nq":               ("test", "d4d3d2e48787a744b6f6e691ff534307", 3452, 2681468,
                         "CC BY-SA 3.0", "Google questions, Wikipedia passages"),
    "hotpotqa":         ("test", "f412724f78b0d91183a0e86805e16114", 7405, 5233329,
                         "CC BY-SA 4.0", "multi-hop questions, Wikipedia abstracts"),
    "fiqa":             ("test", "17918ed23cd04fb15047f73e6c3bd9d9", 648, 57638,
                         "research use (FiQA 2018, upstream terms)", "financial questions, StackExchange answers"),
    "arguana":          ("test", "8ad3e3c2a5867cdced806d6503f29b99", 1406, 8674,
                         "CC BY 4.0", "arguments, counter-arguments"),
    "webis-touche2020": ("test", "46f650ba5a527fc69e0a6521c5a23563", 49, 382545,
                         "CC BY 4.0", "controversial questions, args.me arguments"),
    "quora":            ("test", "18fb154900ba42a600f84b839c173167", 10000, 522931,
                         "Quora terms (non-commercial)", "duplicate question retrieval"),
    "dbpedia-entity":   ("test", "c2a39eb420a3164af735795df012ac2c", 400, 4635922,
                         "CC BY-SA 3.0", "entity queries, DBpedia abstracts"),
    "scidocs":          ("test", "38121350fc3a4d2f48850f6aff52e4a9", 1000, 25657,
                         "GPL-3.0", "citation prediction, paper abstracts"),
    "fever":            ("test", "5a818580227bfb4b35bb6fa46d9b6c03", 6666, 5416568,
                         "CC BY-SA 3.0", "claims, Wikipedia abstracts"),
    "climate-fever":    ("test", "8b66f0a9126c521bae2bde127b4dc99d", 1535, 5416593,
                         "upstream terms (Climate-FEVER)", "climate claims, Wikipedia abstracts"),
    "scifact":          ("test", "5f7d1de60b170fc8027bb7898e2efca1", 300, 5183,
                         "CC BY-NC 2.0", "scientific claims, paper abstracts"),
}
# fmt: on

# name: (split, test queries, documents, licence, description, how a licensed copy is obtained); BEIR's paper
# (Table 1) and README give the counts.
# fmt: off
NOT_PUBLIC: dict[str, tuple[str, int, int, str, str, str]] = {
    "trec-news": ("test", 57, 594977, "TREC Washington Post terms (licence required)",
                  "news background linking: article headlines, Washington Post articles",
                  "the TREC Washington Post Corpus (v2) is licensed by NIST: https://trec.nist.gov/data/wapost/"),
}
# fmt: on

CQADUPSTACK_MD5 = "4e41456d7df8ee7760a7f866133bda78"
# subforum: (test queries, documents); they sum to BEIR's 13,145 queries and 457,199 documents.
_CQADUPSTACK: dict[str, tuple[int, int]] = {
    "android": (699, 22998),
    "english": (1570, 40221),
    "gaming": (1595, 45301),
    "gis": (885, 37637),
    "mathematica": (804, 16705),
    "physics": (1039, 38316),
    "programmers": (876, 32176),
    "stats": (652, 42269),
    "tex": (2906, 68184),
    "unix": (1072, 47382),
    "webmasters": (506, 17405),
    "wordpress": (541, 48605),
}

# sha256 of the sorted test query ids, computed from verified copies of the official files.
_QUERY_IDS_SHA256 = {
    "scifact": "26cc483d5ed08c9559e5f99948281accbb9aac17b8c2ea6e1e857286d9ebd684",
    "nfcorpus": "f3950f7914eaf889ccceeaa0c7d53c787e674db1e442f8fa07ff8d2aec991d44",
}

# ArguAna's official qrels name a few documents missing from its corpus (beir-cellar/beir#101).
_UNKNOWN_QRELS_DOCS = {"arguana"}


def _spec(
    name: str, split: str, md5: str | None, num_queries: int, num_docs: int, license: str, about: str
) -> DatasetSpec:
    archive = name.split("/", 1)[0]
    return DatasetSpec(
        id=f"{FAMILY}/{name}",
        family=FAMILY,
        name=name,
        split=split,
        language="en",
        source=f"{BASE_URL}/{archive}.zip" if md5 is not None else "",  # no zip: the corpus is not public
        group="BEIR",
        headline_metrics=BEIR_HEADLINE[0],
        headline_source=BEIR_HEADLINE[1],
        # BEIR's evaluator (EvaluateRetrieval.evaluate, ignore_identical_ids=True by default) and Anserini's
        # BEIR regressions (-removeQuery) drop a hit on the query's own id for every BEIR dataset.
        ignore_identical_ids=True,
        allow_unknown_qrels_docs=archive in _UNKNOWN_QRELS_DOCS,
        license=license,
        md5=md5,
        num_queries=num_queries,
        num_docs=num_docs,
        query_ids_sha256=_QUERY_IDS_SHA256.get(name),
        homepage=HOMEPAGE,
        description=about,
    )


SPECS: list[DatasetSpec] = [_spec(name, *row) for name, row in _DATASETS.items()] + [
    _spec(name, split, None, queries, docs, license, about)
    for name, (split, queries, docs, license, about, _obtain) in NOT_PUBLIC.items()
] + [
    _spec(
        f"cqadupstack/{forum}",
        "test",
        CQADUPSTACK_MD5,
        queries,
        docs,
        "CC BY-SA (StackExchange)",
        f"duplicate questions, {forum} StackExchange",
    )
    for forum, (queries, docs) in _CQADUPSTACK.items()
]


def dataset_folder(spec: DatasetSpec, data_dir: str | Path | None, cache_dir: str | Path | None) -> Path:
    """The BEIR-layout folder of ``spec``: under ``data_dir`` when given, else in the cache
    (downloaded and verified on first use)."""
    sub = spec.name.split("/")[1:]  # subforum inside cqadupstack
    if data_dir is None and spec.name in NOT_PUBLIC:
        raise DatasetLoadError(
            f"{spec.id}: its corpus is not public ({NOT_PUBLIC[spec.name][5]}); pass --data-dir with a BEIR-layout "
            "folder built from a licensed copy (corpus.jsonl, queries.jsonl, qrels/test.tsv), or score a run file "
            "with --run, which needs only the official judgments")
    if data_dir is not None:
        folder = Path(data_dir)
        # --data-dir may name the subforum folder itself or the extracted cqadupstack folder
        if sub and find_file(folder, "corpus.jsonl") is None and (folder / sub[0]).is_dir():
            folder = folder / sub[0]
        return folder
    archive = Path(urlparse(spec.source).path).name.removesuffix(".zip")
    root = fetch_archive(spec.source, spec.md5, cache_root(cache_dir) / FAMILY / archive)
    return root.joinpath(*sub)


def load(
    spec: DatasetSpec, data_dir: str | Path | None = None, cache_dir: str | Path | None = None
) -> Dataset:
    if beir_hub.chosen_source(spec, data_dir) == "hub":
        return beir_hub.load(spec, data_dir, cache_dir)
    folder = dataset_folder(spec, data_dir, cache_dir)
    dataset = read_beir_folder(folder, spec)
    check_against_spec(dataset, str(folder))
    return dataset
