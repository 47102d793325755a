"""Result files as a library user sees them, and the leaderboard's steps: validate, build, predict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.errors import InputFormatError
from evaluator.result import ResultFile
from evaluator.result import read_result as read_result_file
from irboard.inputs import check_flag, check_path, check_text, check_whole


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
    from evaluator.pipeline import evaluate_model as run_model
    from irboard.inputs import to_measures

    model, dataset, engine = check_text(model, "model"), check_text(dataset, "dataset"), check_text(engine, "engine")
    top_k = check_whole(top_k, "top_k")
    batch_size, workers, shards = (None if value is None else check_whole(value, name) for name, value in
                                   [("batch_size", batch_size), ("workers", workers), ("shards", shards)])
    data_dir, cache_dir = (None if value is None else check_path(value, name) for name, value in
                           [("data_dir", data_dir), ("cache_dir", cache_dir)])
    address = None if address is None else check_text(address, "address")
    measures = to_measures(metrics) if metrics is not None else default_measures(dataset)
    return Result(run_model(model, dataset, measures, data_dir=data_dir, cache_dir=cache_dir, batch_size=batch_size,
                            top_k=top_k, engine=engine, address=address, workers=workers, shards=shards,
                            command=f"irboard.evaluate_model({model!r}, {dataset!r}, top_k={top_k})"))


def read_result(path: str | Path) -> Result:
    """Read and validate one result file (any schema version); raises ResultValidationError naming the field."""
    return Result(read_result_file(check_path(path, "path")))


def validate(paths: Sequence[str | Path] = (), *, results: str | Path = "results",
             data_dirs: Mapping[str, str | Path] | None = None, data_root: str | Path | None = None,
             workers: int = 1):
    """Check result files (default: every file under `results`) and re-score their stored rankings against
    the official judgments (or `data_dirs`: dataset id -> BEIR-layout folder; `data_root`: a folder holding
    <dataset id>/ folders). Returns the report: `.problems` (one line each), `.valid`, `.verified`."""
    from leaderboard.submissions.validate import validate_paths

    return validate_paths(_paths(paths), check_path(results, "results"), _data_dirs(data_dirs),
                          None if data_root is None else check_path(data_root, "data_root"),
                          workers=check_whole(workers, "workers"))


def _paths(paths: object) -> list[Path]:
    if isinstance(paths, (str, Path)):
        return [check_path(paths, "paths")]
    if not isinstance(paths, (list, tuple)):
        raise InputFormatError(f"paths={paths!r:.80}: expected a list of result file paths")
    return [check_path(p, "paths[]") for p in paths]


def _data_dirs(data_dirs: object) -> dict[str, Path]:
    if data_dirs is None:
        return {}
    if not isinstance(data_dirs, Mapping):
        raise InputFormatError(f"data_dirs={data_dirs!r:.80}: expected a dict {{dataset id: folder}}")
    return {check_text(k, "data_dirs key"): check_path(v, f"data_dirs[{k!r}]") for k, v in data_dirs.items()}


def build(results: str | Path = "results", out: str | Path = "_site", *, strict: bool = False,
          data_dirs: Mapping[str, str | Path] | None = None, data_root: str | Path | None = None,
          workers: int = 1):
    """Render the static site from `results` into `out` (atomically); results whose rankings re-score against
    the judgments are marked verified. Raises BuildError listing every problem; returns the build report."""
    from leaderboard.submissions.verify import verifier
    from leaderboard.web.build import build_site

    is_verified = verifier(_data_dirs(data_dirs), None if data_root is None else check_path(data_root, "data_root"))
    return build_site(check_path(results, "results"), check_path(out, "out"), strict=check_flag(strict, "strict"),
                      is_verified=is_verified, workers=check_whole(workers, "workers"))


def predict_recall(result: Result | ResultFile | str | Path, docs: float, k: int | Sequence[int] = (10, 100, 1000),
                   growth: str = "fixed-relevant") -> dict[str, object]:
    """Predicted Recall@k at `docs` documents from the result's score samples (growth "fixed-relevant", the
    default of `irboard predict` and of the site, or "uniform"), as `irboard predict` prints it."""
    from leaderboard.analysis.predict import predict_recall as predict
    from leaderboard.analysis.scale_options import GROWTHS
    from leaderboard.commands.predict import MAX_DOCS

    source = str(result) if isinstance(result, (str, Path)) else "result"
    if isinstance(result, (str, Path)):
        result = read_result_file(check_path(result, "result"))
    elif isinstance(result, Result):
        result = result.file
    elif not isinstance(result, ResultFile):
        raise InputFormatError(f"predict_recall: result is a {type(result).__name__}; pass a path, an "
                               "irboard.Result or a ResultFile")
    if isinstance(docs, bool) or not isinstance(docs, (int, float)) or not 1 <= docs <= MAX_DOCS or \
            docs != int(docs):
        raise InputFormatError(f"predict_recall: docs={docs!r:.40}: expected a whole number of documents from 1 to "
                               f"{MAX_DOCS:.0e}, e.g. 10_000_000")
    ks = [k] if not isinstance(k, (list, tuple, range)) else list(k)
    ks = list(dict.fromkeys(check_whole(value, "k", 1, MAX_DOCS) for value in ks))
    if not ks:
        raise InputFormatError("predict_recall: k is empty; give cut-offs such as (10, 100, 1000)")
    if growth not in GROWTHS:
        raise InputFormatError(f"predict_recall: growth={growth!r:.40}: expected one of {', '.join(GROWTHS)}")
    return predict(result, docs, ks, growth, source=source)
