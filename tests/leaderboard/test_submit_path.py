"""The whole path a contributor walks: run file -> `irboard evaluate` -> `validate` -> `build --strict` -> the page,
on real SciFact data, for a shallower (depth-100) run, a run without metadata and a run on a declared collection.

The depth-100 run is the stored ranking of the repository's BM25 (k1=1.5, b=0.75) SciFact result, written out as a
TREC run file as another toolkit would write it; the deeper result beside it is BM25 run here to depth 1,000.
"""

import json
import shutil
from pathlib import Path

import pytest

from evaluator.datasets import query_ids_sha256
from evaluator.metrics import Qrels
from evaluator.result import expand_result, parse_result, read_result, write_result
from evaluator.trec import read_qrels
from leaderboard.cli import main
from tests.conftest import ROOT, SCIFACT, SHARED

pytestmark = pytest.mark.slow
DATA = SHARED / "data"
QRELS = SCIFACT / "qrels" / "test.tsv"


def irboard(capsys, *argv) -> tuple[int, str, str]:
    """The command line in-process: exit code, stdout, and stderr with what it logs."""
    return _Capture().run(*argv)


def write_trec(result_path: Path, run_path: Path) -> None:
    result = read_result(result_path)
    run_path.write_text("".join(f"{query} Q0 {doc} {rank} {score:.6f} other-toolkit\n"
                                for query, ranking in result.rankings().items()
                                for rank, (doc, score) in enumerate(ranking, 1)))


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A working folder with results/ (BM25 to depth 1,000 and a depth-100 run file's result without metadata),
    validated and built; returns (folder, outputs of each step)."""
    folder = tmp_path_factory.mktemp("path")
    capsys = _Capture()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        steps = {}
        steps["deep"] = capsys.run("evaluate", "--model", "bm25", "--dataset", "beir/scifact", "--data-dir", SCIFACT,
                                   "--results-dir", "results", "--quiet")
        write_trec(ROOT / "results" / "bm25-k1-1.5-b-0.75" / "beir__scifact.json", folder / "run.trec")
        steps["shallow"] = capsys.run("evaluate", "--run", "run.trec", "--model-id", "org/shallow",
                                      "--dataset-id", "beir/scifact", "--results-dir", "results")
        steps["validate"] = capsys.run("validate", "results", "--data-dir", DATA / "beir")
        steps["build"] = capsys.run("build", "--strict", "--results", "results", "--out", "_site",
                                    "--data-dir", DATA / "beir", "--now", "2026-11-27T00:00:00Z")
    return folder, steps


class _Capture:
    """Runs the command line in-process, keeping its exit code, stdout and stderr (module-scoped: no capsys)."""

    def run(self, *argv) -> tuple[int, str, str]:
        import contextlib
        import io
        import logging

        out, err = io.StringIO(), io.StringIO()
        handler = logging.StreamHandler(err)
        handler.setFormatter(logging.Formatter("irboard: %(message)s"))
        logging.getLogger().addHandler(handler)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([str(part) for part in argv])
        finally:
            logging.getLogger().removeHandler(handler)
        return code, out.getvalue(), err.getvalue()


def test_a_shallower_run_reaches_the_board_and_leaves_out_what_its_depth_does_not_determine(board):
    folder, steps = board
    code, _, err = steps["shallow"]
    assert code == 0, err
    assert "left out R@1000" in err and "ranked to 100" in err and "--top-k 1000" in err
    shallow = read_result(folder / "results" / "org__shallow" / "beir__scifact.json")
    deep = read_result(folder / "results" / "bm25" / "beir__scifact.json")
    assert shallow.settings.top_k == 100 and deep.settings.top_k == 1000
    assert "R@1000" not in shallow.metrics and "R@1000" in deep.metrics and "nDCG@10" in shallow.metrics
    assert steps["validate"][0] == 0, steps["validate"][2]
    code, out, err = steps["build"]
    assert code == 0, err
    assert "differ" not in err  # the depths differ, and that alone never makes results incomparable
    page = (folder / "_site" / "datasets" / "beir__scifact.html").read_text()
    rows = page.split("<tr")
    shallow_row = next(row for row in rows if 'data-id="org/shallow"' in row)
    deep_row = next(row for row in rows if 'data-id="bm25"' in row)
    assert shallow_row.count("–, ranked to 100") == 1  # R@1000, and only it
    assert "ranked to" not in deep_row  # the deep result's own R@1000 is a number


def test_a_value_its_depth_does_not_determine_is_refused_by_validate_and_build_strict(board, tmp_path, capsys):
    folder, _ = board
    results = tmp_path / "results"
    shutil.copytree(folder / "results", results)
    path = results / "org__shallow" / "beir__scifact.json"
    data = expand_result(read_result(path))
    data["per_query"]["R@1000"] = dict(data["per_query"]["R@100"])  # what a depth-100 run reports as R@1000
    data["metrics"]["R@1000"] = data["metrics"]["R@100"]
    write_result(parse_result(data), path, force=True)
    code, _, err = irboard(capsys, "validate", results, "--data-dir", DATA / "beir")
    assert code == 1
    assert "R@1000 needs a ranking of depth 1,000 but the run is ranked to 100" in err
    assert "re-run `irboard evaluate`" in err
    code, _, err = irboard(capsys, "build", "--strict", "--results", results, "--out", tmp_path / "_site",
                           "--data-dir", DATA / "beir", "--now", "2026-11-27T00:00:00Z")
    assert code == 1 and "R@1000 needs a ranking of depth 1,000" in err


def test_a_run_without_metadata_is_not_stated_everywhere_and_both_commands_say_what_is_missing(board):
    folder, steps = board
    stored = json.loads((folder / "results" / "org__shallow" / "beir__scifact.json").read_text())["model"]
    assert stored["open_weights"] is None and stored["training_datasets"] is None and stored["parameters"] is None
    for _, out, err in (steps["shallow"], steps["validate"]):
        line = next(line for line in (out + err).splitlines() if "not stated:" in line and "bm25" not in line)
        for flag in ("--parameters", "--license", "--open-weights", "--training-datasets", "--model-url"):
            assert flag in line, line
    page = (folder / "_site" / "models" / "org__shallow.html").read_text()
    assert "<dt>Open weights</dt><dd>not stated</dd>" in page
    assert "Zero-shot</dt><dd>not stated" in page
    assert "Training data: not stated." in page
    # the home board's filters read unknown as unknown: neither open weights nor zero-shot is claimed
    home = (folder / "_site" / "index.html").read_text()
    row = next(line for line in home.splitlines() if 'data-id="org/shallow"' in line)
    assert 'data-open="0"' in row and 'data-zs="0"' in row


def test_metadata_flags_state_each_field_and_parameters_take_the_sites_spelling(board, tmp_path, capsys):
    folder, _ = board
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--model-id", "org/stated",
                           "--dataset-id", "beir/scifact", "--out", tmp_path / "org__stated" / "beir__scifact.json",
                           "--parameters", "1.5B", "--license", "mit", "--open-weights", "--model-url",
                           "https://example.org/m", "--training-datasets", "none", "--quiet")
    assert code == 0, err
    model = read_result(tmp_path / "org__stated" / "beir__scifact.json").model
    assert (model.parameters, model.open_weights, model.training_datasets) == (1_500_000_000, True, [])
    assert "not stated" not in err


def test_model_id_is_honoured_with_a_model_spec(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = irboard(capsys, "evaluate", "--model", "bm25:k1=1.2,b=0.75", "--dataset", "beir/scifact",
                           "--data-dir", SCIFACT, "--model-id", "org/my-bm25", "--results-dir", "results", "--quiet",
                           "--metrics", "nDCG@10")
    assert code == 0, err
    assert read_result(tmp_path / "results" / "org__my-bm25" / "beir__scifact.json").model.id == "org/my-bm25"


# --- a collection of one's own ------------------------------------------------------------------------------------


def declare(folder: Path, dataset_id: str, qrels: Qrels, **fields) -> Path:
    """A declaration written by hand in `folder`/datasets, the folder this test's commands read."""
    path = folder / "datasets" / f"{dataset_id.lower().replace('/', '__')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": dataset_id, "name": "Acme claims", "group": "Acme", "main_metric": "nDCG@10",
                                "query_ids_sha256": query_ids_sha256(qrels.query_ids),
                                "qrels_sha256": qrels.sha256(), **fields}))
    return path


