"""Synthetic result files for the site's tests and benchmark, and the golden site built from them.

    python tests/data/make_synthetic_results.py            # rewrite tests/data/site/results and .../golden
    python tests/data/make_synthetic_results.py --scale 200 30 1000 --out DIR   # benchmark-sized set

Everything is seeded, so the same command writes the same bytes. The golden set has 10 datasets in five
groups, 12 models with gaps in coverage, and a model whose free-text fields carry HTML and script payloads.
A few results carry score samples (for the recall-at-scale prediction) drawn from synthetic scores, and one
carries tied, sparse-like scores (mostly zeros: the prediction models them as a tie mass).


Every golden result stores a (tiny) ranking. Its qrels are synthetic, so the golden build cannot re-score it:
`golden_verification` declares which results and values count as verified, so that the site shows verified
(ranked) and unverified (listed apart) results side by side. Real re-scoring is tested in
tests/leaderboard/test_hostile.py and test_judgments.py.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluator.metrics import Qrels  # noqa: E402
from evaluator.result import (  # noqa: E402
    SCHEMA_VERSION,
    ResultFile,
    Run,
    build_result,
    dump_result,
    parse_result,
    result_path,
    write_atomic,
)
from evaluator.score_samples import ScoreSamples, collect_score_samples  # noqa: E402
from leaderboard.submissions.parallel import forked_map  # noqa: E402

SITE_DATA = ROOT / "tests" / "data" / "site"
GOLDEN_RESULTS = SITE_DATA / "results"
GOLDEN_SITE = SITE_DATA / "golden"
CREATED_AT = "2025-01-15T12:00:00Z"

XSS = "<script>alert('xss')</script>"


@dataclass(frozen=True)
class SyntheticDataset:
    id: str
    name: str
    group: str
    language: str
    main_metric: str
    queries: int
    difficulty: float  # added to every model's base quality


@dataclass(frozen=True)
class SyntheticModel:
    id: str
    type: str
    quality: float
    parameters: int | None = None
    license: str = "apache-2.0"
    open_weights: bool = True
    training_datasets: tuple[str, ...] = ()
    revision: str = "main"
    url: str = ""
    hardware: str = "2 vCPU, 24 GiB RAM"
    command: str = ""
    datasets: tuple[str, ...] | None = None  # None: every dataset
    extra: dict = field(default_factory=dict)


GOLDEN_DATASETS = (
    SyntheticDataset("beir/scifact", "scifact", "BEIR", "en", "nDCG@10", 30, 0.10),
    SyntheticDataset("beir/nfcorpus", "nfcorpus", "BEIR", "en", "nDCG@10", 24, -0.12),
    SyntheticDataset("beir/cqadupstack/android", "cqadupstack/android", "BEIR", "en", "nDCG@10", 20, -0.02),
    SyntheticDataset("beir/cqadupstack/english", "cqadupstack/english", "BEIR", "en", "nDCG@10", 20, -0.05),
    SyntheticDataset("miracl/sw", "sw", "MIRACL", "sw", "nDCG@10", 20, 0.05),
    SyntheticDataset("miracl/fi", "fi", "MIRACL", "fi", "nDCG@10", 20, 0.08),
    SyntheticDataset("mmarco/fr", "fr", "mMARCO", "fr", "RR@10", 24, -0.10),
    SyntheticDataset("mmarco/de-en", "de-en", "mMARCO", "de-en", "RR@10", 20, -0.14),
    SyntheticDataset("classic/cranfield", "cranfield", "Classic", "en", "nDCG@10", 25, 0.0),
    SyntheticDataset("custom/tiny", "custom/tiny", "Other", "", "nDCG@10", 12, 0.02),
)
_BEIR = ("beir/scifact", "beir/nfcorpus", "beir/cqadupstack/android", "beir/cqadupstack/english")
GOLDEN_MODELS = (
    SyntheticModel("bm25", "lexical", 0.36, None, command="irboard evaluate --model bm25 --dataset {dataset}"),
    SyntheticModel("naver/splade-v3", "sparse", 0.46, 110_000_000, "cc-by-nc-sa-4.0",
                   training_datasets=("msmarco",), url="https://huggingface.co/naver/splade-v3"),
    SyntheticModel("BAAI/bge-small-en-v1.5", "dense", 0.47, 33_400_000, "mit",
                   training_datasets=("msmarco", "nq", "SciFact"), url="https://huggingface.co/BAAI/bge-small-en-v1.5"),
    SyntheticModel("sentence-transformers/all-MiniLM-L6-v2", "dense", 0.40, 22_700_000,
                   training_datasets=("msmarco", "nq")),
    SyntheticModel("intfloat/e5-small-v2", "dense", 0.44, 33_400_000, "mit"),
    SyntheticModel("colbert-ir/colbertv2.0", "late-interaction", 0.48, 110_000_000, "mit",
                   training_datasets=("msmarco",)),
    SyntheticModel("irboard/bm25-minilm-hybrid", "hybrid", 0.45, 22_700_000),
    SyntheticModel("acme/closed-embed-1", "dense", 0.50, None, "proprietary", open_weights=False),
    SyntheticModel("BAAI/bge-m3", "dense", 0.52, 568_000_000, "mit", training_datasets=("miracl", "msmarco")),
    SyntheticModel(
        "test/markup-in-metadata", "other", 0.38, 1_000, license=XSS[:100],
        revision="\"><img src=x onerror=alert('revision')>",
        training_datasets=("<b>bold</b>", "</script><script>alert('training')</script>"),
        hardware="<iframe src=\"javascript:alert('hardware')\"></iframe>",
        command="irboard evaluate --model '" + XSS + "' --dataset {dataset} & echo </pre><h1>x</h1>",
        datasets=("beir/scifact", "miracl/sw", "custom/tiny"),
    ),
    SyntheticModel("org/partial-model", "dense", 0.43, 125_000_000, "cc-by-4.0", datasets=_BEIR[:2]),
    SyntheticModel("org/miracl-only", "dense", 0.41, 278_000_000, "mit", datasets=("miracl/sw", "miracl/fi")),
)
GOLDEN_METRICS = ("nDCG@10", "R@100", "RR@10")
# Results with score samples: "continuous" scores, or "tied" ones (mostly zeros, as a sparse model gives).
SAMPLED_RESULTS = {
    **{("BAAI/bge-m3", d.id): "continuous" for d in GOLDEN_DATASETS},
    ("sentence-transformers/all-MiniLM-L6-v2", "beir/scifact"): "continuous",
    ("sentence-transformers/all-MiniLM-L6-v2", "beir/nfcorpus"): "continuous",
    ("naver/splade-v3", "beir/scifact"): "tied",
}
SAMPLES_PER_QUERY = 200
# Declared unverified in the golden build (see golden_verification): whole models, and single values (a result is
# ranked wherever its main metric is re-scored: bm25 is not on miracl/fi, so it has no MIRACL mean rank); and
# values resting on claimed ranks (marked †, never demoting the others).
UNVERIFIED_MODELS = ("org/partial-model", "test/markup-in-metadata")
UNVERIFIED_VALUES = {("naver/splade-v3", "beir/nfcorpus"): ("R@100",),
                     ("bm25", "miracl/fi"): ("nDCG@10", "R@100", "RR@10")}
CLAIMED_VALUES = {("BAAI/bge-m3", "beir/scifact"): ("R@100",)}


def dataset_table(datasets=GOLDEN_DATASETS) -> dict[str, dict]:
    """What the dataset registry would say about each synthetic dataset (used as the build's lookup)."""
    return {d.id: {"name": d.name, "group": d.group, "language": d.language, "main_metric": d.main_metric}
            for d in datasets}


def _stable_seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "little")


