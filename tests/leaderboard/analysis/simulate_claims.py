"""Known-truth simulation of the pooled claims on boards shaped like real ones (docs/statistics.md, "Pooled
claims on unequal, non-normal boards"): `python -m tests.leaderboard.analysis.simulate_claims` writes
claims_table.json beside this file (run once, with `nice -n 10`; not part of the suite; `--only best` reruns one
section), and test_claims_table.py checks the doc's tables against it and reruns a small slice (PROBES) live. The
file also holds the best set's cells on skewed per-query differences (simulate_best.py), the prediction interval's
table and the per-dataset equivalence and best-set rows (test_predictive_simulation.py), so that no test reruns a
long grid.

A cell: k datasets of 30-5,000 queries (log-uniform), three models whose true differences over the population of
datasets are exactly one margin apart (model 1 - model 0 = margin, model 2 - model 1 = margin), so every
"equivalent" is a false claim. On dataset k a pair's true difference is the margin plus tau times a standardised
draw of the effect shape; a query's difference is that plus standardised per-query noise of the per-query shape.
Measured per cell: the coverage of the pooled 95% interval of pair (1, 0) for the population mean (the margin)
under each candidate rule, its median width, and the family-wise false-claim rate of pooled equivalence over the
three pairs (Bonferroni's level alpha / 3, the candidate's interval within +- the margin)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

from leaderboard.analysis import meta
from tests.leaderboard.analysis import simulate_best
from tests.leaderboard.analysis import test_predictive_simulation as predictive

ALPHA = 0.05
MARGIN = 0.01
PAIRS = 3
SIZES = (30, 5000)
KS = (3, 5, 10, 15, 30)
TAUS = (0.0, 0.01, 0.02, 0.04)  # 0.02: the two-point spread's common value is then 0, inside the margin
EFFECTS = ("normal", "skewed", "two-point", "size-linked")
PER_QUERY = ("zeros", "t3", "lognormal", "rescue")
RULES = ("hk", "mhk", "unweighted", "chosen")
REPLICATES = 400  # Monte Carlo SE of a 95% coverage: 1.1 points
TABLE = Path(__file__).with_name("claims_table.json")


def effect_draws(rng, shape: str, sizes: np.ndarray) -> np.ndarray:
    """Standardised (mean 0, SD 1 over the population of datasets) true-effect deviations, one per dataset."""
    k = sizes.size
    if shape == "normal":
        return rng.standard_normal(k)
    if shape == "skewed":  # exponential: skewness 2
        return rng.exponential(1.0, k) - 1.0
    if shape == "two-point":  # 80% at -0.5, 20% at +2
        return np.where(rng.random(k) < 0.2, 2.0, -0.5)
    # linked to size: uniform in log size, standardised (sizes are log-uniform, so its population mean is 0)
    low, high = np.log(SIZES)
    return (np.log(sizes) - (low + high) / 2) / ((high - low) / np.sqrt(12))


def query_noise(rng, shape: str, n: int) -> np.ndarray:
    """Per-query deviations of a paired difference from its dataset's true difference, mean 0."""
    if shape == "zeros":  # nDCG-like: half the queries score 0 for both, the rest differ by u1 - u2, u ~ Beta(1, 2)
        moved = rng.random(n) < 0.5
        return np.where(moved, rng.beta(1, 2, n) - rng.beta(1, 2, n), 0.0)
    if shape == "t3":
        return 0.2 / np.sqrt(3) * rng.standard_t(3, n)
    if shape == "lognormal":
        return 0.2 * (rng.lognormal(0, 1, n) - np.exp(0.5)) / np.sqrt((np.e - 1) * np.e)
    # one model rescues a few queries (5%) that the other does not answer: a long tail on one side
    return rng.normal(0, 0.1, n) - 0.6 * ((rng.random(n) < 0.05) - 0.05)


def intervals(y: np.ndarray, v: np.ndarray, alpha: float) -> dict[str, tuple[float, float]]:
    """Each candidate rule's two-sided 1 - alpha interval of the population mean."""
    k = y.size
    fit = meta.pool(y, v)
    tau2 = fit.tau ** 2
    w = 1.0 / (np.maximum(v, max(float(v.max()), 1e-300) * 1e-12) + tau2)
    mu = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - mu) ** 2)) / (k - 1)
    t = float(stats.t.isf(alpha / 2, k - 1))
    hk = t * np.sqrt(q / np.sum(w))
    mhk = t * np.sqrt(max(q, 1.0) / np.sum(w))
    mean, half = float(y.mean()), t * float(y.std(ddof=1)) / np.sqrt(k)
    return {"hk": (mu - hk, mu + hk), "mhk": (mu - mhk, mu + mhk), "unweighted": (mean - half, mean + half),
            "chosen": meta.mean_interval(fit, alpha)}


