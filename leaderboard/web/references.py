"""Published reference figures beside measured ones (a model page's table, as Pyserini's reproduction matrix does),
and the credit for results scored from a published run file (`provenance.source`).

A result may cite the figure its authors published (`references` in the result file: metric, value as printed, link).
The difference from the measured mean is flagged when it exceeds what rounding the published value can explain:
half a unit in its last printed decimal (0.665 stands for [0.6645, 0.6655]).
"""

from __future__ import annotations

from dataclasses import dataclass

ROUNDING_SLACK = 1e-12  # float noise in the measured mean


@dataclass(frozen=True)
class ReferenceRow:
    dataset_id: str
    metric: str
    published: str  # as printed at the source
    url: str
    measured: float | None  # None: the result does not report the metric
    difference: float | None  # measured - published
    beyond_rounding: bool


def rounding_tolerance(published: str) -> float:
    """Half a unit in the last printed decimal of `published`."""
    decimals = len(published.partition(".")[2])
    return 0.5 * 10.0 ** -decimals


def reference_rows(results) -> tuple[ReferenceRow, ...]:
    """One row per cited figure of a model's results ({dataset id: LoadedResult}), in dataset order."""
    rows = []
    for dataset_id, result in results.items():
        for metric, published, url in result.references:
            measured = result.metrics.get(metric)
            difference = None if measured is None else measured - float(published)
            rows.append(ReferenceRow(dataset_id, metric, published, url, measured, difference,
                                     difference is not None
                                     and abs(difference) > rounding_tolerance(published) + ROUNDING_SLACK))
    return tuple(rows)


@dataclass(frozen=True)
class SourceRow:
    """A result scored from a run file its authors published: where it lies, under which licence."""

    dataset_id: str
    repository: str
    commit: str
    path: str
    license: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"


def source_rows(results) -> tuple[SourceRow, ...]:
    """One row per result of a model ({dataset id: LoadedResult}) that records its published run file."""
    return tuple(SourceRow(dataset_id, *result.provenance.source) for dataset_id, result in results.items()
                 if result.provenance.source is not None)