def per_query_values(model: SyntheticModel, dataset: SyntheticDataset, metrics, query_ids) -> dict[str, list]:
    """Plausible per-query scores: query difficulty shared by all models, plus model noise; 4 decimals."""
    shared = np.random.default_rng(_stable_seed("queries", dataset.id))
    difficulty = shared.normal(0.0, 0.22, len(query_ids))
    own = np.random.default_rng(_stable_seed(model.id, dataset.id))
    base = np.clip(model.quality + dataset.difficulty + difficulty + own.normal(0.0, 0.12, len(query_ids)), 0, 1)
    shifts = {"nDCG": 0.0, "R": 0.3, "RR": 0.06, "AP": -0.05, "P": -0.2}
    values = {}
    for metric in metrics:
        kind = metric.split("@")[0].split("(")[0]
        noise = own.normal(0.0, 0.05, len(query_ids))
        row = np.round(np.clip(base + shifts.get(kind, 0.0) + noise, 0.0, 1.0), 4)
        values[metric] = [float(value) for value in row]
    return values


def result_dict(model: SyntheticModel, dataset: SyntheticDataset, metrics, with_run: bool = False) -> dict:
    width = max(3, len(str(dataset.queries)))
    prefix = dataset.id.rsplit("/", 1)[-1][:3].upper()
    query_ids = [f"{prefix}-{i:0{width}d}" for i in range(1, dataset.queries + 1)]
    values = per_query_values(model, dataset, metrics, query_ids)
    data = {
        "schema_version": SCHEMA_VERSION,
        "model": {"id": model.id, "type": model.type, "revision": model.revision, "parameters": model.parameters,
                  "dim": 384 if model.type == "dense" else None, "license": model.license,
                  "open_weights": model.open_weights, "training_datasets": list(model.training_datasets),
                  "url": model.url},
        "dataset": {"id": dataset.id, "split": "test", "num_queries": dataset.queries,
                    "num_docs": 1000 + 37 * dataset.queries,
                    "qrels_sha256": hashlib.sha256(dataset.id.encode()).hexdigest()},
        "settings": {"top_k": 1000, "ignore_identical_ids": False, "relevance_level": 1},
        "metrics": {m: round(math.fsum(v) / len(v), 10) for m, v in values.items()},
        "per_query": {m: dict(zip(query_ids, v, strict=True)) for m, v in values.items()},
        "run": None,
        "provenance": {
            "irboard_version": "0.1.0",
            "command": (model.command or "irboard evaluate --model {model} --dataset {dataset}").format(
                model=model.id, dataset=dataset.id) + f" --out {result_path(model.id, dataset.id)}",
            "created_at": CREATED_AT,
            "hardware": model.hardware,
            "timings": {"index_s": round(5 + 40 * model.quality, 2), "queries_per_s": round(2000 * (1 - model.quality), 1),
                        "encode_docs_per_s": round(900 * (1 - model.quality), 1)},
            "peak_rss_bytes": 300_000_000 + 1_000_000 * len(model.id),
            "index_bytes": 40_000 * dataset.queries * (3 if model.type == "dense" else 1),
        },
    }
    if with_run:
        data["run"] = {"depth": 3, "rankings": {q: [[f"D{k}-{q}", float(3 - k)] for k in range(3)] for q in query_ids}}
    return data


