"""MIRACL and mMARCO loaders against tiny datasets saved to disk with the `datasets` library."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import datasets
import pytest

from evaluator.datasets import get_spec, load_dataset
from evaluator.datasets.hub import HubTable, load_from_hub, read_passages
from evaluator.errors import DatasetLoadError, InputFormatError


def save(root: Path, hub_id: str, config: str | None, splits: dict[str, list[dict]]) -> None:
    folder = root / hub_id / config if config else root / hub_id
    datasets.DatasetDict(
        {name: datasets.Dataset.from_list(rows) for name, rows in splits.items()}
    ).save_to_disk(str(folder))


def passage(docid: str) -> dict:
    return {"docid": docid, "title": f"title {docid}", "text": f"text {docid}"}


MIRACL_TOPICS = [
    {
        "query_id": "1",
        "query": "Swali la kwanza",
        "positive_passages": [passage("10#0")],
        "negative_passages": [passage("10#1"), passage("11#0")],
    },
    {
        "query_id": "2",
        "query": "Swali la pili",
        "positive_passages": [passage("11#0"), passage("12#0")],
        "negative_passages": [],
    },
    {"query_id": "3", "query": "Bila hukumu", "positive_passages": [], "negative_passages": []},
]
MIRACL_CORPUS = [passage(docid) for docid in ["10#0", "10#1", "11#0", "12#0", "13#0"]]


def unchecked(dataset_id: str):
    """The registered spec without its official counts, so tiny fixtures load."""
    return dataclasses.replace(get_spec(dataset_id), num_queries=None, num_docs=None)


@pytest.fixture(scope="module")
def miracl_mirror(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mirror")
    save(root, "miracl/miracl", "sw", {"dev": MIRACL_TOPICS, "train": MIRACL_TOPICS[:1]})
    save(root, "miracl/miracl-corpus", "sw", {"train": MIRACL_CORPUS})
    return root


def test_miracl_keeps_negatives_as_grade_zero(miracl_mirror):
    dataset = load_dataset(unchecked("miracl/sw"), data_dir=miracl_mirror)
    assert dataset.qrels == {
        "1": {"10#0": 1, "10#1": 0, "11#0": 0},
        "2": {"11#0": 1, "12#0": 1},
    }
    assert dataset.queries == {"1": "Swali la kwanza", "2": "Swali la pili"}  # query 3 has no judgments
    assert list(dataset.corpus) == ["10#0", "10#1", "11#0", "12#0", "13#0"]
    assert dataset.corpus["12#0"] == ("title 12#0", "text 12#0")


def test_miracl_official_spec_refuses_data_with_other_counts(miracl_mirror):
    with pytest.raises(DatasetLoadError, match=r"has 2 queries with qrels, expected 482 for miracl/sw"):
        load_dataset("miracl/sw", data_dir=miracl_mirror)


def test_miracl_other_split_reads_that_split(miracl_mirror):
    dataset = load_dataset(unchecked("miracl/sw"), data_dir=miracl_mirror, split="train")
    assert dataset.spec.split == "train" and list(dataset.qrels) == ["1"]


def test_miracl_judged_passage_missing_from_corpus_names_the_row(tmp_path):
    save(tmp_path, "miracl/miracl", "sw", {"dev": MIRACL_TOPICS})
    save(
        tmp_path, "miracl/miracl-corpus", "sw", {"train": [p for p in MIRACL_CORPUS if p["docid"] != "12#0"]}
    )
    with pytest.raises(
        InputFormatError, match=r"miracl/miracl config sw split dev row 2: document '12#0' is not in"
    ):
        load_dataset(unchecked("miracl/sw"), data_dir=tmp_path)


def test_miracl_missing_mirror_folder_is_named(tmp_path):
    with pytest.raises(DatasetLoadError, match=r"miracl/miracl/sw: not found; a --data-dir for hub datasets"):
        load_dataset("miracl/sw", data_dir=tmp_path)


def test_miracl_asks_the_hub_for_the_real_ids_configs_and_splits():
    asked: list[HubTable] = []
    tables = {"miracl/miracl": MIRACL_TOPICS, "miracl/miracl-corpus": MIRACL_CORPUS}

    def hub(table: HubTable):
        asked.append(table)
        return tables[table.path]

    for lang in ("en", "sw"):  # the official specs: the tiny tables then fail the count check
        with pytest.raises(DatasetLoadError, match="expected"):
            load_dataset(f"miracl/{lang}", hub_loader=hub)
    assert [(t.path, t.config, t.split, t.streaming) for t in asked] == [
        ("miracl/miracl", "en", "dev", False),
        ("miracl/miracl-corpus", "en", "train", True),  # 32.9M passages: streamed
        ("miracl/miracl", "sw", "dev", False),
        ("miracl/miracl-corpus", "sw", "train", False),  # 132k passages: not streamed
    ]


def test_failure_while_streaming_names_the_table():
    def hub(table: HubTable):
        if table.path == "miracl/miracl":
            return MIRACL_TOPICS

        def broken_stream():
            yield MIRACL_CORPUS[0]
            raise ConnectionError("connection reset")

        return broken_stream()

    with pytest.raises(
        DatasetLoadError, match=r"miracl/miracl-corpus config sw split train: reading failed after row 1"
    ):
        load_dataset(unchecked("miracl/sw"), hub_loader=hub)


ENGLISH = {0: "The cat sat.", 1: "Dogs bark loudly.", 2: "Paris is in France.", 3: "Unjudged passage."}
FRENCH = {0: "Le chat s'est assis.", 1: "Les chiens aboient fort.", 2: "Paris est en France.", 3: "Passage."}
QUERIES = {
    "french": [
        {"id": 100, "text": "où est Paris"},
        {"id": 200, "text": "chiens"},
        {"id": 300, "text": "sans qrels"},
    ],
    "english": [
        {"id": 100, "text": "where is Paris"},
        {"id": 200, "text": "dogs"},
        {"id": 300, "text": "no qrels"},
    ],
}
QRELS = [{"query-id": 100, "corpus-id": 2, "score": 1}, {"query-id": 200, "corpus-id": 1, "score": 1}]


@pytest.fixture(scope="module")
def mmarco_mirror(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mmarco")
    for language, collection in (("english", ENGLISH), ("french", FRENCH)):
        rows = [{"id": doc_id, "text": text} for doc_id, text in collection.items()]
        save(root, "unicamp-dl/mmarco", f"collection-{language}", {"collection": rows})
        save(
            root,
            "unicamp-dl/mmarco",
            f"queries-{language}",
            {"dev": QUERIES[language], "train": QUERIES[language][:1]},
        )
    save(root, "BeIR/msmarco-qrels", None, {"validation": QRELS, "test": QRELS[:1]})
    return root


def test_mmarco_monolingual_uses_one_language_for_queries_and_passages(mmarco_mirror):
    dataset = load_dataset(unchecked("mmarco/fr"), data_dir=mmarco_mirror)
    assert dataset.queries == {"100": "où est Paris", "200": "chiens"}
    assert dataset.corpus["2"] == ("", "Paris est en France.")
    assert dataset.qrels == {"100": {"2": 1}, "200": {"1": 1}}


def test_mmarco_cross_lingual_pairs_query_language_with_document_language(mmarco_mirror):
    dataset = load_dataset(unchecked("mmarco/fr-en"), data_dir=mmarco_mirror)
    assert dataset.queries == {"100": "où est Paris", "200": "chiens"}
    assert [dataset.corpus[d][1] for d in dataset.corpus] == list(ENGLISH.values())
    assert dataset.qrels == load_dataset(unchecked("mmarco/en"), data_dir=mmarco_mirror).qrels
    reverse = load_dataset(unchecked("mmarco/en-fr"), data_dir=mmarco_mirror)
    assert reverse.queries["100"] == "where is Paris" and reverse.corpus["2"][1] == "Paris est en France."


def test_mmarco_qrels_naming_an_unknown_query_are_refused(tmp_path, mmarco_mirror):
    save(
        tmp_path,
        "BeIR/msmarco-qrels",
        None,
        {"validation": QRELS + [{"query-id": 999, "corpus-id": 1, "score": 1}]},
    )
    for language in ("english", "french"):
        save(tmp_path, "unicamp-dl/mmarco", f"queries-{language}", {"dev": QUERIES[language]})
    save(tmp_path, "unicamp-dl/mmarco", "collection-english", {"collection": [{"id": 1, "text": "x"}]})
    with pytest.raises(
        DatasetLoadError, match=r"BeIR/msmarco-qrels split validation row 3: query '999' is not in"
    ):
        load_dataset(unchecked("mmarco/fr-en"), data_dir=tmp_path)


def test_mmarco_asks_the_hub_for_the_real_configs_and_splits():
    asked: list[HubTable] = []
    tables = {
        ("BeIR/msmarco-qrels", None): QRELS,
        ("unicamp-dl/mmarco", "queries-german"): QUERIES["french"],
        ("unicamp-dl/mmarco", "collection-japanese"): [{"id": k, "text": v} for k, v in FRENCH.items()],
    }

    def hub(table: HubTable):
        asked.append(table)
        return tables[table.path, table.config]

    load_dataset(unchecked("mmarco/de-ja"), hub_loader=hub)
    assert [(t.path, t.config, t.split, t.streaming) for t in asked] == [
        ("BeIR/msmarco-qrels", None, "validation", False),
        ("unicamp-dl/mmarco", "queries-german", "dev", False),
        ("unicamp-dl/mmarco", "collection-japanese", "collection", True),
    ]
    assert get_spec("mmarco/de-ja").main_metric == "RR@10"


def test_default_loader_goes_through_datasets_load_dataset(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")  # keep ~/.cache clean
    folder = tmp_path / "table"
    folder.mkdir()
    (folder / "train.jsonl").write_text(
        '{"docid": "a", "title": "T", "text": "x"}\n{"docid": "b", "text": "y"}\n', encoding="utf-8"
    )
    corpus = read_passages(load_from_hub, HubTable(str(folder), None, "train", streaming=True), expected=2)
    assert list(corpus.items()) == [("a", ("T", "x")), ("b", ("", "y"))]
    with pytest.raises(
        DatasetLoadError, match=r"absent split train: cannot load from the hub \(FileNotFoundError"
    ):
        load_from_hub(HubTable(str(tmp_path / "absent"), None, "train", streaming=True))


def test_script_based_hub_dataset_gets_an_actionable_error(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    repo = tmp_path / "miracl"
    repo.mkdir()
    (repo / "miracl.py").write_text("import datasets\n", encoding="utf-8")  # a legacy loading script
    with pytest.raises(DatasetLoadError, match=r"needs a loading script, .*or pass --data-dir"):
        load_from_hub(HubTable(str(repo), "sw", "dev"))
