"""Where a built site comes from, for the footer of every page: the repository, the commit and its date.

The same input gives the same site, so the date is the commit's (or SOURCE_DATE_EPOCH's), never the clock's.
In GitHub Actions the repository and commit come from its environment; elsewhere from git in the results folder.
Anything not known is left out of the footer, never guessed."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path


@dataclass(frozen=True)
class BuildStamp:
    repository: str | None = None  # a web address of the repository
    commit: str | None = None  # the full commit id
    date: str | None = None  # YYYY-MM-DD, UTC
    # a pull request's preview (`irboard build --highlight`): the models whose rows every table marks
    highlight: tuple[str, ...] = ()

    @property
    def short_commit(self) -> str | None:
        return self.commit[:12] if self.commit else None

    @property
    def commit_href(self) -> str | None:
        if self.repository and self.commit and self.repository.startswith("https://github.com/"):
            return f"{self.repository}/commit/{self.commit}"
        return None


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def web_address(remote: str | None) -> str | None:
    """git@github.com:org/repo.git and https://github.com/org/repo.git -> https://github.com/org/repo; remotes
    that are not web addresses (a local path) and credentials in them are left out."""
    if not remote:
        return None
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):(.+?)(?:\.git)?/?", remote)
    if scp:
        return f"https://{scp.group(1)}/{scp.group(2)}"
    web = re.fullmatch(r"https?://(?:[^@/]+@)?([^/]+)/(.+?)(?:\.git)?/?", remote)
    return f"https://{web.group(1)}/{web.group(2)}" if web else None


def commit_time(folder: Path | str, commit: str = "HEAD") -> datetime | None:
    """The committer time of `commit` in the git checkout holding `folder` (UTC), or None outside one: the
    instant a build judges round phases at and the date its footer shows, so that a commit always builds the same
    site."""
    seconds = _git(Path(folder), "log", "-1", "--format=%ct", commit)
    return datetime.fromtimestamp(int(seconds), timezone.utc) if seconds and seconds.isdigit() else None


def build_stamp(results_dir: Path | str, environ: dict[str, str] | None = None) -> BuildStamp:
    environ = os.environ if environ is None else environ
    folder = Path(results_dir)
    repository = None
    if environ.get("GITHUB_SERVER_URL") and environ.get("GITHUB_REPOSITORY"):
        repository = f"{environ['GITHUB_SERVER_URL'].rstrip('/')}/{environ['GITHUB_REPOSITORY']}"
    repository = repository or web_address(_git(folder, "remote", "get-url", "origin"))
    commit = environ.get("GITHUB_SHA") or _git(folder, "rev-parse", "HEAD")
    date = None
    if environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        date = datetime.fromtimestamp(int(environ["SOURCE_DATE_EPOCH"]), timezone.utc).strftime("%Y-%m-%d")
    elif commit and (committed := commit_time(folder, commit)) is not None:
        date = committed.strftime("%Y-%m-%d")
    return BuildStamp(repository, commit, date)
