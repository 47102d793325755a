"""Forged score samples against the sample checks: which are rejected, and how far each moves the prediction.

    python benchmarks/sample_attacks.py results/*/beir__scifact.json

For every result file given (with its qrels under ../shared/data/<dataset id>/qrels/), each manipulation of the
samples below the ranking's last score is applied to every query; the line says whether `verify_result` rejects
it (and why) and how far it moves the predicted R@100 and R@1000 at 10 million documents (fixed-relevant growth,
the site's per-query model). The method page quotes these figures (leaderboard/web/views/method.py).
"""
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.analysis.predictions import predict_result
from leaderboard.submissions.loaded import to_loaded
from leaderboard.submissions.verify import verify_result


def attacked(result, change):
    run, s = result.run, result.score_samples
    qs = {}
    for row, qid in enumerate(result.query_ids):
        q = s.queries[qid]
        a, b = run.offsets[row], run.offsets[row + 1]
        t = float(run.scores[b - 1]) if b > a else -np.inf
        qs[qid] = change(q, t)
    return replace(result, score_samples=replace(s, queries=qs))

def drop_rel(q, t):
    keep = q.relevant[q.relevant > t]
    return replace(q, relevant=keep, n_relevant=keep.size, n_nonrelevant=q.n_nonrelevant + q.n_relevant - keep.size)
def shift(q, t):
    x = q.nonrelevant
    return replace(q, nonrelevant=np.sort(np.where(x <= t, x - 1000, x)))
def drop_and_shift(q, t):
    return shift(drop_rel(q, t), t)
def collapse(q, t):
    x = q.nonrelevant
    below = x <= t
    return replace(q, nonrelevant=np.sort(np.where(below, x[below].min() if below.any() else 0, x)))
def shift_deep(q, t):  # evasive: keep the window nearest the cut (the whole ranked range below t), shift the rest
    x = q.nonrelevant
    return replace(q, nonrelevant=np.sort(np.where(x < t - (x.max() - t), x - 1000, x)))
def collapse_deep(q, t):
    x = q.nonrelevant
    deep = x < t - (x.max() - t)
    return replace(q, nonrelevant=np.sort(np.where(deep, x[deep].min() if deep.any() else 0, x)))

def thinned(fraction):
    def thin(q, t):
        x = q.nonrelevant
        width = x.max() - t
        inside = np.flatnonzero((x <= t) & (x >= t - width))
        moved = np.zeros(x.size, dtype=bool)
        moved[inside[np.random.default_rng(0).random(inside.size) < fraction]] = True
        moved |= x < t - width
        return replace(q, nonrelevant=np.sort(np.where(moved, x.min() - 1000, x)))
    return thin

def thin_window(q, t):  # evasive: move half of the sample in the widest window far down, and everything below it
    x = q.nonrelevant
    width = x.max() - t
    inside = np.flatnonzero((x <= t) & (x >= t - width))
    moved = np.zeros(x.size, dtype=bool)
    moved[inside[::2]] = True
    moved |= x < t - width
    return replace(q, nonrelevant=np.sort(np.where(moved, x.min() - 1000, x)))

ATTACKS = {"thin window 10%": thinned(0.1), "thin window 25%": thinned(0.25), "thin window 40%": thinned(0.4), "honest": lambda q, t: q, "drop relevant below + shift": drop_and_shift, "drop relevant below": drop_rel,
           "collapse below": collapse, "shift below": shift, "shift beyond window": shift_deep,
           "collapse beyond window": collapse_deep}

def r_at(result, k=100, size=1e7):
    p = predict_result(to_loaded("x", result, result.query_ids, {}, False))
    if p.recall is None:
        return None
    return p.value(size, k)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"

for path in sys.argv[1:]:
    r = read_result(Path(path))
    ds = r.dataset.id.split("/")
    q = read_qrels(SHARED/ds[0]/ds[1]/"qrels"/f"{r.dataset.split}.tsv")
    base = {k: r_at(r, k) for k in (100, 1000)}
    for name, change in ATTACKS.items():
        a = attacked(r, change)
        v = verify_result(a, q)
        vals = {k: r_at(a, k) for k in (100, 1000)}
        moved = " ".join(f"R@{k} {vals[k]:.4f} ({(vals[k]/base[k]-1)*100:+.0f}%)" for k in vals)
        print(f"{Path(path).parent.name:40s} {name:28s} {moved}  {'REJECTED: ' + v.problems[0][:110] if v.problems else 'passes'}")
