"""The stages of the build's read step and their typed interfaces.

`leaderboard.submissions.load.read_loaded` takes each result file through four stages, each in its own module:

1. **read** (`read_source` here, then `evaluator.result.read_result`): the file's bytes and their sha256, then the
   parsed and checked result, decoding its ranking and score samples only when a later stage needs them
   (`Decoding` decides, from the outcomes the caches hold for these bytes);
2. **verify** (a `Verifier`: `leaderboard.submissions.verify.Judgments`): re-scoring the stored ranking against the
   judgments, giving a `Verification`;
3. **predict** (a `Forecaster`: `leaderboard.analysis.predictions.Predictor`, in a package above this one, hence the
   Protocol): recall at scale from the score samples, which are then dropped;
4. **cache** (`leaderboard.submissions.read_cache.ReadCache`): what the stages made of these exact bytes, so that
   an unchanged file skips all of them next time.

Verification and prediction each keep their own outcomes by content too (`leaderboard.submissions.cache`), so a
file whose read-cache entry no longer holds (another main metric, other judgments) still skips the stage whose
outcome is kept. Only `irboard build` runs the predict stage; `irboard validate` reads and verifies.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evaluator.result import Header, ResultFile, read_result_bytes
from leaderboard.submissions.loaded import LoadedResult
from leaderboard.submissions.verify import Verification


@dataclass(frozen=True)
class Source:
    """The read stage's first output: a result file's exact bytes (size-capped, `read_result_bytes`)."""

    path: Path
    content: bytes

    @functools.cached_property
    def sha256(self) -> str:
        """The key of every cached outcome for these bytes (hashed once, when a stage first asks)."""
        return hashlib.sha256(self.content).hexdigest()


def read_source(path: Path) -> Source:
    return Source(path, read_result_bytes(path))


class Verifier(Protocol):
    """The verify stage: says which results can be re-scored and re-scores them."""

    errors: list[str]  # judgments that could not be had, one line per dataset (their results stay unverified)

    def can_verify(self, dataset_id: str, split: str) -> bool:
        """Whether results on this dataset can be re-scored (their rankings are then decoded)."""

    def cached(self, file_sha256: str, header: Header) -> Verification | None:
        """The verification kept for these bytes against the judgments at hand, or None."""

    def verification(self, result: ResultFile, file_sha256: str | None = None) -> Verification | None:
        """The verification of a result that stores a ranking (or names its full file); None without judgments."""

    def judgments_key(self, dataset_id: str, split: str) -> str | None:
        """What verifications on this dataset depend on besides the file (the judgments' sha256, "" without
        judgments), for the read cache; None: outcomes that must not be cached."""

    def local_query_set(self, dataset_id: str) -> str | None:
        """The query set (query_ids_sha256) of judgments the builder supplied for this dataset, or None."""

    def add_errors(self, errors: list[str]) -> None:
        """Add the errors a worker process's copy met, each once."""


class Forecaster(Protocol):
    """The predict stage: recall at scale from a result's score samples, kept by content."""

    def method(self) -> str:
        """What a prediction depends on besides the file: the code's version, the method and the sizes."""

    def cached(self, file_sha256: str, header: Header) -> object | None:
        """The prediction kept for these bytes, or None."""

    def predict(self, result: LoadedResult, file_sha256: str | None = None) -> object | None:
        """The prediction for a result read with its score samples (None without samples); kept by content."""

    def keeps(self, prediction: object | None) -> bool:
        """Whether a prediction may be kept for the same bytes."""

    def encode(self, prediction: object) -> dict:
        """The prediction as JSON data."""

    def decode(self, entry: dict, model_id: str, dataset_id: str, metrics: dict[str, float]) -> object | None:
        """The prediction `encode` gave `entry`, or None when `entry` is not one."""


class Decoding:
    """What the read stage decodes of one file, decided from its header while it is parsed (`read_result`'s
    `with_run` and `with_samples`): a ranking only when it will be re-scored (judgments at hand and no kept
    verification), score samples only when they will be predicted from or checked against a re-scored ranking.
    The kept outcomes found on the way are held for the later stages."""

    def __init__(self, source: Source, verifier: Verifier | None, forecaster: Forecaster | None):
        self.source, self.verifier, self.forecaster = source, verifier, forecaster
        self.stores_run = False  # the file stores a ranking (decoded or not)
        self.decodes_run = False
        self.verification: Verification | None = None  # kept for these bytes
        self.prediction: object | None = None  # kept for these bytes

    def wants_run(self, header: Header) -> bool:  # asked only about version-3 files that store a ranking
        self.stores_run = True
        if self.verifier is None:
            return False
        self.verification = self.verifier.cached(self.source.sha256, header)
        self.decodes_run = self.verification is None and self.verifier.can_verify(header.dataset.id,
                                                                                   header.dataset.split)
        return self.decodes_run

    def wants_samples(self, header: Header) -> bool:  # asked only about files that store score samples
        if self.forecaster is None:
            return True
        self.prediction = self.forecaster.cached(self.source.sha256, header)
        return self.prediction is None or self.decodes_run  # re-scoring checks the samples against the ranking
