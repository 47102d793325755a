"""Datasets declared in the repository, and `local:` folders named for this process: a team's own collection on
the board, treated like a registered dataset.

A declaration is a small JSON file `datasets/<dataset_slug>.json` (the folder is `$IRBOARD_DATASETS`, else
`datasets` in the working folder): the id, the sha256 of its query ids (`evaluator.datasets.query_ids_sha256`)
and of its judgments (a result's `dataset.qrels_sha256`), its main metric and display group, and the evaluation
rules. `irboard evaluate`, `validate` and `build` look an id up here before the registry, so a result on a
declared id is held to the declared query set and judgments, as one on a registered id is to the official ones.

`--data-dir local:DIR` given to validate or build names a BEIR-layout folder for this process
(`declare_local`): results written by `evaluate --dataset local:DIR` (id `local/<folder slug>`) are then checked
and verified against that folder, as the evaluation was.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError, one_line

DECLARED_ENV = "IRBOARD_DATASETS"
DECLARED_DIR = "datasets"
MAX_DECLARATION_BYTES = 64 * 1024
_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$"
_SHA256 = r"^[0-9a-f]{64}$"


class Declaration(BaseModel):
    """The file's fields; unknown ones are refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: str = Field(pattern=_ID, max_length=200)
    name: str = Field("", max_length=200, pattern=r"^[^<>\x00-\x1f]*$")
    group: str = Field("Local", max_length=50, pattern=r"^[^<>\x00-\x1f]+$")
    main_metric: str = Field("nDCG@10", max_length=50)
    split: str = Field("test", pattern=r"^[a-zA-Z0-9._-]{1,50}$")
    language: str = Field("und", pattern=r"^[a-z]{2,3}(-[a-z]{2,3})?$")
    num_queries: int | None = Field(None, ge=1, le=10**7)
    num_docs: int | None = Field(None, ge=1, le=10**11)
    query_ids_sha256: str = Field(pattern=_SHA256)
    qrels_sha256: str = Field(pattern=_SHA256)
    relevance_level: int = Field(1, ge=1, le=1000)
    ignore_identical_ids: bool = False
    license: str = Field("", max_length=100, pattern=r"^[^<>\x00-\x1f]*$")
    description: str = Field("", max_length=1000, pattern=r"^[^<>\x00-\x1f]*$")


@dataclass(frozen=True)
class Declared:
    spec: DatasetSpec
    qrels_sha256: str | None  # the judgments results must be scored against (None: a local folder's, read there)
    source: str  # the declaration file or folder, for messages


# Names the site uses for its own: the mean over every dataset (leaderboard.analysis.aggregate.ALL_GROUP, whose
# page key is "all") and the group of an id no one defined (catalog.dataset_info); `local/` ids are the folders
# named with --data-dir local:DIR.
RESERVED_GROUPS = ("All datasets", "Other")
RESERVED_GROUP_KEYS = ("all", "group")  # the site's key of the all-datasets mean, and of a name without letters
RESERVED_FAMILIES = ("local",)


def group_key(name: str) -> str:
    """How the site names a group in its pages and anchors (leaderboard.web.views.ranks.group_key): two groups of one
    key would write one page twice."""
    return "".join(char for char in name.lower() if char.isalnum())


def clash(declaration: Declaration) -> str | None:
    """The first way `declaration` would take a name the board already uses (a registered id, slug, family, group
    or dataset name, or one the site reserves), as 'field: why; fix', or None. Read from the registry, so that
    every registered dataset is covered."""
    from evaluator.datasets.spec import all_specs

    specs = all_specs()
    slugs = {_slug(spec.id): spec.id for spec in specs}
    family = declaration.id.split("/", 1)[0].lower()
    families = {spec.id.split("/", 1)[0].lower() for spec in specs} | {spec.family.lower() for spec in specs}
    if _slug(declaration.id) in slugs:
        return (f"id: {declaration.id!r} is the registered dataset {slugs[_slug(declaration.id)]}, whose results are "
                "held to the registry; remove this declaration")
    if family in families or family in RESERVED_FAMILIES:
        whose = "reserved for the folders named with --data-dir local:DIR" if family in RESERVED_FAMILIES \
            else "a registered family"
        return (f"id: {family!r} is {whose}; declare the dataset under a family of your own, e.g. "
                f"'acme/{declaration.id.split('/')[-1]}'")
    key = group_key(declaration.group)
    groups = {group_key(spec.group): spec.group for spec in specs}
    reserved = {group_key(name): name for name in RESERVED_GROUPS} | {key: key for key in RESERVED_GROUP_KEYS}
    if key in groups or key in reserved or not key:
        taken = groups.get(key) or reserved.get(key)
        why = f"is the registered group {taken!r}" if key in groups else (
            f"is the site's own ({taken!r})" if key else "has no letter or digit")
        return f"group: {declaration.group!r} {why}; choose a group of your own, e.g. 'Acme'"
    names = {spec.name.lower(): spec.id for spec in specs if spec.name} | {spec.id.lower(): spec.id for spec in specs}
    if declaration.name.lower() in names:
        return f"name: {declaration.name!r} names the registered dataset {names[declaration.name.lower()]}; choose another name"
    return None


