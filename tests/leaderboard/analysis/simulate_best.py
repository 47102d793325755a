"""Known-truth simulation of the best set (ranks.best_set) where a pair's per-query differences are skewed at few
queries (docs/statistics.md, "Who could be #1"): `python -m tests.leaderboard.analysis.simulate_claims` runs these
cells with the pooled ones and stores them in claims_table.json; test_claims_table.py checks the doc's table against
it and reruns a small slice.

A cell: `models` models (4 or 12) on one dataset of `queries` queries (30 or 100), per-query values clipped to [0, 1]
with a query difficulty shared by all models. Model 0 is the true best, `GAP` standard errors of a pair's difference
above model 1 and model 2 GAP SE below model 1 (the near-tie of best_set_coverage in test_predictive_simulation.py), then
models 3 and 4 SE below and the rest far behind. Shapes of the best's per-query values:

- "clipped": as in test_predictive_simulation.py (noise SD 0.2): differences close to normal;
- "rescue": model 0 alone answers 5% of the queries (0.6 there, every other model 0) and is correspondingly worse on
  the others, so its lead is all in a few queries: its differences with each rival have a long tail on one side;
- "skewed": model 0's value on each query gets a mean-0 log-normal gain (SD 0.1, skewness 6.2).

Two rules, each at alpha / (models - 1) one-sided per pair (Bonferroni over the comparisons with a model): the paired
t-test (the site's) and a seeded Monte Carlo sign-flip test of the pair's differences (p = (1 + flips at least as
large) / (1 + FLIPS), a valid p-value). Measured: how often the set holds model 0, its mean size, and for "rescue"
the share of replicates in which none of the rescued queries is drawn, and the coverage among the others."""

from __future__ import annotations

import numpy as np
from scipy import optimize
from threadpoolctl import threadpool_limits

from leaderboard.analysis.effects import spread
from leaderboard.analysis.ranks import best_set

ALPHA = 0.05
GAP = 0.05  # SE of a pair's difference between the true best and the second, and between the second and the third
QUERIES = (30, 100)
MODELS = (4, 12)
SHAPES = ("clipped", "rescue", "skewed")
RULES = ("t", "sign-flip")
NOISE = {"clipped": 0.2, "rescue": 0.05, "skewed": 0.05}  # a model's own per-query noise SD
RESCUED = 0.05  # share of the queries only model 0 answers ("rescue")
RESCUE_VALUE = 0.6
SKEW_SD = 0.1  # SD of model 0's log-normal gain ("skewed")
FLIPS = 4000  # sign-flip draws per test: the smallest p is 1 / 4001, below alpha / 11 = 0.0045
REPLICATES = 400


def _values(rng, base: np.ndarray, queries: int, shape: str) -> tuple[np.ndarray, int]:
    """(models, queries) per-query values and the number of rescued queries drawn."""
    difficulty = rng.normal(0, 0.25, queries)
    x = np.clip(base[:, None] + difficulty[None, :] + rng.normal(0, NOISE[shape], (base.size, queries)), 0, 1)
    rescued = 0
    if shape == "rescue":
        hard = rng.random(queries) < RESCUED
        x[:, hard] = 0.0
        x[0, hard] = RESCUE_VALUE
        rescued = int(hard.sum())
    elif shape == "skewed":
        gain = (rng.lognormal(0, 1, queries) - np.exp(0.5)) / np.sqrt((np.e - 1) * np.e)
        x[0] = x[0] + SKEW_SD * gain  # not clipped: the gain keeps its shape (values may leave [0, 1] a little)
    return x, rescued


def _means(base: np.ndarray, shape: str, samples: int = 200_000) -> np.ndarray:
    """True means, by a large sample with a fixed seed (the same for every call, so the bisection below is smooth)."""
    x, _ = _values(np.random.default_rng(0), base, samples, shape)
    return x.mean(axis=1)