def test_a_declared_collection_walks_the_whole_path_by_every_way_to_evaluate(board, tmp_path, capsys, monkeypatch):
    folder, _ = board
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRBOARD_DATASETS", str(tmp_path / "datasets"))
    declare(tmp_path, "acme/claims", read_qrels(QRELS))
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--qrels", QRELS, "--model-id",
                           "org/shallow", "--dataset-id", "acme/claims", "--results-dir", "results", "--quiet")
    assert code == 0, err
    code, _, err = irboard(capsys, "evaluate", "--model", "bm25", "--dataset", "acme/claims", "--data-dir", SCIFACT,
                           "--results-dir", "results", "--quiet")
    assert code == 0, err
    code, _, err = irboard(capsys, "validate", "results", "--data-dir", f"acme/claims={SCIFACT}")
    assert code == 0, err
    code, _, err = irboard(capsys, "build", "--strict", "--results", "results", "--out", "_site",
                           "--data-dir", f"acme/claims={SCIFACT}", "--now", "2026-11-27T00:00:00Z")
    assert code == 0, err
    page = (tmp_path / "_site" / "datasets" / "acme__claims.html").read_text()
    assert "Acme claims" in page and "org/shallow" in page


def test_a_local_folder_evaluated_by_a_model_validates_and_builds_when_named(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "m8800k"
    shutil.copytree(SCIFACT, mine)
    code, _, err = irboard(capsys, "evaluate", "--model", "bm25", "--dataset", f"local:{mine}", "--results-dir",
                           "results", "--metrics", "nDCG@10,R@100")
    assert code == 0, err
    assert f"validate --data-dir local:{mine}" in err
    assert (tmp_path / "results" / "bm25" / "local__m8800k.json").is_file()
    code, _, err = irboard(capsys, "validate", "results")
    assert code == 1 and "--data-dir local:DIR" in err  # says how, instead of only "unknown dataset id"
    code, _, err = irboard(capsys, "validate", "results", "--data-dir", f"local:{mine}")
    assert code == 0, err
    code, _, err = irboard(capsys, "build", "--strict", "--results", "results", "--out", "_site", "--data-dir",
                           f"local:{mine}", "--now", "2026-11-27T00:00:00Z")
    assert code == 0, err
    assert (tmp_path / "_site" / "datasets" / "local__m8800k.html").is_file()


def test_evaluate_refuses_other_judgments_than_the_declared_ones(board, tmp_path, capsys, monkeypatch):
    folder, _ = board
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRBOARD_DATASETS", str(tmp_path / "datasets"))
    declare(tmp_path, "acme/claims", read_qrels(QRELS))
    other = tmp_path / "other.tsv"
    lines = QRELS.read_text().splitlines()
    other.write_text("\n".join(lines[:-1]) + "\n")  # one judgment fewer
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--qrels", other, "--model-id", "org/x",
                           "--dataset-id", "acme/claims", "--results-dir", "results", "--quiet")
    assert code == 1 and "not the judgments" in err and "datasets/acme__claims.json" in err
    assert not (tmp_path / "results").exists()


