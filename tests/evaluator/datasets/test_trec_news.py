"""BEIR's TREC-News: registered for its official judgments alone (the Washington Post corpus is licensed, not public).
A published run file is scored and re-scored on them (pytrec_eval is the oracle); running a model needs a local copy
of the corpus and says so in one line."""

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

RUN = ROOT / "tests" / "data" / "runs" / "news-bm25-flat.trec.xz"
# irboard name -> pytrec_eval's
_ORACLE = {"nDCG@10": "ndcg_cut_10", "nDCG@100": "ndcg_cut_100", "AP@100": "map_cut_100", "R@100": "recall_100",
           "P@10": "P_10", "RR@100": "recip_rank"}


def test_registered_with_beirs_counts_and_no_download():
    spec = get_spec("beir/trec-news")
    record = official_judgments("beir/trec-news")
    assert (spec.group, spec.split, spec.num_queries, spec.num_docs) == ("BEIR", "test", 57, 594977)  # BEIR, Table 1
    assert (spec.md5, spec.source, spec.relevance_level, spec.ignore_identical_ids) == (None, "", 1, True)
    assert record.registered and record.qrels.name == "qrels.beir-v1.0.0-trec-news.test.txt"


def test_a_published_news_run_evaluates_and_revalidates_to_pytrec_eval(tmp_path, capsys):
    results = tmp_path / "results"
    assert main(["evaluate", "--run", str(RUN), "--model-id", "bm25-run", "--dataset-id", "beir/trec-news",
                 "--results-dir", str(results), "--quiet", "--metrics", ",".join(_ORACLE)]) == 0
    result = read_result(results / "bm25-run" / "beir__trec-news.json")
    qrels = read_qrels_text(OFFICIAL / "qrels" / "qrels.beir-v1.0.0-trec-news.test.txt")
    run: dict[str, dict[str, float]] = {}
    for line in lzma.decompress(RUN.read_bytes()).decode().splitlines():
        query_id, _, doc_id, _, score, _ = line.split()
        run.setdefault(query_id, {})[doc_id] = float(score)
    measures = {"ndcg_cut.10,100", "map_cut.100", "recall.100", "P.10", "recip_rank"}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert len(result.query_ids) == 57 and result.dataset.qrels_sha256 == official_judgments(
        "beir/trec-news").judgments_sha256
    for name, key in _ORACLE.items():
        for query_id, value in result.values(name).items():
            assert value == pytest.approx(oracle[query_id][key], abs=1e-9), (name, query_id)
    assert round(result.metrics["nDCG@10"], 4) == 0.3952  # Anserini's BM25 flat regression prints 0.3952
    capsys.readouterr()
    assert main(["validate", str(results)]) == 0  # re-scored from the stored ranking against the official qrels
    assert "1 verified" in capsys.readouterr().out


def test_running_a_model_says_in_one_line_that_the_corpus_is_not_public(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["evaluate", "--model", "bm25", "--dataset", "beir/trec-news", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]  # beside the progress line
    assert len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith("error: beir/trec-news: its corpus is not public") and "--data-dir" in errors[0]
    assert not out.exists()
