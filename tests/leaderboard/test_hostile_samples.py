"""Hostile submissions, third round (issue 25): score samples that buy recall below the ranking's last score,
samples no tail can be fitted on, invented query ids, and split files without their main metric, each through the
commands the workflows run (exit 1, one line naming the file, no traceback, nothing built). Judgments are the
official ones (IRBOARD_MIRROR, tests/conftest.py); results are the repository's own, each with one hostile change.
"""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from evaluator.result import build_result, dump_result, expand_result, parse_result, read_result, result_path
from evaluator.trec import read_qrels
from leaderboard.submissions.sample_checks import cut_problems
from leaderboard.submissions.verify import verify_result
from tests.conftest import ROOT, SHARED
from tests.leaderboard.test_hostile import assert_one_line_rejection, irboard

pytestmark = pytest.mark.slow  # subprocesses of irboard: left to `make test`

BM25 = ROOT / "results" / "bm25" / "beir__scifact.json"
OFFICIAL = SHARED / "data" / "official" / "qrels"


def _last_scores(result) -> dict[str, float]:
    run = result.run
    return {q: float(run.scores[run.offsets[row + 1] - 1]) for row, q in enumerate(result.query_ids)}


def _with_samples(result, change):
    """`result` with every query's sample replaced by change(sample, the ranking's last score)."""
    samples, last = result.score_samples, _last_scores(result)
    return replace(result, score_samples=replace(samples, queries={
        q: change(s, last[q]) for q, s in samples.queries.items()}))


def drop_relevant_below(sample, t):  # n_relevant lowered to match: recall averaged over fewer documents
    kept = sample.relevant[sample.relevant > t]
    return replace(sample, relevant=kept, n_relevant=kept.size,
                   n_nonrelevant=sample.n_nonrelevant + sample.n_relevant - kept.size)


def shift_below(sample, t):
    x = sample.nonrelevant
    return replace(sample, nonrelevant=np.sort(np.where(x <= t, x - 1000.0, x)))


def drop_and_shift(sample, t):
    return shift_below(drop_relevant_below(sample, t), t)


def collapse_below(sample, t):
    x = sample.nonrelevant
    below = x <= t
    return replace(sample, nonrelevant=np.where(below, x[below].min() if below.any() else 0.0, x))


def _write(root: Path, result) -> Path:
    path = result_path(result.model.id, result.dataset.id, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_result(parse_result(expand_result(result))))
    return path


