"""Benchmark: TREC run + qrels files -> per-query nDCG@10, R@100, AP, RR, against pytrec_eval, ir_measures, ranx.

Usage: python benchmarks/metrics.py [--queries 10000] [--docs 1000] [--repeat 1]
       python benchmarks/metrics.py --small            (200 queries x 100 docs, a quick check)

A seeded synthetic run (scores rounded to 2 decimals, so many ties; lines sorted by score with ties in
random order, as retrieval tools write them) and graded qrels (labels 0-3; some qrels queries absent from
the run and some run queries absent from the qrels) are written to benchmarks/_work/. Each tool runs in its
own subprocess, so the peak RSS figures are its own. Every tool's per-query values are compared with
pytrec_eval's; irboard must agree within 1e-9 (ranx and ir_measures are reported, not enforced).

Three irboard rows: `irboard` times the internal path (read qrels, rank, metrics on arrays), `irboard-api` the
public API (`irboard.evaluate(RUN, QRELS, metrics, per_query=True)`: the same path plus a DataFrame), and
`irboard-command` the command a user runs, `irboard evaluate --run RUN --qrels QRELS ... --out FILE` with the
standard metric set (30 metrics, named with --metrics), as a subprocess: start-up, read, rank, metrics and writing
the result file. Its output must then
pass `irboard validate`, verified by re-scoring: the 10,000 qrels queries are submitted as `beir/quora` (whose
test split has 10,000 queries, so every check of validate applies) and re-scored against the synthetic qrels
placed as `--data-dir beir/quora=DIR` (DIR/qrels/test.tsv).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from peers import require_extra  # benchmarks/peers.py

WORK = Path(__file__).resolve().parent / "_work"
MEASURES = ("nDCG@10", "R@100", "AP", "RR")
PYTREC_NAMES = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP": "map", "RR": "recip_rank"}
RANX_NAMES = {"nDCG@10": "ndcg@10", "R@100": "recall@100", "AP": "map", "RR": "mrr"}
TOLERANCE = 1e-9
COMMAND_DATASET, COMMAND_QUERIES = "beir/quora", 10_000  # a registered dataset as large as the default qrels


# ---------------------------------------------------------------------------------------------- data
def generate(queries: int, docs: int, seed: int = 2024) -> tuple[Path, Path]:
    """Write the synthetic run and qrels once per size; later runs reuse them."""
    run_path = WORK / f"run_{queries}x{docs}.txt"
    qrels_path = WORK / f"qrels_{queries}x{docs}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    WORK.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    corpus = 50 * docs + 1000
    missing_from_qrels = {i for i in range(queries) if i % 50 == 7}
    with (
        open(run_path.with_suffix(".tmp"), "w") as run_file,
        open(qrels_path.with_suffix(".tmp"), "w") as qrels_file,
    ):
        for i in range(queries):
            doc_ids = rng.choice(corpus, size=docs, replace=False)
            scores = np.round(rng.normal(10.0, 3.0, size=docs), 2)
            order = np.argsort(-scores, kind="stable")  # tie order stays random
            qid = f"q{i:05d}"
            run_file.write(
                "".join(
                    f"{qid} Q0 doc{doc:07d} {rank} {score:.2f} irboard-bench\n"
                    for rank, (doc, score) in enumerate(
                        zip(doc_ids[order].tolist(), scores[order].tolist(), strict=True), 1
                    )
                )
            )
            if i in missing_from_qrels:
                continue
            positions = np.unique(np.minimum(rng.geometric(1 / max(docs // 10, 1), size=30), docs) - 1)
            judged = doc_ids[order][positions].tolist() + rng.choice(corpus, size=5).tolist()
            labels = rng.choice(4, size=len(judged), p=[0.45, 0.3, 0.15, 0.1]).tolist()
            qrels_file.write(
                "".join(
                    f"{qid} 0 doc{doc:07d} {label}\n"
                    for doc, label in dict(zip(judged, labels, strict=True)).items()
                )
            )
        for i in range(queries, queries + max(queries // 50, 1)):  # judged queries the run lacks
            qrels_file.write(f"q{i:05d} 0 doc{i:07d} 1\n")
    run_path.with_suffix(".tmp").replace(run_path)
    qrels_path.with_suffix(".tmp").replace(qrels_path)
    return run_path, qrels_path


def load_with_pandas(run_path: Path, qrels_path: Path, rows: int | None = None) -> tuple[dict, dict]:
    """What BEIR-style scripts do, done as fast as we found: pandas' C parser, then {qid: {docid: value}}."""
    import pandas as pd  # imported by the worker before timing starts

    def to_dicts(frame) -> dict:
        codes, names = frame["q"].cat.codes.to_numpy(), frame["q"].cat.categories.to_numpy()
        docs, values = frame["d"].tolist(), frame["v"].tolist()
        bounds = (np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist()
        nested: dict = {}
        for start, stop in zip([0, *bounds], [*bounds, len(codes)], strict=True):
            nested.setdefault(names[codes[start]], {}).update(
                zip(docs[start:stop], values[start:stop], strict=True)
            )
        return nested

    options = dict(sep=" ", header=None, engine="c", names=["q", "d", "v"], nrows=rows)
    run = pd.read_csv(run_path, usecols=[0, 2, 4], dtype={0: "category", 2: str, 4: np.float64}, **options)
    qrels = pd.read_csv(qrels_path, usecols=[0, 2, 3], dtype={0: "category", 2: str, 3: np.int64}, **options)
    return to_dicts(run), to_dicts(qrels)


# ---------------------------------------------------------------------------------------------- tools
class Steps:
    """Wall-clock and CPU seconds per step, the smallest over the repeats (timings here are noisy)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.peak_rss: int | None = None  # set when the timed work ran in a child process

    def time_command(self, step: str, command: list[str]) -> None:
        """Run `command` as a child process; its wall and CPU seconds (user + system) under `step`."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self.wall[step] = min(self.wall.get(step, np.inf), wall)
        self.cpu[step] = min(self.cpu.get(step, np.inf), cpu)
        return done

    def time(self, step: str, function):
        wall, cpu = time.perf_counter(), time.process_time()
        value = function()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.wall[step] = min(self.wall.get(step, np.inf), wall)
        self.cpu[step] = min(self.cpu.get(step, np.inf), cpu)
        return value


def run_irboard(run_path: Path, qrels_path: Path, repeat: int, steps: Steps) -> dict:
    from evaluator.metrics import evaluate, parse_measures
    from evaluator.trec import rank_trec_run, read_qrels

    measures = parse_measures(list(MEASURES))

    def end_to_end():
        qrels = steps.time("read qrels", lambda: read_qrels(qrels_path))
        ranked, _top = steps.time("rank_trec_run", lambda: rank_trec_run(run_path, qrels))
        return qrels, ranked, steps.time("evaluate", lambda: evaluate(ranked, qrels, measures))

    for _ in range(repeat):
        qrels, ranked, values = steps.time("end-to-end", end_to_end)
    for _ in range(3):
        steps.time("metrics on ranked arrays", lambda: evaluate(ranked, qrels, measures))  # noqa: B023
    return {m: dict(zip(ranked.query_ids, values[m].tolist(), strict=True)) for m in MEASURES}


def run_irboard_api(run_path: Path, qrels_path: Path, repeat: int, steps: Steps) -> dict:
    """The public API a notebook user calls (docs/api.md): paths in, a per-query DataFrame out."""
    import pandas  # noqa: F401  (import time is not load time, as for the peers)

    import irboard

    for _ in range(repeat):
        frame = steps.time("end-to-end", lambda: irboard.evaluate(run_path, qrels_path, list(MEASURES),
                                                                   per_query=True))
    return {m: frame[m].to_dict() for m in MEASURES}


def run_irboard_command(run_path: Path, qrels_path: Path, repeat: int, steps: Steps) -> dict:
    from evaluator.result import read_result, result_path

    irboard = str(Path(sys.executable).with_name("irboard"))
    folder = WORK / "command"
    out = result_path("bench/irboard-command", COMMAND_DATASET, folder / "results")
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(qrels_path, folder / "qrels" / "test.tsv")
    from evaluator.metrics import DEFAULT_MEASURES

    # the standard set, named: beir/quora's default adds its headline R@1000, which stores rankings 1,000 deep
    command = [irboard, "evaluate", "--run", str(run_path), "--qrels", str(qrels_path), "--model-id",
               "bench/irboard-command", "--dataset-id", COMMAND_DATASET, "--out", str(out), "--force", "--quiet",
               "--metrics", ",".join(map(str, DEFAULT_MEASURES))]
    for _ in range(repeat):
        steps.time_command("end-to-end", command)
    steps.peak_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the command's alone so far
    steps.cpu["result file MB"] = steps.wall["result file MB"] = out.stat().st_size / 1e6
    result = read_result(out)
    if len(result.query_ids) == COMMAND_QUERIES:  # other sizes cannot pass as beir/quora
        validated = steps.time_command("irboard validate (not counted)",
                                       [irboard, "validate", str(out), "--data-dir", f"{COMMAND_DATASET}={folder}"])
        if "1 verified" not in validated.stdout:
            raise RuntimeError(f"irboard validate did not verify {out}: {validated.stdout}")
    return {m: result.values(m) for m in MEASURES if m in result.per_query}


def run_pytrec_eval(run_path: Path, qrels_path: Path, repeat: int, steps: Steps) -> dict:
    import pandas  # noqa: F401  (import time is not load time)
    import pytrec_eval

    def end_to_end():
        run, qrels = steps.time("pandas load + dicts", lambda: load_with_pandas(run_path, qrels_path))
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_NAMES.values()))
        return steps.time("evaluate", lambda: evaluator.evaluate(run))

    for _ in range(repeat):
        results = None
        results = steps.time("end-to-end", end_to_end)
    return {m: {q: v[name] for q, v in results.items()} for m, name in PYTREC_NAMES.items()}


