"""Judgment sets (docs/datasets.md, "Judgment sets"): each rule of a declaration broken once, and a real result
(a published Touché run) scored against the official set and a post-hoc set made by a sealed round's pool
(tests/data/touche_pool_set.py, its holes graded by a test rule) giving pytrec_eval's values for each, through the
verify stage, `irboard.compare(..., judgments=)` and `irboard.evaluate(..., judgments=)`."""

import json
import sys

import numpy as np
import pytest
import pytrec_eval

import irboard
from evaluator.datasets.judgment_sets import find_set, judgment_set_problems
from evaluator.errors import UnknownNameError
from evaluator.result import read_result
from leaderboard.submissions.verify import Judgments
from tests.conftest import OFFICIAL, ROOT, SHARED

sys.path.insert(0, str(ROOT / "tests" / "data"))
import touche_pool_set as touche  # noqa: E402

MEASURES = {"nDCG@10": "ndcg_cut_10", "P@5": "P_5", "R@100": "recall_100"}


@pytest.fixture(scope="module")
def pooled():
    return touche.pooled_qrels(touche.touche_results(ROOT), OFFICIAL / "qrels" / touche.QRELS)


@pytest.fixture
def folder(tmp_path, monkeypatch, pooled):
    monkeypatch.setenv("IRBOARD_JUDGMENTS", str(tmp_path / "judgments"))
    monkeypatch.setenv("IRBOARD_MIRROR", str(OFFICIAL))
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    touche.write_set(tmp_path / "judgments", pooled)
    return tmp_path / "judgments"


def _problem(folder, **fields) -> str:
    path = folder / touche.SLUG / f"{touche.NAME}.json"
    declaration = json.loads(path.read_text())
    declaration.update(fields)
    name = declaration["name"]
    target = folder / touche.SLUG / f"{name}.json" if "/" not in name and "<" not in name else path
    original = path.read_text()
    path.unlink()
    target.write_text(json.dumps(declaration))
    problems = judgment_set_problems(folder)
    target.unlink()
    path.write_text(original)
    assert len(problems) == 1 and "\n" not in problems[0], problems
    return problems[0]


def test_a_sound_declaration_has_no_problem(folder):
    assert judgment_set_problems(folder) == []
    found = find_set(touche.DATASET, touche.NAME)
    assert find_set(touche.DATASET, found.sha256[:12]) == found and found.kind == "post-hoc"
    assert find_set(touche.DATASET, "official").kind == "official"
    with pytest.raises(UnknownNameError, match="Did you mean 'pool-test'"):
        find_set(touche.DATASET, "pool-tset")


def test_a_wrong_sha256_is_one_line_naming_the_file(folder):
    problem = _problem(folder, sha256="0" * 64)
    assert f"{touche.NAME}.json: sha256:" in problem and "not the declared" in problem


def test_an_unknown_dataset_is_refused(folder):
    problem = _problem(folder, dataset="beir/webis-touche2021")
    assert "dataset:" in problem and "webis-touche2020" in problem  # did you mean


def test_no_set_shadows_the_official_one(folder):
    assert "would shadow the official set" in _problem(folder, name="official")
    assert "'official' is the registry's set" in _problem(folder, kind="official", name=touche.NAME)


def test_a_hostile_name_is_refused_escaped(folder):
    problem = _problem(folder, name="<script>x</script>")
    assert "name:" in problem and "\n" not in problem


def test_a_machine_set_names_its_judge_and_the_judge_is_its_identity(folder):
    assert "judge:" in _problem(folder, kind="machine")
    judge = {"model": "judge-model", "revision": "abc123", "prompt_sha256": "1" * 64}
    path = folder / touche.SLUG / f"{touche.NAME}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "kind": "machine", "judge": judge}))
    assert judgment_set_problems(folder) == []
    machine = find_set(touche.DATASET, touche.NAME)
    assert machine.sha256 != machine.file_sha256  # the same qrels by another judge is another set


def _pytrec(qrels: dict, run: dict) -> dict[str, np.ndarray]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values()))
    found = evaluator.evaluate(run)
    return {name: np.array([found.get(q, {}).get(key, 0.0) for q in sorted(qrels)]) for name, key in MEASURES.items()}


