"""`evaluate --run --source OWNER/NAME@COMMIT:PATH --source-license SPDX` records provenance.source; anything else
is one line, exit 1, no file."""

from __future__ import annotations

import json

import pytest

from evaluator.result import read_result
from leaderboard.cli import main
from tests.conftest import ROOT

RUN = ROOT / "tests" / "data" / "runs" / "dl20-bm25.trec.xz"
COMMIT = "97f5fc162a4c6d664d14b1b930d56a6c759faf3a"
SOURCE = f"castorini/rank_llm@{COMMIT}:retrieve_results/BM25/trec_results_dl20.txt"


def _evaluate(tmp_path, *extra):
    out = tmp_path / "r.json"
    code = main(["evaluate", "--run", str(RUN), "--model-id", "bm25-run", "--dataset-id",
                 "msmarco-passage/trec-dl-2020", "--out", str(out), "--quiet", "--metrics", "nDCG@10", *extra])
    return code, out


def test_the_source_is_recorded_and_read_back(tmp_path):
    code, out = _evaluate(tmp_path, "--source", SOURCE, "--source-license", "Apache-2.0")
    assert code == 0
    source = read_result(out).provenance.source
    assert (source.repository, source.commit, source.path, source.license) == (
        "castorini/rank_llm", COMMIT, "retrieve_results/BM25/trec_results_dl20.txt", "Apache-2.0")
    assert source.blob_url == f"https://github.com/castorini/rank_llm/blob/{COMMIT}/retrieve_results/BM25/trec_results_dl20.txt"


def test_a_result_without_a_source_has_no_source_key(tmp_path):
    code, out = _evaluate(tmp_path)
    assert code == 0 and "source" not in json.loads(out.read_text())["provenance"]


@pytest.mark.parametrize("source, license, says", [
    (f"castorini/rank_llm@{COMMIT[:7]}:a.txt", "Apache-2.0", "the full 40-hex commit"),
    (f"rank_llm@{COMMIT}:a.txt", "Apache-2.0", "OWNER/NAME@COMMIT:PATH"),
    (f"castorini/rank_llm@{COMMIT}:../a.txt", "Apache-2.0", "relative path inside the repository"),
    (f"castorini/rank_llm@{COMMIT}:a.txt", "apache-2.0", "did you mean Apache-2.0?"),
    (f"castorini/rank_llm@{COMMIT}:a.txt", "Apache 2", "not an SPDX licence id"),
    (f"castorini/rank_llm@{COMMIT}:a.txt", None, "go together"),
])
def test_a_bad_source_is_one_line_and_no_file(tmp_path, capsys, source, license, says):
    code, out = _evaluate(tmp_path, "--source", source, *(["--source-license", license] if license else []))
    err = capsys.readouterr().err.strip()
    assert code == 1 and not out.exists()
    assert says in err and len(err.splitlines()) == 1 and err.startswith("error: evaluate: ")
