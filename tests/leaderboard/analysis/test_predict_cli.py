"""`irboard predict RESULT --docs N`: JSON on stdout, one `error:` line and exit 1 on anything wrong."""

import json
import subprocess
import sys

import numpy as np
import pytest

from evaluator.result import read_result, result_path
from leaderboard.analysis.scale import forecast
from leaderboard.cli import main

SAMPLED = ("BAAI/bge-m3", "beir/scifact")


@pytest.fixture
def sampled(synth):
    return result_path(*SAMPLED, synth.GOLDEN_RESULTS)


def run(capsys, *argv):
    code = main(["predict", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_the_forecast_as_json(capsys, sampled):
    code, out, err = run(capsys, sampled, "--docs", "10000000", "--k", "10,100")
    assert code == 0 and err == ""
    data = json.loads(out)
    expected = forecast(read_result(sampled), [1e7], [10, 100])
    assert data["R@10"] == pytest.approx(expected.recall[0, 0], abs=1e-6)
    assert data["R@100"] == pytest.approx(expected.recall[0, 1], abs=1e-6)
    assert (data["docs"], data["growth"], data["mode"]) == (10_000_000, "fixed-relevant", "per_query")
    assert data["queries"] == expected.queries and data["dropped_queries"] == 0
    band = np.array([data["band"]["R@10"], data["band"]["R@100"]])
    assert (band[:, 0] <= [data["R@10"], data["R@100"]]).all() and (band[:, 1] >= [data["R@10"], data["R@100"]]).all()


@pytest.mark.parametrize("growth", ["uniform", "fixed-relevant"])
@pytest.mark.parametrize("mode", ["per_query", "rank", "pooled"])
def test_growth_and_mode_are_passed_through(capsys, sampled, growth, mode):
    code, out, _ = run(capsys, sampled, "--docs", "1e6", "--growth", growth, "--mode", mode)
    assert code == 0
    data = json.loads(out)
    expected = forecast(read_result(sampled), [1e6], [10, 100, 1000], growth, mode)
    assert [data[f"R@{k}"] for k in (10, 100, 1000)] == pytest.approx(list(expected.recall[0]), abs=1e-6)
    assert ("band" in data) == (mode != "pooled") and data["growth"] == growth


@pytest.mark.parametrize(("argv", "words"), [
    (["--docs", "many"], "--docs 'many': expected a whole number"),
    (["--docs", "0"], "--docs '0'"),
    (["--docs", "1.5"], "--docs '1.5'"),
    (["--docs", "nan"], "--docs 'nan'"),
    (["--docs", "1e6", "--k", "10,ten"], "--k '10,ten'"),
    (["--docs", "1e6", "--k", "0"], "--k '0'"),
    (["--docs", "1e6", "--growth", "sideways"], "--growth 'sideways': expected one of fixed-relevant, uniform"),
    (["--docs", "1e6", "--mode", "magic"], "--mode 'magic': expected one of per_query, pooled, rank"),
    (["--docs", "2"], "larger than the relevant count"),
])
def test_bad_options_are_one_line_and_exit_1(capsys, sampled, argv, words):
    code, out, err = run(capsys, sampled, *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and words in err


def test_bad_files_are_one_line_and_exit_1(capsys, synth, tmp_path):
    without = result_path("bm25", "beir/scifact", synth.GOLDEN_RESULTS)
    code, _, err = run(capsys, without, "--docs", "1e6")
    assert code == 1 and err.count("\n") == 1 and "no score_samples" in err and str(without) in err
    code, _, err = run(capsys, tmp_path / "missing.json", "--docs", "1e6")
    assert code == 1 and err.count("\n") == 1 and "missing.json: cannot read" in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 2, "model": <script>')
    code, _, err = run(capsys, broken, "--docs", "1e6")
    assert code == 1 and err.count("\n") == 1 and "broken.json" in err and "Traceback" not in err


def test_the_installed_command_exits_1_without_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-m", "leaderboard.cli", "predict", str(tmp_path / "x.json"), "--docs",
                           "1e6"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1


def test_the_command_line_parser_does_not_import_the_fitting_code():
    """Every irboard command builds the whole parser: importing scipy there cost each command ~0.9 s."""
    script = "import sys; from leaderboard.cli import _parser; _parser(); print(sorted(m for m in sys.modules " \
             "if m.split('.')[0] in ('scipy', 'torch', 'pydantic_settings')))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
