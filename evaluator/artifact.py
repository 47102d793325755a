"""The declared artifact of a result (`model.artifact`): what `irboard reproduce` runs again to obtain its ranking.

An artifact is the model spec `irboard evaluate --model` takes (irboard's BM25 with its settings, a SPLADE or dense
model named by a hub id, a package-shipped model or a folder) and the revision of the weights that spec must load
(a hub commit or the sha256 of the weights file; empty for BM25, whose settings and irboard's code pin it).
Options that only choose where and how fast the model runs (device, threads, batch size) are left out: they are
the reproducing machine's choice and move scores only within the tolerance a reproduction allows.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

# options of the model adapters that do not change what a model computes, only where and how fast
MACHINE_OPTIONS = ("batch_size", "device", "threads")
_SPEC_PATTERN = r"^[^\s\x00-\x1f\x7f\"'<>`\\]{1,500}$"  # one token: no spaces, quotes, markup or control characters


class Artifact(BaseModel):
    """`model.artifact`: a spec `irboard evaluate --model` takes and the revision of the weights it must load."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    spec: str = Field(pattern=_SPEC_PATTERN)
    revision: str = Field("", max_length=200, pattern=r"^[A-Za-z0-9:._-]*$")


def pinned_spec(model_spec: str, revision: str, dtype: str = "") -> str:
    """`model_spec` without the machine's options; a dense hub model gets the commit it loaded as `revision=`, so
    that running the spec again loads the same weights even after the hub's main branch moves, and a dense model the
    `dtype` it ran in (left to `auto`, a GPU would run float16 where a CPU ran float32)."""
    from evaluator.models import parse_model_spec

    kind, argument, options = parse_model_spec(model_spec)
    kept = {key: value for key, value in options.items() if key not in MACHINE_OPTIONS}
    if kind == "dense" and "revision" not in kept and re.fullmatch(r"[0-9a-f]{40}", revision):
        kept["revision"] = revision
    if kind == "dense" and dtype and kept.get("dtype", "auto") == "auto":
        kept["dtype"] = dtype
    parts = ([argument] if argument else []) + [f"{key}={value}" for key, value in kept.items()]
    return f"{kind}:{','.join(parts)}" if parts else kind


def declare_artifact(model_spec: str, revision: str, dtype: str = "") -> Artifact:
    """The artifact `evaluate --model` records for a run of `model_spec` that loaded weights of `revision` (in
    `dtype`, for dense models)."""
    return Artifact(spec=pinned_spec(model_spec, revision, dtype), revision=revision)
