"""Measure names in ir_measures spelling (`nDCG@10`, `R@100`, `nDCG(dcg='exp-log2')@10`), parsed and printed."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from evaluator.errors import UnknownNameError, closest_names, did_you_mean


@dataclass(frozen=True)
class MeasureKind:
    """How one family of measures may be written."""

    name: str
    cutoff: str  # "required", "optional" or "none"
    bounded: bool = True  # value always in [0, 1]
    description: str = ""


KINDS: dict[str, MeasureKind] = {
    kind.name: kind
    for kind in (
        MeasureKind("nDCG", "optional", description="normalised discounted cumulative gain, linear gain"),
        MeasureKind("R", "required", description="recall: relevant retrieved in the top k / all relevant"),
        MeasureKind("P", "required", description="precision: relevant in the top k / k"),
        MeasureKind("AP", "optional", description="average precision"),
        MeasureKind("RR", "optional", description="reciprocal rank of the first relevant document"),
        MeasureKind("Rprec", "none", description="precision at rank R, R = number of relevant documents"),
        MeasureKind("Bpref", "none", description="binary preference"),
        MeasureKind("Success", "required", description="1 if a relevant document is in the top k"),
        MeasureKind("Judged", "required", description="fraction of the top k that is judged"),
        MeasureKind("ARP", "none", bounded=False, description="average rank of the retrieved relevant documents"),
    )
}

# The parameters accepted, as ir_measures writes them: nDCG's exponential gain (2^rel - 1), and the condensed
# list of trec_eval -J (unjudged documents removed from the ranking before scoring) for nDCG, P and AP.
EXP_GAIN = "dcg='exp-log2'"
JUDGED_ONLY = "judged_only=True"
JUDGED_ONLY_KINDS = ("nDCG", "P", "AP")
# Lenient on purpose (spaces, other quotes, leading zeros) so that a near miss is told its canonical spelling.
_PATTERN = re.compile(r"\s*(?P<kind>[A-Za-z]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[0-9]+))?\s*")
MAX_CUTOFF = 1_000_000


@dataclass(frozen=True, order=True)
class Measure:
    kind: str
    cutoff: int | None = None
    exp_gain: bool = False
    judged_only: bool = False  # scored on the condensed list: unjudged documents removed first (trec_eval -J)

    def __str__(self) -> str:
        written = [p for p, on in ((EXP_GAIN, self.exp_gain), (JUDGED_ONLY, self.judged_only)) if on]
        params = f"({','.join(written)})" if written else ""
        cutoff = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.kind}{params}{cutoff}"

    @property
    def bounded(self) -> bool:
        return KINDS[self.kind].bounded


def valid_forms() -> str:
    forms = []
    for kind in KINDS.values():
        forms.append({"required": f"{kind.name}@k", "optional": f"{kind.name}[@k]", "none": kind.name}[kind.cutoff])
    forms.append(f"nDCG({EXP_GAIN})[@k]")
    forms.append(f"nDCG|P|AP({JUDGED_ONLY})[@k]")
    return ", ".join(forms)


# Spellings of other tools, used only to suggest the irboard name.
_ALIASES = {"recall": "R", "precision": "P", "map": "AP", "mrr": "RR", "ndcg_cut": "nDCG", "recip_rank": "RR",
            "success": "Success", "judged": "Judged", "r-prec": "Rprec", "r_prec": "Rprec"}


def _suggest(name: str) -> str | None:
    """The closest valid spelling: same letters in another case first, then the nearest kind name."""
    head, sep, tail = name.partition("@")
    by_case = {kind.lower(): kind for kind in KINDS} | _ALIASES
    if head.lower() in by_case:
        return by_case[head.lower()] + sep + tail
    guess = closest_names(head, KINDS, cutoff=0.5)
    return guess[0] + sep + tail if guess else None


@functools.lru_cache(maxsize=4096)  # readers and the site parse the same 30 names in tens of thousands of files
def parse_measure(name: str) -> Measure:
    """Parse one measure name; unknown or malformed names raise UnknownNameError with the valid forms.

    Only the canonical spelling is accepted (`str(parse_measure(name)) == name`): one metric has one name, as a
    JSON key as much as on the command line."""
    match = _PATTERN.fullmatch(name) if isinstance(name, str) else None
    kind = KINDS.get(match["kind"]) if match else None
    if match is None or kind is None:
        suggestion = _suggest(str(name).strip())
        hint = did_you_mean([suggestion] if suggestion else [])
        raise UnknownNameError(f"unknown metric {name!r}; valid forms: {valid_forms()}.{hint}")
    params, cutoff = match["params"], match["cutoff"]
    given = [] if params is None else [p for p in params.replace('"', "'").replace(" ", "").split(",") if p]
    exp_gain, judged_only = EXP_GAIN in given, JUDGED_ONLY in given
    if any(p not in (EXP_GAIN, JUDGED_ONLY) for p in given) or (exp_gain and kind.name != "nDCG") or (
            judged_only and kind.name not in JUDGED_ONLY_KINDS):
        raise UnknownNameError(f"metric {name!r}: the parameters supported are nDCG({EXP_GAIN}) and "
                               f"{JUDGED_ONLY} for {', '.join(JUDGED_ONLY_KINDS)}, e.g. 'nDCG({JUDGED_ONLY})@10'")
    if cutoff is None and kind.cutoff == "required":
        raise UnknownNameError(f"metric {name!r} needs a cutoff, e.g. '{kind.name}@10'")
    if cutoff is not None and kind.cutoff == "none":
        raise UnknownNameError(f"metric {name!r} takes no cutoff; write '{kind.name}'")
    if cutoff is not None and not (len(cutoff) <= 7 and 1 <= int(cutoff) <= MAX_CUTOFF):
        raise UnknownNameError(f"metric {name!r}: the cutoff must be between 1 and {MAX_CUTOFF:,}")
    measure = Measure(kind.name, int(cutoff) if cutoff is not None else None, exp_gain, judged_only)
    if str(measure) != name:
        raise UnknownNameError(f"metric {name!r} is not written canonically; write '{measure}'")
    return measure


def parse_measures(names: str | list[str]) -> list[Measure]:
    """Parse a comma-separated list (CLI; spaces around commas are fine) or a list of names, keeping order and
    dropping repeats."""
    items = [item.strip() for item in names.split(",")] if isinstance(names, str) else names
    measures: list[Measure] = []
    for item in items:
        if item.strip() and (measure := parse_measure(item)) not in measures:
            measures.append(measure)
    if not measures:
        raise UnknownNameError(f"no metric given; valid forms: {valid_forms()}")
    return measures


# The default set holds only metrics that a ranking of depth 100 determines, so that every value
# `irboard evaluate` writes can be re-scored from the ranking stored in the result (deeper or uncut metrics
# such as R@1000 or AP can be asked for with --metrics; the result then also keeps `run.below`, the judged
# documents' ranks below depth 100, from which they are re-scored).
_CUTOFFS = (1, 3, 5, 10, 20, 100)
DEFAULT_MEASURES: tuple[Measure, ...] = (
    *(Measure("nDCG", k) for k in _CUTOFFS),
    *(Measure("R", k) for k in _CUTOFFS),
    *(Measure("P", k) for k in _CUTOFFS),
    *(Measure("AP", k) for k in _CUTOFFS),
    Measure("RR", 10),
    Measure("RR", 100),
    *(Measure("Success", k) for k in (1, 5, 10)),
    Measure("Judged", 10),
)