_LOCAL: dict[str, Declared] = {}  # id -> a folder named with --data-dir local:DIR in this process


def declared_dir() -> Path:
    return Path(os.environ.get(DECLARED_ENV) or DECLARED_DIR)


def _slug(dataset_id: str) -> str:
    return dataset_id.lower().replace("/", "__")


def declaration_path(dataset_id: str, folder: Path | None = None) -> Path:
    """Where the declaration of `dataset_id` lies: `<folder>/<dataset_slug>.json`."""
    return (folder or declared_dir()) / f"{_slug(dataset_id)}.json"


def read_declaration(path: Path) -> Declaration:
    """One declaration file, validated; DatasetLoadError names the file, the field and the fix, on one line (a field
    name from the file may hold a line break)."""
    try:
        return _read_declaration(path)
    except DatasetLoadError as error:
        raise DatasetLoadError(one_line(str(error))) from None


def _read_declaration(path: Path) -> Declaration:
    from evaluator.metrics.names import parse_measure

    try:
        if path.stat().st_size > MAX_DECLARATION_BYTES:
            raise DatasetLoadError(f"{path}: a dataset declaration is a small JSON file (at most 64 KB)")
        data = json.loads(path.read_bytes().decode("utf-8"))
        declaration = Declaration.model_validate(data)
        parse_measure(declaration.main_metric)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise DatasetLoadError(f"{path}: cannot read the dataset declaration ({error}); write it as JSON, "
                               "docs/datasets.md, \"Your own collection\"") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise DatasetLoadError(f"{path}: {where}: {first['msg']}; see docs/datasets.md, \"Your own "
                               "collection\"") from None
    except ValueError as error:
        raise DatasetLoadError(f"{path}: main_metric: {error}") from None
    if _slug(declaration.id) != path.stem:
        raise DatasetLoadError(f"{path}: declares {declaration.id!r}, whose file is {declaration_path(declaration.id, path.parent).name}; "
                               "rename the file")
    taken = clash(declaration)
    if taken is not None:
        raise DatasetLoadError(f"{path}: {taken}")
    return declaration


def to_spec(declaration: Declaration, source: str) -> DatasetSpec:
    return DatasetSpec(
        id=declaration.id, family="local", name=declaration.name or declaration.id, split=declaration.split,
        language=declaration.language, source=source, group=declaration.group, main_metric=declaration.main_metric,
        relevance_level=declaration.relevance_level, ignore_identical_ids=declaration.ignore_identical_ids,
        license=declaration.license, num_queries=declaration.num_queries, num_docs=declaration.num_docs,
        query_ids_sha256=declaration.query_ids_sha256, description=declaration.description)


def find_declared(dataset_id: str) -> Declared | None:
    """The declaration of `dataset_id` (a local folder named in this process, else a file in the declarations
    folder), or None."""
    if dataset_id in _LOCAL:
        return _LOCAL[dataset_id]
    if not re.fullmatch(_ID, dataset_id) or ".." in dataset_id:
        return None
    path = declaration_path(dataset_id)
    if not path.is_file():
        return None
    declaration = read_declaration(path)
    if declaration.id != dataset_id:
        return None  # another id of the same file name (case): the registry's message says what exists
    return Declared(to_spec(declaration, str(path)), declaration.qrels_sha256, str(path))


def check_declared_judgments(dataset_id: str, qrels, source: object) -> None:
    """A declared dataset's results are scored against the judgments and queries it declares: refuse others
    (IrboardError naming `source`, the declaration and the fix), so that `evaluate` never writes what `validate`
    refuses."""
    from evaluator.datasets.spec import query_ids_sha256
    from evaluator.errors import IrboardError

    declared = find_declared(dataset_id)
    if declared is None:
        return
    if declared.qrels_sha256 is not None and qrels.sha256() != declared.qrels_sha256:
        raise IrboardError(f"{source}: not the judgments {declared.source} declares for {dataset_id} (sha256 "
                           f"{qrels.sha256()[:12]}…, declared {declared.qrels_sha256[:12]}…); use its judgments, or "
                           "declare these")
    wanted = declared.spec.query_ids_sha256
    if wanted is not None and query_ids_sha256(qrels.query_ids) != wanted:
        raise IrboardError(f"{source}: its judged queries are not the ones {declared.source} declares for "
                           f"{dataset_id} (query_ids_sha256); use its judgments, or fix the declaration")


