"""TREC DL 2019 and 2020 passage: registered with grade 2 as the relevance level, which reaches every binary metric
(pytrec_eval with relevance_level=2 is the oracle) while nDCG keeps graded gains; only judged queries count."""

from __future__ import annotations

import lzma

import pytest
import pytrec_eval

from evaluator.datasets import get_spec
from evaluator.datasets.official import official_judgments
from evaluator.result import read_result
from leaderboard.cli import main
from tests.conftest import OFFICIAL, ROOT
from tests.evaluator.metrics.conftest import read_qrels_text

RUNS = ROOT / "tests" / "data" / "runs"
# irboard name -> pytrec_eval's
_ORACLE = {"nDCG@10": "ndcg_cut_10", "nDCG@100": "ndcg_cut_100", "AP@100": "map_cut_100", "R@10": "recall_10",
           "R@100": "recall_100", "P@10": "P_10", "P@5": "P_5", "Success@10": "success_10", "RR@100": None}


def _run_dict(path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in lzma.decompress(path.read_bytes()).decode().splitlines():
        query_id, _, doc_id, _, score, _ = line.split()
        run.setdefault(query_id, {})[doc_id] = float(score)
    return run


def test_both_years_are_registered_with_level_2_and_their_judged_query_counts():
    for dataset_id, queries, qrels_name in [("msmarco-passage/trec-dl-2019", 43, "qrels.dl19-passage.txt"),
                                            ("msmarco-passage/trec-dl-2020", 54, "qrels.dl20-passage.txt")]:
        spec = get_spec(dataset_id)
        record = official_judgments(dataset_id)
        assert (spec.relevance_level, spec.main_metric, spec.num_queries, spec.num_docs) == (2, "nDCG@10", queries,
                                                                                           8841823)
        assert spec.headline_metrics == ("nDCG@10", "AP@1000", "R@1000") and spec.group == "TREC DL"
        assert record.qrels.name == qrels_name and record.num_queries == queries
        assert len(read_qrels_text(OFFICIAL / record.qrels.path)) == queries


def test_every_metric_of_a_real_dl20_run_equals_pytrec_eval_at_relevance_level_2(tmp_path):
    out = tmp_path / "r.json"
    assert main(["evaluate", "--run", str(RUNS / "dl20-bm25.trec.xz"), "--model-id", "bm25-run",
                 "--dataset-id", "msmarco-passage/trec-dl-2020", "--out", str(out), "--quiet",
                 "--metrics", ",".join(_ORACLE)]) == 0
    result = read_result(out)
    assert result.settings.relevance_level == 2 and len(result.query_ids) == 54  # of 200 topics, the judged
    qrels = read_qrels_text(OFFICIAL / "qrels" / "qrels.dl20-passage.txt")
    run = _run_dict(RUNS / "dl20-bm25.trec.xz")
    measures = {name.rsplit("_", 1)[0] + "." + name.rsplit("_", 1)[1] for name in _ORACLE.values() if name}
    level2 = pytrec_eval.RelevanceEvaluator(qrels, measures | {"recip_rank"}, relevance_level=2).evaluate(run)
    level1 = pytrec_eval.RelevanceEvaluator(qrels, {"recall.100", "recip_rank"}).evaluate(run)
    for name, oracle in _ORACLE.items():
        for query_id, value in result.values(name).items():
            expected = level2.get(query_id, {}).get(oracle or "recip_rank", 0.0)
            assert value == pytest.approx(expected, abs=1e-9), (name, query_id)
    # the level matters: at level 1 recall and RR differ on this run
    assert result.metrics["R@100"] != pytest.approx(sum(v["recall_100"] for v in level1.values()) / 54, abs=1e-4)
    assert result.metrics["RR@100"] != pytest.approx(sum(v["recip_rank"] for v in level1.values()) / 54, abs=1e-4)


def test_a_result_at_another_level_is_refused(tmp_path):
    code = main(["evaluate", "--run", str(RUNS / "dl20-bm25.trec.xz"), "--model-id", "bm25-run",
                 "--dataset-id", "msmarco-passage/trec-dl-2020", "--out", str(tmp_path / "r.json"), "--quiet",
                 "--relevance-level", "1"])
    assert code == 1 and not (tmp_path / "r.json").exists()


def test_validate_reads_the_official_judgments_from_the_data_folder_offline(tmp_path, monkeypatch, capsys):
    """`--data-dir` naming a folder laid out as ../shared/data (official/qrels/<file>) verifies without a download;
    a copy whose sha256 is not the official file's is not used."""
    results = tmp_path / "results"
    assert main(["evaluate", "--run", str(RUNS / "dl20-bm25.trec.xz"), "--model-id", "bm25-run", "--dataset-id",
                 "msmarco-passage/trec-dl-2020", "--results-dir", str(results), "--quiet"]) == 0
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv("IRBOARD_MIRROR", str(empty))  # a download would fail
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "fresh-cache"))
    data = tmp_path / "data"
    (data / "official" / "qrels").mkdir(parents=True)
    copy = data / "official" / "qrels" / "qrels.dl20-passage.txt"
    copy.write_bytes((OFFICIAL / "qrels" / "qrels.dl20-passage.txt").read_bytes())
    capsys.readouterr()
    assert main(["validate", str(results), "--data-dir", str(data)]) == 0
    assert "1 verified" in capsys.readouterr().out
    copy.write_bytes(copy.read_bytes().replace(b" 3\n", b" 2\n", 1))  # not the official file
    assert main(["validate", str(results), "--data-dir", str(data)]) == 1
    assert "official qrels not available" in capsys.readouterr().err
