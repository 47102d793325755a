"""The board's SciFact results under the official judgments and under the machine set (docs/datasets.md, "A
machine set: SciFact"): per result Judged@10 and nDCG@10 under each, and every pairwise verdict (paired t-test,
Holm over every pair of the results, as the dataset page) that changes between the two.

    IRBOARD_MIRROR=../shared/data/official python benchmarks/machine_judgments.py

No peer: the figures the docs quote. Reads only the committed set (`judgments/`) and the stored rankings.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import irboard  # noqa: E402
from evaluator.datasets.judgment_sets import find_set, load_qrels  # noqa: E402
from evaluator.judges.pool import result_files  # noqa: E402
from evaluator.metrics.holes import judged_at  # noqa: E402
from evaluator.metrics.ranking import rank_plain_dict  # noqa: E402
from evaluator.result import read_result  # noqa: E402


def judged10(run: dict, qrels) -> float:
    ranked = rank_plain_dict(run, qrels)
    return float(np.mean(judged_at(ranked, 10)))


def verdicts(results: dict, dataset: str, judgments: str) -> dict[tuple[str, str], str]:
    """(run, baseline) -> the corrected verdict of run against baseline, for every ordered pair."""
    found = {}
    for baseline in results:
        report = irboard.compare(results, dataset, "nDCG@10", baseline=baseline, judgments=judgments)
        for row in report.rows:
            if row["run"] != baseline:
                found[(row["run"], baseline)] = row["verdict"]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="beir/scifact")
    parser.add_argument("--set", default="minilm-cosine-pool10", help="the declared set compared with official")
    args = parser.parse_args(argv)
    machine = find_set(args.dataset, args.set)
    sets = {"official": load_qrels(find_set(args.dataset, "official")), args.set: load_qrels(machine)}
    results = {}
    print(f"{args.dataset}: official vs {args.set} (sha256 {machine.short}…)\n")
    print("| result | Judged@10 official | Judged@10 machine | nDCG@10 official | nDCG@10 machine |")
    print("|---|---|---|---|---|")
    for path in result_files(ROOT / "results", args.dataset):
        result = read_result(path)
        results[result.model.id] = result
        run = {q: dict(ranking) for q, ranking in result.rankings().items()}
        cells = [f"{judged10(run, qrels):.3f}" for qrels in sets.values()]
        cells += [f"{irboard.evaluate(run, args.dataset, 'nDCG@10', judgments=name)['nDCG@10']:.4f}" for name in sets]
        print(f"| {result.model.id} | " + " | ".join(cells) + " |")
    before, after = (verdicts(results, args.dataset, name) for name in sets)
    changed = [(pair, before[pair], after[pair]) for pair in sorted(before) if before[pair] != after[pair]]
    print(f"\n{len(changed)} of {len(before)} ordered pairwise verdicts change:")
    for (run, baseline), old, new in changed:
        print(f"- {run} against {baseline}: {old} -> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