def synthetic_scores(model: SyntheticModel, dataset: SyntheticDataset, query_ids, num_docs: int, kind: str):
    """(score rows, qrels) over num_docs documents: normal scores with a per-query offset ("continuous"), or
    mostly zero scores as a sparse model gives ("tied"); 1 to 3 relevant documents per query."""
    rng = np.random.default_rng(_stable_seed("scores", model.id, dataset.id))
    rows, qrels = [], {}
    for query_id in query_ids:
        relevant = rng.choice(num_docs, size=int(rng.integers(1, 4)), replace=False)
        if kind == "tied":
            row = np.where(rng.random(num_docs) < 0.9, 0.0, rng.gamma(2.0, 1.5, num_docs))
            row[relevant] = rng.gamma(6.0, 1.5, relevant.size)
        else:
            offset = rng.normal(0.0, 0.03)
            row = rng.normal(0.1, 0.1, num_docs) + offset
            row[relevant] = rng.normal(0.25 + 0.25 * model.quality, 0.1, relevant.size) + offset
        rows.append(np.round(row, 5))
        qrels[query_id] = {f"D{d:05d}": 1 for d in relevant}
    return rows, qrels


def add_score_samples(data: dict, model: SyntheticModel, dataset: SyntheticDataset, kind: str) -> None:
    """Store score samples of synthetic scores in a result, and make its R@100 the recall of those scores."""
    query_ids = sorted(data["per_query"]["R@100"])
    num_docs = data["dataset"]["num_docs"]
    rows, qrels = synthetic_scores(model, dataset, query_ids, num_docs, kind)
    doc_ids = [f"D{d:05d}" for d in range(num_docs)]
    samples = collect_score_samples(query_ids, doc_ids, rows, qrels, n_samples=SAMPLES_PER_QUERY, seed=0)
    data["score_samples"] = samples
    recall = {}
    for query_id, row in zip(query_ids, rows, strict=True):
        top = {doc_ids[d] for d in np.argsort(-row, kind="stable")[:100]}
        recall[query_id] = round(len(top & set(qrels[query_id])) / len(qrels[query_id]), 4)
    data["per_query"]["R@100"] = recall
    data["metrics"]["R@100"] = round(math.fsum(recall.values()) / len(recall), 10)


