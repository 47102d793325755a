"""How stable is a group's #1? Two checks of the ranking itself, beside the tests: split halves of the queries,
and each dataset left out.

- Split-half: each dataset's queries are split at random into two halves, and the group means are taken on one
  half; the share of splits in which the #1 of the full data is still #1 (and how often each other model is #1).
  Only the models in the group's confidence set for the best and the next ones by mean are followed (TOP models):
  a model further down is never #1 on half the queries in practice, and the check stays cheap at 1,000 models.
- Leave one dataset out: the group mean without each unit (datasets below one parent together), the other
  weights rescaled; which model is #1 then.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOP = 10
SPLITS = 200


@dataclass(frozen=True)
class Stability:
    leader: str  # #1 by group mean on all the data
    split_half: dict[str, float]  # model -> share of random half-splits in which it is #1 (followed models only)
    leave_one_out: dict[str, str]  # unit left out -> #1 without it


def group_stability(model_ids: list[str], dataset_scores: list[np.ndarray], weights: list[float], units: list[str],
                    seed: int = 0, splits: int = SPLITS) -> Stability | None:
    """`dataset_scores[k]`: (models, queries) per-query values of dataset k for `model_ids` (all of them ranked on
    the group), with weight weights[k] in the group mean and unit units[k]."""
    if not model_ids:
        return None
    weights_array = np.asarray(weights, dtype=np.float64)
    means = np.stack([scores.mean(axis=1) for scores in dataset_scores], axis=1)  # (models, datasets)
    overall = means @ weights_array
    order = np.argsort(-overall, kind="stable")
    leader = model_ids[int(order[0])]
    followed = order[:TOP]
    rng = np.random.default_rng(seed)
    wins = np.zeros(followed.size, dtype=np.int64)
    for _ in range(splits):
        half = np.zeros(followed.size)
        for scores, weight in zip(dataset_scores, weights_array, strict=True):
            n = scores.shape[1]
            if n < 2:
                half += weight * scores[followed].mean(axis=1)
                continue
            chosen = rng.permutation(n)[: n // 2]
            half += weight * scores[np.ix_(followed, chosen)].mean(axis=1)
        wins[int(np.argmax(half))] += 1
    split_half = {model_ids[int(i)]: float(w / splits) for i, w in zip(followed, wins, strict=True) if w}
    left_out = {}
    for unit in dict.fromkeys(units):
        keep = np.array([u != unit for u in units])
        if not keep.any():
            continue
        rest = means[:, keep] @ weights_array[keep] / weights_array[keep].sum()
        left_out[unit] = model_ids[int(np.argmax(rest))]
    return Stability(leader, split_half, left_out)