def test_a_result_under_two_sets_gives_pytrec_evals_values_for_each(folder, pooled):
    from evaluator.trec import read_qrels

    path = ROOT / "results" / "retromae-beir" / f"{touche.SLUG}.json"
    result = read_result(path)
    run = {q: dict(ranking) for q, ranking in result.rankings().items()}
    official = read_qrels(OFFICIAL / "qrels" / touche.QRELS).to_dict()
    assert list(result.query_ids) == sorted(official)
    verification = Judgments(data_root=SHARED / "data", cache=False).verification(result)
    assert not verification.problems and len(verification.sets) == 1
    scores = verification.sets[0]
    expected = {"official": _pytrec(official, run), touche.NAME: _pytrec(pooled, run)}
    for name in MEASURES:
        np.testing.assert_allclose(result.per_query[name], expected["official"][name], atol=1e-12)
        np.testing.assert_allclose(scores.per_query[name], expected[touche.NAME][name], atol=1e-12)
    assert abs(scores.per_query["nDCG@10"].mean() - result.metrics["nDCG@10"]) > 0.01  # the sets differ
    for judgments, values in expected.items():
        means = irboard.evaluate(run, touche.DATASET, list(MEASURES), judgments=judgments)
        assert means == pytest.approx({name: float(values[name].mean()) for name in MEASURES}, abs=1e-12)
    other = read_result(ROOT / "results" / "citadel-plus" / f"{touche.SLUG}.json")
    report = irboard.compare({"retromae": result, "citadel": other}, touche.DATASET, "nDCG@10",
                             judgments=touche.NAME).to_dataframe()
    assert report["mean"].iloc[0] == pytest.approx(expected[touche.NAME]["nDCG@10"].mean(), abs=1e-12)
    assert set(report["trust"]) == {"re-scored"} and (report["judged"] == 1.0).all()  # the pool judged every top 10


def test_a_named_set_is_scored_at_its_datasets_relevance_level():
    """TREC DL counts grade 2 and up as relevant for binary metrics: with judgments= the dataset's rule is the
    default, and an explicit relevance_level still wins (pytrec_eval's relevance_level is the oracle)."""
    import lzma

    run_path = ROOT / "tests" / "data" / "runs" / "dl20-bm25.trec.xz"
    run: dict[str, dict[str, float]] = {}
    for line in lzma.open(run_path, "rt"):
        query_id, _, doc, _, score, *_ = line.split()
        run.setdefault(query_id, {})[doc] = float(score)
    qrels = {}
    for line in open(OFFICIAL / "qrels" / "qrels.dl20-passage.txt"):
        query_id, _, doc, grade = line.split()
        qrels.setdefault(query_id, {})[doc] = int(grade)
    for level in (2, 1):
        oracle = pytrec_eval.RelevanceEvaluator(qrels, {"recall.100"}, relevance_level=level).evaluate(run)
        expected = float(np.mean([oracle[q]["recall_100"] for q in qrels]))
        given = {} if level == 2 else {"relevance_level": 1}
        means = irboard.evaluate(run, "msmarco-passage/trec-dl-2020", "R@100", judgments="official", **given)
        assert means["R@100"] == pytest.approx(expected, abs=1e-12), level


def _official():
    from evaluator.trec import read_qrels

    return read_qrels(OFFICIAL / "qrels" / touche.QRELS).to_dict()


def test_a_set_that_extends_the_official_one_holds_only_what_it_adds(folder, pooled):
    from evaluator.datasets.judgment_sets import load_qrels

    whole = find_set(touche.DATASET, touche.NAME)
    official = _official()
    added = {q: {d: g for d, g in judged.items() if d not in official.get(q, {})} for q, judged in pooled.items()}
    added = {q: judged for q, judged in added.items() if judged}
    touche.write_set(folder, added, name="pool-added", extends="official")
    assert judgment_set_problems(folder) == []
    extension = find_set(touche.DATASET, "pool-added")
    assert load_qrels(extension).to_dict() == load_qrels(whole).to_dict() == pooled  # the same judgments
    assert extension.sha256 not in (whole.sha256, extension.file_sha256)  # named with the official set's sha256
    assert extension.extends == find_set(touche.DATASET, "official").sha256


def test_an_extension_that_judges_an_official_pair_again_or_another_query_is_refused(folder):
    official = _official()
    query_id = sorted(official)[0]
    doc_id = sorted(official[query_id])[0]
    touche.write_set(folder, {query_id: {doc_id: 0}}, name="pool-again", extends="official")
    (problem,) = judgment_set_problems(folder)
    assert "pool-again.json: file:" in problem and f"document {doc_id!r} is judged by the official set" in problem
    for stale in (folder / touche.SLUG).glob("pool-again.*"):
        stale.unlink()
    touche.write_set(folder, {"not-a-topic": {"d": 1}}, name="pool-other", extends="official")
    (problem,) = judgment_set_problems(folder)
    assert "query 'not-a-topic' is not one the official set judges" in problem and "\n" not in problem


def test_only_the_official_set_can_be_extended(folder):
    assert "extends:" in _problem(folder, extends="pool-test")
