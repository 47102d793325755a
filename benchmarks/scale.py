"""Evidence for recall-at-scale prediction on real data (BEIR SciFact).

For each model: score every query against the full corpus; then, several times, keep a random 10% of the
non-judged documents plus every judged document, fit the score model on that sub-corpus only, predict
Recall@{10,100} at the full corpus size, and compare with the recall measured on the full corpus.
Reported: mean absolute error over the repetitions, for pooled and per-query modes and both tails.

    python benchmarks/scale.py [--data ../shared/data/beir/scifact] [--repeats 5] [--models "bm25;dense:..."]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from peers import require_extra  # noqa: E402  (benchmarks/peers.py)

from evaluator.datasets import load_dataset  # noqa: E402
from evaluator.errors import IrboardError  # noqa: E402
from evaluator.metrics import parse_measures  # noqa: E402
from evaluator.metrics.arrays import evaluate_arrays  # noqa: E402
from evaluator.models import load_model  # noqa: E402
from leaderboard.scale import fit_and_predict_from_arrays  # noqa: E402

DEFAULT_MODELS = [
    "bm25",
    "bm25:k1=1.5,b=0.75",
    f"splade:{ROOT.parent / 'shared' / 'models' / 'splade-tiny'}",
    "dense:all-MiniLM-L6-v2",
]
KS = (10, 100)
VARIANTS = [("pooled", "hybrid"), ("pooled", "skewnorm"), ("per_query", "hybrid"), ("per_query", "skewnorm")]


def full_scores(spec: str, dataset) -> tuple[np.ndarray, str]:
    """(queries × documents) scores of one model over the whole corpus."""
    from evaluator.index.dense import DenseIndex
    from evaluator.index.sparse import SparseIndex
    from evaluator.pipeline import corpus_cache, encode_corpus

    model = load_model(spec)
    docs = list(zip(dataset.corpus.titles, dataset.corpus.texts, strict=True))
    texts = [dataset.queries[q] for q in dataset.queries]
    encoded = encode_corpus(model, docs, corpus_cache(model, dataset.spec, docs))  # reuses `irboard evaluate`'s
    if model.info.type == "dense":
        return DenseIndex(encoded).score_rows(model.encode_queries(texts)), model.info.id
    return SparseIndex.from_documents(encoded).score_rows(model.encode_queries(texts, encoded)), model.info.id


def label_matrix(dataset) -> np.ndarray:
    position = {d: i for i, d in enumerate(dataset.corpus.ids)}
    labels = np.zeros((len(dataset.queries), len(position)), dtype=np.int64)
    for row, query_id in enumerate(dataset.queries):
        for doc_id, label in dataset.qrels[query_id].items():
            if doc_id in position:
                labels[row, position[doc_id]] = label
    return labels


def evaluate_model(scores: np.ndarray, labels: np.ndarray, repeats: int, fraction: float) -> dict:
    measured = evaluate_arrays(scores, labels, parse_measures([f"R@{k}" for k in KS]))
    measured = {k: float(measured[f"R@{k}"].mean()) for k in KS}
    relevant = labels >= 1
    judged = (labels != 0).any(axis=0)  # judged for some query (SciFact qrels list relevant documents)
    n_docs = scores.shape[1]
    errors = {variant: {k: [] for k in KS} for variant in VARIANTS}
    reasons, factors = {}, []
    for repeat in range(repeats):
        rng = np.random.default_rng(repeat)
        keep = judged | (rng.random(n_docs) < fraction)
        factors.append(n_docs / keep.sum())
        rel_scores = [scores[q, relevant[q]] for q in range(len(scores))]
        nonrel_scores = [scores[q, keep & ~relevant[q]] for q in range(len(scores))]
        n_rel = relevant.sum(axis=1)
        for mode, tail in VARIANTS:
            try:
                predicted = fit_and_predict_from_arrays(rel_scores, nonrel_scores, n_rel, n_docs, KS, mode, tail)
            except IrboardError as error:
                reasons[(mode, tail)] = str(error).split(";")[0][:120]
                continue
            for k in KS:
                errors[(mode, tail)][k].append(abs(predicted[k] - measured[k]))
    return {"measured": measured, "errors": errors, "reasons": reasons, "factor": float(np.mean(factors))}


def main() -> None:
    require_extra("models", "torch", "transformers", "sentence_transformers", "Stemmer")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "beir" / "scifact")
    parser.add_argument("--models", default=";".join(DEFAULT_MODELS), help="';'-separated model specs")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--fraction", type=float, default=0.10)
    parser.add_argument("--write-evidence", type=Path,
                        help="also write the table as JSON for the site (leaderboard/scale_evidence.json)")
    args = parser.parse_args()
    dataset = load_dataset("beir/scifact", data_dir=args.data)
    labels = label_matrix(dataset)
    specs = [s for s in args.models.split(";") if s]
    print(f"SciFact, {len(dataset.queries)} queries, {len(dataset.corpus)} documents; fit on all judged + "
          f"{args.fraction:.0%} of the rest, {args.repeats} repeats; |predicted - measured| averaged\n")
    print("| model | extrapolation | measured R@10 | measured R@100 | "
          + " | ".join(f"{m}/{t} R@{k}" for m, t in VARIANTS for k in KS) + " |")
    print("|---|---|---|---|" + "---|" * (len(VARIANTS) * len(KS)))
    rows = []
    for spec in specs:
        start = time.perf_counter()
        scores, model_id = full_scores(spec, dataset)
        report = evaluate_model(scores, labels, args.repeats, args.fraction)
        rows.append(evidence_row(model_id, report))
        cells = []
        for variant in VARIANTS:
            for k in KS:
                values = report["errors"][variant][k]
                cells.append(f"{np.mean(values):.3f}" if values else "n/a")
        print(f"| {model_id} | {report['factor']:.1f}× | {report['measured'][10]:.3f} | "
              f"{report['measured'][100]:.3f} | " + " | ".join(cells) + " |", flush=True)
        for variant, reason in report["reasons"].items():
            print(f"|   cannot predict ({'/'.join(variant)}): {reason} |", flush=True)
        print(f"    ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    if args.write_evidence:
        from evaluator.result import write_atomic

        description = (
            f"benchmarks/scale.py on BEIR SciFact ({len(dataset.queries)} queries, {len(dataset.corpus)} documents): "
            f"the score model is fitted on every judged document plus a random {args.fraction:.0%} of the others, "
            f"Recall@k is predicted at the full corpus size and compared with the recall measured there; "
            f"errors are |predicted - measured| averaged over {args.repeats} random sub-corpora."
        )
        write_atomic(args.write_evidence, json.dumps({"description": description, "rows": rows}, indent=1,
                                                     sort_keys=True) + "\n")


def evidence_row(model_id: str, report: dict) -> dict:
    errors = {}
    for mode, tail in VARIANTS:
        values = report["errors"][(mode, tail)]
        errors[f"{mode}/{tail}"] = {str(k): (round(float(np.mean(values[k])), 4) if values[k] else None) for k in KS}
    return {
        "model": model_id,
        "extrapolation": round(report["factor"], 2),
        "measured": {str(k): round(v, 4) for k, v in report["measured"].items()},
        "errors": errors,
        "cannot_predict": {"/".join(variant): reason for variant, reason in report["reasons"].items()},
    }


if __name__ == "__main__":
    main()
