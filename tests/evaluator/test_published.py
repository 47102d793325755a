"""`python -m evaluator.published`: the manifest's runs downloaded from a real HTTP server on 127.0.0.1 standing in for
raw.githubusercontent.com, or from a mirror folder, checked by sha256 and size, and re-scored into results; a file that
is not the published one is one line and exit 1, with nothing cached or written. The repository's manifest is
checked against the run files kept in tests/data/runs (the same bytes, compressed)."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.published import MANIFEST, MIRROR_ENV, RAW_BASE_ENV, main, read_manifest
from evaluator.result import read_result
from tests.conftest import ROOT

RUNS = ROOT / "tests" / "data" / "runs"
COMMIT = "97f5fc162a4c6d664d14b1b930d56a6c759faf3a"
PATH = "retrieve_results/BM25/trec_results_dl20.txt"
BODY = lzma.decompress((RUNS / "dl20-bm25.trec.xz").read_bytes())
URL_PATH = f"/castorini/rank_llm/{COMMIT}/{PATH}"


def _manifest(tmp_path, body: bytes = BODY):
    manifest = {"models": {"pyserini-bm25": {"type": "lexical", "training_datasets": [], "open_weights": True}},
                "runs": [{"model_id": "pyserini-bm25", "dataset_id": "msmarco-passage/trec-dl-2020",
                          "source": {"repository": "castorini/rank_llm", "commit": COMMIT, "path": PATH,
                                     "license": "Apache-2.0"},
                          "sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body),
                          "references": [{"metric": "nDCG@10", "value": "0.4796", "url": "https://example.org/t"}]}]}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    return path


def _results(manifest, tmp_path):
    return main(["--manifest", str(manifest), "results", "--results-dir", str(tmp_path / "results"),
                 "--cache-dir", str(tmp_path / "cache")])


@pytest.fixture
def upstream(server, monkeypatch):
    server.files[URL_PATH] = BODY
    monkeypatch.setenv(RAW_BASE_ENV, server.base_url)
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    return server


def test_a_run_is_downloaded_checked_and_re_scored_with_its_source_and_then_read_from_the_cache(upstream, tmp_path):
    manifest = _manifest(tmp_path)
    assert _results(manifest, tmp_path) == 0
    assert upstream.requests == [URL_PATH]
    out = tmp_path / "results" / "pyserini-bm25" / "msmarco-passage__trec-dl-2020.json"
    first = read_result(out)
    source = first.provenance.source
    assert (source.repository, source.commit, source.path, source.license) == ("castorini/rank_llm", COMMIT, PATH,
                                                                              "Apache-2.0")
    assert round(first.metrics["nDCG@10"], 4) == 0.4796  # Anserini's published BM25 figure for DL20
    assert [(r.metric, r.value) for r in first.references] == [("nDCG@10", "0.4796")]
    assert first.model.training_datasets == [] and first.model.open_weights is True
    assert first.provenance.command.startswith("irboard evaluate --run ") and f"--source castorini/rank_llm@{COMMIT}:" \
        in first.provenance.command
    assert str(tmp_path) not in first.provenance.command.split("--results-dir")[0]  # no absolute cache path
    upstream.stop()  # a second run needs no network and gives the same result
    assert _results(manifest, tmp_path) == 0
    again = read_result(out)
    assert again.metrics == first.metrics and again.rankings() == first.rankings()
    assert again.header.model_dump(exclude={"provenance"}) == first.header.model_dump(exclude={"provenance"})


def test_the_recorded_command_re_creates_the_result_from_the_cache_on_another_machine(upstream, tmp_path):
    manifest = _manifest(tmp_path)
    assert _results(manifest, tmp_path) == 0
    out = tmp_path / "results" / "pyserini-bm25" / "msmarco-passage__trec-dl-2020.json"
    first = read_result(out)
    moved = tmp_path / "elsewhere"  # the cache as another machine's IRBOARD_CACHE holds it
    (tmp_path / "cache").rename(moved)
    out.unlink()
    env = {**os.environ, "IRBOARD_CACHE": str(moved), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", first.provenance.command], env=env, cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    again = read_result(out)
    assert again.metrics == first.metrics and again.rankings() == first.rankings()


def test_a_download_that_is_not_the_published_file_is_one_line_and_nothing_is_kept(upstream, tmp_path, capsys):
    upstream.files[URL_PATH] = BODY.replace(b"Q0", b"Q1", 1)  # same size, other bytes
    assert _results(_manifest(tmp_path), tmp_path) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "sha256 of the download is" in err
    assert not (tmp_path / "results").exists()
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []


def test_a_damaged_cached_copy_is_downloaded_again(upstream, tmp_path):
    manifest = _manifest(tmp_path)
    cached = tmp_path / "cache" / "published-runs" / "castorini" / "rank_llm" / COMMIT / PATH
    cached.parent.mkdir(parents=True)
    cached.write_bytes(BODY[:-10])
    assert _results(manifest, tmp_path) == 0 and upstream.requests == [URL_PATH]
    assert cached.read_bytes() == BODY


def test_a_mirror_folder_laid_out_like_the_raw_urls(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(RAW_BASE_ENV, "http://127.0.0.1:9")  # would fail: the mirror must be used instead
    mirror = tmp_path / "mirror"
    (mirror / URL_PATH.lstrip("/")).parent.mkdir(parents=True)
    (mirror / URL_PATH.lstrip("/")).write_bytes(BODY)
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    assert _results(_manifest(tmp_path), tmp_path) == 0
    (mirror / URL_PATH.lstrip("/")).write_bytes(BODY + b"1 Q0 2 101 0.1 x\n")  # longer than published
    again = tmp_path / "again"
    again.mkdir()
    assert _results(_manifest(again), again) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(mirror) in err


def test_a_manifest_entry_without_its_model_is_one_line(tmp_path, capsys):
    manifest = _manifest(tmp_path)
    data = json.loads(manifest.read_text())
    data["models"] = {}
    manifest.write_text(json.dumps(data))
    assert _results(manifest, tmp_path) == 1
    assert capsys.readouterr().err.strip() == (f"error: {manifest}: run 1: 'pyserini-bm25' is missing (a model id "
                                                "needs its entry in \"models\")")


def test_the_repository_manifest_names_the_files_kept_in_tests_data_runs_by_their_sha256():
    runs = read_manifest(MANIFEST)
    assert len(runs) >= 25 and len({run.dataset_id for run in runs}) >= 5
    readme = (RUNS / "README.md").read_text()
    rows = [line.split("`") for line in readme.splitlines() if line.startswith("| `") and ".xz` |" in line]
    kept = {parts[2].strip(" |") + parts[3]: parts[5] for parts in rows}  # repository@commit:path -> sha256
    by_source = {str(run.source): run for run in runs}
    matched = [source for source in kept if source in by_source]
    assert len(matched) >= 10
    for source in matched:
        assert by_source[source].sha256 == kept[source], source
    for name in ("dl20-bm25", "touche2020-bm25-multifield", "trec-covid-bm25-flat"):
        body = lzma.decompress((RUNS / f"{name}.trec.xz").read_bytes())
        assert hashlib.sha256(body).hexdigest() in {run.sha256 for run in runs if run.bytes == len(body)}, name