def run_ir_measures(run_path: Path, qrels_path: Path, repeat: int, steps: Steps) -> dict:
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    for _ in range(repeat):  # ir_measures reads the files lazily, inside iter_calc
        qrels, run = ir_measures.read_trec_qrels(str(qrels_path)), ir_measures.read_trec_run(str(run_path))
        metrics = steps.time("end-to-end", lambda: list(ir_measures.iter_calc(measures, qrels, run)))  # noqa: B023
    per_query: dict[str, dict] = {m: {} for m in MEASURES}
    for metric in metrics:
        per_query[str(metric.measure)][metric.query_id] = metric.value
    return per_query


def run_ranx(run_path: Path, qrels_path: Path, repeat: int, steps: Steps) -> dict:
    import pandas  # noqa: F401
    from ranx import Qrels, Run, evaluate

    metrics = list(RANX_NAMES.values())

    def build(run_dict, qrels_dict):
        qrels = Qrels.from_dict(qrels_dict)
        return qrels, Run.from_dict(run_dict).make_comparable(qrels)

    def warm_up():  # numba compiles per id length and code path: the first lines of the same files
        run_dict, qrels_dict = load_with_pandas(run_path, qrels_path, rows=20_000)
        evaluate(*build(run_dict, qrels_dict), metrics, return_mean=False)

    steps.time("numba warm-up (not counted)", warm_up)

    def end_to_end():
        run_dict, qrels_dict = steps.time(
            "pandas load + dicts", lambda: load_with_pandas(run_path, qrels_path)
        )
        qrels, run = steps.time("build Qrels/Run", lambda: build(run_dict, qrels_dict))
        return run, steps.time("warm evaluate", lambda: evaluate(qrels, run, metrics, return_mean=False))

    for _ in range(repeat):
        run = values = None  # let the previous repeat's objects go before loading again
        run, values = steps.time("end-to-end", end_to_end)
    query_ids = list(run.keys())
    return {
        m: dict(zip(query_ids, np.asarray(values[n]).tolist(), strict=True)) for m, n in RANX_NAMES.items()
    }


