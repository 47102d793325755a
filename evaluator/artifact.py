"""The declared artifact of a result (`model.artifact`): what `irboard reproduce` runs again to obtain its ranking.

An artifact is the model spec `irboard evaluate --model` takes (irboard's BM25 with its settings, a SPLADE or dense
model named by a hub id, a package-shipped model or a folder) and the revision of the weights that spec must load
(a hub commit or the sha256 of the weights file; empty for BM25, whose settings and irboard's code pin it).
Options that only choose where and how fast the model runs (device, threads, batch size) are left out: they are
the reproducing machine's choice and move scores only within the tolerance a reproduction allows.

Models irboard cannot run itself are declared as a script in a public git repository at a pinned commit
(`ScriptArtifact`) or a container image pinned by its digest (`ContainerArtifact`): either runs a command that
writes a TREC run file, which is compared with the stored ranking as a re-run of a spec is. A tag or branch could
move, so neither is accepted: a commit is 40 hex digits and an image is `name@sha256:<64 hex>`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_serializer,
)

# options of the model adapters that do not change what a model computes, only where and how fast
MACHINE_OPTIONS = ("batch_size", "device", "threads")
_SPEC_PATTERN = r"^[^\s\x00-\x1f\x7f\"'<>`\\]{1,500}$"  # one token: no spaces, quotes, markup or control characters


class Artifact(BaseModel):
    """`model.artifact`: a spec `irboard evaluate --model` takes and the revision of the weights it must load."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    spec: str = Field(pattern=_SPEC_PATTERN)
    revision: str = Field("", max_length=200, pattern=r"^[A-Za-z0-9:._-]*$")


# what a command may name: {run} the run file it writes, {data} the dataset's folder (BEIR layout)
PLACEHOLDERS = ("{run}", "{data}")
# a registry host (with a port), then lower-case path components: a Docker image name without a tag
_IMAGE_NAME = r"([a-z0-9.-]+(:[0-9]{1,5})?/)?[a-z0-9]+([._/-][a-z0-9]+)*"


def _command(value: list[str]) -> list[str]:
    if any(not arg or len(arg) > 500 or re.search(r"[\x00-\x1f\x7f]", arg) for arg in value):
        raise ValueError("each command argument must be 1 to 500 characters without control characters")
    if not any("{run}" in arg for arg in value):
        raise ValueError("the command must name the run file it writes as {run}")
    return value


Command = Annotated[list[str], Field(min_length=1, max_length=50), AfterValidator(_command)]


def _setup(value: list[str]) -> list[str]:
    if any(not arg or len(arg) > 500 or re.search(r"[\x00-\x1f\x7f]", arg) for arg in value):
        raise ValueError("each setup argument must be 1 to 500 characters without control characters")
    if any(name in arg for arg in value for name in PLACEHOLDERS):
        raise ValueError("the setup command runs before the dataset is there and writes no run: it cannot name {data} "
                         "or {run}; fetch packages and weights into its folder, and let the command read them")
    return value


# run with the network in the checkout before the dataset is there (packages, weights); the command then runs offline
SetupCommand = Annotated[list[str], Field(min_length=1, max_length=50), AfterValidator(_setup)]


class ScriptArtifact(BaseModel):
    """`model.artifact` for a model irboard cannot run: a public git repository at a pinned commit and the command,
    run there without a shell and without network, that writes the run file (`{run}`) from the dataset's folder
    (`{data}`); optionally a `setup` command run there first, with the network but before the dataset is there, that
    fetches what the command needs (packages, weights)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    repository: str = Field(max_length=500, pattern=r"^(https|git)://[A-Za-z0-9._~:/@%+-]+$")
    commit: str
    setup: SetupCommand | None = None
    command: Command

    @model_serializer(mode="wrap")
    def _without_setup(self, handler) -> dict:
        data = handler(self)
        if data.get("setup", ...) is None:
            del data["setup"]  # an artifact without one keeps the bytes it had before setup existed
        return data

    @field_validator("commit")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if not re.fullmatch(r"[0-9a-f]{40}", value):
            raise ValueError("the commit must be its full 40-hex-digit id, not a branch, tag or short id (those can "
                             "move)")
        return value

    @property
    def spec(self) -> str:
        return f"script {self.repository}"

    @property
    def revision(self) -> str:
        return self.commit


class ContainerArtifact(BaseModel):
    """`model.artifact` for a container image pinned by its digest (no tag) and the command run in it that writes
    the run file (`{run}`) from the dataset's folder (`{data}`)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    image: str = Field(max_length=300)
    command: Command

    @field_validator("image")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if not re.fullmatch(_IMAGE_NAME + r"@sha256:[0-9a-f]{64}", value):
            raise ValueError("the image must be pinned by its digest, name@sha256:<64 hex digits>, with no tag (a tag "
                             "can be moved to other contents)")
        return value

    @property
    def spec(self) -> str:
        return f"container {self.image.partition('@')[0]}"

    @property
    def revision(self) -> str:
        return self.image.partition("@")[2]


def _kind(value) -> str:
    """Which artifact a declaration is, by its keys (so that an error names the fields of that one kind)."""
    # anything else (a number, null, a list in a submitted file) is then refused as not an object of that kind
    keys = value.keys() if isinstance(value, dict) else getattr(value, "__dict__", {}).keys()
    return "script" if "repository" in keys else "container" if "image" in keys else "spec"


# `model.artifact` (and a ledger record's): a spec irboard runs, a script at a commit, or an image by digest
AnyArtifact = Annotated[Annotated[Artifact, Tag("spec")] | Annotated[ScriptArtifact, Tag("script")]
                        | Annotated[ContainerArtifact, Tag("container")], Discriminator(_kind)]


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
