"""What a pull request changes: every result added, changed, replaced, renamed or deleted, with the old and new
value of its dataset's main metric, and every file outside results/ (tooling, which needs a maintainer).

Run by .github/scripts/changed-results.sh from the base branch's checkout, with the pull request's checkout as
data: `python -I -m leaderboard.commands.changes --repo PR_DIR --base BASE_SHA --out DIR`. It reads git's NUL-separated
raw diff, so any file name (spaces, newlines, quotes) comes through as it is, and writes to DIR:

- `changed.nul`: the result files to validate and compare (present after the change), NUL-separated;
- `counts.json`: how many of each kind of change, integers only (the comment job posts nothing else);
- `changes.md`: the listing for the job summary, every cell escaped.

A changed file whose `model.id` or `model.revision` differs is "replaced" (a new model version takes the place
of an existing result), never a silent change. Exit status 1, with one line per problem on stderr, when something
under results/ is not a regular result file or cannot be read.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.errors import IrboardError
from evaluator.result import MAX_READ_BYTES, SLUG_PATTERN, ResultFile, read_result, slugify
from leaderboard.review.compare import markdown_cell
from leaderboard.review.identity import identity_flags
from leaderboard.submissions.catalog import main_metric

RESULTS = "results/"
TOOLING_FILES = {"results/schema.json"}  # generated from the schema code: a tooling change
REGULAR_FILES = {"100644", "100755"}
KINDS = ("added", "changed", "replaced", "renamed", "deleted")


@dataclass(frozen=True)
class Change:
    kind: str  # one of KINDS
    old_path: str | None
    new_path: str | None
    model_id: str
    dataset_id: str
    metric: str
    old_value: float | None
    new_value: float | None
    model_url: str = ""


@dataclass
class ChangeList:
    changes: list[Change]
    outside: list[str]  # changed files outside results/
    problems: list[str]
    identity: list[str] = field(default_factory=list)  # new model ids a reviewer should look at (review/identity.py)

    def counts(self) -> dict[str, int]:
        counts = {kind: sum(change.kind == kind for change in self.changes) for kind in KINDS}
        return {**counts, "outside": len(self.outside), "problems": len(self.problems)}


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=120).stdout


def raw_diff(repo: Path, base: str, head: str = "HEAD") -> list[tuple[str, str, str, str, str | None]]:
    """(status letter, old mode, new mode, path, new path or None) for every file changed between the merge base
    of `base` and `head`, from `git diff --raw -z` (names never quoted). Only identical content counts as a
    rename: results look alike, and an edited file that moved is listed as deleted and added."""
    merge_base = _git(repo, "merge-base", base, head).decode().strip()
    fields = _git(repo, "diff", "--raw", "-z", "--find-renames=100%", "--no-ext-diff", "--no-textconv", merge_base, head)
    tokens = fields.decode("utf-8", "surrogateescape").split("\0")
    entries, i = [], 0
    while i < len(tokens) and tokens[i]:
        old_mode, new_mode, _, _, status = tokens[i].lstrip(":").split(" ")
        if status[0] in "RC":  # renamed or copied: two names follow
            entries.append((status[0], old_mode, new_mode, tokens[i + 1], tokens[i + 2]))
            i += 3
        else:
            entries.append((status[0], old_mode, new_mode, tokens[i + 1], None))
            i += 2
    return entries


def is_result_path(path: str) -> bool:
    """`results/<model_slug>/<dataset_slug>.json`, slugs matched as whole strings (no trailing newline)."""
    parts = path.split("/")
    return (len(parts) == 3 and parts[0] == "results" and parts[2].endswith(".json") and path not in TOOLING_FILES
            and all(SLUG_PATTERN.fullmatch(slug) for slug in (parts[1], parts[2].removesuffix(".json"))))


def _read_at(repo: Path, revision: str, path: str) -> ResultFile:
    """The result at `revision:path`, through read_result so that the same size and nesting limits apply."""
    size = int(_git(repo, "cat-file", "-s", f"{revision}:{path}"))
    if size > MAX_READ_BYTES:
        raise IrboardError(f"{path!r} at {revision[:12]}: {size / 1e6:.1f} MB, the limit is "
                           f"{MAX_READ_BYTES / 1e6:.0f} MB")
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "result.json"
        copy.write_bytes(_git(repo, "cat-file", "blob", f"{revision}:{path}"))
        try:
            return read_result(copy)
        except IrboardError as error:
            raise IrboardError(str(error).replace(str(copy), f"{path!r} at {revision[:12]}", 1)) from None


def _change(kind: str, old_path: str | None, new_path: str | None, old: ResultFile | None,
            new: ResultFile | None) -> Change:
    shown = new or old
    metric = main_metric(shown.dataset.id, shown.metrics)
    if kind == "changed" and (old.model.id, old.model.revision) != (new.model.id, new.model.revision):
        kind = "replaced"
    return Change(kind, old_path, new_path, shown.model.id, shown.dataset.id, metric,
                  old.metrics.get(metric) if old else None, new.metrics.get(metric) if new else None, shown.model.url)


def _base_model_ids(repo: Path, base_sha: str) -> set[str]:
    """The model ids of the base's results, from their folder names (lower case, `/` for `__`)."""
    names = _git(repo, "ls-tree", "-r", "-z", "--name-only", base_sha, "--", RESULTS).decode("utf-8", "replace")
    return {path.split("/")[1].replace("__", "/") for path in names.split("\0") if is_result_path(path)}