def test_a_misspelt_dataset_id_gets_did_you_mean_and_writes_nothing(board, tmp_path, capsys, monkeypatch):
    folder, _ = board
    monkeypatch.chdir(tmp_path)
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--qrels", QRELS, "--model-id", "org/x",
                           "--dataset-id", "beir/scifcat", "--results-dir", "results", "--quiet")
    assert code == 1 and "did you mean beir/scifact" in err and "Traceback" not in err
    assert not (tmp_path / "results").exists()


def test_build_without_strict_does_not_invent_a_dataset(board, tmp_path, capsys):
    folder, _ = board
    results = tmp_path / "results"
    shutil.copytree(folder / "results", results)
    source = results / "org__shallow" / "beir__scifact.json"
    data = expand_result(read_result(source))
    data["dataset"]["id"] = "beir/scifcat"
    write_result(parse_result(data), results / "org__shallow" / "beir__scifcat.json")
    code, _, err = irboard(capsys, "build", "--results", results, "--out", tmp_path / "_site",
                           "--now", "2026-11-27T00:00:00Z")
    assert code == 1 and "beir/scifcat" in err and "did you mean beir/scifact" in err
    assert not (tmp_path / "_site").exists()


def test_the_build_prints_each_warning_once(board, tmp_path, capsys):
    folder, _ = board
    results = tmp_path / "results"
    shutil.copytree(folder / "results", results)
    (results / "stray.txt").write_text("not a result")
    code, _, err = irboard(capsys, "build", "--results", results, "--out", tmp_path / "_site",
                           "--now", "2026-11-27T00:00:00Z")
    assert code == 0, err
    assert err.count("stray.txt") == 1, err


