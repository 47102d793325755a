"""The method page: trust (re-scoring, score samples, claims below the stored depth, reproduction), the statistics
and how recall at scale is predicted, with its measured error (`build`).
"""

from __future__ import annotations

from leaderboard.analysis import predictions
from leaderboard.analysis.aggregate import Leaderboard
from leaderboard.analysis.predictions import Evidence
from leaderboard.analysis.scale import GROWTHS, MODES
from leaderboard.analysis.scale_query import MIN_TAIL, TAIL_FRACTION
from leaderboard.submissions.reproduce import RELATIVE_TOLERANCE
from leaderboard.submissions.sample_checks import DENSITY_RATIO, IMPLAUSIBLE, SCORE_TOLERANCE
from leaderboard.submissions.verify import TOLERANCE
from leaderboard.web.contexts import EvidenceRow, EvidenceSummary, EvidenceVariant, MethodContext, Page
from leaderboard.web.views.ranks import statistics_method
from leaderboard.web.views.scale import COLUMN_LABEL, size_label


def build(board: Leaderboard, evidence: Evidence) -> MethodContext:
    """The method page: what "verified" means, the statistics, and how recall at scale is predicted with its measured
    error (leaderboard/analysis/scale_evidence.json)."""
    used = board.settings.scale_mode
    ks = sorted({int(k) for row in evidence.rows for k in row.measured})
    known = [m for m in MODES if any(m in row.errors or m in row.cannot_predict for row in evidence.rows)]

    def variants(errors, reasons) -> tuple[EvidenceVariant, ...]:
        return tuple(EvidenceVariant(name, name == used, tuple((errors.get(name) or {}).get(str(k)) for k in ks),
                                     reasons.get(name) if errors.get(name) is None else None)
                     for name in known)

    rows = tuple(EvidenceRow(row.dataset, row.model, row.growth, tuple(row.measured.get(str(k)) for k in ks),
                             row.dropped, variants(row.errors, row.cannot_predict)) for row in evidence.rows)
    summary = tuple(EvidenceSummary(growth, variants(evidence.summary[growth], {}))
                    for growth in GROWTHS if growth in evidence.summary)
    by_fraction = tuple(
        EvidenceSummary(growth, variants({m: by[m].get(fraction) for m in by}, {}), float(fraction))
        for growth in GROWTHS if (by := evidence.by_fraction.get(growth))
        for fraction in sorted({f for errors in by.values() for f in errors}, key=float))
    found = list(board.predictions.values())
    return MethodContext(
        page=Page("method.html", "Method: trust and recall at scale", "", "method"),
        mode=used, growth=board.settings.scale_growth, growths=GROWTHS, tail_fraction=TAIL_FRACTION,
        min_tail=MIN_TAIL, size_labels=tuple(size_label(size) for size in predictions.CHART_SIZES),
        ks=predictions.CHART_KS, column=COLUMN_LABEL, predictions=sum(p.recall is not None for p in found),
        cannot_predict=sum(p.recall is None for p in found), dropped_queries=sum(p.n_dropped for p in found),
        evidence_description=evidence.description, evidence_ks=tuple(ks), evidence=rows, summary=summary,
        by_fraction=by_fraction, verification=verification_method(), statistics=statistics_method(board),
    )

