"""The official-judgments registry against every official file, and its downloads against a server on 127.0.0.1
that serves the shared copy under the upstream's raw-URL layout (or as a mirror)."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from evaluator.datasets import all_specs
from evaluator.datasets.official import (
    COMMIT,
    MIRROR_ENV,
    RAW_BASE_ENV,
    REPOSITORY,
    all_official_judgments,
    cached_path,
    fetch_official,
    official_judgments,
    official_qrels,
)
from evaluator.errors import DatasetLoadError
from evaluator.trec import read_qrels
from tests.conftest import OFFICIAL, ROOT, SHARED

UPSTREAM_PREFIX = f"/{REPOSITORY}/{COMMIT}/"
SCIFACT_QRELS = "qrels/qrels.beir-v1.0.0-scifact.test.txt"


def _sums() -> dict[str, str]:
    return {line.split()[1]: line.split()[0] for line in (OFFICIAL / "SHA256SUMS").read_text().splitlines()}


def _cached_files(cache: Path) -> list[Path]:
    return [path for path in cache.rglob("*") if path.is_file()]


@pytest.fixture
def upstream(server, monkeypatch):
    """The server stands in for raw.githubusercontent.com; no mirror is set."""
    server.folders[UPSTREAM_PREFIX] = OFFICIAL
    monkeypatch.setenv(RAW_BASE_ENV, server.base_url)
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    return server


@pytest.mark.slow
def test_registry_holds_every_official_file_with_its_sha256_and_query_count(server, monkeypatch, tmp_path):
    server.folders["/mirror/"] = OFFICIAL
    monkeypatch.setenv(MIRROR_ENV, f"{server.base_url}/mirror")
    sums = _sums()
    files = {}
    for record in all_official_judgments():
        for file in (record.qrels, record.topics):
            files[file.path] = file
    assert sorted(files) == sorted(sums)  # all 98 files, no more, no fewer
    assert {path: file.sha256 for path, file in files.items()} == sums
    for record in all_official_judgments():
        qrels = read_qrels(fetch_official(record.qrels, tmp_path))  # downloaded through the mirror URL
        assert len(qrels.query_ids) == record.num_queries, record.dataset_id
        assert qrels.sha256() == record.judgments_sha256, record.dataset_id
        topics = fetch_official(record.topics, tmp_path).read_bytes()
        if record.topics.name.endswith(".gz"):
            topics = gzip.decompress(topics)
        topic_ids = [line.split("\t", 1)[0] for line in topics.decode("utf-8").splitlines() if line]
        if record.topics.name == "topics.dl20.txt":  # all 200 test queries; the 54 judged count
            assert len(topic_ids) == 200 and set(qrels.query_ids) < set(topic_ids)
        else:
            assert sorted(topic_ids) == sorted(qrels.query_ids), record.dataset_id
    for path, sha256 in sums.items():
        assert hashlib.sha256((tmp_path / "official" / path).read_bytes()).hexdigest() == sha256


def test_every_registered_dataset_but_the_classic_collections_has_official_judgments():
    for spec in all_specs():
        record = official_judgments(spec.id)
        if spec.family == "classic":
            assert record is None
            continue
        assert record is not None and record.registered, spec.id
        assert (record.split, record.num_queries) == (spec.split, spec.num_queries), spec.id
    shared = {r.dataset_id for r in all_official_judgments() if r.qrels.name.startswith("qrels.msmarco-passage")}
    assert shared == {"beir/msmarco"} | {s.id for s in all_specs() if s.family == "mmarco"}
    assert {r.dataset_id for r in all_official_judgments() if not r.registered} == {"beir/bioasq", "beir/signal1m"}


def test_miracl_keeps_its_judged_negatives_as_grade_zero():
    qrels = read_qrels(OFFICIAL / "qrels" / "qrels.miracl-v1.0-sw-dev.tsv").to_dict()
    assert (qrels["6"]["32589#0"], qrels["6"]["33690#3"]) == (1, 0)  # the file's first positive and negative
    assert {grade for judged in qrels.values() for grade in judged.values()} == {0, 1}


@pytest.mark.parametrize("name", ["scifact", "nfcorpus"])
def test_beir_tsv_qrels_are_the_official_judgments(name):
    tsv = read_qrels(SHARED / "data" / "beir" / name / "qrels" / "test.tsv")
    official = read_qrels(OFFICIAL / "qrels" / f"qrels.beir-v1.0.0-{name}.test.txt")
    assert tsv.query_ids == official.query_ids
    assert tsv.sha256() == official.sha256() == official_judgments(f"beir/{name}").judgments_sha256


def test_the_repository_scifact_results_name_the_official_judgments():
    paths = sorted((ROOT / "results").glob("*/beir__scifact.json"))
    assert paths
    for path in paths:
        assert json.loads(path.read_text())["dataset"]["qrels_sha256"] == official_judgments(
            "beir/scifact").judgments_sha256, path


def test_download_from_the_upstream_layout_then_cache_hit_with_the_server_stopped(upstream, tmp_path):
    qrels = official_qrels("beir/scifact", tmp_path)
    assert upstream.requests == [UPSTREAM_PREFIX + SCIFACT_QRELS]
    assert qrels.sha256() == official_judgments("beir/scifact").judgments_sha256
    assert _cached_files(tmp_path) == [tmp_path / "official" / SCIFACT_QRELS]
    upstream.stop()
    assert official_qrels("beir/scifact", tmp_path).sha256() == qrels.sha256()


def test_checksum_mismatch_is_an_error_and_caches_nothing(upstream, tmp_path):
    upstream.files[UPSTREAM_PREFIX + SCIFACT_QRELS] = b"1 0 31715818 1\n"
    with pytest.raises(DatasetLoadError, match=r"^beir/scifact: .*sha256 of the download is [0-9a-f]{64}, expected"):
        official_qrels("beir/scifact", tmp_path)
    assert _cached_files(tmp_path) == []


def test_interrupted_download_is_an_error_and_caches_nothing(upstream, tmp_path):
    upstream.truncate = True
    with pytest.raises(DatasetLoadError, match=r"download stopped at \d+ of \d+ bytes"):
        official_qrels("beir/scifact", tmp_path)
    assert _cached_files(tmp_path) == []
    upstream.truncate = False  # a retry then succeeds
    assert len(official_qrels("beir/scifact", tmp_path).query_ids) == 300


def test_offline_without_a_cache_says_what_is_missing_and_how_to_supply_it(upstream, tmp_path):
    upstream.stop()  # nothing listens there any more
    with pytest.raises(DatasetLoadError) as info:
        official_qrels("miracl/yo", tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("miracl/yo: official qrels not available: ")
    assert "qrels.miracl-v1.0-yo-dev.tsv" in message and MIRROR_ENV in message
    assert str(cached_path(official_judgments("miracl/yo").qrels, tmp_path)) in message
    assert _cached_files(tmp_path) == []


def test_offline_with_a_cached_copy_needs_no_network(upstream, tmp_path):
    upstream.stop()
    record = official_judgments("mmarco/fr-en")
    dest = cached_path(record.qrels, tmp_path)
    dest.parent.mkdir(parents=True)
    shutil.copy(OFFICIAL / record.qrels.path, dest)
    assert official_qrels("mmarco/fr-en", tmp_path).sha256() == record.judgments_sha256


def test_a_damaged_cached_copy_is_downloaded_again(upstream, tmp_path):
    dest = cached_path(official_judgments("beir/scifact").qrels, tmp_path)
    dest.parent.mkdir(parents=True)
    dest.write_text("1 0 31715818 1\n")
    assert len(official_qrels("beir/scifact", tmp_path).query_ids) == 300
    assert upstream.requests == [UPSTREAM_PREFIX + SCIFACT_QRELS]


def test_mirror_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(RAW_BASE_ENV, "http://127.0.0.1:9")  # would fail: the mirror must be used instead
    monkeypatch.setenv(MIRROR_ENV, str(OFFICIAL))
    assert official_qrels("beir/trec-covid", tmp_path).sha256() == official_judgments(
        "beir/trec-covid").judgments_sha256
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv(MIRROR_ENV, str(empty))
    with pytest.raises(DatasetLoadError, match=r"empty-mirror/qrels/qrels\.beir-v1\.0\.0-quora\.test\.txt"):
        official_qrels("beir/quora", tmp_path / "cache")


def test_mirror_url(server, monkeypatch, tmp_path):
    server.folders["/mirror/"] = OFFICIAL
    monkeypatch.setenv(MIRROR_ENV, f"{server.base_url}/mirror/")
    official_qrels("beir/cqadupstack/gis", tmp_path)
    assert server.requests == ["/mirror/qrels/qrels.beir-v1.0.0-cqadupstack-gis.test.txt"]


def test_a_dataset_without_official_judgments_says_so():
    with pytest.raises(DatasetLoadError, match=r"classic/cacm: has no official judgments.*--data-dir"):
        official_qrels("classic/cacm")
