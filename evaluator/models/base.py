"""What every model adapter provides. Adapters return raw encodings; the pipeline does search, top-k and metrics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp

Document = tuple[str, str]  # (title, text)


@dataclass(frozen=True)
class ModelInfo:
    """The `model` block of a result file."""

    id: str
    type: str  # lexical | sparse | dense | hybrid | late-interaction | other
    revision: str = ""
    parameters: int | None = None
    dim: int | None = None
    license: str = ""
    open_weights: bool | None = None  # None: not stated (never a default that reads as a fact)
    training_datasets: tuple[str, ...] | None = None  # None: not stated; (): trained on none
    url: str = ""
    settings: dict = field(default_factory=dict)  # adapter options, recorded in provenance and cache keys


@runtime_checkable
class SparseModel(Protocol):
    """Lexical (BM25) and learned sparse (SPLADE) models: documents and queries become term-weight rows."""

    info: ModelInfo

    def encode_corpus(self, docs: Sequence[Document]) -> sp.csr_matrix: ...

    def encode_queries(self, queries: Sequence[str], corpus: sp.csr_matrix) -> sp.csr_matrix: ...


@runtime_checkable
class DenseModel(Protocol):
    """Embedding models: documents and queries become float32 vectors; the score is their dot product."""

    info: ModelInfo

    def encode_corpus(self, docs: Sequence[Document]) -> np.ndarray: ...

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray: ...
