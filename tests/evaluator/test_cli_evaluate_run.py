"""`irboard evaluate --run`: a run file from any toolkit becomes a result file; bad input never leaves output."""

import json
import os
import subprocess
import sys

import pytest
import pytrec_eval

from evaluator.datasets.official import official_judgments
from evaluator.metrics import DEFAULT_MEASURES
from evaluator.result import read_result
from leaderboard.cli import main
from tests.conftest import CONFORMANCE, OFFICIAL, ROOT

CASES = CONFORMANCE / "cases"
QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq3 0 d9 1\n"
RUN = "q1 Q0 d3 1 2.5 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d7 3 1.0 t\nq2 Q0 d2 1 0.5 t\nq9 Q0 d1 1 9.0 t\n"


def _evaluate(tmp_path, run_text, qrels_text, *extra):
    (tmp_path / "run.txt").write_text(run_text)
    (tmp_path / "qrels.txt").write_text(qrels_text)
    out = tmp_path / "out.json"
    code = main(["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--model-id", "org/model", "--dataset-id", "test/data", "--out", str(out), "--quiet", "--declare",
                 "--depth", "1000", *extra])  # these small runs rank all each query retrieves
    return code, out


def test_result_matches_pytrec_eval_for_every_qrels_query(tmp_path):
    code, out = _evaluate(tmp_path, RUN, QRELS, "--metrics", ",".join(map(str, DEFAULT_MEASURES)) + ",AP")
    assert code == 0
    result = read_result(out)
    qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}, "q3": {"d9": 1}}
    run = {"q1": {"d3": 2.5, "d1": 2.0, "d7": 1.0}, "q2": {"d2": 0.5}}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recall.100"}).evaluate(run)
    assert result.query_ids == ("q1", "q2", "q3")  # q3 not in the run: scored 0
    assert result.values("nDCG@10")["q1"] == pytest.approx(oracle["q1"]["ndcg_cut_10"], abs=1e-9)
    assert result.values("AP")["q2"] == pytest.approx(oracle["q2"]["map"], abs=1e-9)
    assert result.values("R@100")["q3"] == 0.0
    expected_mean = (oracle["q1"]["ndcg_cut_10"] + oracle["q2"]["ndcg_cut_10"] + 0.0) / 3
    assert result.metrics["nDCG@10"] == pytest.approx(expected_mean, abs=1e-9)
    assert result.rankings() == {"q1": [("d3", 2.5), ("d1", 2.0), ("d7", 1.0)], "q2": [("d2", 0.5)]}  # no q9
    assert result.provenance.command.startswith("irboard ")
    assert len(result.metrics) == len(DEFAULT_MEASURES) + 1


def test_a_ranking_that_fits_is_stored_whole(tmp_path):
    lines = "".join(f"q1 Q0 d{i} {i} {1000 - i} t\n" for i in range(1, 301))
    code, out = _evaluate(tmp_path, lines, "q1 0 d250 1\n", "--metrics", "AP,R@200")
    result = read_result(out)
    assert code == 0 and result.run.depth == result.settings.top_k and result.run.below is None
    assert result.rankings()["q1"] == [(f"d{i}", float(1000 - i)) for i in range(1, 301)]


def test_ranking_stored_to_depth_100_and_below_it_what_deeper_metrics_need(tmp_path):
    lines = "".join(f"q1 Q0 d{i} {i} {1000 - i} t\n" for i in range(1, 301))
    qrels = "q1 0 d250 1\nq1 0 d120 0\nq1 0 d50 1\n"
    for metrics, deep in [("nDCG@10", False), ("R@100", False), ("R@200", True), ("AP", True)]:
        code, out = _evaluate(tmp_path, lines, qrels, "--metrics", metrics, "--force", "--stored-depth", "100")
        result = read_result(out)
        assert code == 0 and result.run.depth == 100 and int(result.run.lengths[0]) == 100
        assert (result.run.below is not None) == deep
        if deep:  # the judged documents below rank 100 (d120 judged non-relevant too) and the ranking's length
            assert result.run.below.entries(0) == [(120, "d120", 880.0), (250, "d250", 750.0)]
            assert result.run.below.totals.tolist() == [300]


