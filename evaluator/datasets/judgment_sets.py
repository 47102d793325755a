"""Judgment sets: the several pinned judgments one dataset may be scored against (docs/datasets.md, "Judgment
sets").

Every registered dataset has its official set (the registry's qrels, `evaluator.datasets.official`), named
"official". Others are small declarations in the repository, `judgments/<dataset_slug>/<name>.json` (the folder
is `$IRBOARD_JUDGMENTS`, else `judgments` in the working folder), each naming one qrels file: beside it in the
same folder, or at an allow-listed https address, pinned by the sha256 of its bytes. A set is *post-hoc* (people
judged more documents after the fact: the holes of the runs shown, a sealed round's pool) or *machine* (a judge
model made it; its model, revision and prompt's sha256 are part of its identity).

A set's identity, `JudgmentSet.sha256`, is the sha256 of its qrels file's bytes (the official set's: the
registry's pinned file), and for a machine set the sha256 of that and the judge's fields: the same qrels judged by
another model or prompt is another set. A set that `extends` "official" holds only the judgments it adds (the
holes it grades; never a pair the official set judges), so that a dataset whose judgments may not be copied keeps
them out of the repository; it is the official set with those added, and its identity names the official set's
sha256 too. A set judges exactly the dataset's official queries (its query ids'
fingerprint is the registry's), so that every paired test stays paired.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.errors import (
    DatasetLoadError,
    IrboardError,
    UnknownNameError,
    closest_names,
    did_you_mean,
    one_line,
)

JUDGMENTS_ENV = "IRBOARD_JUDGMENTS"
JUDGMENTS_DIR = "judgments"
OFFICIAL = "official"  # the registry's set: no declaration takes this name
MAX_DECLARATION_BYTES = 16 * 1024
MAX_QRELS_BYTES = 256 * 1024 * 1024
# where a declared set's qrels may be downloaded from (https only): hosts that serve a pinned file's bytes
ALLOWED_HOSTS = ("raw.githubusercontent.com", "huggingface.co", "zenodo.org")
_NAME = r"^[a-z0-9][a-z0-9._-]{0,49}$"
_SHA256 = r"^[0-9a-f]{64}$"
_TEXT = r"^[^<>\x00-\x1f]*$"
_FILE = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"


class Judge(BaseModel):
    """Who made a machine set: the judge model, its revision and the sha256 of the prompt it was given."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    model: str = Field(min_length=1, max_length=200, pattern=_TEXT)
    revision: str = Field(min_length=1, max_length=100, pattern=_TEXT)
    prompt_sha256: str = Field(pattern=_SHA256)


class Declaration(BaseModel):
    """The file's fields; unknown ones are refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    dataset: str = Field(max_length=200)
    name: str = Field(pattern=_NAME)
    kind: Literal["post-hoc", "machine"]
    judge: Judge | None = None
    file: str | None = Field(None, pattern=_FILE)  # the qrels beside the declaration
    url: str | None = Field(None, max_length=500, pattern=r"^https://[^\s<>\"']+$")
    sha256: str = Field(pattern=_SHA256)  # of the qrels file's bytes
    license: str = Field(min_length=1, max_length=100, pattern=_TEXT)
    source: str = Field(min_length=1, max_length=500, pattern=_TEXT)  # who made it, how (a paper, a round)
    description: str = Field("", max_length=1000, pattern=_TEXT)
    extends: Literal["official"] | None = None  # the file holds only what it adds to the official set


@dataclass(frozen=True)
class JudgmentSet:
    """One set of judgments of one dataset, as the board and the API name it."""

    dataset_id: str
    name: str  # "official" for the registry's
    kind: str  # "official", "post-hoc" or "machine"
    sha256: str  # the set's identity (module docstring)
    file_sha256: str  # of the qrels file's bytes
    license: str
    source: str
    description: str = ""
    judge: tuple[str, str, str] | None = None  # (model, revision, prompt sha256) of a machine set
    path: Path | None = None  # the qrels beside the declaration
    url: str | None = None
    declaration: str = ""  # the declaration file, for messages ("" for the official set)
    extends: str | None = None  # the official set's sha256 when the file adds to it

    @property
    def short(self) -> str:
        return self.sha256[:12]

    @property
    def official(self) -> bool:
        return self.kind == OFFICIAL


def judgments_dir() -> Path:
    return Path(os.environ.get(JUDGMENTS_ENV) or JUDGMENTS_DIR)


def dataset_slug(dataset_id: str) -> str:
    """The folder of a dataset's declarations (the declared datasets' and result files' slug)."""
    return dataset_id.lower().replace("/", "__")