def dump(data: dict) -> str:
    """The stored form of a result given in the expanded form (validated on the way)."""
    return dump_result(parse_result(data, f"{data['model']['id']} on {data['dataset']['id']}"))


def write_golden_results(out: Path = GOLDEN_RESULTS) -> list[Path]:
    if out.exists():
        shutil.rmtree(out)
    written = []
    datasets = {d.id: d for d in GOLDEN_DATASETS}
    for model in GOLDEN_MODELS:
        for dataset_id in model.datasets or tuple(datasets):
            data = result_dict(model, datasets[dataset_id], GOLDEN_METRICS, with_run=True)
            if (model.id, dataset_id) in SAMPLED_RESULTS:
                add_score_samples(data, model, datasets[dataset_id], SAMPLED_RESULTS[(model.id, dataset_id)])
            path = result_path(model.id, dataset_id, out)
            write_atomic(path, dump(data))
            written.append(path)
    return written


_SCALE_IDS = (
    *(f"beir/{name}" for name in ("trec-covid", "nfcorpus", "nq", "hotpotqa", "fiqa", "arguana", "webis-touche2020",
                                  "quora", "dbpedia-entity", "scidocs", "fever", "climate-fever", "scifact")),
    *(f"beir/cqadupstack/{name}" for name in ("android", "english", "gaming")),
    *(f"miracl/{lang}" for lang in ("ar", "bn", "fi", "sw", "te", "yo")),
    *(f"mmarco/{lang}" for lang in ("fr", "de", "de-en", "fr-en", "zh")),
    *(f"classic/{name}" for name in ("cranfield", "cisi", "cacm")),
)


def scaled_sets(n_models: int, n_datasets: int, n_queries: int) -> tuple[list[SyntheticModel], list[SyntheticDataset]]:
    """Many models and datasets for the benchmark: about 1 model in 10 misses a few datasets."""
    ids = list(_SCALE_IDS) + [f"custom/set-{i:03d}" for i in range(max(0, n_datasets - len(_SCALE_IDS)))]
    groups = {"beir": "BEIR", "miracl": "MIRACL", "mmarco": "mMARCO", "classic": "Classic", "custom": "Other"}
    datasets = [SyntheticDataset(d, d, groups[d.split("/")[0]], "", "RR@10" if d.startswith("mmarco") else "nDCG@10",
                                 n_queries, (i % 7 - 3) * 0.04) for i, d in enumerate(ids[:n_datasets])]
    rng = np.random.default_rng(7)
    types = ("lexical", "sparse", "dense", "dense", "hybrid", "late-interaction")
    models = [SyntheticModel("bm25", "lexical", 0.36)]
    for i in range(1, n_models):
        covered = None
        if i % 10 == 0:
            covered = tuple(d.id for j, d in enumerate(datasets) if (i + j) % 4)
        models.append(SyntheticModel(f"org{i % 17:02d}/model-{i:04d}", types[i % len(types)],
                                     float(rng.uniform(0.3, 0.55)), int(rng.integers(5, 8000)) * 1_000_000,
                                     ("mit", "apache-2.0", "cc-by-4.0")[i % 3], open_weights=i % 9 != 0,
                                     training_datasets=("msmarco",) if i % 5 == 0 else (), datasets=covered))
    return models, datasets


