"""`irboard validate`: every bad submission gets a clear one-line problem; nothing crashes."""

import copy
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.result import result_path
from leaderboard.cli import main
from leaderboard.submissions.validate import validate_paths
from tests.conftest import ROOT, SHARED, make_scifact_result


@pytest.fixture(scope="module")
def scifact_result_text() -> str:
    return make_scifact_result("org/model", 0)


def _write(root: Path, text: str, model="org/model", dataset="beir/scifact") -> Path:
    path = result_path(model, dataset, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _problems(root: Path, **kwargs) -> list[str]:
    return validate_paths([], root, **kwargs).problems


def test_valid_result_passes_and_is_verified_with_qrels(tmp_path, scifact_result_text):
    _write(tmp_path, scifact_result_text)
    report = validate_paths([], tmp_path, data_root=SHARED / "data")
    assert report.problems == []
    assert len(report.verified) == 1
    assert len(validate_paths([], tmp_path).verified) == 1  # the official qrels (here from IRBOARD_MIRROR)


def _mutated(text: str, mutate) -> str:
    data = json.loads(text)
    mutate(data)
    return json.dumps(data)


def _first_query(data):
    return next(iter(data["per_query"]["nDCG@10"]))


BAD_SUBMISSIONS = {
    "truncated JSON": (lambda t: t[: len(t) // 2], "invalid JSON"),
    "wrong type": (lambda t: _mutated(t, lambda d: d["dataset"].update(num_queries="300")), "dataset.num_queries"),
    "NaN": (lambda t: t.replace('"nDCG@10": 0.', '"nDCG@10": NaN, "x": 0.', 1), "invalid JSON"),
    "Infinity": (lambda t: _mutated(t, lambda d: d["metrics"].update({"AP": 1.0})).replace("1.0", "Infinity", 1),
                 ""),
    "above 1": (lambda t: _mutated(t, lambda d: d["per_query"]["AP"].update({_first_query(d): 1.5})), "[0, 1]"),
    "below 0": (lambda t: _mutated(t, lambda d: d["per_query"]["AP"].update({_first_query(d): -0.1})), "[0, 1]"),
    "unknown field": (lambda t: _mutated(t, lambda d: d.update(note="hi")), "note"),
    "look-alike id": (lambda t: _mutated(t, lambda d: d["model"].update(id="оrg/model")), "not a valid id"),
    "script in text": (lambda t: _mutated(t, lambda d: d["model"].update(license="<script>alert(1)</script>")),
                       "model.license contains '<'"),
    "script in command": (lambda t: _mutated(t, lambda d: d["provenance"].update(command="<img src=x onerror=1>")),
                          "provenance.command"),
    "javascript url": (lambda t: _mutated(t, lambda d: d["model"].update(url="javascript:alert(1)")), "http"),
    "unknown dataset": (lambda t: _mutated(t, lambda d: d["dataset"].update(id="beir/scifakt")), "scifact"),
}


@pytest.mark.parametrize("case", sorted(BAD_SUBMISSIONS))
def test_bad_submission_rejected_with_one_clear_line(tmp_path, capsys, scifact_result_text, case):
    corrupt, expected = BAD_SUBMISSIONS[case]
    path = _write(tmp_path, corrupt(scifact_result_text))
    problems = _problems(tmp_path)
    assert problems, case
    assert all(str(path) in p or "beir__scifakt" in p for p in problems)
    assert any(expected in p for p in problems), problems
    assert main(["validate", "--results", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error:" in err


def test_query_set_must_be_the_official_one(tmp_path, scifact_result_text):
    def drop_query(data):
        query = _first_query(data)
        for values in data["per_query"].values():
            values.pop(query)
        for name, values in data["per_query"].items():
            data["metrics"][name] = sum(values.values()) / len(values)
        data["dataset"]["num_queries"] -= 1
        data["run"]["rankings"].pop(query, None)

    _write(tmp_path, _mutated(scifact_result_text, drop_query))
    assert any("expected 300" in p for p in _problems(tmp_path))


def test_renamed_query_detected_by_hash(tmp_path, scifact_result_text):
    def rename(data):
        query = _first_query(data)
        for values in data["per_query"].values():
            values["renamed"] = values.pop(query)
        data["run"]["rankings"].pop(query, None)

    _write(tmp_path, _mutated(scifact_result_text, rename))
    assert any("differ from the official" in p for p in _problems(tmp_path))


def test_tampered_values_fail_rescoring(tmp_path, scifact_result_text):
    def inflate(data):
        query = _first_query(data)
        values = data["per_query"]["nDCG@10"]
        values[query] = 1.0 if values[query] < 0.5 else 0.0
        data["metrics"]["nDCG@10"] = sum(values.values()) / len(values)

    _write(tmp_path, _mutated(scifact_result_text, inflate))
    problems = _problems(tmp_path, data_root=SHARED / "data")
    assert any("re-scoring the stored ranking gives" in p for p in problems)


def test_wrong_place_and_escaping_slug(tmp_path, scifact_result_text):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "beir__scifact.json").write_text(scifact_result_text)
    problems = _problems(tmp_path)
    assert any("move it to results/org__model/beir__scifact.json" in p for p in problems)


def test_oversized_file_rejected_before_parsing(tmp_path, scifact_result_text):
    path = _write(tmp_path, scifact_result_text)
    with open(path, "a") as stream:
        stream.write(" " * (50 * 1024 * 1024))
    problems = _problems(tmp_path)
    assert len(problems) == 1 and "52." in problems[0] and "over the cap of 2.2 MB for 300 queries" in problems[0]


def test_changed_old_result_needs_new_revision(tmp_path, scifact_result_text, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = lambda *a: subprocess.run(["git", *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("config", "user.email", "t@example.org")
    run("config", "user.name", "t")
    path = _write(Path("results"), scifact_result_text)
    run("add", ".")
    run("commit", "-qm", "base")

    def worse(data):
        for name, values in data["per_query"].items():
            for query in values:
                values[query] = 0.0
            data["metrics"][name] = 0.0

    path.write_text(_mutated(scifact_result_text, worse))
    problems = validate_paths([path], Path("results"), base="main").problems
    assert any("changes from" in p and "bump the revision" in p for p in problems)
    path.write_text(_mutated(_mutated(scifact_result_text, worse), lambda d: d["model"].update(revision="v2")))
    assert not any("changes from" in p for p in validate_paths([path], Path("results"), base="main").problems)


# --- fuzzing: whatever the bytes, validate answers with problems, never an exception -----------------------

def _fuzz_json_values():
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
        max_leaves=8,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_files_give_problems_not_tracebacks(tmp_path_factory, scifact_result_text, data):
    root = tmp_path_factory.mktemp("fuzz")
    original = json.loads(scifact_result_text)
    mutated = copy.deepcopy(original)
    strategy = data.draw(st.sampled_from(["replace", "truncate", "bytes"]))
    if strategy == "replace":
        section = data.draw(st.sampled_from(sorted(mutated)))
        if isinstance(mutated[section], dict) and mutated[section]:
            key = data.draw(st.sampled_from(sorted(mutated[section])))
            mutated[section][key] = data.draw(_fuzz_json_values())
        else:
            mutated[section] = data.draw(_fuzz_json_values())
        text = json.dumps(mutated)
    elif strategy == "truncate":
        text = scifact_result_text[: data.draw(st.integers(0, len(scifact_result_text) - 1))]
    else:
        text = data.draw(st.binary(max_size=200)).decode("latin-1")
    _write(root, text)
    report = validate_paths([], root)
    if text != scifact_result_text:
        assert report.problems or report.valid
    for problem in report.problems:
        assert "\n" not in problem and problem.startswith(str(root))


def test_corrupt_score_samples_reported(tmp_path):
    # a real result with samples that agree with its ranking (ROOT/results), then its sample codes broken
    good = (ROOT / "results" / "bm25" / "beir__scifact.json").read_text()
    _write(tmp_path, good, "bm25")
    assert _problems(tmp_path) == []
    broken = json.loads(good)
    broken["score_samples"]["codes"] = "!!not base64!!"
    _write(tmp_path, json.dumps(broken))
    problems = _problems(tmp_path)
    assert len(problems) == 1 and "score_samples.codes: not base64" in problems[0]


def test_a_coverage_record_that_hides_missing_queries_fails_verification(tmp_path, scifact_result_text):
    """The fixture's run lacks about a tenth of the judged queries; a record claiming all 300 is caught."""
    data = json.loads(scifact_result_text)
    covered = data["provenance"]["coverage"]["covered_queries"]
    assert covered == len(data["run"]["rankings"]) < 300

    def claim_all(data):
        data["provenance"]["coverage"]["covered_queries"] = 300

    _write(tmp_path, _mutated(scifact_result_text, claim_all))
    assert any(f"provenance.coverage says 300 of 300 judged queries are covered, but the stored ranking has "
               f"{covered} of 300" in p for p in _problems(tmp_path))
