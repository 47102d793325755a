"""MIRACL and mMARCO read from the hub's files, through ``huggingface_hub`` and a real HTTP server.

The server (``hub_server.py``) stands in for huggingface.co via ``HF_ENDPOINT``. It serves the
official topics and qrels from ../shared/data/official under the hub's paths (at the pinned commit
the hub's MIRACL files are those very bytes; mMARCO's qrels are MS MARCO's dev-small qrels with
tabs, checked below by the md5 the hub publishes) and small corpora written here in the real
formats: gzipped JSON lines with ``docid``/``title``/``text`` for MIRACL, ``pid<TAB>text`` for mMARCO.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import random
import shutil
import time
from pathlib import Path

import pytest
import pytrec_eval

from evaluator.datasets import get_spec, load_dataset, miracl, mmarco
from evaluator.datasets.hub import HubFile, fetch
from evaluator.errors import DatasetLoadError, InputFormatError
from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.cli import main

from .conftest import SHARED_DATA, write_beir_folder
from .hub_server import HubServer

OFFICIAL = SHARED_DATA / "official"
MIRACL_LANGUAGES = [spec.name for spec in miracl.SPECS]
MSMARCO_QRELS = OFFICIAL / "qrels" / "qrels.msmarco-passage.dev-subset.txt"
MSMARCO_TOPICS = OFFICIAL / "topics" / "topics.msmarco-passage.dev-subset.txt"
REVISIONS = {
    miracl.TOPICS_REPO: miracl.TOPICS_REVISION,
    miracl.CORPUS_REPO: miracl.CORPUS_REVISION,
    mmarco.SOURCE: mmarco.REVISION,
}


def official_topics(path: Path) -> dict[str, str]:
    """The oracle: ``qid<TAB>text`` lines split by hand."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return dict(line.split("\t", 1) for line in lines if line)


def official_qrels(path: Path) -> dict[str, dict[str, int]]:
    """The oracle: ``qid Q0 docid grade`` lines split by hand."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        query_id, _, doc_id, grade = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


def write_lines(path: Path, lines: list[str], compress: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)


def miracl_passage(doc_id: str, title: str, text: str) -> str:
    return json.dumps({"docid": doc_id, "title": title, "text": text}, ensure_ascii=False)


def write_yoruba_corpus(root: Path) -> None:
    """All 49,043 passages MIRACL's Yoruba spec expects: every judged one, relevant ones worded like
    their question, and unjudged fillers."""
    topics = official_topics(OFFICIAL / "topics" / "topics.miracl-v1.0-yo-dev.tsv")
    judged: dict[str, str] = {}
    for query_id, docs in official_qrels(OFFICIAL / "qrels" / "qrels.miracl-v1.0-yo-dev.tsv").items():
        for doc_id, grade in docs.items():
            judged[doc_id] = topics[query_id] if grade > 0 else judged.get(doc_id, f"ìpínrọ̀ {doc_id}")
    rng = random.Random(7)
    words = ["ilé", "omi", "ọjà", "ìlú", "ìwé", "oúnjẹ", "ọ̀nà", "igbó", "odò", "àṣà"]
    lines = [miracl_passage(doc_id, f"Àkọlé {doc_id}", text) for doc_id, text in judged.items()]
    lines += [
        miracl_passage(f"{900000 + i}#0", "Àkọlé", " ".join(rng.choices(words, k=8)))
        for i in range(get_spec("miracl/yo").num_docs - len(judged))
    ]
    write_lines(miracl.corpus_files("yo")[0].mirror_path(root), lines, compress=True)


FRENCH = "fr: "  # mMARCO's French files here: the English text behind a marker, same ids


def write_mmarco(root: Path) -> None:
    repo = root / mmarco.SOURCE
    (repo / "data").mkdir(parents=True)
    # the hub's data/qrels.dev.small.tsv: MS MARCO's dev-small qrels with tab separators
    qrels = MSMARCO_QRELS.read_text(encoding="utf-8").replace(" ", "\t")
    (repo / mmarco.QRELS_FILE.path).write_text(qrels, encoding="utf-8")
    topics = official_topics(MSMARCO_TOPICS)
    write_lines(repo / mmarco.queries_file("en").path, [f"{q}\t{t}" for q, t in topics.items()])
    write_lines(repo / mmarco.queries_file("fr").path, [f"{q}\t{FRENCH}{t}" for q, t in topics.items()])
    passages = sorted({d for docs in official_qrels(MSMARCO_QRELS).values() for d in docs}, key=int)
    passages += [str(9_000_000 + i) for i in range(20)]  # unjudged
    for language, marker in (("en", ""), ("fr", FRENCH)):
        write_lines(repo / mmarco.collection_file(language).path, [f"{p}\t{marker}passage {p}" for p in passages])


@pytest.fixture(scope="module")
def hub_root(tmp_path_factory) -> Path:
    """A folder laid out like the hub: ``<repository>/<path>``."""
    root = tmp_path_factory.mktemp("hub")
    for lang in MIRACL_LANGUAGES:
        for file in (miracl.topics_file(lang, "dev"), miracl.qrels_file(lang, "dev")):
            target = file.mirror_path(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(OFFICIAL / file.path.split("/")[1] / file.path.split("/")[2], target)
    write_yoruba_corpus(root)
    write_mmarco(root)
    return root


@pytest.fixture
def hub(hub_root, monkeypatch):
    """The stand-in hub, with ``HF_ENDPOINT`` pointing at it."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with HubServer(hub_root, dict(REVISIONS)) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def unchecked(dataset_id: str):
    """The registered spec without its official counts, so small corpora load."""
    return dataclasses.replace(get_spec(dataset_id), num_queries=None, num_docs=None)