def test_declare_writes_the_declaration_that_validate_and_build_hold_the_result_to(board, tmp_path, capsys,
                                                                                   monkeypatch):
    folder, _ = board
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRBOARD_DATASETS", str(tmp_path / "datasets"))
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--qrels", QRELS, "--model-id", "bm25",
                           "--dataset-id", "acme/new", "--results-dir", "results")
    assert code == 1 and "--declare" in err and not (tmp_path / "results").exists()
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--qrels", QRELS, "--model-id", "bm25",
                           "--dataset-id", "acme/new", "--results-dir", "results", "--declare")
    assert code == 0, err
    declared = json.loads((tmp_path / "datasets" / "acme__new.json").read_text())
    qrels = read_qrels(QRELS)
    assert declared["qrels_sha256"] == qrels.sha256() and declared["num_queries"] == 300
    assert declared["query_ids_sha256"] == query_ids_sha256(qrels.query_ids)
    code, _, err = irboard(capsys, "validate", "results", "--data-dir", f"acme/new={SCIFACT}")
    assert code == 0, err
    code, _, err = irboard(capsys, "build", "--strict", "--results", "results", "--out", "_site", "--data-dir",
                           f"acme/new={SCIFACT}", "--now", "2026-11-27T00:00:00Z")
    assert code == 0, err


def test_published_figures_are_shown_beside_the_measured_ones_and_a_difference_beyond_rounding_is_flagged(
        board, tmp_path, capsys):
    folder, _ = board
    results = tmp_path / "results"
    shutil.copytree(folder / "results", results)
    measured = read_result(results / "org__shallow" / "beir__scifact.json").metrics
    within = f"{measured['nDCG@10']:.3f}"  # what rounding to three decimals prints
    beyond = f"{measured['R@100'] + 0.002:.3f}"  # more than half a unit in the third decimal away
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--model-id", "org/shallow",
                           "--dataset-id", "beir/scifact", "--results-dir", results, "--force", "--quiet",
                           "--reference", f"nDCG@10={within},https://example.org/paper#table-3",
                           "--reference", f"R@100={beyond},https://example.org/card")
    assert code == 0, err
    code, _, err = irboard(capsys, "validate", results, "--data-dir", DATA / "beir")
    assert code == 0, err
    code, _, err = irboard(capsys, "build", "--strict", "--results", results, "--out", tmp_path / "_site",
                           "--data-dir", DATA / "beir", "--now", "2026-11-27T00:00:00Z")
    assert code == 0, err
    page = (tmp_path / "_site" / "models" / "org__shallow.html").read_text()
    table = page[page.index("<h2>Published figures</h2>"):page.index("<h2>Efficiency</h2>")]
    rows = table.split("<tr>")[2:]
    assert within in rows[0] and f"{measured['nDCG@10']:.4f}" in rows[0] and "within rounding" in rows[0]
    assert f"{measured['nDCG@10'] - float(within):+.4f}" in rows[0]
    assert beyond in rows[1] and "beyond rounding" in rows[1] and 'href="https://example.org/card"' in rows[1]
    for bad, why in [("nDCG@10=66.5,https://example.org", "value"), ("nDCG@10=0.665,javascript:alert(1)", "url"),
                     ("R@1000=0.5,https://example.org", "does not report R@1000")]:
        code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--model-id", "org/shallow",
                               "--dataset-id", "beir/scifact", "--out", tmp_path / "x.json", "--quiet",
                               "--reference", bad)
        assert code == 1 and "--reference" in err and why in err and not (tmp_path / "x.json").exists(), err