def write_declaration(dataset_id: str, qrels, *, split: str = "test", relevance_level: int = 1,
                      ignore_identical_ids: bool = False) -> Path:
    """Declare `dataset_id` from its judgments (`evaluate --run --qrels … --declare`): the file to review and commit
    beside the result. Replaces an earlier declaration of the same id."""
    from evaluator.datasets.spec import query_ids_sha256
    from evaluator.result import write_atomic

    declaration = Declaration(id=dataset_id, split=split, relevance_level=relevance_level,
                              ignore_identical_ids=ignore_identical_ids, num_queries=len(qrels.query_ids),
                              query_ids_sha256=query_ids_sha256(qrels.query_ids), qrels_sha256=qrels.sha256())
    path = declaration_path(dataset_id)
    taken = clash(declaration)
    if taken is not None:  # never write what validate refuses
        raise DatasetLoadError(one_line(f"{path}: {taken}"))
    write_atomic(path, json.dumps(declaration.model_dump(exclude_defaults=False), indent=1, sort_keys=True) + "\n")
    return path


def unknown_remedy(dataset_id: str) -> str:
    """How to put results on an id that neither the registry nor a declaration knows."""
    where = "the folder it was evaluated on" if dataset_id.startswith("local/") else "its BEIR-layout folder"
    return (f"declare it in {declaration_path(dataset_id)} (docs/datasets.md, \"Your own collection\"), or pass "
            f"--data-dir local:DIR with {where}")


def declare_local(folder: Path | str) -> str:
    """Name a BEIR-layout folder for this process (`--data-dir local:DIR`); returns its id, `local/<slug>`."""
    from evaluator.datasets.local import local_spec

    spec = local_spec(f"local:{folder}")
    _LOCAL[spec.id] = Declared(spec, None, str(folder))
    return spec.id


def declared_ids() -> list[str]:
    """The ids declared by files in the declarations folder, and the local folders named in this process."""
    folder = declared_dir()
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    ids = []
    for path in files:
        try:
            ids.append(read_declaration(path).id)
        except DatasetLoadError:
            continue
    return sorted({*ids, *_LOCAL})


def declaration_files(folder: Path | None = None) -> list[Path]:
    """Every file of the declarations folder (hidden ones aside): each must be a declaration."""
    folder = folder or declared_dir()
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if not path.name.startswith("."))


def declaration_problems(folder: Path | None = None) -> list[str]:
    """One line for each declaration that does not read, takes a name the board uses (`clash`), or shares its
    group's page with another declaration's group; `irboard validate` and `build` both report these, whatever
    their caches hold."""
    problems, groups = [], {}
    for path in declaration_files(folder):
        if path.suffix != ".json" or not path.is_file():
            problems.append(f"{path}: not a dataset declaration; the folder holds <dataset_slug>.json files only")
            continue
        try:
            declaration = read_declaration(path)
        except DatasetLoadError as error:
            problems.append(one_line(str(error)))
            continue
        first = groups.setdefault(group_key(declaration.group), (declaration.group, path))
        if first[0] != declaration.group:
            problems.append(f"{path}: group: {declaration.group!r} and {first[0]!r} ({first[1]}) would share one page; "
                            "spell the group as that declaration does, or choose another")
    return problems


def declarations_digest(folder: Path | None = None) -> str:
    """The sha256 of every declaration (file names and bytes) and of the local folders named in this process: part
    of the key of every cache whose work depends on a dataset's definition (leaderboard.submissions.cache)."""
    import hashlib

    digest = hashlib.sha256()
    for path in declaration_files(folder):
        try:
            with path.open("rb") as stream:
                content = stream.read(MAX_DECLARATION_BYTES + 1)
        except OSError:
            content = b"\0unreadable"
        digest.update(f"{path.name}\n{len(content)}\n".encode())
        digest.update(content)
    for dataset_id, declared in sorted(_LOCAL.items()):
        digest.update(f"local\n{dataset_id}\n{declared.source}\n".encode())
    return digest.hexdigest()
