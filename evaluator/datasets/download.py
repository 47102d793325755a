"""The dataset cache and verified, all-or-nothing downloads of zip archives and single files.

An archive is downloaded to a temporary file, its md5 checked, extracted to a temporary folder
and only then renamed into place, so a cache entry exists only when it is complete: an
interrupted or corrupt download leaves nothing behind. Single files (``fetch_file``) are checked
against their sha256 (or another digest) the same way.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import IO

from evaluator.errors import DatasetLoadError, DownloadMismatchError
from evaluator.inflate import MAX_RATIO, RATIO_FLOOR

logger = logging.getLogger(__name__)

CACHE_ENV = "IRBOARD_CACHE"
CHUNK_BYTES = 1 << 20
DEFAULT_TIMEOUT_S = 60.0


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """``cache_dir``, else ``$IRBOARD_CACHE``, else ``$XDG_CACHE_HOME/irboard``, else ``~/.cache/irboard``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "irboard"


def fetch_archive(url: str, md5: str | None, dest: Path, timeout: float = DEFAULT_TIMEOUT_S) -> Path:
    """The extracted contents of the zip at ``url`` in folder ``dest``, downloaded if not there yet.

    A zip holding a single top folder (as BEIR's do) has that folder's contents placed in ``dest``.
    """
    if dest.is_dir():
        logger.debug("using cached %s", dest)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".zip.part", dir=dest.parent)
    archive = Path(tmp_name)
    staging: Path | None = None
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _download(url, out, timeout)
        if md5 is None:
            logger.warning("%s: no published md5 to check the download against", url)
        elif digest != md5.lower():
            raise DatasetLoadError(
                f"{url}: md5 of the download is {digest}, expected the published {md5}; the file is "
                "damaged or changed upstream: retry, or pass --data-dir with a verified copy"
            )
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".extract", dir=dest.parent))
        content = _extract(archive, staging, url)
        try:
            os.replace(content, dest)
        except OSError:
            if not dest.is_dir():  # not a concurrent download that finished first
                raise
        logger.info("cached %s in %s", url, dest)
        return dest
    finally:
        archive.unlink(missing_ok=True)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def fetch_file(url: str, digest: str, dest: Path, hint: str, timeout: float = DEFAULT_TIMEOUT_S,
               max_bytes: int | None = None, algorithm: str = "sha256") -> Path:
    """``dest``, downloaded from ``url`` (http(s) or file://) if not there yet and renamed into place only
    when its ``algorithm`` digest (sha256 unless told) is ``digest``. ``hint`` ends every error message: how else
    to supply the file. With ``max_bytes`` the download stops as soon as it is longer. DownloadMismatchError:
    another digest, or longer."""
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            received = _download(url, out, timeout, algorithm, hint, max_bytes)
        if received != digest.lower():
            raise DownloadMismatchError(
                f"{url}: {algorithm} of the download is {received}, expected {digest}; the file is damaged or "
                f"changed upstream: retry, or {hint}"
            )
        os.replace(tmp_name, dest)
        logger.info("cached %s in %s", url, dest)
        return dest
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url: str, out: IO[bytes], timeout: float, algorithm: str = "md5",
              hint: str = "pass --data-dir with a local copy", max_bytes: int | None = None) -> str:
    """Stream ``url`` into ``out``; returns the hex digest (``algorithm``). Short reads raise, and so (with
    DownloadMismatchError) does anything longer than ``max_bytes``."""
    from tqdm.auto import tqdm

    request = urllib.request.Request(url, headers={"User-Agent": "irboard"})
    digest = hashlib.new(algorithm)
    received = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if max_bytes is not None and (total or 0) > max_bytes:
                raise DownloadMismatchError(f"{url}: the server announces {total} bytes, more than the "
                                            f"{max_bytes} expected; the address points at another file")
            name = url.rsplit("/", 1)[-1]
            with tqdm(
                total=total, unit="B", unit_scale=True, desc=name, disable=not sys.stderr.isatty()
            ) as bar:
                while chunk := response.read(CHUNK_BYTES if max_bytes is None
                                             else min(CHUNK_BYTES, max_bytes + 1 - received)):
                    out.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
                    if max_bytes is not None and received > max_bytes:
                        raise DownloadMismatchError(f"{url}: the download passes the {max_bytes} bytes expected; "
                                                    "the address points at another file")
    except urllib.error.HTTPError as err:
        raise DatasetLoadError(
            f"{url}: server answered HTTP {err.code} {err.reason}; check the URL or retry later, or {hint}"
        ) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
        reason = getattr(err, "reason", err)
        raise DatasetLoadError(
            f"{url}: download failed after {received} bytes ({reason}); check the network and retry, or {hint}"
        ) from None
    if total is not None and received != total:
        raise DatasetLoadError(f"{url}: download stopped at {received} of {total} bytes; retry, or {hint}")
    return digest.hexdigest()


def _extract(archive: Path, staging: Path, url: str) -> Path:
    """Extract into ``staging``; returns the folder holding the contents."""
    try:
        with zipfile.ZipFile(archive) as zf:
            inflated = sum(info.file_size for info in zf.infolist())  # zipfile stops each member at its size
            if inflated > RATIO_FLOOR and inflated > MAX_RATIO * archive.stat().st_size:
                raise DatasetLoadError(f"{url}: the archive would inflate to {inflated:,} bytes, more than "
                                       f"{MAX_RATIO} times its size (a compression bomb?); refusing it")
            root = staging.resolve()
            for member in zf.namelist():
                if not (root / member).resolve().is_relative_to(root):
                    raise DatasetLoadError(
                        f"{url}: archive member {member!r} points outside the archive; refusing it"
                    )
            zf.extractall(staging)
    except zipfile.BadZipFile as err:
        raise DatasetLoadError(f"{url}: not a valid zip archive ({err}); retry the download") from None
    entries = [p for p in staging.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return staging
