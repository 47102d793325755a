"""A result that claims judged relevant documents are absent from the corpus, with no corpus check when the site is
built, says so beside its tier on the dataset page and on its model page (issue 33, item 3); a result claiming none
carries no such mark. Results: the repository's real BM25 on SciFact, and a copy whose samples claim one document
absent (as an ArguAna result may); judgments the official ones."""

import shutil

import pytest

from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.cli import main
from tests.conftest import ROOT, SHARED

MARK = "claimed absent from the corpus, unchecked"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    import leaderboard.submissions.sample_checks as checks
    from tests.leaderboard.test_hostile_samples import _claiming_absence, _said, _write

    root = tmp_path_factory.mktemp("absences")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(checks, "absences_allowed", lambda result: True)  # as for beir/arguana
        patch.setenv("IRBOARD_CACHE", str(root / "cache"))  # no cached corpus: nothing checks the claim
        honest = ROOT / "results" / "bm25-k1-1.5-b-0.75" / "beir__scifact.json"
        (root / "results" / honest.parent.name).mkdir(parents=True)
        shutil.copy(honest, root / "results" / honest.parent.name / honest.name)
        result = read_result(ROOT / "results" / "bm25" / "beir__scifact.json")
        dropped, query_id, unranked, _ = _claiming_absence(result, read_qrels(SHARED / "data" / "beir" / "scifact"
                                                                             / "qrels" / "test.tsv"))
        _write(root / "results", _said(dropped, query_id, [unranked]))
        assert main(["build", "--results", str(root / "results"), "--out", str(root / "_site"), "--data-dir",
                     str(SHARED / "data"), "--reproductions", str(root / "none")]) == 0
    return root / "_site"


def _row(page: str, model_id: str) -> str:
    start = page.index(f">{model_id}</a>")
    return page[start:page.index("</tr>", start)]


def test_the_claiming_result_is_marked_unchecked_where_its_rows_are(site):
    dataset = (site / "datasets" / "beir__scifact.html").read_text(encoding="utf-8")
    assert f"1 {MARK}" in _row(dataset, "bm25") and MARK not in _row(dataset, "bm25-k1-1.5-b-0.75")
    model = (site / "models" / "bm25.html").read_text(encoding="utf-8")
    assert f"1 {MARK}" in model and "judged relevant document is missing from the corpus" in model
    assert MARK not in (site / "models" / "bm25-k1-1.5-b-0.75.html").read_text(encoding="utf-8")
