"""The result file: strict schema, invariants, deterministic and atomic writing, committed schema.json."""

import copy
import json
import os
from pathlib import Path

import pytest

from evaluator.errors import OutputExistsError, ResultValidationError
from evaluator.result import (
    MAX_READ_BYTES,
    SCHEMA_VERSION,
    dump_result,
    parse_result,
    parse_result_text,
    read_result,
    result_path,
    schema_json,
    size_limit,
    slugify,
    write_result,
)

ROOT = Path(__file__).resolve().parents[2]


def valid_data() -> dict:
    per_query = {"q1": 0.5, "q2": 1.0, "q3": 0.0}
    return {
        "schema_version": 3,
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


def same(a, b) -> bool:
    """Two results hold the same information."""
    return (a.header == b.header and a.query_ids == b.query_ids and a.per_query.keys() == b.per_query.keys()
            and all((a.per_query[m] == b.per_query[m]).all() for m in a.per_query) and a.rankings() == b.rankings())


def test_valid_result_round_trips(tmp_path):
    result = parse_result(valid_data())
    path = write_result(result, tmp_path / "r.json")
    again = read_result(path)
    assert same(again, result) and again.source_version == SCHEMA_VERSION
    assert again.values("nDCG@10") == {"q1": 0.5, "q2": 1.0, "q3": 0.0}
    assert again.rankings() == {"q1": [("d1", 2.5), ("d2", 1.0)]}
    assert dump_result(again) == path.read_text()  # deterministic


def test_readable_part_is_plain_json_with_sorted_keys():
    data = valid_data()
    data["metrics"]["nDCG@10"] = 0.5 + 1e-13
    document = json.loads(dump_result(parse_result(data)))
    assert document["metrics"] == {"nDCG@10": 0.5}  # means rounded to 10 decimals, readable in a diff
    assert document["model"]["id"] == "org/Model-1" and document["schema_version"] == SCHEMA_VERSION
    assert list(document) == sorted(document)
    assert set(document["per_query"]) == {"query_ids", "values"}
    assert set(document["run"]) == {"depth", "doc_ids", "lengths", "docs", "scores"}


def test_ids_beyond_ascii_work_end_to_end(tmp_path):
    data = valid_data()
    data["per_query"]["nDCG@10"] = {"123#4": 0.5, "Ελλάδα": 1.0, "東京_(都)": 0.0}
    data["run"]["rankings"] = {"Ελλάδα": [["<dbpedia:Zürich>", 2.0], ["Αθήνα#1", 1.0]]}
    result = parse_result(data)
    again = read_result(write_result(result, tmp_path / "r.json"))
    assert same(again, result)
    assert again.rankings()["Ελλάδα"][0] == ("<dbpedia:Zürich>", 2.0)


@pytest.mark.parametrize("bad", ["a b", "a\nb", "a\tb", "a\x00", "a\u2028b", "", "x" * 501])
def test_ids_with_whitespace_or_control_characters_are_refused(bad):
    data = valid_data()
    data["per_query"]["nDCG@10"] = {bad: 0.5, "q2": 1.0, "q3": 0.0}
    data["run"] = None
    with pytest.raises(ResultValidationError, match="per_query.query_ids: id"):
        parse_result(data, "r.json")
    data = valid_data()
    data["run"]["rankings"]["q1"][0][0] = bad
    with pytest.raises(ResultValidationError, match="run.doc_ids: id"):
        parse_result(data, "r.json")


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
        (lambda d: d["run"]["rankings"]["q1"].append(["d3", 0.5]), "at most depth"),
        (lambda d: d["run"].update(depth=3) or d["run"]["rankings"]["q1"].append(["d1", 0.5]), "appears twice"),
        (lambda d: d["run"]["rankings"]["q1"].reverse(), "trec_eval order"),
        (lambda d: d["run"]["rankings"].update(qx=[]), "not among the per_query queries"),
        (lambda d: d["dataset"].update(qrels_sha256="xyz"), "qrels_sha256"),
        (lambda d: d["dataset"].update(qrels_sha256="a" * 64 + "\n"), "qrels_sha256"),
        (lambda d: d["dataset"].update(split="test\n"), "dataset.split"),
        (lambda d: d["model"].update(id="bm25\n"), "not a valid id"),
        (lambda d: d["model"].update(parameters=10**400), "model.parameters"),
        (lambda d: d["model"].update(dim=10**9), "model.dim"),
        (lambda d: d["settings"].update(top_k=10**9), "settings.top_k"),
        (lambda d: (d["metrics"].update({"P@05": 0.5}), d["per_query"].update({"P@05": d["per_query"]["nDCG@10"]})),
         "canonical"),
        (lambda d: (d["metrics"].update({"nDCG@10\n": 0.5}),
                    d["per_query"].update({"nDCG@10\n": d["per_query"]["nDCG@10"]})), "metric"),
        (lambda d: (d["metrics"].update({"ARP": 1e308}), d["per_query"].update({"ARP": {"q1": 1e308, "q2": 1e308,
                                                                                        "q3": 1e308}})), "ARP"),
        (lambda d: d.update(schema_version=4), "schema_version"),
        (lambda d: d.update(schema_version=True), "schema_version"),
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
        "deeper.json": '{"schema_version": 1, "model": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "truncated.json": json.dumps(valid_data())[:100],
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ResultValidationError) as error:
            read_result(tmp_path / name)
        assert name in str(error.value)
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as stream:
        stream.truncate(MAX_READ_BYTES + 1)
    with pytest.raises(ResultValidationError, match="far over any result's size cap"):
        read_result(huge)