def cell(k: int, tau: float, effect: str, per_query: str, replicates: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    covered = dict.fromkeys(RULES, 0)
    widths = {rule: [] for rule in RULES}
    claimed = dict.fromkeys(RULES, 0)
    low, high = np.log(SIZES)
    for _ in range(replicates):
        sizes = np.exp(rng.uniform(low, high, k)).astype(np.int64)
        # true differences of models 1 and 2 from model 0 on each dataset
        theta1 = MARGIN + tau * effect_draws(rng, effect, sizes)
        theta2 = theta1 + MARGIN + tau * effect_draws(rng, effect, sizes)
        ys = np.empty((PAIRS, k))
        vs = np.empty((PAIRS, k))
        for j, n in enumerate(sizes):
            e1, e2 = query_noise(rng, per_query, n), query_noise(rng, per_query, n)
            for p, d in enumerate((theta1[j] + e1, theta2[j] - theta1[j] + e2 - e1, theta2[j] + e2)):
                ys[p, j] = d.mean()
                vs[p, j] = d.var(ddof=1) / n
        first = intervals(ys[0], vs[0], ALPHA)
        for rule, (a, b) in first.items():
            covered[rule] += bool(a <= MARGIN <= b)
            widths[rule].append(b - a)
        strict = [intervals(ys[p], vs[p], ALPHA / PAIRS) for p in range(PAIRS)]
        for rule in RULES:
            claimed[rule] += any(-MARGIN < s[rule][0] and s[rule][1] < MARGIN for s in strict)
    return {"k": k, "tau": tau, "effect": effect, "per_query": per_query, "replicates": replicates, "seed": seed,
            "coverage": {rule: covered[rule] / replicates for rule in RULES},  # float, not numpy: JSON
            "width": {rule: float(np.median(widths[rule])) for rule in RULES},
            "false_equivalent": {rule: claimed[rule] / replicates for rule in RULES}}


def grid() -> list[tuple[int, float, str, str]]:
    """Every cell; at tau = 0 the effect shape plays no part, so one shape ("normal") stands for all."""
    return [(k, tau, effect, per_query) for k in KS for tau in TAUS for effect in (EFFECTS if tau else EFFECTS[:1])
            for per_query in PER_QUERY]


def seed_of(k: int, tau: float, effect: str, per_query: str) -> int:
    """A cell's seed, from its parameters (so adding cells to the grid leaves the others' numbers)."""
    return 46_000_000 + 10_000 * k + 100 * round(1000 * tau) + 10 * EFFECTS.index(effect) + PER_QUERY.index(per_query)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def doc_tables(table: dict) -> list[str]:
    """The lines docs/statistics.md shows: per effect shape and tau (rows) and k (columns) the lowest coverage over
    the per-query shapes, chosen rule in bold, then the plain Hartung-Knapp's; the same per per-query shape (lowest
    over effect shapes and tau > 0); the chosen interval's median width against Hartung-Knapp's; the highest
    family-wise false-equivalence rate, with the withholding below meta.MIN_EQUIVALENCE_UNITS and without it."""
    cells = table["cells"]
    ks = sorted({c["k"] for c in cells})
    head = "| " + " | ".join(f"k = {k}" for k in ks) + " |"
    lines = ["| true effects | τ " + head, "|---|---" + "|---" * len(ks) + "|"]

    def worst(select, rule, key="coverage", pick=min):
        return pick(c[key][rule] for c in cells if select(c))

    for effect, tau in [("normal", 0.0)] + [(e, t) for e in EFFECTS for t in TAUS if t]:
        row = []
        for k in ks:
            def chosen(c, k=k, tau=tau, effect=effect):
                return c["k"] == k and c["tau"] == tau and (c["effect"] == effect or not tau)
            row.append(f"**{_pct(worst(chosen, 'chosen'))}** ({_pct(worst(chosen, 'hk'))})")
        lines.append(f"| {effect if tau else 'any'} | {tau:g} | " + " | ".join(row) + " |")
    lines += ["", "| per-query values " + head, "|---" + "|---" * len(ks) + "|"]
    for shape in PER_QUERY:
        row = []
        for k in ks:
            def chosen(c, k=k, shape=shape):
                return c["k"] == k and c["per_query"] == shape
            row.append(f"**{_pct(worst(chosen, 'chosen'))}** ({_pct(worst(chosen, 'hk'))})")
        lines.append(f"| {shape} | " + " | ".join(row) + " |")
    lines += ["", "| median width, chosen / Hartung–Knapp " + head, "|---" + "|---" * len(ks) + "|"]
    for tau in TAUS:
        row = []
        for k in ks:
            ratios = [c["width"]["chosen"] / c["width"]["hk"] for c in cells if c["k"] == k and c["tau"] == tau]
            row.append(f"{min(ratios):.2f}–{max(ratios):.2f}")
        lines.append(f"| τ = {tau:g} | " + " | ".join(row) + " |")
    lines += ["", "| some pair called equivalent " + head, "|---" + "|---" * len(ks) + "|"]
    withheld = meta.MIN_EQUIVALENCE_UNITS
    for label, rule in (("as the site claims it", "chosen"), ("the chosen interval, never withheld", "chosen"),
                        ("Hartung–Knapp, never withheld", "hk")):
        row = []
        for k in ks:
            rate = worst(lambda c, k=k: c["k"] == k, rule, "false_equivalent", max)
            row.append("withheld" if label.startswith("as") and k < withheld else
                       (f"**{_pct(rate)}**" if label.startswith("as") else _pct(rate)))
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    return lines


def prediction_cells() -> list[dict]:
    """The prediction interval's table (test_predictive_simulation.prediction_coverage, its seeds)."""
    cells = []
    for k in predictive.PREDICTION_KS:
        for tau in predictive.PREDICTION_TAUS:
            seed = predictive.prediction_seed(k, tau)
            coverage, naive, width = predictive.prediction_coverage(k, tau, predictive.PREDICTION_REPLICATES, seed)
            cells.append({"k": k, "tau": tau, "replicates": predictive.PREDICTION_REPLICATES, "seed": seed,
                          "coverage": float(coverage), "naive": float(naive), "width": float(width)})
    return cells


def prediction_table(cells: list[dict]) -> list[str]:
    """docs/statistics.md's rows of the prediction interval's table: per k, each tau's coverage (naive), mean width."""
    taus = sorted({c["tau"] for c in cells})
    lines = []
    for k in sorted({c["k"] for c in cells}):
        row = [next(c for c in cells if c["k"] == k and c["tau"] == tau) for tau in taus]
        lines.append(f"| {k} | " + " | ".join(f"**{_pct(c['coverage'])}** ({_pct(c['naive'])}), {c['width']:.3f}"
                                              for c in row) + " |")
    return lines


# a small slice of each section, rerun live by test_claims_table.py: (section, parameters, replicates)
PROBES = (("pooled", (10, 0.04, "two-point", "rescue"), 40), ("best", (30, 12, "rescue"), 40),
          ("prediction", (4, 0.02), 300))


def probe(section: str, parameters: tuple, replicates: int) -> dict:
    if section == "pooled":
        return cell(*parameters, replicates, seed_of(*parameters))
    if section == "best":
        return simulate_best.cell(*parameters, replicates, simulate_best.seed_of(*parameters))
    k, tau = parameters
    coverage, naive, width = predictive.prediction_coverage(k, tau, replicates, predictive.prediction_seed(k, tau))
    return {"coverage": float(coverage), "naive": float(naive), "width": float(width)}


SECTIONS = ("pooled", "best", "prediction", "verdicts")


def run(section: str, replicates: int) -> list:
    if section == "pooled":
        return [cell(*parameters, replicates, seed_of(*parameters)) for parameters in grid()]
    if section == "best":
        return [simulate_best.cell(*parameters, simulate_best.REPLICATES, simulate_best.seed_of(*parameters))
                for parameters in simulate_best.grid()]
    if section == "prediction":
        return prediction_cells()
    return [[row, bool(holds)] for row, holds in predictive.docs_tables()]  # the per-dataset equivalence and best rows


def main(replicates: int = REPLICATES, sections=SECTIONS) -> None:
    """Run `sections` (all by default; the others are kept from the stored file) and write claims_table.json."""
    stored = json.loads(TABLE.read_text()) if TABLE.exists() else {}
    table = {"alpha": ALPHA, "margin": MARGIN}
    for section in SECTIONS:
        key = "cells" if section == "pooled" else section
        if section in sections:
            table[key] = run(section, replicates)
            print(section, json.dumps(table[key]), file=sys.stderr, flush=True)
        else:
            table[key] = stored[key]
    table["probes"] = [[section, list(parameters), replicates, probe(section, parameters, replicates)]
                       for section, parameters, replicates in PROBES]
    TABLE.write_text(json.dumps(table, indent=1) + "\n")
    print("\n".join(doc_tables(table) + [""] + simulate_best.doc_table(table["best"]) + [""]
                    + prediction_table(table["prediction"]) + [""] + [row for row, _ in table["verdicts"]]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("replicates", nargs="?", type=int, default=REPLICATES, help="per pooled cell")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS,
                        help="rerun these sections, keep the others from claims_table.json")
    arguments = parser.parse_args()
    main(arguments.replicates, arguments.only)
