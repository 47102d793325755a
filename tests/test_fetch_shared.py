"""`make shared-data` (tests/data/fetch_shared.py) against a 127.0.0.1 server in the upstream's raw-URL layout."""

from pathlib import Path

from evaluator.datasets.official import COMMIT, MIRROR_ENV, RAW_BASE_ENV, REPOSITORY
from tests.conftest import OFFICIAL
from tests.data.fetch_shared import main


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_official_files_are_fetched_checksummed_and_then_only_checked(server, monkeypatch, tmp_path, capsys):
    server.folders[f"/{REPOSITORY}/{COMMIT}/"] = OFFICIAL
    monkeypatch.setenv(RAW_BASE_ENV, server.base_url)
    monkeypatch.delenv(MIRROR_ENV)
    dest = tmp_path / "shared"
    assert main([str(dest), "--only", "official"]) == 0
    fetched = _files(dest / "data" / "official")
    expected = {name: data for name, data in _files(OFFICIAL).items() if name != "DATA.md"}
    assert fetched.keys() == expected.keys() and len(fetched) == 99  # 98 files (TREC DL 2019/2020 included) and SHA256SUMS
    assert all(fetched[name] == expected[name] for name in fetched if name != "SHA256SUMS")
    assert sorted(fetched["SHA256SUMS"].splitlines()) == sorted(expected["SHA256SUMS"].splitlines())
    assert len(server.requests) == 98

    server.stop()
    assert main([str(dest), "--only", "official"]) == 0  # all there: checked, nothing fetched
    (dest / "data" / "official" / "qrels" / "qrels.beir-v1.0.0-nq.test.txt").write_text("1 0 d 1\n")
    assert main([str(dest), "--only", "official"]) == 1
    assert "qrels.beir-v1.0.0-nq.test.txt: sha256 is" in capsys.readouterr().err


def test_an_interrupted_fetch_leaves_no_partial_file(server, monkeypatch, tmp_path, capsys):
    server.folders[f"/{REPOSITORY}/{COMMIT}/"] = OFFICIAL
    server.truncate = True
    monkeypatch.setenv(RAW_BASE_ENV, server.base_url)
    monkeypatch.delenv(MIRROR_ENV)
    assert main([str(tmp_path), "--only", "official"]) == 1
    assert "download stopped at" in capsys.readouterr().err
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_unknown_part_is_an_error(tmp_path, capsys):
    assert main([str(tmp_path), "--only", "classic,everything"]) == 1
    assert "unknown part(s) everything" in capsys.readouterr().err
