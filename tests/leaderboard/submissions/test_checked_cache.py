"""`irboard validate` does not decode again a file it checked clean before (`$IRBOARD_CACHE/checked`, keyed by the
file's bytes and place): the same report, and anything else (other bytes, another place, another dataset
definition, no cached re-scoring, a damaged entry, a file with a problem) is checked whole."""

import json
from pathlib import Path

import pytest

from evaluator.result import result_path
from leaderboard.submissions import validate
from leaderboard.submissions.validate import validate_paths
from tests.conftest import SHARED, make_scifact_result


@pytest.fixture
def board(tmp_path, monkeypatch) -> Path:
    """Two SciFact results that validate and verify against the shared copy of SciFact, and a cache of their own."""
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    for i, model in enumerate(("org/model-a", "org/model-b")):
        path = result_path(model, "beir/scifact", tmp_path / "results")
        path.parent.mkdir(parents=True)
        path.write_text(make_scifact_result(model, i))
    return tmp_path


def _validate(board: Path, workers: int = 1):
    return validate_paths([], board / "results", data_root=SHARED / "data", workers=workers)


def _summary(report):
    return report.problems, sorted(report.valid), sorted(report.verified), report.partly_verified, report.unfetched


def _entries(board: Path) -> list[Path]:
    return sorted((board / "cache" / "checked").rglob("*.json"))


def test_a_file_checked_clean_is_not_decoded_again(board, parsed):
    first = _validate(board)
    assert first.problems == [] and len(first.verified) == 2 and len(parsed) == 2 and len(_entries(board)) == 2
    second = _validate(board)
    assert len(parsed) == 2 and _summary(second) == _summary(first)


def test_workers_fill_and_use_the_cache(board, parsed):
    first = _validate(board, workers=2)
    assert len(_entries(board)) == 2
    assert _summary(_validate(board, workers=2)) == _summary(first) and parsed == []  # the workers parsed


def test_other_bytes_or_another_place_are_checked_whole(board, parsed):
    _validate(board)
    path = sorted((board / "results").rglob("*.json"))[0]
    path.write_text(path.read_text() + "\n")  # the same result in other bytes
    elsewhere = board / "results" / "org__model-c" / "beir__scifact.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text(sorted((board / "results").rglob("*.json"))[1].read_text())
    report = _validate(board)
    assert parsed[2:] == [str(path), str(elsewhere)]
    assert any(str(elsewhere) in p and "move it to results/org__model-b/" in p for p in report.problems)
    assert len(_entries(board)) == 3  # the changed file, checked clean again; the misplaced one not at all


def test_without_its_rescoring_cached_a_file_is_rescored(board, parsed):
    import shutil

    _validate(board)
    shutil.rmtree(board / "cache" / "verified")
    report = _validate(board)
    assert len(parsed) == 4 and len(report.verified) == 2


def test_a_changed_dataset_definition_is_checked_whole(board, parsed, monkeypatch):
    _validate(board)
    monkeypatch.setattr(validate, "_spec_digest", lambda dataset_id: "another definition")
    assert len(_validate(board).verified) == 2 and len(parsed) == 4


@pytest.mark.parametrize("damage", [
    lambda entry: "",
    lambda entry: json.dumps(entry)[:-2],
    lambda entry: json.dumps({**entry, "metrics": "nDCG@10"}),
    lambda entry: json.dumps({**entry, "has_run": "yes", "dataset_id": 7}),
    lambda entry: json.dumps({**entry, "place": "org__other/beir__scifact.json"}),
])
def test_a_damaged_entry_is_a_miss(board, parsed, damage):
    first = _validate(board)
    for entry in _entries(board):
        entry.write_text(damage(json.loads(entry.read_text())))
    assert _summary(_validate(board)) == _summary(first) and len(parsed) == 4


def test_a_file_with_a_problem_is_never_kept(board, parsed):
    path = sorted((board / "results").rglob("*.json"))[0]
    data = json.loads(path.read_text())
    data["provenance"]["hardware"] = "<b>markup</b>"  # refused by the text policy, readable otherwise
    path.write_text(json.dumps(data))
    for _ in range(2):
        assert any("provenance.hardware" in p for p in _validate(board).problems)
    assert parsed.count(str(path)) == 2 and len(_entries(board)) == 1