def list_changes(repo: Path | str, base: str, head: str = "HEAD") -> ChangeList:
    repo = Path(repo)
    head_sha = _git(repo, "rev-parse", "--verify", f"{head}^{{commit}}").decode().strip()
    base_sha = _git(repo, "merge-base", base, head_sha).decode().strip()
    listing = ChangeList([], [], [])
    for status, old_mode, new_mode, path, renamed_to in raw_diff(repo, base, head_sha):
        old_path = None if status in "AC" else path
        new_path = renamed_to if renamed_to is not None else (None if status == "D" else path)
        paths = [p for p in (old_path, new_path) if p is not None]
        if not any(p.startswith(RESULTS) and p not in TOOLING_FILES for p in paths):
            listing.outside.extend(p for p in paths if p not in listing.outside)
            continue
        modes = [m for m, p in ((old_mode, old_path), (new_mode, new_path)) if p is not None]
        bad = [p for p in paths if not is_result_path(p)] + [p for p in paths if p in TOOLING_FILES]
        if bad or not set(modes) <= REGULAR_FILES:
            where = bad[0] if bad else paths[-1]
            listing.problems.append(f"{where!r}: not a result file; results/ holds only regular files "
                                    "<model_slug>/<dataset_slug>.json (lower-case [a-z0-9._-] slugs)")
            continue
        try:
            old = _read_at(repo, base_sha, old_path) if old_path else None
            new = _read_at(repo, head_sha, new_path) if new_path else None
        except (IrboardError, subprocess.CalledProcessError) as error:
            listing.problems.append(str(error) if isinstance(error, IrboardError) else f"{paths[-1]!r}: unreadable")
            continue
        kind = {"A": "added", "D": "deleted", "R": "renamed"}.get(status, "changed")
        listing.changes.append(_change(kind, old_path, new_path, old, new))
    existing = _base_model_ids(repo, base_sha)
    arriving = {c.model_id: c.model_url for c in listing.changes
                if c.new_path is not None and slugify(c.model_id).replace("__", "/") not in existing}
    listing.identity = identity_flags(arriving, existing)
    return listing


def _value(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def markdown(listing: ChangeList) -> str:
    counts = listing.counts()
    lines = ["## irboard: changed results", "",
             ", ".join(f"{counts[kind]} {kind}" for kind in KINDS) + f"; {counts['outside']} files outside results/.",
             ""]
    if listing.changes:
        lines += ["| change | file | model | dataset | metric | old | new |", "|---|---|---|---|---|---|---|"]
        for change in listing.changes:
            shown = [change.old_path, change.new_path] if change.kind == "renamed" else [change.new_path or
                                                                                           change.old_path]
            files = " → ".join(markdown_cell(path) for path in shown)
            kind = "**replaced** (another model version)" if change.kind == "replaced" else change.kind
            lines.append(f"| {kind} | {files} | {markdown_cell(change.model_id)} | {markdown_cell(change.dataset_id)} "
                         f"| {change.metric} | {_value(change.old_value)} | {_value(change.new_value)} |")
    if listing.outside:
        lines += ["", "Files outside results/ (they need a maintainer's approval):", ""]
        lines += [f"- {markdown_cell(path)}" for path in listing.outside]
    if listing.identity:
        lines += ["", "Model ids to check (new ids that look like existing ones, organisation claims without a "
                  "matching model.url; docs: CONTRIBUTING.md):", ""]
        lines += [f"- {markdown_cell(flag)}" for flag in listing.identity]
    if listing.problems:
        lines += ["", "Problems:", ""] + [f"- {markdown_cell(problem)}" for problem in listing.problems]
    return "\n".join(lines) + "\n"


def write_outputs(listing: ChangeList, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    present = [c.new_path for c in listing.changes if c.new_path is not None]
    (out / "changed.nul").write_bytes(b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in present))
    (out / "counts.json").write_text(json.dumps(listing.counts(), sort_keys=True) + "\n")
    (out / "changes.md").write_text(markdown(listing), encoding="utf-8", errors="surrogateescape")
