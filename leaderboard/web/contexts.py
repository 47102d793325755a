"""The template contexts: typed, frozen records that templates only format (built in leaderboard/web/views/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from leaderboard.submissions.loaded import LoadedResult, ModelInfo


class _ClaimedRanks:
    """A value's check when it was re-scored from ranks claimed below the stored depth that no score sample checks
    (`LoadedResult.claimed_metrics`): false wherever a check is read as verified or not (downloads list the value as
    unverified); the pages give it its own mark (`render.score_cells`)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "CLAIMED_RANKS"


CLAIMED_RANKS = _ClaimedRanks()


def value_check(result: LoadedResult, metric: str) -> bool | _ClaimedRanks:
    """True: `metric` re-scored from the stored ranking (or reproduced); CLAIMED_RANKS: from ranks no sample
    checks; else False (self-reported)."""
    if metric in result.verified_metrics:
        return True
    if metric in result.claimed_metrics:  # a reproduction compared those ranks too (evaluator.trust)
        return True if result.reproduced else CLAIMED_RANKS
    return False


@dataclass(frozen=True)
class Page:
    path: str  # relative to the site root
    title: str
    root: str  # relative link prefix back to the site root ("" or "../")
    nav: str  # which navigation entry is current


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    json: str  # figure as script-safe JSON text
    models: int = 0  # > 0: one row per model, of this many; charts.js draws the top N of them (a control picks N)
    label: str = ""  # its name in a picker of charts (macros.chosen_figure), when not the title
    note: str = ""  # where its numbers are without JavaScript, when not in the page's table


@dataclass(frozen=True)
class Download:
    label: str
    href: str


@dataclass(frozen=True)
class Column:
    key: str
    dataset_id: str
    label: str
    title: str
    href: str
    metric: str
    language: str = ""  # set only in a multilingual group (its datasets have more than one language)


@dataclass(frozen=True)
class GroupHeader:
    name: str
    key: str
    columns: tuple[Column, ...]  # datasets of the group, in table order
    size: int


@dataclass(frozen=True)
class GroupCell:
    mean: float | None
    ci: tuple[float, float] | None
    mean_rank: float | None
    covered: int
    total: int
    rank_interval: tuple[int, int] | None = None  # 95% interval of the rank of the group mean
    band: int | None = None
    top: bool = False  # ★: could be #1 at 1 - alpha among all ranked models (the best set: web.best_data)
    # the rank range and the ★ (or its absence) hold over the hole bounds (analysis.group_robust); False: ◊
    rank_holds: bool = True
    best_holds: bool = True


@dataclass(frozen=True)
class DatasetCell:
    value: float | None
    best: bool
    trained: bool
    verified: bool = False  # the value was re-scored from the stored ranking
    judged: float | None = None  # mean Judged@k at the main metric's cutoff (None: not re-scored)


@dataclass(frozen=True)
class PredictedMean:
    """Home column: the model's predicted Recall@k at the column's corpus size, averaged over datasets."""

    mean: float | None  # only when every dataset has a prediction
    covered: int  # datasets with a prediction
    total: int
    checked: bool = True  # every prediction in it comes from score samples checked against a stored ranking


@dataclass(frozen=True)
class PredictionColumn:
    label: str  # says that it is a model-based prediction
    detail: str  # what the mean is taken over
    href: str  # the method's explanation and measured error
    error: float | None = None  # the method's measured mean |error| at this k and growth (None: not measured)
    short: str = ""  # the header's own words, with the error beside them (the label names the download column)


@dataclass(frozen=True)
class HomeRow:
    model_id: str
    href: str
    type: str
    parameters: int | None
    license: str
    open_weights: bool | None  # None: not stated
    zero_shot: bool | None  # None: training data not stated
    verified: str  # "all" (ranked), "some" or "none" (listed apart, unranked)
    is_baseline: bool
    groups: tuple[GroupCell, ...]
    cells: tuple[DatasetCell, ...]
    prediction: PredictedMean | None = None  # None when the site has no predictions
    tier: str = "self-reported"  # the tier of the model's least trusted result (evaluator.trust.TIERS)
    parameters_measured: bool = False  # read from the model by irboard in CI; else claimed by the result files