@pytest.mark.parametrize("count", [22_700_000, 110_000_000, 1_500_000_000, 568_000_000, 7_000, 335])
def test_parameters_take_what_the_site_prints(count):
    from evaluator.cli import parameter_count
    from leaderboard.web.render import format_parameters

    assert parameter_count(format_parameters(count)) == count


@pytest.mark.parametrize("text, count", [("110M", 110 * 10**6), ("1.5B", 15 * 10**8), ("110000000", 110 * 10**6),
                                         ("110_000_000", 110 * 10**6), ("2,500", 2500), ("0.5k", 500)])
def test_parameters_take_people_spelling(text, count):
    from evaluator.cli import parameter_count

    assert parameter_count(text) == count


@pytest.mark.parametrize("text", ["abc", "1.2345k", "-5", "1e9", "1.5X", "200T"])
def test_parameters_refuse_what_is_not_a_whole_count(text):
    import argparse

    from evaluator.cli import parameter_count

    with pytest.raises(argparse.ArgumentTypeError, match="110M"):
        parameter_count(text)


@pytest.mark.parametrize("metric, top_k, num_docs, determined", [
    ("nDCG@10", 10, None, True), ("nDCG@10", 9, None, False), ("nDCG@10", 100, None, True),
    ("R@1000", 100, None, False), ("R@1000", 1000, None, True), ("R@1000", 100, 100, True),  # the whole corpus
    ("AP", 999, None, False), ("AP", 1000, None, True), ("RR", 50, 40, True),
])
def test_a_metric_is_determined_from_its_cutoff_or_the_whole_corpus(metric, top_k, num_docs, determined):
    from evaluator.metrics.depth import is_determined

    assert is_determined(metric, top_k, num_docs) is determined


def test_validate_says_first_when_a_models_files_disagree_on_its_metadata(board, tmp_path, capsys, monkeypatch):
    folder, _ = board
    monkeypatch.setenv("IRBOARD_DATASETS", str(tmp_path / "datasets"))
    results = tmp_path / "results"
    shutil.copytree(folder / "results", results)
    code, _, err = irboard(capsys, "evaluate", "--run", folder / "run.trec", "--qrels", QRELS, "--model-id",
                           "org/shallow", "--dataset-id", "acme/claims", "--declare", "--license", "mit",
                           "--results-dir", results, "--quiet")
    assert code == 0, err
    code, _, err = irboard(capsys, "validate", results, "--data-dir", DATA / "beir", "--data-dir",
                           f"acme/claims={SCIFACT}")
    assert code == 1 and "model fields license of 'org/shallow' differ" in err and "--strict" in err, err
    code, _, err = irboard(capsys, "build", "--strict", "--results", results, "--out", tmp_path / "_site",
                           "--data-dir", DATA / "beir", "--data-dir", f"acme/claims={SCIFACT}",
                           "--now", "2026-11-27T00:00:00Z")
    assert code == 1 and "model fields license of 'org/shallow' differ" in err