def identity(file_sha256: str, judge: tuple[str, str, str] | None, extends: str | None = None) -> str:
    """A set's sha256: its qrels bytes', and with a judge or an extended set the sha256 of them all (canonical
    JSON)."""
    if judge is None and extends is None:
        return file_sha256
    named: dict[str, object] = {"qrels_sha256": file_sha256}
    if judge is not None:
        model, revision, prompt = judge
        named["judge"] = {"model": model, "revision": revision, "prompt_sha256": prompt}
    if extends is not None:
        named["extends_sha256"] = extends
    return hashlib.sha256(json.dumps(named, sort_keys=True).encode("utf-8")).hexdigest()


def official_set(dataset_id: str) -> JudgmentSet | None:
    """The registry's judgments of `dataset_id` as a set; None for a dataset without official files."""
    from evaluator.datasets.official import official_judgments

    record = official_judgments(dataset_id)
    if record is None or not record.registered:
        return None
    return JudgmentSet(dataset_id, OFFICIAL, OFFICIAL, record.qrels.sha256, record.qrels.sha256, record.license,
                       f"the registry's qrels ({record.qrels.name})")


def read_set(path: Path) -> JudgmentSet:
    """One declaration, checked; DatasetLoadError names the file, the field and the fix, on one line."""
    try:
        return _read_set(path)
    except DatasetLoadError as error:
        raise DatasetLoadError(one_line(str(error))) from None