@dataclass(frozen=True)
class HomeContext:
    page: Page
    groups: tuple[GroupHeader, ...]  # mean columns (the last may be "All datasets")
    dataset_groups: tuple[GroupHeader, ...]  # dataset columns grouped
    rows: tuple[HomeRow, ...]
    types: tuple[str, ...]
    licenses: tuple[str, ...]
    parameter_bounds: tuple[int, ...]
    baseline_id: str | None
    baseline_href: str
    dataset_count: int
    tests: str
    methods: tuple[str, ...]
    order: str
    warnings: tuple[str, ...]
    downloads: tuple[Download, ...]
    prediction: PredictionColumn | None = None  # None: no result has score samples, no column
    column_count: int = 1  # columns of the table, for the row that labels the unverified group
    separability: tuple[SeparabilityRow, ...] = ()
    rank_summary: tuple[RankTable, ...] = ()  # group rank tables without rows: name, bands, size
    listed_rows: int = 50  # rows a page of the table shows (table.js) until asked for all
    html_rows: int = 50  # rows in the page's own HTML (without dataset columns); data/board.js holds the rest
    mean_column_count: int = 1  # columns of that HTML table
    column_choices: tuple[GroupHeader, ...] = ()  # the column chooser: each mean column with its datasets
    default_sort: str = ""  # the column key of the default order (table.js shows it as sorted)
    answer: str = ""  # which models are best on that column, and how sure
    best_level: str = "95%"  # the best set's confidence, 1 - alpha (analysis.best_words.level)
    languages: tuple[str, ...] = ()  # the languages of the multilingual groups' datasets, for the language filter
    best_columns: dict[str, list] = field(default_factory=dict)  # column key -> who could be #1 (web.best_data)


@dataclass(frozen=True)
class PredictedValue:
    """One result's predicted Recall@k at the column's corpus size, or why there is none."""

    value: float | None
    reason: str | None  # "cannot predict" reason; both None: the result has no score samples
    checked: bool = True  # the score samples were checked against a stored ranking (else shown * like a metric)


@dataclass(frozen=True)
class Effect:
    """The size of a paired difference, shown beside its p-value."""

    diff: float
    ci: tuple[float, float]  # 95% t-interval of the mean difference, not corrected for the number of pairs
    dz: float  # standardised: mean / SD of the per-query differences
    meaningful: bool  # significant after correction and |diff| >= the dataset's meaningful-difference threshold


@dataclass(frozen=True)
class SeparabilityRow:
    """What one dataset can tell apart: power and the share of separable model pairs."""

    dataset_id: str
    href: str
    metric: str
    queries: int
    models: int
    pairs: int
    separable_share: float | None
    adjacent: int
    adjacent_separable: int
    meaningful_share: float | None
    threshold: float  # meaningful difference, metric units
    mde: float  # minimum detectable difference at 80% power, metric units (typical pair)
    mde_dz: float  # the same, standardised
    mde_corrected: float = float("nan")  # the same at alpha / pairs (what a corrected comparison needs), metric units


@dataclass(frozen=True)
class RankRow:
    model_id: str
    href: str
    mean: float
    ci: tuple[float, float]
    rank: int  # by mean
    rank_interval: tuple[int, int]
    band: int
    best: bool = False  # ★: in the group's best set (could be #1)
    # the rank range and the ★ (or its absence) hold over the hole bounds (analysis.group_robust); False: ◊
    rank_holds: bool = True
    best_holds: bool = True


@dataclass(frozen=True)
class RankTable:
    name: str
    key: str
    datasets: int
    rows: tuple[RankRow, ...]
    bands: int
    complete: int = 0  # models with a result on every dataset of the group (ranked or not)
    stability: str = ""  # who could be #1, and how stable #1 is (views.ranks.stability)
    stability_figure: Figure | None = None  # the same two checks as a chart


@dataclass(frozen=True)
class RanksContext:
    page: Page
    tables: tuple[RankTable, ...]
    methods: tuple[str, ...]
    verified: int = 0  # models verified on every dataset they have results for
    figures: tuple[Figure, ...] = ()  # size against score (views.ranks.size_figure)
    unplaced: tuple[str, ...] = ()  # models with a mean left out of it: their result files state no parameter count
    alpha: float = 0.05  # the level of the best set (★)


