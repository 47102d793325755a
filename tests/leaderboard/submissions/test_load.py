import json
import shutil

import numpy as np

from evaluator.result import (
    SCHEMA_VERSION,
    build_result,
    expand_result,
    read_result,
    result_path,
    write_result,
)
from leaderboard.submissions.load import load_results, read_loaded


def _rewrite(path, change):
    """Edit a result in its expanded form (the form versions 1 and 2 stored) and write it so."""
    data = expand_result(read_result(path))
    data.pop("score_samples")
    change(data)
    path.write_text(json.dumps(data, sort_keys=True, indent=1))


def test_loads_every_synthetic_result_without_problems(golden_results, synth):
    report = load_results(golden_results)
    expected = sum(len(m.datasets or synth.GOLDEN_DATASETS) for m in synth.GOLDEN_MODELS)
    assert report.problems == []
    assert report.warnings == []
    assert len(report.results) == expected
    assert [r.path for r in report.results] == sorted(r.path for r in report.results)


def test_per_query_arrays_follow_sorted_query_ids(golden_results):
    path = result_path("bm25", "beir/scifact", golden_results)
    raw = expand_result(read_result(path))
    loaded = read_loaded(path)
    assert loaded.query_ids == tuple(sorted(raw["per_query"]["nDCG@10"]))
    for metric, values in raw["per_query"].items():
        expected = np.array([values[q] for q in loaded.query_ids])
        np.testing.assert_array_equal(loaded.per_query[metric], expected)
    assert loaded.metrics == raw["metrics"]
    assert loaded.has_run is True


def test_shuffled_query_order_gives_the_same_arrays(results_copy):
    path = result_path("bm25", "beir/nfcorpus", results_copy)
    before = read_loaded(path)
    data = expand_result(read_result(path))
    data["per_query"] = {m: dict(reversed(list(v.items()))) for m, v in data["per_query"].items()}
    path.write_text(json.dumps(data))  # the expanded form, keys no longer sorted
    after = read_loaded(path)
    assert after.query_ids == before.query_ids
    for metric in before.per_query:
        np.testing.assert_array_equal(after.per_query[metric], before.per_query[metric])


def test_keep_metrics_keeps_only_the_named_per_query_vectors(golden_results):
    path = result_path("bm25", "mmarco/fr", golden_results)
    loaded = read_loaded(path, keep_metrics=lambda dataset_id: ["RR@10", "not-there"])
    assert set(loaded.per_query) == {"RR@10"}
    assert set(loaded.metrics) == {"nDCG@10", "R@100", "RR@10"}  # means of every metric stay


def test_is_verified_is_asked_only_about_results_with_a_run(results_copy, synth):
    path = result_path("bm25", "beir/scifact", results_copy)
    result = read_result(path)
    write_result(build_result(result.header, result.query_ids, result.per_query), path, force=True)  # no run
    verifier = synth.DeclaredVerification((), {})  # every value of every result with a run verified
    report = load_results(results_copy, is_verified=verifier)
    asked = verifier.asked
    assert len(asked) == len(report.results) - 1 and ("bm25", "beir/scifact") not in asked
    unverified = [(r.model.id, r.dataset_id) for r in report.results if not r.verified]
    assert unverified == [("bm25", "beir/scifact")]
    assert all(r.verified_metrics == frozenset(r.metrics) for r in report.results if r.verified)


def test_every_broken_file_is_listed_at_once(results_copy):
    first = result_path("bm25", "beir/nfcorpus", results_copy)
    second = result_path("naver/splade-v3", "miracl/sw", results_copy)
    third = result_path("intfloat/e5-small-v2", "beir/scifact", results_copy)
    first.write_text("{not json")
    _rewrite(second, lambda d: d["metrics"].update({"nDCG@10": 0.99}))
    _rewrite(third, lambda d: d["model"].update({"type": "magic"}))
    report = load_results(results_copy)
    assert len(report.problems) == 3
    for path, field in ((first, "invalid JSON"), (second, "metrics['nDCG@10']"), (third, "model.type")):
        assert any(str(path) in problem and field in problem for problem in report.problems), field
    assert all(str(first) != r.path for r in report.results)


