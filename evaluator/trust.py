"""Trust per metric: the tier each metric of a result gets when it is validated, and the words for it.

`irboard evaluate` says, before anything is validated, what `irboard validate`, `irboard build` and the pull
request's summary then say after, in the same sentences (`tier_lines`): one module of words, imported by the
evaluator and the leaderboard alike (the evaluator imports nothing above it). The rule itself is here too, so that
what evaluate announces is what re-scoring gives (`leaderboard.submissions.verify.verify_result` uses
`rescorable`):

- a metric the stored ranking determines is *re-scored* (recomputed against the official judgments and matching);
- a determined metric that reads ranks below the stored depth which no score sample of the file checks (a run
  evaluated from a file) *rests on claimed ranks*: shown with †, never ranked on;
- a metric the stored ranking does not determine (or a result without one) is *self-reported*;
- a re-scored metric (or one resting on claimed ranks: the re-run compares those ranks too) of a result CI ran
  again from its declared artifact, obtaining the stored ranking, is *reproduced*.

A result is ranked on every metric that was re-scored; a metric with a mismatch refuses the whole file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from evaluator.metrics import KINDS, Measure, parse_measure

SELF_REPORTED, CLAIMED, RESCORED, REPRODUCED = "self-reported", "rests on claimed ranks", "re-scored", "reproduced"
TIERS = (SELF_REPORTED, CLAIMED, RESCORED, REPRODUCED)  # the ladder, lowest first
RANKED_TIERS = (RESCORED, REPRODUCED)  # the tiers a result is ranked on

# How a metric resting on claimed ranks reaches "re-scored": score samples that check the ranks below the depth.
CLAIM_REMEDY = ("name the whole run file with `irboard split RESULT --run RUN --url-base URL --out-dir DIR` and "
                "upload it (docs/result-format.md, \"Deep metrics\"), or evaluate the model with `irboard evaluate "
                "--model`, which stores the score samples that check those ranks, or leave {them} out with --metrics")
UNDETERMINED_REMEDY = ("store a ranking that determines {them} (`irboard evaluate` keeps what each metric needs), "
                       "or leave {them} out with --metrics")
REPRODUCE_REMEDY = "from its declared artifact, docs/reproduction.md"
LISTED = 8  # metrics a sentence names; the rest are counted


def weakest(tiers: Iterable[str]) -> str:
    """The lowest of several tiers (a model's tier is that of its least trusted result)."""
    return min(tiers, key=TIERS.index, default=TIERS[0])


def tier_slug(tier: str) -> str:
    """The tier as one word, for a CSS class or a data attribute ("rests-on-claimed-ranks")."""
    return tier.replace(" ", "-")


def whole_rankings(result) -> np.ndarray:
    """Per query: is its whole ranking stored, or all that re-scoring needs of it (`run.below`)?"""
    run = result.run
    if run.depth >= result.settings.top_k or run.below is not None:
        return np.ones(len(result.query_ids), dtype=bool)
    return run.lengths < run.depth


def extends_below(result) -> np.ndarray:
    """Per query: does its ranking reach below the stored depth (a length longer than its stored entries)?"""
    run = result.run
    if run is None or run.below is None:
        return np.zeros(len(result.query_ids), dtype=bool)
    return run.below.totals > run.lengths


def deep_claims_checked(result) -> bool:
    """Can the score samples check every ranking's claims below the stored depth? Each query whose ranking reaches
    below it needs a sample of non-relevant scores (a file without samples checks nothing there)."""
    reach = extends_below(result)
    if not reach.any():
        return True
    samples = result.score_samples
    if samples is None:
        return False
    return all(samples.queries[q].nonrelevant.size > 0 and samples.queries[q].n_nonrelevant > 0
               for q in np.asarray(result.query_ids, dtype=object)[reach])


def deep_metric_names(result, names: Iterable[str]) -> list[str]:
    """Those of the metric `names` whose value reads a ranking below the stored depth (no cutoff, or a cutoff
    beyond it), when some ranking reaches below it; none otherwise."""
    if not extends_below(result).any():
        return []
    depth = result.run.depth
    return [name for name in names if (cutoff := parse_measure(name).cutoff) is None or cutoff > depth]


def rescorable(result, names: Iterable[str] | None = None) -> tuple[list[Measure], list[str], frozenset[str]]:
    """(the measures the stored ranking determines, the names of the others, those of the determined ones that rest
    on claimed ranks) among `names` (default: every metric the result reports)."""
    measures, others = [], []
    whole = whole_rankings(result).all() if result.run is not None else False
    for name in sorted(result.metrics if names is None else names):
        measure = parse_measure(name)
        if result.run is not None and (whole or (measure.cutoff is not None and measure.cutoff <= result.run.depth)):
            measures.append(measure)
        else:
            others.append(name)
    claimed = frozenset() if deep_claims_checked(result) else \
        frozenset(deep_metric_names(result, [str(m) for m in measures]))
    return measures, others, claimed


def tiers_of(metrics: Iterable[str], rescored: Iterable[str], claimed: Iterable[str] = (),
             reproduced: bool = False) -> dict[str, str]:
    """Each metric's tier: re-scored (`rescored`), resting on claimed ranks (`claimed`), else self-reported; the
    first two reproduced when CI reproduced the result."""
    rescored, claimed = set(rescored), set(claimed)
    return {name: (REPRODUCED if reproduced else RESCORED) if name in rescored else
            (REPRODUCED if reproduced else CLAIMED) if name in claimed else SELF_REPORTED for name in metrics}


def planned_tiers(result) -> dict[str, str]:
    """The tier each metric of `result` gets when `irboard validate` re-scores it against the same (official)
    judgments and every value matches."""
    measures, _, claimed = rescorable(result)
    return tiers_of(result.metrics, {str(m) for m in measures} - claimed, claimed)


def _names(metrics: list[str]) -> tuple[str, str, str]:
    """(the names joined, "it"/"them", "s"/""): the words agree with how many metrics there are."""
    one = len(metrics) == 1
    names = ", ".join(metrics[:LISTED]) + (f" and {len(metrics) - LISTED} more" if len(metrics) > LISTED else "")
    return names, "it" if one else "them", "s" if one else ""


def tier_sentence(tier: str, metrics: list[str]) -> str:
    """What one tier means for these metrics (named in the site's order: nDCG first, by cutoff), and the one step
    that reaches the next tier up."""
    names, them, s = _names(sorted(metrics, key=_order))
    if tier == REPRODUCED:
        return (f"{names} reproduced: re-scored, and CI obtained the stored ranking by running the declared artifact "
                f"again; ranked on {them}")
    if tier == RESCORED:
        return (f"{names} re-scored from the stored ranking against the official judgments: ranked on {them}; "
                f"reproduced once CI runs the model again ({REPRODUCE_REMEDY})")
    if tier == CLAIMED:
        return (f"{names} rest{s} on claimed ranks (re-scored from the judged documents' ranks below the stored depth, "
                f"which no score samples check): marked †, never ranked on, and the other metrics stay ranked; to "
                f"re-score {them}, {CLAIM_REMEDY.format(them=them)}")
    return (f"{names} self-reported (not determined by a stored ranking): never ranked on; to re-score {them}, "
            f"{UNDETERMINED_REMEDY.format(them=them)}")


def tier_lines(tiers: Mapping[str, str], below: str | None = None) -> list[str]:
    """One sentence per tier present (highest first); with `below`,
    only the tiers lower than that one."""
    by_tier: dict[str, list[str]] = {}
    for name, tier in tiers.items():
        by_tier.setdefault(tier, []).append(name)
    shown = [tier for tier in reversed(TIERS) if tier in by_tier
             and (below is None or TIERS.index(tier) < TIERS.index(below))]
    return [tier_sentence(tier, by_tier[tier]) for tier in shown]


def _order(name: str) -> tuple:
    measure = parse_measure(name)
    return (list(KINDS).index(measure.kind), measure.exp_gain, measure.cutoff or 0, name)