def test_mmarco_fixture_qrels_are_the_hubs_bytes(hub_root):
    data = (hub_root / mmarco.SOURCE / mmarco.QRELS_FILE.path).read_bytes()
    assert hashlib.md5(data).hexdigest() == "38a80559a561707ac2ec0f150ecd1e8a"  # published for the hub's file


def test_miracl_topics_and_qrels_from_the_hub_equal_the_official_ones_in_all_18_languages(hub, tmp_path):
    assert len(MIRACL_LANGUAGES) == 18
    for lang in MIRACL_LANGUAGES:
        spec = get_spec(f"miracl/{lang}")
        queries, qrels, _ = miracl.load_judgments(spec, cache_dir=tmp_path)
        expected_qrels = official_qrels(OFFICIAL / "qrels" / f"qrels.miracl-v1.0-{lang}-dev.tsv")
        assert qrels == expected_qrels, lang  # ids, judgments and grades, negatives as 0
        assert any(0 in judged.values() for judged in qrels.values()), lang
        assert queries == official_topics(OFFICIAL / "topics" / f"topics.miracl-v1.0-{lang}-dev.tsv"), lang
        assert len(queries) == spec.num_queries, lang
    resolved = {path for method, path in hub.requests if method == "GET" and "/resolve/" in path}
    assert len(resolved) == 36 and all(f"/resolve/{miracl.TOPICS_REVISION}/" in path for path in resolved)


def test_mmarco_queries_and_qrels_from_the_hub_equal_ms_marco_dev_small(hub, tmp_path):
    expected_qrels, topics = official_qrels(MSMARCO_QRELS), official_topics(MSMARCO_TOPICS)
    for dataset_id, prefix in (("mmarco/en", ""), ("mmarco/fr-en", FRENCH)):
        queries, qrels, _ = mmarco.load_judgments(get_spec(dataset_id), cache_dir=tmp_path)
        assert qrels == expected_qrels
        assert queries == {query_id: prefix + text for query_id, text in topics.items()}
        assert len(queries) == 6980 and sum(map(len, qrels.values())) == 7437


def test_mmarco_pairs_query_language_with_document_language(hub, tmp_path):
    french_on_english = load_dataset(unchecked("mmarco/fr-en"), cache_dir=tmp_path)
    assert french_on_english.queries["300674"] == FRENCH + official_topics(MSMARCO_TOPICS)["300674"]
    assert french_on_english.corpus["7067032"] == ("", "passage 7067032")
    assert len(french_on_english.corpus) == len({d for j in french_on_english.qrels.values() for d in j}) + 20
    english_on_french = load_dataset(unchecked("mmarco/en-fr"), cache_dir=tmp_path)
    assert english_on_french.corpus["7067032"] == ("", f"{FRENCH}passage 7067032")
    assert english_on_french.qrels == french_on_english.qrels
    collections = {path.rsplit("/", 1)[-1] for method, path in hub.requests if method == "GET"}
    assert {"english_collection.tsv", "french_collection.tsv", "french_queries.dev.small.tsv"} <= collections