@pytest.mark.parametrize(("attack", "expected"), [
    (drop_and_shift, "n_relevant is 0 but the qrels judge 1 documents relevant"),  # the issue's +74% at R@100
    (drop_relevant_below, "n_relevant is"),  # +33% at R@1000
    (collapse_below, "lie just below the rankings' last scores"),  # +32% at R@100
    (shift_below, "lie just below the rankings' last scores"),
])
def test_samples_changed_below_the_cut_are_rejected(tmp_path, attack, expected):
    path = _write(tmp_path / "results", _with_samples(read_result(BM25), attack))
    assert_one_line_rejection(irboard("validate", "--results", tmp_path / "results"), path, expected)
    build = irboard("build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert_one_line_rejection(build, path, expected)
    assert not (tmp_path / "_site").exists()


def _qrels(result):
    family, name = result.dataset.id.split("/", 1)
    return read_qrels(SHARED / "data" / family / name / "qrels" / f"{result.dataset.split}.tsv")


# the repository's own runs (the published runs hold no score samples and their datasets no folder in ../shared)
SAMPLED = sorted(path for path in ROOT.glob("results/*/*.json") if b'"score_samples"' in path.read_bytes())


@pytest.mark.parametrize("path", SAMPLED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_honest_samples_raise_no_alarm(path):
    """Every repository result (BM25, BM25 k1=1.5, SPLADE-tiny, all-MiniLM-L6-v2 on SciFact and three classic
    collections): its samples agree with its ranking below the cut too."""
    result = read_result(path)
    assert verify_result(result, _qrels(result)).problems == ()


def test_a_freshly_evaluated_result_raises_no_alarm(tmp_path):
    out = tmp_path / "bm25.json"
    done = irboard("evaluate", "--model", "bm25", "--dataset", "beir/scifact", "--data-dir",
                   SHARED / "data" / "beir" / "scifact", "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    result = read_result(out)
    assert result.score_samples is not None and verify_result(result, _qrels(result)).problems == ()


def test_the_cut_checks_are_scale_free():
    """Scores scaled together (ranking and samples alike) give the same outcome: every bound is a count and every
    window is measured in the ranking's own scores (powers of two keep the stored ranking's float32 order exact)."""
    result = read_result(BM25)
    qrels = _qrels(result)
    for scale, shift in ((1.0, 0.0), (2.0**-10, 0.0), (2.0**8, 0.0)):
        run = result.run
        below = run.below and replace(run.below, scores=run.below.scores * scale + shift)  # judged ranks past depth
        moved = replace(result, run=replace(run, scores=run.scores * scale + shift, below=below))
        moved = _with_samples(moved, lambda s, t, a=scale, b=shift: replace(
            s, relevant=s.relevant * a + b, nonrelevant=s.nonrelevant * a + b))
        assert cut_problems(moved, qrels) == []
        collapsed = _with_samples(moved, collapse_below)
        assert cut_problems(collapsed, qrels) and "just below" in cut_problems(collapsed, qrels)[0]


def _constant(sample, t):
    return replace(sample, nonrelevant=np.full(sample.nonrelevant.size, 1.0))


def test_constant_samples_give_a_problem_or_a_reason_never_a_traceback(tmp_path):
    path = _write(tmp_path / "results", _with_samples(read_result(BM25), _constant))
    for extra in ([], ["--data-dir", SHARED / "data"]):
        done = irboard("validate", "--results", tmp_path / "results", *extra)
        assert_one_line_rejection(done, path, "score_samples")
    build = irboard("build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert_one_line_rejection(build, path, "score_samples")
    predicted = irboard("predict", path, "--docs", "10000000")
    assert "Traceback" not in predicted.stderr
    assert predicted.returncode == 0 and json.loads(predicted.stdout)["dropped_queries"] > 0


def _without_ranking(result, query_ids=None):
    """`result` with no stored ranking or samples, on `query_ids` (its own by default) with the same values."""
    query_ids = query_ids or result.query_ids
    header = result.header.model_copy(update={"dataset": result.dataset.model_copy(
        update={"num_queries": len(query_ids)})})
    return build_result(header, tuple(query_ids), {m: v for m, v in result.per_query.items()})


def _trec_covid_result(folder: Path, model_id: str) -> Path:
    """`irboard evaluate --run` on beir/trec-covid (official judgments), stored without its ranking."""
    qrels = read_qrels(OFFICIAL / "qrels.beir-v1.0.0-trec-covid.test.txt")
    lines = [f"{q} Q0 {doc} {rank} {10 - rank / 100:.4f} run\n" for q, judged in zip(qrels.query_ids, qrels.judgments,
                                                                                    strict=True)
             for rank, doc in enumerate(sorted(judged)[:20], 1)]
    run = folder / f"{model_id.replace('/', '_')}.run"
    run.write_text("".join(lines))
    out = folder / f"{model_id.replace('/', '_')}.json"
    done = irboard("evaluate", "--run", run, "--model-id", model_id, "--dataset-id", "beir/trec-covid", "--out", out,
                   "--metrics", "nDCG@10,R@100", "--quiet")
    assert done.returncode == 0, done.stderr
    return out


def test_invented_query_ids_are_refused_whatever_the_file_stores(tmp_path):
    """Two results without a stored ranking, on 50 query ids that are not trec-covid's: validate refuses them, and the
    build refuses them while keeping an honest third result (the registry decides the query set, not a majority)."""
    root = tmp_path / "results"
    honest = read_result(_trec_covid_result(tmp_path, "org/honest"))
    invented = [f"x{i}" for i in range(len(honest.query_ids))]
    paths = []
    for model_id in ("org/fake-a", "org/fake-b"):
        fake = _without_ranking(read_result(_trec_covid_result(tmp_path, model_id)), sorted(invented))
        paths.append(result_path(model_id, "beir/trec-covid", root))
        paths[-1].parent.mkdir(parents=True)
        paths[-1].write_text(dump_result(fake))
    kept = result_path("org/honest", "beir/trec-covid", root)
    kept.parent.mkdir(parents=True)
    kept.write_text(dump_result(_without_ranking(honest)))
    for path in paths:
        assert_one_line_rejection(irboard("validate", path), path, "query ids differ from the official test queries")
    assert irboard("validate", kept).returncode == 0
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.submissions.load import load_results, registered_query_set

    report = load_results(root, query_set=registered_query_set(dataset_info))
    assert [r.model.id for r in report.results] == ["org/honest"]
    assert sorted(report.problems) == [f"{path}: per_query's query ids differ from the official queries of "
                                       "beir/trec-covid; evaluate on every query of the dataset's official qrels"
                                       for path in sorted(paths)]
    build = irboard("build", "--results", root, "--out", tmp_path / "_site")
    assert build.returncode == 1 and "Traceback" not in build.stderr
    assert all(sum(str(path) in line for line in build.stderr.splitlines()) == 1 for path in paths)
    assert str(kept) not in build.stderr and not (tmp_path / "_site").exists()


def test_every_registered_dataset_has_a_known_query_set():
    from evaluator.datasets import all_specs
    from evaluator.datasets.official import all_official_judgments, known_query_ids_sha256
    from evaluator.datasets.spec import query_ids_sha256

    assert [s.id for s in all_specs() if known_query_ids_sha256(s.id) is None] == []
    for record in all_official_judgments():  # the registered fingerprints are those of the pinned files
        qrels = read_qrels(OFFICIAL / record.qrels.name)
        assert query_ids_sha256(qrels.query_ids) == record.query_ids_sha256, record.dataset_id


def test_compare_handles_a_split_file_without_its_main_metric(tmp_path):
    """validate rejects it (split_problems); compare, run on the same files in the workflow, shows a row."""
    root = tmp_path / "results"
    whole = read_result(BM25)
    from evaluator.result import FullAddress

    full = FullAddress(url="https://example.org/" + "0" * 64 + ".json", sha256="0" * 64, bytes=1000)
    split = build_result(whole.header.model_copy(update={"model": whole.model.model_copy(update={"id": "org/split"})}),
                         whole.query_ids, {"R@100": whole.per_query["R@100"]}, full=full)
    path = result_path("org/split", "beir/scifact", root)
    path.parent.mkdir(parents=True)
    path.write_text(dump_result(split))
    base = result_path("bm25", "beir/scifact", root)
    base.parent.mkdir(parents=True)
    base.write_text(BM25.read_text())
    assert_one_line_rejection(irboard("validate", path), path, "not the main metric nDCG@10")
    done = irboard("compare", "--results", root, path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"| org/split | beir/scifact | nDCG@10 | {whole.metrics['nDCG@10']:.4f} | — | — | — |" in done.stdout


def _first_query_missing_a_relevant_score(result):
    """(the row of the first query with a judged relevant document below the cut, the result with its lowest relevant
    score dropped and n_relevant lowered to match)."""
    last = _last_scores(result)
    samples = result.score_samples
    row, query_id = next((row, q) for row, q in enumerate(result.query_ids)
                         if (samples.queries[q].relevant <= last[q]).any())
    return row, _with_samples(result, lambda s, t: drop_relevant_below(s, t) if s is samples.queries[query_id] else s)


def to_stored_depth(result):
    """`result` without the judged documents below its stored depth (`run.below`) and the metric that needs them
    (R@1000), as the repository's results were stored before R@1000 joined the default metrics."""
    data = expand_result(result)
    data["run"].pop("below", None)
    for name in [m for m in data["metrics"] if m == "R@1000"]:
        del data["metrics"][name], data["per_query"][name]
    return parse_result(data)


def _claiming_absence(result, qrels):
    """(the result with one query's lowest relevant score dropped and the file saying that the corpus lacks one
    judged relevant document, the query's id, a judged relevant document its ranking leaves out, one it holds)."""
    result = to_stored_depth(result)  # a judged document it leaves out is then not ranked at all
    run, judgments = result.run, dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    for row, query_id in enumerate(result.query_ids):  # the first query with relevant documents in and out of it
        ranked = {run.doc_ids[d] for d in run.docs[run.offsets[row]:run.offsets[row + 1]]}
        relevant = sorted(d for d, label in judgments[query_id].items() if label >= 1)
        if {d in ranked for d in relevant} == {True, False}:
            break
    unranked, held = next(d for d in relevant if d not in ranked), next(d for d in relevant if d in ranked)
    sample = result.score_samples.queries[query_id]
    lowest = replace(sample, relevant=sample.relevant[1:], n_relevant=sample.n_relevant - 1,
                     n_nonrelevant=sample.n_nonrelevant + 1)
    dropped = _with_samples(result, lambda s, t: lowest if s is sample else s)
    return dropped, query_id, unranked, held


def _said(dropped, query_id, ids, absent=1):
    """`dropped` whose sample of `query_id` says `absent` documents are missing, naming `ids`, written and read
    back (the columns survive the round trip)."""
    samples = dropped.score_samples
    said = replace(dropped, score_samples=replace(samples, queries={
        **samples.queries, query_id: replace(samples.queries[query_id], absent=absent, absent_ids=tuple(ids))}))
    return parse_result(expand_result(said))


def test_absent_relevant_documents_must_be_said_and_allowed(monkeypatch):
    """A query's sample holds every judged relevant document's score, or its file says how many the corpus lacks
    (`absent_relevant`) and which (`absent_ids`); only a dataset whose registered judgments name missing documents
    may say so."""
    import leaderboard.submissions.sample_checks as checks

    result = read_result(BM25)
    qrels = _qrels(result)
    dropped, query_id, unranked, _ = _claiming_absence(result, qrels)
    said = _said(dropped, query_id, [unranked])
    assert said.score_samples.queries[query_id].absent == 1
    assert said.score_samples.queries[query_id].absent_ids == (unranked,)
    assert sum(said.score_samples.queries[q].absent for q in said.query_ids) == 1
    problems = verify_result(said, qrels).problems
    assert len(problems) == 1 and "absent_relevant says" in problems[0] and "beir/scifact" in problems[0]
    monkeypatch.setattr(checks, "absences_allowed", lambda result: True)  # as for beir/arguana
    assert verify_result(said, qrels).problems == ()
    unsaid = verify_result(dropped, qrels).problems
    before = result.score_samples.queries[query_id].n_relevant
    assert len(unsaid) == 1 and f"n_relevant is {before - 1} but the qrels judge {before}" in unsaid[0]


@pytest.mark.parametrize(("ids", "expected"), [
    ([], "absent_relevant says 1 judged relevant documents are not in the corpus but absent_ids names 0"),
    (["4983"], "which the qrels do not judge relevant for this query"),  # a document of another query
    (["not-a-document"], "which the qrels do not judge relevant for this query"),
    ("held", "as missing from the corpus, but the stored ranking holds it"),
])
def test_each_claimed_absence_is_a_judged_relevant_document_the_ranking_lacks(monkeypatch, ids, expected):
    """The ids that `absent_ids` names are checked without a corpus: named at all, judged relevant for the query,
    and not ranked (a ranked document is in the corpus). Files that count absences without naming them (written
    before the ids were kept) are refused: the claim could hide any relevant score."""
    import leaderboard.submissions.sample_checks as checks

    monkeypatch.setattr(checks, "absences_allowed", lambda result: True)
    result = read_result(BM25)
    qrels = _qrels(result)
    dropped, query_id, _, held = _claiming_absence(result, qrels)
    problems = verify_result(_said(dropped, query_id, [held] if ids == "held" else ids), qrels).problems
    assert len(problems) == 1 and expected in problems[0] and repr(query_id) in problems[0], problems


def test_validate_with_a_corpus_refuses_an_absence_the_corpus_contradicts(monkeypatch, tmp_path):
    """`validate --data-dir` with the dataset's corpus looks every claimed absence up in it: one line naming the
    document; a corpus without it accepts the claim, and a folder without a corpus checks nothing more."""
    import leaderboard.submissions.sample_checks as checks
    from leaderboard.submissions.validate import validate_paths

    monkeypatch.setattr(checks, "absences_allowed", lambda result: True)
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    result = read_result(BM25)
    qrels = _qrels(result)
    dropped, query_id, unranked, _ = _claiming_absence(result, qrels)
    path = _write(tmp_path / "results", _said(dropped, query_id, [unranked]))
    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    (folder / "qrels" / "test.tsv").write_bytes((SHARED / "data" / "beir" / "scifact" / "qrels" / "test.tsv").read_bytes())
    assert validate_paths([path], data_dirs={"beir/scifact": folder}).problems == []  # no corpus there
    for docs, expected in (([unranked, "d1"], f"absent_ids names {unranked!r} as missing from the corpus, but the "
                                               "corpus of --data-dir holds it"), (["d1", "d2"], None)):
        (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": "x"}) + "\n"
                                                     for d in docs))
        problems = validate_paths([path], data_dirs={"beir/scifact": folder}).problems
        assert problems == ([] if expected is None else [problems[0]]), problems
        assert expected is None or (expected in problems[0] and str(path) in problems[0] and "\n" not in problems[0])


def test_the_evaluator_says_which_relevant_documents_the_corpus_lacks():
    from evaluator.score_samples import collect_score_samples, decode_score_samples, encode_score_samples

    qrels = {"q1": {"d1": 1, "gone": 2, "d3": 0}, "q2": {"d2": 1}}
    rows = np.arange(2 * 40, dtype=np.float64).reshape(2, 40)
    samples = collect_score_samples(["q1", "q2"], [f"d{i}" for i in range(40)], rows, qrels, n_samples=10)
    assert [samples.queries[q].absent for q in ("q1", "q2")] == [1, 0]
    assert [samples.queries[q].absent_ids for q in ("q1", "q2")] == [("gone",), ()]
    encoded = encode_score_samples(samples, ["q1", "q2"])
    assert "absent_relevant" in encoded and "absent_ids" in encoded
    decoded = decode_score_samples(encoded, ["q1", "q2"])
    assert [decoded.queries[q].absent for q in ("q1", "q2")] == [1, 0]
    assert [decoded.queries[q].absent_ids for q in ("q1", "q2")] == [("gone",), ()]
    assert decoded.flat_scores().absent.tolist() == [1, 0]
    complete = collect_score_samples(["q2"], [f"d{i}" for i in range(40)], rows[1:], qrels, n_samples=10)
    assert "absent_relevant" not in encode_score_samples(complete, ["q2"])  # files without absences are unchanged


@pytest.mark.parametrize(("change", "expected"), [
    ({"absent_ids": "names two"}, "absent_ids: names 2 documents but absent_relevant counts 1"),
    ({"absent_relevant": None}, "absent_ids: names documents without absent_relevant to count them"),
])
def test_absent_ids_must_match_their_count(change, expected):
    from evaluator.columns import encode_strings
    from evaluator.errors import ResultValidationError
    from evaluator.score_samples import collect_score_samples, decode_score_samples, encode_score_samples

    qrels = {"q1": {"d1": 1, "gone": 2}, "q2": {"d2": 1}}
    rows = np.arange(2 * 40, dtype=np.float64).reshape(2, 40)
    encoded = encode_score_samples(collect_score_samples(["q1", "q2"], [f"d{i}" for i in range(40)], rows, qrels,
                                                         n_samples=10), ["q1", "q2"])
    if "absent_ids" in change:
        change = {"absent_ids": encode_strings(["gone", "other"])}
    encoded = {key: value for key, value in {**encoded, **change}.items() if value is not None}
    with pytest.raises(ResultValidationError, match=expected):
        decode_score_samples(encoded, ["q1", "q2"])


@pytest.fixture(scope="module")
def fresh_bm25(tmp_path_factory):
    """A fresh BM25 result on SciFact (its headline R@1000 keeps `run.below`: the judged documents to rank 1,000)."""
    out = tmp_path_factory.mktemp("fresh") / "bm25.json"
    done = irboard("evaluate", "--model", "bm25", "--dataset", "beir/scifact", "--data-dir",
                   SHARED / "data" / "beir" / "scifact", "--out", out, "--quiet", "--stored-depth", "100")
    assert done.returncode == 0, done.stderr
    result = read_result(out)
    assert result.run.below is not None and int(result.run.below.counts.sum()) > 0
    return result


def test_deep_judged_ranks_bound_the_sample_from_below(fresh_bm25, monkeypatch):
    """Test 3 of the cut checks, alone (the windows' tests switched off): at least rank - 1 documents score as much
    as the deepest judged document below the depth, so a sample whose scores between that document and the cut
    were moved away fails, and the honest one passes with its count at the least its ranks allow or above."""
    import leaderboard.submissions.sample_checks as checks
    from leaderboard.submissions.labels import entry_labels

    monkeypatch.setattr(checks, "WINDOW_DIVISORS", ())
    result, qrels = fresh_bm25, _qrels(fresh_bm25)
    counts = checks.cut_counts(result, entry_labels(result, qrels))
    assert counts["deep"].sum() >= 0.9 * counts["deep_least"].sum() > 0
    assert cut_problems(result, qrels) == []
    below, deepest = result.run.below, {}
    for row, query_id in enumerate(result.query_ids):
        if below.counts[row]:
            deepest[query_id] = float(below.scores[below.offsets[row + 1] - 1])

    def thin(sample, t):  # every sampled score from the deepest judged document up to the cut, moved far down
        s = deepest.get(next(q for q, other in result.score_samples.queries.items() if other is sample))
        x = sample.nonrelevant
        if s is None:
            return sample
        return replace(sample, nonrelevant=np.sort(np.where((x >= s - 1.0) & (x <= t), x.min() - 1000.0, x)))

    (problem,) = cut_problems(_with_samples(result, thin), qrels)
    assert "reach the scores of the deepest judged documents ranked below the stored depth (run.below)" in problem
