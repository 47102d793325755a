"""Fixtures for dataset tests: the shared real data and tiny BEIR-layout folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SHARED

SHARED_DATA = SHARED / "data"


def write_beir_folder(
    folder: Path,
    docs: list[tuple[str, str, str]],
    queries: list[tuple[str, str]],
    qrels: list[tuple[str, str, int]],
    split: str = "test",
) -> Path:
    """A BEIR-layout folder with the given (id, title, text) docs, (id, text) queries and qrels."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for doc_id, title, text in docs:
            f.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for query_id, text in queries:
            f.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    with open(folder / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for query_id, doc_id, score in qrels:
            f.write(f"{query_id}\t{doc_id}\t{score}\n")
    return folder


TINY_DOCS = [("d1", "Cats", "cats purr"), ("d2", "", "dogs bark"), ("d3", "Birds", "birds sing")]
TINY_QUERIES = [("q1", "purring animals"), ("q2", "barking"), ("q3", "unjudged query")]
TINY_QRELS = [("q1", "d1", 2), ("q1", "d3", 0), ("q2", "d2", 1)]


@pytest.fixture
def tiny_folder(tmp_path: Path) -> Path:
    return write_beir_folder(tmp_path / "tiny", TINY_DOCS, TINY_QUERIES, TINY_QRELS)
