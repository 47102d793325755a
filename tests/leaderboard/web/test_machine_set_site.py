"""The board's SciFact results built with the committed machine set (judgments/beir__scifact/, docs/datasets.md
"A machine set: SciFact"): the dataset page switches to the set's page, which names the judge, and the set's
download gives pytrec_eval's nDCG@10 of each stored ranking against the committed qrels."""

import json
import shutil

import pytest
import pytrec_eval
from markupsafe import escape

from evaluator.result import read_result
from leaderboard.cli import main
from leaderboard.web.views.judgment_sets import MACHINE_NOTE
from tests.conftest import OFFICIAL, ROOT, SHARED

SLUG, NAME = "beir__scifact", "minilm-cosine-pool10"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scifact-machine")
    for path in sorted((ROOT / "results").glob(f"*/{SLUG}.json")):
        (tmp / "results" / path.parent.name).mkdir(parents=True)
        shutil.copy(path, tmp / "results" / path.parent.name / path.name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRBOARD_JUDGMENTS", str(ROOT / "judgments"))
        patch.setenv("IRBOARD_CACHE", str(tmp / "cache"))
        assert main(["build", "--results", str(tmp / "results"), "--out", str(tmp / "_site"),
                     "--data-dir", str(SHARED / "data")]) == 0
    return tmp


def test_the_dataset_page_links_the_machine_set_and_names_its_judge(site):
    official = (site / "_site" / "datasets" / f"{SLUG}.html").read_text()
    shown = (site / "_site" / "datasets" / f"{SLUG}~{NAME}.html").read_text()
    assert f'href="../datasets/{SLUG}~{NAME}.html"' in official.split('id="judgment-sets"')[1].split("</nav>")[0]
    declared = json.loads((ROOT / "judgments" / SLUG / f"{NAME}.json").read_text())
    assert declared["judge"]["revision"] in shown and "all-MiniLM-L6-v2" in shown
    note = shown.split('id="judgment-set-note">', 1)[1].split("</p>", 1)[0]  # the caveat, under the switcher
    assert str(escape(declared["description"])) in note and str(escape(MACHINE_NOTE)) in note
    assert 'id="judgment-set-note"' not in official  # the official page carries no set's words


def test_the_sets_download_is_pytrec_evals_ndcg_on_the_committed_qrels(site):
    qrels = {}  # the official qrels with the committed file's grades added (the declaration extends them)
    for line in (OFFICIAL / "qrels" / "qrels.beir-v1.0.0-scifact.test.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    for line in (ROOT / "judgments" / SLUG / f"{NAME}.qrels.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    rows = json.loads((site / "_site" / "downloads" / "datasets" / f"{SLUG}~{NAME}.json").read_text())["rows"]
    shown = {row["model_id"]: row["nDCG@10"] for row in rows}
    assert len(shown) == 5
    for path in sorted((site / "results").glob(f"*/{SLUG}.json")):
        result = read_result(path)
        run = {q: dict(ranking) for q, ranking in result.rankings().items()}
        found = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)
        expected = sum(found[q]["ndcg_cut_10"] for q in qrels) / len(qrels)
        assert shown[result.model.id] == pytest.approx(expected, abs=5e-7)  # the download rounds to 6 decimals