def test_non_ascii_ids_work_end_to_end(tmp_path):
    run = "é1 Q0 Zürich 1 2.0 t\né1 Q0 東京 2 1.5 t\n123#4 Q0 <dbpedia:X> 1 1.0 t\n"
    qrels = "é1 0 東京 1\n123#4 0 <dbpedia:X> 2\n"
    code, out = _evaluate(tmp_path, run, qrels, "--metrics", "nDCG@10,RR@10")
    result = read_result(out)
    assert code == 0 and result.values("RR@10") == {"123#4": 1.0, "é1": 0.5}
    assert result.rankings()["é1"] == [("Zürich", 2.0), ("東京", 1.5)]


def test_conformance_case_end_to_end(tmp_path):
    case = CASES / "04_ties"
    code, out = _evaluate(tmp_path, (case / "run.txt").read_text(), (case / "qrels.txt").read_text(),
                          "--metrics", "nDCG@10,RR,P@5")
    expected = json.loads((case / "expected.json").read_text())["trec_eval"]["aggregate_c"]
    metrics = json.loads(out.read_text())["metrics"]
    assert code == 0
    assert metrics["nDCG@10"] == pytest.approx(expected["ndcg_cut_10"], abs=1e-9)
    assert metrics["RR"] == pytest.approx(expected["recip_rank"], abs=1e-9)
    assert metrics["P@5"] == pytest.approx(expected["P_5"], abs=1e-9)


@pytest.mark.parametrize(
    ("run_text", "qrels_text", "message"),
    [
        ("", QRELS, "empty"),
        (RUN, "", "empty"),
        ("q1 Q0 d1 1 2.0\n", QRELS, "line 1"),
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 abc t\n", QRELS, "line 2"),
        ("q1 Q0 d1 1 nan t\n", QRELS, "line 1"),
        ("q1 Q0 d1 1 inf t\n", QRELS, "line 1"),
        (RUN, "q1 0 d1 1.5\n", "line 1"),
        (RUN, "q1 0 d1\n", "line 1"),
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n", QRELS, "line 2"),
        ("zz Q0 d1 1 2.0 t\n", QRELS, "no query"),
    ],
)
def test_bad_input_one_clear_error_no_output(tmp_path, capsys, run_text, qrels_text, message):
    code, out = _evaluate(tmp_path, run_text, qrels_text)
    err = capsys.readouterr().err
    assert code == 1
    assert not out.exists()
    error_lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and message in error_lines[0].lower(), err
    assert "Traceback" not in err


def test_unknown_metric_and_bad_ids(tmp_path, capsys):
    code, out = _evaluate(tmp_path, RUN, QRELS, "--metrics", "ndcg@10")
    assert code == 1 and "Did you mean 'nDCG@10'" in capsys.readouterr().err and not out.exists()
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    code = main(["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--model-id", "../evil", "--dataset-id", "test/data", "--out", str(tmp_path / "x.json")])
    assert code == 1 and "not a valid id" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def test_existing_output_kept_without_force(tmp_path, capsys):
    code, out = _evaluate(tmp_path, RUN, QRELS)
    before = out.read_text()
    code, out = _evaluate(tmp_path, RUN.replace("2.5", "0.1"), QRELS)
    assert code == 1 and "--force" in capsys.readouterr().err and out.read_text() == before
    code, out = _evaluate(tmp_path, RUN.replace("2.5", "0.1"), QRELS, "--force")
    assert code == 0 and out.read_text() != before


