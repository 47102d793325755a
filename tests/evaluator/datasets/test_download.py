"""The real download code against an HTTP server on 127.0.0.1 serving zips made from fixtures."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from evaluator.datasets import DatasetSpec, load_dataset
from evaluator.datasets.download import cache_root, fetch_archive
from evaluator.errors import DatasetLoadError

from .conftest import TINY_DOCS, TINY_QRELS, TINY_QUERIES, write_beir_folder


def zip_folder(folder: Path, top: str) -> bytes:
    """A zip holding ``folder``'s files under ``top/``, as BEIR's archives do."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def beir_spec(name: str, url: str, md5: str | None) -> DatasetSpec:
    return DatasetSpec(
        id=f"beir/{name}",
        family="beir",
        name=name,
        split="test",
        language="en",
        source=url,
        group="BEIR",
        md5=md5,
    )


@pytest.fixture
def mini_zip(tmp_path: Path) -> bytes:
    return zip_folder(write_beir_folder(tmp_path / "src", TINY_DOCS, TINY_QUERIES, TINY_QRELS), "mini")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_download_verifies_extracts_and_reuses_the_cache(server, mini_zip, tmp_path):
    server.files["/mini.zip"] = mini_zip
    spec = beir_spec("mini", f"{server.base_url}/mini.zip", hashlib.md5(mini_zip).hexdigest())
    cache = tmp_path / "cache"
    first = load_dataset(spec, cache_dir=cache)
    assert first.qrels == {"q1": {"d1": 2, "d3": 0}, "q2": {"d2": 1}}
    assert list(first.corpus) == ["d1", "d2", "d3"]
    assert (cache / "beir" / "mini" / "corpus.jsonl").is_file()
    assert server.requests == ["/mini.zip"]

    again = load_dataset(spec, cache_dir=cache)
    assert server.requests == ["/mini.zip"]  # served from the cache, no second request
    assert again.qrels == first.qrels and list(again.corpus.items()) == list(first.corpus.items())
    assert sorted(p.name for p in (cache / "beir").iterdir()) == ["mini"]  # no temporary files left


def test_md5_mismatch_is_an_error_and_caches_nothing(server, mini_zip, tmp_path):
    server.files["/mini.zip"] = mini_zip
    spec = beir_spec("mini", f"{server.base_url}/mini.zip", "0" * 32)
    cache = tmp_path / "cache"
    with pytest.raises(
        DatasetLoadError,
        match=r"mini\.zip: md5 of the download is [0-9a-f]{32}, expected the published 0{32}",
    ):
        load_dataset(spec, cache_dir=cache)
    assert leftovers(cache / "beir") == []


def test_connection_closed_mid_body_is_an_error_and_caches_nothing(server, mini_zip, tmp_path):
    server.files["/mini.zip"] = mini_zip
    server.truncate = True
    spec = beir_spec("mini", f"{server.base_url}/mini.zip", hashlib.md5(mini_zip).hexdigest())
    cache = tmp_path / "cache"
    with pytest.raises(DatasetLoadError, match=rf"stopped at {len(mini_zip) // 2} of {len(mini_zip)} bytes"):
        load_dataset(spec, cache_dir=cache)
    assert leftovers(cache / "beir") == []

    server.truncate = False  # a retry then succeeds
    assert load_dataset(spec, cache_dir=cache).num_queries == 2


def test_http_error_names_the_status(server, tmp_path):
    with pytest.raises(DatasetLoadError, match=r"absent\.zip: server answered HTTP 404"):
        fetch_archive(f"{server.base_url}/absent.zip", None, tmp_path / "absent")
    assert leftovers(tmp_path) == []


def test_a_zip_bomb_is_refused_before_extracting(server, tmp_path):
    """A 40 kB archive whose member inflates to 40 MB (1,000 times): refused from the sizes it declares, and
    nothing is written."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bomb/corpus.jsonl", bytes(40 << 20))
    server.files["/bomb.zip"] = buffer.getvalue()
    with pytest.raises(DatasetLoadError, match="would inflate to 41,943,040 bytes, more than 100 times its size"):
        fetch_archive(f"{server.base_url}/bomb.zip", hashlib.md5(buffer.getvalue()).hexdigest(), tmp_path / "b")
    assert leftovers(tmp_path) == []


def test_a_file_that_is_not_a_zip_is_refused(server, tmp_path):
    server.files["/broken.zip"] = b"not a zip at all"
    with pytest.raises(DatasetLoadError, match="not a valid zip archive"):
        fetch_archive(
            f"{server.base_url}/broken.zip", hashlib.md5(b"not a zip at all").hexdigest(), tmp_path / "b"
        )
    assert leftovers(tmp_path) == []


def test_cqadupstack_subforum_is_read_from_the_shared_archive(server, tmp_path):
    root = tmp_path / "cqa"
    write_beir_folder(root / "android", TINY_DOCS, TINY_QUERIES, TINY_QRELS)
    write_beir_folder(root / "gis", TINY_DOCS[:1], TINY_QUERIES[:1], TINY_QRELS[:1])
    archive = zip_folder(root, "cqadupstack")
    server.files["/cqadupstack.zip"] = archive
    url, md5 = f"{server.base_url}/cqadupstack.zip", hashlib.md5(archive).hexdigest()
    cache = tmp_path / "cache"
    android = load_dataset(beir_spec("cqadupstack/android", url, md5), cache_dir=cache)
    gis = load_dataset(beir_spec("cqadupstack/gis", url, md5), cache_dir=cache)
    assert android.num_queries == 2 and gis.qrels == {"q1": {"d1": 2}}
    assert server.requests == ["/cqadupstack.zip"]  # one archive for every subforum


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "explicit"))
    assert cache_root() == tmp_path / "explicit"
    assert cache_root(tmp_path / "argument") == tmp_path / "argument"
    monkeypatch.delenv("IRBOARD_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "irboard"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "irboard"
