"""The result file: strict schema, invariants, deterministic and atomic writing, committed schema.json."""

import copy
import json
import os
from pathlib import Path

import pytest

from evaluator.errors import OutputExistsError, ResultValidationError
from evaluator.result import (
    MAX_RESULT_BYTES,
    dump_result,
    parse_result,
    read_result,
    result_path,
    schema_json,
    slugify,
    write_result,
)

ROOT = Path(__file__).resolve().parents[2]


def valid_data() -> dict:
    per_query = {"q1": 0.5, "q2": 1.0, "q3": 0.0}
    return {
        "schema_version": 2,
        "model": {"id": "org/Model-1", "type": "dense", "revision": "abc", "parameters": 10, "dim": 4,
                  "license": "mit", "open_weights": True, "training_datasets": ["msmarco"],
                  "url": "https://example.org/m"},
        "dataset": {"id": "beir/scifact", "split": "test", "num_queries": 3, "num_docs": 10, "qrels_sha256": "a" * 64},
        "settings": {"top_k": 10, "ignore_identical_ids": False, "relevance_level": 1},
        "metrics": {"nDCG@10": 0.5},
        "per_query": {"nDCG@10": per_query},
        "run": {"depth": 2, "rankings": {"q1": [["d1", 2.5], ["d2", 1.0]]}},
        "provenance": {"irboard_version": "0.1.0", "command": "irboard evaluate", "created_at": "2026-01-01T00:00:00Z",
                       "hardware": "x", "timings": {"index_s": 1.0}, "peak_rss_bytes": 1},
    }


def test_valid_result_round_trips(tmp_path):
    result = parse_result(valid_data())
    path = write_result(result, tmp_path / "r.json")
    assert read_result(path) == result
    assert dump_result(read_result(path)) == path.read_text()  # deterministic


def test_output_sorted_and_rounded():
    data = valid_data()
    data["per_query"]["nDCG@10"]["q1"] = 0.5 + 1e-13
    text = dump_result(parse_result(data))
    assert json.loads(text)["per_query"]["nDCG@10"]["q1"] == 0.5
    assert list(json.loads(text)) == sorted(json.loads(text))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d["model"].update(id="../etc"), "not a valid id"),
        (lambda d: d["model"].update(id="оrg/model"), "not a valid id"),  # Cyrillic o
        (lambda d: d["model"].update(type="neural"), "model.type"),
        (lambda d: d["model"].update(url="javascript:alert(1)"), "http"),
        (lambda d: d["model"].update(parameters="10"), "model.parameters"),
        (lambda d: d["metrics"].update({"nDCG@10": 0.7}), "mean of its per_query"),
        (lambda d: d["metrics"].update({"ndcg@10": 0.5}), "same metrics"),
        (lambda d: (d["per_query"]["nDCG@10"].pop("q2"), d["metrics"].update({"nDCG@10": 0.25})), "num_queries"),
        (lambda d: d["per_query"]["nDCG@10"].update(q1=float("nan")), "finite"),
        (lambda d: d["run"]["rankings"]["q1"].append(["d1", 0.5]), "more than depth"),
        (lambda d: d["dataset"].update(qrels_sha256="xyz"), "qrels_sha256"),
        (lambda d: d.update(schema_version=3), "schema_version"),
    ],
)
def test_invalid_results_name_the_field(mutate, message):
    data = copy.deepcopy(valid_data())
    mutate(data)
    with pytest.raises(ResultValidationError) as error:
        parse_result(data, "results/x.json")
    assert str(error.value).startswith("results/x.json: ")
    assert message in str(error.value)


def test_read_refuses_nan_deep_nesting_bad_json_and_huge_files(tmp_path):
    cases = {
        "nan.json": json.dumps(valid_data()).replace("0.5", "NaN", 1),
        "deep.json": "[" * 1000 + "]" * 1000,
        "truncated.json": json.dumps(valid_data())[:100],
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ResultValidationError) as error:
            read_result(tmp_path / name)
            assert name in str(error.value)
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as stream:
        stream.truncate(MAX_RESULT_BYTES + 1)
    with pytest.raises(ResultValidationError, match="limit is 10 MB"):
        read_result(huge)


def test_existing_file_needs_force(tmp_path):
    result = parse_result(valid_data())
    path = write_result(result, tmp_path / "r.json")
    before = path.read_text()
    with pytest.raises(OutputExistsError):
        write_result(result, path)
    assert path.read_text() == before
    write_result(result, path, force=True)


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    result = parse_result(valid_data())

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_result(result, tmp_path / "r.json")
    assert list(tmp_path.iterdir()) == []


def test_paths_from_ids():
    assert slugify("sentence-transformers/all-MiniLM-L6-v2") == "sentence-transformers__all-minilm-l6-v2"
    assert result_path("bm25", "beir/cqadupstack/android") == Path("results/bm25/beir__cqadupstack__android.json")
    for bad in ["../x", "a//b", "a/./b", "a b", "<script>", "", "a/..", "x\\y"]:
        with pytest.raises(ValueError):
            slugify(bad)


def test_committed_schema_is_current():
    committed = (ROOT / "results" / "schema.json").read_text()
    assert committed == schema_json(), "results/schema.json is stale: run `make schema`"


def test_version_1_files_are_migrated(tmp_path):
    data = valid_data()
    data["schema_version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    result = read_result(path)
    assert result.schema_version == 2 and result.score_samples is None and result.provenance.index_bytes is None
