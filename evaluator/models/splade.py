"""SPLADE: a masked-language model whose logits become sparse term weights over its WordPiece vocabulary.

weight(term) = max over the text's tokens (attention-masked) of log(1 + ReLU(logit(token, term))).

Spec: `splade:<directory or hub id>[,option=value...]`. Options:

- `query_max_length` (64), `doc_max_length` (256): tokens kept per query / document.
- `idf` (false): multiply each query term's weight by idf = ln(1 + (N - df + 0.5) / (df + 0.5)), with df and
  N taken from the encoded corpus.
- `prune` (0 = off): keep each document's `prune` largest weights; `threshold` (0): drop smaller weights.
- `batch_size` (auto: about 512 MiB of logits per batch), `threads` (all cores; torch's only thread pool),
  `device` (cpu).
- `id`, `license`: model metadata for a local copy of a published model (default: the directory name).

Documents are encoded as `title + " " + text`.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from evaluator.errors import ModelLoadError
from evaluator.models.base import Document, ModelInfo
from evaluator.models.options import check_option_names, parse_bool, parse_number
from evaluator.progress import bar

logger = logging.getLogger(__name__)

OPTIONS = (
    "query_max_length",
    "doc_max_length",
    "idf",
    "prune",
    "threshold",
    "batch_size",
    "threads",
    "device",
    "id",
    "license",
    "language",  # accepted and ignored: the WordPiece vocabulary covers every language the model knows
)
_LOGITS_BUDGET = 512 * 2**20  # bytes of float32 logits per batch when batch_size is auto
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def from_spec(argument: str, options: dict[str, str]) -> SpladeModel:
    check_option_names("splade", options, OPTIONS)
    if not argument:
        raise ModelLoadError("model 'splade': missing model; use splade:<directory or hub id>")

    def number(key, default, cast=int, minimum=0):
        return parse_number("splade", key, options.get(key, default), cast=cast, minimum=minimum)

    batch_size = options.get("batch_size", "auto")
    return SpladeModel(
        argument,
        query_max_length=number("query_max_length", 64, minimum=2),
        doc_max_length=number("doc_max_length", 256, minimum=2),
        idf=parse_bool("splade", "idf", options.get("idf", "false")),
        prune=number("prune", 0),
        threshold=number("threshold", 0.0, cast=float),
        batch_size=None if batch_size == "auto" else number("batch_size", batch_size, minimum=1),
        threads=number("threads", os.cpu_count() or 1, minimum=1),
        device=options.get("device", "cpu"),
        model_id=options.get("id"),
        license=options.get("license", ""),
    )


class SpladeModel:
    def __init__(
        self,
        name_or_path: str,
        query_max_length: int = 64,
        doc_max_length: int = 256,
        idf: bool = False,
        prune: int = 0,
        threshold: float = 0.0,
        batch_size: int | None = None,
        threads: int | None = None,
        device: str = "cpu",
        model_id: str | None = None,
        license: str = "",
    ):
        import torch

        torch.set_num_threads(threads or os.cpu_count() or 1)
        self.tokenizer, self.model, local_dir = _load(name_or_path, device)
        self.query_max_length, self.doc_max_length = query_max_length, doc_max_length
        self.idf, self.prune, self.threshold = idf, prune, threshold
        self.batch_size, self.device = batch_size, device
        vocab_size = self.model.config.vocab_size
        self.info = ModelInfo(
            id=model_id or (local_dir.name if local_dir else name_or_path),
            type="sparse",
            revision=_weights_hash(local_dir) if local_dir else getattr(self.model.config, "_commit_hash", "") or "",
            parameters=sum(p.numel() for p in self.model.parameters()),
            dim=vocab_size,
            license=license,
            url="" if local_dir else f"https://huggingface.co/{name_or_path}",
            open_weights=None if local_dir else True,  # loaded from the public hub; a folder may be private
            settings={
                "query_max_length": query_max_length,
                "doc_max_length": doc_max_length,
                "idf": idf,
                "prune": prune,
                "threshold": threshold,
            },
        )

    def encode_corpus(self, docs: Sequence[Document]) -> sp.csr_matrix:
        """Term weights, float32 (documents x WordPiece vocabulary)."""
        texts = [f"{title} {text}" if title else text for title, text in docs]
        return self._encode(texts, self.doc_max_length, "docs", prune=True)

    def encode_queries(self, queries: Sequence[str], corpus) -> sp.csr_matrix:
        """Term weights, float32 (queries x WordPiece vocabulary), idf-weighted with the `idf` option;
        `corpus` as `idf_weights` takes it."""
        matrix = self._encode(list(queries), self.query_max_length, "queries")
        if self.idf:
            matrix = matrix @ sp.diags(idf_weights(corpus).astype(np.float32))
            matrix = sp.csr_matrix(matrix, dtype=np.float32)
        return matrix

    def _encode(self, texts: list[str], max_length: int, unit: str, prune: bool = False) -> sp.csr_matrix:
        import torch

        vocab_size = self.model.config.vocab_size
        batch_size = self.batch_size or max(1, _LOGITS_BUDGET // (4 * max_length * vocab_size))
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths pad less
        rows = []
        with bar(total=len(texts), desc=f"splade {unit}", unit=unit[:-1]) as progress:
            for start in range(0, len(texts), batch_size):
                batch = [texts[i] for i in order[start : start + batch_size]]
                encoded = self.tokenizer(
                    batch, max_length=max_length, truncation=True, padding=True, return_tensors="pt"
                ).to(self.device)
                with torch.inference_mode():
                    logits = self.model(**encoded).logits
                    pooled = max_pool(logits, encoded["attention_mask"])
                batch_rows = _rows_to_csr(pooled)
                if prune and self.threshold > 0:
                    batch_rows.data[batch_rows.data < self.threshold] = 0
                    batch_rows.eliminate_zeros()
                if prune and self.prune > 0:
                    batch_rows = keep_largest(batch_rows, self.prune)
                rows.append(batch_rows)
                progress.update(len(batch))
        matrix = sp.vstack(rows, format="csr", dtype=np.float32) if rows else sp.csr_matrix((0, vocab_size), dtype=np.float32)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        return matrix[inverse] if len(texts) else matrix


def _rows_to_csr(pooled) -> sp.csr_matrix:
    """Pooled term weights (texts x vocabulary) as float32 CSR. On a GPU only the nonzeros cross to the host:
    a vocabulary-wide dense copy per batch, and scipy scanning it, cost more than the model itself there."""
    pooled = pooled.float()
    if pooled.device.type == "cpu":
        return sp.csr_matrix(pooled.numpy())
    return nonzeros_to_csr(pooled)


def nonzeros_to_csr(pooled) -> sp.csr_matrix:
    """The CSR matrix `sp.csr_matrix(dense)` gives, built from the tensor's nonzeros (row-major, so sorted)."""
    import torch

    rows, columns = torch.nonzero(pooled, as_tuple=True)
    counts = torch.bincount(rows, minlength=pooled.shape[0])
    indptr = np.zeros(pooled.shape[0] + 1, dtype=np.int32)
    np.cumsum(counts.cpu().numpy(), out=indptr[1:])
    data = pooled[rows, columns].cpu().numpy()
    return sp.csr_matrix((data, columns.to(torch.int32).cpu().numpy(), indptr), shape=tuple(pooled.shape))


