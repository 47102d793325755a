"""BEIR read from the hub's copies (``mteb/<name>``), through ``huggingface_hub`` and a real HTTP server.

The server (``hub_server.py``) stands in for huggingface.co via ``HF_ENDPOINT``. The files it serves
are written here, at test time, from ../shared/data/beir in the hub's formats: ``corpus.jsonl`` and
``queries.jsonl`` are BEIR's records re-serialised without ``metadata``, ``qrels/test.tsv`` BEIR's TSV
with CRLF line ends, or ``qrels/test.jsonl`` (SciFact's pin) its rows as JSON lines. For SciFact that gives
the hub's very bytes: the first test checks them against the sha256 published with the pinned commit.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest
import pytrec_eval

from evaluator.datasets import all_specs, beir_hub, get_spec, load_dataset
from evaluator.datasets.beir import NOT_PUBLIC
from evaluator.datasets.layout import read_beir_folder
from evaluator.errors import DatasetLoadError, InputFormatError
from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.cli import main

from .conftest import SHARED_DATA
from .hub_server import HubServer

BEIR = SHARED_DATA / "beir"
OFFICIAL = SHARED_DATA / "official"
SCIFACT = beir_hub.HUB_COPIES["scifact"]
NFCORPUS = beir_hub.HUB_COPIES["nfcorpus"]


def official_qrels(name: str) -> dict[str, dict[str, int]]:
    """The oracle: Anserini's ``qid 0 docid grade`` lines split by hand."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (OFFICIAL / "qrels" / f"qrels.beir-v1.0.0-{name}.test.txt").read_text(encoding="utf-8").splitlines():
        query_id, _, doc_id, grade = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


def official_topics(name: str) -> dict[str, str]:
    with gzip.open(OFFICIAL / "topics" / f"topics.beir-v1.0.0-{name}.test.tsv.gz", "rt", encoding="utf-8") as f:
        return dict(line.rstrip("\n").split("\t", 1) for line in f if line.strip())


def without_metadata(path: Path, keys: tuple[str, ...]) -> bytes:
    """BEIR's JSON lines re-serialised with ``keys`` only, as the hub copies hold them."""
    with open(path, encoding="utf-8") as f:
        return "".join(json.dumps({k: json.loads(line)[k] for k in keys}) + "\n" for line in f).encode("utf-8")


def write_copy(root: Path, copy: beir_hub.HubCopy, folder: Path) -> None:
    repo = root / copy.repo
    (repo / "qrels").mkdir(parents=True)
    if (folder / "corpus.jsonl").is_file():
        (repo / "corpus.jsonl").write_bytes(without_metadata(folder / "corpus.jsonl", ("_id", "title", "text")))
    (repo / "queries.jsonl").write_bytes(without_metadata(folder / "queries.jsonl", ("_id", "text")))
    tsv = (folder / "qrels" / "test.tsv").read_bytes()
    if copy.qrels_format == "jsonl":  # {"query-id", "corpus-id", "score": "<grade>"} a line, as json.dumps writes it
        rows = [line.split("\t") for line in tsv.decode().splitlines()[1:]]
        text = "".join(json.dumps({"query-id": q, "corpus-id": d, "score": g}) + "\n" for q, d, g in rows)
        (repo / "qrels" / "test.jsonl").write_text(text, encoding="utf-8")
    else:
        (repo / "qrels" / "test.tsv").write_bytes(tsv.replace(b"\n", b"\r\n"))


@pytest.fixture(scope="module")
def hub_root(tmp_path_factory) -> Path:
    """A folder laid out like the hub: ``<repository>/<path>``."""
    root = tmp_path_factory.mktemp("hub")
    write_copy(root, SCIFACT, BEIR / "scifact")
    write_copy(root, NFCORPUS, BEIR / "nfcorpus")  # queries and qrels only: the corpus is not in ../shared
    return root


def serve(root: Path, monkeypatch) -> HubServer:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    revisions = {repo: commit for copy in beir_hub.HUB_COPIES.values() for repo, commit in copy.revisions().items()}
    server = HubServer(root, revisions)
    server.__enter__()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    return server


@pytest.fixture
def hub(hub_root, monkeypatch):
    """The stand-in hub, with ``HF_ENDPOINT`` pointing at it and the hub chosen as BEIR's source."""
    monkeypatch.setenv(beir_hub.SOURCE_ENV, "hub")
    server = serve(hub_root, monkeypatch)
    yield server
    server.stop()


