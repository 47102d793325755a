"""Benchmark: the cost of Judged@k and hole bounds in `irboard.evaluate`, against ir_measures' Judged@k, in one run.

Usage: python benchmarks/holes.py [--queries 7000] [--docs 1000] [--repeat 3]
       python benchmarks/holes.py --small            (200 queries x 100 docs, a quick check)

The load is benchmarks/metrics.py's synthetic run and qrels (seeded; scores with 2 decimals, so ties; graded
labels 0-3 on about 30 documents a query, drawn mostly from the top ranks, so the top 10 is about a third judged,
as on Touché-2020) at the mission's size, 7,000 queries x 1,000 documents. Rows, all on the same files, the best
of `--repeat`:

- `irboard.evaluate(RUN, QRELS, "nDCG@10,R@100,AP,RR", per_query=True)`: the values alone;
- the same with `judged=True` (Judged@k at each metric's cutoff) and with `judged=True, bounds=True`;
- `hole_bounds` on the already ranked label matrix, per metric (the arithmetic alone; also uncut nDCG, Rprec and
  P@10. Bpref's bounds cost one pass over the matrix per unjudged document and are left out at this depth);
- ir_measures `iter_calc([Judged@10, Judged@100, Judged@1000], qrels, run)` from the same files: the peer that
  gives Judged@k (and nothing of the bounds).

irboard's judged column is compared with ir_measures' Judged@k query by query; ir_measures breaks score ties by
doc id ascending where trec_eval (and irboard) take doc id descending, so queries with a tie across the cutoff may
differ: they are counted, and every other query must agree within 1e-12.

ir_measures is found on the import path, so it need not be in the environment irboard runs from: its one
dependency, pytrec_eval-terrier, comes with irboard's `test` extra, and

    python -m pip install --no-deps --target /tmp/irm ir_measures
    PYTHONPATH=$PWD:/tmp/irm python benchmarks/holes.py

installs it apart (nothing else changes in the environment) and runs the benchmark with it.
"""

from __future__ import annotations

import argparse
import sys
import time

from metrics import generate  # benchmarks/metrics.py: the same seeded load
from peers import require_extra  # benchmarks/peers.py

MEASURES = ("nDCG@10", "R@100", "AP", "RR")
JUDGED = {"nDCG@10": "Judged@10", "R@100": "Judged@100", "AP": "Judged@1000", "RR": "Judged@1000"}


def best(repeat: int, function) -> tuple[float, float, object]:
    """The smallest wall and CPU seconds over `repeat` calls, and the last value."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        value = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), value


def tie_at_cutoff(run_path, cutoff: int) -> set[str]:
    """Queries whose scores at ranks `cutoff` and `cutoff` + 1 are equal (their top k depends on the tie order)."""
    scores: dict[str, list[float]] = {}
    with open(run_path) as lines:
        for line in lines:
            query_id, _, _, _, score, _ = line.split()
            scores.setdefault(query_id, []).append(float(score))
    tied = set()
    for query_id, values in scores.items():
        ranked = sorted(values, reverse=True)
        if len(ranked) > cutoff and ranked[cutoff - 1] == ranked[cutoff]:
            tied.add(query_id)
    return tied


def main() -> int:
    require_extra("bench", "ir_measures", "pandas")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=7_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--small", action="store_true", help="200 queries x 100 docs")
    parser.add_argument("--repeat", type=int, default=3, help="calls per row; the best time is reported")
    args = parser.parse_args()
    if args.small:
        args.queries, args.docs = 200, 100
    run_path, qrels_path = generate(args.queries, args.docs)

    import ir_measures
    import pandas  # noqa: F401  (import time is not evaluation time)

    import irboard
    from evaluator.metrics import parse_measure
    from evaluator.metrics.holes import hole_bounds
    from evaluator.trec import rank_trec_run, read_qrels

    metrics = list(MEASURES)
    rows = []

    def evaluate(**flags):
        return irboard.evaluate(run_path, qrels_path, metrics, per_query=True, **flags)

    evaluate()  # warm-up, not counted: the modules irboard loads on first use
    rows.append(("irboard.evaluate, values", *best(args.repeat, evaluate)))
    rows.append(("irboard.evaluate, judged=True", *best(args.repeat, lambda: evaluate(judged=True))))
    rows.append(("irboard.evaluate, judged=True, bounds=True",
                 *best(args.repeat, lambda: evaluate(judged=True, bounds=True))))
    table = rows[-1][3]
    qrels = read_qrels(qrels_path)
    ranked, _ = rank_trec_run(run_path, qrels)
    stats = qrels.label_stats(1)
    for name in (*metrics, "nDCG", "Rprec", "P@10"):  # and two uncut families the default set lacks
        rows.append((f"  hole_bounds {name} on ranked arrays",
                     *best(args.repeat, lambda name=name: hole_bounds(ranked, stats, parse_measure(name)))))
    peers = [ir_measures.parse_measure(m) for m in sorted(set(JUDGED.values()))]

    def ir_measures_judged():
        return list(ir_measures.iter_calc(peers, ir_measures.read_trec_qrels(str(qrels_path)),
                                          ir_measures.read_trec_run(str(run_path))))

    rows.append(("ir_measures iter_calc Judged@10,100,1000", *best(args.repeat, ir_measures_judged)))

    print(f"{args.queries} queries x {args.docs} documents ({run_path.name}); best of {args.repeat}")
    print(f"\n{'row':<48} {'wall s':>8} {'cpu s':>8}")
    for label, wall, cpu, _ in rows:
        print(f"{label:<48} {wall:>8.3f} {cpu:>8.3f}")
    wall = {label: w for label, w, _, _ in rows}
    plain, with_judged = wall["irboard.evaluate, values"], wall["irboard.evaluate, judged=True"]
    with_bounds = wall["irboard.evaluate, judged=True, bounds=True"]
    peer = wall["ir_measures iter_calc Judged@10,100,1000"]
    print(f"\njudged=True costs {with_judged / plain:.2f}x the values alone; judged=True, bounds=True "
          f"{with_bounds / plain:.2f}x")
    print(f"ir_measures' Judged@k alone takes {peer / with_bounds:.1f}x as long as irboard.evaluate with values, "
          f"Judged@k and bounds ({peer / plain:.1f}x the values alone)")

    per_query: dict[str, dict[str, float]] = {}
    for metric in rows[-1][3]:
        per_query.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    failed = False
    for name, judged in JUDGED.items():
        cutoff = parse_measure(judged).cutoff
        tied = tie_at_cutoff(run_path, cutoff) if cutoff < args.docs else set()
        ours = table[f"{name} judged"]
        differing = [q for q, v in per_query[judged].items() if abs(ours[q] - v) > 1e-12]
        untied = [q for q in differing if q not in tied]
        print(f"{name} judged vs ir_measures {judged}: {len(per_query[judged])} queries, {len(differing)} differ "
              f"({len(untied)} without a score tie across rank {cutoff})")
        failed |= bool(untied)
        low, high, value = table[f"{name} hole_low"], table[f"{name} hole_high"], table[name]
        failed |= not ((low <= value).all() and (value <= high).all())
        print(f"  {name}: mean {value.mean():.4f}, range of the mean [{low.mean():.4f}, {high.mean():.4f}], "
              f"Judged {ours.mean():.3f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
