"""validate and build re-score against the official judgments, fetched as needed, and check each result's
settings against its dataset's definition."""

import json
from pathlib import Path

import pytest

from evaluator.datasets.official import MIRROR_ENV, RAW_BASE_ENV
from evaluator.result import result_path
from leaderboard.cli import main
from leaderboard.submissions.validate import validate_paths
from tests.conftest import ROOT, make_scifact_result


def _write(root: Path, data: dict, model="org/model") -> Path:
    data = {**data, "model": {**data["model"], "id": model}}
    path = result_path(model, data["dataset"]["id"], root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def scifact_result() -> dict:
    return json.loads(make_scifact_result("org/model", 0))


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No mirror, an empty cache and an upstream where nothing listens."""
    monkeypatch.delenv(MIRROR_ENV)
    monkeypatch.setenv(RAW_BASE_ENV, "http://127.0.0.1:9")
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "empty-cache"))


def test_the_repository_results_validate_and_scifact_ones_verify_without_a_data_dir():
    report = validate_paths([], ROOT / "results")
    assert report.problems == []
    scifact = {path for path in report.valid if path.name == "beir__scifact.json"}
    assert scifact and scifact <= report.verified


def test_swapped_documents_are_caught_without_a_data_dir(tmp_path, scifact_result, capsys):
    """The top and bottom documents of five rankings swapped, scores left in place: re-scoring disagrees."""
    rankings = scifact_result["run"]["rankings"]
    for query_id in sorted(rankings)[:5]:
        ranking = rankings[query_id]
        ranking[0][0], ranking[-1][0] = ranking[-1][0], ranking[0][0]
    _write(tmp_path, scifact_result)
    assert main(["validate", "--results", str(tmp_path)]) == 1
    assert "re-scoring the stored ranking gives" in capsys.readouterr().err


def test_validate_without_judgments_fails_with_one_line(tmp_path, scifact_result, offline, capsys):
    _write(tmp_path, scifact_result)
    _write(tmp_path, scifact_result, model="org/other")
    assert main(["validate", "--results", str(tmp_path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("error: 1 problem(s) found")  # one line for two results
    assert lines[0].startswith("beir/scifact: official qrels not available: http://127.0.0.1:9/")
    assert MIRROR_ENV in lines[0] and "copy the file to" in lines[0]


def test_build_without_judgments_marks_results_unverified_with_a_warning(tmp_path, scifact_result, offline,
                                                                         capsys):
    _write(tmp_path / "results", scifact_result)
    assert main(["build", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "site")]) == 0
    err = capsys.readouterr().err
    assert "warning: beir/scifact: official qrels not available" in err and "shown unverified" in err
    assert main(["build", "--strict", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "s2")]) == 1


def test_the_build_verifier_uses_the_official_judgments(tmp_path, scifact_result):
    from leaderboard.submissions.load import load_results
    from leaderboard.submissions.verify import verifier

    _write(tmp_path, scifact_result)
    is_verified = verifier({}, None)
    (loaded,) = load_results(tmp_path, is_verified=is_verified).results
    assert loaded.verified and is_verified.errors == []


def test_a_relevance_level_other_than_the_dataset_s_is_rejected(tmp_path, scifact_result):
    scifact_result["settings"]["relevance_level"] = 2
    _write(tmp_path, scifact_result)
    problems = validate_paths([], tmp_path).problems
    assert any("settings.relevance_level is 2; beir/scifact counts grades >= 1 as relevant" in p for p in problems)


def test_identical_ids_setting_matters_only_when_a_ranking_holds_its_own_query(tmp_path, scifact_result):
    """SciFact ignores identical ids by definition; a result scored without doing so stands while none of its
    rankings retrieves the query's own id (the setting changed nothing), and is rejected once one does."""
    assert scifact_result["settings"]["ignore_identical_ids"] is False
    path = _write(tmp_path, scifact_result)
    report = validate_paths([], tmp_path)
    assert report.problems == [] and report.verified == {path}
    query_id = sorted(scifact_result["run"]["rankings"])[0]
    scifact_result["run"]["rankings"][query_id].append([query_id, -1.0])
    _write(tmp_path, scifact_result)
    problems = validate_paths([], tmp_path).problems
    assert any("settings.ignore_identical_ids is false but beir/scifact drops a retrieved document whose id is "
               "the query's" in p for p in problems), problems


def test_datasets_command_lists_every_registered_dataset_and_its_cache_state(monkeypatch, tmp_path, capsys):
    from evaluator.datasets import all_specs
    from evaluator.datasets.official import official_qrels

    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path))
    assert main(["datasets"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["id", "split", "queries", "documents", "source", "licence", "judgments"]
    assert [row.split()[0] for row in rows] == [spec.id for spec in all_specs()]
    official_qrels("beir/scifact")  # now cached
    assert main(["datasets", "beir/scif"]) == 0
    (row,) = capsys.readouterr().out.splitlines()[1:]
    assert row.split()[:5] == ["beir/scifact", "test", "300", "5,183", "castorini/anserini-tools@5b819c1"]
    assert row.endswith("  cached") and "CC BY-NC 2.0" in row
    assert main(["datasets", "classic/cacm"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("local copy only  no licence stated; distributed for "
                                                            "research by the Glasgow IR group  not cached")
    assert main(["datasets", "nothing/"]) == 1


def test_offline_a_copy_extracted_into_the_cache_still_verifies(tmp_path, scifact_result, offline):
    from tests.conftest import SCIFACT

    extracted = tmp_path / "empty-cache" / "beir" / "scifact" / "qrels"  # where the BEIR loader extracts the zip
    extracted.mkdir(parents=True)
    (extracted / "test.tsv").write_bytes((SCIFACT / "qrels" / "test.tsv").read_bytes())
    path = _write(tmp_path / "results", scifact_result)
    report = validate_paths([], tmp_path / "results")
    assert report.problems == [] and report.verified == {path}