def verification_method() -> tuple[str, ...]:
    """The rule of leaderboard/submissions/verify.py, in words, with its thresholds."""
    return (
        "A result file may store the ranking its model produced (field run: for every query, the retrieved "
        "documents and their scores in trec_eval order, down to a stored depth). The site re-scores that ranking "
        "against the official judgments of the dataset and compares every query's value with the submitted one.",
        "A metric is determined by the stored ranking when every query's stored part decides it: a metric with a "
        "cutoff k (nDCG@10, R@100, ...) needs k at most the stored depth, or the query's whole ranking stored "
        "(fewer documents than the depth, or a depth reaching settings.top_k); a metric without a cutoff (AP, RR, "
        "Rprec, Bpref, ARP) needs every query's whole ranking.",
        f"Every determined metric is re-scored for every query and must match the submitted value within "
        f"{TOLERANCE:g}; any difference rejects the whole file, so it never reaches the site.",
        "Metrics the stored ranking does not determine (R@1000 or AP beside a ranking stored to depth 100, "
        "nDCG@10 beside one stored to depth 5) cannot be checked: they are shown, but marked * as not re-scored "
        "(self-reported), and the result is never ranked on them.",
        "Score samples (used for the recall-at-scale prediction) are checked against the stored ranking and the "
        "judgments: each query's sample must hold the score of every judged relevant document (or its file names "
        "those the corpus lacks, allowed only where the dataset's judgments are known to name missing documents, "
        "and each named document must be judged relevant, not in the stored ranking, and, where the corpus is at "
        "hand, not in it); every sampled score above the ranking's last score must be the score of a ranked document "
        f"of the same relevance (within {SCORE_TOLERANCE:g} relative, plus the quantisation step for non-relevant "
        "scores), and every relevant document ranked above it must be there, since every document the ranking "
        "leaves out scores at most that last score; the number of sampled non-relevant scores above it must be "
        "plausible for a uniform sample (hypergeometric tail per query, and over the whole file on both sides); "
        "and just below it the sample must hold at least "
        f"{DENSITY_RATIO:g} times as many scores per unit of score as the ranking holds just above it, in windows "
        "as wide as the gap to the farthest, the 2nd, 4th and 8th farthest ranked non-relevant document (score "
        "densities fall towards the top of a ranking; the lowest such ratio measured on honest results of BM25, "
        "SPLADE and a dense model on SciFact and the three classic collections is 0.93). Deeper down, where the "
        "file keeps the ranks of the judged documents ranked below its stored depth (run.below), the sample must "
        "hold at least as many scores at or above the deepest one's score as its rank implies: a test that needs "
        "no assumption about any distribution. Every count is tested with a bound under which an honest "
        f"file is rejected with probability at most {IMPLAUSIBLE:g}, and every window is measured in the "
        "ranking's own scores, so the checks do not depend on the scale of a model's scores. A contradiction "
        "rejects the file.",
        "What the checks catch, measured on the repository's 16 results (BM25 with two settings, SPLADE-tiny and "
        "all-MiniLM-L6-v2 on SciFact, Cranfield, CISI and CACM), with the predicted R@100 at 10 million documents "
        "each manipulation gives: always caught are dropping the relevant scores below the last ranked score "
        "(+5 to +232%), moving the sample below it down (−100 to +52%) and collapsing it onto its minimum "
        "(−45 to +42%); moving a quarter or more of the sample within the widest window away is caught in 14 of "
        "16 files (the two that pass lower their own prediction, −21 to −26%). What the checks cannot see: moving "
        "about a tenth of that sample away (6 of 16 files pass, −27 to +15%), and changes below the widest window "
        "(moved down: 13 of 16 pass, no change to the prediction; collapsed onto its minimum: all 16 pass, −23 to "
        "+23%). So a result that passes every check may still have moved its prediction by up to about a fifth "
        "(+23% at most in these measurements); the prediction is a model-based estimate with that caveat. Where the "
        "samples cannot be checked (no stored ranking, or no judgments to check them against), the result is not "
        "re-scored and its prediction is marked * like a metric not re-scored, on every page and download that shows "
        "it.",
        "Below its stored depth a file keeps only the ranks and scores of its judged documents and each "
        "ranking's length (run.below); the deep metrics (AP, R@1000, nDCG@1000, Judged@1000, ...) are re-scored "
        "from those claims, and the score samples of the same file must agree with them: every relevant document "
        "claimed there must have one of the sample's relevant scores; the relevant scores no ranked document takes "
        "must lie below every ranked score; a document claimed at rank r with score s has at most r − 1 documents "
        "above it, so the sample may hold no more scores above s than a hypergeometric draw allows (each claim, "
        "and the deepest relevant claim of every query summed over the file); a ranking claimed shorter than "
        "settings.top_k holds every document scoring above the corpus's lowest score, which the sample counts; no "
        "ranking is longer than top_k. Each test is bounded so that an honest file is refused with probability at "
        f"most {IMPLAUSIBLE:g}. Measured with benchmarks/deep_attacks.py on fresh depth-1,000 BM25 runs on "
        "SciFact, CACM, CISI and Cranfield (every honest one re-scored): claiming every relevant document the run "
        "never retrieved at ranks 101 and beyond (CACM: R@1000 0.887 → 1.000, AP 0.327 → 0.331, nDCG@1000 "
        "0.604 → 0.637) is refused in all four whatever scores it is given, and so is shortening the rankings "
        "(Judged@1000 up to ×10). What can still move: a document may be claimed higher than it lies by up to "
        "about the sample's error, 6·√(r·M/m) ranks at rank r for m sampled of M documents (relevant documents "
        "lying up to 100 ranks beyond the ranking's end, claimed inside it, passed on CACM: R@1000 0.887 → 0.947; "
        "up to 250 on SciFact: 0.977 → 0.983; none on CISI and Cranfield, whose samples hold every document; on "
        "MS MARCO's 8.8 million passages with 2,000 samples a query, about 12,600 ranks at rank 1,000, so there "
        "the check says little); and a forger who rewrites the samples' relevant scores together with the ranks "
        "leaves nothing in the file to contradict where the sample is partial (SciFact and CACM: R@1000 → 1.000 "
        "passed): the deep metrics are as trustworthy as the samples' relevant scores below the stored ranking, "
        "which only running the model again checks. A file without "
        "score samples (a run evaluated from a file) has nothing to check these claims against: its deep metrics "
        "are re-scored, but rest on claimed ranks, marked †: the result is never ranked on them, and they never "
        "demote its other metrics.",
        "Absence claims (score_samples.absent_ids: judged relevant documents the corpus lacks, allowed where the "
        "dataset's judgments are known to name such documents) are looked up in the corpus wherever one is at "
        "hand: irboard validate, in the results workflow too, fetches the corpus of such a registered dataset "
        "(ArguAna) into its cache as it fetches judgments, and says in its log which files' claims no corpus "
        "checked. Checked or not, the recall-at-scale prediction counts every claimed-absent document as a miss "
        "at every size, as trec_eval's R@k does, and a query whose relevant documents are all claimed absent as "
        "recall 0: a claim can only lower a prediction.",
        "Trust is per metric: a result is ranked on every metric that was re-scored and matched (its score samples "
        "agreeing with its ranking and its claims below the stored depth), whatever its other metrics rest on. A "
        "dataset page ranks a result whenever its main metric was re-scored (rank ranges, best sets); a group ranks a "
        "model on its mean (mean ranks, rank ranges) when it is ranked on every dataset of the group. The others are "
        "listed apart, after them, in every table and download; a value resting on claimed ranks is marked † on "
        "its own and listed in the downloads' column claimed, one not re-scored * and in column unverified. A "
        "value that re-scores to anything else than the file states rejects the whole file. irboard evaluate "
        "says each metric's tier before anything is validated, with the one step that reaches the next (for a "
        "claim: score samples, which irboard evaluate --model stores), and irboard validate, irboard build and "
        "the pull request's summary say it in the same words.",
        *TRUST_LADDER,
    )