def test_console_script_prints_no_traceback(tmp_path):
    (tmp_path / "run.txt").write_text("garbage\n")
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = subprocess.run(
        [sys.executable, "-m", "leaderboard.cli", "evaluate", "--run", str(tmp_path / "run.txt"), "--qrels",
         str(tmp_path / "qrels.txt"), "--model-id", "m", "--dataset-id", "d", "--out", str(tmp_path / "o.json"),
         "--declare"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "run.txt line 1" in done.stderr


def _yoruba_run(path) -> None:
    """A run over MIRACL Yoruba's official dev queries: each query's judged documents in file order."""
    lines = (OFFICIAL / "qrels" / "qrels.miracl-v1.0-yo-dev.tsv").read_text().splitlines()
    path.write_text("".join(f"{q} Q0 {d} {i} {1.0 / (i + 1)} t\n" for i, (q, _, d, _) in
                            enumerate(line.split("\t") for line in lines)))


def test_registered_dataset_takes_its_split_settings_and_official_qrels_from_the_registry(tmp_path):
    _yoruba_run(tmp_path / "run.txt")
    out = tmp_path / "results" / "org__model" / "miracl__yo.json"
    out.parent.mkdir(parents=True)
    assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--model-id", "org/model", "--dataset-id",
                 "miracl/yo", "--out", str(out), "--quiet"]) == 0  # no --qrels: the official ones
    result = json.loads(out.read_text())
    assert result["dataset"]["split"] == "dev"  # not "test"
    assert result["dataset"]["revision"].startswith("castorini/anserini-tools@")  # the judgments' upstream
    assert result["settings"]["ignore_identical_ids"] is False and result["settings"]["relevance_level"] == 1
    assert result["dataset"]["qrels_sha256"] == official_judgments("miracl/yo").judgments_sha256
    assert result["dataset"]["num_queries"] == len(read_result(out).values("nDCG@10")) == 119
    assert main(["validate", "--results", str(tmp_path / "results")]) == 0


@pytest.mark.parametrize("flag, shown", [
    (["--split", "test"], "--split test conflicts with the definition of miracl/yo (split: dev)"),
    (["--ignore-identical-ids"], "--ignore-identical-ids conflicts with the definition of miracl/yo"),
    (["--relevance-level", "2"], "--relevance-level 2 conflicts"),
])
def test_a_flag_that_contradicts_the_registry_is_a_one_line_error(tmp_path, capsys, flag, shown):
    _yoruba_run(tmp_path / "run.txt")
    code = main(["evaluate", "--run", str(tmp_path / "run.txt"), "--model-id", "org/model", "--dataset-id",
                 "miracl/yo", "--out", str(tmp_path / "o.json"), *flag])
    err = capsys.readouterr().err
    assert code == 1 and shown in err and err.count("\n") == 1 and not (tmp_path / "o.json").exists()
    assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--model-id", "org/model", "--dataset-id",
                 "miracl/yo", "--out", str(tmp_path / "o.json"), "--split", "dev", "--quiet"]) == 0  # agreeing


def test_unregistered_dataset_takes_the_flags(tmp_path):
    code, out = _evaluate(tmp_path, RUN, QRELS, "--split", "dev", "--relevance-level", "2",
                          "--ignore-identical-ids")
    assert code == 0
    result = json.loads(out.read_text())
    assert result["dataset"]["split"] == "dev"
    assert result["settings"]["relevance_level"] == 2 and result["settings"]["ignore_identical_ids"] is True


def test_provenance_records_versions_and_the_commit(tmp_path):
    import importlib.metadata

    code, out = _evaluate(tmp_path, RUN, QRELS)
    provenance = read_result(out).provenance
    assert code == 0
    assert provenance.versions["numpy"] == importlib.metadata.version("numpy")
    assert provenance.versions["scipy"] == importlib.metadata.version("scipy")
    assert provenance.versions["torch"] == importlib.metadata.version("torch")  # installed in the test environment
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=ROOT).stdout.strip()
    assert provenance.git_commit.removesuffix("-dirty") == head


def test_provenance_records_the_time_of_each_step(tmp_path):
    code, out = _evaluate(tmp_path, RUN, QRELS)
    timings = read_result(out).provenance.timings
    assert code == 0 and set(timings) == {"read_qrels_s", "rank_run_s", "metrics_s"}
    assert all(seconds >= 0 for seconds in timings.values())