def max_pool(logits, attention_mask):
    """max over unmasked tokens of log(1 + ReLU(logits)): (batch, tokens, vocab) -> (batch, vocab).

    log1p(ReLU(x)) never decreases in x, so it is applied after the max, to the pooled rows only.
    """
    padding = (attention_mask == 0).unsqueeze(-1)
    return logits.masked_fill_(padding, float("-inf")).amax(dim=1).relu_().log1p_()


def idf_weights(corpus) -> np.ndarray:
    """ln(1 + (N - df + 0.5) / (df + 0.5)) per column of a documents x terms matrix, or of
    (document frequencies, N) when the corpus lies in shards (the Ray engine sums the shards' counts)."""
    if isinstance(corpus, tuple):
        df, num_docs = corpus
    else:
        corpus = sp.csr_matrix(corpus)
        df, num_docs = document_frequencies(corpus), corpus.shape[0]
    return np.log1p((num_docs - df + 0.5) / (df + 0.5))


def document_frequencies(matrix: sp.csr_matrix) -> np.ndarray:
    """Documents with a non-zero weight, per column."""
    return np.bincount(matrix.indices[matrix.data != 0], minlength=matrix.shape[1])


def keep_largest(matrix: sp.csr_matrix, n: int) -> sp.csr_matrix:
    """Each row's n largest entries (ties broken by the lower column)."""
    matrix = sp.csr_matrix(matrix)
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    order = np.lexsort((matrix.indices, -matrix.data, rows))  # by row, then weight desc, then column
    rank = np.arange(matrix.nnz) - matrix.indptr[rows[order]]
    kept = np.sort(order[rank < n])
    counts = np.bincount(rows[kept], minlength=matrix.shape[0])
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_matrix((matrix.data[kept], matrix.indices[kept], indptr), shape=matrix.shape)


def _load(name_or_path: str, device: str):
    """(tokenizer, model, local directory or None); a ModelLoadError names the spec and the fix."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = Path(name_or_path).expanduser()
    local = path.is_dir()
    looks_like_path = name_or_path.startswith(("/", ".", "~")) or name_or_path.count("/") > 1
    if not local and (path.exists() or looks_like_path):
        raise ModelLoadError(
            f"model 'splade:{name_or_path}': no such model directory; give a directory holding config.json, "
            "the weights and the tokenizer files, or a Hugging Face hub id such as naver/splade-v3"
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path) if local else name_or_path)
        model = AutoModelForMaskedLM.from_pretrained(str(path) if local else name_or_path)
    except (OSError, ValueError, ImportError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(
            f"model 'splade:{name_or_path}': cannot load a masked-language model ({reason}); give a local "
            "directory with config.json, weights and tokenizer, or a hub id reachable from this machine"
        ) from None
    return tokenizer, model.to(device).eval(), (path if local else None)


def _weights_hash(directory: Path) -> str:
    """sha256 (first 16 hex digits) of the weights file, so a changed checkpoint gets a new revision."""
    for name in _WEIGHT_FILES:
        file = directory / name
        if file.is_file():
            digest = hashlib.sha256()
            with file.open("rb") as handle:
                for chunk in iter(lambda: handle.read(2**20), b""):
                    digest.update(chunk)
            return "sha256:" + digest.hexdigest()[:16]
    return ""
