"""Evidence for recall-at-scale prediction on real data: sub-corpora predicting the full corpus.

For each dataset (SciFact, Cranfield, CISI, CACM) and model (BM25, SPLADE-tiny, all-MiniLM-L6-v2), every query is
scored against the whole corpus once (neural encodings come from `irboard evaluate`'s encoding cache, and the score
rows are kept in benchmarks/_work/scale/). Then, for each growth scenario, fraction (5-30%) and seed:

- uniform: a uniform random sub-corpus of that fraction of all documents, relevant ones included;
- fixed-relevant: every relevant document of the query plus that fraction of the others;

score samples are made as `irboard evaluate` makes them (all relevant scores, up to 2,000 non-relevant ones,
quantized to 12 bits), Recall@k is predicted at the full corpus size in that scenario and compared with the
recall measured on the full corpus (ties at a score counted as a uniform position among them), over the queries
that have a relevant document in the sub-corpus. Under uniform growth every method is given each query's relevant
count in the full corpus (the scenario's count scaled from a chance sample overstates it: `evaluate_pair`).
Methods: per_query (the site's model), rank (rank scaling) and pooled (the SDM paper's). Reported: mean
|predicted - measured| per dataset, model and scenario.

    python benchmarks/scale.py [--seeds 3] [--fractions 0.05,0.1,0.2,0.3] [--write-evidence leaderboard/analysis/scale_evidence.json]

Cost (`--cost [RESULTS]`, default results/): `irboard build` of the repository's real results (rankings and score
samples in every file, `--copies` times each under other model ids), in fresh processes from an empty cache, with
the score samples and with them removed; and the prediction step alone
(leaderboard.analysis.predictions.predict_results) on the loaded files.
"""

from __future__ import annotations

import argparse
import hashlib
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
from evaluator.models import load_model  # noqa: E402
from evaluator.score_samples import DEFAULT_SAMPLES, QueryScoreSamples, ScoreSamples  # noqa: E402
from leaderboard.analysis.scale import forecast  # noqa: E402
from leaderboard.analysis.scale_query import GROWTHS  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
DATASETS = {"beir/scifact": DATA / "beir" / "scifact", "classic/cranfield": DATA / "classic" / "cranfield",
            "classic/cisi": DATA / "classic" / "cisi", "classic/cacm": DATA / "classic" / "cacm"}
MODELS = ["bm25", f"splade:{ROOT.parent / 'shared' / 'models' / 'splade-tiny'}", "dense:all-MiniLM-L6-v2"]
KS = (10, 100, 1000)
METHODS = ("per_query", "rank", "pooled")
FLOOR = "floor"  # the sampled relevant documents' own full-corpus ranks (printed, not a method)
LEVELS = 4095  # 12-bit codes, as new result files store non-relevant samples
WORK = ROOT / "benchmarks" / "_work" / "scale"


def full_scores(spec: str, dataset) -> tuple[np.ndarray, str]:
    """(queries x documents) scores of one model over the whole corpus, kept on disk after the first run."""
    from evaluator.index.dense import DenseIndex
    from evaluator.index.sparse import SparseIndex
    from evaluator.pipeline import corpus_cache, encode_corpus

    model = load_model(spec)
    key = hashlib.sha256(f"{model.info.id}|{model.info.revision}|{dict(model.info.settings)}|{dataset.spec.id}|"
                         f"{len(dataset.corpus)}|{len(dataset.queries)}".encode()).hexdigest()[:16]
    path = WORK / f"{key}.npy"
    if path.exists():
        return np.load(path), model.info.id
    docs = list(zip(dataset.corpus.titles, dataset.corpus.texts, strict=True))
    texts = [dataset.queries[q] for q in dataset.queries]
    encoded = encode_corpus(model, docs, corpus_cache(model, dataset.spec, docs))  # reuses `irboard evaluate`'s
    if model.info.type == "dense":
        scores = DenseIndex(encoded).score_rows(model.encode_queries(texts))
    else:
        scores = SparseIndex.from_documents(encoded).score_rows(model.encode_queries(texts, encoded))
    WORK.mkdir(parents=True, exist_ok=True)
    np.save(path, scores)
    return scores, model.info.id