def test_size_cap_is_per_query(tmp_path):
    text = dump_result(parse_result(valid_data()))
    padded = tmp_path / "padded.json"
    padded.write_text(text.rstrip("\n") + " " * (size_limit(3) - len(text) + 1) + "\n")
    with pytest.raises(ResultValidationError, match=r"over the cap of 1.0 MB for 3 queries \(1 MB \+ 4 KB a query\)"):
        read_result(padded)
    assert size_limit(6980) == 1_000_000 + 4096 * 6980


def test_a_column_that_inflates_beyond_its_counts_is_refused_before_it_is_inflated():
    import base64
    import zlib

    document = json.loads(dump_result(parse_result(valid_data())))
    bomb = zlib.compress(b"\0" * 200_000_000, 9)  # 200 MB of zeros in about 200 KB
    document["run"]["scores"] = base64.b64encode(bomb).decode()
    with pytest.raises(ResultValidationError, match="run.scores: holds a different amount of data"):
        parse_result_text(json.dumps(document), "r.json")


@pytest.mark.parametrize("column", ["per_query.values", "run.docs", "run.lengths", "run.doc_ids",
                                    "per_query.query_ids"])
def test_damaged_columns_name_the_field(column):
    document = json.loads(dump_result(parse_result(valid_data())))
    block, name = column.split(".")
    document[block][name] = document[block][name][:-8] + "AAAAAAA="
    with pytest.raises(ResultValidationError, match=f"r.json: {block}"):
        parse_result_text(json.dumps(document), "r.json")


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


def test_version_1_and_2_files_are_read(tmp_path):
    for version in (1, 2):
        data = valid_data()
        data["schema_version"] = version
        path = tmp_path / "old.json"
        path.write_text(json.dumps(data))
        result = read_result(path)
        assert result.source_version == version and result.score_samples is None
        assert result.provenance.index_bytes is None and result.rankings() == {"q1": [("d1", 2.5), ("d2", 1.0)]}


def test_a_reader_that_will_not_rescore_can_leave_the_ranking_encoded(tmp_path):
    from leaderboard.submissions.load import read_loaded
    from tests.data.make_synthetic_results import DeclaredVerification

    path = write_result(parse_result(valid_data()), tmp_path / "org__model-1" / "beir__scifact.json")
    data = json.loads(path.read_text())
    data["run"]["scores"] = data["run"]["scores"][:-8] + "AAAAAAA="  # a damaged ranking column
    path.write_text(json.dumps(data))
    with pytest.raises(ResultValidationError, match=r"run\.scores"):
        read_result(path)
    asked = []
    result = read_result(path, with_run=lambda header: asked.append(header.dataset.id) or False)
    assert result.run is None and asked == ["beir/scifact"] and result.values("nDCG@10")["q2"] == 1.0
    loaded = read_loaded(path)  # no verification: the ranking is not decoded, but the site knows it is there
    assert loaded.has_run and not loaded.verified
    with pytest.raises(ResultValidationError, match=r"run\.scores"):
        read_loaded(path, is_verified=DeclaredVerification())  # one that verifies reads and checks it


def test_a_text_column_that_inflates_far_beyond_its_own_size_is_refused():
    import base64
    import zlib

    document = json.loads(dump_result(parse_result(valid_data())))
    document["dataset"]["num_queries"] = 10**7  # the counts would allow 20 GB of ids
    bomb = zlib.compress(b"q" * 50_000_000, 9)  # 50 MB in about 50 KB: far more than ids ever compress
    document["per_query"]["query_ids"] = base64.b64encode(bomb).decode()
    with pytest.raises(ResultValidationError, match="per_query.query_ids: inflates to more than"):
        parse_result_text(json.dumps(document), "r.json")