def synthetic_run(model: SyntheticModel, dataset: SyntheticDataset, query_ids, depth: int,
                  qrels: dict[str, dict[str, int]] | None = None) -> Run:
    """A depth-`depth` ranking per query, shaped like a real one: doc ids drawn from the dataset's corpus
    (`D` + number), float32-valued scores descending. With `qrels`, each judged relevant document is ranked
    (near the top) with a probability that grows with the model's quality, so that values differ by model."""
    rng = np.random.default_rng(_stable_seed("run", model.id, dataset.id))
    corpus = 1000 + 37 * dataset.queries
    docs = np.stack([rng.choice(corpus, size=depth, replace=False) for _ in query_ids])
    scores = -np.sort(-rng.normal(10.0, 2.0, size=docs.shape).astype(np.float32).astype(np.float64), axis=-1)
    for row, query_id in enumerate(query_ids if qrels else ()):
        for name, label in qrels[query_id].items():
            doc = int(name[1:])
            if label > 0 and doc not in docs[row] and rng.random() < 0.3 + model.quality:
                docs[row, int(rng.integers(0, min(depth, 20)))] = doc
    order = np.lexsort((-docs, -scores), axis=-1)  # trec_eval order: score descending, ties by doc id descending
    docs, scores = np.take_along_axis(docs, order, -1), np.take_along_axis(scores, order, -1)
    table, index = np.unique(docs, return_inverse=True)
    names = [f"D{d:07d}" for d in table.tolist()]  # zero-padded: numeric order is text order
    return Run(depth, tuple(names), np.full(len(query_ids), depth, dtype=np.int64), index.reshape(-1).astype(np.int64),
               scores.reshape(-1))


def scored_run(model: SyntheticModel, dataset: SyntheticDataset, query_ids, depth: int,
               qrels: dict[str, dict[str, int]]) -> tuple[Run, ScoreSamples]:
    """What `irboard evaluate` stores of a model that scores the whole corpus: every query's scores over the
    dataset's corpus (normal, judged relevant documents raised more for better models), its top `depth` in
    trec_eval order as the ranking, and the score samples of those same scores (evaluate's default sizes)."""
    rng = np.random.default_rng(_stable_seed("scored", model.id, dataset.id))
    corpus = 1000 + 37 * dataset.queries
    rows = rng.normal(10.0, 2.0, size=(len(query_ids), corpus))
    for row, query_id in enumerate(query_ids):
        for name, label in qrels[query_id].items():
            rows[row, int(name[1:])] += rng.normal(2.0 + 6.0 * model.quality, 2.0) * (label > 0)
    rows = rows.astype(np.float32).astype(np.float64)  # a model's scores are float32
    # the top depth + 16 by score, then trec_eval order among them (score descending, ties by doc id descending)
    top = np.argpartition(-rows, depth + 16, axis=1)[:, :depth + 16]
    order = np.lexsort((-top, -np.take_along_axis(rows, top, 1)), axis=-1)[:, :depth]
    docs = np.take_along_axis(top, order, 1)
    scores = np.take_along_axis(rows, docs, 1)
    table, index = np.unique(docs, return_inverse=True)
    names = [f"D{d:07d}" for d in table.tolist()]
    run = Run(depth, tuple(names), np.full(len(query_ids), depth, dtype=np.int64),
              index.reshape(-1).astype(np.int64), scores.reshape(-1))
    samples = collect_score_samples(query_ids, corpus_ids(corpus), rows, qrels)
    return run, samples


@functools.cache
def corpus_ids(size: int) -> tuple[str, ...]:
    return tuple(f"D{d:07d}" for d in range(size))


def synthetic_qrels(dataset: SyntheticDataset, query_ids) -> dict[str, dict[str, int]]:
    """2 to 6 judged documents per query (grades 0 to 2, at least one relevant) from the dataset's corpus."""
    rng = np.random.default_rng(_stable_seed("qrels", dataset.id))
    corpus = 1000 + 37 * dataset.queries
    qrels = {}
    for query_id in query_ids:
        docs = rng.choice(corpus, size=int(rng.integers(2, 7)), replace=False)
        labels = rng.integers(0, 3, size=docs.size)
        labels[0] = max(int(labels[0]), 1)
        qrels[query_id] = {f"D{d:07d}": int(label) for d, label in zip(docs.tolist(), labels.tolist(), strict=True)}
    return qrels