@dataclass(frozen=True)
class DatasetRow:
    model_id: str
    href: str
    rank_low: int | None  # None: unverified, not ranked
    rank_high: int | None
    best: bool
    mean: float
    ci: tuple[float, float]
    whisker: tuple[float, float, float]  # low, mean, high as 0-100 positions on the page's common scale
    values: tuple[float | None, ...]  # in DatasetContext.other_metrics order
    diff: float | None
    wins: int | None
    ties: int | None
    losses: int | None
    pvalue: float | None
    mark: str  # "better", "worse" or "" (significance against the baseline)
    zero_shot: bool | None  # None: training data not stated
    verified: bool
    is_baseline: bool
    prediction: PredictedValue | None = None
    mean_verified: bool = False  # the main metric was re-scored from the stored ranking
    values_verified: tuple[bool | _ClaimedRanks, ...] = ()  # the same, per value of `values` (`value_check`)
    effect: Effect | None = None  # against the baseline
    model_type: str = ""  # for the table's type filter
    coverage: str = ""  # "153 of 300 queries" when the run lacks some judged queries
    value_notes: tuple[str, ...] = ()  # per value of `values`: "–, ranked to 100" where the depth leaves it out
    tier: str = "self-reported"  # of the result's main metric, one of evaluator.trust.TIERS
    absent_claimed: int = 0  # relevant documents the result claims absent from the corpus, unchecked by the build
    judged: float | None = None  # mean Judged@k at the main metric's cutoff (None: not re-scored)
    # the verdict against the baseline, the best-set membership and the rank range hold over the hole bounds
    verdict_holds: bool = True
    best_holds: bool = True
    rank_holds: bool = True
    hole: tuple[float, float] | None = None  # hole bounds of the mean (main metric); None: unknown
    condensed: float | None = None  # the main metric's mean on the condensed lists (trec_eval -J); None: unknown


@dataclass(frozen=True)
class DatasetContext:
    page: Page
    id: str
    name: str
    group: str
    language: str
    main_metric: str
    other_metrics: tuple[str, ...]
    other_scales: tuple[float, ...]  # display factor of each other metric
    queries: int
    rows: tuple[DatasetRow, ...]
    baseline_id: str | None
    left_out: tuple[str, ...]
    tests: str
    methods: tuple[str, ...]
    figures: tuple[Figure, ...]
    downloads: tuple[Download, ...]
    prediction: PredictionColumn | None = None  # None: no result on the dataset has score samples
    column_count: int = 1  # columns of the table, for the row that labels the unverified group
    separability: SeparabilityRow | None = None
    crossings: CrossingSection | None = None  # None: no pair of predicted curves crosses
    types: tuple[str, ...] = ()  # model types present, for the table's filter
    listed_rows: int = 50  # rows a page of the table shows (table.js) until asked for all
    top_choices: tuple[int, ...] = ()  # how many models the charts may show (the last: all of them)
    top_default: int = 0  # how many they show at first
    pairs: str = ""  # script-safe JSON for the any-two-models p-value lookup (pairs.js)
    alpha: float = 0.05  # significance level: p-values are printed so that they never round onto it
    headline: str = ""  # the metrics the dataset is published with, and where ("" when the registry names none)
    answer: str = ""  # who could be #1 on the dataset (analysis.best_words.dataset_sentence)
    judgments: str = ""  # how complete the judgments are for the models shown (analysis.judged_words.judgments_line)
    set_links: tuple = ()  # the judgment set switcher (web.views.judgment_sets.SetLink); empty without declared sets
    shown_set: dict | None = None  # the judgment set the page shows (name, kind, sha256, ...), for the downloads
    condensed_name: str = ""  # the condensed view's metric (nDCG'@10); "" without one (submissions.holes)


@dataclass(frozen=True)
class Crossing:
    """One model's predicted Recall@k passing another's as the corpus grows."""

    leader: str  # the model ahead at the dataset's own size
    follower: str  # the model that overtakes it
    leader_href: str
    follower_href: str
    size: float  # corpus size where the predicted curves cross
    size_text: str
    gap_at_own_size: float  # leader - follower at the dataset's own size (Recall@k)
    leader_checked: bool = True  # its score samples were checked against a stored ranking
    follower_checked: bool = True


@dataclass(frozen=True)
class CrossingSection:
    k: int
    growth: str
    crossings: tuple[Crossing, ...]
    error: float | None  # the method's mean |error| at R@k in this growth scenario (benchmarks/scale.py)
    note: str
    method_href: str


@dataclass(frozen=True)
class ModelDatasetRow:
    dataset_id: str
    name: str
    href: str | None  # None when the dataset could not be ranked (no main metric anywhere)
    group: str
    metric: str
    mean: float | None
    ci: tuple[float, float] | None
    rank_low: int | None
    rank_high: int | None
    models: int
    best: bool
    baseline_mean: float | None
    diff: float | None
    wins: int | None
    ties: int | None
    losses: int | None
    pvalue: float | None
    mark: str
    zero_shot: bool | None  # None: training data not stated
    verified: bool
    prediction: PredictedValue | None = None  # None: no score samples
    mean_verified: bool = False  # the main metric was re-scored from the stored ranking
    effect: Effect | None = None  # against the baseline
    tier: str = "self-reported"  # of the result's main metric, one of evaluator.trust.TIERS
    absent_claimed: int = 0  # relevant documents the result claims absent from the corpus, unchecked by the build
    judged: float | None = None  # mean Judged@k at the main metric's cutoff (None: not re-scored)
    verdict_holds: bool = True  # over the hole bounds (analysis.robust), as on the dataset page
    best_holds: bool = True
    rank_holds: bool = True
    hole: tuple[float, float] | None = None


