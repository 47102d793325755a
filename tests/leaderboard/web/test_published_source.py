"""A result scored from a published run file credits it on the model page: repository@commit:path, the licence and a
link to the file at that commit, escaped like all text; its published figure shows beside the measured one."""

from __future__ import annotations

import html
import re

from leaderboard.cli import main
from tests.conftest import ROOT

RUN = ROOT / "tests" / "data" / "runs" / "dl20-bm25.trec.xz"
COMMIT = "97f5fc162a4c6d664d14b1b930d56a6c759faf3a"
PATH = "retrieve_results/BM25/trec_results&dl20.txt"  # an ampersand: it must be escaped in text and link


def test_the_model_page_credits_the_published_run_file(tmp_path):
    results = tmp_path / "results"
    for model_id, extra in [("published-bm25", ["--source", f"castorini/rank_llm@{COMMIT}:{PATH}",
                                                "--source-license", "Apache-2.0",
                                                "--reference", "nDCG@10=0.4796,https://example.org/anserini"]),
                            ("bm25", [])]:
        assert main(["evaluate", "--run", str(RUN), "--model-id", model_id, "--dataset-id",
                     "msmarco-passage/trec-dl-2020", "--results-dir", str(results), "--quiet", *extra]) == 0
    assert main(["build", "--strict", "--results", str(results), "--out", str(tmp_path / "_site")]) == 0
    page = (tmp_path / "_site" / "models" / "published-bm25.html").read_text()
    table = page[page.index("<h2>Published runs</h2>"):page.index("<h2>Efficiency</h2>")]
    blob = f"https://github.com/castorini/rank_llm/blob/{COMMIT}/{PATH}"
    assert f'<a href="{html.escape(blob)}" rel="nofollow noopener">' in table
    assert f"<code>castorini/rank_llm@{COMMIT}:{html.escape(PATH)}</code>" in table
    assert "<td>Apache-2.0</td>" in table and "msmarco-passage/trec-dl-2020" in table
    assert "&dl20" not in table  # never unescaped
    figures = page[page.index("<h2>Published figures</h2>"):page.index("<h2>Published runs</h2>")]
    assert re.search(r"<td class=\"num\">0\.4796</td><td class=\"num\">0\.4796</td>", figures)
    other = (tmp_path / "_site" / "models" / "bm25.html").read_text()
    assert "<h2>Published runs</h2>" not in other
    # a second build reads the results from the read cache: the credit survives it
    assert main(["build", "--strict", "--results", str(results), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "models" / "published-bm25.html").read_text() == page