def test_a_file_in_the_wrong_place_is_a_problem_naming_the_right_place(results_copy):
    source = result_path("bm25", "beir/nfcorpus", results_copy)
    wrong = results_copy / "bm25" / "nfcorpus.json"
    shutil.move(source, wrong)
    report = load_results(results_copy)
    assert len(report.problems) == 1
    assert str(wrong) in report.problems[0] and str(source) in report.problems[0]


def test_different_query_sets_on_one_dataset_are_a_problem(results_copy, synth):
    path = result_path("BAAI/bge-m3", "beir/nfcorpus", results_copy)

    def drop_one_query(data):
        for values in data["per_query"].values():
            values.pop(sorted(values)[0])
        data["dataset"]["num_queries"] -= 1
        for name, values in data["per_query"].items():
            data["metrics"][name] = sum(values.values()) / len(values)

    _rewrite(path, drop_one_query)
    report = load_results(results_copy)
    assert len(report.problems) == 1
    assert str(path) in report.problems[0] and "queries" in report.problems[0]


def test_different_qrels_on_one_dataset_are_a_problem(results_copy):
    path = result_path("bm25", "classic/cranfield", results_copy)
    _rewrite(path, lambda d: d["dataset"].update({"qrels_sha256": "0" * 64}))
    report = load_results(results_copy)
    assert len(report.problems) == 1
    assert str(path) in report.problems[0] and "qrels" in report.problems[0]


def test_disagreeing_model_metadata_and_stray_files_are_warnings(results_copy):
    path = result_path("bm25", "custom/tiny", results_copy)
    _rewrite(path, lambda d: d["model"].update({"license": "mit"}))
    (results_copy / "README.md").write_text("notes")
    (results_copy / "schema.json").write_text("{}")
    report = load_results(results_copy)
    assert report.problems == []
    assert len(report.warnings) == 2
    assert any(str(path) in w and "license" in w for w in report.warnings)
    assert any("README.md" in w for w in report.warnings)


def test_schema_version_1_files_are_migrated(results_copy):
    path = result_path("bm25", "miracl/fi", results_copy)
    _rewrite(path, lambda d: (d.update({"schema_version": 1}), d["provenance"].pop("index_bytes")))
    report = load_results(results_copy)
    assert SCHEMA_VERSION >= 1 and report.problems == []
    assert any(r.path == str(path) for r in report.results)


def test_missing_or_empty_results_folder_is_a_problem(tmp_path):
    assert "no such folder" in load_results(tmp_path / "nope").problems[0]
    (tmp_path / "empty").mkdir()
    assert "no result files" in load_results(tmp_path / "empty").problems[0]


def test_ids_that_differ_only_in_case_are_a_problem(results_copy):
    path = result_path("bm25", "custom/tiny", results_copy)
    _rewrite(path, lambda d: d["model"].update({"id": "BM25"}))  # same file name, other spelling
    report = load_results(results_copy)
    assert len(report.problems) == 1
    assert "'BM25'" in report.problems[0] and "'bm25'" in report.problems[0] and "case" in report.problems[0]


def test_score_samples_are_decoded_and_only_where_the_file_has_them(golden_results):
    from evaluator.score_samples import DEFAULT_LEVELS, ScoreSamples

    path = result_path("BAAI/bge-m3", "beir/scifact", golden_results)
    loaded = read_loaded(path)
    stored = json.loads(path.read_text())["score_samples"]
    assert isinstance(loaded.score_samples, ScoreSamples) and stored["levels"] == DEFAULT_LEVELS
    assert set(loaded.score_samples.queries) == set(loaded.query_ids)
    assert all((np.diff(q.nonrelevant) >= 0).all() for q in loaded.score_samples.queries.values())
    assert read_loaded(result_path("bm25", "beir/scifact", golden_results)).score_samples is None