TOOLS = {
    "irboard": run_irboard,
    "irboard-api": run_irboard_api,
    "irboard-command": run_irboard_command,
    "pytrec_eval": run_pytrec_eval,
    "ir_measures": run_ir_measures,
    "ranx": run_ranx,
}


def worker(tool: str, run_path: Path, qrels_path: Path, repeat: int) -> None:
    steps = Steps()
    per_query = TOOLS[tool](run_path, qrels_path, repeat, steps)
    peak = steps.peak_rss or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    (WORK / f"values_{tool}.json").write_text(json.dumps(per_query))
    print(json.dumps({"wall": steps.wall, "cpu": steps.cpu, "peak_rss": peak}))


# ---------------------------------------------------------------------------------------------- report
def compare(reference: dict, candidate: dict, qrels_only: set[str]) -> tuple[float, int, int]:
    """Largest difference on queries pytrec_eval scores, count of differing ones, and qrels-only queries not 0."""
    worst, differing, nonzero_missing = 0.0, 0, 0
    for measure in (m for m in MEASURES if m in candidate):
        for query_id, value in reference[measure].items():
            diff = abs(candidate[measure].get(query_id, np.nan) - value)
            worst = max(worst, diff if np.isfinite(diff) else np.inf)
            differing += not diff <= TOLERANCE
        nonzero_missing += sum(1 for q in qrels_only if candidate[measure].get(q, 0.0) != 0.0)
    return worst, differing, nonzero_missing


