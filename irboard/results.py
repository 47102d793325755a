"""Result files as a library user sees them, and the leaderboard's steps: validate, build, predict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.result import ResultFile
from evaluator.result import read_result as read_result_file


@dataclass(frozen=True)
class Result:
    """A validated result file: `metrics` (means), `per_query` (a DataFrame), `run` (the stored ranking)."""

    file: ResultFile

    @property
    def model_id(self) -> str:
        return self.file.model.id

    @property
    def dataset_id(self) -> str:
        return self.file.dataset.id

    @property
    def metrics(self) -> dict[str, float]:
        return dict(self.file.metrics)

    @property
    def per_query(self) -> Any:
        """Per-query values, one row per judged query (index: query_id), one column per stored metric."""
        import pandas as pd

        return pd.DataFrame(self.file.per_query, index=pd.Index(self.file.query_ids, name="query_id"))

    @property
    def run(self) -> dict[str, list[tuple[str, float]]]:
        """The stored ranking as {query_id: [(doc_id, score), ...]} in trec_eval order."""
        return self.file.rankings()


def evaluate_model(model: str, dataset: str, *, metrics: str | Sequence[str] | None = None, top_k: int = 1000,
                   engine: str = "local", data_dir: str | Path | None = None, cache_dir: str | Path | None = None,
                   batch_size: int | None = None, address: str | None = None, workers: int | None = None,
                   shards: int | None = None) -> Result:
    """Run a model over a dataset, as `irboard evaluate --model MODEL --dataset DATASET` does (which only parses
    arguments for this): `model` is bm25, bm25:k1=0.9,b=0.4, splade:<dir>, dense:<dir or hub id>; `dataset` a
    registered id (`irboard datasets`) or local:<BEIR-layout folder>; `metrics` default to the standard set plus
    the dataset's headline metrics. Returns the result; `.file` writes with evaluator.result.write_result."""
    from evaluator.cli import default_measures
    from evaluator.metrics import parse_measures
    from evaluator.pipeline import evaluate_model as run_model

    measures = parse_measures(metrics if isinstance(metrics, str) else list(metrics)) if metrics else \
        default_measures(dataset)
    return Result(run_model(model, dataset, measures, data_dir=data_dir, cache_dir=cache_dir, batch_size=batch_size,
                            top_k=top_k, engine=engine, address=address, workers=workers, shards=shards,
                            command=f"irboard.evaluate_model({model!r}, {dataset!r}, top_k={top_k})"))


def read_result(path: str | Path) -> Result:
    """Read and validate one result file (any schema version); raises ResultValidationError naming the field."""
    return Result(read_result_file(path))


def validate(paths: Sequence[str | Path] = (), *, results: str | Path = "results",
             data_dirs: Mapping[str, str | Path] | None = None, data_root: str | Path | None = None,
             workers: int = 1):
    """Check result files (default: every file under `results`) and re-score their stored rankings against
    the official judgments (or `data_dirs`: dataset id -> BEIR-layout folder; `data_root`: a folder holding
    <dataset id>/ folders). Returns the report: `.problems` (one line each), `.valid`, `.verified`."""
    from leaderboard.submissions.validate import validate_paths

    return validate_paths([Path(p) for p in paths], Path(results),
                          {k: Path(v) for k, v in (data_dirs or {}).items()},
                          Path(data_root) if data_root else None, workers=workers)


def build(results: str | Path = "results", out: str | Path = "_site", *, strict: bool = False,
          data_dirs: Mapping[str, str | Path] | None = None, data_root: str | Path | None = None,
          workers: int = 1):
    """Render the static site from `results` into `out` (atomically); results whose rankings re-score against
    the judgments are marked verified. Raises BuildError listing every problem; returns the build report."""
    from leaderboard.submissions.verify import verifier
    from leaderboard.web.build import build_site

    is_verified = verifier({k: Path(v) for k, v in (data_dirs or {}).items()},
                           Path(data_root) if data_root else None)
    return build_site(Path(results), Path(out), strict=strict, is_verified=is_verified, workers=workers)


def predict_recall(result: Result | ResultFile | str | Path, docs: float, k: Sequence[int] = (10, 100, 1000),
                   growth: str = "uniform") -> dict[str, object]:
    """Predicted Recall@k at `docs` documents from the result's score samples (growth "uniform" or
    "fixed-relevant"), as `irboard predict` prints it."""
    from leaderboard.analysis.predict import predict_recall as predict

    source = str(result) if isinstance(result, (str, Path)) else "result"
    if isinstance(result, (str, Path)):
        result = read_result_file(result)
    elif isinstance(result, Result):
        result = result.file
    return predict(result, docs, k, growth, source=source)