@pytest.mark.parametrize("setting, threads", [(None, 1), ("2", 2)])
def test_the_command_starts_numpy_with_one_blas_thread_unless_told(tmp_path, setting, threads):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    script = ("import sys; from leaderboard.cli import main; from threadpoolctl import threadpool_info; "
              "code = main(sys.argv[1:]); print(code, [p['num_threads'] for p in threadpool_info() "
              "if p['internal_api'] == 'openblas'])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | (
        {"OPENBLAS_NUM_THREADS": setting} if setting else {})
    done = subprocess.run([sys.executable, "-c", script, "evaluate", "--run", str(tmp_path / "run.txt"), "--qrels",
                           str(tmp_path / "qrels.txt"), "--model-id", "org/model", "--dataset-id", "test/data",
                           "--out", str(tmp_path / "out.json"), "--quiet", "--declare"],
                          capture_output=True, text=True, timeout=120, env=env, check=True)
    code, *counts = done.stdout.split(maxsplit=1)
    assert code == "0" and json.loads(counts[0]) and set(json.loads(counts[0])) == {threads}


def _msmarco_run(path, queries: int) -> None:
    """A run over the first `queries` of MS MARCO dev-small's judged queries: each query's judged passages, then
    a few others, in file order."""
    lines = (OFFICIAL / "qrels" / "qrels.msmarco-passage.dev-subset.txt").read_text().splitlines()
    judged: dict[str, list[str]] = {}
    for query_id, _, doc_id, _ in (line.split() for line in lines):
        if query_id in judged or len(judged) < queries:
            judged.setdefault(query_id, []).append(doc_id)
    path.write_text("".join(f"{q} Q0 {d} {i} {2000 - i} t\n" for q, docs in judged.items()  # ranked to 1,000
                            for i, d in enumerate(["1", "2", *docs, *(f"x{k}" for k in range(998 - len(docs)))], 1)))


def test_default_metrics_add_the_datasets_headline_metrics(tmp_path, capsys, caplog):
    _msmarco_run(tmp_path / "run.txt", 50)
    out = tmp_path / "results" / "org__model" / "mmarco__en.json"
    assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--model-id", "org/model", "--dataset-id",
                 "mmarco/en", "--results-dir", str(tmp_path / "results")]) == 0
    result = read_result(out)
    names = [str(m) for m in DEFAULT_MEASURES]
    assert set(result.metrics) == {*names, "R@1000"}
    # each judged passage sits at rank 3, 4, ...: RR@10 of a covered query is 1/3; 50 of the 6,980 are covered
    assert result.metrics["RR@10"] == pytest.approx(50 / 3 / 6980, abs=1e-9)
    printed = capsys.readouterr()
    out_line, err = printed.out, printed.err
    assert f"(RR@10 = {result.metrics['RR@10']:.4f}, R@1000 = {result.metrics['R@1000']:.4f})" in out_line
    assert "covers 50 of 6,980 judged queries" in err and "not where the board reads it" not in caplog.text
    assert main(["validate", "--results", str(tmp_path / "results")]) == 0


def test_out_elsewhere_says_where_the_file_belongs(tmp_path, caplog):
    code, out = _evaluate(tmp_path, RUN, QRELS)
    assert code == 0 and out.exists()
    notice = next(r.getMessage() for r in caplog.records if "not where the board reads it" in r.getMessage())
    assert f"{out} is not where the board reads it" in notice
    assert "results/org__model/test__data.json" in notice and "--results-dir results" in notice
    caplog.clear()
    canonical = tmp_path / "results" / "org__model" / "test__data.json"
    canonical.parent.mkdir(parents=True)
    assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--model-id", "org/model", "--dataset-id", "test/data", "--out", str(canonical), "--quiet",
                 "--declare"]) == 0
    assert "not where the board reads it" not in caplog.text