def main() -> int:
    require_extra("bench", "pytrec_eval", "ir_measures", "ranx", "pandas")
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--small", action="store_true", help="200 queries x 100 docs")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool; the best time is reported")
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS)
    )
    parser.add_argument("--worker", choices=list(TOOLS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.small:
        args.queries, args.docs = 200, 100
    run_path, qrels_path = generate(args.queries, args.docs)
    if args.worker:
        worker(args.worker, run_path, qrels_path, args.repeat)
        return 0

    tools = [t for t in args.tools.split(",") if t]
    size_mb = run_path.stat().st_size / 1e6
    print(
        f"run: {run_path.name} ({size_mb:.0f} MB, {args.queries} queries x {args.docs} docs); qrels: {qrels_path.name}"
    )
    reports = {}
    for tool in ["pytrec_eval"] + [t for t in tools if t != "pytrec_eval"]:
        command = [
            sys.executable,
            __file__,
            "--worker",
            tool,
            "--queries",
            str(args.queries),
            "--docs",
            str(args.docs),
            "--repeat",
            str(args.repeat),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{tool} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        reports[tool] = json.loads(done.stdout.strip().splitlines()[-1])
        reports[tool]["values"] = json.loads((WORK / f"values_{tool}.json").read_text())

    reference = reports["pytrec_eval"]["values"]
    ours = reports["irboard"] if "irboard" in reports else None
    print(f"\n{'tool':<15} {'step':<30} {'wall s':>8} {'cpu s':>8} {'wall / irboard':>15} {'peak RSS':>9}")
    for tool, report in reports.items():
        for step, wall in report["wall"].items():
            ratio = (
                f"{wall / ours['wall'][step]:.1f}x"
                if ours and step == "end-to-end" and not tool.startswith("irboard")
                else ""
            )
            rss = f"{report['peak_rss'] / 2**30:.2f} GiB" if step == "end-to-end" else ""
            print(f"{tool:<15} {step:<30} {wall:>8.3f} {report['cpu'][step]:>8.3f} {ratio:>15} {rss:>9}")

    print("\nagreement with pytrec_eval (queries in both run and qrels; qrels-only queries must score 0):")
    qrels_only = set(ours["values"][MEASURES[0]]) - set(reference[MEASURES[0]]) if ours else set()
    failed = False
    for tool, report in reports.items():
        if tool != "pytrec_eval":
            worst, differing, nonzero = compare(
                reference, report["values"], qrels_only if tool.startswith("irboard") else set()
            )
            verdict = "identical within 1e-9" if differing == nonzero == 0 else f"{differing} values differ"
            print(f"  {tool:<15} max |diff| {worst:.2e}; {verdict}")
            failed |= tool.startswith("irboard") and (differing > 0 or nonzero > 0)
    for clock in ("wall", "cpu"):
        peers = {t: r[clock]["end-to-end"] for t, r in reports.items() if not t.startswith("irboard")}
        fastest = min(peers, key=peers.get)
        if ours:
            e2e = peers[fastest] / ours[clock]["end-to-end"]
            metrics = reports["pytrec_eval"][clock]["evaluate"] / ours[clock]["metrics on ranked arrays"]
            print(
                f"{clock:>4}: library end-to-end {e2e:.1f}x faster than the fastest peer ({fastest}); "
                f"metrics on ranked arrays {metrics:.1f}x faster than pytrec_eval evaluate (target 10x)"
            )
        if "irboard-command" in reports:
            e2e = peers[fastest] / reports["irboard-command"][clock]["end-to-end"]
            print(f"{clock:>4}: the command (start-up, read, rank, 30 metrics, write) {e2e:.1f}x faster than the "
                  f"fastest peer ({fastest}; target 4x)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
