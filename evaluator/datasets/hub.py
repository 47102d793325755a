"""Single files of Hugging Face hub dataset repositories, at pinned commits.

A hub family (miracl, mmarco, BEIR's hub copies) names each file it needs as a ``HubFile`` (repository, commit, path
in the repository) and gets a local path from ``fetch``:

- with ``--data-dir DIR``: ``DIR/<repository>/<path>``, a mirror laid out like the hub
  (``git clone`` of the dataset repositories into ``DIR/<owner>/``, or the files copied there);
- else the download cache ``<cache>/huggingface`` (``huggingface_hub``'s own layout), filled by
  ``hf_hub_download`` on first use. A file of a pinned commit found there is used without asking
  the hub, so a warm cache works offline.

No loading scripts and no ``datasets`` library: the families read the files line by line.
``HF_ENDPOINT`` (read at each download) points downloads at another hub or a mirror;
``HF_HUB_OFFLINE=1`` uses the cache only. A gated repository (MIRACL's ``miracl/miracl`` asks users to accept
its terms) needs a token of an account that accepted them in ``HF_TOKEN``: a 401 or 403 says so in one line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evaluator.datasets.download import cache_root, file_sha256
from evaluator.errors import DatasetLoadError

logger = logging.getLogger(__name__)

HUB_CACHE = "huggingface"  # folder of the download cache holding hub files
DEFAULT_ENDPOINT = "https://huggingface.co"
# huggingface_hub's error classes (by name: they moved between versions) and what they mean here
_HUB_ERRORS = {
    "RemoteEntryNotFoundError": "the repository has no such file at this commit",
    "EntryNotFoundError": "the repository has no such file at this commit",
    "RevisionNotFoundError": "the repository has no such commit",
    "RepositoryNotFoundError": "no such repository, or a private one",
}
TOKEN_ENV = "HF_TOKEN"  # huggingface_hub sends it with every request


@dataclass(frozen=True)
class HubFile:
    repo: str  # dataset repository, e.g. "miracl/miracl"
    revision: str  # the commit sha the file is pinned to
    path: str  # path inside the repository
    sha256: str | None = None  # of the file's bytes where published; checked on every use (see fetch)

    def mirror_path(self, root: str | Path) -> Path:
        """Where a mirror laid out like the hub keeps this file: ``root/<repository>/<path>``."""
        return Path(root, self.repo, *self.path.split("/"))

    def __str__(self) -> str:
        return f"hf://datasets/{self.repo}@{self.revision[:12]}/{self.path}"


def fetch(file: HubFile, data_dir: str | Path | None = None, cache_dir: str | Path | None = None) -> Path:
    """The local path of ``file``: in the mirror ``data_dir`` when given, else in the cache
    (downloaded on first use). A file with a published sha256 is refused when its bytes differ."""
    if data_dir is not None:
        path = file.mirror_path(data_dir)
        if not path.is_file():
            raise DatasetLoadError(
                f"{path}: file not found; a --data-dir for hub datasets mirrors the hub as "
                f"DIR/<repository>/<path in it> (here {file.repo}/{file.path}), or is a BEIR-layout folder"
            )
        fix = "replace it with the file of that commit"
    else:
        cache = cache_root(cache_dir) / HUB_CACHE
        path = _download(file, cache)
        repo_cache = cache / f"datasets--{file.repo.replace('/', '--')}"  # huggingface_hub's folder of the repository
        fix = f"delete {repo_cache} (a damaged download) and retry, or check that HF_ENDPOINT serves the hub's files"
    if file.sha256 is not None:
        digest = file_sha256(path)
        if digest != file.sha256:
            raise DatasetLoadError(
                f"{file}: sha256 of {path} is {digest}, expected the pinned file's {file.sha256}; {fix}"
            )
    return path


def _download(file: HubFile, cache: Path) -> Path:
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.utils import LocalEntryNotFoundError
    except ImportError:
        raise DatasetLoadError(
            f"{file}: the `huggingface_hub` package downloads hub datasets; install it with: "
            "pip install 'irboard[datasets]'"
        ) from None
    # read now rather than when huggingface_hub was imported, so a later HF_ENDPOINT is honoured
    endpoint = os.environ.get("HF_ENDPOINT", "").rstrip("/") or None
    hub = endpoint or DEFAULT_ENDPOINT
    mirror = f"or pass --data-dir with a mirror holding {file.mirror_path('DIR')}"
    try:
        with _quiet_hub_client():
            local = hf_hub_download(
                file.repo, file.path, repo_type="dataset", revision=file.revision, cache_dir=cache, endpoint=endpoint
            )
    except LocalEntryNotFoundError as err:  # not cached, and the hub unreachable (after retries) or HF_HUB_OFFLINE set
        status = _refusal_status(err)  # or a refusal the client took for an unreachable hub
        if status is not None:
            raise DatasetLoadError(_refused(file, hub, status, mirror)) from None
        raise DatasetLoadError(
            f"{file}: not in the cache {cache} and {hub} cannot be reached; connect "
            f"to the network (or set HF_ENDPOINT to a reachable mirror, unset HF_HUB_OFFLINE) and retry, {mirror}"
        ) from None
    # the hub client raises many unrelated types (HTTP, network, file system): each becomes one line
    except Exception as err:
        name = type(err).__name__
        detail = str(err).strip().splitlines()[0] if str(err).strip() else "no details"
        status = _refusal_status(err)
        if status is not None or name == "GatedRepoError":
            raise DatasetLoadError(_refused(file, hub, status, mirror)) from None
        meaning = _HUB_ERRORS.get(name, "check the network and retry")
        raise DatasetLoadError(
            f"{file}: download from {hub} failed: {meaning} ({name}: {detail}); {mirror}"
        ) from None
    logger.debug("%s is %s", file, local)
    return Path(local)


def _refusal_status(error: BaseException | None) -> int | None:
    """401 or 403 when the hub answered so anywhere in the error's chain (the client wraps some), else None."""
    for _ in range(20):  # a chain is short; the bound only guards against a cycle
        if error is None:
            return None
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return status
        error = error.__cause__ or error.__context__
    return None


def _refused(file: HubFile, hub: str, status: int | None, mirror: str) -> str:
    """The one line for a 401/403: the repository may be gated (MIRACL's topics and judgments are), which takes a
    hub account that accepted its terms and a token."""
    token = "the token in HF_TOKEN was refused" if os.environ.get(TOKEN_ENV) else f"{TOKEN_ENV} is not set"
    return (f"{file}: {hub} refused the download (HTTP {status or 'gated'}): the repository {file.repo} may need a "
            f"hub account that accepted its terms ({hub}/datasets/{file.repo}) and a token ({token}; create one at "
            f"{hub}/settings/tokens and export {TOKEN_ENV}=...), {mirror}")


@contextmanager
def _quiet_hub_client() -> Iterator[None]:
    """Silence the client's warning per retry while the hub cannot be reached: the failure, if it
    persists, becomes one error line."""
    hub_logger = logging.getLogger("huggingface_hub")
    level = hub_logger.level
    hub_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hub_logger.setLevel(level)