def test_scifact_files_written_here_are_the_hubs_bytes(hub_root):
    assert len(SCIFACT.sha256) == 3
    for path, sha256 in SCIFACT.sha256.items():
        assert hashlib.sha256((hub_root / SCIFACT.repo / path).read_bytes()).hexdigest() == sha256, path
    sizes = {path: (hub_root / SCIFACT.repo / path).stat().st_size for path in SCIFACT.sha256}
    assert sizes == {"corpus.jsonl": 8_023_638, "queries.jsonl": 129_085, "qrels/test.jsonl": 19_940}


@pytest.mark.parametrize("name", ["scifact", "nfcorpus"])
def test_topics_and_qrels_from_the_hub_equal_the_official_ones(hub, tmp_path, name):
    spec = get_spec(f"beir/{name}")
    queries, qrels, _ = beir_hub.load_judgments(spec, cache_dir=tmp_path)
    assert qrels == official_qrels(name)  # query ids, judged documents and grades
    assert queries == official_topics(name)
    assert len(queries) == spec.num_queries
    resolved = {path for method, path in hub.requests if method == "GET" and "/resolve/" in path}
    repo = beir_hub.HUB_COPIES[name]
    qrels = f"qrels/test.{repo.qrels_format}"
    assert resolved == {f"/datasets/{repo.repo}/resolve/{repo.revision}/{p}" for p in ("queries.jsonl", qrels)}


def test_scifact_from_the_hub_equals_beirs_scifact(hub, tmp_path):
    dataset = load_dataset("beir/scifact", cache_dir=tmp_path)
    beir = read_beir_folder(BEIR / "scifact", get_spec("beir/scifact"))
    assert dataset.qrels == beir.qrels and dataset.queries == beir.queries
    assert dataset.corpus.ids == beir.corpus.ids
    assert dataset.corpus.titles == beir.corpus.titles and dataset.corpus.texts == beir.corpus.texts
    assert (dataset.spec.source, dataset.spec.revision, dataset.spec.md5) == (SCIFACT.repo, SCIFACT.revision, None)
    assert not (tmp_path / "beir").exists()  # BEIR's zip was not asked for


def evaluate(*args) -> int:
    return main(["evaluate", "--quiet", "--model", "bm25", "--dataset", "beir/scifact", *map(str, args)])


