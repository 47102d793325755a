"""The nine published TREC DL 2020 passage runs (tests/data/runs/dl20-*) as re-scored board results, against the
official judgments or against those a shallow pool (BM25 and BM25+RM3, top 10) would have made: per-query nDCG@10
and its hole bounds from evaluator.metrics.holes, Judged@10 (what the verify stage keeps, submissions.holes)."""

from __future__ import annotations

import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "data" / "runs"
NAMES = ("bm25", "bm25-rm3", "tas-b", "ada-002", "splade-pp-ed", "repllama", "bm25-rankgpt-gpt-3.5",
         "bm25-rankvicuna-7b", "bm25-rankvicuna-7b-aug")
NEURAL = NAMES[2:]
DATASET = "trec-dl-2020-passage"
METRIC = "nDCG@10"


def top(ranking: dict[str, float], k: int) -> list[str]:
    """trec_eval's order: score descending, ties by doc id descending."""
    return sorted(ranking, key=lambda d: (ranking[d], d), reverse=True)[:k]


@functools.lru_cache(maxsize=1)
def runs_and_qrels(official: Path) -> tuple[dict, dict, dict]:
    from evaluator.trec import read_qrels, read_run

    runs = {name: read_run(RUNS / f"dl20-{name}.trec.xz") for name in NAMES}
    qrels = read_qrels(official / "qrels" / "qrels.dl20-passage.txt").to_dict()
    pool: dict[str, set[str]] = {}
    for name in ("bm25", "bm25-rm3"):
        for query, ranking in runs[name].items():
            pool.setdefault(query, set()).update(top(ranking, 10))
    shallow = {q: {d: g for d, g in judged.items() if d in pool.get(q, ())} for q, judged in qrels.items()}
    return runs, qrels, shallow


def lookup(dataset_id: str):
    from leaderboard.submissions.catalog import DatasetInfo

    return DatasetInfo(dataset_id, "TREC DL 2020 passage", "Other", "en", METRIC)


def loaded_results(official: Path, pool: str = "shallow", model_ids=None) -> list:
    """LoadedResults of the nine runs on DATASET, re-scored against the official (`pool` "official") or the shallow
    pool's judgments, each with its HoleFigures (submissions.holes.hole_figures, the verify stage's); `model_ids`: {run name: model id} (default: the run names)."""
    from evaluator.metrics import evaluate, parse_measure
    from irboard.inputs import to_judgments, to_ranked
    from leaderboard.submissions.holes import hole_figures
    from leaderboard.submissions.loaded import LoadedResult, ModelInfo, Provenance

    runs, qrels, shallow = runs_and_qrels(official)
    judgments = to_judgments(qrels if pool == "official" else shallow)
    measures = [parse_measure(METRIC), parse_measure("P@10")]
    stats = judgments.qrels.label_stats(2)
    out = []
    for name in NAMES:
        ranked = to_ranked(runs[name], judgments)
        values = evaluate(ranked, stats, measures, 2)
        holes = hole_figures(ranked, stats, measures, 2, METRIC)  # what the verify stage keeps
        model_id = (model_ids or {}).get(name, name)
        out.append(LoadedResult(
            path=f"results/{model_id}/{DATASET}.json",
            model=ModelInfo(model_id, "sparse" if name.startswith("bm25") else "dense", "", None, None,
                            "Apache-2.0", True, (), ""),
            dataset_id=DATASET, split="test", num_docs=8_841_823, qrels_sha256=judgments.qrels.sha256(),
            settings=(("relevance_level", 2), ("top_k", 1000)), metrics={k: float(v.mean()) for k, v in values.items()},
            query_ids=tuple(judgments.qrels.query_ids), per_query=dict(values), has_run=True, verified=True,
            provenance=Provenance("test", "irboard evaluate", "2026-01-01T00:00:00Z", "", (), None, None),
            verified_metrics=frozenset(values), holes=holes))
    return out