def write_beir_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    lines = ["query-id\tcorpus-id\tscore\n"]
    lines += [f"{q}\t{d}\t{label}\n" for q, judged in qrels.items() for d, label in judged.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(lines))


def rescored(data: dict, run: Run, qrels: Qrels, samples=None) -> ResultFile:
    """`data` (expanded form) with its per-query values and means replaced by those of re-scoring `run`
    against `qrels` exactly as verification does, so that the result verifies."""
    from evaluator.metrics import evaluate, parse_measure
    from leaderboard.submissions.labels import ranked_from_result

    result = parse_result(data)
    result = build_result(result.header, result.query_ids, result.per_query, run, samples)
    measures = [parse_measure(name) for name in sorted(result.metrics)]
    values = evaluate(ranked_from_result(result, qrels), qrels, measures, result.settings.relevance_level)
    data["per_query"] = {m: dict(zip(result.query_ids, map(float, values[m]), strict=True)) for m in values}
    data["metrics"] = {m: round(math.fsum(v) / len(v), 10) for m, v in values.items()}
    result = parse_result(data)
    return build_result(result.header, result.query_ids, result.per_query, run, samples)


def write_scaled_results(out: Path, n_models: int, n_datasets: int, n_queries: int,
                         metrics=("nDCG@10", "R@100", "RR@10"), depth: int = 0, data_root: Path | None = None,
                         jobs: int = 1) -> int:
    """The benchmark's results; `depth` > 0 adds a stored ranking of that depth to every one. With `data_root`
    (and a depth), synthetic qrels are written to `<data_root>/<dataset id>/qrels/<split>.tsv` (BEIR layout, the
    split the registry scores the dataset on, so that they define its query set as a maintainer's would) and
    every result is the re-scoring of its ranking against them, with the whole ranking stored (top_k = depth),
    so that a build given those judgments verifies every metric of every result; those results also hold score
    samples, as `irboard evaluate` writes them (`scored_run`). `jobs` > 1 writes in that many forked processes
    (the same bytes)."""
    models, datasets = scaled_sets(n_models, n_datasets, n_queries)
    by_id = {d.id: d for d in datasets}
    judgments = {}
    if data_root is not None and depth:
        for dataset in datasets:
            query_ids = result_dict(models[0], dataset, metrics[:1])["per_query"][metrics[0]]
            judgments[dataset.id] = synthetic_qrels(dataset, query_ids)
            write_beir_qrels(data_root / dataset.id / "qrels" / f"{_scored_split(dataset.id)}.tsv",
                             judgments[dataset.id])
    official = {d: Qrels.from_dict(q) for d, q in judgments.items()}

    def write_model(model: SyntheticModel) -> int:  # each model's files are seeded on their own
        count = 0
        for dataset_id in model.datasets or tuple(by_id):
            path = result_path(model.id, dataset_id, out)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = result_dict(model, by_id[dataset_id], metrics)
            if dataset_id in official:
                data["dataset"]["split"] = _scored_split(dataset_id)
                data["settings"]["top_k"] = depth
                data["dataset"]["qrels_sha256"] = official[dataset_id].sha256()
                # its synthetic corpus is not the registered one, whose size a stated num_docs must be
                data["dataset"]["num_docs"] = None
                query_ids = sorted(data["per_query"][metrics[0]])
                run, samples = scored_run(model, by_id[dataset_id], query_ids, depth, judgments[dataset_id])
                result = rescored(data, run, official[dataset_id], samples)
            else:
                result = parse_result(data)
                if depth:
                    run = synthetic_run(model, by_id[dataset_id], result.query_ids, depth)
                    result = build_result(result.header, result.query_ids, result.per_query, run)
            path.write_text(dump_result(result), encoding="utf-8")
            count += 1
        return count

    return sum(forked_map(write_model, models, jobs))


def _scored_split(dataset_id: str) -> str:
    """The split the registry scores `dataset_id` on ("test" for an unregistered one)."""
    from evaluator.datasets import get_spec
    from evaluator.errors import IrboardError

    try:
        return get_spec(dataset_id).split
    except IrboardError:
        return "test"