def truth(queries: int, models: int, shape: str) -> np.ndarray:
    """The models' base levels: model 0 GAP SE above model 1 in true mean, model 2 GAP SE below it, then models 3
    and 4 SE below model 1 and the rest 2 SE apart far behind (the first `models` of that list)."""
    se = NOISE[shape] * np.sqrt(2 / queries)  # the SE of a pair's difference of means, roughly
    base = np.r_[0.5 + GAP * se, 0.5, 0.5 - GAP * se, 0.5 - 3 * se, 0.5 - 4 * se,
                 0.4 - np.arange(7) * 2 * se][:models]
    if shape == "rescue":  # model 0 worse on the answered queries, by what it gains on the rescued ones
        target = _means(base, shape)[1] + GAP * se

        def lead(level: float) -> float:
            trial = base.copy()
            trial[0] = level
            return float(_means(trial[:2], shape)[0] - target)

        base[0] = optimize.brentq(lead, 0.0, 1.0, xtol=1e-6)
    return base


def _signflip_best(x: np.ndarray, rng, alpha: float) -> np.ndarray:
    """best_set's rule with a Monte Carlo sign-flip test of each pair (j above i in mean) at alpha / (models - 1)."""
    models, queries = x.shape
    means = x.mean(axis=1)
    signs = rng.integers(0, 2, size=(FLIPS, queries)).astype(np.float64) * 2 - 1
    below, above = np.nonzero(means[None, :] > means[:, None])  # pairs (i, j): j above i in mean
    d = x[above] - x[below]  # (pairs, queries)
    with threadpool_limits(limits=1, user_api="blas"):  # one small product: threads only wait on a busy machine
        flipped = signs @ d.T
    count = (flipped >= d.sum(axis=1)[None, :] - 1e-12).sum(axis=0)
    beaten = (1 + count) / (1 + FLIPS) < alpha / (models - 1)
    keep = np.ones(models, dtype=bool)
    keep[below[beaten]] = False
    return keep


def cell(queries: int, models: int, shape: str, replicates: int, seed: int) -> dict:
    base = truth(queries, models, shape)
    rng = np.random.default_rng(seed)
    held = dict.fromkeys(RULES, 0)
    sizes = dict.fromkeys(RULES, 0)
    none_rescued = held_when_rescued = 0
    for _ in range(replicates):
        x, rescued = _values(rng, base, queries, shape)
        diff, sd = spread(x)
        sets = {"t": best_set(x.mean(axis=1), diff, sd / np.sqrt(queries), queries - 1, ALPHA),
                "sign-flip": _signflip_best(x, rng, ALPHA)}
        for rule, keep in sets.items():
            held[rule] += bool(keep[0])
            sizes[rule] += int(keep.sum())
        none_rescued += rescued == 0
        held_when_rescued += rescued > 0 and bool(sets["t"][0])
    found = {"queries": queries, "models": models, "shape": shape, "replicates": replicates, "seed": seed,
             "coverage": {rule: held[rule] / replicates for rule in RULES},
             "size": {rule: sizes[rule] / replicates for rule in RULES}}
    if shape == "rescue":
        found["none_rescued"] = none_rescued / replicates
        found["coverage_when_rescued"] = held_when_rescued / max(replicates - none_rescued, 1)
    return found


def grid() -> list[tuple[int, int, str]]:
    return [(queries, models, shape) for shape in SHAPES for models in MODELS for queries in QUERIES]


def seed_of(queries: int, models: int, shape: str) -> int:
    return 46_500_000 + 1000 * queries + 10 * models + SHAPES.index(shape)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def doc_table(cells: list[dict]) -> list[str]:
    """docs/statistics.md's table: per shape, models and queries, each rule's coverage and mean size; for "rescue"
    the share of replicates without a rescued query and the t-test's coverage among the others."""
    lines = ["| per-query values | models | queries | holds the best: t (sign-flip) | mean size: t (sign-flip) "
             "| no rescued query drawn | t holds it when one is |", "|---|---|---|---|---|---|---|"]
    for c in cells:
        rescue = (f"{_pct(c['none_rescued'])} | {_pct(c['coverage_when_rescued'])}" if c["shape"] == "rescue"
                  else "– | –")
        lines.append(f"| {c['shape']} | {c['models']} | {c['queries']} | **{_pct(c['coverage']['t'])}** "
                     f"({_pct(c['coverage']['sign-flip'])}) | {c['size']['t']:.2f} ({c['size']['sign-flip']:.2f}) "
                     f"| {rescue} |")
    return lines