def relevance_matrix(dataset) -> np.ndarray:
    position = {d: i for i, d in enumerate(dataset.corpus.ids)}
    relevant = np.zeros((len(dataset.queries), len(position)), dtype=bool)
    for row, query_id in enumerate(dataset.queries):
        for doc_id, label in dataset.qrels.get(query_id, {}).items():
            if doc_id in position and label >= 1:
                relevant[row, position[doc_id]] = True
    return relevant


def tie_aware_recall(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """(queries, ks) Recall@k on the full corpus, a relevant document tied with others at a uniform position."""
    out = np.zeros((len(scores), len(KS)))
    for q, (row, rel) in enumerate(zip(scores, relevant, strict=True)):
        if not rel.any():
            continue
        ordered = np.sort(row)
        above = row.size - np.searchsorted(ordered, row[rel], side="right")
        tied = np.searchsorted(ordered, row[rel], side="right") - np.searchsorted(ordered, row[rel], side="left")
        for j, k in enumerate(KS):
            out[q, j] = np.clip((k - above) / tied, 0.0, 1.0).mean()
    return out


def quantized(values: np.ndarray) -> np.ndarray:
    """The sorted sample as a 12-bit result file gives it back: codes on [lo, hi]."""
    values = np.sort(values.astype(np.float64))
    if values.size < 2 or values[-1] == values[0]:
        return values
    lo, hi = values[0], values[-1]
    return lo + np.rint((values - lo) / (hi - lo) * LEVELS) * ((hi - lo) / LEVELS)


def sub_corpus_samples(scores, relevant, keep, rng) -> tuple[ScoreSamples, np.ndarray]:
    """Score samples of a sub-corpus (`keep`: one row per query) and the queries they cover."""
    queries, used = {}, []
    num_docs = int(keep.sum(axis=1).max())
    for q in range(len(scores)):
        rel = keep[q] & relevant[q]
        if not rel.any():
            continue
        nonrel = scores[q, keep[q] & ~relevant[q]]
        if nonrel.size > DEFAULT_SAMPLES:
            nonrel = rng.choice(nonrel, DEFAULT_SAMPLES, replace=False)
        n_nonrel = int((keep[q] & ~relevant[q]).sum())
        queries[str(q)] = QueryScoreSamples(np.sort(scores[q, rel].astype(np.float64)), quantized(nonrel),
                                            int(rel.sum()), n_nonrel)
        used.append(q)
    return ScoreSamples(num_docs, 1, 0, DEFAULT_SAMPLES, DEFAULT_SAMPLES, queries), np.array(used)


def evaluate_pair(scores, relevant, fractions, seeds, methods=METHODS, uniform_count: str = "full") -> dict:
    """Errors of every method per scenario, with the measured recall and the share of dropped queries.

    Under uniform growth every method is given each query's relevant count in the full corpus
    (`uniform_count` "full"), not the scenario's r x (full size / sub-corpus size) ("sample"): the queries a
    small uniform sub-corpus can be predicted for are those that kept a relevant document by chance, and for them
    that product overstates the full corpus's count (one kept of one relevant document stands for 20 at 5%)."""
    truth = tie_aware_recall(scores, relevant)
    full_count = relevant.sum(axis=1)
    has_relevant = relevant.any(axis=1)
    n_docs = scores.shape[1]
    report = {}
    for growth in GROWTHS:
        errors = {m: [] for m in (*methods, FLOOR)}  # method -> list of (fraction, [signed error per k])
        dropped, reasons, seconds = [], {}, {m: 0.0 for m in methods}
        for fraction in fractions:
            for seed in seeds:
                rng = np.random.default_rng([seed, int(fraction * 1000)])
                shared = rng.random(n_docs) < fraction
                keep = np.broadcast_to(shared, scores.shape) if growth == "uniform" else shared | relevant
                keep = keep & has_relevant[:, None]
                samples, used = sub_corpus_samples(scores, relevant, keep, rng)
                if not used.size:
                    continue
                measured = truth[used].mean(axis=0)
                # The recall of the sampled relevant documents at their true full-corpus ranks: the error that
                # comes from which ones the sample kept (0 under fixed-relevant growth, where all are kept).
                sampled = tie_aware_recall(scores[used], (keep & relevant)[used]).mean(axis=0)
                errors[FLOOR].append((fraction, sampled - measured))
                known = ({str(q): float(full_count[q]) for q in used}
                         if growth == "uniform" and uniform_count == "full" else None)
                for method in methods:
                    start = time.perf_counter()
                    try:
                        predicted = forecast(samples, [float(n_docs)], KS, growth, method, known=known)
                    except IrboardError as error:
                        reasons[method] = str(error).split(";")[0][:160]
                        continue
                    finally:
                        seconds[method] += time.perf_counter() - start
                    errors[method].append((fraction, predicted.recall[0] - measured))
                    if method == "per_query":
                        dropped.append(predicted.n_dropped / len(used))
        report[growth] = {"errors": errors, "reasons": reasons, "dropped": float(np.mean(dropped or [0.0])),
                          "seconds": seconds, "measured": truth[has_relevant].mean(axis=0)}
    return report


def mean_errors(entries, signed: bool = False) -> list[float] | None:
    """Mean |error| (or the mean signed error) per k over (fraction, errors) entries."""
    if not entries:
        return None
    values = np.array([e for _, e in entries])
    return [float(v) for v in np.mean(values if signed else np.abs(values), axis=0)]


BUILD = """
import json, sys, time
from leaderboard.cli import keep_freed_memory
keep_freed_memory()  # as `irboard build` does
from leaderboard.web.build import build_site
start = time.perf_counter()
build_site(sys.argv[1], sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - start}))
"""
PREDICT = """
import json, sys, time
from leaderboard.cli import keep_freed_memory
keep_freed_memory()
from leaderboard.submissions.load import load_results
from leaderboard.analysis.predictions import predict_results
results = load_results(sys.argv[1]).results
start = time.perf_counter()
found = predict_results(results)
print(json.dumps({"seconds": time.perf_counter() - start, "results": len(found),
                  "queries": sum(p.queries for p in found.values())}))
"""


def measure_cost(source: Path, copies: int, repeats: int) -> None:
    """Build time with and without score samples, and the prediction step alone, each in a fresh process."""
    import os
    import shutil
    import subprocess
    import tempfile

    from evaluator.result import result_path

    def run(code: str, *args) -> dict:
        # as the command line runs (one BLAS thread), from an empty cache: a cached prediction is not computed
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "IRBOARD_CACHE": cache}
            done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, capture_output=True,
                                  text=True, env=env)
        if done.returncode:
            raise SystemExit(done.stderr[-2000:])
        return json.loads(done.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as work:
        folders = {"with samples": Path(work) / "with", "without samples": Path(work) / "without"}
        for name, folder in folders.items():
            for path in sorted(source.glob("*/*.json")):
                data = json.loads(path.read_text())
                if name == "without samples":
                    data.pop("score_samples", None)
                for copy in range(copies):
                    model_id = data["model"]["id"] + (f"-copy{copy}" if copy else "")
                    target = result_path(model_id, data["dataset"]["id"], folder)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(json.dumps({**data, "model": {**data["model"], "id": model_id}}))
            if (source / "schema.json").exists():
                shutil.copy(source / "schema.json", folder / "schema.json")
        files = len(list(folders["with samples"].glob("*/*.json")))
        builds = {name: min(run(BUILD, folder, Path(work) / "site")["seconds"] for _ in range(repeats))
                  for name, folder in folders.items()}
        predict = min((run(PREDICT, folders["with samples"]) for _ in range(repeats)), key=lambda r: r["seconds"])
    from leaderboard.analysis.predictions import CHART_KS, CHART_SIZES, CURVE_SIZES

    rest = builds["with samples"] - predict["seconds"]
    sizes = len(set(CURVE_SIZES) | {float(size) for size in CHART_SIZES}) + 1  # and each result's own size
    print(f"irboard build of {files} real results ({source}, x{copies}), best of {repeats} fresh processes:\n")
    print("| measure | seconds | per result |\n|---|---|---|")
    for name, seconds in builds.items():
        print(f"| build, {name} | {seconds:.2f} | {1000 * seconds / files:.0f} ms |")
    print(f"| predictions alone ({predict['results']} results, {predict['queries']} queries, both growth scenarios,"
          f" {sizes} sizes x {len(CHART_KS)} k) | {predict['seconds']:.2f} | {1000 * predict['seconds'] / files:.1f} ms |")
    print(f"\npredictions / rest of the build: {predict['seconds'] / rest:.2f} (target <= 0.5)")


def main() -> None:
    require_extra("models", "torch", "transformers", "sentence_transformers", "Stemmer")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated dataset ids")
    parser.add_argument("--models", default=";".join(MODELS), help="';'-separated model specs")
    parser.add_argument("--fractions", default="0.05,0.1,0.2,0.3")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated: " + ", ".join(METHODS))
    parser.add_argument("--uniform-count", choices=("full", "sample"), default="full",
                        help="uniform growth: give every method each query's relevant count in the full corpus "
                             "(default) or the scenario's count scaled from the sub-corpus (see evaluate_pair)")
    parser.add_argument("--write-evidence", type=Path,
                        help="also write the table as JSON for the site (leaderboard/analysis/scale_evidence.json)")
    parser.add_argument("--cost", nargs="?", const=ROOT / "results", type=Path, metavar="RESULTS",
                        help="measure what predictions add to irboard build instead (default results/)")
    parser.add_argument("--copies", type=int, default=1, help="with --cost: copies of each result")
    parser.add_argument("--repeats", type=int, default=3, help="with --cost: best of this many runs")
    args = parser.parse_args()
    if args.cost:
        measure_cost(args.cost, args.copies, args.repeats)
        return
    fractions = [float(f) for f in args.fractions.split(",")]
    seeds = list(range(args.seeds))
    methods = [m for m in METHODS if m in args.methods.split(",")]
    shown = [*methods, FLOOR]
    rows, pooled = [], {g: {m: [] for m in shown} for g in GROWTHS}
    by_fraction = {g: {m: {f: [] for f in fractions} for m in shown} for g in GROWTHS}
    print("| dataset | model | growth | measured R@10 · R@100 · R@1000 | "
          + " | ".join(f"{m} error" for m in methods) + " | per_query dropped |")
    print("|---|---|---|---|" + "---|" * len(methods) + "---|")
    for dataset_id in args.datasets.split(","):
        dataset = load_dataset(dataset_id, data_dir=DATASETS[dataset_id])
        relevant = relevance_matrix(dataset)
        for spec in [s for s in args.models.split(";") if s]:
            start = time.perf_counter()
            scores, model_id = full_scores(spec, dataset)
            report = evaluate_pair(scores, relevant, fractions, seeds, methods, args.uniform_count)
            for growth, part in report.items():
                cells = []
                for method in shown:
                    errors = mean_errors(part["errors"][method])
                    pooled[growth][method].extend(e for _, e in part["errors"][method])
                    for fraction, error in part["errors"][method]:
                        by_fraction[growth][method][fraction].append(error)
                    if method in methods:
                        cells.append(" · ".join(f"{e:.3f}" for e in errors) if errors else "cannot predict")
                print(f"| {dataset_id} | {model_id} | {growth} | "
                      + " · ".join(f"{v:.3f}" for v in part["measured"]) + " | " + " | ".join(cells)
                      + f" | {part['dropped']:.1%} |", flush=True)
                rows.append(evidence_row(dataset_id, model_id, growth, part, methods))
            print(f"    ({time.perf_counter() - start:.1f} s; fit seconds "
                  + ", ".join(f"{m} {report[g]['seconds'][m]:.1f}" for g in GROWTHS for m in methods) + ")",
                  file=sys.stderr)
    summary = {g: {m: mean_errors([(0, e) for e in pooled[g][m]]) for m in methods} for g in GROWTHS}
    print("\nMean |error| (and mean signed error) over every dataset, model, fraction and seed (R@10 · R@100 · "
          f"R@1000; {FLOOR}: the sampled relevant documents' true ranks):")
    for growth in GROWTHS:
        for method in shown:
            values = mean_errors([(0, e) for e in pooled[growth][method]])
            bias = mean_errors([(0, e) for e in pooled[growth][method]], signed=True)
            print(f"  {growth:15s} {method:10s} " + (" · ".join(f"{v:.4f}" for v in values) + "  (signed "
                                                      + " · ".join(f"{v:+.4f}" for v in bias) + ")"
                                                      if values else "n/a"))
    print("\nBy fraction of the corpus the samples come from (extrapolation 1/fraction), same errors:")
    fraction_json = {}
    for growth in GROWTHS:
        for method in shown:
            for fraction in fractions:
                values = mean_errors([(0, e) for e in by_fraction[growth][method][fraction]])
                if values and method in methods:
                    fraction_json.setdefault(growth, {}).setdefault(method, {})[str(fraction)] = {
                        str(k): round(v, 4) for k, v in zip(KS, values, strict=True)}
                if values:
                    print(f"  {growth:15s} {method:10s} {fraction:5.0%} " + " · ".join(f"{v:.4f}" for v in values))
    if args.write_evidence:
        from evaluator.result import write_atomic

        description = (
            f"benchmarks/scale.py: for {len(args.datasets.split(','))} datasets and {len(rows) // 2} models x "
            f"dataset pairs, sub-corpora of {', '.join(f'{f:.0%}' for f in fractions)} of the documents "
            f"({len(seeds)} seeds each) stand in for the dataset: uniform sub-corpora sample all documents, "
            "relevant ones included; fixed-relevant ones keep every relevant document of the query plus that "
            "fraction of the others. Recall@k is predicted at the full corpus size from 12-bit score samples of "
            "the sub-corpus and compared with the recall measured on the full corpus; errors are |predicted - "
            "measured| averaged over fractions and seeds."
            + (" Under uniform growth every method is given each query's relevant count in the full corpus, as "
               "the scenario assumes it known: a small uniform sample can only be scored for the queries that "
               "kept a relevant document by chance, and scaling their kept count up overstates the full one."
               if args.uniform_count == "full" else
               " Under uniform growth the relevant count is the sub-corpus's scaled up, as the scenario does."))
        summary_json = {g: {m: ({str(k): round(v, 4) for k, v in zip(KS, values, strict=True)} if values else None)
                            for m, values in by_method.items()} for g, by_method in summary.items()}
        write_atomic(args.write_evidence, json.dumps(
            {"description": description, "fractions": fractions, "seeds": len(seeds), "summary": summary_json,
             "by_fraction": fraction_json, "rows": rows}, indent=1, sort_keys=True) + "\n")


def evidence_row(dataset_id: str, model_id: str, growth: str, part: dict, methods) -> dict:
    errors = {}
    for method in methods:
        values = mean_errors(part["errors"][method])
        errors[method] = {str(k): round(v, 4) for k, v in zip(KS, values, strict=True)} if values else None
    return {
        "dataset": dataset_id, "model": model_id, "growth": growth,
        "measured": {str(k): round(float(v), 4) for k, v in zip(KS, part["measured"], strict=True)},
        "errors": errors, "dropped": round(part["dropped"], 4), "cannot_predict": part["reasons"],
    }


if __name__ == "__main__":
    main()