def golden_lookup(dataset_id: str):
    """The lookup the golden build uses, so that the golden site does not change with the registry."""
    from leaderboard.submissions.catalog import DEFAULT_MAIN_METRIC, DatasetInfo

    entry = dataset_table().get(dataset_id)
    if entry is None:
        return DatasetInfo(dataset_id, dataset_id, "Other", "", DEFAULT_MAIN_METRIC)
    return DatasetInfo(dataset_id, entry["name"], entry["group"], entry["language"], entry["main_metric"])



def scaled_lookup(dataset_id: str):
    """The lookup a board of `write_scaled_results` is built with: the registry's entry of each dataset without its
    query set and facts, since the synthetic queries and corpora only stand on registered dataset ids."""
    from leaderboard.submissions.catalog import dataset_info

    return replace(dataset_info(dataset_id), query_ids_sha256=None, facts=None)


class DeclaredVerification:
    """A verify stage (leaderboard.submissions.stages.Verifier) that declares which results and values count as
    verified instead of re-scoring them: `unverified_models` none of their values, `unverified_values` the named
    ones, `claimed_values` those resting on claimed ranks (by default the golden ones, unless `unverified_values`
    is given); every other value of every result with a stored ranking is verified. Its outcomes are never cached."""

    def __init__(self, unverified_models=UNVERIFIED_MODELS, unverified_values=None, claimed_values=None):
        self.unverified_models = tuple(unverified_models)
        self.unverified_values = UNVERIFIED_VALUES if unverified_values is None else unverified_values
        self.claimed_values = (CLAIMED_VALUES if unverified_values is None else {}) if claimed_values is None \
            else claimed_values
        self.errors: list[str] = []
        self.asked: list[tuple[str, str]] = []  # (model id, dataset id) of each result verified, in order

    def can_verify(self, dataset_id, split):
        return True

    def cached(self, file_sha256, header):
        return None

    def verification(self, result, file_sha256=None):
        from leaderboard.submissions.verify import Verification

        key = (result.model.id, result.dataset.id)
        self.asked.append(key)
        unverified = set(result.metrics) if result.model.id in self.unverified_models \
            else set(self.unverified_values.get(key, ()))
        claimed = set(self.claimed_values.get(key, ())) - unverified
        return Verification(frozenset(result.metrics) - unverified - claimed, tuple(sorted(unverified)), (),
                            frozenset(claimed))

    def judgments_key(self, dataset_id, split):
        return None

    def local_query_set(self, dataset_id):
        return None

    def add_errors(self, errors):
        self.errors.extend(error for error in errors if error not in self.errors)


class VerifiedWhen(DeclaredVerification):
    """A verify stage that counts every value of a result verified exactly when `predicate(result)` holds."""

    def __init__(self, predicate):
        super().__init__((), {})
        self.predicate = predicate

    def verification(self, result, file_sha256=None):
        from leaderboard.submissions.verify import Verification

        self.asked.append((result.model.id, result.dataset.id))
        verified = frozenset(result.metrics) if self.predicate(result) else frozenset()
        return Verification(verified, tuple(sorted(set(result.metrics) - verified)), ())


golden_verification = DeclaredVerification()  # the golden build's (see the module docstring)


def write_golden_site(out: Path = GOLDEN_SITE) -> None:
    """Build the golden results into `out`, without plotly.min.js (tests check only that it is there)."""
    from leaderboard.web.build import PLOTLY_TARGET, build_site

    if out.exists():
        shutil.rmtree(out)
    build_site(GOLDEN_RESULTS, out, strict=True, is_verified=golden_verification, lookup=golden_lookup)
    (out / PLOTLY_TARGET).unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", nargs=3, type=int, metavar=("MODELS", "DATASETS", "QUERIES"))
    parser.add_argument("--out", type=Path, help="output folder for --scale")
    args = parser.parse_args()
    if args.scale:
        if args.out is None:
            parser.error("--scale needs --out")
        print(f"wrote {write_scaled_results(args.out, *args.scale)} result files to {args.out}")
        return
    print(f"wrote {len(write_golden_results())} result files to {GOLDEN_RESULTS}")
    write_golden_site()
    print(f"wrote the golden site to {GOLDEN_SITE}")


if __name__ == "__main__":
    main()