def _read_set(path: Path) -> JudgmentSet:
    from evaluator.datasets import get_spec

    see = 'see docs/datasets.md, "Judgment sets"'
    try:
        if path.stat().st_size > MAX_DECLARATION_BYTES:
            raise DatasetLoadError(f"{path}: a judgment set declaration is a small JSON file (at most 16 KB)")
        data = json.loads(path.read_bytes().decode("utf-8"))
        declaration = Declaration.model_validate(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise DatasetLoadError(f"{path}: cannot read the judgment set declaration ({error}); write it as JSON, "
                               f"{see}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        if isinstance(data, dict) and data.get("kind") == OFFICIAL and first["loc"][:1] == ("kind",):
            raise DatasetLoadError(f"{path}: kind: 'official' is the registry's set, never declared; declare "
                                   "'post-hoc' or 'machine' judgments") from None
        raise DatasetLoadError(f"{path}: {where}: {first['msg']}; {see}") from None
    try:
        get_spec(declaration.dataset)
    except IrboardError as error:
        raise DatasetLoadError(f"{path}: dataset: {one_line(str(error))}") from None
    if declaration.name == OFFICIAL or declaration.name.startswith(f"{OFFICIAL}.") or re.fullmatch(
            r"[0-9a-f]{12,64}", declaration.name):
        raise DatasetLoadError(f"{path}: name: {declaration.name!r} would shadow "
                               f"{'the official set' if OFFICIAL in declaration.name else 'a set named by its sha256'}"
                               "; choose another name, e.g. 'post-hoc-2024'")
    if (declaration.kind == "machine") != (declaration.judge is not None):
        raise DatasetLoadError(f"{path}: judge: a machine set names its judge (model, revision, prompt_sha256) and "
                               "no other kind does; " + ("add it" if declaration.judge is None else "remove it"))
    if (declaration.file is None) == (declaration.url is None):
        raise DatasetLoadError(f"{path}: file, url: name the qrels by one of them (a file beside the declaration, "
                               "or an https address)")
    if declaration.url is not None:
        host = declaration.url.split("/", 3)[2].split(":")[0].lower()
        if host not in ALLOWED_HOSTS:
            raise DatasetLoadError(f"{path}: url: {host!r} is not an allowed host ({', '.join(ALLOWED_HOSTS)}); "
                                   "put the qrels beside the declaration instead")
    folder = dataset_slug(declaration.dataset)
    if path.parent.name != folder or path.stem != declaration.name:
        raise DatasetLoadError(f"{path}: declares {declaration.name!r} of {declaration.dataset}, whose file is "
                               f"{folder}/{declaration.name}.json; move it there")
    judge = None if declaration.judge is None else (declaration.judge.model, declaration.judge.revision,
                                                    declaration.judge.prompt_sha256)
    qrels_path = None if declaration.file is None else path.parent / declaration.file
    if qrels_path is not None and (qrels_path.suffix == ".json" or not qrels_path.is_file()):
        raise DatasetLoadError(f"{path}: file: {declaration.file!r} is not a qrels file beside the declaration; "
                               "add it, or fix the name")
    extends = None
    if declaration.extends is not None:
        base = official_set(declaration.dataset)
        if base is None:
            raise DatasetLoadError(f"{path}: extends: {declaration.dataset} has no official set to extend; give the "
                                   "whole qrels and drop 'extends'")
        extends = base.sha256
    return JudgmentSet(declaration.dataset, declaration.name, declaration.kind,
                       identity(declaration.sha256, judge, extends), declaration.sha256, declaration.license,
                       declaration.source, declaration.description, judge, qrels_path, declaration.url, str(path),
                       extends)


def declaration_files(folder: Path | None = None) -> list[Path]:
    """Every non-hidden entry two levels down (`<dataset_slug>/<file>`), and stray ones at the top."""
    folder = folder or judgments_dir()
    if not folder.is_dir():
        return []
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        found += sorted(p for p in entry.iterdir() if not p.name.startswith(".")) if entry.is_dir() else [entry]
    return found


def _declared(folder: str) -> tuple[tuple[JudgmentSet, ...], tuple[str, ...]]:
    sets, problems, referenced = [], [], set()
    files = declaration_files(Path(folder))
    for path in files:
        if path.suffix != ".json" or path.parent == Path(folder):
            continue
        referenced.add(path.parent / str(_named_file(path)))  # a broken declaration's file is not stray too
        try:
            sets.append(read_set(path))
        except DatasetLoadError as error:
            problems.append(str(error))
    for path in files:
        if path.suffix != ".json" and path not in referenced:
            problems.append(f"{path}: neither a judgment set declaration nor the qrels one names; the folder holds "
                            "<dataset_slug>/<name>.json and the qrels files they name")
    seen: dict[tuple[str, str], str] = {}
    for found in sets:
        first = seen.setdefault((found.dataset_id, found.sha256), found.declaration)
        if first != found.declaration:
            problems.append(f"{found.declaration}: the same set (sha256 {found.short}…) as {first}; keep one")
    return tuple(sets), tuple(problems)


def _named_file(path: Path) -> object:
    """The `file` a declaration names, read leniently (None when it names none or does not read)."""
    try:
        data = json.loads(path.read_bytes()[:MAX_DECLARATION_BYTES].decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return data.get("file") if isinstance(data, dict) and isinstance(data.get("file"), str) else None


def declared_sets(folder: Path | None = None) -> tuple[JudgmentSet, ...]:
    """Every declaration that reads (`set_problems` names the others)."""
    folder = folder or judgments_dir()
    return _declared(str(folder))[0]


def set_problems(folder: Path | None = None) -> list[str]:
    """One line for each declaration that does not read and each stray file; `irboard validate` and `build`
    report these (the qrels themselves are checked by `load_qrels` when a build or validate reads them)."""
    folder = folder or judgments_dir()
    return list(_declared(str(folder))[1])


def judgment_set_problems(folder: Path | None = None) -> list[str]:
    """`set_problems`, and for each declaration that reads, what loading its qrels finds (sha256, queries)."""
    problems = set_problems(folder)
    for found in declared_sets(folder):
        try:
            load_qrels(found)
        except BaseUnavailable:
            continue  # checked where the official judgments are (validate and build warn of their absence)
        except IrboardError as error:
            problems.append(one_line(str(error)))
    return problems


def sets_of(dataset_id: str, folder: Path | None = None) -> list[JudgmentSet]:
    """The official set of `dataset_id` (when it has one), then its declared sets by name."""
    official = official_set(dataset_id)
    declared = sorted((s for s in declared_sets(folder) if s.dataset_id == dataset_id), key=lambda s: s.name)
    return ([official] if official is not None else []) + declared


def find_set(dataset_id: str, wanted: str, folder: Path | None = None) -> JudgmentSet:
    """The set of `dataset_id` named `wanted`: its name, its sha256 or a prefix of 12 or more hex digits of it.
    UnknownNameError says which exist."""
    sets = sets_of(dataset_id, folder)
    wanted = str(wanted).strip()
    for found in sets:
        if wanted == found.name or (len(wanted) >= 12 and found.sha256.startswith(wanted.lower())):
            return found
    names = [s.name for s in sets]
    raise UnknownNameError(f"judgments {wanted!r}: {dataset_id} has no such judgment set (it has "
                           f"{', '.join(names) or 'none'}); name one of them, or its sha256{did_you_mean(closest_names(wanted, names))}")


class BaseUnavailable(DatasetLoadError):
    """An extension's official set cannot be had here (offline, no copy): the set is not scored, as results are
    not verified without their judgments; not a fault of the declaration."""


def _extended(official, added, where: str):
    """The official qrels with `added`'s judgments; DatasetLoadError where `added` judges a pair the official set
    judges (an extension adds, never overrides) or a query the official set lacks."""
    from evaluator.metrics.ranking import Qrels

    base, more = official.to_dict(), added.to_dict()
    for query_id, judged in more.items():
        if query_id not in base:
            raise DatasetLoadError(f"{where}: file: query {query_id!r} is not one the official set judges; a set "
                                   "that extends it judges more documents of its queries only")
        again = next((doc_id for doc_id in judged if doc_id in base[query_id]), None)
        if again is not None:
            raise DatasetLoadError(f"{where}: file: query {query_id!r}, document {again!r} is judged by the "
                                   "official set already; a set that extends it holds only the judgments it adds")
        base[query_id] = {**base[query_id], **judged}
    return Qrels.from_dict(base)


def load_qrels(found: JudgmentSet, official_loader=None):
    """The qrels of a declared set, their bytes' sha256 and their queries checked against the declaration and the
    dataset (DatasetLoadError on one line naming the declaration and the fix). `official_loader(dataset_id)`
    gives the official set's qrels (default: `official.official_qrels`)."""
    from evaluator.datasets.download import cache_root, fetch_file, file_sha256
    from evaluator.datasets.official import known_query_ids_sha256, official_qrels
    from evaluator.datasets.spec import query_ids_sha256
    from evaluator.trec import read_qrels

    if found.official:
        return (official_loader or official_qrels)(found.dataset_id)
    where = found.declaration
    path = found.path
    if path is None:
        dest = cache_root() / "judgments" / found.file_sha256
        path = fetch_file(found.url, found.file_sha256, dest, f"copy the file to {dest}", max_bytes=MAX_QRELS_BYTES)
    elif path.stat().st_size > MAX_QRELS_BYTES:
        raise DatasetLoadError(f"{where}: file: {path.name} is over 256 MiB; judgments are a qrels file")
    elif file_sha256(path) != found.file_sha256:
        raise DatasetLoadError(f"{where}: sha256: {path.name} hashes to {file_sha256(path)}, not the declared "
                               f"{found.file_sha256}; pin the file's sha256, or restore the file")
    try:
        qrels = read_qrels(path)
    except IrboardError as error:
        raise DatasetLoadError(f"{where}: file: {one_line(str(error))}") from None
    if found.extends is not None:
        try:
            base = (official_loader or official_qrels)(found.dataset_id)
        except DatasetLoadError as error:
            raise BaseUnavailable(f"{where}: extends the official set, which is not available here: "
                                  f"{one_line(str(error))}") from None
        qrels = _extended(base, qrels, where)
    wanted = known_query_ids_sha256(found.dataset_id)
    if wanted is not None and query_ids_sha256(qrels.query_ids) != wanted:
        raise DatasetLoadError(f"{where}: its qrels judge other queries than the official ones of "
                               f"{found.dataset_id}; a judgment set judges every official query and no other")
    return qrels
