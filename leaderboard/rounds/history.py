"""When each file of a round folder entered the repository, and every version of the files that must never
change (round.yml and the commitments), read from the first-parent history of main: for a pull request merged
on GitHub, the time GitHub made the merge or squash commit. Times in files, and the dates of a pull request's own
commits, are never read."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from evaluator.errors import one_line
from leaderboard.rounds.spec import ROUND_FILE, RoundError

COMMITMENTS, JUDGMENTS = "commitments", "judgments"
MAX_SMALL_FILE = 64_000


def tracked(path: str) -> bool:
    """Is every version of this file (relative to the round folder) kept: the rules, the commitments and the
    judgments (whose first entry decides whether a late judging window may still be reopened)."""
    return path == ROUND_FILE or path.startswith((f"{COMMITMENTS}/", f"{JUDGMENTS}/"))


@dataclass
class History:
    """What the repository's first-parent history says of a round folder (paths relative to it, '/'-separated):
    `times`, when each file present now last changed; `versions`, every version of round.yml and of each
    commitment that ever entered, oldest first, with the instant it entered (None: deleted)."""

    times: dict[str, datetime]
    versions: dict[str, list[tuple[datetime, bytes | None]]] = field(default_factory=dict)
    # commits on main dated before the commit before them: GitHub's merges only move forward, so one was pushed
    # or fast-forwarded with a date of its own choosing, and the times of its files cannot be trusted
    backwards: list[str] = field(default_factory=list)


def tree_history(folder: Path, times: Mapping[str, datetime]) -> History:
    """A History of the files present now, each entered once at `times[path]` (no earlier versions known)."""
    versions: dict[str, list[tuple[datetime, bytes | None]]] = {}
    for relative, instant in times.items():
        if tracked(relative):
            path = folder / relative
            plain = path.resolve() == folder.resolve() / relative and path.is_file()  # no link on the way
            if plain and path.stat().st_size <= MAX_SMALL_FILE:
                versions[relative] = [(instant, path.read_bytes())]
    return History(dict(times), versions)


def _git(folder: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, check=True, input=data).stdout


def git_history(folder: Path, rev: str = "HEAD") -> History:
    """The history of `folder` on the first-parent history of `rev`: each change counted at the committer time of
    the commit on that history that made it (for a pull request merged on GitHub, the time GitHub made the merge
    or squash commit). Times in files, and the dates of a pull request's own commits, are never read."""
    try:
        top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip())
        relative = folder.resolve().relative_to(top.resolve()).as_posix()
        out = _git(folder, "log", "--first-parent", "--diff-merges=first-parent", "--no-renames", "--reverse",
                   "--name-status", "-z", "--format=%x01%H %cI", rev, "--", ".").decode("utf-8", "replace")
    except (OSError, ValueError, subprocess.CalledProcessError) as error:
        detail = error.stderr.decode(errors="replace") if isinstance(error, subprocess.CalledProcessError) else error
        raise RoundError(f"{folder}: cannot read its git history ({one_line(str(detail))}); run inside a full "
                         "clone (fetch-depth: 0 in a workflow)") from None
    changes: list[tuple[datetime, str, str, str]] = []  # instant, commit, status, path relative to the folder
    backwards, previous = [], None
    for block in out.split("\x01")[1:]:
        head, _, rest = block.partition("\n")
        commit, iso = head.strip("\0 ").split(" ", 1)
        instant = datetime.fromisoformat(iso.strip()).astimezone(timezone.utc)
        if previous is not None and instant < previous:
            backwards.append(f"{folder}: commit {commit[:12]} on main is dated {instant.isoformat()}, before the "
                             f"commit before it ({previous.isoformat()}): the times of its files cannot be trusted; "
                             "every change to a round enters main by a merge GitHub makes (docs/rounds.md)")
        previous = instant if previous is None else max(previous, instant)
        fields = [f for f in rest.strip("\n\0").split("\0") if f]
        for status, name in zip(fields[::2], fields[1::2], strict=False):
            if name.startswith(relative + "/"):
                changes.append((instant, commit, status.strip()[:1], name[len(relative) + 1:]))
    times: dict[str, datetime] = {}
    for instant, _, _, path in changes:
        times[path] = instant  # oldest first: the last change stays
    blobs = _blobs(folder, relative, [(commit, path) for _, commit, status, path in changes
                                      if tracked(path) and status != "D"])
    history = History({path: instant for path, instant in times.items() if (folder / path).exists()},
                      backwards=backwards)
    for instant, commit, status, path in changes:
        if tracked(path):
            history.versions.setdefault(path, []).append((instant, None if status == "D" else blobs[(commit, path)]))
    return history


def _blobs(folder: Path, relative: str, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
    """The bytes of each (commit, path) in one `git cat-file --batch`; a file over the small-file limit is kept as
    its first bytes past it (so that it is refused as too large, unread)."""
    if not wanted:
        return {}
    request = "".join(f"{commit}:{relative}/{path}\n" for commit, path in wanted).encode()
    out = _git(folder, "cat-file", "--batch", data=request)
    found, position = {}, 0
    for key in wanted:
        header_end = out.index(b"\n", position)
        header = out[position:header_end].split()
        if len(header) < 3:  # "<name> missing"
            found[key], position = b"", header_end + 1
            continue
        size = int(header[2])
        start = header_end + 1
        found[key] = out[start:start + min(size, MAX_SMALL_FILE + 1)]
        position = start + size + 1
    return found