def test_mmarco_official_spec_refuses_a_partial_collection(hub, tmp_path):
    with pytest.raises(DatasetLoadError, match=r"corpus has 7453 documents, expected 8841823 for mmarco/fr"):
        load_dataset("mmarco/fr", cache_dir=tmp_path)


def _evaluate(*args) -> int:
    return main(["evaluate", "--quiet", "--model", "bm25", "--dataset", "miracl/yo", *map(str, args)])


def test_irboard_evaluate_on_miracl_through_the_hub_then_the_cache_then_offline(hub, tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    assert _evaluate("--out", tmp_path / "first.json", "--cache-dir", cache) == 0
    revision = {miracl.TOPICS_REPO: miracl.TOPICS_REVISION, miracl.CORPUS_REPO: miracl.CORPUS_REVISION}
    expected = {
        f"/datasets/{file.repo}/resolve/{revision[file.repo]}/{file.path}"
        for file in [miracl.topics_file("yo", "dev"), miracl.qrels_file("yo", "dev"), *miracl.corpus_files("yo")]
    }
    assert {path for method, path in hub.requests if method == "HEAD"} == expected
    assert {path for method, path in hub.requests if method == "GET" and "/resolve/" in path} == expected

    result = read_result(tmp_path / "first.json")
    official = OFFICIAL / "qrels" / "qrels.miracl-v1.0-yo-dev.tsv"
    assert (result.dataset.id, result.dataset.split) == ("miracl/yo", "dev")
    assert (result.dataset.num_queries, result.dataset.num_docs) == (119, 49043)
    assert result.dataset.qrels_sha256 == read_qrels(official).sha256()
    run = {q: {d: s for d, s in ranking} for q, ranking in result.rankings().items()}
    oracle = pytrec_eval.RelevanceEvaluator(official_qrels(official), {"ndcg_cut.10"}).evaluate(run)
    expected_ndcg = sum(v["ndcg_cut_10"] for v in oracle.values()) / 119
    assert result.metrics["nDCG@10"] == pytest.approx(expected_ndcg, abs=1e-9)
    assert result.metrics["nDCG@10"] > 0.5  # relevant passages are worded like their question

    hub.stop()
    asked = len(hub.requests)
    cached = load_dataset("miracl/yo", cache_dir=cache)  # the server is stopped: nothing could answer
    assert len(hub.requests) == asked
    assert cached.qrels == official_qrels(official) and cached.num_docs == 49043

    capsys.readouterr()
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # the client's back-off between retries, skipped
    assert _evaluate("--out", tmp_path / "third.json", "--cache-dir", tmp_path / "empty") == 1
    error = capsys.readouterr().err
    assert len(waits) == 5  # the client retried before giving up
    assert error.count("\n") == 1 and error.startswith("error: ")
    assert f"hf://datasets/miracl/miracl@{miracl.TOPICS_REVISION[:12]}/miracl-v1.0-yo/topics/" in error
    assert f"not in the cache {tmp_path / 'empty'}" in error and f"{hub.url} cannot be reached" in error
    assert "--data-dir with a mirror holding DIR/miracl/miracl/miracl-v1.0-yo/topics/" in error
    assert not (tmp_path / "third.json").exists()


def test_offline_mode_uses_the_cache_only(hub, tmp_path, monkeypatch):
    from huggingface_hub import constants

    fetch(miracl.topics_file("yo", "dev"), cache_dir=tmp_path)
    asked = len(hub.requests)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert fetch(miracl.topics_file("yo", "dev"), cache_dir=tmp_path).is_file()
    with pytest.raises(DatasetLoadError, match=r"qrels.miracl-v1.0-yo-dev.tsv: not in the cache .* cannot be reached"):
        fetch(miracl.qrels_file("yo", "dev"), cache_dir=tmp_path)
    assert len(hub.requests) == asked


def test_hub_cache_keeps_files_under_the_pinned_commit(hub, tmp_path):
    path = fetch(miracl.topics_file("sw", "dev"), cache_dir=tmp_path)
    assert path == (
        tmp_path / "huggingface" / "datasets--miracl--miracl" / "snapshots" / miracl.TOPICS_REVISION
        / "miracl-v1.0-sw" / "topics" / "topics.miracl-v1.0-sw-dev.tsv"
    )
    assert path.read_bytes() == (OFFICIAL / "topics" / "topics.miracl-v1.0-sw-dev.tsv").read_bytes()


def test_missing_hub_file_is_one_line_naming_it(hub, tmp_path):
    with pytest.raises(DatasetLoadError) as raised:
        load_dataset(unchecked("miracl/yo"), split="test-a", cache_dir=tmp_path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(
        f"hf://datasets/miracl/miracl@{miracl.TOPICS_REVISION[:12]}/miracl-v1.0-yo/topics/topics.miracl-v1.0-yo-test-a.tsv: "
        f"download from {hub.url} failed: the repository has no such file at this commit ("
    )


def test_a_revision_the_hub_does_not_have_is_refused(hub, tmp_path):
    file = HubFile(miracl.TOPICS_REPO, "0" * 40, miracl.topics_file("yo", "dev").path)
    with pytest.raises(DatasetLoadError, match=r"@000000000000/miracl-v1.0-yo/.*failed: the repository has no such commit \(Revision"):
        fetch(file, cache_dir=tmp_path)


def test_mirror_laid_out_like_the_hub_needs_no_network(hub_root, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    dataset = load_dataset("miracl/yo", data_dir=hub_root, cache_dir=tmp_path)
    assert dataset.num_queries == 119 and dataset.num_docs == 49043
    assert dataset.qrels == official_qrels(OFFICIAL / "qrels" / "qrels.miracl-v1.0-yo-dev.tsv")
    assert not (tmp_path / "huggingface").exists()
    with pytest.raises(DatasetLoadError, match=r"miracl-corpus-v1.0-sw/docs-0.jsonl.gz: file not found; a --data-dir"):
        load_dataset("miracl/sw", data_dir=hub_root)


def test_beir_layout_copy_of_a_hub_dataset_still_loads(tmp_path):
    folder = write_beir_folder(
        tmp_path / "sw", [("1#0", "A", "a"), ("2#0", "B", "b")], [("q", "swali")], [("q", "1#0", 1)], split="dev"
    )
    dataset = load_dataset(unchecked("miracl/sw"), data_dir=folder)
    assert dataset.qrels == {"q": {"1#0": 1}} and list(dataset.corpus) == ["1#0", "2#0"]


def write_small_miracl(root: Path, shards: list[list[str]], qrels: list[str]) -> None:
    """Swahili topics, qrels and corpus shards in the hub layout."""
    write_lines(miracl.topics_file("sw", "dev").mirror_path(root), ["1\tSwali la kwanza", "2\tSwali la pili"])
    write_lines(miracl.qrels_file("sw", "dev").mirror_path(root), qrels)
    for file, lines in zip(miracl.corpus_files("sw"), shards, strict=True):
        write_lines(file.mirror_path(root), lines, compress=True)


def test_miracl_reads_every_shard_and_keeps_negatives(tmp_path, monkeypatch):
    monkeypatch.setattr(miracl, "_LANGUAGES", {**miracl._LANGUAGES, "sw": ("Swahili", 482, 131924, 2)})
    shards = [
        [miracl_passage("10#0", "Kumi", "maandishi"), miracl_passage("10#1", "Kumi", "zaidi")],
        ['{"docid": "11#0", "text": "bila kichwa"}'],
    ]
    write_small_miracl(tmp_path, shards, ["1\tQ0\t10#0\t1", "1\tQ0\t10#1\t0", "2\tQ0\t11#0\t1"])
    dataset = load_dataset(unchecked("miracl/sw"), data_dir=tmp_path)
    assert dataset.qrels == {"1": {"10#0": 1, "10#1": 0}, "2": {"11#0": 1}}
    assert list(dataset.corpus.items()) == [
        ("10#0", ("Kumi", "maandishi")), ("10#1", ("Kumi", "zaidi")), ("11#0", ("", "bila kichwa"))
    ]


@pytest.mark.parametrize(
    ("shards", "qrels", "error", "message"),
    [
        (
            [["{not json"]], ["1\tQ0\t10#0\t1"], InputFormatError,
            r"miracl-corpus-v1.0-sw/docs-0.jsonl.gz:1: malformed JSON",
        ),
        (
            [[miracl_passage("10#0", "", "a"), '{"docid": "11#0", "title": "x"}']], ["1\tQ0\t10#0\t1"],
            InputFormatError, r"docs-0.jsonl.gz:2: missing field 'text'",
        ),
        (
            [[miracl_passage("10#0", "", "a"), miracl_passage("10#0", "", "b")]], ["1\tQ0\t10#0\t1"],
            InputFormatError, r"docs-0.jsonl.gz:2: document id '10#0' repeats line 1",
        ),
        (
            [[miracl_passage("10#0", "", "a")]], ["1\tQ0\t10#0\t1", "2\tQ0\t12#0\t1"], InputFormatError,
            r"qrels.miracl-v1.0-sw-dev.tsv: document '12#0' is not in miracl/miracl-corpus sw passages",
        ),
        (
            [[miracl_passage("10#0", "", "a")]], ["3\tQ0\t10#0\t1"], InputFormatError,
            r"qrels.miracl-v1.0-sw-dev.tsv: judged query '3' is not in .*topics.miracl-v1.0-sw-dev.tsv",
        ),
        (
            [[miracl_passage("10#0", "", "a")]], ["1\tQ0\t10#0"], InputFormatError,
            r"qrels.miracl-v1.0-sw-dev.tsv line 1: ",
        ),
    ],
)
def test_malformed_hub_files_are_named_with_the_line(tmp_path, shards, qrels, error, message):
    write_small_miracl(tmp_path, shards, qrels)
    with pytest.raises(error, match=message):
        load_dataset(unchecked("miracl/sw"), data_dir=tmp_path)


def test_duplicate_passage_across_shards_names_both_files(tmp_path, monkeypatch):
    monkeypatch.setattr(miracl, "_LANGUAGES", {**miracl._LANGUAGES, "sw": ("Swahili", 482, 131924, 2)})
    shards = [[miracl_passage("10#0", "", "a")], [miracl_passage("11#0", "", "b"), miracl_passage("10#0", "", "c")]]
    write_small_miracl(tmp_path, shards, ["1\tQ0\t10#0\t1"])
    with pytest.raises(InputFormatError, match=r"docs-1.jsonl.gz:2: document id '10#0' repeats .*docs-0.jsonl.gz:1;"):
        load_dataset(unchecked("miracl/sw"), data_dir=tmp_path)


def test_mmarco_tsv_line_without_a_tab_is_named(hub_root, tmp_path):
    root = tmp_path / "mirror"
    shutil.copytree(hub_root / mmarco.SOURCE, root / mmarco.SOURCE)
    with open(mmarco.collection_file("de").mirror_path(root), "w", encoding="utf-8") as f:
        f.write("7067032\tein Satz\n7067056 kein Tab\n")
    with pytest.raises(InputFormatError, match=r"german_collection.tsv:2: expected 'id<TAB>text'"):
        load_dataset(unchecked("mmarco/en-de"), data_dir=root)


def test_mmarco_has_judgments_only_for_dev(hub, tmp_path):
    with pytest.raises(DatasetLoadError, match=r"mmarco/fr: split 'train' is not published with judgments"):
        load_dataset("mmarco/fr", split="train", cache_dir=tmp_path)


def test_specs_name_the_pinned_commits_and_main_metrics():
    assert get_spec("miracl/sw").revision == miracl.TOPICS_REVISION
    assert get_spec("mmarco/de-ja").revision == mmarco.REVISION
    assert get_spec("mmarco/de-ja").main_metric == "RR@10"
    assert [f.path for f in miracl.corpus_files("ja")][-1] == "miracl-corpus-v1.0-ja/docs-13.jsonl.gz"
    assert mmarco.queries_file("nl").path == "data/google/queries/dev/dutch_queries.dev.small.tsv"


@pytest.mark.parametrize(("status", "headers"), [
    (401, {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to dataset miracl/miracl is restricted."}),
    (403, {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to dataset miracl/miracl is restricted."}),
    (401, {}),
    (403, {}),
])
@pytest.mark.parametrize("token", [None, "hf_not_accepted"])
def test_a_gated_repository_says_account_terms_and_token(hub, tmp_path, monkeypatch, status, headers, token):
    """The hub answers a gated repository's files with 401 (no token) or 403 (terms not accepted)."""
    hub.refused[miracl.TOPICS_REPO] = (status, headers)
    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)
    with pytest.raises(DatasetLoadError) as raised:
        load_dataset(unchecked("miracl/yo"), cache_dir=tmp_path)
    message = str(raised.value)
    assert "\n" not in message and any(path.startswith("/datasets/miracl/miracl/") for _, path in hub.requests)
    assert f"{hub.url} refused the download (HTTP {status}): the repository miracl/miracl may need a hub account " \
           f"that accepted its terms ({hub.url}/datasets/miracl/miracl) and a token (" in message
    assert ("the token in HF_TOKEN was refused" if token else "HF_TOKEN is not set") in message
    assert "export HF_TOKEN=" in message and "--data-dir" in message
