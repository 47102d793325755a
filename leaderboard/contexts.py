"""The template contexts: typed, frozen records that templates only format (see pages.py for the builders)."""

from __future__ import annotations

from dataclasses import dataclass

from leaderboard.load import ModelInfo


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


@dataclass(frozen=True)
class DatasetCell:
    value: float | None
    best: bool
    trained: bool


@dataclass(frozen=True)
class PredictedMean:
    """Home column: the model's predicted Recall@k at the column's corpus size, averaged over datasets."""

    mean: float | None  # only when every dataset has a prediction
    covered: int  # datasets with a prediction
    total: int


@dataclass(frozen=True)
class PredictionColumn:
    label: str  # says that it is a model-based prediction
    detail: str  # what the mean is taken over
    href: str  # the method's explanation and measured error


@dataclass(frozen=True)
class HomeRow:
    model_id: str
    href: str
    type: str
    parameters: int | None
    license: str
    open_weights: bool
    zero_shot: bool
    verified: str
    is_baseline: bool
    groups: tuple[GroupCell, ...]
    cells: tuple[DatasetCell, ...]
    prediction: PredictedMean | None = None  # None when the site has no predictions


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


@dataclass(frozen=True)
class PredictedValue:
    """One result's predicted Recall@k at the column's corpus size, or why there is none."""

    value: float | None
    reason: str | None  # "cannot predict" reason; both None: the result has no score samples


@dataclass(frozen=True)
class DatasetRow:
    model_id: str
    href: str
    rank_low: int
    rank_high: int
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
    zero_shot: bool
    verified: bool
    is_baseline: bool
    prediction: PredictedValue | None = None


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
    crossings: CrossingSection | None = None  # None: no pair of predicted curves crosses


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
    zero_shot: bool
    verified: bool
    prediction: PredictedValue | None = None  # None: no score samples


@dataclass(frozen=True)
class ModelGroupRow:
    name: str
    mean: float | None
    ci: tuple[float, float] | None
    mean_rank: float | None
    covered: int
    total: int
    method: str


@dataclass(frozen=True)
class EfficiencyRow:
    dataset_id: str
    timings: tuple[tuple[str, float], ...]
    peak_rss_bytes: int | None
    index_bytes: int | None
    hardware: str


@dataclass(frozen=True)
class ReproduceRow:
    dataset_id: str
    command: str
    irboard_version: str
    created_at: str
    settings: str


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
    zero_shot: bool
    is_baseline: bool
    baseline_id: str | None
    rows: tuple[ModelDatasetRow, ...]
    groups: tuple[ModelGroupRow, ...]
    metrics: tuple[str, ...]
    metric_scales: tuple[float, ...]
    metric_rows: tuple[tuple[str, tuple[float | None, ...]], ...]
    efficiency: tuple[EfficiencyRow, ...]
    reproduce: tuple[ReproduceRow, ...]
    tests: str
    figures: tuple[Figure, ...]
    downloads: tuple[Download, ...]
    scale: ScaleSection | None = None  # None: no result of the model has score samples


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