TRUST_LADDER = (
    "The trust ladder, per metric; beside every result the tier of its main metric, chosen with the Trust filter: "
    "self-reported (not re-scored: the value is as the submitter's file states it), rests on claimed ranks "
    "(re-scored from ranks below the stored depth that no score samples check), re-scored (recomputed from the "
    "stored ranking against the official judgments, as above: the numbers follow from the ranking, which says "
    "nothing of where the ranking came from) and reproduced (re-scored, and CI ran the model again from the "
    "artifact the result declares, model.artifact: irboard's BM25 with its settings, or a hub, packaged or shared "
    "model pinned to the revision of its weights, on the dataset, and obtained the stored ranking: the same "
    f"documents in the same order at the stored depth, the same judged documents at the same ranks below it, every "
    f"score within {RELATIVE_TOLERANCE:g} relative, and the same parameter count and dimension). A model stands "
    "where its least trusted result stands.",
    "Reproduction runs in CI after every merge that changes results, for corpora of at most 100,000 documents, "
    "and on a maintainer's request for the rest (.github/workflows/reproduce.yml, run with main's code, never a pull "
    "request's). Its records (reproductions/) name the exact bytes of each result: a pull request cannot add one "
    "without a maintainer's approval, a record never lapses because other files change, and a result changed by "
    "one byte is re-scored only until it is reproduced again (docs/reproduction.md).",
    "Costs are measured only when irboard measured them: the parameter count and dimension it read from the model "
    "it loaded, and the search rate it timed, while reproducing the result in CI. Everything else (the model block "
    "of a result file, flags such as --parameters, timings recorded on a submitter's machine) is claimed, and "
    "marked claimed wherever it is shown: the model pages, the home table, the tied-for-best pages (whose "
    "'measured by irboard only' views leave claimed costs out) and the downloads.",
)