@dataclass(frozen=True)
class ModelGroupRow:
    name: str
    mean: float | None
    ci: tuple[float, float] | None
    mean_rank: float | None
    covered: int
    total: int
    method: str
    rank_interval: tuple[int, int] | None = None  # 95% interval of the rank of the group mean
    band: int | None = None
    ranked: int = 0  # models with a group mean
    verified: int = 0  # datasets of the group where the model's result is verified
    top: int = 0  # datasets of the group where the model is in the best set (★: could be #1)
    best: bool = False  # in the best set of the group mean (GroupBoard.best_set)
    # the rank range and the ★ (or its absence) hold over the hole bounds (analysis.group_robust); False: ◊
    rank_holds: bool = True
    best_holds: bool = True


@dataclass(frozen=True)
class EfficiencyRow:
    dataset_id: str
    timings: tuple[tuple[str, float], ...]
    peak_rss_bytes: int | None
    index_bytes: int | None
    hardware: str
    measured_queries_per_s: float | None = None  # CI's search rate while reproducing the result (None: not reproduced)


@dataclass(frozen=True)
class ReproduceRow:
    dataset_id: str
    command: str
    irboard_version: str
    created_at: str
    settings: str
    artifact: str = ""  # the declared artifact CI runs again (model.artifact); "" when none


@dataclass(frozen=True)
class ScaleRow:
    """Predicted Recall@k of one dataset, k and growth scenario at every chart size, with the measured value at
    its own size."""

    dataset_id: str
    k: int
    growth: str
    num_docs: int
    measured: float | None  # the result's own R@k, when it has that metric
    at_own_size: float  # the prediction at num_docs
    values: tuple[float, ...]  # at ScaleSection.sizes
    checked: bool = True  # the score samples were checked against a stored ranking (else shown * like a metric)
    error: float | None = None  # the method's measured mean |error| at this k and growth (None: not measured)


@dataclass(frozen=True)
class ScaleSection:
    """Model page: recall at larger corpus sizes, for the model's results with score samples."""

    sizes: tuple[float, ...]
    size_labels: tuple[str, ...]
    rows: tuple[ScaleRow, ...]
    figures: tuple[Figure, ...]
    problems: tuple[tuple[str, str], ...]  # (dataset id, why it cannot be predicted)
    dropped: tuple[tuple[str, int, int, str], ...]  # (dataset id, queries dropped, queries, reasons)
    note: str
    method_href: str


@dataclass(frozen=True)
class ModelContext:
    page: Page
    model: ModelInfo
    group_means: str
    verified: str
    zero_shot: bool | None  # None: training data not stated
    is_baseline: bool
    baseline_id: str | None
    rows: tuple[ModelDatasetRow, ...]
    groups: tuple[ModelGroupRow, ...]
    metrics: tuple[str, ...]
    metric_scales: tuple[float, ...]
    metric_rows: tuple[tuple[str, tuple[float | None, ...]], ...]
    metric_checks: tuple[tuple[bool | _ClaimedRanks, ...], ...]  # per metric row and value: `value_check`
    metric_notes: tuple[tuple[str, ...], ...]  # per row and metric: why a value is left out ("–, ranked to 100")
    efficiency: tuple[EfficiencyRow, ...]
    reproduce: tuple[ReproduceRow, ...]
    tests: str
    figures: tuple[Figure, ...]
    downloads: tuple[Download, ...]
    scale: ScaleSection | None = None  # None: no result of the model has score samples
    tier: str = "self-reported"  # of the model's least trusted result
    costs_measured: bool = False  # parameters and dimension read from the model by irboard in CI (else claimed)
    alpha: float = 0.05  # significance level: p-values are printed so that they never round onto it
    references: tuple = ()  # web.references.ReferenceRow: the authors' published figures beside the measured ones
    sources: tuple = ()  # web.references.SourceRow: the published run files results were scored from
    runs: tuple[Download, ...] = ()  # the stored ranking of each result with one, as a TREC run (run_files.py)


@dataclass(frozen=True)
class EvidenceVariant:
    variant: str  # the method: per_query, rank or pooled
    used: bool  # the method this site shows
    errors: tuple[float | None, ...]  # in MethodContext.evidence_ks order
    reason: str | None  # why this method could not predict