@pytest.mark.slow
def test_irboard_evaluate_on_scifact_through_the_hub_then_the_cache_then_offline(hub, tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    assert evaluate("--out", tmp_path / "first.json", "--cache-dir", cache) == 0
    expected = {f"/datasets/{SCIFACT.repo}/resolve/{SCIFACT.revision}/{path}" for path in SCIFACT.sha256}
    assert {path for method, path in hub.requests if method == "GET" and "/resolve/" in path} == expected

    result = read_result(tmp_path / "first.json")
    official = OFFICIAL / "qrels" / "qrels.beir-v1.0.0-scifact.test.txt"
    assert (result.dataset.id, result.dataset.split, result.dataset.revision) == ("beir/scifact", "test", SCIFACT.revision)
    assert (result.dataset.num_queries, result.dataset.num_docs) == (300, 5183)
    assert result.dataset.qrels_sha256 == read_qrels(official).sha256()
    run = {q: {d: s for d, s in ranking} for q, ranking in result.rankings().items()}
    oracle = pytrec_eval.RelevanceEvaluator(official_qrels("scifact"), {"ndcg_cut.10"}).evaluate(run)
    assert result.metrics["nDCG@10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in oracle.values()) / 300, abs=1e-9)
    assert result.metrics["nDCG@10"] > 0.6  # BM25 on SciFact: 0.665 to 0.679 in the literature

    hub.stop()
    asked = len(hub.requests)
    assert evaluate("--out", tmp_path / "second.json", "--cache-dir", cache, "--force") == 0  # from the cache
    assert len(hub.requests) == asked
    assert read_result(tmp_path / "second.json").metrics == result.metrics

    capsys.readouterr()
    monkeypatch.setattr(time, "sleep", lambda _s: None)  # the client's back-off between retries, skipped
    assert evaluate("--out", tmp_path / "third.json", "--cache-dir", tmp_path / "empty") == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("error: ")
    assert f"hf://datasets/mteb/scifact@{SCIFACT.revision[:12]}/corpus.jsonl: not in the cache" in error
    assert f"{hub.url} cannot be reached" in error and "DIR/mteb/scifact/corpus.jsonl" in error
    assert not (tmp_path / "third.json").exists()


# SciFact as BEIR's own hub copies hold it: BeIR/scifact (gzipped JSON lines) and BeIR/scifact-qrels (test.tsv)
BEIR_SCIFACT = beir_hub.beir_copy("scifact", "984eed826375f18d27936c4a32bf0f8491e3f414",
                                  "2938d17dc3b09882fdb8c12bbbe2e2dc0e75a029")


@pytest.fixture(scope="module")
def beir_layout_root(tmp_path_factory) -> Path:
    """BEIR's SciFact files laid out as ``BeIR/scifact`` and ``BeIR/scifact-qrels``, written here."""
    root = tmp_path_factory.mktemp("beir-layout")
    corpus, queries, qrels = BEIR_SCIFACT.files("test")
    for file, source in ((corpus, "corpus.jsonl"), (queries, "queries.jsonl")):
        file.mirror_path(root).parent.mkdir(parents=True, exist_ok=True)
        with open(BEIR / "scifact" / source, "rb") as src, gzip.open(file.mirror_path(root), "wb") as dst:
            shutil.copyfileobj(src, dst)
    qrels.mirror_path(root).parent.mkdir(parents=True)
    shutil.copyfile(BEIR / "scifact" / "qrels" / "test.tsv", qrels.mirror_path(root))
    return root


@pytest.mark.slow
def test_irboard_evaluate_on_beirs_own_layout_gzipped_with_a_separate_qrels_repository(
    beir_layout_root, tmp_path, monkeypatch
):
    monkeypatch.setitem(beir_hub.HUB_COPIES, "scifact", BEIR_SCIFACT)
    monkeypatch.setenv(beir_hub.SOURCE_ENV, "hub")
    hub = serve(beir_layout_root, monkeypatch)
    try:
        assert evaluate("--out", tmp_path / "result.json", "--cache-dir", tmp_path / "cache") == 0
    finally:
        hub.stop()
    corpus_at = f"/datasets/BeIR/scifact/resolve/{BEIR_SCIFACT.revision}"
    qrels_at = f"/datasets/BeIR/scifact-qrels/resolve/{BEIR_SCIFACT.qrels_at[1]}"
    resolved = {path for method, path in hub.requests if method == "GET" and "/resolve/" in path}
    assert resolved == {f"{corpus_at}/corpus.jsonl.gz", f"{corpus_at}/queries.jsonl.gz", f"{qrels_at}/test.tsv"}

    result = read_result(tmp_path / "result.json")
    assert (result.dataset.revision, result.dataset.num_queries, result.dataset.num_docs) == (
        BEIR_SCIFACT.revision, 300, 5183)
    assert result.dataset.qrels_sha256 == read_qrels(OFFICIAL / "qrels" / "qrels.beir-v1.0.0-scifact.test.txt").sha256()
    run = {q: {d: s for d, s in ranking} for q, ranking in result.rankings().items()}
    oracle = pytrec_eval.RelevanceEvaluator(official_qrels("scifact"), {"ndcg_cut.10"}).evaluate(run)
    assert result.metrics["nDCG@10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in oracle.values()) / 300, abs=1e-9)
    assert result.metrics["nDCG@10"] > 0.6

    # the same files as a mirror (--data-dir): read from the gzipped files, no network
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    dataset = load_dataset("beir/scifact", data_dir=beir_layout_root)
    beir = read_beir_folder(BEIR / "scifact", get_spec("beir/scifact"))
    assert dataset.qrels == beir.qrels and dataset.queries == beir.queries and dataset.corpus.ids == beir.corpus.ids
    assert dataset.corpus.texts == beir.corpus.texts and dataset.spec.source == "BeIR/scifact"


def test_a_damaged_gzip_from_the_hub_is_one_error_line(beir_layout_root, tmp_path, monkeypatch):
    root = tmp_path / "damaged"
    shutil.copytree(beir_layout_root, root)
    queries = BEIR_SCIFACT.files("test")[1].mirror_path(root)
    queries.write_bytes(queries.read_bytes()[:-200])  # cut short: the gzip stream ends early
    monkeypatch.setitem(beir_hub.HUB_COPIES, "scifact", BEIR_SCIFACT)
    with pytest.raises(DatasetLoadError) as raised:
        beir_hub.load_judgments(get_spec("beir/scifact"), data_dir=root)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith(f"{queries}: cannot read (") and "copy the file again" in str(raised.value)


def test_offline_mode_reads_the_cache_and_names_what_is_missing(hub, tmp_path, monkeypatch):
    from huggingface_hub import constants

    spec = get_spec("beir/scifact")
    beir_hub.load_judgments(spec, cache_dir=tmp_path)
    asked = len(hub.requests)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    queries, qrels, _ = beir_hub.load_judgments(spec, cache_dir=tmp_path)
    assert qrels == official_qrels("scifact") and len(queries) == 300
    with pytest.raises(DatasetLoadError, match=r"@cf10ab6856b1/corpus.jsonl: not in the cache .* cannot be reached"):
        load_dataset("beir/scifact", cache_dir=tmp_path)
    assert len(hub.requests) == asked


def test_a_file_with_other_bytes_is_refused_by_its_pinned_sha256(hub_root, tmp_path, monkeypatch):
    root = tmp_path / "tampered"
    shutil.copytree(hub_root, root)
    queries = root / SCIFACT.repo / "queries.jsonl"
    queries.write_bytes(queries.read_bytes().replace(b"biomaterials", b"biomaterialz", 1))  # same size
    server = serve(root, monkeypatch)
    try:
        with pytest.raises(DatasetLoadError) as raised:
            beir_hub.load_judgments(get_spec("beir/scifact"), cache_dir=tmp_path / "cache")
    finally:
        server.stop()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"hf://datasets/mteb/scifact@{SCIFACT.revision[:12]}/queries.jsonl: sha256 of ")
    assert f"expected the pinned file's {SCIFACT.sha256['queries.jsonl']}; delete " in message
    assert str(tmp_path / "cache" / "huggingface" / "datasets--mteb--scifact") in message


def test_a_download_shorter_than_the_hub_announces_is_refused(hub_root, tmp_path, monkeypatch):
    server = serve(hub_root, monkeypatch)
    qrels = f"/datasets/{SCIFACT.repo}/resolve/{SCIFACT.revision}/qrels/test.jsonl"
    server.bodies[qrels] = (hub_root / SCIFACT.repo / "qrels" / "test.jsonl").read_bytes()[:-100]
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    try:
        with pytest.raises(DatasetLoadError, match=r"qrels/test.jsonl: download from .* failed: .*19940"):
            beir_hub.load_judgments(get_spec("beir/scifact"), cache_dir=tmp_path)
    finally:
        server.stop()
    assert not list((tmp_path / "huggingface").glob("**/snapshots/**/test.jsonl"))


def test_a_mirror_laid_out_like_the_hub_needs_no_network(hub_root, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.delenv(beir_hub.SOURCE_ENV, raising=False)  # a hub mirror in --data-dir chooses the hub itself
    dataset = load_dataset("beir/scifact", data_dir=hub_root, cache_dir=tmp_path)
    assert (dataset.num_queries, dataset.num_docs) == (300, 5183)
    assert dataset.qrels == official_qrels("scifact") and dataset.spec.revision == SCIFACT.revision
    assert not (tmp_path / "huggingface").exists()
    beir_folder = load_dataset("beir/scifact", data_dir=BEIR / "scifact")  # a BEIR-layout folder is still read as one
    assert beir_folder.spec.md5 == get_spec("beir/scifact").md5 and beir_folder.qrels == dataset.qrels


def zip_only_in_docs() -> dict[str, str]:
    """The docs' table of BEIR ids read from the zip only: ``| `beir/<name>` | reason |`` rows under its heading."""
    text = (Path(__file__).parents[3] / "docs" / "datasets.md").read_text(encoding="utf-8")
    section = text.split("## BEIR ids without a hub copy", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `beir/([^`]+)` \| (.+) \|$", section, flags=re.MULTILINE)
    return {name: reason for name, reason in rows}


ZIP_ONLY = zip_only_in_docs()


def test_the_zip_stays_the_default_source(monkeypatch):
    unpinned = get_spec(f"beir/{next(iter(ZIP_ONLY))}")
    monkeypatch.delenv(beir_hub.SOURCE_ENV, raising=False)
    assert beir_hub.chosen_source(get_spec("beir/scifact"), None) == "zip"
    monkeypatch.setenv(beir_hub.SOURCE_ENV, "hub")
    assert beir_hub.chosen_source(get_spec("beir/scifact"), None) == "hub"
    assert beir_hub.chosen_source(unpinned, None) == "zip"  # no pinned hub copy: BEIR's zip
    monkeypatch.setenv(beir_hub.SOURCE_ENV, "github")
    with pytest.raises(DatasetLoadError, match=r"^IRBOARD_BEIR_SOURCE='github': unknown BEIR source; use one of zip, hub$"):
        load_dataset("beir/scifact")


def is_commit(revision: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def test_every_hub_copy_names_a_registered_beir_dataset_and_full_commits():
    for name, copy in beir_hub.HUB_COPIES.items():
        spec = get_spec(f"beir/{name}")
        assert copy.repo in (f"mteb/{name}", f"BeIR/{name}") and is_commit(copy.revision), name
        assert copy.qrels_format in ("tsv", "jsonl")
        corpus, queries, qrels = beir_hub.hub_files(spec)
        assert {corpus.repo, queries.repo} == {copy.repo} and corpus.revision == queries.revision == copy.revision
        if copy.repo.startswith("BeIR/"):  # BEIR's own copies: gzipped JSON lines, qrels in <repo>-qrels
            assert (corpus.path, queries.path) == ("corpus.jsonl.gz", "queries.jsonl.gz")
            assert (qrels.repo, qrels.path) == (f"{copy.repo}-qrels", f"{spec.split}.tsv") and is_commit(qrels.revision)
        else:
            assert (corpus.path, queries.path) == ("corpus.jsonl", "queries.jsonl")
            assert (qrels.repo, qrels.revision) == (copy.repo, copy.revision)
            assert qrels.path == f"qrels/{spec.split}.{copy.qrels_format}"
    assert beir_hub.hub_files(get_spec("beir/msmarco"))[2].path == "qrels/dev.tsv"


def test_every_registered_beir_id_is_pinned_or_listed_as_zip_only_in_the_docs():
    registered = {spec.name for spec in all_specs() if spec.family == "beir"} - set(NOT_PUBLIC)  # no corpus to read
    assert len(registered) == 26
    assert set(beir_hub.HUB_COPIES).isdisjoint(ZIP_ONLY)
    assert set(beir_hub.HUB_COPIES) | set(ZIP_ONLY) == registered
    assert all(reason.strip() for reason in ZIP_ONLY.values())
    for name in ZIP_ONLY:
        with pytest.raises(DatasetLoadError, match=rf"^beir/{re.escape(name)}: no hub copy is pinned"):
            beir_hub.hub_files(get_spec(f"beir/{name}"))


def write_arguana(root: Path, qrels_lines: list[str]) -> None:
    """A tiny ArguAna-shaped copy whose qrels are JSON lines, as the pinned ArguAna commit publishes them."""
    repo = root / "mteb" / "arguana"
    (repo / "qrels").mkdir(parents=True)
    docs = [{"_id": "test-a-con01", "title": "A", "text": "cons"}, {"_id": "test-a-pro01", "title": "A", "text": "pros"}]
    (repo / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (repo / "queries.jsonl").write_text(json.dumps({"_id": "test-a-pro02a", "text": "why"}) + "\n", encoding="utf-8")
    (repo / "qrels" / "test.jsonl").write_text("".join(line + "\n" for line in qrels_lines), encoding="utf-8")


def test_json_lines_qrels_take_integer_strings(tmp_path):
    write_arguana(tmp_path, ['{"query-id": "test-a-pro02a", "corpus-id": "test-a-con01", "score": "1"}',
                             '{"query-id": "test-a-pro02a", "corpus-id": "test-a-pro01", "score": 0}'])
    unchecked = dataclasses.replace(get_spec("beir/arguana"), num_queries=None, num_docs=None)
    dataset = load_dataset(unchecked, data_dir=tmp_path)
    assert dataset.qrels == {"test-a-pro02a": {"test-a-con01": 1, "test-a-pro01": 0}}
    assert dataset.spec.revision == beir_hub.HUB_COPIES["arguana"].revision


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query-id": "test-a-pro02a", "corpus-id": "test-a-con01", "score": "high"}', r"test.jsonl:1: score 'high' is not"),
        ('{"query-id": "test-a-pro02a", "score": 1}', r"test.jsonl:1: missing field 'corpus-id'"),
        ('["test-a-pro02a", "test-a-con01", 1]', r"test.jsonl:1: expected a JSON object, got list"),
        ('{"query-id": "test-a-pro02a", "corpus-id": "test-a-con01", "score": true}', r"test.jsonl:1: score True is not"),
    ],
)
def test_malformed_json_lines_qrels_are_named_with_the_line(tmp_path, line, message):
    write_arguana(tmp_path, [line])
    with pytest.raises(InputFormatError, match=message):
        load_dataset("beir/arguana", data_dir=tmp_path)