@dataclass(frozen=True)
class EvidenceRow:
    dataset: str
    model: str
    growth: str
    measured: tuple[float | None, ...]  # in MethodContext.evidence_ks order
    dropped: float  # share of queries the per-query model dropped
    variants: tuple[EvidenceVariant, ...]


@dataclass(frozen=True)
class StatisticsMethod:
    """Method page: the tests, corrections, effect sizes and rank intervals the site uses, and why."""

    tests: str
    test: str
    correction: str
    alpha: float
    resamples: int
    seed: int
    resample_datasets: bool
    meaningful_share: float
    power: float
    thresholds: tuple[SeparabilityRow, ...]
    family: str = ""  # how corrected p-values depend on the models on the board (views.ranks.family_rule)
    predictive: tuple[str, ...] = ()  # prediction intervals, equivalence, the best set (views.ranks.predictive_method)


@dataclass(frozen=True)
class EvidenceSummary:
    growth: str
    variants: tuple[EvidenceVariant, ...]
    fraction: float | None = None  # the share of the corpus the samples came from; None: all fractions


@dataclass(frozen=True)
class MethodContext:
    page: Page
    mode: str  # the method this site uses
    growth: str  # the growth scenario of the leaderboard column
    growths: tuple[str, ...]
    tail_fraction: float
    min_tail: int
    size_labels: tuple[str, ...]
    ks: tuple[int, ...]
    column: str  # the home column's quantity, in words
    predictions: int  # results with a prediction on this site
    cannot_predict: int  # results with score samples but no prediction
    dropped_queries: int  # queries left out of predictions on this site
    evidence_description: str
    evidence_ks: tuple[int, ...]
    evidence: tuple[EvidenceRow, ...]
    summary: tuple[EvidenceSummary, ...]
    by_fraction: tuple[EvidenceSummary, ...] = ()
    verification: tuple[str, ...] = ()  # the rule that makes a value, and a result, verified
    statistics: StatisticsMethod | None = None


@dataclass(frozen=True)
class CompareContext:
    page: Page
    models: tuple[tuple[str, str], ...]  # (id, slug)
    first: str
    second: str
    datasets: int
    tests: str


@dataclass(frozen=True)
class SubmitContext:
    page: Page
    schema_version: int
    baseline_id: str | None


@dataclass(frozen=True)
class ParetoCost:
    """One cost of a model that could be #1: its value as shown, and whether it is on that cost's Pareto front."""

    value: float | None  # None: the result files do not state it
    text: str
    front: bool
    claimed: bool = False  # stated by the result files, not measured by irboard (views.pareto.MEASURED)


@dataclass(frozen=True)
class ParetoRow:
    model_id: str
    href: str
    mean: float
    ci: tuple[float, float]
    rank_interval: tuple[int, int]
    costs: tuple[ParetoCost, ...]  # in ParetoContext.costs order


@dataclass(frozen=True)
class ParetoView:
    """One cost of one choice: the chart (None when no model that could be #1 states the
    cost), the front, and those models listed but not plotted for want of the cost."""

    cost: str
    label: str
    why_missing: str  # what a model left out lacks
    figure: Figure | None
    front: tuple[str, ...]
    missing: tuple[str, ...]
    claimed: tuple[str, ...] = ()  # plotted models whose cost the result files claim (irboard did not measure it)


@dataclass(frozen=True)
class ParetoChoice:
    """A group mean or one dataset: its models that could be #1 (the best set) against each cost."""

    key: str
    name: str
    kind: str  # "group" or "dataset"
    metric: str  # what the mean is, in words
    href: str
    ranked: int  # models ranked there (verified on every dataset of it)
    rows: tuple[ParetoRow, ...]  # the models that could be #1, best mean first
    views: tuple[ParetoView, ...]
    summary: str  # how many could be #1, of how many ranked; or why there are none (the empty state)
    default_cost: str = "parameters"  # the cost shown first: the first of latency, parameters, dim placing every model


@dataclass(frozen=True)
class ParetoContext:
    """One page of the "could be #1, against cost" view: one group or dataset, and links to the pages of the others."""

    page: Page
    choice: ParetoChoice | None  # None: the board has no dataset
    links: tuple[tuple[str, str, str, str], ...]  # (key, name, kind, href) of every choice, for the picker
    costs: tuple[tuple[str, str], ...]  # (key, label): the table's columns
    rule: str
    methods: tuple[str, ...]
    cost_views: tuple[tuple[str, str], ...] = ()  # (key, label) of every view: each cost, and it measured only
